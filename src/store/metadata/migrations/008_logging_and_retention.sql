-- Per-point logging and retention settings (API-DECISIONS "Logging, retention, configuration").
-- Points made before this migration logged every value: they keep doing so (ALL); a point created
-- now gets the contract's default (ON_CHANGE) from the service, which always writes the whole object.
alter table data_points add column logging_properties jsonb not null default '{"loggingType":"ALL","tolerance":0,"intervalLoggingPeriod":{"periods":15,"type":"MINUTES"},"intervalLoggingType":"INSTANT","discardExtremeValues":false,"discardLowLimit":-1.7976931348623157e308,"discardHighLimit":1.7976931348623157e308}';
alter table data_points add column purge_override boolean not null default false;
alter table data_points add column purge_period jsonb not null default '{"periods":1,"type":"YEARS"}';

-- INTERVAL logging's period in progress, per point: kept across restarts so that a period the service
-- was stopped in is neither lost nor written twice (state: the statistic so far, values/ingest/logging.ts).
create table interval_logging (
  data_point_id integer primary key references data_points (id) on delete cascade,
  state jsonb not null
);
