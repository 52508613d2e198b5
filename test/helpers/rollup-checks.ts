// What the rollup suites share: the statistic each rollup names in the reference, and a store
// wrapper that records what computeRollup reads.
import type { RollupSource } from '../../src/values/read/rollup.js';
import type { ReferenceStatistics } from './reference-rollup.js';

/** Every single-statistic rollup and its field in ReferenceStatistics (and in ALL). */
export const STATISTIC_KEY = {
  AVERAGE: 'average',
  ARITHMETIC_MEAN: 'arithmeticMean',
  MINIMUM: 'minimum',
  MAXIMUM: 'maximum',
  SUM: 'sum',
  FIRST: 'first',
  LAST: 'last',
  START: 'start',
  COUNT: 'count',
  DELTA: 'delta',
  INTEGRAL: 'integral',
} as const satisfies Record<string, keyof ReferenceStatistics>;

export type StatisticRollup = keyof typeof STATISTIC_KEY;
export const STATISTICS = Object.keys(STATISTIC_KEY) as StatisticRollup[];

/** The store, recording the bucket ranges and the raw values computeRollup reads. */
export function spy(store: RollupSource): { source: RollupSource; bucketCalls: number[][]; rawTs: number[]; valueAtCalls: number[] } {
  const bucketCalls: number[][] = [];
  const rawTs: number[] = [];
  const valueAtCalls: number[] = [];
  const source: RollupSource = {
    valueAt: (series, t) => {
      valueAtCalls.push(t);
      return store.valueAt(series, t);
    },
    buckets: (series, from, to) => {
      bucketCalls.push([from, to]);
      return store.buckets(series, from, to);
    },
    async *range(series, from, to) {
      for await (const batch of store.range(series, from, to)) {
        for (const v of batch) rawTs.push(v.ts);
        yield batch;
      }
    },
  };
  return { source, bucketCalls, rawTs, valueAtCalls };
}
