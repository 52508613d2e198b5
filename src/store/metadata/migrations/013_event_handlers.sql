-- Event handlers (EMAIL, WEBHOOK, SET_POINT), their pending work (jobs) and every attempt (deliveries).
--
-- A handler's matchers and what its type acts on are stored so that matching is SQL alone: the jobs
-- of an event change are inserted by the very statement that changes the event (events.ts), so a
-- change is never answered while its handlers' work is not yet stored.
create table event_handlers (
  id integer generated always as identity primary key,
  xid text collate "C" not null unique,
  name text collate "C" not null default '',
  disabled boolean not null default false,
  handler_type text collate "C" not null,
  -- [{eventType, referenceXid?, minAlarmLevel?}] as the API takes them.
  event_types jsonb not null default '[]',
  -- The type's own fields as the API takes them, write-only secrets included (never shown).
  config jsonb not null default '{}',
  -- Derived from config by the type at save: the actions it acts on and its escalation delay.
  actions text[] not null default '{}',
  escalation_delay_ms bigint,
  -- The user who saved it last (no foreign key: a deleted user leaves the handler as it was).
  owner_user_id integer
);
create index event_handlers_name on event_handlers (name, id);

-- One row per action of an event a handler still has to carry out. A worker claims a due job by
-- setting lease_until (for update skip locked); a lease that ran out is taken over by another.
-- No foreign key to events: an event is never deleted while a job is pending, and a missing one is
-- dropped by the worker.
create table event_handler_jobs (
  id bigint generated always as identity primary key,
  handler_id integer not null references event_handlers (id) on delete cascade,
  event_id bigint not null,
  action text collate "C" not null,
  created_ts bigint not null,
  due_ts bigint not null,
  -- Attempts started (counted at the claim).
  attempts integer not null default 0,
  lease_until bigint,
  claimed_by text collate "C"
);
create index event_handler_jobs_due on event_handler_jobs (due_ts, id);
create index event_handler_jobs_handler on event_handler_jobs (handler_id);
-- The claimed jobs (a few per instance): when does the first lease run out.
create index event_handler_jobs_leased on event_handler_jobs (lease_until) where lease_until is not null;

create table event_handler_deliveries (
  id bigint generated always as identity primary key,
  handler_id integer not null references event_handlers (id) on delete cascade,
  event_id bigint not null,
  action text collate "C" not null,
  -- 1 for the first attempt; 0 for work refused before any attempt (the handler's queue was full).
  attempt integer not null,
  ts bigint not null,
  outcome text collate "C" not null check (outcome in ('SENT', 'FAILED', 'GAVE_UP')),
  status integer,
  error text
);
create index event_handler_deliveries_handler on event_handler_deliveries (handler_id, id);
create index event_handler_deliveries_ts on event_handler_deliveries (handler_id, ts, id);
