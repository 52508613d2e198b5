-- Addresses each user logged in from lately. A failed login from one of them is not charged to the
-- username's failed-login limit, nor held by it, so guessing from elsewhere cannot lock the owner out
-- (services/login-throttle.ts). `address` is the rate limits' key: an IPv4 address or an IPv6 /64.
-- Bounded by the service: rows older than LOGIN_KNOWN_ADDRESS_DAYS go, and each user keeps its most
-- recent few.
create table login_addresses (
  user_id integer not null references users (id) on delete cascade,
  address text collate "C" not null,
  last_success timestamptz not null,
  primary key (user_id, address)
);
create index login_addresses_last_success on login_addresses (last_success);
