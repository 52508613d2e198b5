// The DuckDB store: the write paths (pure append, late rows, delete, compaction) and the reads. What
// the tables hold and why: ./index.ts.
//
// Writes (append, delete, compact) go through the write queue (../write-queue.ts), in order, one
// transaction at a time on the primary connection. Queued appends share a transaction (group commit);
// a delete and a compaction are exclusive tasks. (A second writer connection, committing one group while
// the next was written, was measured through the write buffer with two appends in flight: no more values/s
// than one, and event-loop stalls of seconds instead of a few hundred ms; so there is one.) Reads use a
// pool of other connections and see committed transactions only. An append resolves after its commit:
// durable, since DuckDB writes and syncs its WAL at commit, and visible to every later read.
import { DuckDBDataChunk, type DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from 'pino';
import { BucketColumns, BucketFolder, bucketCeil, bucketOf } from '../aggregates.js';
import { TimeSlice } from '../../../core/time-slice.js';
import type { ValueStoreHooks } from '../hooks.js';
import { BUCKET_MS, type BucketAggregate, type PointValueStore, type StoredValue, type ValueBatch } from '../types.js';
import { WriteQueue } from '../write-queue.js';
import { appendColumns, appendRawRows, CHUNK_ROWS, createNumericChunk } from './chunks.js';
import { PartialRows } from './partial-rows.js';
import { SeriesBuckets } from '../bucket-columns.js';
import { readBuckets, readWindow, toNewestOne, toStoredValues } from './results.js';
import type { Pool, Session } from './sessions.js';
import { MAX_TS, sortRows, validate, type SortedRows } from '../sort.js';
import { BUCKET_TYPES, COMPACT, KEY_TYPES, MERGE_TOUCHED, SQL } from './sql.js';
import { TouchedBuckets } from './touched-buckets.js';

export interface DuckDbStoreOptions extends ValueStoreHooks {
  /** Reader connections (default 4). */
  readers?: number;
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

const H = BUCKET_MS;
/** Rows folded into bucket aggregates between looks at the time slice. */
const FOLD_SLICE_ROWS = 16_384;
/** range()'s first window assumes values about a minute apart; later windows follow the data. */
const MIN_SPACING_GUESS = 60_000;
/** A range() window aims at this share of a page, so that most windows hold less than one and are read unsorted. */
const WINDOW_FILL = 0.8;

/** Clamps a query bound into the stored timestamp range, so it binds as a BIGINT. */
function clampTs(t: number): number {
  if (Number.isNaN(t)) throw new RangeError('timestamp bound is NaN');
  return Math.max(-MAX_TS - 1, Math.min(MAX_TS + 1, Math.ceil(t)));
}

/** How a sorted group of rows is written. */
interface WritePlan {
  rows: SortedRows;
  /** Partial aggregates of the series whose rows are all newer than what is stored. */
  fresh: BucketColumns;
  /** Segments (indices into rows.seg*) of series with rows at or before their stored max ts... */
  lateSegs: number[];
  /** ...and that max ts, per late segment. */
  lateKnown: number[];
}

export interface DuckDbStoreInit {
  instance: DuckDBInstance;
  primary: Session;
  readers: Pool;
  maxTs: Map<number, number>;
  minTs: Map<number, number>;
  options: DuckDbStoreOptions;
  log: Logger;
  /** Told of every durable append (its value count); never throws. */
  appended: (values: number) => void;
  onClose: () => void;
}

export class DuckDbStore implements DuckDbValueStore {
  readonly engine = 'duckdb' as const;
  private readonly writes: WriteQueue;
  /** A merge of partial rows is queued (an exclusive task). */
  private mergeQueued = false;
  private closed = false;
  /** Rows written since the last compaction in this process (a reopened store counts as written). */
  private dirty = true;
  private readonly partials = new PartialRows();
  /** Numeric-only chunk reused for every raw append: its text and annotation columns stay NULL. */
  private readonly numericChunk = createNumericChunk();
  private readonly bucketChunk = DuckDBDataChunk.create(BUCKET_TYPES, CHUNK_ROWS);

  private readonly instance: DuckDBInstance;
  /** Runs every write; owns the temporary tables. */
  private readonly primary: Session;
  private readonly readers: Pool;
  /** The newest ts per series, stored or being written (never below what is stored). */
  private readonly maxTs: Map<number, number>;
  /** The oldest ts per series ever seen (never above what is stored). */
  private readonly minTs: Map<number, number>;
  private readonly pageSize: number;
  private readonly mergePartialsAfter: number;
  private readonly log: Logger;
  private readonly appended: (values: number) => void;
  private readonly onClose: () => void;

  constructor(init: DuckDbStoreInit) {
    this.instance = init.instance;
    this.primary = init.primary;
    this.readers = init.readers;
    this.maxTs = init.maxTs;
    this.minTs = init.minTs;
    this.log = init.log;
    this.appended = init.appended;
    this.onClose = init.onClose;
    this.pageSize = init.options.pageSize ?? 10_000;
    this.writes = new WriteQueue({
      name: 'value store',
      writeGroup: (batch) => this.writeGroup(batch),
      maxGroupValues: init.options.maxGroupValues ?? 200_000,
      onWritten: this.appended,
    });
    this.mergePartialsAfter = init.options.mergePartialsAfter ?? 10_000;
  }

  // ---- writes: the write queue ----

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
    return this.task(() => this.deleteNow(series, from, to));
  }

  compact(): Promise<void> {
    return this.task(() => this.compactNow());
  }

  private task<T>(run: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('value store is closed'));
    return this.writes.exclusive(run);
  }

  /** Writes one group of appends in a transaction (the write queue runs one at a time). */
  private async writeGroup(batch: ValueBatch): Promise<void> {
    const plan = await this.plan(batch);
    this.dirty = true;
    if (this.partials.extra >= this.mergePartialsAfter) this.queueMerge();
    await this.transaction(this.primary, () => this.writeRows(batch, plan));
  }

  /** Queues a merge of the partial rows after the writes queued so far (once; tidiness only). */
  private queueMerge(): void {
    if (this.mergeQueued || this.closed) return;
    this.mergeQueued = true;
    this.writes
      .exclusive(() => {
        this.mergeQueued = false;
        return this.mergePartialRows();
      })
      .catch(() => (this.mergeQueued = false));
  }

  /** Merges the partial rows of the buckets PartialRows lists, in SQL. Runs alone on the primary connection. */
  private async mergePartialRows(): Promise<void> {
    const touched = this.partials.take();
    if (touched.length === 0) return;
    const bounds = touched.bounds();
    try {
      await this.transaction(this.primary, async () => {
        await this.primary.query(SQL.clearTouched);
        await this.appendTemp('touched', touched.series, touched.bucket);
        await this.primary.query(MERGE_TOUCHED.clear);
        await this.primary.query(MERGE_TOUCHED.merge, bounds);
        await this.primary.query(SQL.deleteTouchedBuckets, bounds);
        await this.primary.query(MERGE_TOUCHED.insert);
      });
    } catch (err) {
      // Only tidiness is lost: buckets() merges partial rows itself, and compact() merges them all.
      this.log.warn({ err }, 'merging partial bucket rows failed; left to reads and compaction');
    }
  }

  /**
   * Sorts a group and splits its series into fresh (every row newer than the series' max ts: a pure
   * append, aggregated here) and late ones. Raises the max ts at once, so the next group is planned
   * against this one; should this one fail, a max ts above what is stored only sends later rows down
   * the late path, which is correct for any rows. Folding is the long part (up to ~100 ms for
   * 330,000 values here): it yields to the event loop between slices of rows.
   */
  private async plan(batch: ValueBatch): Promise<WritePlan> {
    const slice = new TimeSlice();
    const rows = sortRows(batch);
    const { perm, segSeries, segStart, segEnd } = rows;
    const { ts } = batch;
    const plan: WritePlan = { rows, fresh: new BucketColumns(), lateSegs: [], lateKnown: [] };
    const fresh = plan.fresh;
    for (let g = 0; g < segSeries.length; g++) {
      const s = segSeries[g]!;
      const known = this.maxTs.get(s);
      const first = ts[perm[segStart[g]!]!]!;
      const last = ts[perm[segEnd[g]! - 1]!]!;
      if (known !== undefined && first <= known) {
        plan.lateSegs.push(g);
        plan.lateKnown.push(known);
        this.partials.late(s, bucketOf(Math.max(known, last)));
      } else {
        const before = fresh.length;
        const folder = new BucketFolder(fresh, s);
        for (let k = segStart[g]!; k < segEnd[g]!; k += FOLD_SLICE_ROWS) {
          await slice.yieldIfExpired();
          folder.fold(ts, batch.value, perm, k, Math.min(segEnd[g]!, k + FOLD_SLICE_ROWS));
        }
        folder.finish();
        if (fresh.length > before) this.partials.fresh(s, fresh.bucket[before]!, fresh.bucket[fresh.length - 1]!, known);
      }
      if (known === undefined || last > known) this.maxTs.set(s, last);
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
   * Writes a planned group inside an open transaction: late series first delete the rows they
   * replace, then every row is appended, fresh series get their partial aggregates
   * and late ones have their buckets recomputed from the raw rows.
   */
  private async writeRows(batch: ValueBatch, plan: WritePlan): Promise<void> {
    const { rows, fresh, lateSegs, lateKnown } = plan;
    if (lateSegs.length > 0) await this.deleteReplaced(batch, rows, lateSegs, lateKnown);
    // The shared chunks are safe while this awaits: the write queue starts the next group after this one.
    await appendRawRows(await this.primary.appender('point_values'), this.numericChunk, batch, rows);
    if (fresh.length > 0) await appendColumns(await this.primary.appender('point_buckets'), this.bucketChunk, BUCKET_TYPES, fresh.columns());
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
    await this.appendTemp('late_keys', keySeries, keyTs);
    await this.primary.query(SQL.deleteReplaced, [segSeries[lateSegs[0]!]!, segSeries[lateSegs[lateSegs.length - 1]!]!, minTs, maxTs]);
  }

  /** Recomputes, from the raw rows, every bucket that a late series' rows fall in. */
  private async recomputeLateBuckets(batch: ValueBatch, rows: SortedRows, lateSegs: number[]): Promise<void> {
    const { perm, segSeries, segStart, segEnd } = rows;
    const touched = new TouchedBuckets();
    for (const g of lateSegs) {
      let last = NaN;
      for (let k = segStart[g]!; k < segEnd[g]!; k++) {
        const b = bucketOf(batch.ts[perm[k]!]!);
        if (b === last) continue;
        touched.add(segSeries[g]!, b);
        last = b;
      }
    }
    await this.primary.query(SQL.clearTouched);
    await this.appendTemp('touched', touched.series, touched.bucket);
    await this.recomputeTouched(...touched.bounds());
  }

  /** Replaces the bucket rows listed in `touched` by aggregates of the raw rows. */
  private async recomputeTouched(minSeries: number, maxSeries: number, minBucket: number, maxBucket: number): Promise<void> {
    await this.primary.query(SQL.deleteTouchedBuckets, [minSeries, maxSeries, minBucket, maxBucket]);
    await this.primary.query(SQL.recomputeTouched, [minSeries, maxSeries, minBucket * H, (maxBucket + 1) * H]);
  }

  /** Appends (series, ts or bucket) keys to a temporary table of the primary connection. */
  private async appendTemp(table: 'late_keys' | 'touched', series: number[], key: number[]): Promise<void> {
    const appender = await this.primary.conn.createAppender(table, 'main', 'temp');
    try {
      await appendColumns(appender, DuckDBDataChunk.create(KEY_TYPES, CHUNK_ROWS), KEY_TYPES, [series, key]);
    } finally {
      appender.closeSync();
    }
  }

  private async deleteNow(series: number, from: number, to: number): Promise<number> {
    const lo = clampTs(from);
    const hi = clampTs(to);
    if (lo >= hi) return 0;
    const firstBucket = bucketOf(lo);
    const lastBucket = bucketOf(hi - 1);
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
      // catalog at execution); the writer's appenders are made again.
      this.primary.forget();
      this.dirty = false;
      this.partials.clear();
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
   * Pages of up to pageSize values, each read from a window of ts sized to hold a little less than a
   * page (from the density seen so far), in table order and sorted in JS only when needed. A window
   * that holds more than the page asked for is read again sorted and cut in SQL (SQL.oldest), so no
   * query sorts the rest of the range and no page grows past its size.
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
      const window = await this.readers.use(async (s) => readWindow(await s.run(SQL.window, [series, lo, end, want + 1])));
      const whole = window.length <= want;
      const page = whole ? window : await this.readers.use(async (s) => toStoredValues(await s.query(SQL.oldest, [series, lo, end, want])));
      if (page.length > 0) yield page;
      left -= page.length;
      if (!whole) {
        const next = page[page.length - 1]!.ts + 1;
        span = Math.max(1, Math.ceil((next - lo) * WINDOW_FILL));
        lo = next;
      } else {
        // Aim the next window at WINDOW_FILL of a page by this one's density; at most fourfold wider.
        const scale = page.length === 0 ? 4 : Math.min(4, (WINDOW_FILL * this.pageSize) / page.length);
        span = Math.max(1, Math.ceil((end - lo) * scale));
        lo = end;
      }
    }
  }

  /** From the oldest ts seen per series (never above what is stored), without a query. */
  async seriesBefore(before: number): Promise<number[]> {
    const found: number[] = [];
    for (const [series, oldest] of this.minTs) if (oldest < before) found.push(series);
    return found;
  }

  async buckets(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    return (await this.bucketColumns(series, from, to)).toAggregates();
  }

  async bucketColumns(series: number, from: number, to: number): Promise<SeriesBuckets> {
    const lo = bucketCeil(clampTs(from));
    const hi = bucketCeil(clampTs(to));
    if (lo >= hi) return new SeriesBuckets();
    return this.readers.use(async (s) => readBuckets(await s.run(SQL.buckets, [series, lo, hi])));
  }

  async ping(): Promise<void> {
    await this.readers.use((s) => s.query(SQL.ping));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.close();
    await this.mergePartialRows();
    try {
      this.primary.forget();
      await this.primary.exec('CHECKPOINT');
    } finally {
      await this.readers.close();
      this.primary.close();
      this.instance.closeSync();
      this.onClose();
    }
  }
}
