-- The instances of an installation that run now (store/cluster/instances.ts): each holds a session
-- advisory lock keyed by its row's id for as long as it runs, so a row whose lock is free belongs to
-- an instance that is gone (the next instance to start deletes it). What an instance keeps its point
-- values in decides whether it may run beside the others.
create table cluster_instances (
  id integer generated always as identity primary key,
  name text not null,
  value_store text not null,
  -- epoch milliseconds, as every timestamp in the API
  started bigint not null
);
-- The instance running a data source (its lease holder), written when it takes the lease and
-- cleared when it hands the source over; null when the source runs nowhere.
alter table data_sources add column running_on text;
