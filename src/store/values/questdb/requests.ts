// An append's rows as ILP requests that each stand alone. QuestDB parses a whole request before it
// commits its tables, so raw rows and the hourly row of one hour stay consistent when they travel in the
// same request; the lines are therefore written hour by hour (the raw rows of an hour, then its hourly
// row) and a request ends only where an hour's rows end. Requests cut that way touch disjoint
// (series, ts) and (series, hour) keys, so they may be sent at once and commit in any order, and a
// failure part-way leaves every hour either written whole or not at all (the store recomputes the
// append's hours before its next write anyway).
import type { SortedRows } from '../sort.js';
import { BUCKET_MS, type BucketAggregate, type ValueBatch } from '../types.js';
import { IlpLines } from './ilp.js';
import { floorToBucket } from './time.js';

/** An append's lines, and the offsets after each hour's rows (raw and hourly), ascending. */
export interface HourLines {
  bytes: Buffer;
  cuts: readonly number[];
}

/** Below this, cutting a request in parallel parts costs more (a commit per table each) than it gains. */
export const MIN_PARALLEL_REQUEST_BYTES = 1024 * 1024;

/**
 * Raw rows in sorted order (one per (series, ts)), each hour's hourly row right after that hour's raw
 * rows. `hourly`: the append's hourly rows, grouped by series in the order of `sorted`'s segments and
 * ascending within a series (planHourly's order).
 */
export function appendLines(
  tables: { raw: string; hourly: string },
  batch: ValueBatch,
  sorted: SortedRows,
  hourly: readonly { series: number; aggregate: BucketAggregate }[],
): HourLines {
  const lines = new IlpLines();
  const cuts: number[] = [];
  let h = 0;
  const hoursBefore = (series: number, end: number) => {
    while (h < hourly.length && hourly[h]!.series === series && hourly[h]!.aggregate.start < end) {
      lines.hourly(tables.hourly, series, hourly[h]!.aggregate);
      h++;
    }
  };
  for (let g = 0; g < sorted.segSeries.length; g++) {
    const series = sorted.segSeries[g]!;
    let hourEnd = -Infinity;
    for (let k = sorted.segStart[g]!; k < sorted.segEnd[g]!; k++) {
      const i = sorted.perm[k]!;
      const ts = batch.ts[i]!;
      if (ts >= hourEnd) {
        if (hourEnd !== -Infinity) {
          hoursBefore(series, hourEnd);
          cuts.push(lines.size);
        }
        hourEnd = floorToBucket(ts) + BUCKET_MS;
      }
      lines.value(tables.raw, series, ts, batch.value[i]!, batch.text?.[i] ?? null, batch.annotation?.[i] ?? null);
    }
    hoursBefore(series, Infinity);
    cuts.push(lines.size);
  }
  if (h !== hourly.length) throw new Error('hourly rows out of step with the sorted rows');
  return { bytes: lines.take(), cuts };
}

/**
 * `lines` cut at hour ends into about `parallel` requests of at least MIN_PARALLEL_REQUEST_BYTES each
 * and at most `max` bytes (more requests when it is larger); undefined when one hour's rows alone are
 * larger than `max`.
 */
export function requestsAtHours(lines: HourLines, max: number, parallel: number): Buffer[] | undefined {
  const total = lines.bytes.length;
  const target = Math.min(max, Math.max(MIN_PARALLEL_REQUEST_BYTES, Math.ceil(total / parallel)));
  const out: Buffer[] = [];
  let start = 0;
  let last = 0; // the last cut seen after start
  for (const cut of lines.cuts) {
    if (cut - start > max) {
      if (last <= start) return undefined;
      out.push(lines.bytes.subarray(start, last));
      start = last;
      if (cut - start > max) return undefined;
    }
    last = cut;
    if (cut - start >= target && cut < total) {
      out.push(lines.bytes.subarray(start, cut));
      start = cut;
    }
  }
  if (start < total) out.push(lines.bytes.subarray(start));
  return out;
}
