// INTERVAL logging's periods and its state machine, without the service: period bounds in fixed and
// calendar units (DST included), and a period interrupted by a restart closed as far as it was watched.
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { DEFAULT_POINT_SETTINGS } from '../src/services/data-points.js';
import { IntervalLogger, periodOf, type IntervalRow, type IntervalState } from '../src/values/ingest/interval-logging.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import { pointRecord } from './helpers/records.js';

const BERLIN = 'Europe/Berlin';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const at = (iso: string) => DateTime.fromISO(iso, { zone: BERLIN }).toMillis();

function point(intervalLoggingType: string, periods: number, type: string): DataPointRecord {
  return pointRecord({
    xid: 'DP',
    loggingProperties: {
      ...DEFAULT_POINT_SETTINGS.loggingProperties,
      loggingType: 'INTERVAL',
      intervalLoggingType: intervalLoggingType as 'AVERAGE',
      intervalLoggingPeriod: { periods, type },
    },
  });
}

describe('INTERVAL logging periods', () => {
  it('fixed lengths are multiples since the epoch', () => {
    const t = Date.UTC(2025, 2, 30, 10, 37, 12, 345);
    assert.deepEqual(periodOf(t, { periods: 15, type: 'MINUTES' }, BERLIN), [Date.UTC(2025, 2, 30, 10, 30), Date.UTC(2025, 2, 30, 10, 45)]);
    assert.deepEqual(periodOf(t, { periods: 1, type: 'HOURS' }, BERLIN), [Date.UTC(2025, 2, 30, 10), Date.UTC(2025, 2, 30, 11)]);
    assert.deepEqual(periodOf(t, { periods: 10, type: 'SECONDS' }, BERLIN), [Date.UTC(2025, 2, 30, 10, 37, 10), Date.UTC(2025, 2, 30, 10, 37, 20)]);
  });

  it('days follow the zone through DST (23 and 25 hours), weeks start on Monday, months and years by the calendar', () => {
    assert.deepEqual(periodOf(at('2025-03-30T12:00'), { periods: 1, type: 'DAYS' }, BERLIN), [at('2025-03-30T00:00'), at('2025-03-31T00:00')]);
    assert.equal(at('2025-03-31T00:00') - at('2025-03-30T00:00'), 23 * HOUR);
    assert.deepEqual(periodOf(at('2025-10-26T23:59'), { periods: 1, type: 'DAYS' }, BERLIN), [at('2025-10-26T00:00'), at('2025-10-27T00:00')]);
    assert.deepEqual(periodOf(at('2025-11-23T08:00'), { periods: 1, type: 'WEEKS' }, BERLIN), [at('2025-11-17T00:00'), at('2025-11-24T00:00')]);
    assert.deepEqual(periodOf(at('2025-05-17T08:00'), { periods: 3, type: 'MONTHS' }, BERLIN), [at('2025-04-01T00:00'), at('2025-07-01T00:00')]);
    assert.deepEqual(periodOf(at('2025-05-17T08:00'), { periods: 1, type: 'YEARS' }, BERLIN), [at('2025-01-01T00:00'), at('2026-01-01T00:00')]);
  });

  it('multi-day periods fall on the same days whatever instant asks', () => {
    const [a, b] = periodOf(at('2025-06-10T01:00'), { periods: 2, type: 'DAYS' }, BERLIN);
    assert.deepEqual(periodOf(at('2025-06-10T23:00'), { periods: 2, type: 'DAYS' }, BERLIN), [a, b]);
    assert.deepEqual(periodOf(b, { periods: 2, type: 'DAYS' }, BERLIN)[0], b);
    assert.equal(b - a, 2 * 24 * HOUR);
  });
});

describe('INTERVAL logger', () => {
  const hour = Date.UTC(2025, 0, 1, 12);

  it('a period the service stopped in is closed as far as it was watched: the time it was down does not count', () => {
    const p = point('AVERAGE', 1, 'HOURS');
    const before = new IntervalLogger('UTC');
    const out: IntervalRow[] = [];
    const now1 = hour + 30 * MINUTE;
    before.value(p, hour + 10 * MINUTE, 10, null, now1, out);
    before.value(p, hour + 20 * MINUTE, 20, null, now1, out);
    before.watchedUntil(now1); // saved on stop, half past
    const saved = JSON.parse(JSON.stringify(Object.fromEntries(before.pending))) as Record<string, IntervalState>;

    const after = new IntervalLogger('UTC');
    const now2 = hour + 2 * HOUR + 5 * MINUTE; // back after the period ended
    after.restore(new Map(Object.entries(saved).map(([k, v]) => [Number(k), v])), now2);
    after.refresh(1, p, now2, out);
    after.tick(now2, out);
    // 10 for 10 minutes, 20 for 10 minutes (till the stop): 15. The hour after is not written: nobody watched it.
    assert.deepEqual(out, [{ series: 1, ts: hour, value: 15, text: null }]);
  });

  it('a period still running after a restart goes on, the value in force counting again from the restart', () => {
    const p = point('AVERAGE', 1, 'HOURS');
    const before = new IntervalLogger('UTC');
    const out: IntervalRow[] = [];
    before.value(p, hour, 10, null, hour + 10 * MINUTE, out);
    before.watchedUntil(hour + 10 * MINUTE);
    const saved = new Map([...before.pending].map(([k, v]) => [k, JSON.parse(JSON.stringify(v)) as IntervalState]));
    const after = new IntervalLogger('UTC');
    after.restore(saved, hour + 20 * MINUTE);
    after.refresh(1, p, hour + 20 * MINUTE, out);
    after.value(p, hour + 40 * MINUTE, 40, null, hour + 40 * MINUTE, out);
    after.tick(hour + HOUR, out);
    // 10 over [0, 10) (watched) and [20, 40) (after the restart), 40 over [40, 60): (100 + 200 + 800) / 50.
    assert.deepEqual(out, [{ series: 1, ts: hour, value: 1100 / 50, text: null }]);
  });

  it('the clock fills periods without values with the value in force (MAXIMUM), each once', () => {
    const p = point('MAXIMUM', 10, 'MINUTES');
    const logger = new IntervalLogger('UTC');
    const out: IntervalRow[] = [];
    logger.value(p, hour + MINUTE, 7, null, hour + MINUTE, out);
    logger.tick(hour + 10 * MINUTE, out);
    logger.tick(hour + 20 * MINUTE, out);
    logger.tick(hour + 20 * MINUTE + 500, out);
    logger.tick(hour + 31 * MINUTE, out);
    assert.deepEqual(
      out.map((r) => [(r.ts - hour) / MINUTE, r.value]),
      [[0, 7], [10, 7], [20, 7]],
    );
  });
});
