-- JSON store: arbitrary JSON documents (dashboards, application state), at most 1 MiB each.
--
-- The contract wants jsonData to round-trip exactly: same values, same key order, number spelling
-- kept (1e308, 0.1, 12345678901234567890), `\u0000` escapes included. JSONB reorders keys, rewrites
-- numbers and cannot hold `\u0000` or an unpaired surrogate escape; PostgreSQL's parsers also
-- refuse very deep nesting. So a document is stored twice:
--   doc        the JSON text exactly as the API returns it (insignificant whitespace removed,
--              strings, escapes and numbers as the client wrote them). The source of truth.
--   doc_jsonb  the same document as JSONB, or null when JSONB cannot represent it (the service
--              decides: `\u0000`, unpaired surrogate escapes, nesting deeper than 512, numbers
--              beyond what numeric holds). Dot-path reads run in SQL on it, so a read of one value
--              neither ships nor parses the whole document in the service; without it the service
--              reads doc and walks it itself. It also leaves content queries open for later.
-- The list never reads either column. TOAST compresses both.
create table json_store (
  id integer generated always as identity primary key,
  xid text collate "C" not null unique,
  name text collate "C" not null,
  read_permission text[] not null default '{user}',
  edit_permission text[] not null default '{}',
  doc text not null,
  doc_jsonb jsonb
);
-- In the orders the RQL compiler sorts by (see 003).
create index json_store_name_asc on json_store (name asc nulls first, id);
create index json_store_name_desc on json_store (name desc nulls last, id);
