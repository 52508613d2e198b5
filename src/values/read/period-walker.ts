// The walk both accumulators (accumulators.ts) take over a series in time order: which period each
// value falls in, whether a value is in force and since when, whether one was at each period's
// start, and each period's count and first and last timestamps. Periods a value skips close empty,
// the value in force carried across them. The accumulators keep the values themselves (numbers, or
// values as stored) and what they fold from them, and write it out as a period closes.
//
// The walker holds times, counts and flags only, never a value: its code, shared by both
// accumulators, then finds the same field layout in both, which keeps it as fast as separate code
// (values of two types in shared fields measured some 30% slower on the raw-value path).
//
// In-force window of period [a, b): [max(a, t0), min(b, endOfData)), t0 = a when a value was in force
// at a, else the first value inside; `inForceEnd` is its end.
import type { RollupResult } from './rollup-result.js';

export abstract class PeriodWalker {
  protected readonly bounds: Float64Array;
  protected readonly lastPeriod: number;
  protected period = 0;

  /** The current period, [periodStart, periodEnd). */
  protected periodStart = 0;
  protected periodEnd = 0;
  /** End of the current period's in-force window: min(periodEnd, endOfData). */
  protected inForceEnd = 0;

  /** Whether a value is in force (the newest so far, or the one at the first start), since when. */
  protected hasCurrent = false;
  protected since = 0;

  // The current period: the values inside it, and whether one was in force at its start.
  protected count = 0;
  protected firstTs = 0;
  protected lastTs = 0;
  protected hasStart = false;

  /** `inForceSince`: when the value in force at the first period's start became so, if there is one. */
  protected constructor(
    protected readonly result: RollupResult,
    protected readonly endOfData: number,
    inForceSince: number | undefined,
  ) {
    this.bounds = result.bounds;
    this.lastPeriod = result.length - 1;
    if (inForceSince !== undefined) {
      this.hasCurrent = true;
      this.since = inForceSince;
    }
    this.open(0);
  }

  /** Closes the current period and every later one. */
  finish(): void {
    this.close();
    while (this.period < this.lastPeriod) {
      this.open(this.period + 1);
      this.close();
    }
  }

  /**
   * Writes out the values the accumulator keeps for period i and what it folded (the walker writes
   * count, firstTs, lastTs and hasStart), then readies them for the next period: its start value is
   * the value in force now.
   */
  protected abstract writeOut(i: number): void;

  /**
   * Moves to the period holding `ts`, closing the ones before: for values (or a bucket) from `ts` on,
   * once `ts >= periodEnd`. The caller checks that, so the check costs no call per value (and this
   * slow path, once a period, is not inlined into the per-value code, keeping that small enough to be).
   */
  protected advance(ts: number): void {
    while (ts >= this.periodEnd && this.period < this.lastPeriod) {
      this.close();
      this.open(this.period + 1);
    }
  }

  /**
   * `n` values from `firstTs` to `lastTs` went into the current period; the last is in force now.
   * Returns whether the first is at the period's start (it is the period's start value then).
   */
  protected took(n: number, firstTs: number, lastTs: number): boolean {
    if (this.count === 0) this.firstTs = firstTs;
    this.count += n;
    this.lastTs = lastTs;
    this.since = lastTs;
    this.hasCurrent = true;
    if (firstTs !== this.periodStart) return false;
    this.hasStart = true;
    return true;
  }

  private open(i: number): void {
    this.period = i;
    this.periodStart = this.bounds[i] as number;
    this.periodEnd = this.bounds[i + 1] as number;
    this.inForceEnd = Math.min(this.periodEnd, this.endOfData);
    this.count = 0;
    this.hasStart = this.hasCurrent;
  }

  private close(): void {
    const r = this.result;
    const i = this.period;
    this.writeOut(i);
    const has = this.count > 0;
    r.count[i] = this.count;
    r.firstTs[i] = has ? this.firstTs : NaN;
    r.lastTs[i] = has ? this.lastTs : NaN;
    r.hasStart[i] = this.hasStart ? 1 : 0;
  }
}
