// Folded columns as aggregates, through the store's public merger: how the suites turn what
// foldBuckets wrote into BucketAggregate rows to compare (the engines merge rows as they read them).
import { BucketMerger, type BucketColumns } from '../../src/store/values/aggregates.js';
import { BUCKET_MS, type BucketAggregate } from '../../src/store/values/types.js';

/** The rows of one series' columns as aggregates, partial rows of a bucket merged (rows in time order). */
export function mergeColumns(c: BucketColumns): BucketAggregate[] {
  const merger = new BucketMerger();
  for (let r = 0; r < c.length; r++) {
    merger.add(c.bucket[r]! * BUCKET_MS, c.count[r]!, c.sum[r]!, c.min[r]!, c.max[r]!, c.firstTs[r]!, c.firstValue[r]!, c.lastTs[r]!, c.lastValue[r]!, c.inner[r]!);
  }
  return merger.out;
}
