// The statistics presenter (src/values/read/statistics.ts): each rollup's value per period in the API's
// form, numeric and not, ALL as members (JSON) and as columns (CSV); and apiStatistic, the data
// type's form of a statistic.
import assert from 'node:assert/strict';
import { computeRollup, type RollupResult } from '../src/values/read/rollup.js';
import { ALL_FIELDS, allowsRollup, apiStatistic, NUMERIC_ONLY, ROLLUPS, StatisticsPresenter, type StatisticField, type StatisticRollup } from '../src/values/read/statistics.js';
import { MemoryValueStore } from './helpers/memory-store.js';
import { STATISTIC_KEY } from './helpers/rollup-checks.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SERIES = 3;

async function rolledUp(writes: { ts: number; value: number | string }[], bounds: Float64Array, endOfData: number, numeric: boolean): Promise<RollupResult> {
  const store = new MemoryValueStore();
  await store.append({
    length: writes.length,
    series: Int32Array.from(writes, () => SERIES),
    ts: Float64Array.from(writes, (w) => w.ts),
    value: Float64Array.from(writes, (w) => (typeof w.value === 'number' ? w.value : NaN)),
    text: writes.map((w) => (typeof w.value === 'string' ? w.value : null)),
    annotation: null,
  });
  return computeRollup(store, SERIES, bounds, endOfData, numeric);
}

/** Every period's statistics as the presenter gives them, by field. */
function presented(presenter: StatisticsPresenter, result: RollupResult, fields: readonly StatisticField[]): Record<string, unknown>[] {
  return Array.from({ length: result.length }, (_, i) => Object.fromEntries(fields.map((f) => [f, presenter.value(result, i, f)])));
}

/** The statistic each single-statistic rollup names (the rollup suites' own table). */
const SINGLE: Record<Exclude<StatisticRollup, 'ALL'>, StatisticField> = STATISTIC_KEY;

describe('StatisticsPresenter', () => {
  // Periods [0, 1 h), [1 h, 2 h), [2 h, 3 h); the last value in force until 2.5 h (as in test/rollup.test.ts).
  const bounds = Float64Array.of(0, HOUR, 2 * HOUR, 3 * HOUR);
  const numericWrites = [
    { ts: -30 * MINUTE, value: 4 },
    { ts: 15 * MINUTE, value: 10 },
    { ts: 45 * MINUTE, value: 20 },
    { ts: 2 * HOUR, value: 6 },
  ];
  const numericPeriods = [
    { average: 11, arithmeticMean: 15, minimum: 4, maximum: 20, sum: 30, first: 10, last: 20, start: 4, count: 2, delta: 16, integral: 39_600 },
    { average: 20, arithmeticMean: null, minimum: 20, maximum: 20, sum: null, first: null, last: null, start: 20, count: 0, delta: 0, integral: 72_000 },
    { average: 6, arithmeticMean: 6, minimum: 6, maximum: 6, sum: 6, first: 6, last: 6, start: 6, count: 1, delta: 0, integral: 10_800 },
  ];

  describe('a NUMERIC point', () => {
    it('gives each single-statistic rollup its one statistic per period, as one column and one member', async () => {
      const result = await rolledUp(numericWrites, bounds, 2.5 * HOUR, true);
      for (const [rollup, field] of Object.entries(SINGLE) as [Exclude<StatisticRollup, 'ALL'>, StatisticField][]) {
        const presenter = new StatisticsPresenter(rollup, 'NUMERIC');
        assert.equal(presenter.all, false, rollup);
        assert.deepEqual(presenter.columns, [field], rollup);
        assert.deepEqual(presenter.members, [field], rollup);
        assert.deepEqual(
          presented(presenter, result, [field]),
          numericPeriods.map((p) => ({ [field]: p[field] })),
          rollup,
        );
      }
    });

    it('gives ALL every statistic, as eleven members and eleven columns', async () => {
      const result = await rolledUp(numericWrites, bounds, 2.5 * HOUR, true);
      const presenter = new StatisticsPresenter('ALL', 'NUMERIC');
      assert.equal(presenter.all, true);
      assert.deepEqual(presenter.members, ALL_FIELDS);
      assert.deepEqual(presenter.columns, ALL_FIELDS);
      assert.deepEqual(presented(presenter, result, presenter.members), numericPeriods);
    });
  });

  describe('non-numeric points (values as stored)', () => {
    // Period [0, 15): idle at the start, run inside; [15, 30): stop inside; [30, 40): nothing inside.
    const stateBounds = Float64Array.of(0, 15, 30, 40);

    it('shows BINARY states as booleans and COUNT as a number', async () => {
      const result = await rolledUp([{ ts: -5, value: 0 }, { ts: 10, value: 1 }, { ts: 20, value: 0 }], stateBounds, 40, false);
      const expected: Record<string, unknown>[] = [
        { first: true, last: true, start: false, count: 1 },
        { first: false, last: false, start: true, count: 1 },
        { first: null, last: null, start: false, count: 0 },
      ];
      for (const rollup of ['FIRST', 'LAST', 'START', 'COUNT'] as const) {
        const field = SINGLE[rollup];
        const presenter = new StatisticsPresenter(rollup, 'BINARY');
        assert.deepEqual(presented(presenter, result, presenter.columns), expected.map((p) => ({ [field]: p[field] })), rollup);
      }
      const all = new StatisticsPresenter('ALL', 'BINARY');
      assert.deepEqual(all.members, ['first', 'last', 'start', 'count']);
      assert.deepEqual(presented(all, result, all.members), expected);
    });

    it('shows ALPHANUMERIC values as text, MULTISTATE values as numbers', async () => {
      const text = await rolledUp([{ ts: -5, value: 'idle' }, { ts: 10, value: 'run' }, { ts: 20, value: 'stop' }], stateBounds, 40, false);
      const all = new StatisticsPresenter('ALL', 'ALPHANUMERIC');
      assert.deepEqual(presented(all, text, all.members), [
        { first: 'run', last: 'run', start: 'idle', count: 1 },
        { first: 'stop', last: 'stop', start: 'run', count: 1 },
        { first: null, last: null, start: 'stop', count: 0 },
      ]);
      const states = await rolledUp([{ ts: 0, value: 3 }, { ts: 10, value: 1 }], Float64Array.of(0, 20), 20, false);
      const multistate = new StatisticsPresenter('ALL', 'MULTISTATE');
      assert.deepEqual(presented(multistate, states, multistate.members), [{ first: 3, last: 1, start: 3, count: 2 }]);
    });

    it("keeps ALL's eleven columns, null where the point has no such statistic", async () => {
      const result = await rolledUp([{ ts: -5, value: 'idle' }, { ts: 10, value: 'run' }], Float64Array.of(0, 20), 20, false);
      const all = new StatisticsPresenter('ALL', 'ALPHANUMERIC');
      assert.deepEqual(all.columns, ALL_FIELDS);
      assert.deepEqual(presented(all, result, all.columns), [
        { average: null, arithmeticMean: null, minimum: null, maximum: null, sum: null, first: 'run', last: 'run', start: 'idle', count: 1, delta: null, integral: null },
      ]);
    });

    it('refuses the numeric-only rollups', () => {
      for (const dataType of ['BINARY', 'MULTISTATE', 'ALPHANUMERIC']) {
        for (const rollup of NUMERIC_ONLY) {
          assert.equal(allowsRollup(dataType, rollup), false, `${dataType} ${rollup}`);
          if (rollup !== 'POINT_DEFAULT') assert.throws(() => new StatisticsPresenter(rollup as StatisticRollup, dataType), RangeError, `${dataType} ${rollup}`);
        }
      }
      for (const rollup of ROLLUPS) assert.equal(allowsRollup('NUMERIC', rollup), true, rollup);
    });
  });
});

describe('apiStatistic', () => {
  const rows: [string, number | string | null, unknown][] = [
    ['NUMERIC', 2.5, 2.5],
    ['NUMERIC', 0, 0],
    ['NUMERIC', null, null],
    ['MULTISTATE', 4, 4],
    ['MULTISTATE', null, null],
    ['BINARY', 1, true],
    ['BINARY', 0, false],
    ['BINARY', null, null],
    ['ALPHANUMERIC', 'on', 'on'],
    ['ALPHANUMERIC', null, null],
  ];
  for (const [dataType, value, expected] of rows) {
    it(`${dataType} ${JSON.stringify(value)} → ${JSON.stringify(expected)}`, () => {
      assert.equal(apiStatistic(dataType, value), expected);
    });
  }
});

describe('StatisticsPresenter.numbers (columnar writers)', () => {
  const asNumber = (v: unknown) => (v === null || typeof v === 'string' ? NaN : typeof v === 'boolean' ? (v ? 1 : 0) : (v as number));

  it('gives every statistic of a range of periods as value() does, NaN for null, for every data type', async () => {
    // Irregular values over 30 hours with gaps, the last in force until 26.5 h: periods of every kind.
    const writes: { ts: number; value: number }[] = [{ ts: -20 * MINUTE, value: 3 }];
    for (let t = 10 * MINUTE; t < 24 * HOUR; t += (7 + ((t / MINUTE) % 53)) * MINUTE) if ((t / HOUR) % 5 >= 1) writes.push({ ts: t, value: ((t / MINUTE) % 13) - 6.5 + t / 1e9 });
    const bounds = Float64Array.from({ length: 31 }, (_, i) => i * HOUR);
    for (const dataType of ['NUMERIC', 'BINARY', 'MULTISTATE', 'ALPHANUMERIC']) {
      const numeric = dataType === 'NUMERIC';
      const typed = writes.map((w) => ({ ts: w.ts, value: dataType === 'BINARY' ? (w.value > 0 ? 1 : 0) : dataType === 'ALPHANUMERIC' ? `s${w.value}` : w.value }));
      const result = await rolledUp(typed, bounds, 26.5 * HOUR, numeric);
      const fields = numeric ? ALL_FIELDS : (['first', 'last', 'start', 'count'] as const);
      for (const field of fields) {
        const presenter = new StatisticsPresenter(numeric ? 'ALL' : 'COUNT', dataType);
        for (const [from, to] of [[0, 30], [3, 17], [29, 30]] as const) {
          const out = presenter.numbers(result, field, from, to, new Float64Array(to - from));
          for (let i = from; i < to; i++) {
            const expected = asNumber(presenter.value(result, i, field));
            assert.ok(Object.is(out[i - from], expected), `${dataType} ${field} period ${i}: ${out[i - from]}, expected ${expected}`);
          }
        }
      }
    }
  });
});
