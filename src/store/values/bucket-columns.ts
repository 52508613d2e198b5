// Hourly partial aggregates of one series column by column: a Float64Array per field, ascending by
// bucket start. The rollup engine folds a year of them (8,760) per request on the hot path; as
// BucketAggregate objects every double field is a heap number of its own (pointer compression), so
// each field read chases a pointer, where a column is read in order.
//
// A view (view()) shares the columns' memory. Whoever appends to the columns after lending a view
// gets fresh memory first (copy on write), so a view never changes under its reader; truncate() only
// shortens the length and writes nothing.
import type { BucketAggregate } from './types.js';

export class SeriesBuckets {
  length: number;
  start: Float64Array;
  count: Float64Array;
  sum: Float64Array;
  min: Float64Array;
  max: Float64Array;
  firstTs: Float64Array;
  firstValue: Float64Array;
  lastTs: Float64Array;
  lastValue: Float64Array;
  innerIntegral: Float64Array;
  /** A view of these columns' memory is out: the next push() copies them first. */
  private lent = false;

  constructor(capacity = 0) {
    this.length = 0;
    this.start = new Float64Array(capacity);
    this.count = new Float64Array(capacity);
    this.sum = new Float64Array(capacity);
    this.min = new Float64Array(capacity);
    this.max = new Float64Array(capacity);
    this.firstTs = new Float64Array(capacity);
    this.firstValue = new Float64Array(capacity);
    this.lastTs = new Float64Array(capacity);
    this.lastValue = new Float64Array(capacity);
    this.innerIntegral = new Float64Array(capacity);
  }

  static from(rows: readonly BucketAggregate[]): SeriesBuckets {
    const out = new SeriesBuckets(rows.length);
    for (const b of rows) out.push(b.start, b.count, b.sum, b.min, b.max, b.firstTs, b.firstValue, b.lastTs, b.lastValue, b.innerIntegral);
    return out;
  }

  /** Room the columns have before push() must grow them. */
  get capacity(): number {
    return this.start.length;
  }

  push(
    start: number,
    count: number,
    sum: number,
    min: number,
    max: number,
    firstTs: number,
    firstValue: number,
    lastTs: number,
    lastValue: number,
    innerIntegral: number,
  ): void {
    const i = this.length;
    if (this.lent || i === this.capacity) this.reallocate(i === this.capacity ? Math.max(16, i * 2) : this.capacity);
    this.start[i] = start;
    this.count[i] = count;
    this.sum[i] = sum;
    this.min[i] = min;
    this.max[i] = max;
    this.firstTs[i] = firstTs;
    this.firstValue[i] = firstValue;
    this.lastTs[i] = lastTs;
    this.lastValue[i] = lastValue;
    this.innerIntegral[i] = innerIntegral;
    this.length = i + 1;
  }

  /**
   * A partial row of one bucket, in (start, firstTs) order: merged into the last row when that is
   * the same bucket (as BucketMerger does in aggregates.ts, with the same arithmetic), else pushed.
   */
  merge(
    start: number,
    count: number,
    sum: number,
    min: number,
    max: number,
    firstTs: number,
    firstValue: number,
    lastTs: number,
    lastValue: number,
    innerIntegral: number,
  ): void {
    const i = this.length - 1;
    if (i < 0 || this.start[i] !== start) {
      this.push(start, count, sum, min, max, firstTs, firstValue, lastTs, lastValue, innerIntegral);
      return;
    }
    if (this.lent) this.reallocate(this.capacity);
    this.innerIntegral[i] = this.innerIntegral[i]! + (this.lastValue[i]! * (firstTs - this.lastTs[i]!) + innerIntegral);
    this.count[i] = this.count[i]! + count;
    this.sum[i] = this.sum[i]! + sum;
    if (min < this.min[i]!) this.min[i] = min;
    if (max > this.max[i]!) this.max[i] = max;
    this.lastTs[i] = lastTs;
    this.lastValue[i] = lastValue;
  }

  /** Appends rows [lo, hi) of `other`. */
  append(other: SeriesBuckets, lo = 0, hi = other.length): void {
    for (let i = lo; i < hi; i++) {
      this.push(
        other.start[i]!,
        other.count[i]!,
        other.sum[i]!,
        other.min[i]!,
        other.max[i]!,
        other.firstTs[i]!,
        other.firstValue[i]!,
        other.lastTs[i]!,
        other.lastValue[i]!,
        other.innerIntegral[i]!,
      );
    }
  }

  /** Rows [lo, hi) sharing this memory (see the top of the file). */
  view(lo = 0, hi = this.length): SeriesBuckets {
    const v = new SeriesBuckets(0);
    v.length = Math.max(0, hi - lo);
    v.start = this.start.subarray(lo, hi);
    v.count = this.count.subarray(lo, hi);
    v.sum = this.sum.subarray(lo, hi);
    v.min = this.min.subarray(lo, hi);
    v.max = this.max.subarray(lo, hi);
    v.firstTs = this.firstTs.subarray(lo, hi);
    v.firstValue = this.firstValue.subarray(lo, hi);
    v.lastTs = this.lastTs.subarray(lo, hi);
    v.lastValue = this.lastValue.subarray(lo, hi);
    v.innerIntegral = this.innerIntegral.subarray(lo, hi);
    // The view's own pushes must not write into this memory either.
    v.lent = true;
    this.lent = true;
    return v;
  }

  /** Keeps the first n rows. */
  truncate(n: number): void {
    if (n < this.length) this.length = n;
  }

  /** Index of the first row whose bucket starts at or after `start` (ms). */
  firstAtOrAfter(start: number): number {
    const starts = this.start;
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid]! < start) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Row i as an object. */
  at(i: number): BucketAggregate {
    return {
      start: this.start[i]!,
      count: this.count[i]!,
      sum: this.sum[i]!,
      min: this.min[i]!,
      max: this.max[i]!,
      firstTs: this.firstTs[i]!,
      firstValue: this.firstValue[i]!,
      lastTs: this.lastTs[i]!,
      lastValue: this.lastValue[i]!,
      innerIntegral: this.innerIntegral[i]!,
    };
  }

  /** Every row as an object (PointValueStore.buckets()' form). */
  toAggregates(): BucketAggregate[] {
    const out = new Array<BucketAggregate>(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.at(i);
    return out;
  }

  private reallocate(capacity: number): void {
    const n = this.length;
    const grow = (column: Float64Array) => {
      const next = new Float64Array(capacity);
      next.set(column.subarray(0, n));
      return next;
    };
    this.start = grow(this.start);
    this.count = grow(this.count);
    this.sum = grow(this.sum);
    this.min = grow(this.min);
    this.max = grow(this.max);
    this.firstTs = grow(this.firstTs);
    this.firstValue = grow(this.firstValue);
    this.lastTs = grow(this.lastTs);
    this.lastValue = grow(this.lastValue);
    this.innerIntegral = grow(this.innerIntegral);
    this.lent = false;
  }
}
