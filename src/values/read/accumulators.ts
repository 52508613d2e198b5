// What one pass over a series folds into the per-period columns of a RollupResult, on the walk of
// period-walker.ts (periods, the value in force, counts and timestamps): the first, last and start
// values, as numbers or as stored; for numeric points also the sum, the extremes and the integral
// over the in-force window, from values and from whole buckets.
//
// The integral adds, for every stretch of time inside the in-force window, the value in force over
// it; with the carried value's `since` clipped to the period start, the stretch before the first
// inside value counts only when a start value exists.
import { PeriodWalker } from './period-walker.js';
import { storedScalar, type RollupResult, type StoredScalar } from './rollup-result.js';
import type { BucketAggregate, StoredValue } from '../../store/values/types.js';

/** The value in force at the first period's start (the newest with ts <= start). */
export interface InForce<T> {
  ts: number;
  value: T;
}

export class NumericAccumulator extends PeriodWalker {
  /** The value in force. */
  private current = 0;
  // The current period's.
  private first = 0;
  private last = 0;
  private startValue = 0;
  private sum = 0;
  private minimum = 0;
  private maximum = 0;
  private integralMs = 0;
  private inForceMs = 0;

  constructor(result: RollupResult, endOfData: number, inForce: InForce<number> | undefined) {
    super(result, endOfData, inForce?.ts);
    if (inForce) this.current = this.startValue = inForce.value;
  }

  /**
   * A batch of stored values in ascending ts: those in [from, to) with a number. (The loop over each
   * value sits here, beside what it calls, for the optimiser to inline them.)
   */
  values(batch: readonly StoredValue[], from: number, to: number): void {
    for (const v of batch) if (v.value !== null && v.ts >= from && v.ts < to) this.value(v.ts, v.value);
  }

  /** Whole buckets, each inside one period and ending by endOfData, in ascending order, before any value. */
  buckets(buckets: readonly BucketAggregate[]): void {
    for (const b of buckets) this.bucket(b);
  }

  /** A value inside the range; values arrive in ascending ts, each ts once. */
  private value(ts: number, v: number): void {
    if (ts >= this.periodEnd) this.advance(ts);
    if (this.hasCurrent) this.accrue(ts);
    if (this.count === 0) {
      this.first = v;
      this.minimum = v;
      this.maximum = v;
    } else {
      if (v < this.minimum) this.minimum = v;
      if (v > this.maximum) this.maximum = v;
    }
    this.sum += v;
    this.last = v;
    this.current = v;
    if (this.took(1, ts, ts)) this.startValue = v;
  }

  /** A whole bucket lying inside one period and ending by endOfData, in ascending order with values. */
  private bucket(b: BucketAggregate): void {
    if (b.count === 0) return;
    if (b.start >= this.periodEnd) this.advance(b.start);
    // The carried value covers the gap up to the bucket's first value (across empty buckets too).
    if (this.hasCurrent) this.accrue(b.firstTs);
    if (this.count === 0) {
      this.first = b.firstValue;
      this.minimum = b.min;
      this.maximum = b.max;
    } else {
      if (b.min < this.minimum) this.minimum = b.min;
      if (b.max > this.maximum) this.maximum = b.max;
    }
    this.sum += b.sum;
    this.integralMs += b.innerIntegral;
    this.inForceMs += b.lastTs - b.firstTs;
    this.last = b.lastValue;
    this.current = b.lastValue;
    if (this.took(b.count, b.firstTs, b.lastTs)) this.startValue = b.firstValue;
  }

  /** The current value was in force from `since` until `until`: add the part inside the window. */
  private accrue(until: number): void {
    const from = this.since > this.periodStart ? this.since : this.periodStart;
    const to = until < this.inForceEnd ? until : this.inForceEnd;
    if (to > from) {
      this.integralMs += this.current * (to - from);
      this.inForceMs += to - from;
    }
  }

  protected writeOut(i: number): void {
    if (this.hasCurrent) this.accrue(this.inForceEnd);
    const r = this.result;
    const has = this.count > 0;
    let minimum = has ? this.minimum : NaN;
    let maximum = has ? this.maximum : NaN;
    if (this.hasStart) {
      minimum = has && minimum < this.startValue ? minimum : this.startValue;
      maximum = has && maximum > this.startValue ? maximum : this.startValue;
    }
    r.sum[i] = has ? this.sum : NaN;
    r.minimum[i] = minimum;
    r.maximum[i] = maximum;
    r.first[i] = has ? this.first : NaN;
    r.last[i] = has ? this.last : NaN;
    r.startValue[i] = this.hasStart ? this.startValue : NaN;
    r.integralMs[i] = this.integralMs;
    r.inForceMs[i] = this.inForceMs;
    this.sum = 0;
    this.integralMs = 0;
    this.inForceMs = 0;
    this.startValue = this.current;
  }
}

/** Non-numeric points: count, and first, last and start values as stored. */
export class StoredValueAccumulator extends PeriodWalker {
  private current: StoredScalar = null;
  // The current period's.
  private first: StoredScalar = null;
  private last: StoredScalar = null;
  private startValue: StoredScalar = null;

  constructor(result: RollupResult, endOfData: number, inForce: InForce<StoredScalar> | undefined) {
    super(result, endOfData, inForce?.ts);
    if (inForce) this.current = this.startValue = inForce.value;
  }

  /** A batch of stored values in ascending ts: those in [from, to). */
  values(batch: readonly StoredValue[], from: number, to: number): void {
    for (const v of batch) if (v.ts >= from && v.ts < to) this.value(v.ts, storedScalar(v));
  }

  private value(ts: number, v: StoredScalar): void {
    if (ts >= this.periodEnd) this.advance(ts);
    if (this.count === 0) this.first = v;
    this.last = v;
    this.current = v;
    if (this.took(1, ts, ts)) this.startValue = v;
  }

  protected writeOut(i: number): void {
    const r = this.result;
    const has = this.count > 0;
    r.firstStored[i] = has ? this.first : null;
    r.lastStored[i] = has ? this.last : null;
    r.startStored[i] = this.hasStart ? this.startValue : null;
    this.startValue = this.current;
  }
}
