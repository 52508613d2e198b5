// Checking a batch and ordering its rows by (series, ts), one row per key (every engine): DuckDB groups are
// sorted so row-group zone maps prune reads, and upserts are resolved before anything is written.
import type { ValueBatch } from './types.js';

/** Timestamps are epoch ms in the range of a JS Date. */
export const MAX_TS = 8.64e15;

/** A batch's rows in (series, ts) order, one per (series, ts) (the last written wins), cut by series. */
export interface SortedRows {
  /** Row indices into the batch. */
  perm: Uint32Array;
  n: number;
  /** Per series, ascending: the series id and its rows perm[start, end). */
  segSeries: number[];
  segStart: number[];
  segEnd: number[];
}

/** Rejects what the store cannot keep; the pipeline never sends it. */
export function validate(batch: ValueBatch): void {
  const { ts, value } = batch;
  if (ts.length < batch.length || value.length < batch.length || batch.series.length < batch.length) {
    throw new RangeError('value batch columns are shorter than its length');
  }
  for (let i = 0; i < batch.length; i++) {
    const t = ts[i]!;
    if (!Number.isInteger(t) || t < -MAX_TS || t > MAX_TS) throw new RangeError(`invalid timestamp ${t} at row ${i}`);
    const v = value[i]!;
    if (v === Infinity || v === -Infinity) throw new RangeError(`infinite value at row ${i}`);
  }
}

/**
 * Orders a batch by (series, ts) without a comparison sort in the common case (each series' rows
 * already strictly increasing): rows are counted per series and placed series by series; only a
 * series whose rows arrive out of order or repeat a ts is sorted, keeping the last row per ts.
 */
export function sortRows(batch: ValueBatch): SortedRows {
  const { series, ts, length } = batch;
  const groupOf = new Map<number, number>();
  const gSeries: number[] = [];
  const gCount: number[] = [];
  const gLastTs: number[] = [];
  const gOrdered: boolean[] = [];
  const rowGroup = new Uint32Array(length);
  let prevSeries = NaN;
  let g = -1;
  for (let i = 0; i < length; i++) {
    const s = series[i]!;
    if (s !== prevSeries) {
      // A run of rows of one series costs one lookup.
      prevSeries = s;
      let found = groupOf.get(s);
      if (found === undefined) {
        found = gSeries.length;
        groupOf.set(s, found);
        gSeries.push(s);
        gCount.push(0);
        gLastTs.push(-Infinity);
        gOrdered.push(true);
      }
      g = found;
    }
    rowGroup[i] = g;
    gCount[g]!++;
    const t = ts[i]!;
    if (t <= gLastTs[g]!) gOrdered[g] = false;
    gLastTs[g] = t;
  }
  if (gSeries.length === 1 && gOrdered[0]) {
    // The common case: one series in time order.
    const perm = new Uint32Array(length);
    for (let i = 0; i < length; i++) perm[i] = i;
    return { perm, n: length, segSeries: [gSeries[0]!], segStart: [0], segEnd: [length] };
  }
  const order = gSeries.map((_, g) => g).sort((a, b) => gSeries[a]! - gSeries[b]!);
  const offset = new Array<number>(gSeries.length);
  let at = 0;
  for (const g of order) {
    offset[g] = at;
    at += gCount[g]!;
  }
  const fill = offset.slice();
  const perm = new Uint32Array(length);
  for (let i = 0; i < length; i++) perm[fill[rowGroup[i]!]!++] = i;

  // Per group, in series order: sort and deduplicate where needed, then pack the segments together.
  const out: SortedRows = { perm, n: 0, segSeries: [], segStart: [], segEnd: [] };
  let write = 0;
  for (const g of order) {
    const start = offset[g]!;
    const end = start + gCount[g]!;
    const segStart = write;
    if (gOrdered[g]) {
      perm.copyWithin(write, start, end);
      write += end - start;
    } else {
      const rows = Array.from(perm.subarray(start, end)).sort((a, b) => ts[a]! - ts[b]! || a - b);
      for (let k = 0; k < rows.length; k++) {
        const next = rows[k + 1];
        if (next !== undefined && ts[next] === ts[rows[k]!]) continue; // a later row has this ts
        perm[write++] = rows[k]!;
      }
    }
    out.segSeries.push(gSeries[g]!);
    out.segStart.push(segStart);
    out.segEnd.push(write);
  }
  out.n = write;
  return out;
}
