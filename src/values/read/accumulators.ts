// One pass over a series in time order, folding values (and, for numeric points, whole buckets) into
// the per-period columns of a RollupResult. The current period lives in fields and is written out
// when the period closes; the value in force carries across periods.
//
// In-force window of period [a, b): [max(a, t0), min(b, endOfData)), t0 = a when a value was in force
// at a, else the first value inside. The integral adds, for every stretch of time inside that window,
// the value in force over it; with the carried value's `since` clipped to a, the stretch before the
// first inside value counts only when a start value exists.
import type { RollupResult, StoredScalar } from './rollup-result.js';
import type { BucketAggregate } from '../../store/values/types.js';

export class NumericAccumulator {
  private readonly bounds: Float64Array;
  private readonly lastPeriod: number;

  private period = 0;
  private periodStart = 0;
  private periodEnd = 0;
  private inForceEnd = 0;

  // The value in force and since when.
  private hasCurrent = false;
  private current = 0;
  private since = 0;

  // Current period.
  private count = 0;
  private sum = 0;
  private minimum = 0;
  private maximum = 0;
  private first = 0;
  private firstTs = 0;
  private last = 0;
  private lastTs = 0;
  private hasStart = false;
  private startValue = 0;
  private integralMs = 0;
  private inForceMs = 0;

  /** `inForce`: the value in force at the first period start (ts <= start), if any. */
  constructor(
    private readonly result: RollupResult,
    private readonly endOfData: number,
    inForce: { ts: number; value: number } | undefined,
  ) {
    this.bounds = result.bounds;
    this.lastPeriod = result.length - 1;
    if (inForce) {
      this.hasCurrent = true;
      this.current = inForce.value;
      this.since = inForce.ts;
    }
    this.open(0);
  }

  /** A value inside the range; values arrive in ascending ts, each ts once. */
  value(ts: number, v: number): void {
    if (ts >= this.periodEnd) this.advance(ts);
    if (ts === this.periodStart) {
      this.hasStart = true;
      this.startValue = v;
    }
    if (this.hasCurrent) this.accrue(ts);
    if (this.count === 0) {
      this.first = v;
      this.firstTs = ts;
      this.minimum = v;
      this.maximum = v;
    } else {
      if (v < this.minimum) this.minimum = v;
      if (v > this.maximum) this.maximum = v;
    }
    this.count++;
    this.sum += v;
    this.last = v;
    this.lastTs = ts;
    this.current = v;
    this.since = ts;
    this.hasCurrent = true;
  }

  /** A whole bucket lying inside one period and ending by endOfData, in ascending order with values. */
  bucket(b: BucketAggregate): void {
    if (b.count === 0) return;
    if (b.start >= this.periodEnd) this.advance(b.start);
    if (b.firstTs === this.periodStart) {
      this.hasStart = true;
      this.startValue = b.firstValue;
    }
    // The carried value covers the gap up to the bucket's first value (across empty buckets too).
    if (this.hasCurrent) this.accrue(b.firstTs);
    if (this.count === 0) {
      this.first = b.firstValue;
      this.firstTs = b.firstTs;
      this.minimum = b.min;
      this.maximum = b.max;
    } else {
      if (b.min < this.minimum) this.minimum = b.min;
      if (b.max > this.maximum) this.maximum = b.max;
    }
    this.count += b.count;
    this.sum += b.sum;
    this.last = b.lastValue;
    this.lastTs = b.lastTs;
    this.integralMs += b.innerIntegral;
    this.inForceMs += b.lastTs - b.firstTs;
    this.current = b.lastValue;
    this.since = b.lastTs;
    this.hasCurrent = true;
  }

  /** Closes the current period and every later one. */
  finish(): void {
    this.close();
    while (this.period < this.lastPeriod) {
      this.open(this.period + 1);
      this.close();
    }
  }

  private advance(ts: number): void {
    while (ts >= this.periodEnd && this.period < this.lastPeriod) {
      this.close();
      this.open(this.period + 1);
    }
  }

  private open(i: number): void {
    this.period = i;
    this.periodStart = this.bounds[i] as number;
    this.periodEnd = this.bounds[i + 1] as number;
    this.inForceEnd = Math.min(this.periodEnd, this.endOfData);
    this.count = 0;
    this.sum = 0;
    this.integralMs = 0;
    this.inForceMs = 0;
    this.hasStart = this.hasCurrent;
    this.startValue = this.current;
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

  private close(): void {
    if (this.hasCurrent) this.accrue(this.inForceEnd);
    const r = this.result;
    const i = this.period;
    const has = this.count > 0;
    let minimum = has ? this.minimum : NaN;
    let maximum = has ? this.maximum : NaN;
    if (this.hasStart) {
      minimum = has && minimum < this.startValue ? minimum : this.startValue;
      maximum = has && maximum > this.startValue ? maximum : this.startValue;
    }
    r.count[i] = this.count;
    r.sum[i] = has ? this.sum : NaN;
    r.minimum[i] = minimum;
    r.maximum[i] = maximum;
    r.first[i] = has ? this.first : NaN;
    r.firstTs[i] = has ? this.firstTs : NaN;
    r.last[i] = has ? this.last : NaN;
    r.lastTs[i] = has ? this.lastTs : NaN;
    r.hasStart[i] = this.hasStart ? 1 : 0;
    r.startValue[i] = this.hasStart ? this.startValue : NaN;
    r.integralMs[i] = this.integralMs;
    r.inForceMs[i] = this.inForceMs;
  }
}

/** Non-numeric points: count, and first, last and start values as stored. */
export class StoredValueAccumulator {
  private readonly bounds: Float64Array;
  private readonly lastPeriod: number;

  private period = 0;
  private periodStart = 0;
  private periodEnd = 0;

  private hasCurrent = false;
  private current: StoredScalar = null;

  private count = 0;
  private first: StoredScalar = null;
  private firstTs = 0;
  private last: StoredScalar = null;
  private lastTs = 0;
  private hasStart = false;
  private startValue: StoredScalar = null;

  constructor(
    private readonly result: RollupResult,
    inForce: { value: StoredScalar } | undefined,
  ) {
    this.bounds = result.bounds;
    this.lastPeriod = result.length - 1;
    if (inForce) {
      this.hasCurrent = true;
      this.current = inForce.value;
    }
    this.open(0);
  }

  value(ts: number, v: StoredScalar): void {
    if (ts >= this.periodEnd) this.advance(ts);
    if (ts === this.periodStart) {
      this.hasStart = true;
      this.startValue = v;
    }
    if (this.count === 0) {
      this.first = v;
      this.firstTs = ts;
    }
    this.count++;
    this.last = v;
    this.lastTs = ts;
    this.current = v;
    this.hasCurrent = true;
  }

  finish(): void {
    this.close();
    while (this.period < this.lastPeriod) {
      this.open(this.period + 1);
      this.close();
    }
  }

  private advance(ts: number): void {
    while (ts >= this.periodEnd && this.period < this.lastPeriod) {
      this.close();
      this.open(this.period + 1);
    }
  }

  private open(i: number): void {
    this.period = i;
    this.periodStart = this.bounds[i] as number;
    this.periodEnd = this.bounds[i + 1] as number;
    this.count = 0;
    this.first = null;
    this.last = null;
    this.hasStart = this.hasCurrent;
    this.startValue = this.current;
  }

  private close(): void {
    const r = this.result;
    const i = this.period;
    const has = this.count > 0;
    r.count[i] = this.count;
    r.firstTs[i] = has ? this.firstTs : NaN;
    r.lastTs[i] = has ? this.lastTs : NaN;
    r.hasStart[i] = this.hasStart ? 1 : 0;
    r.firstStored[i] = this.first;
    r.lastStored[i] = this.last;
    r.startStored[i] = this.hasStart ? this.startValue : null;
  }
}
