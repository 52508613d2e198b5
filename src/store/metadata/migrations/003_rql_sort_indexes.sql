-- Indexes that RQL sorts can use.
-- The compiler (src/core/rql/sql.ts) orders by "<column> asc nulls first, t.id" or
-- "<column> desc nulls last, t.id". A default btree on (column, id) gives neither order (its nulls
-- sit at the other end, and a backward scan reverses id as well), so 002's name indexes never served
-- a sort: sort(-name)&limit(50) over 100,000 points read and sorted the whole table (~28 ms on
-- PostgreSQL, against ~1 ms with these). One index per direction, in exactly the compiled orders;
-- each serves equality and range filters on the column as well, so they replace 002's.
drop index data_points_name;
create index data_points_name_asc on data_points (name asc nulls first, id);
create index data_points_name_desc on data_points (name desc nulls last, id);

drop index data_points_device_name;
create index data_points_device_name_asc on data_points (device_name asc nulls first, id);
create index data_points_device_name_desc on data_points (device_name desc nulls last, id);

drop index data_sources_name;
create index data_sources_name_asc on data_sources (name asc nulls first, id);
create index data_sources_name_desc on data_sources (name desc nulls last, id);
