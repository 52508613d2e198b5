// ValueBatch helpers shared by the pipeline and the engines: a batch of n zeroed rows, and several
// batches joined column by column (a group commit's one batch).
import type { ValueBatch } from './types.js';

/** n rows, numeric only (text and annotation null), every column zeroed, to be filled in. */
export function emptyBatch(n: number): ValueBatch {
  return { length: n, series: new Int32Array(n), ts: new Float64Array(n), value: new Float64Array(n), text: null, annotation: null };
}

/** Concatenates batches column by column; one batch is returned as it is. */
export function concatBatches(batches: readonly ValueBatch[]): ValueBatch {
  if (batches.length === 1) return batches[0]!;
  const length = batches.reduce((n, b) => n + b.length, 0);
  const out: ValueBatch = {
    length,
    series: new Int32Array(length),
    ts: new Float64Array(length),
    value: new Float64Array(length),
    text: batches.some((b) => b.text) ? new Array<string | null>(length).fill(null) : null,
    annotation: batches.some((b) => b.annotation) ? new Array<string | null>(length).fill(null) : null,
  };
  let at = 0;
  for (const b of batches) {
    out.series.set(b.series.subarray(0, b.length), at);
    out.ts.set(b.ts.subarray(0, b.length), at);
    out.value.set(b.value.subarray(0, b.length), at);
    for (let i = 0; i < b.length; i++) {
      if (b.text && out.text) out.text[at + i] = b.text[i] ?? null;
      if (b.annotation && out.annotation) out.annotation[at + i] = b.annotation[i] ?? null;
    }
    at += b.length;
  }
  return out;
}
