// Rollup period boundaries (src/values/read/periods.ts): fixed and calendar steps, DST, month ends,
// truncation per type, limits.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { PERIOD_TYPES, planPeriods, type PeriodSpec } from '../src/values/read/periods.js';
import { allBounds } from './helpers/period-bounds.js';

const HOUR = 3_600_000;
const at = (iso: string) => {
  const ms = Date.parse(iso);
  assert.ok(!Number.isNaN(ms), iso);
  return ms;
};
const bounds = (spec: Partial<PeriodSpec> & Pick<PeriodSpec, 'from' | 'to'>) => [...allBounds({ count: 1, zone: 'UTC', truncate: false, ...spec })];
const isoIn = (zone: string) => (ms: number) => DateTime.fromMillis(ms, { zone }).toISO();
const hoursBetween = (b: number[]) => b.slice(1).map((t, i) => (t - (b[i] as number)) / HOUR);

describe('period bounds (planPeriods, all in one chunk)', () => {
  describe('without a period type', () => {
    it('makes the whole range one period', () => {
      assert.deepEqual(bounds({ from: 1000, to: 5000 }), [1000, 5000]);
    });

    it('moves nothing on truncate', () => {
      assert.deepEqual(bounds({ from: 1234, to: 5678, truncate: true, zone: 'Europe/Berlin' }), [1234, 5678]);
    });
  });

  describe('fixed steps', () => {
    it('starts at from, steps by count × type and ends the last period at to', () => {
      const from = at('2024-01-01T00:10:00Z');
      assert.deepEqual(bounds({ from, to: from + 3.5 * HOUR, type: 'HOURS' }), [0, 1, 2, 3, 3.5].map((h) => from + h * HOUR));
      assert.deepEqual(bounds({ from, to: from + 5 * HOUR, type: 'HOURS', count: 2 }), [0, 2, 4, 5].map((h) => from + h * HOUR));
      assert.deepEqual(bounds({ from: 0, to: 2500, type: 'SECONDS' }), [0, 1000, 2000, 2500]);
      assert.deepEqual(bounds({ from: 0, to: 150_000, type: 'MINUTES', count: 1 }), [0, 60_000, 120_000, 150_000]);
      assert.deepEqual(bounds({ from: 5, to: 9, type: 'MILLISECONDS', count: 3 }), [5, 8, 9]);
    });

    it('steps HOURS as absolute hours across a DST change', () => {
      const zone = 'Europe/Berlin';
      const from = at('2024-03-31T00:00:00+01:00');
      const b = bounds({ from, to: from + 4 * HOUR, type: 'HOURS', zone });
      assert.deepEqual(hoursBetween(b), [1, 1, 1, 1]);
      assert.deepEqual(b.map(isoIn(zone)), [
        '2024-03-31T00:00:00.000+01:00',
        '2024-03-31T01:00:00.000+01:00',
        '2024-03-31T03:00:00.000+02:00',
        '2024-03-31T04:00:00.000+02:00',
        '2024-03-31T05:00:00.000+02:00',
      ]);
    });

    it('puts hourly periods of a half-hour zone (Asia/Kolkata) on its local hours when truncating', () => {
      const zone = 'Asia/Kolkata';
      const b = bounds({ from: at('2024-01-01T10:47:00Z'), to: at('2024-01-01T13:05:00Z'), type: 'HOURS', zone, truncate: true });
      assert.deepEqual(b, ['10:30', '11:30', '12:30', '13:30'].map((hm) => at(`2024-01-01T${hm}:00Z`)));
      assert.deepEqual(b.map(isoIn(zone)), [
        '2024-01-01T16:00:00.000+05:30',
        '2024-01-01T17:00:00.000+05:30',
        '2024-01-01T18:00:00.000+05:30',
        '2024-01-01T19:00:00.000+05:30',
      ]);
      assert.ok(b.some((t) => t % HOUR !== 0), 'bounds off the UTC hour: no whole buckets');
    });

    it('keeps from where it is in a half-hour zone without truncate', () => {
      const from = at('2024-01-01T10:47:00Z');
      assert.deepEqual(bounds({ from, to: from + 2 * HOUR, type: 'HOURS', zone: 'Asia/Kolkata' }), [from, from + HOUR, from + 2 * HOUR]);
    });
  });

  describe('calendar steps', () => {
    it('has a 23-hour day on the last Sunday of March and a 25-hour one in October in Europe/Berlin', () => {
      const zone = 'Europe/Berlin';
      const spring = bounds({ from: at('2024-03-30T00:00:00+01:00'), to: at('2024-04-02T00:00:00+02:00'), type: 'DAYS', zone });
      assert.deepEqual(hoursBetween(spring), [24, 23, 24]);
      assert.deepEqual(spring.map(isoIn(zone)), [
        '2024-03-30T00:00:00.000+01:00',
        '2024-03-31T00:00:00.000+01:00',
        '2024-04-01T00:00:00.000+02:00',
        '2024-04-02T00:00:00.000+02:00',
      ]);
      const autumn = bounds({ from: at('2024-10-26T00:00:00+02:00'), to: at('2024-10-29T00:00:00+01:00'), type: 'DAYS', zone });
      assert.deepEqual(hoursBetween(autumn), [24, 25, 24]);
      assert.ok(autumn.every((t) => t % HOUR === 0), 'every bound on an hour: whole buckets');
    });

    it('follows America/New_York through both DST changes', () => {
      const zone = 'America/New_York';
      const spring = bounds({ from: at('2024-03-09T00:00:00-05:00'), to: at('2024-03-12T00:00:00-04:00'), type: 'DAYS', zone });
      assert.deepEqual(hoursBetween(spring), [24, 23, 24]);
      const autumn = bounds({ from: at('2024-11-02T00:00:00-04:00'), to: at('2024-11-05T00:00:00-05:00'), type: 'DAYS', zone });
      assert.deepEqual(hoursBetween(autumn), [24, 25, 24]);
    });

    it('keeps the local time of day when a day starts inside the skipped hour, moving it forward there', () => {
      const zone = 'Europe/Berlin';
      const b = bounds({ from: at('2024-03-30T02:30:00+01:00'), to: at('2024-04-01T12:00:00+02:00'), type: 'DAYS', zone });
      assert.deepEqual(b.map(isoIn(zone)), [
        '2024-03-30T02:30:00.000+01:00',
        '2024-03-31T03:30:00.000+02:00',
        '2024-04-01T02:30:00.000+02:00',
        '2024-04-01T12:00:00.000+02:00',
      ]);
    });

    it('clamps month ends and steps each period from from, so Jan 31 gives Feb 29, Mar 31, Apr 30', () => {
      const b = bounds({ from: at('2024-01-31T00:00:00Z'), to: at('2024-06-15T00:00:00Z'), type: 'MONTHS' });
      assert.deepEqual(b.map(isoIn('UTC')), [
        '2024-01-31T00:00:00.000Z',
        '2024-02-29T00:00:00.000Z',
        '2024-03-31T00:00:00.000Z',
        '2024-04-30T00:00:00.000Z',
        '2024-05-31T00:00:00.000Z',
        '2024-06-15T00:00:00.000Z',
      ]);
      const nonLeap = bounds({ from: at('2023-01-31T00:00:00Z'), to: at('2023-03-01T00:00:00Z'), type: 'MONTHS' });
      assert.deepEqual(nonLeap.map(isoIn('UTC')), ['2023-01-31T00:00:00.000Z', '2023-02-28T00:00:00.000Z', '2023-03-01T00:00:00.000Z']);
      const everyTwo = bounds({ from: at('2024-01-31T00:00:00Z'), to: at('2024-06-01T00:00:00Z'), type: 'MONTHS', count: 2 });
      assert.deepEqual(everyTwo.map(isoIn('UTC')), ['2024-01-31T00:00:00.000Z', '2024-03-31T00:00:00.000Z', '2024-05-31T00:00:00.000Z', '2024-06-01T00:00:00.000Z']);
    });

    it('steps years from Feb 29 to Feb 28 and back to Feb 29 in the next leap year', () => {
      const b = bounds({ from: at('2024-02-29T12:00:00Z'), to: at('2029-01-01T00:00:00Z'), type: 'YEARS' });
      assert.deepEqual(b.map(isoIn('UTC')).map((s) => s?.slice(0, 10)), ['2024-02-29', '2025-02-28', '2026-02-28', '2027-02-28', '2028-02-29', '2029-01-01']);
    });

    it('counts February 29 in leap years only', () => {
      const leap = bounds({ from: at('2024-02-28T00:00:00Z'), to: at('2024-03-01T00:00:00Z'), type: 'DAYS' });
      assert.equal(leap.length, 3);
      const century = bounds({ from: at('2100-02-28T00:00:00Z'), to: at('2100-03-02T00:00:00Z'), type: 'DAYS' });
      assert.deepEqual(century.map(isoIn('UTC')).map((s) => s?.slice(0, 10)), ['2100-02-28', '2100-03-01', '2100-03-02']);
      const y2000 = bounds({ from: at('2000-01-01T00:00:00Z'), to: at('2001-01-01T00:00:00Z'), type: 'DAYS' });
      assert.equal(y2000.length - 1, 366);
    });

    it('makes WEEKS start on Mondays at local midnight when truncating, 167 and 169 hours over DST', () => {
      const zone = 'Europe/Berlin';
      const b = bounds({ from: at('2024-03-20T15:00:00+01:00'), to: at('2024-04-03T09:00:00+02:00'), type: 'WEEKS', zone, truncate: true });
      assert.deepEqual(b.map(isoIn(zone)), ['2024-03-18T00:00:00.000+01:00', '2024-03-25T00:00:00.000+01:00', '2024-04-01T00:00:00.000+02:00', '2024-04-08T00:00:00.000+02:00']);
      assert.deepEqual(hoursBetween(b), [168, 167, 168]);
      const autumn = bounds({ from: at('2024-10-21T00:00:00+02:00'), to: at('2024-11-04T00:00:00+01:00'), type: 'WEEKS', zone });
      assert.deepEqual(hoursBetween(autumn), [169, 168]);
      for (const t of b.slice(0, -1)) assert.equal(DateTime.fromMillis(t, { zone }).weekday, 1);
    });
  });

  describe('truncate', () => {
    const zone = 'Europe/Berlin';
    const truncated = (type: PeriodSpec['type'], from: string, to: string) => {
      const b = bounds({ from: at(from), to: at(to), type, zone, truncate: true });
      return [isoIn(zone)(b[0] as number), isoIn(zone)(b.at(-1) as number)];
    };

    it('moves nothing for MILLISECONDS', () => {
      assert.deepEqual(truncated('MILLISECONDS', '2024-05-05T10:20:30.250+02:00', '2024-05-05T10:20:30.750+02:00'), ['2024-05-05T10:20:30.250+02:00', '2024-05-05T10:20:30.750+02:00']);
    });

    it('moves from down and to up to whole seconds, minutes and hours', () => {
      assert.deepEqual(truncated('SECONDS', '2024-05-05T10:20:30.250+02:00', '2024-05-05T10:20:35.001+02:00'), ['2024-05-05T10:20:30.000+02:00', '2024-05-05T10:20:36.000+02:00']);
      assert.deepEqual(truncated('MINUTES', '2024-05-05T10:20:30+02:00', '2024-05-05T10:25:01+02:00'), ['2024-05-05T10:20:00.000+02:00', '2024-05-05T10:26:00.000+02:00']);
      assert.deepEqual(truncated('HOURS', '2024-05-05T10:20:30+02:00', '2024-05-05T12:00:01+02:00'), ['2024-05-05T10:00:00.000+02:00', '2024-05-05T13:00:00.000+02:00']);
    });

    it('moves to local midnight, ISO Monday, first of month and first of year in the zone', () => {
      assert.deepEqual(truncated('DAYS', '2024-05-05T10:20:30+02:00', '2024-05-07T00:00:01+02:00'), ['2024-05-05T00:00:00.000+02:00', '2024-05-08T00:00:00.000+02:00']);
      assert.deepEqual(truncated('WEEKS', '2024-05-05T10:20:30+02:00', '2024-05-07T08:00:00+02:00'), ['2024-04-29T00:00:00.000+02:00', '2024-05-13T00:00:00.000+02:00']);
      assert.deepEqual(truncated('MONTHS', '2024-03-15T10:00:00+01:00', '2024-04-02T00:00:00+02:00'), ['2024-03-01T00:00:00.000+01:00', '2024-05-01T00:00:00.000+02:00']);
      assert.deepEqual(truncated('YEARS', '2024-03-15T10:00:00+01:00', '2025-06-02T00:00:00+02:00'), ['2024-01-01T00:00:00.000+01:00', '2026-01-01T00:00:00.000+01:00']);
    });

    it('leaves bounds that already are boundaries where they are', () => {
      assert.deepEqual(truncated('DAYS', '2024-05-05T00:00:00+02:00', '2024-05-07T00:00:00+02:00'), ['2024-05-05T00:00:00.000+02:00', '2024-05-07T00:00:00.000+02:00']);
      assert.deepEqual(truncated('MONTHS', '2024-10-01T00:00:00+02:00', '2024-11-01T00:00:00+01:00'), ['2024-10-01T00:00:00.000+02:00', '2024-11-01T00:00:00.000+01:00']);
    });

    it('truncates days in the zone, not in UTC', () => {
      const b = bounds({ from: at('2024-01-01T23:30:00Z'), to: at('2024-01-02T01:00:00Z'), type: 'DAYS', zone: 'America/New_York', truncate: true });
      assert.deepEqual(b.map(isoIn('America/New_York')), ['2024-01-01T00:00:00.000-05:00', '2024-01-02T00:00:00.000-05:00']);
    });
  });

  describe('errors', () => {
    const spec: PeriodSpec = { from: 0, to: 10_000, type: 'SECONDS', count: 1, zone: 'UTC', truncate: false };

    it('rejects from at or after to', () => {
      assert.throws(() => allBounds({ ...spec, from: 10_000 }), RangeError);
      assert.throws(() => allBounds({ ...spec, from: 20_000 }), RangeError);
      assert.throws(() => allBounds({ ...spec, type: undefined, from: 10_000 }), RangeError);
    });

    it('rejects an unknown time zone', () => {
      assert.throws(() => allBounds({ ...spec, zone: 'Mars/Olympus_Mons' }), RangeError);
      assert.throws(() => allBounds({ ...spec, zone: 'UTC+3' }), RangeError);
    });

    it('rejects a count below 1 or not an integer', () => {
      assert.throws(() => allBounds({ ...spec, count: 0 }), RangeError);
      assert.throws(() => allBounds({ ...spec, count: -2 }), RangeError);
      assert.throws(() => allBounds({ ...spec, count: 1.5 }), RangeError);
    });

    it('counts a million periods and more before stepping through them (the request limit is checked on that count)', () => {
      assert.deepEqual(pick(planPeriods({ ...spec, type: 'MILLISECONDS', to: 1_000_000 })), { count: 1_000_000, exact: true });
      assert.equal(allBounds({ ...spec, type: 'MILLISECONDS', to: 1_000_000 }).length, 1_000_001);
      assert.deepEqual(pick(planPeriods({ ...spec, type: 'MILLISECONDS', to: 1_000_001 })), { count: 1_000_001, exact: true });
      assert.ok(planPeriods({ ...spec, type: 'DAYS', from: at('1000-01-01T00:00:00Z'), to: at('9000-01-01T00:00:00Z') }).count > 2_900_000);
    });

    it('makes one period when a single step passes to, however large the count', () => {
      assert.deepEqual([...allBounds({ ...spec, type: 'DAYS', count: 1e300 })], [0, 10_000]);
      assert.deepEqual([...allBounds({ ...spec, type: 'HOURS', count: 1e300 })], [0, 10_000]);
    });

    it('rejects instants that are not finite numbers or leave the representable range when truncated', () => {
      assert.throws(() => allBounds({ ...spec, type: 'YEARS', truncate: true, to: 8.64e15 - 1 }), RangeError);
      assert.throws(() => allBounds({ ...spec, to: Number.POSITIVE_INFINITY }), RangeError);
      assert.throws(() => allBounds({ ...spec, from: Number.NaN }), RangeError);
    });
  });

  describe('properties', () => {
    const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'America/Sao_Paulo'];
    const NOMINAL_MS = { MILLISECONDS: 1, SECONDS: 1e3, MINUTES: 6e4, HOURS: 36e5, DAYS: 864e5, WEEKS: 6048e5, MONTHS: 2592e6, YEARS: 31536e6 };

    it('bounds increase strictly from from (or its truncation) to to (or its truncation), periods at most one step long', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: at('1990-01-01T00:00:00Z'), max: at('2040-01-01T00:00:00Z') }),
          fc.constantFrom(...PERIOD_TYPES),
          fc.integer({ min: 1, max: 5 }),
          fc.double({ min: 0.01, max: 40, noNaN: true }),
          fc.constantFrom(...ZONES),
          fc.boolean(),
          (from, type, count, steps, zone, truncate) => {
            const to = from + Math.max(1, Math.round(steps * count * NOMINAL_MS[type]));
            const b = allBounds({ from, to, type, count, zone, truncate });
            for (let i = 1; i < b.length; i++) assert.ok((b[i] as number) > (b[i - 1] as number));
            assert.ok((b[0] as number) <= from && (b.at(-1) as number) >= to);
            if (!truncate) assert.ok(b[0] === from && b.at(-1) === to);
            // Calendar units may be longer than nominal by DST and month lengths: at most 1 day per step of a calendar unit.
            const slack = NOMINAL_MS[type] >= 864e5 ? 3 * 864e5 * count : 0;
            const longest = Math.max(...b.slice(1).map((t, i) => t - (b[i] as number)));
            assert.ok(longest <= count * NOMINAL_MS[type] + slack, `longest period ${longest}`);
          },
        ),
        { numRuns: 300 },
      );
    });

    it('starts every calendar period at from plus i × count units in the zone (luxon)', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: at('1950-01-01T00:00:00Z'), max: at('2060-01-01T00:00:00Z') }),
          fc.constantFrom('DAYS', 'WEEKS', 'MONTHS', 'YEARS' as const),
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 60 }),
          fc.constantFrom(...ZONES),
          (from, type, count, periods, zone) => {
            const unit = ({ DAYS: 'days', WEEKS: 'weeks', MONTHS: 'months', YEARS: 'years' } as const)[type];
            const start = DateTime.fromMillis(from, { zone });
            const to = start.plus({ [unit]: periods * count }).toMillis() - 1;
            const b = allBounds({ from, to, type, count, zone, truncate: false });
            const expected = Array.from({ length: periods }, (_, i) => start.plus({ [unit]: i * count }).toMillis());
            assert.deepEqual([...b.slice(0, -1)], expected);
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});

describe('planPeriods', () => {
  const base = { count: 1, zone: 'UTC', truncate: false };

  it('counts fixed periods exactly and a range without a type as one period', () => {
    const now = at('2024-06-01T00:00:00Z');
    // The attack of issue 11: 1e9 ms of seconds.
    assert.deepEqual(pick(planPeriods({ ...base, from: now - 1e9, to: now, type: 'SECONDS' })), { count: 1_000_000, exact: true });
    assert.deepEqual(pick(planPeriods({ ...base, from: 0, to: 2500, type: 'SECONDS' })), { count: 3, exact: true });
    assert.deepEqual(pick(planPeriods({ ...base, from: 0, to: 5 * HOUR, type: 'HOURS', count: 2 })), { count: 3, exact: true });
    assert.deepEqual(pick(planPeriods({ ...base, from: 0, to: 1e15 })), { count: 1, exact: true });
  });

  it('estimates calendar periods from their average length, without stepping through them', () => {
    // 100 million days: stepping through them would take minutes.
    const huge = planPeriods({ ...base, from: -8.64e15, to: 8.64e15, type: 'DAYS', zone: 'Europe/Berlin' });
    assert.deepEqual(pick(huge), { count: 200_000_000, exact: false });
    const years = planPeriods({ ...base, from: at('1000-01-01T00:00:00Z'), to: at('9000-01-01T00:00:00Z'), type: 'MONTHS', count: 3 });
    assert.equal(years.count, 32_000);
    assert.equal(planPeriods({ ...base, from: 0, to: 10_000, type: 'YEARS', count: 1e300 }).count, 1);
  });

  it('estimates calendar periods within two of their real number', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: at('1900-01-01T00:00:00Z'), max: at('2100-01-01T00:00:00Z') }),
        fc.constantFrom('DAYS', 'WEEKS', 'MONTHS', 'YEARS' as const),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.constantFrom('UTC', 'Europe/Berlin', 'Australia/Lord_Howe', 'Pacific/Apia'),
        fc.boolean(),
        (from, type, count, length, zone, truncate) => {
          const spec: PeriodSpec = { from, to: from + length * count * 86_400_000 * (type === 'DAYS' ? 1 : type === 'WEEKS' ? 7 : 30), type, count, zone, truncate };
          const real = allBounds(spec).length - 1;
          const plan = planPeriods(spec);
          assert.ok(Math.abs(plan.count - real) <= 2, `estimate ${plan.count}, real ${real}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives in chunks of any size exactly the bounds of one chunk, each chunk starting where the last one ended', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: at('1990-01-01T00:00:00Z'), max: at('2040-01-01T00:00:00Z') }),
        fc.option(fc.constantFrom(...PERIOD_TYPES), { nil: undefined }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 60 }),
        fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe'),
        fc.boolean(),
        fc.integer({ min: 1, max: 9 }),
        (from, type, count, steps, zone, truncate, size) => {
          const unit = { MILLISECONDS: 1, SECONDS: 1e3, MINUTES: 6e4, HOURS: 36e5, DAYS: 864e5, WEEKS: 6048e5, MONTHS: 2592e6, YEARS: 31536e6 }[type ?? 'HOURS'];
          const spec: PeriodSpec = { from, to: from + Math.round(steps * count * unit * 0.9) + 1, type, count, zone, truncate };
          const whole = [...allBounds(spec)];
          const joined: number[] = [];
          for (const chunk of planPeriods(spec).chunks(size)) {
            assert.ok(chunk.length >= 2 && chunk.length <= size + 1, `a chunk of ${chunk.length - 1} periods`);
            if (joined.length > 0) assert.equal(chunk[0], joined.pop());
            joined.push(...chunk);
          }
          assert.deepEqual(joined, whole);
          const plan = planPeriods(spec);
          if (plan.exact) assert.equal(plan.count, whole.length - 1);
          assert.deepEqual([plan.from, plan.to], [whole[0], whole.at(-1)]);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses a range, zone or count it cannot plan', () => {
    assert.throws(() => planPeriods({ ...base, from: 10, to: 10, type: 'SECONDS' }), RangeError);
    assert.throws(() => planPeriods({ ...base, from: 0, to: 10, zone: 'Mars/Olympus_Mons' }), RangeError);
    assert.throws(() => planPeriods({ ...base, from: 0, to: 10, count: 0, type: 'DAYS' }), RangeError);
  });
});

function pick(plan: { count: number; exact: boolean }): { count: number; exact: boolean } {
  return { count: plan.count, exact: plan.exact };
}
