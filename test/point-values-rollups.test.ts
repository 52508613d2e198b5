// /point-values rollups on the real service (PGlite or PostgreSQL metadata, the suites' value engine),
// checked against the plain reference (test/helpers/reference-rollup.ts), time zones and DST included.
import assert from 'node:assert/strict';
import { assertError } from './helpers/assertions.js';
import type { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { ALL_KEYS, assertBadParam, DAY, HOUR, MINUTE, near, type PeriodValue, PV, query, T0, usePointValuesApp } from './helpers/point-values-app.js';
import { referenceRollup, referenceStoredRollup, type TimedValue } from './helpers/reference-rollup.js';
import { parseCsv } from './helpers/csv.js';
import { STATISTIC_KEY, STATISTICS } from './helpers/rollup-checks.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { createPoint, seed, single } = pv;
    let admin: ApiClient;
    before(() => ({ admin } = pv));

    describe('rollups', () => {
      /** A small series around T0: one value before it (in force at T0), values inside several hours. */
      const SERIES: TimedValue<number>[] = [
        { ts: T0 - 30 * MINUTE, value: 10 },
        { ts: T0 + 10 * MINUTE, value: 20 },
        { ts: T0 + 25 * MINUTE, value: 5 },
        { ts: T0 + 70 * MINUTE, value: 30 },
        { ts: T0 + 130 * MINUTE, value: -4 },
        { ts: T0 + 130 * MINUTE + 1, value: 6.5 },
        { ts: T0 + 200 * MINUTE, value: 8 },
        { ts: T0 + 5 * HOUR, value: 100 },
      ];
      let xid: string;
      before(async () => {
        xid = await createPoint('NUMERIC', { rollup: 'MAXIMUM' });
        await seed(
          xid,
          SERIES.map((v) => [v.ts, v.value]),
        );
      });

      /** Requests every statistic for the given window and checks it against the reference. */
      async function checkAll(from: number, to: number, periodType: string | undefined, periods: number | undefined, bounds: number[]): Promise<void> {
        const expected = referenceRollup(SERIES, bounds, to);
        for (const rollup of STATISTICS) {
          const res = await single(xid, { from, to, rollup, timePeriodType: periodType, timePeriods: periods });
          assert.equal(res.status, 200, `${rollup}: ${res.text}`);
          const got = res.body as PeriodValue[];
          assert.deepEqual(
            got.map((p) => p.timestamp),
            bounds.slice(0, -1),
            `${rollup} period starts`,
          );
          got.forEach((p, i) => {
            assert.deepEqual(Object.keys(p).sort(), ['timestamp', 'value']);
            near(p.value, expected[i]![STATISTIC_KEY[rollup]], `${rollup} period ${i}`);
          });
        }
        const all = await single(xid, { from, to, rollup: 'ALL', timePeriodType: periodType, timePeriods: periods });
        assert.equal(all.status, 200, all.text);
        (all.body as PeriodValue<Record<string, unknown>>[]).forEach((p, i) => {
          assert.deepEqual(Object.keys(p.value).sort(), [...ALL_KEYS].sort(), 'ALL has every statistic');
          for (const key of ALL_KEYS) near(p.value[key], expected[i]![key], `ALL.${key} period ${i}`);
        });
      }

      it('every statistic per hour matches the reference (hour-aligned: answered from buckets)', async () => {
        const bounds = [0, 1, 2, 3, 4].map((h) => T0 + h * HOUR);
        await checkAll(T0, T0 + 4 * HOUR, 'HOURS', undefined, bounds);
      });

      it('every statistic over unaligned periods matches the reference (raw path)', async () => {
        const from = T0 + 5 * MINUTE;
        const to = T0 + 215 * MINUTE;
        const bounds = [from, from + 45 * MINUTE, from + 90 * MINUTE, from + 135 * MINUTE, from + 180 * MINUTE, to];
        await checkAll(from, to, 'MINUTES', 45, bounds);
      });

      it('without timePeriodType the whole range is one period', async () => {
        await checkAll(T0, T0 + 6 * HOUR, undefined, undefined, [T0, T0 + 6 * HOUR]);
        await checkAll(T0 - HOUR, T0 + 150 * MINUTE, undefined, undefined, [T0 - HOUR, T0 + 150 * MINUTE]);
      });

      it('timePeriods steps by several units; the last period is cut at to', async () => {
        await checkAll(T0, T0 + 5 * HOUR, 'HOURS', 2, [T0, T0 + 2 * HOUR, T0 + 4 * HOUR, T0 + 5 * HOUR]);
      });

      it('answers null (COUNT 0) for periods with nothing to say', async () => {
        const res = await single(xid, { from: T0 - 3 * HOUR, to: T0 - HOUR, rollup: 'AVERAGE', timePeriodType: 'HOURS' });
        assert.deepEqual(res.body, [
          { timestamp: T0 - 3 * HOUR, value: null },
          { timestamp: T0 - 2 * HOUR, value: null },
        ]);
        const count = await single(xid, { from: T0 - 3 * HOUR, to: T0 - 2 * HOUR, rollup: 'COUNT', timePeriodType: 'HOURS' });
        assert.deepEqual(count.body, [{ timestamp: T0 - 3 * HOUR, value: 0 }]);
      });

      it('the newest value stays in force until the earlier of to and now', async () => {
        const p = await createPoint('NUMERIC');
        const now = Date.now();
        await seed(p, [[now - 2 * HOUR, 4]]);
        const res = await single(p, { from: now - 3 * HOUR, to: now + 3 * HOUR, rollup: 'INTEGRAL' });
        assert.equal(res.status, 200, res.text);
        const integral = (res.body as PeriodValue<number>[])[0]!.value;
        // 4 × (about) 2 h in seconds: not 4 × 5 h.
        const twoHours = 4 * 2 * 3600;
        assert.ok(Math.abs(integral - twoHours) < 4 * 60, `integral ${integral} vs ${twoHours}`);
      });

      it('POINT_DEFAULT uses the point rollup; NONE and a point rollup NONE give raw values', async () => {
        const byDefault = await single(xid, { from: T0, to: T0 + 4 * HOUR, rollup: 'POINT_DEFAULT', timePeriodType: 'HOURS' });
        const maximum = await single(xid, { from: T0, to: T0 + 4 * HOUR, rollup: 'MAXIMUM', timePeriodType: 'HOURS' });
        assert.equal(byDefault.status, 200, byDefault.text);
        assert.deepEqual(byDefault.body, maximum.body);
        const none = await single(xid, { from: T0, to: T0 + HOUR, rollup: 'NONE', timePeriodType: 'HOURS' });
        assert.deepEqual(none.body, [
          { timestamp: T0 + 10 * MINUTE, value: 20 },
          { timestamp: T0 + 25 * MINUTE, value: 5 },
        ]);
        const plain = await createPoint('NUMERIC');
        await seed(plain, [[T0, 1]]);
        const rawDefault = await single(plain, { from: T0, to: T0 + HOUR, rollup: 'POINT_DEFAULT', timePeriodType: 'HOURS' });
        assert.deepEqual(rawDefault.body, [{ timestamp: T0, value: 1 }]);
      });

      it('the time-period alias equals single, with the rollup in the path or the query', async () => {
        const params = { from: T0, to: T0 + 4 * HOUR, timePeriodType: 'HOURS' };
        for (const rollup of ['AVERAGE', 'DELTA', 'ALL', 'POINT_DEFAULT']) {
          const expected = await single(xid, { ...params, rollup });
          const viaPath = await admin.get(`${PV}/time-period/${xid}/${rollup}?${query(params)}`);
          const viaQuery = await admin.get(`${PV}/time-period/${xid}?${query({ ...params, rollup })}`);
          assert.equal(viaPath.status, 200, viaPath.text);
          assert.deepEqual(viaPath.body, expected.body, rollup);
          assert.deepEqual(viaQuery.body, expected.body, rollup);
        }
        const rawAlias = await admin.get(`${PV}/time-period/${xid}?from=${T0}&to=${T0 + HOUR}&limit=1`);
        assert.deepEqual(rawAlias.body, (await single(xid, { from: T0, to: T0 + HOUR, limit: 1 })).body);
        assertError(await admin.get(`${PV}/time-period/pv-no-such-point/AVERAGE`), 404, -1);
      });

      it('refuses bad rollup, timePeriodType, timePeriods, timezone and truncate with 400 naming them', async () => {
        const base = { from: T0, to: T0 + 4 * HOUR };
        assertBadParam(await single(xid, { ...base, rollup: 'MEDIAN' }), 'rollup');
        assertBadParam(await single(xid, { ...base, rollup: 'average' }), 'rollup');
        assertBadParam(await admin.get(`${PV}/time-period/${xid}/MEDIAN?${query(base)}`), 'rollup');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'FORTNIGHTS' }), 'timePeriodType');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timePeriods: 0 }), 'timePeriods');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timePeriods: -1 }), 'timePeriods');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timePeriods: 1.5 }), 'timePeriods');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timePeriods: 'two' }), 'timePeriods');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timezone: 'Mars/Olympus_Mons' }), 'timezone');
        // Empty is not given (UTC), as Mango clients send it.
        const utc = await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS' });
        const empty = await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timezone: '' });
        assert.equal(empty.status, 200, empty.text);
        assert.equal(empty.text, utc.text);
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', truncate: 'yes' }), 'truncate');
        // An empty range (from = to) has no periods: an empty answer, not an error.
        for (const extra of [{}, { timePeriodType: 'HOURS' }]) {
          const res = await single(xid, { from: T0, to: T0, rollup: 'AVERAGE', ...extra });
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.body, []);
        }
        // Too many periods.
        assertBadParam(await single(xid, { from: 0, to: T0, rollup: 'AVERAGE', timePeriodType: 'MILLISECONDS' }), 'timePeriodType');
      });

      it('refuses numeric-only rollups on non-numeric points with 400 naming rollup; FIRST, LAST, START, COUNT and ALL work', async () => {
        const bin = await createPoint('BINARY', { rollup: 'AVERAGE' });
        const multi = await createPoint('MULTISTATE');
        const alpha = await createPoint('ALPHANUMERIC');
        const binSeries: TimedValue<boolean>[] = [
          { ts: T0 - MINUTE, value: true },
          { ts: T0 + 10 * MINUTE, value: false },
          { ts: T0 + 20 * MINUTE, value: true },
          { ts: T0 + 70 * MINUTE, value: false },
        ];
        const alphaSeries: TimedValue<string>[] = [
          { ts: T0 + 5 * MINUTE, value: 'a, "x"' },
          { ts: T0 + 65 * MINUTE, value: 'b' },
        ];
        await seed(
          bin,
          binSeries.map((v) => [v.ts, v.value]),
        );
        await seed(multi, [
          [T0, 1],
          [T0 + MINUTE, 3],
        ]);
        await seed(
          alpha,
          alphaSeries.map((v) => [v.ts, v.value]),
        );
        const base = { from: T0, to: T0 + 2 * HOUR, timePeriodType: 'HOURS' };
        for (const p of [bin, multi, alpha]) {
          for (const rollup of ['AVERAGE', 'ARITHMETIC_MEAN', 'MINIMUM', 'MAXIMUM', 'SUM', 'DELTA', 'INTEGRAL']) {
            assertBadParam(await single(p, { ...base, rollup }), 'rollup');
          }
        }
        // POINT_DEFAULT resolves to the point's AVERAGE: refused too.
        assertBadParam(await single(bin, { ...base, rollup: 'POINT_DEFAULT' }), 'rollup');

        const bounds = [T0, T0 + HOUR, T0 + 2 * HOUR];
        const binRef = referenceStoredRollup(binSeries, bounds);
        const alphaRef = referenceStoredRollup(alphaSeries, bounds);
        for (const rollup of ['FIRST', 'LAST', 'START', 'COUNT'] as const) {
          const key = rollup.toLowerCase() as 'first' | 'last' | 'start' | 'count';
          const b = await single(bin, { ...base, rollup });
          assert.equal(b.status, 200, b.text);
          assert.deepEqual(
            b.body,
            bounds.slice(0, -1).map((timestamp, i) => ({ timestamp, value: binRef[i]![key] })),
            `BINARY ${rollup}`,
          );
          const a = await single(alpha, { ...base, rollup });
          assert.equal(a.status, 200, a.text);
          assert.deepEqual(
            a.body,
            bounds.slice(0, -1).map((timestamp, i) => ({ timestamp, value: alphaRef[i]![key] })),
            `ALPHANUMERIC ${rollup}`,
          );
        }
        const all = await single(bin, { ...base, rollup: 'ALL' });
        assert.equal(all.status, 200, all.text);
        assert.deepEqual(
          all.body,
          bounds.slice(0, -1).map((timestamp, i) => ({ timestamp, value: binRef[i] })),
        );
        // CSV of ALL: the stored statistics' columns carry the same values as the JSON.
        const allCsv = parseCsv((await admin.get(`${PV}/single/${bin}?${query({ ...base, rollup: 'ALL' })}`, { headers: { accept: 'text/csv' } })).text);
        const header = allCsv[0]!;
        assert.equal(header[0], 'timestamp');
        allCsv.slice(1).forEach((row, i) => {
          assert.equal(Number(row[0]), bounds[i]);
          for (const key of ['first', 'last', 'start', 'count'] as const) {
            const c = header.indexOf(key);
            assert.ok(c > 0, `no ${key} column in ${header.join(',')}`);
            const expected = binRef[i]![key];
            assert.equal(row[c], expected === null ? '' : String(expected), `${key} period ${i}`);
          }
        });
        const countCsv = await admin.get(`${PV}/single/${bin}?${query({ ...base, rollup: 'COUNT' })}`, { headers: { accept: 'text/csv' } });
        assert.equal(countCsv.text, `timestamp,value\r\n${T0},${binRef[0]!.count}\r\n${T0 + HOUR},${binRef[1]!.count}\r\n`);
        const multiFirst = await single(multi, { ...base, rollup: 'LAST' });
        assert.deepEqual(multiFirst.body, [
          { timestamp: T0, value: 3 },
          { timestamp: T0 + HOUR, value: null },
        ]);
      });

      describe('time zones and DST (Europe/Berlin)', () => {
        // 2024-03-31: 02:00 CET → 03:00 CEST (a 23-hour day); 2024-10-27: 03:00 CEST → 02:00 CET (25 hours).
        const springDay = Date.parse('2024-03-31T00:00:00+01:00');
        const springNext = Date.parse('2024-04-01T00:00:00+02:00');
        const autumnDay = Date.parse('2024-10-27T00:00:00+02:00');
        const autumnNext = Date.parse('2024-10-28T00:00:00+01:00');
        let hourly: string;
        const hourlySeries: TimedValue<number>[] = [];
        before(async () => {
          hourly = await createPoint('NUMERIC');
          // One value at every full UTC hour around both changes, value = its index.
          const addRange = (from: number, to: number) => {
            for (let t = from; t < to; t += HOUR) hourlySeries.push({ ts: t, value: hourlySeries.length });
          };
          addRange(springDay - 2 * DAY, springNext + 2 * DAY);
          addRange(autumnDay - 2 * DAY, autumnNext + 2 * DAY);
          await seed(
            hourly,
            hourlySeries.map((v) => [v.ts, v.value]),
          );
        });

        async function periods(params: Record<string, string | number | boolean>): Promise<PeriodValue<number>[]> {
          const res = await single(hourly, params);
          assert.equal(res.status, 200, res.text);
          return res.body as PeriodValue<number>[];
        }

        it('DAYS: local midnights; the spring day has 23 hours, the autumn day 25', async () => {
          const spring = await periods({ from: springDay - DAY, to: springNext + DAY, rollup: 'COUNT', timePeriodType: 'DAYS', timezone: 'Europe/Berlin' });
          assert.deepEqual(spring, [
            { timestamp: springDay - DAY, value: 24 },
            { timestamp: springDay, value: 23 },
            { timestamp: springNext, value: 24 },
          ]);
          const autumn = await periods({ from: autumnDay, to: autumnNext + DAY, rollup: 'COUNT', timePeriodType: 'DAYS', timezone: 'Europe/Berlin' });
          assert.deepEqual(autumn, [
            { timestamp: autumnDay, value: 25 },
            { timestamp: autumnNext, value: 24 },
          ]);
          // In UTC the same range cuts at UTC midnights.
          const utc = await periods({ from: Date.UTC(2024, 2, 31), to: Date.UTC(2024, 3, 1), rollup: 'COUNT', timePeriodType: 'DAYS' });
          assert.deepEqual(utc, [{ timestamp: Date.UTC(2024, 2, 31), value: 24 }]);
        });

        it('DAYS across DST: every statistic matches the reference over the 23- and 25-hour days', async () => {
          for (const bounds of [
            [springDay - DAY, springDay, springNext, springNext + DAY],
            [autumnDay - DAY, autumnDay, autumnNext, autumnNext + DAY],
          ]) {
            const from = bounds[0]!;
            const to = bounds.at(-1)!;
            const expected = referenceRollup(hourlySeries, bounds, to);
            const res = await single(hourly, { from, to, rollup: 'ALL', timePeriodType: 'DAYS', timezone: 'Europe/Berlin' });
            assert.equal(res.status, 200, res.text);
            const got = res.body as PeriodValue<Record<string, unknown>>[];
            assert.deepEqual(
              got.map((p) => p.timestamp),
              bounds.slice(0, -1),
            );
            got.forEach((p, i) => {
              for (const key of ALL_KEYS) near(p.value[key], expected[i]![key], `${new Date(p.timestamp).toISOString()} ${key}`);
            });
          }
        });

        it('HOURS over a local day: 23 periods in spring, 25 in autumn', async () => {
          const spring = await periods({ from: springDay, to: springNext, rollup: 'COUNT', timePeriodType: 'HOURS', timezone: 'Europe/Berlin' });
          assert.equal(spring.length, 23);
          assert.ok(spring.every((p) => p.value === 1));
          assert.deepEqual(
            spring.map((p) => p.timestamp),
            Array.from({ length: 23 }, (_, i) => springDay + i * HOUR),
          );
          const autumn = await periods({ from: autumnDay, to: autumnNext, rollup: 'COUNT', timePeriodType: 'HOURS', timezone: 'Europe/Berlin' });
          assert.equal(autumn.length, 25);
        });

        it('truncate=true moves from down and to up to period boundaries in the zone', async () => {
          // Noon to 13:00 local on the short day → the whole local day.
          const day = await periods({
            from: '2024-03-31T12:00:00+02:00',
            to: '2024-03-31T13:00:00+02:00',
            rollup: 'COUNT',
            timePeriodType: 'DAYS',
            timezone: 'Europe/Berlin',
            truncate: true,
          });
          assert.deepEqual(day, [{ timestamp: springDay, value: 23 }]);
          // Without truncate: just that hour.
          const hour = await periods({
            from: '2024-03-31T12:00:00+02:00',
            to: '2024-03-31T13:00:00+02:00',
            rollup: 'COUNT',
            timePeriodType: 'DAYS',
            timezone: 'Europe/Berlin',
          });
          assert.deepEqual(hour, [{ timestamp: Date.parse('2024-03-31T12:00:00+02:00'), value: 1 }]);
          // HOURS in a half-hour zone: local hours start at :30 UTC.
          const kolkata = await periods({
            from: springDay + 10 * MINUTE,
            to: springDay + 2 * HOUR,
            rollup: 'COUNT',
            timePeriodType: 'HOURS',
            timezone: 'Asia/Kolkata',
            truncate: true,
          });
          assert.deepEqual(
            kolkata.map((p) => p.timestamp),
            [springDay - 30 * MINUTE, springDay + 30 * MINUTE, springDay + 90 * MINUTE],
          );
          assert.deepEqual(
            kolkata.map((p) => p.value),
            [1, 1, 1],
          );
          // truncate=false is the default.
          const untruncated = await periods({ from: springDay + 10 * MINUTE, to: springDay + 2 * HOUR, rollup: 'COUNT', timePeriodType: 'HOURS', truncate: false });
          assert.equal(untruncated[0]!.timestamp, springDay + 10 * MINUTE);
        });

        it('MONTHS step by calendar months in the zone', async () => {
          const res = await periods({
            from: '2024-03-01T00:00:00+01:00',
            to: '2024-05-01T00:00:00+02:00',
            rollup: 'FIRST',
            timePeriodType: 'MONTHS',
            timezone: 'Europe/Berlin',
          });
          assert.deepEqual(
            res.map((p) => p.timestamp),
            [Date.parse('2024-03-01T00:00:00+01:00'), Date.parse('2024-04-01T00:00:00+02:00')],
          );
        });
      });

      it('answers rollups as CSV: timestamp,value, and one column per statistic for ALL', async () => {
        const params = { from: T0, to: T0 + 2 * HOUR, timePeriodType: 'HOURS' };
        const json = (await single(xid, { ...params, rollup: 'AVERAGE' })).body as PeriodValue<number>[];
        const csv = await admin.get(`${PV}/single/${xid}?${query({ ...params, rollup: 'AVERAGE' })}`, { headers: { accept: 'text/csv' } });
        assert.equal(csv.status, 200, csv.text);
        assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
        const rows = parseCsv(csv.text);
        assert.deepEqual(rows[0], ['timestamp', 'value']);
        assert.deepEqual(
          rows.slice(1).map(([ts, v]) => [Number(ts), Number(v)]),
          json.map((p) => [p.timestamp, p.value]),
        );

        const allJson = (await single(xid, { ...params, rollup: 'ALL' })).body as PeriodValue<Record<string, number | null>>[];
        const allCsv = await admin.get(`${PV}/single/${xid}?${query({ ...params, rollup: 'ALL' })}`, { headers: { accept: 'text/csv' } });
        const allRows = parseCsv(allCsv.text);
        const header = allRows[0]!;
        assert.equal(header[0], 'timestamp');
        assert.deepEqual([...header.slice(1)].sort(), [...ALL_KEYS].sort());
        allRows.slice(1).forEach((row, i) => {
          assert.equal(Number(row[0]), allJson[i]!.timestamp);
          header.slice(1).forEach((key, c) => {
            const expected = allJson[i]!.value[key];
            assert.equal(row[c + 1], expected === null || expected === undefined ? '' : String(expected), `${key} period ${i}`);
          });
        });

        // Text statistics are quoted.
        const alpha = await createPoint('ALPHANUMERIC');
        await seed(alpha, [[T0 + MINUTE, 'x, "y"']]);
        const textCsv = await admin.get(`${PV}/single/${alpha}?${query({ from: T0, to: T0 + HOUR, rollup: 'FIRST' })}`, { headers: { accept: 'text/csv' } });
        assert.equal(textCsv.text, `timestamp,value\r\n${T0},"x, ""y"""\r\n`);
      });
    });
  });
}
