// The PostgreSQL store: the write transaction (partitions, series locks, COPY, upsert, bucket
// recompute), delete, and the reads. What the tables hold and why: ./index.ts.
//
// Writes (append, delete) go through the write queue (../write-queue.ts), in order, one transaction at
// a time. Appends queued while a transaction runs share the next one (group commit). An append resolves
// after its transaction committed: durable (PostgreSQL flushed its WAL) and visible to every later read,
// of this instance or another.
import type { Logger } from 'pino';
import type pg from 'pg';
import { bucketCeil, bucketOf } from '../aggregates.js';
import { MAX_TS, sortRows, validate, type SortedRows } from '../sort.js';
import { BUCKET_MS, type BucketAggregate, type PointValueStore, type StoredValue, type ValueBatch } from '../types.js';
import { pgRead, pgTransaction } from '../../pg-clients.js';
import { WriteQueue } from '../write-queue.js';
import { copyIn, encodeBinaryCopy } from './copy.js';
import { createPartitionSql, monthOf, monthOfPartition, monthsOf, monthStart, partitionName, type MonthIndex } from './partitions.js';
import { CREATE_STAGE, RAW, SQL, type HourlyRow, type ValueRow } from './sql.js';

export interface PostgresStoreOptions {
  /** Values per batch yielded by range() (default 10,000). */
  pageSize?: number;
  /** Most values one write transaction takes from the queue (default 200,000; a larger append goes alone). */
  maxGroupValues?: number;
  /** How often the current and next months' partitions are made sure of (default hourly). */
  partitionCheckMs?: number;
}

export interface PostgresStoreInit {
  pool: pg.Pool;
  /** Advisory-lock namespaces (first key) of this schema's series locks and of its partition DDL. */
  seriesLockKey: number;
  partitionLockKey: number;
  /** Names of the partitions that exist at open. */
  partitions: Set<string>;
  options: PostgresStoreOptions;
  log: Logger;
  /** Told of every durable append (its value count); never throws. */
  appended: (values: number) => void;
}

/** Times a read is sent when the connections it went on were lost (the pool's idle ones may all be gone at once). */
const READ_ATTEMPTS = 3;

/** Clamps a query bound into the stored timestamp range, so it binds as a bigint (as DuckDB does). */
function clampTs(t: number): number {
  if (Number.isNaN(t)) throw new RangeError('timestamp bound is NaN');
  return Math.max(-MAX_TS - 1, Math.min(MAX_TS + 1, Math.ceil(t)));
}

function toStored(r: ValueRow): StoredValue {
  return { ts: r.ts, value: r.value, text: r.text, annotation: r.annotation };
}

/** The (series, bucket) pairs a group's rows fall in, series ascending, for SQL.recompute. */
function touchedBuckets(batch: ValueBatch, rows: SortedRows): { series: number[]; bucket: number[] } {
  const { perm, segSeries, segStart, segEnd } = rows;
  const series: number[] = [];
  const bucket: number[] = [];
  for (let g = 0; g < segSeries.length; g++) {
    let last = NaN;
    for (let k = segStart[g]!; k < segEnd[g]!; k++) {
      const b = bucketOf(batch.ts[perm[k]!]!);
      if (b === last) continue; // rows are in ts order: a bucket's rows are adjacent
      series.push(segSeries[g]!);
      bucket.push(b);
      last = b;
    }
  }
  return { series, bucket };
}

export class PostgresStore implements PointValueStore {
  readonly engine = 'postgres' as const;
  private readonly writes: WriteQueue;
  private closed = false;
  /** Connections that have made the staging table (a temporary table lives as long as its connection). */
  private readonly staged = new WeakSet<pg.PoolClient>();
  private readonly pool: pg.Pool;
  private readonly seriesLockKey: number;
  private readonly partitionLockKey: number;
  /** Partitions known to exist; another instance may have made more, which CREATE … IF NOT EXISTS allows for. */
  private readonly partitions: Set<string>;
  private readonly pageSize: number;
  private readonly log: Logger;
  private readonly appended: (values: number) => void;
  private readonly timer: NodeJS.Timeout;

  constructor(init: PostgresStoreInit) {
    this.pool = init.pool;
    this.seriesLockKey = init.seriesLockKey;
    this.partitionLockKey = init.partitionLockKey;
    this.partitions = init.partitions;
    this.log = init.log;
    this.appended = init.appended;
    this.pageSize = init.options.pageSize ?? 10_000;
    this.writes = new WriteQueue({
      name: 'value store',
      writeGroup: (batch) => this.writeGroup(batch),
      maxGroupValues: init.options.maxGroupValues ?? 200_000,
      onWritten: this.appended,
    });
    // Months are made ahead of the data, so live writes never wait on DDL (which locks the parent table).
    this.timer = setInterval(() => {
      this.ensureCurrentMonths().catch((err: unknown) => this.log.warn({ err }, 'creating the next month partitions failed; appends create them on demand'));
    }, init.options.partitionCheckMs ?? 3_600_000);
    this.timer.unref();
  }

  /** The current and next months' partitions. */
  async ensureCurrentMonths(): Promise<void> {
    const now = monthOf(Date.now());
    await this.ensurePartitions(new Set([now, now + 1]));
  }

  /**
   * Creates the partitions of `months` that are not known to exist, in a transaction of its own,
   * serialised by an advisory lock: two CREATE TABLE IF NOT EXISTS of one name running at once can
   * still collide in the catalog, and the DDL's lock on the parent should not be held by a write.
   */
  async ensurePartitions(months: Set<MonthIndex>): Promise<void> {
    const missing = [...months].filter((m) => !this.partitions.has(partitionName(RAW, m))).sort((a, b) => a - b);
    if (missing.length === 0) return;
    await this.transaction(async (c) => {
      await c.query(SQL.lockPartitions, [this.partitionLockKey]);
      for (const m of missing) await c.query(createPartitionSql(RAW, m));
    });
    for (const m of missing) this.partitions.add(partitionName(RAW, m));
  }

  // ---- writes: one queue ----

  append(batch: ValueBatch): Promise<void> {
    if (this.closed) return Promise.reject(new Error('value store is closed'));
    try {
      validate(batch);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.writes.write(batch);
  }

  delete(series: number, from: number, to: number): Promise<number> {
    if (this.closed) return Promise.reject(new Error('value store is closed'));
    return this.writes.exclusive(() => this.deleteNow(series, from, to));
  }

  /**
   * One transaction: lock the group's series, COPY its rows (sorted, one per key: the last written
   * wins) into the stage, insert them (upsert when some may replace stored rows), and recompute the hours they touch from the raw rows. The
   * locks make a concurrent writer of the same series (this instance's delete, another instance)
   * wait for this commit, so its recompute includes these rows, and this one includes its rows.
   */
  private async writeGroup(batch: ValueBatch): Promise<void> {
    const rows = sortRows(batch);
    await this.ensurePartitions(monthsOf(batch.ts, batch.length));
    const touched = touchedBuckets(batch, rows);
    const chunks = encodeBinaryCopy(batch, rows);
    let staging: pg.PoolClient | undefined;
    await this.transaction(async (c) => {
      staging = undefined;
      await c.query(SQL.lockSeries, [this.seriesLockKey, rows.segSeries]);
      if (!this.staged.has(c)) {
        await c.query(CREATE_STAGE);
        staging = c;
      }
      await copyIn(c, SQL.copyStage, chunks);
      const firstTs = rows.segStart.map((k) => batch.ts[rows.perm[k]!]!);
      const { rows: probe } = await c.query<{ late: boolean }>(SQL.anyLate, [rows.segSeries, firstTs]);
      await c.query(probe[0]?.late === false ? SQL.insert : SQL.upsert);
      await c.query(SQL.recompute, [touched.series, touched.bucket]);
    });
    // Only a committed CREATE leaves the table there: a rolled-back one makes it again next time.
    if (staging) this.staged.add(staging);
  }

  /**
   * Every write transaction only sends statements, so one whose connection was lost before COMMIT
   * (nothing committed) runs once more on a new connection; after COMMIT was sent the loss is thrown.
   */
  private transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return pgTransaction(this.pool, fn, { rerunnable: true });
  }

  private async deleteNow(series: number, from: number, to: number): Promise<number> {
    const lo = clampTs(from);
    const hi = clampTs(to);
    if (lo >= hi) return 0;
    const first = bucketOf(lo);
    const last = bucketOf(hi - 1);
    return this.transaction(async (c) => {
      await c.query(SQL.lockSeries, [this.seriesLockKey, [series]]);
      const { rowCount } = await c.query(SQL.deleteRange, [series, lo, hi]);
      const count = rowCount ?? 0;
      if (count === 0) return 0;
      // Buckets inside the range are gone; the two edge buckets may keep rows outside it.
      await c.query(SQL.deleteInnerBuckets, [series, first, last]);
      const edges = first === last ? [first] : [first, last];
      await c.query(SQL.recompute, [edges.map(() => series), edges]);
      return count;
    });
  }

  /**
   * Drops the month partitions that end by `before` (their values are older than it for every
   * series), one transaction each, with their hourly rows; returns how many values went.
   */
  async dropBefore(before: number): Promise<number> {
    const months = [...this.partitions]
      .map((name) => monthOfPartition(RAW, name))
      .filter((m): m is MonthIndex => m !== undefined && monthStart(m + 1) <= before)
      .sort((a, b) => a - b);
    let dropped = 0;
    for (const m of months) dropped += await this.dropMonth(m);
    return dropped;
  }

  private async dropMonth(m: MonthIndex): Promise<number> {
    const name = partitionName(RAW, m);
    const count = await this.transaction(async (c) => {
      await c.query(SQL.lockPartitions, [this.partitionLockKey]);
      const { rows } = await c.query<{ n: string }>(`SELECT count(*) AS n FROM "${name}"`);
      await c.query(`DROP TABLE IF EXISTS "${name}"`);
      await c.query(SQL.deleteBucketsBetween, [monthStart(m) / BUCKET_MS, monthStart(m + 1) / BUCKET_MS]);
      return Number(rows[0]?.n ?? 0);
    });
    this.partitions.delete(name);
    return count;
  }

  // ---- reads: the pool ----

  async seriesBefore(before: number): Promise<number[]> {
    const { rows } = await this.read<{ series: number }>(SQL.seriesBefore, [clampTs(before)]);
    return rows.map((r) => r.series);
  }

  /** A read, sent again on another connection when the server had ended the one it went on. */
  private read<T extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<T>> {
    return pgRead<T>(this.pool, { text, values }, READ_ATTEMPTS);
  }

  async latest(series: number, limit: number): Promise<StoredValue[]> {
    const n = Math.max(0, Math.floor(limit));
    if (n === 0) return [];
    const { rows } = await this.read<ValueRow>(SQL.latest, [series, n]);
    return rows.map(toStored);
  }

  async valueAt(series: number, t: number): Promise<StoredValue | undefined> {
    if (Number.isNaN(t)) return undefined;
    const { rows } = await this.read<ValueRow>(SQL.valueAt, [series, clampTs(Math.floor(t))]);
    return rows[0] && toStored(rows[0]);
  }

  /** Keyset pages: each starts just after the last ts of the one before, so none re-reads or sorts the rest. */
  async *range(series: number, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]> {
    let lo = clampTs(from);
    const hi = clampTs(to);
    let left = limit === undefined ? Infinity : Math.max(0, Math.floor(limit));
    while (lo < hi && left > 0) {
      const want = Math.min(this.pageSize, left);
      const { rows } = await this.read<ValueRow>(SQL.range, [series, lo, hi, want]);
      if (rows.length > 0) yield rows.map(toStored);
      if (rows.length < want) return;
      left -= rows.length;
      lo = rows[rows.length - 1]!.ts + 1;
    }
  }

  async buckets(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    const lo = bucketCeil(clampTs(from));
    const hi = bucketCeil(clampTs(to));
    if (lo >= hi) return [];
    const { rows } = await this.read<HourlyRow>(SQL.buckets, [series, lo, hi]);
    return rows.map((r) => ({
      start: r.bucket * BUCKET_MS,
      count: r.count,
      sum: r.sum,
      min: r.min,
      max: r.max,
      firstTs: r.first_ts,
      firstValue: r.first_value,
      lastTs: r.last_ts,
      lastValue: r.last_value,
      innerIntegral: r.inner_integral,
    }));
  }

  async ping(): Promise<void> {
    await this.pool.query(SQL.ping);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.writes.close();
    await this.pool.end();
  }
}
