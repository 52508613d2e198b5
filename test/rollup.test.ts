// The rollup engine (src/values/read/rollup.ts): hand-computed examples of the statistics, the
// planner's use of buckets, and property tests against the plain reference implementation
// (test/helpers/reference-rollup.ts) over the in-memory store.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PERIOD_TYPES, planPeriods, type PeriodSpec, type PeriodType } from '../src/values/read/periods.js';
import { computeRollup, rollupInChunks, type RollupResult } from '../src/values/read/rollup.js';
import { NUMERIC_ONLY, ROLLUPS, statisticOf } from '../src/values/read/statistics.js';
import { BUCKET_MS } from '../src/store/values/types.js';
import { MemoryValueStore } from './helpers/memory-store.js';
import {
  effectiveSeries,
  referenceRollup,
  referenceStoredRollup,
  type ReferenceStatistics,
  type TimedValue,
} from './helpers/reference-rollup.js';
import { allBounds } from './helpers/period-bounds.js';
import { spy, STATISTIC_KEY, STATISTICS } from './helpers/rollup-checks.js';
import { turnCounter } from './helpers/wait.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SERIES = 7;
const OTHER_SERIES = 8;

const STORED_ROLLUPS = ['FIRST', 'LAST', 'START', 'COUNT', 'ALL'] as const;

async function write(store: MemoryValueStore, series: number, writes: readonly TimedValue<number | string>[], chunk = 1000): Promise<void> {
  for (let i = 0; i < writes.length; i += chunk) {
    const part = writes.slice(i, i + chunk);
    const hasText = part.some((w) => typeof w.value === 'string');
    await store.append({
      length: part.length,
      series: Int32Array.from(part, () => series),
      ts: Float64Array.from(part, (w) => w.ts),
      value: Float64Array.from(part, (w) => (typeof w.value === 'number' ? w.value : NaN)),
      text: hasText ? part.map((w) => (typeof w.value === 'string' ? w.value : null)) : null,
      annotation: null,
    });
  }
}

async function storeWith(writes: readonly TimedValue<number | string>[], options: { chunk?: number; batchSize?: number } = {}): Promise<MemoryValueStore> {
  const store = new MemoryValueStore(options.batchSize);
  await write(store, SERIES, writes, options.chunk);
  // Another series in the same store must not leak in.
  await write(store, OTHER_SERIES, [{ ts: 0, value: 1e6 }, { ts: 10 * 365 * DAY, value: -1e6 }]);
  return store;
}


function close(actual: unknown, expected: unknown, what: string): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    const tolerance = 1e-9 * Math.max(1, Math.abs(expected), Math.abs(actual));
    assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} differs from ${expected}`);
  } else {
    assert.deepEqual(actual, expected, what);
  }
}

function assertMatchesReference(result: RollupResult, expected: ReferenceStatistics[], context: string): void {
  assert.equal(result.length, expected.length, `${context}: periods`);
  for (let i = 0; i < result.length; i++) {
    const want = expected[i] as ReferenceStatistics;
    for (const rollup of STATISTICS) close(statisticOf(result, i, rollup, true), want[STATISTIC_KEY[rollup]], `${context}, period ${i}, ${rollup}`);
    const all = statisticOf(result, i, 'ALL', true) as unknown as Record<string, unknown>;
    assert.deepEqual(Object.keys(all).sort(), Object.keys(want).sort(), `${context}, period ${i}, ALL keys`);
    for (const [key, value] of Object.entries(want)) close(all[key], value, `${context}, period ${i}, ALL.${key}`);
  }
}

function assertSameResults(actual: RollupResult, expected: RollupResult, context: string): void {
  assert.deepEqual([...actual.bounds], [...expected.bounds]);
  for (let i = 0; i < expected.length; i++) {
    for (const rollup of [...STATISTICS, 'ALL' as const]) {
      const want = statisticOf(expected, i, rollup, true);
      const got = statisticOf(actual, i, rollup, true);
      if (rollup !== 'ALL') close(got, want, `${context}, period ${i}, ${rollup}`);
      else for (const [key, value] of Object.entries(want as object)) close((got as unknown as Record<string, unknown>)[key], value, `${context}, period ${i}, ALL.${key}`);
    }
  }
}

function statisticsOf(result: RollupResult, i: number): Record<string, unknown> {
  return statisticOf(result, i, 'ALL', true) as unknown as Record<string, unknown>;
}

/** Every period of the chunks, in order, as ALL gives it; and the bounds they cover. */
async function chunked(store: MemoryValueStore, spec: PeriodSpec, endOfData: number, numeric: boolean, chunkPeriods: number) {
  const periods: unknown[] = [];
  const bounds: number[] = [];
  for await (const result of rollupInChunks(store, SERIES, planPeriods(spec), endOfData, numeric, { chunkPeriods })) {
    assert.ok(result.length >= 1 && result.length <= chunkPeriods, `a chunk of ${result.length} periods`);
    if (bounds.length > 0) assert.equal(result.bounds[0], bounds.pop(), 'a chunk starts where the previous one ended');
    bounds.push(...result.bounds);
    for (let i = 0; i < result.length; i++) periods.push(statisticOf(result, i, 'ALL', numeric));
  }
  return { periods, bounds };
}

describe('rollups', () => {
  it('lists the contract rollups, and the ones a non-numeric point cannot have', () => {
    assert.deepEqual(ROLLUPS, ['NONE', 'AVERAGE', 'ARITHMETIC_MEAN', 'MINIMUM', 'MAXIMUM', 'SUM', 'FIRST', 'LAST', 'START', 'COUNT', 'DELTA', 'INTEGRAL', 'ALL', 'POINT_DEFAULT']);
    assert.deepEqual(
      ROLLUPS.filter((r) => !NUMERIC_ONLY.has(r)),
      ['NONE', 'FIRST', 'LAST', 'START', 'COUNT', 'ALL'],
    );
  });

  describe('statistics, by example', () => {
    // Periods [0, 1 h), [1 h, 2 h), [2 h, 3 h); the last value in force until 2.5 h.
    const bounds = Float64Array.of(0, HOUR, 2 * HOUR, 3 * HOUR);
    const writes = [
      { ts: -30 * MINUTE, value: 4 },
      { ts: 15 * MINUTE, value: 10 },
      { ts: 45 * MINUTE, value: 20 },
      { ts: 2 * HOUR, value: 6 },
    ];

    it('weighs each value by how long it was in force, the start value from the period start', async () => {
      const result = await computeRollup(await storeWith(writes), SERIES, bounds, 2.5 * HOUR, true);
      // 4 for 15 min, 10 for 30 min, 20 for 15 min.
      assert.deepEqual(statisticsOf(result, 0), {
        average: 11,
        arithmeticMean: 15,
        minimum: 4,
        maximum: 20,
        sum: 30,
        first: 10,
        last: 20,
        start: 4,
        count: 2,
        delta: 16,
        integral: (4 * 15 + 10 * 30 + 20 * 15) * 60,
      });
    });

    it('carries the value in force through a period without values', async () => {
      const result = await computeRollup(await storeWith(writes), SERIES, bounds, 2.5 * HOUR, true);
      assert.deepEqual(statisticsOf(result, 1), {
        average: 20,
        arithmeticMean: null,
        minimum: 20,
        maximum: 20,
        sum: null,
        first: null,
        last: null,
        start: 20,
        count: 0,
        delta: 0,
        integral: 20 * 3600,
      });
    });

    it('takes a value exactly at the period start as both start and inside value, in force until the end of data', async () => {
      const result = await computeRollup(await storeWith(writes), SERIES, bounds, 2.5 * HOUR, true);
      assert.deepEqual(statisticsOf(result, 2), {
        average: 6,
        arithmeticMean: 6,
        minimum: 6,
        maximum: 6,
        sum: 6,
        first: 6,
        last: 6,
        start: 6,
        count: 1,
        delta: 0,
        integral: 6 * 1800,
      });
    });

    it('starts the in-force window at the first inside value when nothing was in force at the start', async () => {
      const store = await storeWith([
        { ts: 20 * MINUTE, value: 10 },
        { ts: 40 * MINUTE, value: 40 },
      ]);
      const result = await computeRollup(store, SERIES, Float64Array.of(0, HOUR), 10 * HOUR, true);
      assert.deepEqual(statisticsOf(result, 0), {
        average: 25,
        arithmeticMean: 25,
        minimum: 10,
        maximum: 40,
        sum: 50,
        first: 10,
        last: 40,
        start: null,
        count: 2,
        delta: 30,
        integral: (10 * 20 + 40 * 20) * 60,
      });
    });

    it('has no average but a zero integral for a period after the end of data', async () => {
      const result = await computeRollup(await storeWith([{ ts: 0, value: 5 }]), SERIES, Float64Array.of(0, HOUR, 2 * HOUR), HOUR, true);
      assert.deepEqual(statisticsOf(result, 1), {
        average: null,
        arithmeticMean: null,
        minimum: 5,
        maximum: 5,
        sum: null,
        first: null,
        last: null,
        start: 5,
        count: 0,
        delta: 0,
        integral: 0,
      });
    });

    it('says nothing but a zero count where no value was ever in force', async () => {
      const result = await computeRollup(await storeWith([{ ts: 5 * HOUR, value: 5 }]), SERIES, Float64Array.of(0, HOUR), HOUR, true);
      assert.deepEqual(statisticsOf(result, 0), {
        average: null,
        arithmeticMean: null,
        minimum: null,
        maximum: null,
        sum: null,
        first: null,
        last: null,
        start: null,
        count: 0,
        delta: null,
        integral: null,
      });
    });

    it('counts values after the end of data as inside values but not in the time-weighted statistics', async () => {
      const store = await storeWith([
        { ts: 0, value: 2 },
        { ts: 45 * MINUTE, value: 100 },
      ]);
      const result = await computeRollup(store, SERIES, Float64Array.of(0, HOUR), 30 * MINUTE, true);
      const all = statisticsOf(result, 0);
      assert.equal(all.average, 2);
      assert.equal(all.integral, 2 * 1800);
      assert.equal(all.count, 2);
      assert.equal(all.maximum, 100);
    });

    it('skips rows without a numeric value for a numeric point, as the buckets do', async () => {
      const store = await storeWith([
        { ts: 0, value: 2 },
        { ts: 30 * MINUTE, value: 'text' },
      ]);
      const result = await computeRollup(store, SERIES, Float64Array.of(0, HOUR), HOUR, true);
      assert.equal(statisticOf(result, 0, 'COUNT', true), 1);
      assert.equal(statisticOf(result, 0, 'AVERAGE', true), 2);
    });

    it('gives each period its start and end for the HTTP layer', async () => {
      const result = await computeRollup(await storeWith(writes), SERIES, bounds, 2.5 * HOUR, true);
      assert.equal(result.length, 3);
      assert.deepEqual([result.start(0), result.end(0), result.start(2), result.end(2)], [0, HOUR, 2 * HOUR, 3 * HOUR]);
    });
  });

  describe('non-numeric points', () => {
    const writes = [
      { ts: -5, value: 'idle' },
      { ts: 10, value: 'run' },
      { ts: 20, value: 'stop' },
    ];

    it('returns first, last, start and count with values as stored', async () => {
      const result = await computeRollup(await storeWith(writes), SERIES, Float64Array.of(0, 15, 30, 40), 40, false);
      assert.deepEqual(
        [0, 1, 2].map((i) => statisticOf(result, i, 'ALL', false)),
        [
          { first: 'run', last: 'run', start: 'idle', count: 1 },
          { first: 'stop', last: 'stop', start: 'run', count: 1 },
          { first: null, last: null, start: 'stop', count: 0 },
        ],
      );
      assert.equal(statisticOf(result, 0, 'FIRST', false), 'run');
      assert.equal(statisticOf(result, 1, 'START', false), 'run');
      assert.equal(statisticOf(result, 2, 'LAST', false), null);
      assert.equal(statisticOf(result, 2, 'COUNT', false), 0);
    });

    it('returns numbers as stored for a numeric type the caller treats as non-numeric (MULTISTATE)', async () => {
      const store = await storeWith([
        { ts: 0, value: 3 },
        { ts: 10, value: 1 },
      ]);
      const result = await computeRollup(store, SERIES, Float64Array.of(0, 20), 20, false);
      assert.deepEqual(statisticOf(result, 0, 'ALL', false), { first: 3, last: 1, start: 3, count: 2 });
    });

    it('refuses the numeric-only rollups with a RangeError', async () => {
      const result = await computeRollup(await storeWith(writes), SERIES, Float64Array.of(0, 30), 30, false);
      for (const rollup of NUMERIC_ONLY) {
        if (rollup === 'POINT_DEFAULT') continue;
        assert.throws(() => statisticOf(result, 0, rollup, false), RangeError, rollup);
      }
    });
  });

  describe('statisticOf', () => {
    it('refuses NONE and POINT_DEFAULT, which the caller resolves, and a numeric flag unlike the computation', async () => {
      const result = await computeRollup(await storeWith([{ ts: 0, value: 1 }]), SERIES, Float64Array.of(0, 10), 10, true);
      assert.throws(() => statisticOf(result, 0, 'NONE', true));
      assert.throws(() => statisticOf(result, 0, 'POINT_DEFAULT', true));
      assert.throws(() => statisticOf(result, 0, 'FIRST', false));
    });
  });

  describe('computeRollup arguments', () => {
    it('rejects bounds that do not increase or make no period', async () => {
      const store = await storeWith([]);
      await assert.rejects(computeRollup(store, SERIES, Float64Array.of(0), 0, true), RangeError);
      await assert.rejects(computeRollup(store, SERIES, Float64Array.of(0, 10, 10), 0, true), RangeError);
    });
  });

  describe('planner', () => {
    const yearStart = Date.UTC(2023, 0, 1);
    // One value every 20 minutes over 2023, a saw tooth.
    const yearOfValues = Array.from({ length: 365 * 72 }, (_, i) => ({ ts: yearStart + i * 20 * MINUTE + (i % 7) * SECOND, value: (i % 50) - 10 + i / 1000 }));
    let yearStore: MemoryValueStore;

    before(async () => {
      yearStore = await storeWith(yearOfValues);
    });

    it('takes the value in force at from from the bucket read: the hour before, or a value at from itself', async () => {
      const day = Date.UTC(2023, 5, 1);
      const bounds = allBounds({ from: day, to: day + 24 * HOUR, type: 'HOURS', count: 1, zone: 'UTC', truncate: false });
      const before = spy(yearStore);
      const result = await computeRollup(before.source, SERIES, bounds, Date.UTC(2024, 6, 1), true);
      assert.deepEqual(before.valueAtCalls, [], 'the hour before from holds values');
      assertSameResults(result, await computeRollup(yearStore, SERIES, bounds, Date.UTC(2024, 6, 1), true, { useBuckets: false }), 'from the hour before');
      const atFrom = await storeWith([{ ts: day, value: 5 }, { ts: day + 90 * MINUTE, value: 7 }]);
      const exact = spy(atFrom);
      const exactResult = await computeRollup(exact.source, SERIES, bounds, Date.UTC(2024, 6, 1), true);
      assert.deepEqual(exact.valueAtCalls, [], 'a value at from is the value in force');
      assertSameResults(exactResult, await computeRollup(atFrom, SERIES, bounds, Date.UTC(2024, 6, 1), true, { useBuckets: false }), 'value at from');
    });

    it('answers a year of hourly periods from 8,760 buckets without reading a raw value', async () => {
      const bounds = allBounds({ from: yearStart, to: Date.UTC(2024, 0, 1), type: 'HOURS', count: 1, zone: 'UTC', truncate: false });
      const { source, bucketCalls, rawTs, valueAtCalls } = spy(yearStore);
      const result = await computeRollup(source, SERIES, bounds, Date.UTC(2024, 6, 1), true);
      assert.equal(result.length, 8760);
      assert.deepEqual(valueAtCalls, [], 'the first value is at from: it is the value in force');
      assert.deepEqual(bucketCalls, [[yearStart - HOUR, Date.UTC(2024, 0, 1)]], "the hour before from gives the value in force");
      assert.equal(rawTs.length, 0);
      assertSameResults(result, await computeRollup(yearStore, SERIES, bounds, Date.UTC(2024, 6, 1), true, { useBuckets: false }), 'hourly');
    });

    it('reads raw values only from the hour holding the end of data on', async () => {
      const endOfData = Date.UTC(2023, 5, 10, 13, 25);
      const bounds = allBounds({ from: yearStart, to: Date.UTC(2024, 0, 1), type: 'DAYS', count: 1, zone: 'Europe/Berlin', truncate: true });
      assert.ok(bounds.every((t) => t % BUCKET_MS === 0), 'every bound on an hour');
      const { source, rawTs } = spy(yearStore);
      const result = await computeRollup(source, SERIES, bounds, endOfData, true);
      assert.ok(rawTs.length > 0 && rawTs.every((ts) => ts >= Date.UTC(2023, 5, 10, 13)));
      assertSameResults(result, await computeRollup(yearStore, SERIES, bounds, endOfData, true, { useBuckets: false }), 'daily');
    });

    it('uses buckets up to the last whole hour when only to is off the hour', async () => {
      const to = Date.UTC(2023, 2, 1, 7, 41);
      const bounds = allBounds({ from: yearStart, to, type: 'HOURS', count: 6, zone: 'UTC', truncate: false });
      const { source, bucketCalls, rawTs } = spy(yearStore);
      const result = await computeRollup(source, SERIES, bounds, to, true);
      assert.deepEqual(bucketCalls, [[yearStart - HOUR, Date.UTC(2023, 2, 1, 7)]]);
      assert.ok(rawTs.every((ts) => ts >= Date.UTC(2023, 2, 1, 7)));
      assertSameResults(result, await computeRollup(yearStore, SERIES, bounds, to, true, { useBuckets: false }), 'to off the hour');
    });

    it('reads raw values when the periods do not start on an hour', async () => {
      const bounds = allBounds({ from: yearStart + 30 * MINUTE, to: yearStart + 5 * DAY, type: 'HOURS', count: 1, zone: 'UTC', truncate: false });
      const { source, bucketCalls } = spy(yearStore);
      await computeRollup(source, SERIES, bounds, yearStart + 10 * DAY, true);
      assert.equal(bucketCalls.length, 0);
    });

    it('never uses buckets for a non-numeric point', async () => {
      const bounds = allBounds({ from: yearStart, to: yearStart + 2 * DAY, type: 'HOURS', count: 1, zone: 'UTC', truncate: false });
      const { source, bucketCalls } = spy(yearStore);
      const result = await computeRollup(source, SERIES, bounds, yearStart + 3 * DAY, false);
      assert.equal(bucketCalls.length, 0);
      assert.equal(statisticOf(result, 1, 'COUNT', false), 3);
    });
  });

  describe('properties', () => {
    const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'];
    // DST changes and month ends, to put periods and values around them.
    const ANCHORS = [
      Date.UTC(2024, 2, 31, 1),
      Date.UTC(2024, 9, 27, 1),
      Date.UTC(2024, 2, 10, 7),
      Date.UTC(2024, 10, 3, 6),
      Date.UTC(2024, 3, 6, 15, 30),
      Date.UTC(2024, 0, 31, 12),
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
    ];
    const NOMINAL_MS: Record<PeriodType, number> = { MILLISECONDS: 1, SECONDS: SECOND, MINUTES: MINUTE, HOURS: HOUR, DAYS: DAY, WEEKS: 7 * DAY, MONTHS: 30 * DAY, YEARS: 365 * DAY };

    const anySpec = fc
      .record({
        anchor: fc.constantFrom(...ANCHORS),
        shift: fc.integer({ min: -2 * DAY, max: 2 * DAY }),
        type: fc.option(fc.constantFrom(...PERIOD_TYPES), { nil: undefined }),
        count: fc.integer({ min: 1, max: 3 }),
        steps: fc.double({ min: 0.05, max: 12, noNaN: true }),
        zone: fc.constantFrom(...ZONES),
        truncate: fc.boolean(),
      })
      .map(({ anchor, shift, type, count, steps, zone, truncate }): PeriodSpec => {
        const from = anchor + shift;
        const to = from + Math.max(1, Math.round(steps * count * (type ? NOMINAL_MS[type] : DAY)));
        return { from, to, type, count, zone, truncate };
      });
    const anyBounds = anySpec.map((spec) => allBounds(spec));

    // Periods starting on an hour: aligned throughout (hours, and days in whole-hour zones), or only up
    // to some bound (90-minute periods; days across Lord Howe's half-hour DST change).
    const hourStartBounds = fc
      .record({
        hour: fc.integer({ min: 0, max: 24 * 400 }),
        kind: fc.constantFrom(
          { type: 'HOURS' as const, zone: 'UTC', truncate: true, unitCount: 1 },
          { type: 'HOURS' as const, zone: 'Europe/Berlin', truncate: true, unitCount: 1 },
          { type: 'HOURS' as const, zone: 'America/New_York', truncate: true, unitCount: 1 },
          { type: 'DAYS' as const, zone: 'UTC', truncate: true, unitCount: 1 },
          { type: 'DAYS' as const, zone: 'Europe/Berlin', truncate: true, unitCount: 1 },
          { type: 'MINUTES' as const, zone: 'UTC', truncate: false, unitCount: 90 },
          { type: 'DAYS' as const, zone: 'Australia/Lord_Howe', truncate: false, unitCount: 1 },
        ),
        count: fc.integer({ min: 1, max: 3 }),
        periods: fc.integer({ min: 1, max: 30 }),
      })
      .map(({ hour, kind, count, periods }) => {
        const from = Date.UTC(2024, 0, 1) + hour * HOUR;
        const periodCount = count * kind.unitCount;
        const to = from + periods * periodCount * NOMINAL_MS[kind.type];
        return allBounds({ from, to, type: kind.type, count: periodCount, zone: kind.zone, truncate: kind.truncate });
      });

    const numericValue = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1000, max: 1000, noNaN: true }));

    /** Writes in arrival order (duplicates and out-of-order included) around the bounds, and an end of data. */
    function scenarioAround<T>(bounds: Float64Array, value: fc.Arbitrary<T>) {
      const from = bounds[0] as number;
      const to = bounds.at(-1) as number;
      const span = to - from;
      const n = bounds.length - 1;
      const bound = fc.integer({ min: 0, max: n }).map((k) => bounds[k] as number);
      const ts = fc.oneof(
        fc.integer({ min: Math.floor(from - span / 2), max: Math.ceil(to + span / 2) }),
        fc.tuple(bound, fc.integer({ min: -1, max: 1 })).map(([t, d]) => t + d),
        fc.tuple(bound, fc.integer({ min: 0, max: 2 * HOUR })).map(([t, d]) => t + d),
      );
      const endOfData = fc.oneof(
        fc.integer({ min: from, max: to }),
        fc.integer({ min: Math.floor(from - span), max: from }),
        fc.integer({ min: to, max: Math.ceil(to + span) }),
        fc.constant(to),
        bound,
      );
      return fc.record({
        bounds: fc.constant(bounds),
        writes: fc.array(fc.record({ ts, value }), { maxLength: 80 }),
        endOfData,
        chunk: fc.integer({ min: 1, max: 20 }),
        batchSize: fc.integer({ min: 1, max: 16 }),
      });
    }

    function scenario<T>(boundsArb: fc.Arbitrary<Float64Array>, value: fc.Arbitrary<T>) {
      return boundsArb.chain((bounds) => scenarioAround(bounds, value));
    }

    it('equals the reference for every rollup over random irregular series, periods, zones and ends of data', async () => {
      await fc.assert(
        fc.asyncProperty(scenario(anyBounds, numericValue), async ({ bounds, writes, endOfData, chunk, batchSize }) => {
          const store = await storeWith(writes, { chunk, batchSize });
          const result = await computeRollup(store, SERIES, bounds, endOfData, true);
          assertMatchesReference(result, referenceRollup(effectiveSeries(writes), bounds, endOfData), 'rollup');
        }),
        { numRuns: 400 },
      );
    });

    it('gives on the bucket path what the raw path gives, for periods starting on an hour', async () => {
      await fc.assert(
        fc.asyncProperty(scenario(hourStartBounds, numericValue), async ({ bounds, writes, endOfData, chunk, batchSize }) => {
          assert.equal((bounds[0] as number) % BUCKET_MS, 0);
          const store = await storeWith(writes, { chunk, batchSize });
          const { source, rawTs } = spy(store);
          const withBuckets = await computeRollup(source, SERIES, bounds, endOfData, true);
          const raw = await computeRollup(store, SERIES, bounds, endOfData, true, { useBuckets: false });
          assertSameResults(withBuckets, raw, 'buckets vs raw');
          assertMatchesReference(withBuckets, referenceRollup(effectiveSeries(writes), bounds, endOfData), 'buckets vs reference');
          if (bounds.every((t) => t % BUCKET_MS === 0)) {
            const rawFrom = Math.max(bounds[0] as number, Math.floor(endOfData / BUCKET_MS) * BUCKET_MS);
            assert.ok(
              rawTs.every((ts) => ts >= rawFrom),
              'raw values read before the hour of the end of data',
            );
          }
        }),
        { numRuns: 300 },
      );
    });

    it('equals the reference for non-numeric points, values as stored', async () => {
      const text = fc.constantFrom('on', 'off', 'fault', '');
      await fc.assert(
        fc.asyncProperty(scenario(anyBounds, text), async ({ bounds, writes, endOfData, chunk, batchSize }) => {
          const store = await storeWith(writes, { chunk, batchSize });
          const result = await computeRollup(store, SERIES, bounds, endOfData, false);
          const expected = referenceStoredRollup(effectiveSeries(writes), bounds);
          for (let i = 0; i < result.length; i++) {
            const want = expected[i] as (typeof expected)[number];
            assert.deepEqual(statisticOf(result, i, 'ALL', false), want, `period ${i}`);
            for (const rollup of STORED_ROLLUPS) {
              if (rollup !== 'ALL') assert.deepEqual(statisticOf(result, i, rollup, false), want[rollup.toLowerCase() as keyof typeof want]);
            }
          }
        }),
        { numRuns: 200 },
      );
    });

    it('gives in chunks of periods exactly what one piece gives, numeric and not, whatever the chunk size', async () => {
      // Integer values: every sum and integral is exact, so any difference is a real one.
      const integer = fc.integer({ min: -1000, max: 1000 });
      const text = fc.constantFrom('on', 'off', 'fault');
      const cases = fc.boolean().chain((numeric) =>
        anySpec.chain((spec) =>
          fc.record({
            numeric: fc.constant(numeric),
            spec: fc.constant(spec),
            chunkPeriods: fc.integer({ min: 1, max: 7 }),
            s: scenarioAround(allBounds(spec), numeric ? (integer as fc.Arbitrary<number | string>) : text),
          }),
        ),
      );
      await fc.assert(
        fc.asyncProperty(cases, async ({ numeric, spec, chunkPeriods, s }) => {
          const store = await storeWith(s.writes, { chunk: s.chunk, batchSize: s.batchSize });
          const whole = await computeRollup(store, SERIES, s.bounds, s.endOfData, numeric);
          const { periods, bounds } = await chunked(store, spec, s.endOfData, numeric, chunkPeriods);
          assert.deepEqual(bounds, [...s.bounds], 'the chunks cover the bounds');
          assert.deepEqual(
            periods,
            Array.from({ length: whole.length }, (_, i) => statisticOf(whole, i, 'ALL', numeric)),
          );
        }),
        { numRuns: 400 },
      );
    });
  });

  describe('in chunks of periods (rollupInChunks)', () => {
    it('carries the value in force across chunk boundaries: START, AVERAGE, MINIMUM in every period', async () => {
      const from = Date.UTC(2024, 0, 1);
      const store = await storeWith([{ ts: from - 30 * DAY, value: 42 }]);
      const spec: PeriodSpec = { from, to: from + 10 * HOUR, type: 'HOURS', count: 1, zone: 'UTC', truncate: false };
      const { periods } = await chunked(store, spec, from + 10 * HOUR, true, 3);
      assert.equal(periods.length, 10);
      for (const p of periods as Record<string, unknown>[]) {
        assert.deepEqual([p.start, p.average, p.minimum, p.maximum, p.count, p.delta, p.integral], [42, 42, 42, 42, 0, 0, 42 * 3600]);
      }
    });

    it('answers AVERAGE, START and DELTA at a boundary from the value in force there, on the bucket and the raw path', async () => {
      const from = Date.UTC(2024, 0, 1);
      // Hour 2 (the first of the second chunk of 2) starts with 10 in force, gets 30 at 2:30.
      const writes = [
        { ts: from + 90 * MINUTE, value: 10 },
        { ts: from + 150 * MINUTE, value: 30 },
        { ts: from + 200 * MINUTE, value: 20 },
      ];
      const store = await storeWith(writes);
      for (const [label, shift] of [
        ['on the hour (buckets)', 0],
        ['off the hour (raw values)', 7 * SECOND],
      ] as const) {
        const spec: PeriodSpec = { from: from + shift, to: from + shift + 4 * HOUR, type: 'HOURS', count: 1, zone: 'UTC', truncate: false };
        const end = from + 10 * HOUR;
        const { periods } = await chunked(store, spec, end, true, 2);
        const expected = referenceRollup(writes, allBounds(spec), end);
        assert.equal(periods.length, 4);
        (periods as Record<string, unknown>[]).forEach((p, i) => {
          for (const key of ['average', 'start', 'delta', 'minimum', 'integral', 'count'] as const) close(p[key], expected[i]![key], `${label}, period ${i}, ${key}`);
        });
        assert.equal((periods[2] as Record<string, unknown>).start, 10, `${label}: START of the chunk's first period`);
      }
    });

    it('splits calendar periods across DST changes without moving a bound (Europe/Berlin DAYS)', async () => {
      const zone = 'Europe/Berlin';
      // Chunks of 3 local days from 2024-03-28: the second chunk starts on 31 March, the 23-hour day.
      const from = Date.parse('2024-03-28T00:00:00+01:00');
      const to = Date.parse('2024-04-04T00:00:00+02:00');
      const writes = [
        { ts: from - HOUR, value: 1 },
        { ts: Date.parse('2024-03-30T23:30:00+01:00'), value: 5 },
        { ts: Date.parse('2024-03-31T03:30:00+02:00'), value: 9 },
        { ts: Date.parse('2024-04-02T12:00:00+02:00'), value: 2 },
      ];
      const store = await storeWith(writes);
      const spec: PeriodSpec = { from, to, type: 'DAYS', count: 1, zone, truncate: false };
      const { periods, bounds } = await chunked(store, spec, to, true, 3);
      assert.deepEqual(bounds, [...allBounds(spec)]);
      assert.equal(bounds[4]! - bounds[3]!, 23 * HOUR, 'the DST day keeps its 23 hours');
      const expected = referenceRollup(writes, bounds, to);
      (periods as Record<string, unknown>[]).forEach((p, i) => {
        for (const [key, value] of Object.entries(expected[i]!)) close(p[key], value, `day ${i}, ${key}`);
      });
    });

    it('yields to the event loop between chunks, even when the store answers without I/O', async () => {
      const from = Date.UTC(2024, 0, 1);
      const store = await storeWith([{ ts: from, value: 1 }]);
      const counter = turnCounter();
      const spec: PeriodSpec = { from, to: from + 20 * HOUR, type: 'HOURS', count: 1, zone: 'UTC', truncate: false };
      let chunks = 0;
      for await (const result of rollupInChunks(store, SERIES, planPeriods(spec), from + 20 * HOUR, true, { chunkPeriods: 2 })) {
        assert.equal(result.length, 2);
        chunks++;
      }
      const turns = counter.stop();
      assert.equal(chunks, 10);
      // The in-memory store answers in microtasks: only the yields between chunks let the other turns run.
      assert.ok(turns >= 9, `${turns} other turns ran during 10 chunks`);
    });
  });
});
