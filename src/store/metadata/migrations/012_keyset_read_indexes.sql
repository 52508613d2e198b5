-- Long reads go a page at a time by keyset (each page starts after the last row of the one before),
-- which an index serves only in exactly the order read:
-- - a source's points and a point's detectors in id order (the runtime's restart of a source, crud.ts
--   findAll): with an index on the owner alone every page fetched and sorted all of the owner's rows,
--   and a source of 200,000 points took minutes to start on PGlite;
-- - points by XID in the compiled RQL orders (as 003 for names): the export reads every point in XID
--   order, and the unique index (nulls last, no id) left each page to a sort of the rest of the table.
drop index data_points_source;
create index data_points_source on data_points (data_source_id, id);
drop index event_detectors_point;
create index event_detectors_point on event_detectors (data_point_id, id);
create index data_points_xid_asc on data_points (xid asc nulls first, id);
create index data_points_xid_desc on data_points (xid desc nulls last, id);
