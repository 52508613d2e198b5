-- Data sources, data points and event detectors.
-- Type-specific settings live in JSONB; what RQL filters or sorts on has a column of its own.
create table data_sources (
  id integer generated always as identity primary key,
  xid text collate "C" not null unique,
  name text collate "C" not null,
  enabled boolean not null default false,
  model_type text collate "C" not null,
  update_periods integer not null default 1,
  update_period_type text not null default 'SECONDS',
  read_permission text[] not null default '{user}',
  edit_permission text[] not null default '{}',
  settings jsonb not null default '{}',
  -- Written by the runtime: RUNNING, STOPPED or ERROR, and the last fault it saw.
  state text collate "C" not null default 'STOPPED',
  last_error text
);
create index data_sources_name on data_sources (name, id);

create table data_points (
  id integer generated always as identity primary key,
  xid text collate "C" not null unique,
  name text collate "C" not null,
  enabled boolean not null default true,
  device_name text collate "C" not null default '',
  data_source_id integer not null references data_sources (id) on delete cascade,
  data_type text collate "C" not null,
  settable boolean not null default false,
  point_locator jsonb not null,
  unit text collate "C" not null default '',
  tags jsonb not null default '{}',
  rollup text not null default 'NONE',
  read_permission text[] not null default '{user}',
  edit_permission text[] not null default '{}',
  set_permission text[] not null default '{}'
);
create index data_points_source on data_points (data_source_id);
create index data_points_name on data_points (name, id);
create index data_points_device_name on data_points (device_name, id);
create index data_points_tags on data_points using gin (tags jsonb_path_ops);

create table event_detectors (
  id integer generated always as identity primary key,
  xid text collate "C" not null unique,
  name text collate "C" not null default '',
  data_point_id integer not null references data_points (id) on delete cascade,
  detector_type text collate "C" not null,
  alarm_level text collate "C" not null,
  -- limit, resetLimit, low, high, state, durationMs, rtnApplicable: per detector type.
  config jsonb not null default '{}',
  read_permission text[] not null default '{user}',
  edit_permission text[] not null default '{}'
);
create index event_detectors_point on event_detectors (data_point_id);
