-- Comments on events (Mango's user comments on alarms): what operators wrote, oldest first.
--
-- The username is copied, as events copy the acknowledging one: deleting or renaming a user never
-- rewrites history. Comments go with their event (events are history and are not deleted today;
-- should a purge come, the comments follow). Timestamps are epoch milliseconds, as in events.
create table event_comments (
  id bigint generated always as identity primary key,
  event_id bigint not null references events (id) on delete cascade,
  user_id integer,
  username text collate "C" not null,
  ts bigint not null,
  text text not null
);

-- An event's comments in order: the one aggregate each event read runs (store/metadata/events.ts).
create index event_comments_event on event_comments (event_id, id);
