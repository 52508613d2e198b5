// The embedded point-value store: DuckDB, one file (DATA_DIR/values/values.duckdb), one instance per
// process.
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
// Writes (append, delete, compact) are taken from one queue, in order. Queued appends share a
// transaction (group commit); a transaction of pure appends commits on its own writer connection
// while the next one is already being written on another (appends never conflict in DuckDB), and a
// transaction with late rows, a delete or a compaction waits for those and runs alone. Reads use a
// pool of other connections and see committed transactions only. An append resolves after its commit
// (and after every append queued before it): durable, since DuckDB writes and syncs its WAL at commit,
// and visible to every later read.
//
// Values are assumed finite: NaN means "no numeric value" (an ALPHANUMERIC row), ±Infinity and a
// non-integer or out-of-range ts make append() reject the whole batch with a RangeError (nothing
// written). The pipeline never sends them.
import { mkdir } from 'node:fs/promises';
import { endianness } from 'node:os';
import { resolve } from 'node:path';
import {
  BIGINT,
  DOUBLE,
  DuckDBDataChunk,
  DuckDBInstance,
  DuckDBTypeId,
  INTEGER,
  VARCHAR,
  type DuckDBAppender,
  type DuckDBBigIntVector,
  type DuckDBConnection,
  type DuckDBDoubleVector,
  type DuckDBIntegerVector,
  type DuckDBMaterializedResult,
  type DuckDBPreparedStatement,
  type DuckDBResultReader,
  type DuckDBType,
  type DuckDBVarCharVector,
} from '@duckdb/node-api';
import { concatBatches } from './write-buffer.js';
import { BUCKET_MS, type BucketAggregate, type PointValueStore, type StoredValue, type ValueBatch } from './types.js';

export interface DuckDbStoreOptions {
  /** Reader connections (default 4). */
  readers?: number;
  /** Writer connections: how many append transactions may be in flight at once (default 2). */
  writers?: number;
  /** DuckDB worker threads (default: DuckDB's, one per core). */
  threads?: number;
  /** DuckDB memory limit, e.g. '2GB' (default: DuckDB's, 80 % of RAM). */
  memoryLimit?: string;
  /** WAL size that triggers an automatic checkpoint, e.g. '64MB' (default: DuckDB's, 16 MiB). */
  checkpointThreshold?: string;
  /** Values per batch yielded by range() (default 10,000). */
  pageSize?: number;
  /** Most values one write transaction takes from the queue (default 200,000; a larger append goes alone). */
  maxGroupValues?: number;
  /** Extra partial bucket rows (from appends continuing an hour) after which they are merged (default 10,000). */
  mergePartialsAfter?: number;
}

/** The DuckDB store: the PointValueStore verbs plus maintenance. */
export interface DuckDbValueStore extends PointValueStore {
  readonly engine: 'duckdb';
  /**
   * Rewrites the raw table sorted by (series, ts) and merges partial bucket rows, then checkpoints.
   * Queued with the writes, so concurrent appends wait and are kept; a no-op when nothing was written
   * since the last compaction in this process.
   */
  compact(): Promise<void>;
}

export const VALUES_FILE = 'values.duckdb';

/** Timestamps are epoch ms in the range of a JS Date. */
const MAX_TS = 8.64e15;
const H = BUCKET_MS;
/** floor(ts / BUCKET_MS) in SQL: `//` truncates towards zero, which is wrong before 1970. */
const BUCKET_OF_TS = `((p.ts - ((p.ts % ${H}) + ${H}) % ${H}) // ${H})`;
/** range()'s first window assumes values about a minute apart; later windows follow the data. */
const MIN_SPACING_GUESS = 60_000;
const LITTLE_ENDIAN = endianness() === 'LE';
/** DuckDB's vector size: the most rows in one data chunk. */
const CHUNK_ROWS = 2048;

const RAW_TYPES: DuckDBType[] = [INTEGER, BIGINT, DOUBLE, VARCHAR, VARCHAR];
const BUCKET_TYPES: DuckDBType[] = [INTEGER, BIGINT, INTEGER, DOUBLE, DOUBLE, DOUBLE, BIGINT, DOUBLE, BIGINT, DOUBLE, DOUBLE];

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS point_values (
     series_id INTEGER NOT NULL, ts BIGINT NOT NULL, value DOUBLE, text VARCHAR, annotation VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS point_buckets (
     series_id INTEGER NOT NULL, bucket BIGINT NOT NULL, count INTEGER NOT NULL, sum DOUBLE NOT NULL,
     min DOUBLE NOT NULL, max DOUBLE NOT NULL, first_ts BIGINT NOT NULL, first_value DOUBLE NOT NULL,
     last_ts BIGINT NOT NULL, last_value DOUBLE NOT NULL, inner_integral DOUBLE NOT NULL)`,
];

const SQL = {
  tsBounds: 'SELECT series_id, min(ts)::DOUBLE, max(ts)::DOUBLE FROM point_values GROUP BY series_id',
  seriesMaxTs: 'SELECT max(ts)::DOUBLE FROM point_values WHERE series_id = $1',
  // Both read a window of ts: bounds on both sides let zone maps skip most row groups.
  newest: `SELECT ts::DOUBLE, value, text, annotation FROM point_values
           WHERE series_id = $1 AND ts >= $2 AND ts <= $3 ORDER BY ts DESC LIMIT $4`,
  oldest: `SELECT ts::DOUBLE, value, text, annotation FROM point_values
           WHERE series_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts LIMIT $4`,
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
 * Merges the partial rows of each (series, bucket) of `source` into one. Partial rows of one bucket
 * have disjoint spans: each is linked to the one before it in time.
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
const MERGE_TOUCHED = {
  clear: 'DELETE FROM merged_buckets',
  merge: `INSERT INTO merged_buckets ${mergePartials(`(SELECT b.* FROM point_buckets AS b JOIN touched AS t
            ON b.series_id = t.series_id AND b.bucket = t.bucket
            WHERE b.series_id BETWEEN $1 AND $2 AND b.bucket BETWEEN $3 AND $4)`)}`,
  insert: 'INSERT INTO point_buckets SELECT * FROM merged_buckets',
};

const COMPACT = [
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

/** A connection with its prepared statements and appenders; used by one caller at a time. */
class Session {
  private readonly statements = new Map<string, DuckDBPreparedStatement>();
  private readonly appenders = new Map<string, DuckDBAppender>();
  constructor(readonly conn: DuckDBConnection) {}

  /** Runs a cached prepared statement with numeric parameters bound as the types DuckDB inferred. */
  async query(sql: string, params: readonly number[] = []): Promise<DuckDBResultReader> {
    let st = this.statements.get(sql);
    if (!st) {
      st = await this.conn.prepare(sql);
      this.statements.set(sql, st);
    }
    for (let i = 0; i < params.length; i++) bindNumber(st, i + 1, params[i]!);
    return st.runAndReadAll();
  }

  /** As query(), materialized, for reading its chunks' vectors directly. */
  async run(sql: string, params: readonly number[] = []): Promise<DuckDBMaterializedResult> {
    let st = this.statements.get(sql);
    if (!st) {
      st = await this.conn.prepare(sql);
      this.statements.set(sql, st);
    }
    for (let i = 0; i < params.length; i++) bindNumber(st, i + 1, params[i]!);
    return st.run();
  }

  /** Statement text without parameters (DDL). */
  async exec(sql: string): Promise<void> {
    await this.conn.run(sql);
  }

  /** The appender for a main table, kept across transactions (each transaction flushes it). */
  async appender(table: 'point_values' | 'point_buckets'): Promise<DuckDBAppender> {
    let a = this.appenders.get(table);
    if (!a) {
      a = await this.conn.createAppender(table);
      this.appenders.set(table, a);
    }
    return a;
  }

  /** Drops the appenders with whatever they hold: after a failed transaction, and after DDL. */
  dropAppenders(): void {
    for (const a of this.appenders.values()) {
      try {
        a.clear();
        a.closeSync();
      } catch {
        // a broken appender holds nothing worth keeping
      }
    }
    this.appenders.clear();
  }

  /** Prepared statements and appenders name tables; after DDL they are made again. */
  forget(): void {
    this.dropAppenders();
    for (const st of this.statements.values()) st.destroySync();
    this.statements.clear();
  }

  close(): void {
    this.forget();
    this.conn.closeSync();
  }
}

function bindNumber(st: DuckDBPreparedStatement, index: number, value: number): void {
  switch (st.parameterTypeId(index)) {
    case DuckDBTypeId.INTEGER:
      st.bindInteger(index, value);
      return;
    case DuckDBTypeId.BIGINT:
      st.bindBigInt(index, BigInt(value));
      return;
    default:
      st.bindDouble(index, value);
  }
}

/** Connections, each lent to one caller at a time. */
class Pool {
  private readonly free: Session[];
  private readonly waiting: ((s: Session) => void)[] = [];
  private active = 0;
  private idle: (() => void) | undefined;

  constructor(private readonly sessions: Session[]) {
    this.free = [...sessions];
  }

  async use<T>(fn: (s: Session) => Promise<T>): Promise<T> {
    const s = this.free.pop() ?? (await new Promise<Session>((resolve) => this.waiting.push(resolve)));
    this.active++;
    try {
      return await fn(s);
    } finally {
      this.active--;
      const next = this.waiting.shift();
      if (next) next(s);
      else this.free.push(s);
      if (this.active === 0) this.idle?.();
    }
  }

  /** Every connection's statements and appenders; only while none is lent (the write queue ensures it for writers). */
  forget(): void {
    for (const s of this.sessions) s.forget();
  }

  /** Waits for the queries in flight, then closes every connection. */
  async close(): Promise<void> {
    if (this.active > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    for (const s of this.sessions) s.close();
  }
}

/** A batch's rows in (series, ts) order, one per (series, ts) (the last written wins), cut by series. */
interface SortedRows {
  /** Row indices into the batch. */
  perm: Uint32Array;
  n: number;
  /** Per series, ascending: the series id and its rows perm[start, end). */
  segSeries: number[];
  segStart: number[];
  segEnd: number[];
}

/** Rejects what the store cannot keep; the pipeline never sends it. */
function validate(batch: ValueBatch): void {
  const { ts, value } = batch;
  if (ts.length < batch.length || value.length < batch.length || batch.series.length < batch.length) {
    throw new RangeError('value batch columns are shorter than its length');
  }
  for (let i = 0; i < batch.length; i++) {
    const t = ts[i]!;
    if (!Number.isInteger(t) || t < -MAX_TS || t > MAX_TS) throw new RangeError(`invalid timestamp ${t} at row ${i}`);
    const v = value[i]!;
    if (v === Infinity || v === -Infinity) throw new RangeError(`infinite value at row ${i}`);
  }
}

/**
 * Orders a batch by (series, ts) without a comparison sort in the common case (each series' rows
 * already strictly increasing): rows are counted per series and placed series by series; only a
 * series whose rows arrive out of order or repeat a ts is sorted, keeping the last row per ts.
 */
function sortRows(batch: ValueBatch): SortedRows {
  const { series, ts, length } = batch;
  const groupOf = new Map<number, number>();
  const gSeries: number[] = [];
  const gCount: number[] = [];
  const gLastTs: number[] = [];
  const gOrdered: boolean[] = [];
  const rowGroup = new Uint32Array(length);
  let prevSeries = NaN;
  let g = -1;
  for (let i = 0; i < length; i++) {
    const s = series[i]!;
    if (s !== prevSeries) {
      // A run of rows of one series costs one lookup.
      prevSeries = s;
      let found = groupOf.get(s);
      if (found === undefined) {
        found = gSeries.length;
        groupOf.set(s, found);
        gSeries.push(s);
        gCount.push(0);
        gLastTs.push(-Infinity);
        gOrdered.push(true);
      }
      g = found;
    }
    rowGroup[i] = g;
    gCount[g]!++;
    const t = ts[i]!;
    if (t <= gLastTs[g]!) gOrdered[g] = false;
    gLastTs[g] = t;
  }
  if (gSeries.length === 1 && gOrdered[0]) {
    // The common case: one series in time order.
    const perm = new Uint32Array(length);
    for (let i = 0; i < length; i++) perm[i] = i;
    return { perm, n: length, segSeries: [gSeries[0]!], segStart: [0], segEnd: [length] };
  }
  const order = gSeries.map((_, g) => g).sort((a, b) => gSeries[a]! - gSeries[b]!);
  const offset = new Array<number>(gSeries.length);
  let at = 0;
  for (const g of order) {
    offset[g] = at;
    at += gCount[g]!;
  }
  const fill = offset.slice();
  const perm = new Uint32Array(length);
  for (let i = 0; i < length; i++) perm[fill[rowGroup[i]!]!++] = i;

  // Per group, in series order: sort and deduplicate where needed, then pack the segments together.
  const out: SortedRows = { perm, n: 0, segSeries: [], segStart: [], segEnd: [] };
  let write = 0;
  for (const g of order) {
    const start = offset[g]!;
    const end = start + gCount[g]!;
    const segStart = write;
    if (gOrdered[g]) {
      perm.copyWithin(write, start, end);
      write += end - start;
    } else {
      const rows = Array.from(perm.subarray(start, end)).sort((a, b) => ts[a]! - ts[b]! || a - b);
      for (let k = 0; k < rows.length; k++) {
        const next = rows[k + 1];
        if (next !== undefined && ts[next] === ts[rows[k]!]) continue; // a later row has this ts
        perm[write++] = rows[k]!;
      }
    }
    out.segSeries.push(gSeries[g]!);
    out.segStart.push(segStart);
    out.segEnd.push(write);
  }
  out.n = write;
  return out;
}

/** Partial bucket aggregates, column by column. */
class BucketRows {
  length = 0;
  series: number[] = [];
  bucket: number[] = [];
  count: number[] = [];
  sum: number[] = [];
  min: number[] = [];
  max: number[] = [];
  firstTs: number[] = [];
  firstValue: number[] = [];
  lastTs: number[] = [];
  lastValue: number[] = [];
  inner: number[] = [];

  /** One pass over one series' rows perm[start, end) (ascending ts), numeric values only. */
  addSeries(s: number, batch: ValueBatch, perm: Uint32Array, start: number, end: number): void {
    const { ts, value } = batch;
    let bucket = NaN;
    let count = 0;
    let sum = 0;
    let min = 0;
    let max = 0;
    let firstTs = 0;
    let firstValue = 0;
    let lastTs = 0;
    let lastValue = 0;
    let inner = 0;
    for (let k = start; k < end; k++) {
      const i = perm[k]!;
      const v = value[i]!;
      if (v !== v) continue; // NaN: an ALPHANUMERIC row
      const t = ts[i]!;
      const b = Math.floor(t / H);
      if (b !== bucket) {
        if (count > 0) this.push(s, bucket, count, sum, min, max, firstTs, firstValue, lastTs, lastValue, inner);
        bucket = b;
        count = 1;
        sum = min = max = firstValue = lastValue = v;
        firstTs = lastTs = t;
        inner = 0;
      } else {
        count++;
        sum += v;
        if (v < min) min = v;
        if (v > max) max = v;
        inner += lastValue * (t - lastTs);
        lastTs = t;
        lastValue = v;
      }
    }
    if (count > 0) this.push(s, bucket, count, sum, min, max, firstTs, firstValue, lastTs, lastValue, inner);
  }

  private push(...row: number[]): void {
    const cols = [this.series, this.bucket, this.count, this.sum, this.min, this.max, this.firstTs, this.firstValue, this.lastTs, this.lastValue, this.inner];
    for (let c = 0; c < cols.length; c++) cols[c]!.push(row[c]!);
    this.length++;
  }
}


/** Appends numeric columns (INTEGER, BIGINT or DOUBLE) through `chunk` (of `types`, reused), then flushes. */
/**
 * Writes whole-number doubles into a BIGINT vector. node-api's setItem takes a BigInt, and making one
 * per row costs as much as the rest of the append; the vector's items are a BigInt64Array over a
 * plain buffer, so on a little-endian machine each row is written as two 32-bit words instead. Falls
 * back to setItem where that buffer is not there (another node-api version).
 */
export function setBigIntColumn(vec: DuckDBBigIntVector, count: number, valueOf: (j: number) => number): void {
  const items = (vec as unknown as { items?: unknown }).items;
  if (!LITTLE_ENDIAN || !(items instanceof BigInt64Array) || items.length < count) {
    for (let j = 0; j < count; j++) vec.setItem(j, BigInt(valueOf(j)));
    return;
  }
  const words = new Int32Array(items.buffer, items.byteOffset, count * 2);
  for (let j = 0; j < count; j++) {
    const x = valueOf(j);
    const high = Math.floor(x / 2 ** 32);
    words[2 * j] = x - high * 2 ** 32; // stored modulo 2^32: the low word's bits
    words[2 * j + 1] = high;
  }
}

function appendColumns(appender: DuckDBAppender, chunk: DuckDBDataChunk, types: DuckDBType[], columns: number[][]): void {
  const length = columns[0]!.length;
  for (let off = 0; off < length; off += CHUNK_ROWS) {
    const m = Math.min(CHUNK_ROWS, length - off);
    if (chunk.rowCount !== m) chunk.rowCount = m;
    for (let c = 0; c < types.length; c++) {
      const col = columns[c]!;
      if (types[c] === BIGINT) {
        const vec = chunk.getColumnVector(c) as DuckDBBigIntVector;
        setBigIntColumn(vec, m, (j) => col[off + j]!);
        vec.flush();
      } else {
        const vec = chunk.getColumnVector(c) as DuckDBIntegerVector | DuckDBDoubleVector;
        for (let j = 0; j < m; j++) vec.setItem(j, col[off + j]!);
        vec.flush();
      }
    }
    appender.appendDataChunk(chunk);
  }
  appender.flushSync();
}

/** The row of SQL.newestOne: none when its window held no value (max(ts) is NULL). */
function toNewestOne(reader: DuckDBResultReader): StoredValue[] {
  if (reader.currentRowCount === 0) return [];
  const ts = reader.value(0, 0) as number | null;
  if (ts === null) return [];
  const value = reader.value(1, 0) as number | null;
  const text = reader.value(2, 0) as string | null;
  const annotation = reader.value(3, 0) as string | null;
  return [{ ts, value: value ?? null, text: text ?? null, annotation: annotation ?? null }];
}

function toStoredValues(reader: DuckDBResultReader): StoredValue[] {
  if (reader.currentRowCount === 0) return []; // getColumns() has no columns then
  const [ts, value, text, annotation] = reader.getColumns() as [number[], (number | null)[], (string | null)[], (string | null)[]];
  const out = new Array<StoredValue>(ts.length);
  for (let i = 0; i < ts.length; i++) {
    out[i] = { ts: ts[i]!, value: value[i] ?? null, text: text[i] ?? null, annotation: annotation[i] ?? null };
  }
  return out;
}

/** Column vectors of one chunk of SQL.buckets, in its column order. */
type BucketVectors = [
  DuckDBDoubleVector,
  DuckDBIntegerVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
];

/**
 * The rows of SQL.buckets as one aggregate per bucket, ascending. Values are read from the chunks'
 * vectors (every column is NOT NULL), with no intermediate row or column arrays. Rows come in table
 * order, ascending by (bucket, first_ts) unless buckets were recomputed or merged since the last
 * compaction; only then are they sorted. Partial rows of a bucket (disjoint spans) are merged, each
 * linked to the one before it in time.
 */
function readBuckets(result: DuckDBMaterializedResult): BucketAggregate[] {
  const chunkCount = result.chunkCount;
  const vectors: BucketVectors[] = [];
  const sizes: number[] = [];
  let total = 0;
  let ordered = true;
  let prevBucket = -Infinity;
  let prevFirst = -Infinity;
  for (let c = 0; c < chunkCount; c++) {
    const chunk = result.getChunk(c);
    const m = chunk.rowCount;
    if (m === 0) continue;
    const v = [] as unknown as BucketVectors;
    for (let k = 0; k < 10; k++) v.push(chunk.getColumnVector(k) as DuckDBDoubleVector);
    vectors.push(v);
    sizes.push(m);
    total += m;
    if (ordered) {
      const [vb, , , , , vf] = v;
      for (let j = 0; j < m; j++) {
        const b = vb.getItem(j)!;
        const f = vf.getItem(j)!;
        if (b < prevBucket || (b === prevBucket && f < prevFirst)) {
          ordered = false;
          break;
        }
        prevBucket = b;
        prevFirst = f;
      }
    }
  }
  if (total === 0) return [];
  const out: BucketAggregate[] = [];
  let cur: BucketAggregate | undefined;
  const add = (v: BucketVectors, j: number): void => {
    const start = v[0].getItem(j)! * H;
    if (cur && cur.start === start) {
      // A later partial row of the same bucket: link it to the one before.
      cur.innerIntegral += cur.lastValue * (v[5].getItem(j)! - cur.lastTs) + v[9].getItem(j)!;
      cur.count += v[1].getItem(j)!;
      cur.sum += v[2].getItem(j)!;
      const min = v[3].getItem(j)!;
      const max = v[4].getItem(j)!;
      if (min < cur.min) cur.min = min;
      if (max > cur.max) cur.max = max;
      cur.lastTs = v[7].getItem(j)!;
      cur.lastValue = v[8].getItem(j)!;
      return;
    }
    cur = {
      start,
      count: v[1].getItem(j)!,
      sum: v[2].getItem(j)!,
      min: v[3].getItem(j)!,
      max: v[4].getItem(j)!,
      firstTs: v[5].getItem(j)!,
      firstValue: v[6].getItem(j)!,
      lastTs: v[7].getItem(j)!,
      lastValue: v[8].getItem(j)!,
      innerIntegral: v[9].getItem(j)!,
    };
    out.push(cur);
  };
  if (ordered) {
    for (let c = 0; c < vectors.length; c++) {
      const v = vectors[c]!;
      const m = sizes[c]!;
      for (let j = 0; j < m; j++) add(v, j);
    }
    return out;
  }
  // Out of order: sort (chunk, row) references by (bucket, first_ts).
  const refChunk = new Uint32Array(total);
  const refRow = new Uint32Array(total);
  const keyBucket = new Float64Array(total);
  const keyFirst = new Float64Array(total);
  let r = 0;
  for (let c = 0; c < vectors.length; c++) {
    const v = vectors[c]!;
    for (let j = 0; j < sizes[c]!; j++, r++) {
      refChunk[r] = c;
      refRow[r] = j;
      keyBucket[r] = v[0].getItem(j)!;
      keyFirst[r] = v[5].getItem(j)!;
    }
  }
  const order = Array.from({ length: total }, (_, i) => i);
  order.sort((a, b) => keyBucket[a]! - keyBucket[b]! || keyFirst[a]! - keyFirst[b]!);
  for (const i of order) add(vectors[refChunk[i]!]!, refRow[i]!);
  return out;
}

/** Clamps a query bound into the stored timestamp range, so it binds as a BIGINT. */
function clampTs(t: number): number {
  if (Number.isNaN(t)) throw new RangeError('timestamp bound is NaN');
  return Math.max(-MAX_TS - 1, Math.min(MAX_TS + 1, Math.ceil(t)));
}

interface AppendJob {
  kind: 'append';
  batch: ValueBatch;
  resolve(): void;
  reject(err: unknown): void;
}
interface TaskJob {
  kind: 'task';
  run(): Promise<unknown>;
  resolve(v: unknown): void;
  reject(err: unknown): void;
}
type Job = AppendJob | TaskJob;

/** How a sorted group of rows is written. */
interface WritePlan {
  rows: SortedRows;
  /** Partial aggregates of the series whose rows are all newer than what is stored. */
  fresh: BucketRows;
  /** Segments (indices into rows.seg*) of series with rows at or before their stored max ts... */
  lateSegs: number[];
  /** ...and that max ts, per late segment. */
  lateKnown: number[];
}

class DuckDbStore implements DuckDbValueStore {
  readonly engine = 'duckdb' as const;
  private readonly queue: Job[] = [];
  private draining: Promise<void> | undefined;
  /** Settles after every pipelined append transaction started so far; never rejects. */
  private tail: Promise<void> = Promise.resolve();
  private closed = false;
  /** Rows written since the last compaction in this process (a reopened store counts as written). */
  private dirty = true;
  /** Per series, the bucket its last pure append ended in. */
  private readonly lastBucket = new Map<number, number>();
  /** Buckets (per series) that pure appends gave more than one partial row, and how many extra rows. */
  private readonly partialKeys = new Map<number, Set<number>>();
  private extraPartials = 0;
  /** Numeric-only chunk reused for every raw append: its text and annotation columns stay NULL. */
  private readonly numericChunk = DuckDBDataChunk.create(RAW_TYPES, CHUNK_ROWS);
  private readonly bucketChunk = DuckDBDataChunk.create(BUCKET_TYPES, CHUNK_ROWS);

  private readonly instance: DuckDBInstance;
  /** Runs late appends, deletes and compaction (alone); owns the temporary tables. */
  private readonly primary: Session;
  /** Run pure appends, several at once (the primary among them). */
  private readonly writers: Pool;
  private readonly readers: Pool;
  /** The newest ts per series, stored or being written (never below what is stored). */
  private readonly maxTs: Map<number, number>;
  /** The oldest ts per series ever seen (never above what is stored). */
  private readonly minTs: Map<number, number>;
  private readonly pageSize: number;
  private readonly maxGroupValues: number;
  private readonly mergePartialsAfter: number;
  private readonly onClose: () => void;

  constructor(init: {
    instance: DuckDBInstance;
    primary: Session;
    writers: Pool;
    readers: Pool;
    maxTs: Map<number, number>;
    minTs: Map<number, number>;
    options: DuckDbStoreOptions;
    onClose: () => void;
  }) {
    this.instance = init.instance;
    this.primary = init.primary;
    this.writers = init.writers;
    this.readers = init.readers;
    this.maxTs = init.maxTs;
    this.minTs = init.minTs;
    this.onClose = init.onClose;
    this.pageSize = init.options.pageSize ?? 10_000;
    this.maxGroupValues = init.options.maxGroupValues ?? 200_000;
    this.mergePartialsAfter = init.options.mergePartialsAfter ?? 10_000;
    const text = this.numericChunk.getColumnVector(3);
    const annotation = this.numericChunk.getColumnVector(4);
    for (let i = 0; i < CHUNK_ROWS; i++) {
      text.setItem(i, null);
      annotation.setItem(i, null);
    }
    text.flush();
    annotation.flush();
  }

  // ---- writes: one queue ----

  append(batch: ValueBatch): Promise<void> {
    if (this.closed) return Promise.reject(new Error('value store is closed'));
    try {
      validate(batch);
    } catch (err) {
      return Promise.reject(err);
    }
    if (batch.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ kind: 'append', batch, resolve, reject });
      this.kick();
    });
  }

  delete(series: number, from: number, to: number): Promise<number> {
    return this.task(() => this.deleteNow(series, from, to));
  }

  compact(): Promise<void> {
    return this.task(() => this.compactNow());
  }

  private task<T>(run: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('value store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ kind: 'task', run, resolve: resolve as (v: unknown) => void, reject });
      this.kick();
    });
  }

  private kick(): void {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  /**
   * Takes the queue in order. Consecutive appends form one group (group commit). A group of pure
   * appends is written on a free writer connection and committed there while the next group is
   * already being written on another (DuckDB appends never conflict); a group with late rows, a
   * delete and a compaction wait for those commits and run alone on the primary connection.
   * Appends are answered in queue order, each once its own transaction committed.
   */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.kind === 'task') {
        this.queue.shift();
        await this.tail;
        try {
          head.resolve(await head.run());
        } catch (err) {
          head.reject(err);
        }
        continue;
      }
      const jobs = this.takeAppends();
      let plan: WritePlan;
      let batch: ValueBatch;
      try {
        batch = concatBatches(jobs.map((j) => j.batch));
        plan = this.plan(batch);
      } catch (err) {
        for (const j of jobs) j.reject(err);
        continue;
      }
      this.dirty = true;
      if (plan.lateSegs.length > 0) {
        await this.tail;
        const done = this.transaction(this.primary, () => this.writeRows(this.primary, batch, plan));
        this.answerInOrder(jobs, done);
        await this.tail;
        continue;
      }
      let written!: () => void;
      const body = new Promise<void>((resolve) => (written = resolve));
      const committed = this.writers.use((w) =>
        this.transaction(w, async () => {
          try {
            await this.writeRows(w, batch, plan);
          } finally {
            written();
          }
        }),
      );
      this.answerInOrder(jobs, committed);
      // The next group is written once this one's rows are handed over; its commit runs meanwhile.
      await Promise.race([body, committed.catch(() => undefined)]);
      if (this.extraPartials >= this.mergePartialsAfter) {
        await this.tail;
        await this.mergePartialRows();
      }
    }
  }

  /**
   * Live data appends a few values per series at a time, each append adding a partial row to the
   * series' current bucket; now and then those are merged into one row per bucket, in SQL, so the
   * aggregate table stays about one row per (series, hour). Runs alone on the primary connection.
   */
  private async mergePartialRows(): Promise<void> {
    const tSeries: number[] = [];
    const tBucket: number[] = [];
    let minBucket = Infinity;
    let maxBucket = -Infinity;
    for (const s of [...this.partialKeys.keys()].sort((a, b) => a - b)) {
      for (const b of this.partialKeys.get(s)!) {
        tSeries.push(s);
        tBucket.push(b);
        if (b < minBucket) minBucket = b;
        if (b > maxBucket) maxBucket = b;
      }
    }
    this.partialKeys.clear();
    this.extraPartials = 0;
    if (tSeries.length === 0) return;
    const bounds = [tSeries[0]!, tSeries[tSeries.length - 1]!, minBucket, maxBucket];
    try {
      await this.transaction(this.primary, async () => {
        await this.primary.query(SQL.clearTouched);
        await this.appendTemp('touched', [INTEGER, BIGINT], [tSeries, tBucket]);
        await this.primary.query(MERGE_TOUCHED.clear);
        await this.primary.query(MERGE_TOUCHED.merge, bounds);
        await this.primary.query(SQL.deleteTouchedBuckets, bounds);
        await this.primary.query(MERGE_TOUCHED.insert);
      });
    } catch {
      // Only tidiness is lost: buckets() merges partial rows itself, and compact() merges them all.
    }
  }

  /** Answers the jobs when `done` settles, but never before the jobs of earlier transactions. */
  private answerInOrder(jobs: AppendJob[], done: Promise<void>): void {
    const before = this.tail;
    this.tail = done.then(
      async () => {
        await before;
        for (const j of jobs) j.resolve();
      },
      async (err: unknown) => {
        await before;
        for (const j of jobs) j.reject(err);
      },
    );
  }

  /** The queued appends that fit into one transaction (at least one). */
  private takeAppends(): AppendJob[] {
    const taken: AppendJob[] = [];
    let values = 0;
    while (this.queue[0]?.kind === 'append' && (values === 0 || values + this.queue[0].batch.length <= this.maxGroupValues)) {
      const job = this.queue.shift() as AppendJob;
      taken.push(job);
      values += job.batch.length;
    }
    return taken;
  }

  /**
   * Sorts a group and splits its series into fresh (every row newer than the series' max ts: a pure
   * append, aggregated here) and late ones. Raises the max ts at once, so the next group is planned
   * against this one; should this one fail, a max ts above what is stored only sends later rows down
   * the late path, which is correct for any rows.
   */
  private plan(batch: ValueBatch): WritePlan {
    const rows = sortRows(batch);
    const { perm, segSeries, segStart, segEnd } = rows;
    const { ts } = batch;
    const plan: WritePlan = { rows, fresh: new BucketRows(), lateSegs: [], lateKnown: [] };
    for (let g = 0; g < segSeries.length; g++) {
      const s = segSeries[g]!;
      const known = this.maxTs.get(s);
      if (known !== undefined && ts[perm[segStart[g]!]!]! <= known) {
        plan.lateSegs.push(g);
        plan.lateKnown.push(known);
        // Its buckets are recomputed whole; a later append into the last one adds a partial row.
        this.lastBucket.set(s, Math.floor(Math.max(known, ts[perm[segEnd[g]! - 1]!]!) / H));
      } else {
        const before = plan.fresh.length;
        plan.fresh.addSeries(s, batch, perm, segStart[g]!, segEnd[g]!);
        if (plan.fresh.length > before) {
          // A second partial row for the bucket the series' last append ended in?
          const first = plan.fresh.bucket[before]!;
          const previous = this.lastBucket.get(s) ?? (known === undefined ? undefined : Math.floor(known / H));
          if (first === previous) {
            this.extraPartials++;
            let buckets = this.partialKeys.get(s);
            if (!buckets) this.partialKeys.set(s, (buckets = new Set()));
            buckets.add(first);
          }
          this.lastBucket.set(s, plan.fresh.bucket[plan.fresh.length - 1]!);
        }
      }
      const last = ts[perm[segEnd[g]! - 1]!]!;
      if (known === undefined || last > known) this.maxTs.set(s, last);
      const first = ts[perm[segStart[g]!]!]!;
      if (!(first >= this.minTs.get(s)!)) this.minTs.set(s, first);
    }
    return plan;
  }

  private async transaction<T>(w: Session, fn: () => Promise<T>): Promise<T> {
    await w.query('BEGIN TRANSACTION');
    try {
      const result = await fn();
      await w.query('COMMIT');
      return result;
    } catch (err) {
      w.dropAppenders();
      await w.exec('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /**
   * Writes a planned group inside an open transaction on w: late series first delete the rows they
   * replace (primary only), then every row is appended, fresh series get their partial aggregates
   * and late ones have their buckets recomputed from the raw rows.
   */
  private async writeRows(w: Session, batch: ValueBatch, plan: WritePlan): Promise<void> {
    const { rows, fresh, lateSegs, lateKnown } = plan;
    if (lateSegs.length > 0) await this.deleteReplaced(batch, rows, lateSegs, lateKnown);
    await this.appendRaw(w, batch, rows);
    if (fresh.length > 0) await this.appendBuckets(w, fresh);
    if (lateSegs.length > 0) await this.recomputeLateBuckets(batch, rows, lateSegs);
  }

  /** Deletes the stored rows that late rows (ts <= the series' max) replace. */
  private async deleteReplaced(batch: ValueBatch, rows: SortedRows, lateSegs: number[], lateKnown: number[]): Promise<void> {
    const { perm, segSeries, segStart, segEnd } = rows;
    const keySeries: number[] = [];
    const keyTs: number[] = [];
    let minTs = Infinity;
    let maxTs = -Infinity;
    for (let l = 0; l < lateSegs.length; l++) {
      const g = lateSegs[l]!;
      const s = segSeries[g]!;
      const known = lateKnown[l]!;
      for (let k = segStart[g]!; k < segEnd[g]!; k++) {
        const t = batch.ts[perm[k]!]!;
        if (t > known) break;
        keySeries.push(s);
        keyTs.push(t);
        if (t < minTs) minTs = t;
        if (t > maxTs) maxTs = t;
      }
    }
    await this.primary.query(SQL.clearLateKeys);
    await this.appendTemp('late_keys', [INTEGER, BIGINT], [keySeries, keyTs]);
    await this.primary.query(SQL.deleteReplaced, [segSeries[lateSegs[0]!]!, segSeries[lateSegs[lateSegs.length - 1]!]!, minTs, maxTs]);
  }

  /** Recomputes, from the raw rows, every bucket that a late series' rows fall in. */
  private async recomputeLateBuckets(batch: ValueBatch, rows: SortedRows, lateSegs: number[]): Promise<void> {
    const { perm, segSeries, segStart, segEnd } = rows;
    const tSeries: number[] = [];
    const tBucket: number[] = [];
    let minBucket = Infinity;
    let maxBucket = -Infinity;
    for (const g of lateSegs) {
      let last = NaN;
      for (let k = segStart[g]!; k < segEnd[g]!; k++) {
        const b = Math.floor(batch.ts[perm[k]!]! / H);
        if (b === last) continue;
        tSeries.push(segSeries[g]!);
        tBucket.push(b);
        last = b;
        if (b < minBucket) minBucket = b;
        if (b > maxBucket) maxBucket = b;
      }
    }
    await this.primary.query(SQL.clearTouched);
    await this.appendTemp('touched', [INTEGER, BIGINT], [tSeries, tBucket]);
    await this.recomputeTouched(tSeries[0]!, tSeries[tSeries.length - 1]!, minBucket, maxBucket);
  }

  /** Replaces the bucket rows listed in `touched` by aggregates of the raw rows. */
  private async recomputeTouched(minSeries: number, maxSeries: number, minBucket: number, maxBucket: number): Promise<void> {
    await this.primary.query(SQL.deleteTouchedBuckets, [minSeries, maxSeries, minBucket, maxBucket]);
    await this.primary.query(SQL.recomputeTouched, [minSeries, maxSeries, minBucket * H, (maxBucket + 1) * H]);
  }

  /** Appends the sorted rows to point_values through the DataChunk appender. */
  private async appendRaw(w: Session, batch: ValueBatch, rows: SortedRows): Promise<void> {
    const { perm, n } = rows;
    const { series, ts, value, text, annotation } = batch;
    const appender = await w.appender('point_values');
    const hasStrings = text !== null || annotation !== null;
    for (let off = 0; off < n; off += CHUNK_ROWS) {
      const m = Math.min(CHUNK_ROWS, n - off);
      let chunk = this.numericChunk;
      if (hasStrings) chunk = DuckDBDataChunk.create(RAW_TYPES, m);
      else if (chunk.rowCount !== m) chunk.rowCount = m;
      const vs = chunk.getColumnVector(0) as DuckDBIntegerVector;
      const vt = chunk.getColumnVector(1) as DuckDBBigIntVector;
      const vv = chunk.getColumnVector(2) as DuckDBDoubleVector;
      for (let j = 0; j < m; j++) {
        const i = perm[off + j]!;
        vs.setItem(j, series[i]!);
        const v = value[i]!;
        vv.setItem(j, v === v ? v : null);
      }
      setBigIntColumn(vt, m, (j) => ts[perm[off + j]!]!);
      vs.flush();
      vt.flush();
      vv.flush();
      if (hasStrings) {
        const vx = chunk.getColumnVector(3) as DuckDBVarCharVector;
        const va = chunk.getColumnVector(4) as DuckDBVarCharVector;
        for (let j = 0; j < m; j++) {
          const i = perm[off + j]!;
          vx.setItem(j, text?.[i] ?? null);
          va.setItem(j, annotation?.[i] ?? null);
        }
        vx.flush();
        va.flush();
      }
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  }

  private async appendBuckets(w: Session, b: BucketRows): Promise<void> {
    const columns = [b.series, b.bucket, b.count, b.sum, b.min, b.max, b.firstTs, b.firstValue, b.lastTs, b.lastValue, b.inner];
    appendColumns(await w.appender('point_buckets'), this.bucketChunk, BUCKET_TYPES, columns);
  }

  /** Appends numeric columns to a temporary table of the writer. */
  private async appendTemp(table: string, types: DuckDBType[], columns: number[][]): Promise<void> {
    const appender = await this.primary.conn.createAppender(table, 'main', 'temp');
    try {
      appendColumns(appender, DuckDBDataChunk.create(types, CHUNK_ROWS), types, columns);
    } finally {
      appender.closeSync();
    }
  }

  private async deleteNow(series: number, from: number, to: number): Promise<number> {
    const lo = clampTs(from);
    const hi = clampTs(to);
    if (lo >= hi) return 0;
    const firstBucket = Math.floor(lo / H);
    const lastBucket = Math.floor((hi - 1) / H);
    const deleted = await this.transaction(this.primary, async () => {
      const reader = await this.primary.query(SQL.deleteRange, [series, lo, hi]);
      const count = reader.rowsChanged;
      if (count === 0) return 0;
      // Buckets inside the range are gone; the two edge buckets may keep rows outside it.
      await this.primary.query(SQL.deleteBucketRange, [series, firstBucket, lastBucket]);
      await this.primary.query(SQL.clearTouched);
      await this.primary.query(SQL.insertTouched, [series, firstBucket]);
      if (lastBucket !== firstBucket) await this.primary.query(SQL.insertTouched, [series, lastBucket]);
      await this.recomputeTouched(series, series, firstBucket, lastBucket);
      return count;
    });
    if (deleted > 0) {
      this.dirty = true;
      const known = this.maxTs.get(series);
      if (known !== undefined && known >= lo && known < hi) {
        const [[max]] = (await this.primary.query(SQL.seriesMaxTs, [series])).getRows() as [[number | null]];
        if (max === null) this.maxTs.delete(series);
        else this.maxTs.set(series, max);
      }
    }
    return deleted;
  }

  private async compactNow(): Promise<void> {
    if (this.dirty) {
      await this.transaction(this.primary, async () => {
        for (const sql of COMPACT) await this.primary.exec(sql);
      });
      // Readers' prepared statements re-bind to the new tables by themselves (DuckDB checks the
      // catalog at execution); the writers' appenders are made again.
      this.writers.forget();
      this.dirty = false;
      this.partialKeys.clear();
      this.extraPartials = 0;
    }
    await this.primary.exec('CHECKPOINT');
  }

  // ---- reads: the reader pool ----

  async latest(series: number, limit: number): Promise<StoredValue[]> {
    const n = Math.max(0, Math.floor(limit));
    const newest = this.maxTs.get(series);
    if (n === 0 || newest === undefined) return [];
    return this.newestUpTo(series, newest, n);
  }

  async valueAt(series: number, t: number): Promise<StoredValue | undefined> {
    if (Number.isNaN(t)) return undefined;
    const oldest = this.minTs.get(series);
    const newest = this.maxTs.get(series);
    if (oldest === undefined || newest === undefined || t < oldest) return undefined;
    return (await this.newestUpTo(series, Math.min(newest, Math.floor(t)), 1))[0];
  }

  /**
   * The n newest values with ts <= t, newest first. Looks back one hour, then 16 times further
   * each time, until it has n or has reached the series' oldest value: a window on ts lets zone
   * maps skip row groups, where an unbounded top-n reads every row group of the series.
   */
  private async newestUpTo(series: number, t: number, n: number): Promise<StoredValue[]> {
    const oldest = this.minTs.get(series) ?? -MAX_TS;
    for (let span = H; ; span *= 16) {
      const from = Math.max(oldest, t - span + 1);
      const rows = await this.readers.use(async (s) =>
        n === 1 ? toNewestOne(await s.query(SQL.newestOne, [series, from, t])) : toStoredValues(await s.query(SQL.newest, [series, from, t, n])),
      );
      if (rows.length === n || from === oldest) return rows;
    }
  }

  /**
   * Pages of up to pageSize values, each read from a window of ts sized to hold about one page (from
   * the density seen so far; a window that comes back short grows fourfold), so no query sorts the
   * rest of the range.
   */
  async *range(series: number, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]> {
    const oldest = this.minTs.get(series);
    const newest = this.maxTs.get(series);
    if (oldest === undefined || newest === undefined) return;
    let lo = Math.max(clampTs(from), oldest);
    const hi = Math.min(clampTs(to), newest + 1);
    let left = limit === undefined ? Infinity : Math.max(0, Math.floor(limit));
    let span = this.pageSize * MIN_SPACING_GUESS;
    while (lo < hi && left > 0) {
      const want = Math.min(this.pageSize, left);
      const end = Math.min(hi, lo + span);
      const page = await this.readers.use(async (s) => toStoredValues(await s.query(SQL.oldest, [series, lo, end, want])));
      if (page.length > 0) yield page;
      left -= page.length;
      if (page.length === want) {
        const next = page[page.length - 1]!.ts + 1;
        span = Math.max(1, Math.ceil((next - lo) * 1.25));
        lo = next;
      } else {
        lo = end;
        span *= 4;
      }
    }
  }

  async buckets(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    const lo = Math.ceil(clampTs(from) / H);
    const hi = Math.ceil(clampTs(to) / H);
    if (lo >= hi) return [];
    return this.readers.use(async (s) => readBuckets(await s.run(SQL.buckets, [series, lo, hi])));
  }

  async ping(): Promise<void> {
    await this.readers.use((s) => s.query(SQL.ping));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.draining) await this.draining;
    await this.tail;
    await this.mergePartialRows();
    try {
      this.writers.forget();
      await this.primary.exec('CHECKPOINT');
    } finally {
      await this.readers.close();
      await this.writers.close();
      this.instance.closeSync();
      this.onClose();
    }
  }
}

/** Files open in this process: DuckDB would let a second instance open one and both write it. */
const openFiles = new Set<string>();

/** Opens (creating when absent) `values.duckdb` under dir. One store per file per process. */
export async function openDuckDbStore(dir: string, options: DuckDbStoreOptions = {}): Promise<DuckDbValueStore> {
  const file = resolve(dir, VALUES_FILE);
  if (openFiles.has(file)) throw new Error(`${file} is already open in this process`);
  openFiles.add(file);
  try {
    return await open(dir, file, options, () => openFiles.delete(file));
  } catch (err) {
    openFiles.delete(file);
    throw err;
  }
}

async function open(dir: string, file: string, options: DuckDbStoreOptions, onClose: () => void): Promise<DuckDbValueStore> {
  await mkdir(dir, { recursive: true });
  const config: Record<string, string> = {};
  if (options.threads !== undefined) config.threads = String(options.threads);
  if (options.memoryLimit !== undefined) config.memory_limit = options.memoryLimit;
  if (options.checkpointThreshold !== undefined) config.checkpoint_threshold = options.checkpointThreshold;
  const instance = await DuckDBInstance.create(file, config);
  const sessions: Session[] = [];
  const connect = async () => {
    const s = new Session(await instance.connect());
    sessions.push(s);
    return s;
  };
  try {
    const primary = await connect();
    for (const sql of SCHEMA) await primary.exec(sql);
    await primary.exec('CREATE TEMP TABLE late_keys (series_id INTEGER, ts BIGINT)');
    await primary.exec('CREATE TEMP TABLE touched (series_id INTEGER, bucket BIGINT)');
    await primary.exec('CREATE TEMP TABLE merged_buckets AS SELECT * FROM point_buckets LIMIT 0');
    const minTs = new Map<number, number>();
    const maxTs = new Map<number, number>();
    for (const [s, min, max] of (await primary.query(SQL.tsBounds)).getRows() as [number, number, number][]) {
      minTs.set(s, min);
      maxTs.set(s, max);
    }
    const writers = [primary];
    while (writers.length < Math.max(1, options.writers ?? 2)) writers.push(await connect());
    const readers: Session[] = [];
    while (readers.length < Math.max(1, options.readers ?? 4)) {
      const reader = await connect();
      // DuckDB 1.5 answers a small top-n by scanning twice ("late materialization"); on a window of
      // one series one scan is several times faster.
      await reader.exec('SET late_materialization_max_rows = 0').catch(() => undefined);
      readers.push(reader);
    }
    return new DuckDbStore({ instance, primary, writers: new Pool(writers), readers: new Pool(readers), maxTs, minTs, options, onClose });
  } catch (err) {
    for (const s of sessions) s.close();
    instance.closeSync();
    throw err;
  }
}
