// Several ValueBatches joined column by column: a group commit's one batch (the write queue's). The
// point-value domain's own batch helpers (emptyBatch, setRow, …) are in src/values/batch.ts.
import type { ValueBatch } from './types.js';

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
