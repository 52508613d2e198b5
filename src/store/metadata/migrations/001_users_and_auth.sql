-- Users, sessions and service settings (JWT signing key).
-- Text that RQL sorts or compares uses COLLATE "C": code-point order, identical on PGlite and PostgreSQL.
create table users (
  id integer generated always as identity primary key,
  username text collate "C" not null unique,
  email text collate "C" not null default '',
  name text collate "C" not null default '',
  password_hash text not null,
  permissions text[] not null default '{}',
  disabled boolean not null default false,
  locale text not null default '',
  timezone text not null default '',
  created timestamptz not null default now(),
  last_login timestamptz,
  last_password_change timestamptz not null default now(),
  -- Carried in every JWT as claim v; incrementing it revokes all of the user's tokens.
  token_version integer not null default 0
);

-- The cookie holds a random id; only its SHA-256 is stored, so a database dump yields no live session.
create table sessions (
  id_hash text primary key,
  user_id integer not null references users (id) on delete cascade,
  created timestamptz not null,
  last_seen timestamptz not null
);
create index sessions_user_id on sessions (user_id);

create table settings (
  key text primary key,
  value jsonb not null
);
