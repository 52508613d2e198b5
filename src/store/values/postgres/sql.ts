// The PostgreSQL store's tables and statements. Values are always bind parameters; the table names
// are fixed here, BUCKET_MS and partition bounds (integers we computed) are the only constants
// spliced in. The schema comes from the pool's search_path (DATABASE_SCHEMA), as for the metadata.
import { BUCKET_MS } from '../types.js';

const H = BUCKET_MS;

export const RAW = 'point_values';
export const HOURLY = 'point_values_hourly';
/** Per connection, emptied at every commit: where COPY lands before the upsert. */
export const STAGE = 'point_values_stage';

export const SCHEMA = [
  // The primary key is the upsert's arbiter and the index every read walks: (series, ts).
  `CREATE TABLE IF NOT EXISTS ${RAW} (
     series integer NOT NULL, ts bigint NOT NULL, value double precision, text text, annotation text,
     PRIMARY KEY (series, ts)) PARTITION BY RANGE (ts)`,
  `CREATE TABLE IF NOT EXISTS ${HOURLY} (
     series integer NOT NULL, bucket bigint NOT NULL, count integer NOT NULL, sum double precision NOT NULL,
     min double precision NOT NULL, max double precision NOT NULL, first_ts bigint NOT NULL,
     first_value double precision NOT NULL, last_ts bigint NOT NULL, last_value double precision NOT NULL,
     inner_integral double precision NOT NULL, PRIMARY KEY (series, bucket))`,
];

/** Made once per connection that writes. */
export const CREATE_STAGE = `CREATE TEMP TABLE IF NOT EXISTS ${STAGE} (
  series integer NOT NULL, ts bigint NOT NULL, value double precision, text text, annotation text) ON COMMIT DELETE ROWS`;

/** Aggregates of one (t.series, t.bucket) from the raw rows: the SQL twin of BucketFolder. */
const BUCKET_AGGREGATE = `
  SELECT count(*)::integer AS count, sum(x.value) AS sum, min(x.value) AS min, max(x.value) AS max,
         min(x.ts) AS first_ts, max(x.value) FILTER (WHERE x.prev_ts IS NULL) AS first_value,
         max(x.ts) AS last_ts, max(x.value) FILTER (WHERE x.next_ts IS NULL) AS last_value,
         coalesce(sum(x.value * (x.next_ts - x.ts)), 0) AS inner_integral
  FROM (SELECT p.ts, p.value, lag(p.ts) OVER w AS prev_ts, lead(p.ts) OVER w AS next_ts
        FROM ${RAW} AS p
        WHERE p.series = t.series AND p.ts >= t.bucket * ${H} AND p.ts < (t.bucket + 1) * ${H}
          AND p.value IS NOT NULL AND p.value <> 'NaN'::double precision
        WINDOW w AS (ORDER BY p.ts)) AS x`;

const HOURLY_COLUMNS = 'series, bucket, count, sum, min, max, first_ts, first_value, last_ts, last_value, inner_integral';

export const SQL = {
  copyStage: `COPY ${STAGE} (series, ts, value, text, annotation) FROM STDIN (FORMAT binary)`,
  /**
   * Whether any series $1 has a stored row at or after $2 (its first staged ts): only then can the
   * stage conflict with stored rows. Asked under the series locks, so no other writer adds one meanwhile.
   */
  anyLate: `SELECT EXISTS (SELECT 1 FROM unnest($1::integer[], $2::bigint[]) AS t(series, ts)
              WHERE EXISTS (SELECT 1 FROM ${RAW} AS p WHERE p.series = t.series AND p.ts >= t.ts)) AS late`,
  /** New rows only (live data, a bulk load in time order): a plain insert costs about half an upsert. */
  insert: `INSERT INTO ${RAW} (series, ts, value, text, annotation) SELECT series, ts, value, text, annotation FROM ${STAGE}`,
  // The stage holds one row per (series, ts) (deduplicated in JS, last write kept).
  upsert: `INSERT INTO ${RAW} (series, ts, value, text, annotation)
           SELECT series, ts, value, text, annotation FROM ${STAGE}
           ON CONFLICT (series, ts) DO UPDATE SET value = EXCLUDED.value, text = EXCLUDED.text, annotation = EXCLUDED.annotation`,
  /**
   * Per-series write locks, $2 sorted ascending so that two writers never wait on each other in a
   * cycle; a function scan yields the array in order. $1 keeps this store's locks apart from another
   * schema's.
   */
  lockSeries: 'SELECT count(pg_advisory_xact_lock($1::integer, s)) FROM unnest($2::integer[]) AS s',
  lockPartitions: 'SELECT pg_advisory_xact_lock($1::integer, 0)',
  /**
   * Recomputes the (series, bucket) pairs $1, $2 from the raw rows: buckets left without a numeric
   * row are deleted, the others written. A lateral subquery per pair is a bounded index scan (its ts
   * bounds prune partitions at run time); a join could be planned as a scan of the whole table.
   */
  recompute: `WITH touched AS (
        SELECT * FROM unnest($1::integer[], $2::bigint[]) AS t(series, bucket)),
      agg AS (
        SELECT t.series, t.bucket, a.* FROM touched AS t CROSS JOIN LATERAL (${BUCKET_AGGREGATE}) AS a
        WHERE a.count > 0),
      emptied AS (
        DELETE FROM ${HOURLY} AS h USING touched AS t
        WHERE h.series = t.series AND h.bucket = t.bucket
          AND NOT EXISTS (SELECT 1 FROM agg WHERE agg.series = t.series AND agg.bucket = t.bucket))
    INSERT INTO ${HOURLY} (${HOURLY_COLUMNS}) SELECT ${HOURLY_COLUMNS} FROM agg
    ON CONFLICT (series, bucket) DO UPDATE SET count = EXCLUDED.count, sum = EXCLUDED.sum, min = EXCLUDED.min,
      max = EXCLUDED.max, first_ts = EXCLUDED.first_ts, first_value = EXCLUDED.first_value,
      last_ts = EXCLUDED.last_ts, last_value = EXCLUDED.last_value, inner_integral = EXCLUDED.inner_integral`,
  latest: `SELECT ts, value, text, annotation FROM ${RAW} WHERE series = $1 ORDER BY ts DESC LIMIT $2`,
  valueAt: `SELECT ts, value, text, annotation FROM ${RAW} WHERE series = $1 AND ts <= $2 ORDER BY ts DESC LIMIT 1`,
  range: `SELECT ts, value, text, annotation FROM ${RAW} WHERE series = $1 AND ts >= $2 AND ts < $3 ORDER BY ts LIMIT $4`,
  buckets: `SELECT bucket, count, sum, min, max, first_ts, first_value, last_ts, last_value, inner_integral
            FROM ${HOURLY} WHERE series = $1 AND bucket >= $2 AND bucket < $3 ORDER BY bucket`,
  deleteRange: `DELETE FROM ${RAW} WHERE series = $1 AND ts >= $2 AND ts < $3`,
  /**
   * The series with a value before $1: a skip scan over the primary key (one probe per series that
   * has values at all, none for the points that have none), then one probe each below $1.
   */
  seriesBefore: `WITH RECURSIVE s(series) AS (
                   (SELECT series FROM ${RAW} ORDER BY series LIMIT 1)
                   UNION ALL
                   SELECT (SELECT p.series FROM ${RAW} AS p WHERE p.series > s.series ORDER BY p.series LIMIT 1)
                   FROM s WHERE s.series IS NOT NULL)
                 SELECT s.series FROM s
                 WHERE s.series IS NOT NULL AND EXISTS (SELECT 1 FROM ${RAW} AS p WHERE p.series = s.series AND p.ts < $1)`,
  /** Buckets wholly inside a deleted range: nothing of them is left. */
  deleteInnerBuckets: `DELETE FROM ${HOURLY} WHERE series = $1 AND bucket > $2 AND bucket < $3`,
  /** The hourly rows of every series in [$1, $2) (hour indexes): a dropped month's. */
  deleteBucketsBetween: `DELETE FROM ${HOURLY} WHERE bucket >= $1 AND bucket < $2`,
  /** The month partitions that exist, by name. */
  partitions: `SELECT c.relname AS name FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
               WHERE i.inhparent = '${RAW}'::regclass`,
  currentSchema: 'SELECT current_schema() AS schema',
  ping: 'SELECT 1',
};

/** A row of SQL.buckets (int8 columns arrive as numbers: see the pool's type parsers). */
export interface HourlyRow {
  bucket: number;
  count: number;
  sum: number;
  min: number;
  max: number;
  first_ts: number;
  first_value: number;
  last_ts: number;
  last_value: number;
  inner_integral: number;
}

/** A row of SQL.latest, valueAt and range. */
export interface ValueRow {
  ts: number;
  value: number | null;
  text: string | null;
  annotation: string | null;
}
