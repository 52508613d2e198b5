// Rollup statistics straight from their definitions (API-DECISIONS "Point values"), one period at a
// time over a plain sorted array: no buckets, no streaming, no cleverness. Tests compare the engine
// (computeRollup) and the stores against this.
//
// Period [a, b). Inside values V: a <= ts < b. Start value S: the newest value with ts <= a. A value
// stays in force until the next one; the newest until endOfData. In-force window:
// [max(a, t0), min(b, endOfData)), t0 = a when S exists, else the first inside ts.

import type { BucketAggregate } from '../../src/store/values/types.js';

export interface TimedValue<T> {
  ts: number;
  value: T;
}

export interface ReferenceStatistics {
  average: number | null;
  arithmeticMean: number | null;
  minimum: number | null;
  maximum: number | null;
  sum: number | null;
  first: number | null;
  last: number | null;
  start: number | null;
  count: number;
  delta: number | null;
  integral: number | null;
}

export interface ReferenceStoredStatistics<T> {
  first: T | null;
  last: T | null;
  start: T | null;
  count: number;
}

/** What a store holds after these writes, in arrival order: one value per ts (the later write wins), sorted. */
export function effectiveSeries<T>(writes: readonly TimedValue<T>[]): TimedValue<T>[] {
  const byTs = new Map<number, T>();
  for (const w of writes) byTs.set(w.ts, w.value);
  return [...byTs.entries()].map(([ts, value]) => ({ ts, value })).sort((x, y) => x.ts - y.ts);
}

/** The newest value with ts <= t. */
function inForceAt<T>(series: readonly TimedValue<T>[], t: number): TimedValue<T> | undefined {
  let found: TimedValue<T> | undefined;
  for (const v of series) if (v.ts <= t) found = v;
  return found;
}

function periods(bounds: ArrayLike<number>): { a: number; b: number }[] {
  const out: { a: number; b: number }[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) out.push({ a: bounds[i] as number, b: bounds[i + 1] as number });
  return out;
}

/** `series` sorted by ts, one value per ts. */
export function referenceRollup(series: readonly TimedValue<number>[], bounds: ArrayLike<number>, endOfData: number): ReferenceStatistics[] {
  return periods(bounds).map(({ a, b }) => {
    const inside = series.filter((v) => v.ts >= a && v.ts < b).map((v) => v.value);
    const insideTs = series.filter((v) => v.ts >= a && v.ts < b).map((v) => v.ts);
    const start = inForceAt(series, a)?.value ?? null;

    // ∫ over the in-force window, cut at every value's ts into stretches of one value each.
    const windowStart = start !== null ? a : insideTs[0];
    const windowEnd = Math.min(b, endOfData);
    let integralMs = 0;
    let durationMs = 0;
    if (windowStart !== undefined && windowEnd > windowStart) {
      const cuts = [windowStart, ...series.map((v) => v.ts).filter((t) => t > windowStart && t < windowEnd), windowEnd];
      for (let k = 0; k + 1 < cuts.length; k++) {
        const from = cuts[k] as number;
        const to = cuts[k + 1] as number;
        integralMs += (inForceAt(series, from) as TimedValue<number>).value * (to - from);
        durationMs += to - from;
      }
    }

    const count = inside.length;
    const sum = count > 0 ? inside.reduce((x, y) => x + y, 0) : null;
    const first = inside[0] ?? null;
    const last = inside.at(-1) ?? null;
    const withStart = start === null ? inside : [start, ...inside];
    const deltaEnd = last ?? start;
    const deltaBegin = start ?? first;
    return {
      average: durationMs > 0 ? integralMs / durationMs : null,
      arithmeticMean: sum === null ? null : sum / count,
      minimum: withStart.length > 0 ? Math.min(...withStart) : null,
      maximum: withStart.length > 0 ? Math.max(...withStart) : null,
      sum,
      first,
      last,
      start,
      count,
      delta: deltaEnd === null || deltaBegin === null ? null : deltaEnd - deltaBegin,
      integral: start === null && count === 0 ? null : integralMs / 1000,
    };
  });
}

/** Non-numeric points: values as stored. */
export function referenceStoredRollup<T>(series: readonly TimedValue<T>[], bounds: ArrayLike<number>): ReferenceStoredStatistics<T>[] {
  return periods(bounds).map(({ a, b }) => {
    const inside = series.filter((v) => v.ts >= a && v.ts < b);
    return {
      first: inside[0]?.value ?? null,
      last: inside.at(-1)?.value ?? null,
      start: inForceAt(series, a)?.value ?? null,
      count: inside.length,
    };
  });
}

/** One hour's partial aggregate straight from its definition (store/values/types.ts), values in ts order. */
export function referenceBucket(start: number, xs: readonly { ts: number; v: number }[]): BucketAggregate {
  let inner = 0;
  for (let i = 0; i + 1 < xs.length; i++) inner += xs[i]!.v * (xs[i + 1]!.ts - xs[i]!.ts);
  return {
    start,
    count: xs.length,
    sum: xs.reduce((a, x) => a + x.v, 0),
    min: Math.min(...xs.map((x) => x.v)),
    max: Math.max(...xs.map((x) => x.v)),
    firstTs: xs[0]!.ts,
    firstValue: xs[0]!.v,
    lastTs: xs[xs.length - 1]!.ts,
    lastValue: xs[xs.length - 1]!.v,
    innerIntegral: inner,
  };
}
