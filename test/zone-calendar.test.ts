// Calendar steps without a DateTime per step (src/values/read/zone-calendar.ts) give exactly what
// luxon's DateTime.plus gives, offsets what luxon's IANAZone gives.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime, IANAZone } from 'luxon';
import { calendarSteps, offsetFunction } from '../src/values/read/zone-calendar.js';

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Asia/Kolkata',
  'Australia/Lord_Howe',
  'America/Sao_Paulo',
  'Pacific/Apia',
  'Antarctica/Troll',
  'Europe/Amsterdam',
  'Asia/Kathmandu',
];

describe('zone calendar', () => {
  it('steps days, weeks, months and years as luxon plus does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1800, 0, 1), max: Date.UTC(2200, 0, 1) }),
        fc.constantFrom('days', 'weeks', 'months', 'years' as const),
        fc.integer({ min: 0, max: 400 }),
        fc.constantFrom(...ZONES),
        (from, unit, k, zone) => {
          const expected = DateTime.fromMillis(from, { zone }).plus({ [unit]: k }).toMillis();
          assert.equal(calendarSteps(from, zone, unit)(k), expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('steps through DST gaps and repeats as luxon plus does', () => {
    // Local times inside Berlin's and New York's skipped and repeated hours, stepped by days.
    const starts = ['2024-03-30T02:30:00+01:00', '2024-10-26T02:30:00+02:00', '2023-10-29T02:30:00+01:00', '2024-03-09T02:15:00-05:00', '2024-11-02T01:30:00-04:00'];
    for (const zone of ['Europe/Berlin', 'America/New_York']) {
      for (const iso of starts) {
        const from = Date.parse(iso);
        for (let k = 0; k < 800; k++) {
          assert.equal(calendarSteps(from, zone, 'days')(k), DateTime.fromMillis(from, { zone }).plus({ days: k }).toMillis(), `${zone} ${iso} + ${k} days`);
        }
      }
    }
  });

  it('gives the zone offset luxon gives, historic local mean times included', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1700, 0, 1), max: Date.UTC(2300, 0, 1) }), fc.constantFrom(...ZONES), (ts, zone) => {
        assert.equal(offsetFunction(zone)(ts), IANAZone.create(zone).offset(ts));
      }),
      { numRuns: 2000 },
    );
  });

  it('handles years 0–99 as luxon does', () => {
    const from = DateTime.fromISO('0099-12-31T12:00:00', { zone: 'UTC' }).toMillis();
    assert.equal(calendarSteps(from, 'UTC', 'days')(1), DateTime.fromMillis(from, { zone: 'UTC' }).plus({ days: 1 }).toMillis());
    assert.equal(calendarSteps(from, 'UTC', 'years')(-50), DateTime.fromMillis(from, { zone: 'UTC' }).plus({ years: -50 }).toMillis());
  });
});
