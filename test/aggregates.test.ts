// Hourly-aggregate folding and merging (src/store/values/aggregates.ts), which every engine and the
// bucket cache share: checked against definitions written out here, and folding in pieces then
// merging against folding at once.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BucketColumns, BucketFolder, BucketMerger, bucketCeil, bucketOf, foldBuckets } from '../src/store/values/aggregates.js';
import { BUCKET_MS, type BucketAggregate } from '../src/store/values/types.js';
import { mergeColumns } from './helpers/merge-columns.js';

const H = BUCKET_MS;
const T0 = 1000 * H;

function identity(n: number): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => i);
}

/** Folds ascending (ts, value) pairs of one series at once. */
function foldAll(ts: readonly number[], value: readonly number[]): BucketAggregate[] {
  const out = new BucketColumns();
  foldBuckets(out, 1, Float64Array.from(ts), Float64Array.from(value), identity(ts.length), 0, ts.length);
  return mergeColumns(out);
}

/** The aggregates straight from their definitions (types.ts), bucket by bucket. */
function reference(ts: readonly number[], value: readonly number[]): BucketAggregate[] {
  const byBucket = new Map<number, number[]>();
  ts.forEach((t, i) => {
    if (Number.isNaN(value[i])) return;
    const start = Math.floor(t / H) * H;
    byBucket.set(start, [...(byBucket.get(start) ?? []), i]);
  });
  return [...byBucket].map(([start, rows]) => {
    const vs = rows.map((i) => value[i]!);
    let innerIntegral = 0;
    for (let k = 0; k + 1 < rows.length; k++) innerIntegral += value[rows[k]!]! * (ts[rows[k + 1]!]! - ts[rows[k]!]!);
    return {
      start,
      count: rows.length,
      sum: vs.reduce((a, b) => a + b, 0),
      min: Math.min(...vs),
      max: Math.max(...vs),
      firstTs: ts[rows[0]!]!,
      firstValue: vs[0]!,
      lastTs: ts[rows[rows.length - 1]!]!,
      lastValue: vs[vs.length - 1]!,
      innerIntegral,
    };
  });
}

/** Ascending distinct timestamps over a few hours (around 1970 too) with integer values: sums stay exact. */
const series = fc
  .uniqueArray(fc.integer({ min: -3 * H, max: 5 * H }), { minLength: 0, maxLength: 60 })
  .chain((ts) => {
    const sorted = ts.sort((a, b) => a - b);
    return fc.tuple(fc.constant(sorted), fc.array(fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constant(NaN)), { minLength: sorted.length, maxLength: sorted.length }));
  });

describe('hourly aggregates', () => {
  describe('bucket indexes', () => {
    it('floors and ceils by the hour, before 1970 too', () => {
      assert.equal(bucketOf(0), 0);
      assert.equal(bucketOf(H - 1), 0);
      assert.equal(bucketOf(H), 1);
      assert.equal(bucketOf(-1), -1);
      assert.equal(bucketOf(-H), -1);
      assert.equal(bucketCeil(0), 0);
      assert.equal(bucketCeil(1), 1);
      assert.equal(bucketCeil(H), 1);
      assert.equal(bucketCeil(-H), -1);
      assert.equal(bucketCeil(-H - 1), -1);
    });
  });

  describe('folding', () => {
    it('computes count, sum, min, max, first, last and the inner integral per hour, skipping NaN', () => {
      const ts = [T0, T0 + 1_000, T0 + 2_000, T0 + 3_000, T0 + H + 500, T0 + 3 * H, T0 + 3 * H + 10];
      const value = [2, 4, NaN, 1, 10, 7, 8];
      assert.deepEqual(foldAll(ts, value), [
        { start: T0, count: 3, sum: 7, min: 1, max: 4, firstTs: T0, firstValue: 2, lastTs: T0 + 3_000, lastValue: 1, innerIntegral: 2 * 1_000 + 4 * 2_000 },
        { start: T0 + H, count: 1, sum: 10, min: 10, max: 10, firstTs: T0 + H + 500, firstValue: 10, lastTs: T0 + H + 500, lastValue: 10, innerIntegral: 0 },
        { start: T0 + 3 * H, count: 2, sum: 15, min: 7, max: 8, firstTs: T0 + 3 * H, firstValue: 7, lastTs: T0 + 3 * H + 10, lastValue: 8, innerIntegral: 70 },
      ]);
    });

    it('reads rows through the order it is given and keeps series apart, as columns', () => {
      // Rows stored out of order: the order array lists them ascending per series.
      const ts = Float64Array.from([T0 + 20, T0, T0 + 10, T0 + 5]);
      const value = Float64Array.from([3, 1, 2, 9]);
      const order = Uint32Array.from([1, 2, 0, 3]);
      const out = new BucketColumns();
      foldBuckets(out, 7, ts, value, order, 0, 3);
      foldBuckets(out, 8, ts, value, order, 3, 4);
      assert.equal(out.length, 2);
      assert.deepEqual(out.columns(), [
        [7, 8],
        [bucketOf(T0), bucketOf(T0)],
        [3, 1],
        [6, 9],
        [1, 9],
        [3, 9],
        [T0, T0 + 5],
        [1, 9],
        [T0 + 20, T0 + 5],
        [3, 9],
        [1 * 10 + 2 * 10, 0],
      ]);
    });

    it('folds nothing from no rows or only NaN values', () => {
      assert.deepEqual(foldAll([], []), []);
      assert.deepEqual(foldAll([T0, T0 + 1], [NaN, NaN]), []);
    });

    it('equals the definitions for any ascending series', () => {
      fc.assert(fc.property(series, ([ts, value]) => assert.deepEqual(foldAll(ts, value), reference(ts, value))));
    });

    it('a BucketFolder fed consecutive ranges writes exactly the rows of one fold, cut anywhere (also inside an hour)', () => {
      const cuts = fc.uniqueArray(fc.nat({ max: 60 }), { maxLength: 8 });
      fc.assert(
        fc.property(series, cuts, ([ts, value], rawCuts) => {
          const n = ts.length;
          const bounds = [0, ...rawCuts.filter((c) => c < n).sort((a, b) => a - b), n];
          const tsArr = Float64Array.from(ts);
          const valueArr = Float64Array.from(value);
          const pieces = new BucketColumns();
          const folder = new BucketFolder(pieces, 1);
          for (let p = 0; p + 1 < bounds.length; p++) folder.fold(tsArr, valueArr, identity(n), bounds[p]!, bounds[p + 1]!);
          folder.finish();
          const whole = new BucketColumns();
          foldBuckets(whole, 1, tsArr, valueArr, identity(n), 0, n);
          assert.deepEqual(pieces.columns(), whole.columns());
        }),
      );
    });
  });

  describe('merging', () => {
    it('links partial rows of one bucket by the value in force between them', () => {
      const merger = new BucketMerger();
      merger.add(T0, 2, 5, 2, 3, T0 + 10, 2, T0 + 20, 3, 20); // 2 @10, 3 @20
      merger.add(T0, 1, 7, 7, 7, T0 + 50, 7, T0 + 50, 7, 0); // 7 @50: the 3 was in force for 30 ms
      merger.add(T0 + H, 1, 1, 1, 1, T0 + H, 1, T0 + H, 1, 0);
      assert.deepEqual(merger.out, [
        { start: T0, count: 3, sum: 12, min: 2, max: 7, firstTs: T0 + 10, firstValue: 2, lastTs: T0 + 50, lastValue: 7, innerIntegral: 20 + 3 * 30 },
        { start: T0 + H, count: 1, sum: 1, min: 1, max: 1, firstTs: T0 + H, firstValue: 1, lastTs: T0 + H, lastValue: 1, innerIntegral: 0 },
      ]);
    });

    it('folding in pieces, then merging, equals folding at once', () => {
      const cuts = fc.uniqueArray(fc.nat({ max: 60 }), { maxLength: 8 });
      fc.assert(
        fc.property(series, cuts, ([ts, value], rawCuts) => {
          const n = ts.length;
          const bounds = [0, ...rawCuts.filter((c) => c < n).sort((a, b) => a - b), n];
          const tsArr = Float64Array.from(ts);
          const valueArr = Float64Array.from(value);
          const order = identity(n);
          const pieces = new BucketColumns();
          for (let p = 0; p + 1 < bounds.length; p++) foldBuckets(pieces, 1, tsArr, valueArr, order, bounds[p]!, bounds[p + 1]!);
          assert.deepEqual(mergeColumns(pieces), foldAll(ts, value));
        }),
      );
    });
  });
});
