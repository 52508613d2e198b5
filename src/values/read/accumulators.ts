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
import type { SeriesBuckets } from '../../store/values/bucket-columns.js';
import type { StoredValue } from '../../store/values/types.js';

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

  /**
   * Whole buckets, each inside one period and ending by endOfData, in ascending order, before any
   * value. The hot path (a year of hourly buckets, often a period each): one loop with the walk's
   * state in locals, closing periods inline. It takes the steps of value()'s walk (advance, accrue,
   * took, writeOut and close) in the same order, so every sum rounds as it would there.
   */
  buckets(buckets: SeriesBuckets): void {
    const n = buckets.length;
    if (n === 0) return;
    const r = this.result;
    const bounds = this.bounds;
    const lastPeriod = this.lastPeriod;
    const endOfData = this.endOfData;
    let period = this.period;
    let periodStart = this.periodStart;
    let periodEnd = this.periodEnd;
    let inForceEnd = this.inForceEnd;
    let hasCurrent = this.hasCurrent;
    let since = this.since;
    let count = this.count;
    let firstTs = this.firstTs;
    let lastTs = this.lastTs;
    let hasStart = this.hasStart;
    let current = this.current;
    let first = this.first;
    let last = this.last;
    let startValue = this.startValue;
    let sum = this.sum;
    let minimum = this.minimum;
    let maximum = this.maximum;
    let integralMs = this.integralMs;
    let inForceMs = this.inForceMs;
    const bStart = buckets.start;
    const bCount = buckets.count;
    const bSum = buckets.sum;
    const bMin = buckets.min;
    const bMax = buckets.max;
    const bFirstTsColumn = buckets.firstTs;
    const bFirstValue = buckets.firstValue;
    const bLastTsColumn = buckets.lastTs;
    const bLastValue = buckets.lastValue;
    const bInner = buckets.innerIntegral;
    for (let k = 0; k < n; k++) {
      const bucketCount = bCount[k]!;
      if (bucketCount === 0) continue;
      const start = bStart[k]!;
      // advance(start): close the current period and open the next until one holds the bucket.
      while (start >= periodEnd && period < lastPeriod) {
        // writeOut(period), with accrue(inForceEnd) first.
        if (hasCurrent) {
          const from = since > periodStart ? since : periodStart;
          if (inForceEnd > from) {
            integralMs += current * (inForceEnd - from);
            inForceMs += inForceEnd - from;
          }
        }
        const has = count > 0;
        let lo = has ? minimum : NaN;
        let hi = has ? maximum : NaN;
        if (hasStart) {
          lo = has && lo < startValue ? lo : startValue;
          hi = has && hi > startValue ? hi : startValue;
        }
        r.sum[period] = has ? sum : NaN;
        r.minimum[period] = lo;
        r.maximum[period] = hi;
        r.first[period] = has ? first : NaN;
        r.last[period] = has ? last : NaN;
        r.startValue[period] = hasStart ? startValue : NaN;
        r.integralMs[period] = integralMs;
        r.inForceMs[period] = inForceMs;
        sum = 0;
        integralMs = 0;
        inForceMs = 0;
        startValue = current;
        // The walker's close(), then open(period + 1).
        r.count[period] = count;
        r.firstTs[period] = has ? firstTs : NaN;
        r.lastTs[period] = has ? lastTs : NaN;
        r.hasStart[period] = hasStart ? 1 : 0;
        period++;
        periodStart = bounds[period]!;
        periodEnd = bounds[period + 1]!;
        inForceEnd = periodEnd < endOfData ? periodEnd : endOfData;
        count = 0;
        hasStart = hasCurrent;
      }
      const bFirstTs = bFirstTsColumn[k]!;
      const bLastTs = bLastTsColumn[k]!;
      const bMinimum = bMin[k]!;
      const bMaximum = bMax[k]!;
      // accrue(b.firstTs): the carried value covers the gap up to the bucket's first value.
      if (hasCurrent) {
        const from = since > periodStart ? since : periodStart;
        const to = bFirstTs < inForceEnd ? bFirstTs : inForceEnd;
        if (to > from) {
          integralMs += current * (to - from);
          inForceMs += to - from;
        }
      }
      if (count === 0) {
        first = bFirstValue[k]!;
        minimum = bMinimum;
        maximum = bMaximum;
      } else {
        if (bMinimum < minimum) minimum = bMinimum;
        if (bMaximum > maximum) maximum = bMaximum;
      }
      sum += bSum[k]!;
      integralMs += bInner[k]!;
      inForceMs += bLastTs - bFirstTs;
      last = bLastValue[k]!;
      current = last;
      // took(count, firstTs, lastTs) of the bucket
      if (count === 0) firstTs = bFirstTs;
      count += bucketCount;
      lastTs = bLastTs;
      since = bLastTs;
      hasCurrent = true;
      if (bFirstTs === periodStart) {
        hasStart = true;
        startValue = bFirstValue[k]!;
      }
    }
    this.period = period;
    this.periodStart = periodStart;
    this.periodEnd = periodEnd;
    this.inForceEnd = inForceEnd;
    this.hasCurrent = hasCurrent;
    this.since = since;
    this.count = count;
    this.firstTs = firstTs;
    this.lastTs = lastTs;
    this.hasStart = hasStart;
    this.current = current;
    this.first = first;
    this.last = last;
    this.startValue = startValue;
    this.sum = sum;
    this.minimum = minimum;
    this.maximum = maximum;
    this.integralMs = integralMs;
    this.inForceMs = inForceMs;
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
