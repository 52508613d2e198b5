-- Usernames are unique ignoring case. username_key is the name so folded (core/username-key.ts), written
-- by the users repository on every insert and rename; the unique index turns two creates racing for one
-- key (on two instances) into one 409. A unique index on lower(username) would fail on databases that
-- already hold `admin` beside `Admin`, and lower() folds differently on PGlite and servers, hence a column.
-- It stays NULL where no key is assigned: ASCII names get theirs here (lower() is the fold for them), the
-- others at start-up (UserService.assignUsernameKeys). Of users made before this rule whose names differ
-- only in case, the oldest gets the key; the others keep NULL, log in as before and still block the key
-- (the service checks keyless names too).
alter table users add column username_key text collate "C";

update users u set username_key = f.key
  from (select id, lower(username) as key, row_number() over (partition by lower(username) order by id) as n
          from users
         where octet_length(username) = char_length(username)) f
 where u.id = f.id and f.n = 1;

create unique index users_username_key_unique on users (username_key);
