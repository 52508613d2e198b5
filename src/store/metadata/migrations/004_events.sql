-- Events (alarms): history that outlives what raised it.
--
-- No foreign keys to points, sources, detectors or users, on purpose: deleting any of them must
-- neither delete nor rewrite a million rows of history, and ids are identity columns that are never
-- reused, so a kept id still names exactly the object that raised the event (or nothing). The
-- names shown (point and source XIDs, the acknowledging username) are copied into the row.
-- Timestamps are epoch milliseconds (bigint), as the API and RQL date comparisons use them.
create table events (
  id bigint generated always as identity primary key,
  alarm_level text collate "C" not null
    check (alarm_level in ('NONE', 'INFORMATION', 'IMPORTANT', 'WARNING', 'URGENT', 'CRITICAL', 'LIFE_SAFETY')),
  active_ts bigint not null,
  active boolean not null,
  rtn_applicable boolean not null,
  rtn_ts bigint,
  rtn_cause text collate "C" check (rtn_cause in ('RETURN_TO_NORMAL', 'SOURCE_DISABLED')),
  message text collate "C" not null default '',
  ack_ts bigint,
  ack_user_id integer,
  ack_username text collate "C",
  event_type text collate "C" not null check (event_type in ('DATA_POINT', 'DATA_SOURCE', 'SYSTEM')),
  sub_type text collate "C",
  reference_id1 bigint,
  reference_id2 bigint,
  data_point_id integer,
  data_point_xid text collate "C",
  -- Set for DATA_POINT events too (the point's source), so "everything of a source" is one lookup.
  data_source_id integer,
  data_source_xid text collate "C",
  detector_id integer,
  -- When whatever raised the event saw its condition end; null while the episode is open. For
  -- events that return to normal this is the rtn time; for those that do not (rtnApplicable false)
  -- it is how a detector re-arms across a restart. Never shown by the API.
  cleared_ts bigint
);

-- Active events: small partial indexes, however much history accumulates.
create index events_active on events (id) where active;
create index events_point_active on events (data_point_xid) where active;
create index events_source_active on events (data_source_id) where active;

-- History of one point or source (RQL on dataPointXid/dataSourceXid; renames rewrite the copies).
create index events_point_xid on events (data_point_xid, id);
create index events_source_xid on events (data_source_xid, id);
create index events_source on events (data_source_id, id);

-- One open episode per detector and one open fault per source and kind: a duplicate raise after a
-- restart or a race becomes "on conflict do nothing", in every instance sharing the database.
create unique index events_detector_open on events (detector_id) where cleared_ts is null;
create unique index events_source_fault_open on events (data_source_id, sub_type)
  where event_type = 'DATA_SOURCE' and cleared_ts is null;

-- sort(activeTimestamp) and sort(-activeTimestamp) in the orders the RQL compiler emits (see 003).
create index events_active_ts_asc on events (active_ts asc nulls first, id);
create index events_active_ts_desc on events (active_ts desc nulls last, id);
