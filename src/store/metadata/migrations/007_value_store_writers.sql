-- The instance that wrote a shared value store (a QuestDB table) last: an instance taking the
-- store's writer lock (store/cluster/writer-lock.ts) learns from it whether another instance wrote
-- in between, so that what it keeps in memory of the table (the hourly tails) is out of date.
create table value_store_writers (
  name text collate "C" primary key,
  instance text not null
);
