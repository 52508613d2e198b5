// Which buckets pure appends gave more than one partial row. Live data appends a few values per
// series at a time, each append adding a partial row to the series' current bucket; the store merges
// the listed buckets now and then, so point_buckets stays about one row per (series, hour).
import { bucketOf } from '../aggregates.js';
import { TouchedBuckets } from './touched-buckets.js';

export class PartialRows {
  /** Per series, the bucket its last append ended in. */
  private readonly lastBucket = new Map<number, number>();
  /** Per series, the buckets holding extra partial rows. */
  private readonly keys = new Map<number, Set<number>>();
  private extraRows = 0;

  /** Extra partial rows noted since the last take() or clear(). */
  get extra(): number {
    return this.extraRows;
  }

  /**
   * A pure append of `series` wrote partial rows for buckets first..last; `known` is the series'
   * max ts before it. A first bucket the series' previous append ended in now holds one more row.
   */
  fresh(series: number, first: number, last: number, known: number | undefined): void {
    const previous = this.lastBucket.get(series) ?? (known === undefined ? undefined : bucketOf(known));
    if (first === previous) {
      this.extraRows++;
      let buckets = this.keys.get(series);
      if (!buckets) this.keys.set(series, (buckets = new Set()));
      buckets.add(first);
    }
    this.lastBucket.set(series, last);
  }

  /** A late append: its buckets are recomputed whole, the series' last bucket is `bucket`. */
  late(series: number, bucket: number): void {
    this.lastBucket.set(series, bucket);
  }

  /** The buckets with extra rows, by series ascending; forgets them. */
  take(): TouchedBuckets {
    const touched = new TouchedBuckets();
    for (const s of [...this.keys.keys()].sort((a, b) => a - b)) {
      for (const b of this.keys.get(s)!) touched.add(s, b);
    }
    this.clear();
    return touched;
  }

  /** Forgets the listed buckets (a compaction merged them all); the series' last buckets stay. */
  clear(): void {
    this.keys.clear();
    this.extraRows = 0;
  }
}
