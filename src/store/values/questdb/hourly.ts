// The hourly aggregate rows of the QuestDB store (t_hourly), kept exact on every write:
// - values newer than a series' newest numeric value (live data, a history import in time order) are
//   folded here and merged into the hour they continue (the series' tail, kept in memory and loaded
//   from t_hourly once), so an append costs no read;
// - anything else (a late value, a timestamp written again, a delete) has its hours recomputed from
//   the raw rows once they are visible.
// Either way the rows written are whole hours, and writing an hour again replaces it (dedup).
import { LRUCache } from 'lru-cache';
import { BucketColumns, BucketMerger, bucketOf, foldBuckets } from '../aggregates.js';
import type { SortedRows } from '../sort.js';
import { BUCKET_MS, type BucketAggregate, type ValueBatch } from '../types.js';
import { microsToMs } from './time.js';

/** A t_hourly row as PG-wire returns it (LONG columns arrive as strings). */
export interface HourlyRow {
  bucket_us: string | number;
  n: string | number;
  sum: number | string;
  min: number | string;
  max: number | string;
  first_ms: string | number;
  first_value: number | string;
  last_ms: string | number;
  last_value: number | string;
  inner_integral: number | string;
}

export function hourlyRowToAggregate(row: HourlyRow): BucketAggregate {
  return {
    start: microsToMs(row.bucket_us),
    count: Number(row.n),
    sum: Number(row.sum),
    min: Number(row.min),
    max: Number(row.max),
    firstTs: Number(row.first_ms),
    firstValue: Number(row.first_value),
    lastTs: Number(row.last_ms),
    lastValue: Number(row.last_value),
    innerIntegral: Number(row.inner_integral),
  };
}

/** A raw numeric row as the recompute statement returns it. */
export interface NumericRow {
  series: number | string;
  ts_us: string | number;
  value: number | string;
}

/** The hours [from, to) of a series whose rows must be recomputed from the raw table. */
export interface HourSpan {
  series: number;
  /** Start of the first hour (a multiple of BUCKET_MS). */
  from: number;
  /** End of the last hour (exclusive). */
  to: number;
}

/** What one append writes to t_hourly, and what it must recompute after the raw rows are visible. */
export interface HourlyPlan {
  /** Whole hours folded from the batch (merged with the hour each series continues). */
  rows: { series: number; aggregate: BucketAggregate }[];
  recompute: HourSpan[];
  /** Per series the tail after the append, applied once it succeeded (undefined: forget it). */
  tails: Map<number, BucketAggregate | undefined>;
}

/** Where a series' numeric history ends: its newest non-empty hour, or none (no numeric value yet). */
export type Tail = BucketAggregate | null;

const TAIL_CACHE_SERIES = 100_000;

/** Each series' newest non-empty hour, for the appends that continue it. */
export class SeriesTails {
  private readonly tails = new LRUCache<number, { tail: Tail }>({ max: TAIL_CACHE_SERIES });

  /** The series not known here (their tails must be loaded before planning an append). */
  unknown(series: Iterable<number>): number[] {
    const out: number[] = [];
    for (const s of series) if (!this.tails.has(s)) out.push(s);
    return out;
  }

  /** Loaded tails: every listed series, `null` where t_hourly holds no non-empty hour of it. */
  load(series: readonly number[], newest: ReadonlyMap<number, BucketAggregate>): void {
    for (const s of series) this.tails.set(s, { tail: newest.get(s) ?? null });
  }

  get(series: number): Tail | undefined {
    return this.tails.get(series)?.tail;
  }

  set(series: number, tail: Tail | undefined): void {
    if (tail === undefined) this.tails.delete(series);
    else this.tails.set(series, { tail });
  }

  forget(series: number): void {
    this.tails.delete(series);
  }

  /** Another instance wrote the table: every tail may be out of date. */
  clear(): void {
    this.tails.clear();
  }
}

/**
 * The hourly rows of an append (rows sorted by sortRows): per series, when every numeric row is newer
 * than its tail's last value, the batch's hours folded and merged onto the tail's hour; otherwise its
 * hours are listed for a recompute. Every series of `sorted` must have a loaded tail.
 */
export function planHourly(batch: ValueBatch, sorted: SortedRows, tails: SeriesTails): HourlyPlan {
  const plan: HourlyPlan = { rows: [], recompute: [], tails: new Map() };
  const { ts, value } = batch;
  for (let g = 0; g < sorted.segSeries.length; g++) {
    const series = sorted.segSeries[g]!;
    const start = sorted.segStart[g]!;
    const end = sorted.segEnd[g]!;
    const tail = tails.get(series);
    if (tail === undefined) throw new Error(`no tail loaded for series ${series}`);
    const firstTs = ts[sorted.perm[start]!]!;
    const lastTs = ts[sorted.perm[end - 1]!]!;
    if (tail !== null && firstTs <= tail.lastTs) {
      // Late or rewritten values: the hours they reach are recomputed from the raw rows.
      plan.recompute.push({ series, from: bucketOf(firstTs) * BUCKET_MS, to: (bucketOf(lastTs) + 1) * BUCKET_MS });
      plan.tails.set(series, undefined);
      continue;
    }
    const folded = new BucketColumns();
    foldBuckets(folded, series, ts, value, sorted.perm, start, end);
    if (folded.length === 0) continue; // no numeric value: nothing hourly changes
    const merger = new BucketMerger();
    if (tail !== null && tail.start === folded.bucket[0]! * BUCKET_MS) {
      merger.add(tail.start, tail.count, tail.sum, tail.min, tail.max, tail.firstTs, tail.firstValue, tail.lastTs, tail.lastValue, tail.innerIntegral);
    }
    for (let r = 0; r < folded.length; r++) {
      merger.add(
        folded.bucket[r]! * BUCKET_MS,
        folded.count[r]!,
        folded.sum[r]!,
        folded.min[r]!,
        folded.max[r]!,
        folded.firstTs[r]!,
        folded.firstValue[r]!,
        folded.lastTs[r]!,
        folded.lastValue[r]!,
        folded.inner[r]!,
      );
    }
    for (const aggregate of merger.out) plan.rows.push({ series, aggregate });
    plan.tails.set(series, { ...merger.out[merger.out.length - 1]! });
  }
  return plan;
}

/**
 * The whole hours of `span`s recomputed from raw numeric rows (ascending by series and ts): one
 * aggregate per hour with values; `emptyHours`: the hours `existing` lists (non-empty in t_hourly
 * now, per series) that are left without any value, to be written empty.
 */
export function foldRecomputed(
  rows: readonly NumericRow[],
  spans: readonly HourSpan[],
  existing: ReadonlyMap<number, ReadonlySet<number>>,
): { rows: { series: number; aggregate: BucketAggregate }[]; emptyHours: { series: number; start: number }[] } {
  const bySeries = new Map<number, { ts: number[]; value: number[] }>();
  for (const r of rows) {
    const series = Number(r.series);
    let list = bySeries.get(series);
    if (!list) bySeries.set(series, (list = { ts: [], value: [] }));
    list.ts.push(microsToMs(r.ts_us));
    list.value.push(Number(r.value));
  }
  const out: { series: number; aggregate: BucketAggregate }[] = [];
  const emptyHours: { series: number; start: number }[] = [];
  for (const span of spans) {
    const list = bySeries.get(span.series);
    const folded = new BucketColumns();
    if (list) {
      // Only this span's hours: another span of the same series may cover others.
      const ts = Float64Array.from(list.ts);
      const value = Float64Array.from(list.value);
      const order = new Uint32Array(ts.length);
      let n = 0;
      for (let i = 0; i < ts.length; i++) if (ts[i]! >= span.from && ts[i]! < span.to) order[n++] = i;
      foldBuckets(folded, span.series, ts, value, order, 0, n);
    }
    const present = new Set<number>();
    for (let r = 0; r < folded.length; r++) {
      const start = folded.bucket[r]! * BUCKET_MS;
      present.add(start);
      out.push({
        series: span.series,
        aggregate: {
          start,
          count: folded.count[r]!,
          sum: folded.sum[r]!,
          min: folded.min[r]!,
          max: folded.max[r]!,
          firstTs: folded.firstTs[r]!,
          firstValue: folded.firstValue[r]!,
          lastTs: folded.lastTs[r]!,
          lastValue: folded.lastValue[r]!,
          innerIntegral: folded.inner[r]!,
        },
      });
    }
    for (const start of existing.get(span.series) ?? []) {
      if (start >= span.from && start < span.to && !present.has(start)) emptyHours.push({ series: span.series, start });
    }
  }
  return { rows: out, emptyHours };
}
