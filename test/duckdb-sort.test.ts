// The DuckDB store's batch check and row order (src/store/values/sort.ts): sortRows against a
// plain comparison sort that keeps the last row per (series, ts).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_TS, sortRows, validate } from '../src/store/values/sort.js';
import type { ValueBatch } from '../src/store/values/types.js';

function batchOf(rows: readonly [series: number, ts: number][]): ValueBatch {
  return {
    length: rows.length,
    series: Int32Array.from(rows, ([s]) => s),
    ts: Float64Array.from(rows, ([, t]) => t),
    value: new Float64Array(rows.length),
    text: null,
    annotation: null,
  };
}

/** Row indices by (series, ts), the last row of each key kept; and the series in order with their row counts. */
function reference(rows: readonly [number, number][]): { perm: number[]; segments: [number, number][] } {
  const last = new Map<string, number>();
  rows.forEach(([s, t], i) => last.set(`${s}:${t}`, i));
  const perm = [...last.values()].sort((a, b) => rows[a]![0] - rows[b]![0] || rows[a]![1] - rows[b]![1]);
  const segments: [number, number][] = [];
  for (const i of perm) {
    const s = rows[i]![0];
    if (segments.at(-1)?.[0] === s) segments.at(-1)![1]++;
    else segments.push([s, 1]);
  }
  return { perm, segments };
}

function sorted(rows: readonly [number, number][]): { perm: number[]; segments: [number, number][] } {
  const out = sortRows(batchOf(rows));
  const segments = out.segSeries.map((s, g): [number, number] => [s, out.segEnd[g]! - out.segStart[g]!]);
  out.segStart.forEach((start, g) => assert.equal(start, g === 0 ? 0 : out.segEnd[g - 1]));
  return { perm: Array.from(out.perm.subarray(0, out.n)), segments };
}

describe('DuckDB row order', () => {
  it('keeps one series in time order as it is', () => {
    assert.deepEqual(sorted([[4, 1], [4, 2], [4, 9]]), { perm: [0, 1, 2], segments: [[4, 3]] });
  });

  it('orders series ascending, sorts a series out of order and keeps the last row of a repeated ts', () => {
    const rows: [number, number][] = [[9, 5], [2, 3], [9, 1], [2, 3], [2, 4], [9, 5]];
    assert.deepEqual(sorted(rows), { perm: [3, 4, 2, 5], segments: [[2, 2], [9, 2]] });
  });

  it('equals a comparison sort keeping the last row per (series, ts), for any batch', () => {
    const row = fc.tuple(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -5, max: 5 }));
    fc.assert(fc.property(fc.array(row, { maxLength: 80 }), (rows) => assert.deepEqual(sorted(rows), reference(rows))));
  });

  it('refuses non-integer or out-of-range timestamps, infinite values and short columns', () => {
    assert.doesNotThrow(() => validate(batchOf([[1, MAX_TS], [1, -MAX_TS]])));
    assert.throws(() => validate(batchOf([[1, 1.5]])), /invalid timestamp 1.5 at row 0/);
    assert.throws(() => validate(batchOf([[1, 0], [1, MAX_TS + 1]])), /at row 1/);
    const infinite = batchOf([[1, 0]]);
    infinite.value[0] = -Infinity;
    assert.throws(() => validate(infinite), /infinite value at row 0/);
    assert.throws(() => validate({ ...batchOf([[1, 0]]), length: 2 }), /shorter than its length/);
  });
});
