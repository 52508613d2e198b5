// Periods sized to a number of points and aligned on a zone's wall clock (src/values/read/aligned-periods.ts):
// the start of each step's period, the step a range gets, and the plan across DST changes.
import assert from 'node:assert/strict';
import { alignedPlan, alignedStart, PERIOD_LADDER, periodCount, sizedStep } from '../src/values/read/aligned-periods.js';

const at = (iso: string) => {
  const ms = Date.parse(iso);
  assert.ok(!Number.isNaN(ms), iso);
  return ms;
};
const isoOf = (ms: number) => new Date(ms).toISOString();
const bounds = (from: number, to: number, step: (typeof PERIOD_LADDER)[number], zone: string) => [...alignedPlan(from, to, step, zone).chunks(10_000)].flatMap((c) => [...c]);

describe('aligned periods', () => {
  it('starts each ladder step on its boundary at or before t, in UTC', () => {
    const t = at('2024-05-15T13:47:38.250Z');
    assert.deepEqual(
      PERIOD_LADDER.map((s) => isoOf(alignedStart(t, s, 'UTC'))),
      [
        '2024-05-15T13:47:38.000Z',
        '2024-05-15T13:47:30.000Z',
        '2024-05-15T13:47:00.000Z',
        '2024-05-15T13:45:00.000Z',
        '2024-05-15T13:45:00.000Z',
        '2024-05-15T13:00:00.000Z',
        '2024-05-15T12:00:00.000Z',
        '2024-05-15T00:00:00.000Z',
        '2024-05-13T00:00:00.000Z', // Monday
      ],
    );
  });

  it('aligns on the wall clock of a zone with a half-hour offset', () => {
    // 13:47 UTC is 19:17 in Kolkata (UTC+5:30).
    const t = at('2024-05-15T13:47:38.250Z');
    const kolkata = (type: 'MINUTES' | 'HOURS' | 'DAYS', count: number) => isoOf(alignedStart(t, { type, count }, 'Asia/Kolkata'));
    assert.equal(kolkata('MINUTES', 15), '2024-05-15T13:45:00.000Z'); // 19:15 local
    assert.equal(kolkata('HOURS', 1), '2024-05-15T13:30:00.000Z'); // 19:00 local
    assert.equal(kolkata('HOURS', 6), '2024-05-15T12:30:00.000Z'); // 18:00 local
    assert.equal(kolkata('DAYS', 1), '2024-05-14T18:30:00.000Z'); // midnight local
  });

  it('keeps 6-hour starts on the wall clock across a DST change, and days on local midnights', () => {
    // Berlin springs forward on 2024-03-31 at 02:00 (UTC+1 → UTC+2).
    assert.equal(isoOf(alignedStart(at('2024-03-31T04:30:00Z'), { type: 'HOURS', count: 6 }, 'Europe/Berlin')), '2024-03-31T04:00:00.000Z'); // 06:00 CEST
    assert.equal(isoOf(alignedStart(at('2024-03-31T00:30:00Z'), { type: 'HOURS', count: 6 }, 'Europe/Berlin')), '2024-03-30T23:00:00.000Z'); // 00:00 CET
    const days = bounds(at('2024-03-30T12:00:00Z'), at('2024-04-02T00:00:00Z'), { type: 'DAYS', count: 1 }, 'Europe/Berlin');
    assert.deepEqual(days.map(isoOf), ['2024-03-29T23:00:00.000Z', '2024-03-30T23:00:00.000Z', '2024-03-31T22:00:00.000Z', '2024-04-01T22:00:00.000Z', '2024-04-02T00:00:00.000Z']);
  });

  it('picks the shortest step giving at most the number of periods, counting from the aligned start', () => {
    const from = at('2024-01-01T00:10:00Z');
    const to = at('2024-01-01T02:00:00Z');
    assert.deepEqual(sizedStep(from, to, 8, 'UTC'), { type: 'MINUTES', count: 15 }); // 00:00, 00:15, …, 01:45
    assert.equal(periodCount(from, to, { type: 'MINUTES', count: 15 }, 'UTC'), 8);
    assert.deepEqual(sizedStep(from, to, 7, 'UTC'), { type: 'HOURS', count: 1 });
    // In Kolkata the hours start at :30 UTC: three of them cover the range.
    assert.equal(periodCount(from, to, { type: 'HOURS', count: 1 }, 'Asia/Kolkata'), 3);
    assert.deepEqual(sizedStep(from, to, 2, 'Asia/Kolkata'), { type: 'HOURS', count: 6 });
    // Nothing on the ladder is short enough: the longest step.
    assert.deepEqual(sizedStep(at('2000-01-01T00:00:00Z'), at('2024-01-01T00:00:00Z'), 10, 'UTC'), { type: 'WEEKS', count: 1 });
  });

  it('refuses an unknown zone', () => {
    assert.throws(() => alignedStart(0, { type: 'DAYS', count: 1 }, 'Mars/Olympus'), RangeError);
  });
});
