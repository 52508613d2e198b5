// The PostgreSQL point-value store: the values in the server of DATABASE_URL (in DATABASE_SCHEMA when
// set, beside the metadata), shared by every instance of the service that points at it. This file is
// its public face; the files next to it hold one part each (sql, partitions, copy, store, open).
//
// Layout
// - point_values (series, ts, value, text, annotation), PRIMARY KEY (series, ts), PARTITION BY RANGE
//   (ts): one partition per UTC month (partitions.ts), made ahead for the current and next month and
//   on demand for older or later data, never a DEFAULT one. Reads bound ts, so they touch the months
//   they need; the primary key is both the upsert's arbiter and the index every read walks.
// - point_values_hourly (series, bucket = floor(ts / BUCKET_MS), count, sum, min, max, first_ts,
//   first_value, last_ts, last_value, inner_integral): one exact row per (series, hour) with numeric
//   values, recomputed from the raw rows in the transaction that wrote them. So buckets() over a year
//   of one series reads ~8,760 rows, and no reader ever sees raw rows without their aggregates.
//
// Writes: the group's rows are sorted and deduplicated in JS (the last write of a (series, ts) wins),
// COPYed (binary) into a per-connection temporary table, upserted into point_values, then the hours
// they touch are recomputed. A transaction-scoped advisory lock per series (taken in ascending order:
// no deadlock) serialises writers of one series across connections and instances, so a recompute
// always sees every committed row of its hours. NaN (an ALPHANUMERIC row) is stored as a NULL value
// and counts in no aggregate, as in DuckDB.
export { openPostgresStore, lockKey, type OpenPostgresOptions } from './open.js';
export { createPartitionSql, monthOf, monthsOf, monthStart, partitionName } from './partitions.js';
export { PostgresStore, type PostgresStoreOptions } from './store.js';
