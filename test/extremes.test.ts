// min and max over iterables of any length (core/extremes.ts): where Math.min(...list) throws.
import assert from 'node:assert/strict';
import { maxOf, minOf } from '../src/core/extremes.js';

describe('minOf and maxOf', () => {
  it('agree with Math.min and Math.max, empty and NaN included', () => {
    for (const xs of [[], [3], [2, -1, 5], [1, NaN, 0], [-Infinity, 4]]) {
      assert.deepEqual(minOf(xs), Math.min(...xs), JSON.stringify(xs));
      assert.deepEqual(maxOf(xs), Math.max(...xs), JSON.stringify(xs));
    }
  });

  it('take 1,000,000 values from any iterable, where a spread overflows the stack', () => {
    const values = new Map(Array.from({ length: 1_000_000 }, (_, i) => [i, (i * 7919) % 1_000_003]));
    assert.throws(() => Math.min(...values.values()), RangeError);
    assert.equal(minOf(values.values()), 0);
    const sorted = [...values.values()].sort((a, b) => a - b);
    assert.equal(minOf(values.values()), sorted[0]);
    assert.equal(maxOf(values.values()), sorted[sorted.length - 1]);
  });
});
