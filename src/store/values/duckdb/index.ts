// The embedded point-value store: DuckDB, one file (DATA_DIR/values/values.duckdb), one instance per
// process. This file is its public face; the files next to it hold one part each (sql, sessions, sort,
// chunks, results, partial-rows, touched-buckets, store, open).
//
// Layout
// - point_values (series_id, ts, value, text, annotation): the raw rows, one per (series, ts). Every
//   appended group is sorted by (series, ts) first, so row-group zone maps on series_id and ts prune
//   reads, which always bound ts on both sides; compact() rewrites the table fully sorted.
// - point_buckets (series_id, bucket = floor(ts / BUCKET_MS), count, sum, min, max, first_ts,
//   first_value, last_ts, last_value, inner_integral): hourly partial aggregates of the numeric
//   values, written in the same transaction as the raw rows. A bucket may hold several partial rows
//   with disjoint spans (one per append that reached it); buckets() merges them in JS, a periodic
//   SQL step merges them in the table, compact() merges them all. So buckets() over a year of one
//   series reads ~8,760 rows.
//
// Upsert without read-time deduplication: the newest ts of every series is kept in memory (loaded at
// open). Rows newer than it (the common case: live data, a bulk load in time order) are a pure
// append, and their partial aggregates are computed in JS in one pass. Rows at or below it are late:
// the stored rows with the same (series, ts) are deleted in the same transaction before the new ones
// are appended, and the touched buckets are recomputed from the raw rows in SQL. Inside one append the
// last row for a (series, ts) wins. The raw table never holds two rows for one key, so reads are
// plain filtered scans.
//
// Values are assumed finite: NaN means "no numeric value" (an ALPHANUMERIC row), ±Infinity and a
// non-integer or out-of-range ts make append() reject the whole batch with a RangeError (nothing
// written). The pipeline never sends them.
export { setBigIntColumn } from './chunks.js';
export { openDuckDbStore, VALUES_FILE } from './open.js';
export type { DuckDbStoreOptions, DuckDbValueStore } from './store.js';
