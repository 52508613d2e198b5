// The DuckDB store's tables and statements. Values are always bind parameters; BUCKET_MS is the
// only constant spliced in.
import { BIGINT, DOUBLE, INTEGER, VARCHAR, type DuckDBType } from '@duckdb/node-api';
import { BUCKET_MS } from '../types.js';

const H = BUCKET_MS;
/** floor(ts / BUCKET_MS) in SQL: `//` truncates towards zero, which is wrong before 1970. */
const BUCKET_OF_TS = `((p.ts - ((p.ts % ${H}) + ${H}) % ${H}) // ${H})`;

/** Column types of point_values and point_buckets, for the DataChunk appenders. */
export const RAW_TYPES: DuckDBType[] = [INTEGER, BIGINT, DOUBLE, VARCHAR, VARCHAR];
export const BUCKET_TYPES: DuckDBType[] = [INTEGER, BIGINT, INTEGER, DOUBLE, DOUBLE, DOUBLE, BIGINT, DOUBLE, BIGINT, DOUBLE, DOUBLE];
/** Column types of the temporary key tables late_keys (series, ts) and touched (series, bucket). */
export const KEY_TYPES: DuckDBType[] = [INTEGER, BIGINT];

export const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS point_values (
     series_id INTEGER NOT NULL, ts BIGINT NOT NULL, value DOUBLE, text VARCHAR, annotation VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS point_buckets (
     series_id INTEGER NOT NULL, bucket BIGINT NOT NULL, count INTEGER NOT NULL, sum DOUBLE NOT NULL,
     min DOUBLE NOT NULL, max DOUBLE NOT NULL, first_ts BIGINT NOT NULL, first_value DOUBLE NOT NULL,
     last_ts BIGINT NOT NULL, last_value DOUBLE NOT NULL, inner_integral DOUBLE NOT NULL)`,
];

/** The writer's temporary tables (per connection: made on the primary only). */
export const TEMP_TABLES = [
  'CREATE TEMP TABLE late_keys (series_id INTEGER, ts BIGINT)',
  'CREATE TEMP TABLE touched (series_id INTEGER, bucket BIGINT)',
  'CREATE TEMP TABLE merged_buckets AS SELECT * FROM point_buckets LIMIT 0',
];

export const SQL = {
  tsBounds: 'SELECT series_id, min(ts)::DOUBLE, max(ts)::DOUBLE FROM point_values GROUP BY series_id',
  seriesMaxTs: 'SELECT max(ts)::DOUBLE FROM point_values WHERE series_id = $1',
  // Both read a window of ts: bounds on both sides let zone maps skip most row groups.
  newest: `SELECT ts::DOUBLE, value, text, annotation FROM point_values
           WHERE series_id = $1 AND ts >= $2 AND ts <= $3 ORDER BY ts DESC LIMIT $4`,
  oldest: `SELECT ts::DOUBLE, value, text, annotation FROM point_values
           WHERE series_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts LIMIT $4`,
  // A window in table order (sorted in JS when needed, results.ts): no sort in SQL. The limit only
  // tells whether the window holds more than a page (then SQL.oldest reads it).
  window: `SELECT ts::DOUBLE, value, text, annotation FROM point_values
           WHERE series_id = $1 AND ts >= $2 AND ts < $3 LIMIT $4`,
  // The newest value with ts in a window: an aggregate, no top-n (DuckDB's top-n with its dynamic
  // filter costs more than the scan here). arg_max_null keeps a NULL value/text/annotation.
  newestOne: `SELECT max(ts)::DOUBLE, arg_max_null(value, ts), arg_max_null(text, ts), arg_max_null(annotation, ts)
              FROM point_values WHERE series_id = $1 AND ts >= $2 AND ts <= $3`,
  // No ORDER BY: rows come in table order (DuckDB preserves insertion order), which is bucket order
  // but for recomputed or merged buckets; buckets() checks the order and sorts only when needed.
  buckets: `SELECT bucket::DOUBLE, count, sum, min, max, first_ts::DOUBLE, first_value, last_ts::DOUBLE,
                   last_value, inner_integral
            FROM point_buckets WHERE series_id = $1 AND bucket >= $2 AND bucket < $3`,
  ping: 'SELECT 1',
  // Late rows: remove the stored rows they replace (bounds let zone maps prune).
  clearLateKeys: 'DELETE FROM late_keys',
  deleteReplaced: `DELETE FROM point_values AS p USING late_keys AS k
                   WHERE p.series_id = k.series_id AND p.ts = k.ts
                     AND p.series_id BETWEEN $1 AND $2 AND p.ts BETWEEN $3 AND $4`,
  // Touched buckets: drop their rows, recompute them from the raw rows.
  clearTouched: 'DELETE FROM touched',
  deleteTouchedBuckets: `DELETE FROM point_buckets AS b USING touched AS t
                         WHERE b.series_id = t.series_id AND b.bucket = t.bucket
                           AND b.series_id BETWEEN $1 AND $2 AND b.bucket BETWEEN $3 AND $4`,
  recomputeTouched: `INSERT INTO point_buckets
      SELECT series_id, bucket, count(*)::INTEGER, sum(value), min(value), max(value),
             min(ts), arg_min(value, ts), max(ts), arg_max(value, ts),
             coalesce(sum(value * (next_ts - ts)), 0)
      FROM (SELECT p.series_id, t.bucket, p.ts, p.value,
                   lead(p.ts) OVER (PARTITION BY p.series_id, t.bucket ORDER BY p.ts) AS next_ts
            FROM point_values AS p JOIN touched AS t
              ON p.series_id = t.series_id AND ${BUCKET_OF_TS} = t.bucket
            WHERE p.value IS NOT NULL AND p.series_id BETWEEN $1 AND $2 AND p.ts >= $3 AND p.ts < $4)
      GROUP BY series_id, bucket`,
  deleteRange: 'DELETE FROM point_values WHERE series_id = $1 AND ts >= $2 AND ts < $3',
  deleteBucketRange: 'DELETE FROM point_buckets WHERE series_id = $1 AND bucket >= $2 AND bucket <= $3',
  insertTouched: 'INSERT INTO touched VALUES ($1, $2)',
};

/**
 * Merges the partial rows of each (series, bucket) of `source` into one: the SQL twin of
 * BucketMerger (../aggregates.ts). Partial rows of one bucket have disjoint spans: each is linked to
 * the one before it in time.
 */
function mergePartials(source: string): string {
  return `SELECT series_id, bucket, sum(count)::INTEGER AS count, sum(sum) AS sum, min(min) AS min, max(max) AS max,
            min(first_ts) AS first_ts, arg_min(first_value, first_ts) AS first_value,
            max(last_ts) AS last_ts, arg_max(last_value, last_ts) AS last_value,
            sum(inner_integral) + coalesce(sum(link), 0) AS inner_integral
     FROM (SELECT *, lag(last_value) OVER w * (first_ts - lag(last_ts) OVER w) AS link
           FROM ${source} WINDOW w AS (PARTITION BY series_id, bucket ORDER BY first_ts))
     GROUP BY series_id, bucket`;
}

/** Merging the partial rows of the buckets listed in `touched` (bounds as in deleteTouchedBuckets). */
export const MERGE_TOUCHED = {
  clear: 'DELETE FROM merged_buckets',
  merge: `INSERT INTO merged_buckets ${mergePartials(`(SELECT b.* FROM point_buckets AS b JOIN touched AS t
            ON b.series_id = t.series_id AND b.bucket = t.bucket
            WHERE b.series_id BETWEEN $1 AND $2 AND b.bucket BETWEEN $3 AND $4)`)}`,
  insert: 'INSERT INTO point_buckets SELECT * FROM merged_buckets',
};

export const COMPACT = [
  'DROP TABLE IF EXISTS point_values_sorted',
  'DROP TABLE IF EXISTS point_buckets_merged',
  `CREATE TABLE point_values_sorted AS
     SELECT series_id, ts, value, text, annotation FROM point_values ORDER BY series_id, ts`,
  `CREATE TABLE point_buckets_merged AS ${mergePartials('point_buckets')} ORDER BY series_id, bucket`,
  'DROP TABLE point_values',
  'ALTER TABLE point_values_sorted RENAME TO point_values',
  'DROP TABLE point_buckets',
  'ALTER TABLE point_buckets_merged RENAME TO point_buckets',
];
