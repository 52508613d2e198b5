-- The retention of event handler deliveries (EVENT_HANDLER_DELIVERY_RETENTION) deletes the oldest
-- rows of every handler in bounded batches: it reads them in time order across handlers, which the
-- (handler_id, ts, id) index cannot serve without reading every handler's part.
create index event_handler_deliveries_age on event_handler_deliveries (ts, id);


-- Matching on raise (HandlerJobsSql.wrap) read every enabled handler and unfolded its jsonb matchers
-- for each event (no index serves that join: PostgreSQL plans no parameterized GIN scan for it). Each
-- matcher's type and reference ('' for none) as a row, kept by a trigger whoever writes the handler,
-- lets a raise read only the handlers with a matcher of its type and its reference or none; the level
-- and the rest are checked on those.
create table event_handler_matchers (
  handler_id integer not null references event_handlers (id) on delete cascade,
  event_type text collate "C" not null,
  reference_xid text collate "C" not null
);
create index event_handler_matchers_key on event_handler_matchers (event_type, reference_xid, handler_id);
create index event_handler_matchers_handler on event_handler_matchers (handler_id);

create function event_handler_matchers_sync() returns trigger language plpgsql as $$
begin
  delete from event_handler_matchers where handler_id = new.id;
  insert into event_handler_matchers (handler_id, event_type, reference_xid)
    select distinct new.id, m->>'eventType', coalesce(m->>'referenceXid', '') from jsonb_array_elements(new.event_types) m;
  return null;
end $$;
create trigger event_handler_matchers_sync after insert or update of event_types on event_handlers
  for each row execute function event_handler_matchers_sync();

insert into event_handler_matchers (handler_id, event_type, reference_xid)
  select distinct h.id, m->>'eventType', coalesce(m->>'referenceXid', '') from event_handlers h, jsonb_array_elements(h.event_types) m;
