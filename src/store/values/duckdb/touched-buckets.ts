// A list of (series, bucket) keys as written to the temporary table `touched`, with the bounds that
// let the statements over it prune by zone maps.

export class TouchedBuckets {
  readonly series: number[] = [];
  readonly bucket: number[] = [];
  private minBucket = Infinity;
  private maxBucket = -Infinity;

  /** Keys are added by series ascending. */
  add(series: number, bucket: number): void {
    this.series.push(series);
    this.bucket.push(bucket);
    if (bucket < this.minBucket) this.minBucket = bucket;
    if (bucket > this.maxBucket) this.maxBucket = bucket;
  }

  get length(): number {
    return this.series.length;
  }

  /** [first series, last series, min bucket, max bucket]: the $1..$4 of the statements over `touched`. */
  bounds(): [number, number, number, number] {
    return [this.series[0]!, this.series[this.series.length - 1]!, this.minBucket, this.maxBucket];
  }
}
