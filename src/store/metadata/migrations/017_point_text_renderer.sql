-- A point's text renderer (Mango's idea: how its values are written for people; core/text-renderer.ts):
-- {"type":"PLAIN"} for the points made before, which is what they showed.
alter table data_points add column text_renderer jsonb not null default '{"type":"PLAIN"}';
