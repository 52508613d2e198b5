// A read-through cache of hourly partial aggregates in front of any PointValueStore: the hot path
// (a trend chart asking for hourly averages over a year, again and again) then costs the periods it
// returns, not a query over 8,760 bucket rows.
//
// Per series it keeps one contiguous window of bucket indexes [lo, hi) and the merged aggregates of
// the non-empty buckets in it, ascending, as columns (bucket-columns.ts): a hit lends a view of them,
// copying nothing. A read inside the window is a slice; a read that starts in
// or at the window and ends past it (live data: the newest hours) fetches only the missing tail and
// extends the window; any other read replaces the window.
//
// Writes can only change buckets at or after the earliest timestamp they touch, so a write cuts the
// window of each series it touches down to the buckets before that one, both when it is submitted
// and when it has completed: a read that ran across either moment may have seen the old rows, and its
// result is dropped rather than stored (a per-series version counter tells). Whole windows are
// evicted least recently used first once the cached bucket count passes its bound.
import { bucketCeil, bucketOf } from './aggregates.js';
import { SeriesBuckets } from './bucket-columns.js';
import { BUCKET_MS, type BucketAggregate, type PointValueStore, type StoredValue, type ValueBatch } from './types.js';

export interface BucketCacheOptions {
  /** Most bucket aggregates held over all series (default 500,000: 80 bytes each as columns, 40 MB; a growing window may hold up to twice its rows' room). */
  maxBuckets?: number;
}

interface Window {
  lo: number;
  hi: number;
  /** Non-empty buckets with lo <= start / BUCKET_MS < hi, ascending. */
  rows: SeriesBuckets;
}

const DEFAULT_MAX_BUCKETS = 500_000;

export class BucketCachedStore implements PointValueStore {
  readonly engine: PointValueStore['engine'];
  readonly timeRange: PointValueStore['timeRange'];
  readonly appendConcurrency: PointValueStore['appendConcurrency'];
  /** Insertion order is recency order: a hit moves the series to the end. */
  private readonly windows = new Map<number, Window>();
  private readonly versions = new Map<number, number>();
  /** Bumped when every window is dropped, so reads in flight for any series are not stored. */
  private generation = 0;
  private readonly maxBuckets: number;
  private cachedBuckets = 0;

  constructor(
    readonly inner: PointValueStore,
    options: BucketCacheOptions = {},
  ) {
    this.engine = inner.engine;
    this.timeRange = inner.timeRange;
    this.appendConcurrency = inner.appendConcurrency;
    this.maxBuckets = Math.max(0, options.maxBuckets ?? DEFAULT_MAX_BUCKETS);
    if (inner.seriesBefore) this.seriesBefore = inner.seriesBefore.bind(inner);
    if (inner.dropBefore) {
      const drop = inner.dropBefore.bind(inner);
      // Every series may lose buckets: start afresh, also after (a read meanwhile may have cached some).
      this.dropBefore = async (before) => {
        this.clear();
        try {
          return await drop(before);
        } finally {
          this.clear();
        }
      };
    }
  }

  /** Cached bucket aggregates over all series (for tests and diagnostics). */
  get size(): number {
    return this.cachedBuckets;
  }

  async append(batch: ValueBatch): Promise<void> {
    const earliest = earliestPerSeries(batch);
    this.cut(earliest);
    try {
      await this.inner.append(batch);
    } finally {
      this.cut(earliest);
    }
  }

  async delete(series: number, from: number, to: number): Promise<number> {
    const touched = new Map([[series, from]]);
    this.cut(touched);
    try {
      return await this.inner.delete(series, from, to);
    } finally {
      this.cut(touched);
    }
  }

  changedElsewhere(earliest?: ReadonlyMap<number, number>): void {
    if (earliest) this.cut(earliest);
    else this.clear();
  }

  /** Defined only where the inner store drops partitions (see the constructor). */
  dropBefore?: (before: number) => Promise<number>;

  /** Defined only where the inner store has it (see the constructor). */
  seriesBefore?: (before: number) => Promise<number[]>;

  async compact(): Promise<void> {
    if (!this.inner.compact) return;
    // Merging partial rows changes no aggregate, but its sums may round differently: start afresh.
    this.clear();
    try {
      await this.inner.compact();
    } finally {
      this.clear();
    }
  }

  async buckets(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    return (await this.bucketColumns(series, from, to)).toAggregates();
  }

  async bucketColumns(series: number, from: number, to: number): Promise<SeriesBuckets> {
    const lo = bucketCeil(from);
    const hi = bucketCeil(to);
    if (!(lo < hi)) return new SeriesBuckets();
    const w = this.windows.get(series);
    if (w && w.lo <= lo && hi <= w.hi) {
      this.touch(series, w);
      return w.rows.view(w.rows.firstAtOrAfter(lo * BUCKET_MS), w.rows.firstAtOrAfter(hi * BUCKET_MS));
    }
    const version = this.version(series);
    if (w && w.lo <= lo && lo <= w.hi) {
      // Only the tail past the window is read; the window grows to cover the request.
      const head = w.rows.view(w.rows.firstAtOrAfter(lo * BUCKET_MS));
      const tail = await this.readInner(series, w.hi * BUCKET_MS, to);
      if (this.version(series) === version && this.windows.get(series) === w) this.extend(series, w, hi, tail);
      const out = new SeriesBuckets(head.length + tail.length);
      out.append(head);
      out.append(tail);
      return out;
    }
    const rows = await this.readInner(series, from, to);
    if (this.version(series) === version) this.install(series, { lo, hi, rows });
    return rows.view();
  }

  latest(series: number, limit: number): Promise<StoredValue[]> {
    return this.inner.latest(series, limit);
  }

  range(series: number, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]> {
    return this.inner.range(series, from, to, limit);
  }

  valueAt(series: number, t: number): Promise<StoredValue | undefined> {
    return this.inner.valueAt(series, t);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  async close(): Promise<void> {
    this.clear();
    await this.inner.close();
  }

  /** Changes whenever the series' cached buckets may have gone stale. */
  private version(series: number): string {
    return `${this.generation}:${this.versions.get(series) ?? 0}`;
  }

  /** Bumps each series' version and drops its cached buckets from the one holding `earliest` on. */
  private cut(earliest: ReadonlyMap<number, number>): void {
    for (const [series, t] of earliest) {
      this.versions.set(series, (this.versions.get(series) ?? 0) + 1);
      const w = this.windows.get(series);
      if (!w) continue;
      const b = bucketOf(t);
      if (b >= w.hi) continue;
      if (b <= w.lo) {
        this.drop(series, w);
        continue;
      }
      const keep = w.rows.firstAtOrAfter(b * BUCKET_MS);
      this.cachedBuckets -= w.rows.length - keep;
      w.rows.truncate(keep);
      w.hi = b;
    }
  }

  private install(series: number, w: Window): void {
    const old = this.windows.get(series);
    if (old) this.drop(series, old);
    if (w.rows.length > this.maxBuckets) return;
    this.windows.set(series, w);
    this.cachedBuckets += w.rows.length;
    this.evict();
  }

  /** The inner store's buckets, as columns. */
  private async readInner(series: number, from: number, to: number): Promise<SeriesBuckets> {
    if (this.inner.bucketColumns) return this.inner.bucketColumns(series, from, to);
    return SeriesBuckets.from(await this.inner.buckets(series, from, to));
  }

  private extend(series: number, w: Window, hi: number, tail: SeriesBuckets): void {
    w.rows.append(tail);
    w.hi = hi;
    this.cachedBuckets += tail.length;
    this.touch(series, w);
    this.evict();
  }

  private touch(series: number, w: Window): void {
    this.windows.delete(series);
    this.windows.set(series, w);
  }

  private drop(series: number, w: Window): void {
    this.windows.delete(series);
    this.cachedBuckets -= w.rows.length;
  }

  private evict(): void {
    for (const [series, w] of this.windows) {
      if (this.cachedBuckets <= this.maxBuckets) return;
      this.drop(series, w);
    }
  }

  private clear(): void {
    this.windows.clear();
    this.cachedBuckets = 0;
    this.generation++;
  }
}

/** The earliest timestamp of each series in a batch. */
function earliestPerSeries(batch: ValueBatch): Map<number, number> {
  const out = new Map<number, number>();
  const { series, ts, length } = batch;
  for (let i = 0; i < length; i++) {
    const s = series[i]!;
    const t = ts[i]!;
    const known = out.get(s);
    if (known === undefined || t < known) out.set(s, t);
  }
  return out;
}

export function withBucketCache(store: PointValueStore, options?: BucketCacheOptions): BucketCachedStore {
  return new BucketCachedStore(store, options);
}
