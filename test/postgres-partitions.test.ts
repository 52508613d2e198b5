// The month arithmetic of the PostgreSQL store's partitions (src/store/values/postgres/partitions.ts),
// without a server: the month of an instant over the whole range a Date holds (years −271821 to
// 275760), each month's bounds (leap years, the Gregorian century rule, years before 0), the instants
// at the bounds, and the partition names (n for years before 0) read back.
import assert from 'node:assert/strict';
import { createPartitionSql, monthOf, monthOfPartition, monthsOf, monthStart, partitionName } from '../src/store/values/postgres/partitions.js';
import { INSTANT_RANGE } from '../src/store/values/types.js';

const DAY_MS = 86_400_000;
/** April −271821 and September 275760: the months of the first and last instants a Date holds. */
const FIRST_MONTH = -271821 * 12 + 3;
const LAST_MONTH = 275760 * 12 + 8;

/** The proleptic Gregorian rule, written out: every 4th year, not every 100th, every 400th. */
function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month0: number): number {
  return month0 === 1 && isLeap(year) ? 29 : DAYS[month0]!;
}

/** The first instant of a month as Date computes it (NaN where a Date cannot hold it). */
function dateStart(year: number, month0: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month0, 1);
  return d.getTime();
}

describe('PostgreSQL value store: month partitions (arithmetic)', () => {
  it('bounds every month as Date.UTC does, across 1970, leap years and far years', () => {
    for (const [y, m] of [
      [1970, 0],
      [1969, 11],
      [2024, 1],
      [2000, 1],
      [1900, 1],
      [9999, 11],
      [0, 0],
      [-1, 11],
      [-271821, 3],
      [275760, 8],
    ] as const) {
      const month = y * 12 + m;
      const expected = new Date(0);
      expected.setUTCFullYear(y, m, 1);
      expected.setUTCHours(0, 0, 0, 0);
      // April −271821 starts before the first instant a Date holds: its end is checked instead.
      if (Number.isNaN(expected.getTime())) assert.equal(monthStart(month + 1) - monthStart(month), 30 * 86_400_000);
      else assert.equal(monthStart(month), expected.getTime(), `${y}-${m + 1}`);
      if (monthStart(month) >= INSTANT_RANGE.min) assert.equal(monthOf(monthStart(month)), month);
      if (monthStart(month + 1) - 1 <= INSTANT_RANGE.max) assert.equal(monthOf(monthStart(month + 1) - 1), month, `last instant of ${y}-${m + 1}`);
    }
  });

  it('names partitions by year and month, with n for years before 0, every name distinct', () => {
    assert.equal(partitionName('point_values', 2024 * 12), 'point_values_p202401');
    assert.equal(partitionName('point_values', 1970 * 12 + 11), 'point_values_p197012');
    assert.equal(partitionName('point_values', 275760 * 12 + 8), 'point_values_p27576009');
    assert.equal(partitionName('point_values', -271821 * 12 + 3), 'point_values_n27182104');
    assert.equal(partitionName('point_values', -1 * 12 + 11), 'point_values_n000112');
    const names = new Set<string>();
    for (let m = -3000 * 12; m < 3000 * 12; m++) names.add(partitionName('point_values', m));
    assert.equal(names.size, 6000 * 12);
  });

  it('covers the whole instant range: the first and last instants fall in months with finite bounds', () => {
    const months = monthsOf([INSTANT_RANGE.min, -1, 0, INSTANT_RANGE.max]);
    assert.deepEqual([...months], [monthOf(INSTANT_RANGE.min), 1969 * 12 + 11, 1970 * 12, monthOf(INSTANT_RANGE.max)]);
    for (const m of months) {
      assert.ok(Number.isSafeInteger(monthStart(m)) && Number.isSafeInteger(monthStart(m + 1)));
    }
    assert.ok(monthStart(monthOf(INSTANT_RANGE.min)) <= INSTANT_RANGE.min);
    assert.ok(monthStart(monthOf(INSTANT_RANGE.max) + 1) > INSTANT_RANGE.max);
  });

  it('makes every month from April −271821 to September 275760 exactly as long as the calendar says', () => {
    // From 1970-01 (instant 0) outwards, each month's start is the previous one's plus its days: with
    // the anchor this fixes every start in the range, without Date.
    assert.equal(monthStart(1970 * 12), 0);
    let start = monthStart(FIRST_MONTH);
    for (let m = FIRST_MONTH; m <= LAST_MONTH; m++) {
      const next = monthStart(m + 1);
      const year = Math.floor(m / 12);
      const month0 = m - year * 12;
      if (next - start !== daysIn(year, month0) * DAY_MS) assert.fail(`${year}-${month0 + 1}: ${(next - start) / DAY_MS} days, expected ${daysIn(year, month0)}`);
      start = next;
    }
  });

  it('agrees with Date on the month of each month’s first and last instant, sampled over the whole range', () => {
    const months: number[] = [];
    for (let m = -3000 * 12; m < 3000 * 12; m++) months.push(m); // every month of years −3000 to 2999
    for (let m = FIRST_MONTH + 1; m < LAST_MONTH; m += 997) months.push(m); // a prime stride: every month of the year
    for (let k = 0; k < 12 * 400; k++) months.push(FIRST_MONTH + 1 + k, LAST_MONTH - 1 - k); // the first and last 400 years
    for (const m of months) {
      const year = Math.floor(m / 12);
      const month0 = m - year * 12;
      const start = monthStart(m);
      assert.equal(start, dateStart(year, month0), `start of ${year}-${month0 + 1}`);
      if (monthOf(start) !== m || monthOf(start - 1) !== m - 1 || monthOf(monthStart(m + 1) - 1) !== m) {
        assert.fail(`${year}-${month0 + 1}: monthOf(start) ${monthOf(start)}, monthOf(start − 1) ${monthOf(start - 1)}`);
      }
    }
  });

  it('keeps February to the leap-year rule: 29 days in 2000, 2024, 0, −4 and −400; 28 in 1900, 2100, −1 and −100', () => {
    for (const year of [2000, 2024, 1972, 0, -4, -400, 1600, 275756, -271820]) {
      assert.equal(monthStart(year * 12 + 2) - monthStart(year * 12 + 1), 29 * DAY_MS, `${year}`);
    }
    for (const year of [1900, 2100, 2023, 1970, -1, -100, 1700, 275700, -271800]) {
      assert.equal(monthStart(year * 12 + 2) - monthStart(year * 12 + 1), 28 * DAY_MS, `${year}`);
    }
    // 29 February and 1 March of a leap year, 28 February and 1 March of a common one.
    assert.equal(monthOf(Date.UTC(2024, 1, 29, 23, 59, 59, 999)), 2024 * 12 + 1);
    assert.equal(monthOf(Date.UTC(2024, 2, 1)), 2024 * 12 + 2);
    assert.equal(monthStart(2100 * 12 + 2), Date.UTC(2100, 1, 28) + DAY_MS);
  });

  it('puts the first and last instants a Date holds in April −271821 and September 275760, with room on both sides', () => {
    assert.equal(monthOf(INSTANT_RANGE.min), FIRST_MONTH);
    assert.equal(monthOf(INSTANT_RANGE.max), LAST_MONTH);
    // −271821-04-20 and +275760-09-13: the months reach 19 days before the first instant and 18 days
    // after the last, which a Date cannot hold, yet their bounds are safe integers.
    assert.equal(INSTANT_RANGE.min - monthStart(FIRST_MONTH), 19 * DAY_MS);
    assert.equal(monthStart(LAST_MONTH + 1) - INSTANT_RANGE.max, 18 * DAY_MS);
    assert.ok(Number.isNaN(Date.UTC(-271821, 3, 1)) && Number.isNaN(Date.UTC(275760, 9, 1)));
    assert.equal(monthOf(INSTANT_RANGE.min + 1), FIRST_MONTH);
    assert.equal(monthOf(INSTANT_RANGE.max - 1), LAST_MONTH);
  });

  it('puts the instants either side of a month bound in the two months (the lower bound is in, the upper out)', () => {
    for (const m of [1970 * 12, 1969 * 12 + 11, 2024 * 12 + 2, 0, -1, -12, 10000 * 12, -10000 * 12 + 5]) {
      const start = monthStart(m);
      assert.equal(monthOf(start), m);
      assert.equal(monthOf(start - 1), m - 1);
      assert.equal(monthOf(monthStart(m + 1)), m + 1);
      assert.deepEqual([...monthsOf([start - 1, start, monthStart(m + 1) - 1, monthStart(m + 1)])], [m - 1, m, m + 1]);
    }
  });

  it('finds the months of unsorted timestamps, and only of the first `length`', () => {
    const ts = [Date.UTC(2024, 5, 1), Date.UTC(2024, 0, 31), Date.UTC(2024, 5, 30), -1, Date.UTC(2024, 0, 1), Date.UTC(2030, 0, 1)];
    assert.deepEqual([...monthsOf(ts)].sort((a, b) => a - b), [1969 * 12 + 11, 2024 * 12, 2024 * 12 + 5, 2030 * 12]);
    assert.deepEqual([...monthsOf(ts, 3)].sort((a, b) => a - b), [2024 * 12, 2024 * 12 + 5]);
    assert.deepEqual([...monthsOf(Float64Array.of())], []);
  });

  it('names years below 1000 with four digits, above 9999 with five or six, and keeps the month last', () => {
    assert.equal(partitionName('point_values', 0), 'point_values_p000001');
    assert.equal(partitionName('point_values', 5 * 12 + 6), 'point_values_p000507');
    assert.equal(partitionName('point_values', -5 * 12 + 6), 'point_values_n000507');
    assert.equal(partitionName('point_values', -1), 'point_values_n000112');
    assert.equal(partitionName('point_values', 10000 * 12), 'point_values_p1000001');
    assert.equal(partitionName('point_values', 100000 * 12 + 11), 'point_values_p10000012');
  });

  it('reads back the month of every name partitionName makes, over the whole range', () => {
    for (let m = FIRST_MONTH; m <= LAST_MONTH; m += 97) assert.equal(monthOfPartition('point_values', partitionName('point_values', m)), m);
    for (const m of [FIRST_MONTH, LAST_MONTH, -12, -1, 0, 1, 11, 12, 1970 * 12]) {
      assert.equal(monthOfPartition('point_values', partitionName('point_values', m)), m);
    }
  });

  it('reads no month from a name partitionName does not make', () => {
    for (const name of [
      'point_values',
      'point_values_default',
      'point_values_p2024',
      'point_values_p20240',
      'point_values_x202401',
      'other_p202401',
      'point_values_p202401_old',
      'point_values_p202400', // month 0
      'point_values_p202413', // month 13
      'point_values_p0202401', // a year with a leading zero beyond four digits
      'point_values_n000001', // year −0
    ]) {
      assert.equal(monthOfPartition('point_values', name), undefined, name);
    }
  });

  it('creates a partition over [month start, next month start), and refuses a month whose bounds are not safe integers', () => {
    assert.equal(
      createPartitionSql('point_values', 2024 * 12 + 1),
      `CREATE TABLE IF NOT EXISTS point_values_p202402 PARTITION OF point_values FOR VALUES FROM (${Date.UTC(2024, 1, 1)}) TO (${Date.UTC(2024, 2, 1)})`,
    );
    assert.equal(
      createPartitionSql('point_values', FIRST_MONTH),
      `CREATE TABLE IF NOT EXISTS point_values_n27182104 PARTITION OF point_values FOR VALUES FROM (${monthStart(FIRST_MONTH)}) TO (${monthStart(FIRST_MONTH + 1)})`,
    );
    assert.match(createPartitionSql('point_values', LAST_MONTH), /point_values_p27576009 .* FROM \(8639998963200000\) TO \(8640001555200000\)$/);
    assert.throws(() => createPartitionSql('point_values', 1e12), RangeError);
  });
});
