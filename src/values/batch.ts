// The column batch (ValueBatch) as the point-value domain builds and reads it: the ingest pipeline,
// point logging and the newest-value model share these, so a batch is made and read one way.
import type { StoredValue, ValueBatch } from '../store/values/types.js';
import type { StorableValue } from './ingest/types.js';

/** A batch of n rows, all zero; text and annotations absent until a row has one. */
export function emptyBatch(n: number): ValueBatch {
  return { length: n, series: new Int32Array(n), ts: new Float64Array(n), value: new Float64Array(n), text: null, annotation: null };
}

/** Puts a coerced value into row i (ALPHANUMERIC: NaN in value, the text beside it). */
export function setRow(batch: ValueBatch, i: number, v: StorableValue): void {
  batch.value[i] = v.value;
  if (v.text !== null) (batch.text ??= new Array<string | null>(batch.value.length).fill(null))[i] = v.text;
}

/** Row i of a batch as a stored value (NaN in the value column means an ALPHANUMERIC row). */
export function storedAt(b: ValueBatch, i: number): StoredValue {
  const v = b.value[i]!;
  return { ts: b.ts[i]!, value: Number.isNaN(v) ? null : v, text: b.text?.[i] ?? null, annotation: b.annotation?.[i] ?? null };
}

/** The batch's rows per series, ascending by ts (an object per value: for points somebody follows). */
export function rowsBySeries(batch: ValueBatch): Map<number, StoredValue[]> {
  const rows = new Map<number, StoredValue[]>();
  for (let i = 0; i < batch.length; i++) {
    let list = rows.get(batch.series[i]!);
    if (!list) rows.set(batch.series[i]!, (list = []));
    list.push(storedAt(batch, i));
  }
  for (const list of rows.values()) list.sort((a, b) => a.ts - b.ts);
  return rows;
}

/** Each series of the batch → its earliest ts: what the written-listeners (the cluster) are told. */
export function earliestBySeries(batch: ValueBatch): Map<number, number> {
  const earliest = new Map<number, number>();
  for (let i = 0; i < batch.length; i++) {
    const s = batch.series[i]!;
    const t = batch.ts[i]!;
    const known = earliest.get(s);
    if (known === undefined || t < known) earliest.set(s, t);
  }
  return earliest;
}

/** The distinct series of the batch. */
export function seriesOf(batch: ValueBatch): Set<number> {
  return new Set(batch.series.subarray(0, batch.length));
}
