// Hourly partial aggregates (BucketAggregate): folding a series' values into them and merging the
// partial rows of one bucket. Every engine and the cache round, fold and merge through here, so a
// bucket means the same everywhere. Folding runs per value on the ingest path and merging per row
// on the read path: plain loops over typed arrays and numbers, no object per value.
import { BUCKET_MS, type BucketAggregate } from './types.js';

/** Index of the bucket holding ts: floor(ts / BUCKET_MS), before 1970 too. */
export function bucketOf(ts: number): number {
  return Math.floor(ts / BUCKET_MS);
}

/** Index of the first bucket starting at or after t: how a query bound is rounded. */
export function bucketCeil(t: number): number {
  return Math.ceil(t / BUCKET_MS);
}

/** Partial aggregates column by column, one row per (series, bucket) stretch folded. */
export class BucketColumns {
  length = 0;
  readonly series: number[] = [];
  /** Bucket index (bucketOf), not its start. */
  readonly bucket: number[] = [];
  readonly count: number[] = [];
  readonly sum: number[] = [];
  readonly min: number[] = [];
  readonly max: number[] = [];
  readonly firstTs: number[] = [];
  readonly firstValue: number[] = [];
  readonly lastTs: number[] = [];
  readonly lastValue: number[] = [];
  readonly inner: number[] = [];

  /** Every column, in this order: series, bucket, count, sum, min, max, firstTs, firstValue, lastTs, lastValue, inner. */
  columns(): number[][] {
    return [this.series, this.bucket, this.count, this.sum, this.min, this.max, this.firstTs, this.firstValue, this.lastTs, this.lastValue, this.inner];
  }

  push(
    series: number,
    bucket: number,
    count: number,
    sum: number,
    min: number,
    max: number,
    firstTs: number,
    firstValue: number,
    lastTs: number,
    lastValue: number,
    inner: number,
  ): void {
    this.series.push(series);
    this.bucket.push(bucket);
    this.count.push(count);
    this.sum.push(sum);
    this.min.push(min);
    this.max.push(max);
    this.firstTs.push(firstTs);
    this.firstValue.push(firstValue);
    this.lastTs.push(lastTs);
    this.lastValue.push(lastValue);
    this.inner.push(inner);
    this.length++;
  }
}

/**
 * Folds the rows order[start, end) of one series (indices into ts and value, ascending ts, one per
 * ts) into `out`, one row per bucket they reach; NaN values (ALPHANUMERIC rows) are skipped.
 */
export function foldBuckets(
  out: BucketColumns,
  series: number,
  ts: Float64Array,
  value: Float64Array,
  order: Uint32Array,
  start: number,
  end: number,
): void {
  const folder = new BucketFolder(out, series);
  folder.fold(ts, value, order, start, end);
  folder.finish();
}

/**
 * foldBuckets in pieces, so a long series can be folded a slice at a time: fold() consecutive
 * ranges of one series' rows in ts order, then finish(). The same rows as one foldBuckets call.
 */
export class BucketFolder {
  private bucket = NaN;
  private count = 0;
  private sum = 0;
  private min = 0;
  private max = 0;
  private firstTs = 0;
  private firstValue = 0;
  private lastTs = 0;
  private lastValue = 0;
  private inner = 0;

  constructor(
    private readonly out: BucketColumns,
    private readonly series: number,
  ) {}

  fold(ts: Float64Array, value: Float64Array, order: Uint32Array, start: number, end: number): void {
    // Locals in the loop: this runs for every ingested value.
    const { out, series } = this;
    let { bucket, count, sum, min, max, firstTs, firstValue, lastTs, lastValue, inner } = this;
    for (let k = start; k < end; k++) {
      const i = order[k]!;
      const v = value[i]!;
      if (v !== v) continue; // NaN
      const t = ts[i]!;
      const b = Math.floor(t / BUCKET_MS);
      if (b !== bucket) {
        if (count > 0) out.push(series, bucket, count, sum, min, max, firstTs, firstValue, lastTs, lastValue, inner);
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
    this.bucket = bucket;
    this.count = count;
    this.sum = sum;
    this.min = min;
    this.max = max;
    this.firstTs = firstTs;
    this.firstValue = firstValue;
    this.lastTs = lastTs;
    this.lastValue = lastValue;
    this.inner = inner;
  }

  /** Writes the bucket still open. */
  finish(): void {
    if (this.count > 0) {
      this.out.push(this.series, this.bucket, this.count, this.sum, this.min, this.max, this.firstTs, this.firstValue, this.lastTs, this.lastValue, this.inner);
    }
    this.count = 0;
    this.bucket = NaN;
  }
}

/**
 * Merges partial rows of one series, given in (bucket, firstTs) order, into one aggregate per
 * bucket, ascending. Partial rows of a bucket cover disjoint spans; each is linked to the one before
 * it by the value in force between them (lastValue × gap), which joins their inner integrals.
 */
export class BucketMerger {
  readonly out: BucketAggregate[] = [];
  private cur: BucketAggregate | undefined;

  add(
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
    const cur = this.cur;
    if (cur !== undefined && cur.start === start) {
      cur.innerIntegral += cur.lastValue * (firstTs - cur.lastTs) + innerIntegral;
      cur.count += count;
      cur.sum += sum;
      if (min < cur.min) cur.min = min;
      if (max > cur.max) cur.max = max;
      cur.lastTs = lastTs;
      cur.lastValue = lastValue;
      return;
    }
    this.cur = { start, count, sum, min, max, firstTs, firstValue, lastTs, lastValue, innerIntegral };
    this.out.push(this.cur);
  }
}
