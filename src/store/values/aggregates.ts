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
  if (count > 0) out.push(series, bucket, count, sum, min, max, firstTs, firstValue, lastTs, lastValue, inner);
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

/** The rows of one series' columns as aggregates, partial rows of a bucket merged (rows in time order). */
export function mergeColumns(c: BucketColumns): BucketAggregate[] {
  const merger = new BucketMerger();
  for (let r = 0; r < c.length; r++) {
    merger.add(c.bucket[r]! * BUCKET_MS, c.count[r]!, c.sum[r]!, c.min[r]!, c.max[r]!, c.firstTs[r]!, c.firstValue[r]!, c.lastTs[r]!, c.lastValue[r]!, c.inner[r]!);
  }
  return merger.out;
}
