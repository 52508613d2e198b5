-- When a source's lastError happened and whether the source has recovered since; a point's last
-- warning (an MQTT payload it could not read), when, and whether a good value has come since.
-- Epoch milliseconds, as every timestamp in the API.
alter table data_sources add column last_error_ts bigint;
alter table data_sources add column last_error_cleared boolean not null default false;
alter table data_points add column last_warning text;
alter table data_points add column last_warning_ts bigint;
alter table data_points add column last_warning_cleared boolean not null default false;
