// Bounded work per point-value read (issue 11) on the real service (PGlite or PostgreSQL metadata,
// DuckDB values): XIDs and rollup periods refused with 400 before any lookup or store read; the
// largest allowed request answered in chunks exactly as one piece would be; chunk boundaries
// invisible (value in force, DST days, AVERAGE/START/DELTA); /health answered while a large rollup
// runs; CSV cells that a spreadsheet would run as formulas prefixed.
import assert from 'node:assert/strict';
import type { PeriodSpec } from '../src/values/read/periods.js';
import { DateTime } from 'luxon';
import { computeRollup, ROLLUP_CALENDAR_CHUNK_PERIODS, ROLLUP_CHUNK_PERIODS } from '../src/values/read/rollup.js';
import { statisticOf } from '../src/values/read/statistics.js';
import { allBounds } from './helpers/period-bounds.js';
import { assertError, type ErrorBodyShape } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser, loggedIn, type Response } from './helpers/client.js';
import { parseCsv } from './helpers/csv.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { MemoryValueStore } from './helpers/memory-store.js';
import { referenceRollup, type TimedValue } from './helpers/reference-rollup.js';

const PV = '/rest/latest/point-values';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** 2024-01-01T00:00:00Z: every series here lies in the past, so `to` is the end of data. */
const T0 = Date.UTC(2024, 0, 1);
const PASSWORD = 'secret-password-1';

interface PeriodValue<T = unknown> {
  timestamp: number;
  value: T;
}

function assertRefused(res: Response, ...names: string[]): ErrorBodyShape {
  const body = assertError(res, 400, 4005, 'BAD_REQUEST');
  for (const name of names) assert.ok(body.message.includes(name), `message does not name ${name}: ${body.message}`);
  return body;
}

function near(actual: unknown, expected: number | null, what: string): void {
  if (expected === null) {
    assert.equal(actual, null, `${what}: expected null, got ${JSON.stringify(actual)}`);
    return;
  }
  assert.equal(typeof actual, 'number', `${what}: expected ${expected}, got ${JSON.stringify(actual)}`);
  assert.ok(Math.abs((actual as number) - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${String(actual)} != ${expected}`);
}

/** A deterministic irregular integer series: `n` values between from and to. */
function irregular(from: number, to: number, n: number, seed: number): TimedValue<number>[] {
  const out: TimedValue<number>[] = [];
  let x = seed;
  const next = () => (x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0);
  for (let i = 0; i < n; i++) out.push({ ts: from + (next() % (to - from)), value: (next() % 2001) - 1000 });
  const byTs = new Map(out.map((v) => [v.ts, v]));
  return [...byTs.values()].sort((a, b) => a.ts - b.ts);
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point-value reads: bounded work per request (${engine})`, function () {
    this.timeout(120_000);
    let app: TestApp;
    let admin: ApiClient;
    /** role "user": reads the points below. */
    let viewer: ApiClient;
    let seq = 0;
    const SOURCE = 'limits-src';

    async function createPoint(dataType = 'NUMERIC', extra: Record<string, unknown> = {}): Promise<string> {
      const xid = `lim-${dataType.toLowerCase()}-${++seq}`;
      const res = await admin.post('/rest/latest/data-points', {
        xid,
        name: xid,
        dataSourceXid: SOURCE,
        pointLocator: { dataType, settable: true, changeType: 'NO_CHANGE' },
        ...extra,
      });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    async function seed(xid: string, values: readonly { ts: number; value: unknown; annotation?: string }[]): Promise<void> {
      const res = await admin.post<{ written: number }>(
        PV,
        values.map((v) => ({ xid, timestamp: v.ts, value: v.value, ...(v.annotation === undefined ? {} : { annotation: v.annotation }) })),
      );
      assert.equal(res.status, 200, res.text);
    }

    function qs(params: Record<string, string | number>): string {
      return Object.entries(params)
        .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
        .join('&');
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      await createUser(admin, 'viewer', PASSWORD);
      viewer = await loggedIn(app.url, 'viewer', PASSWORD);
      const res = await admin.post('/rest/latest/data-sources', { xid: SOURCE, name: 'Limits', modelType: 'VIRTUAL', enabled: false });
      assert.equal(res.status, 201, res.text);
    });
    after(() => app?.stop());

    describe('limits, refused with 400 before any work', () => {
      let eight: string[];
      before(async () => {
        eight = [];
        for (let i = 0; i < 8; i++) eight.push(await createPoint());
      });

      it('refuses the attack of issue 11 (8 readable points × 1,000,000 SECONDS periods) naming timePeriodType and timePeriods', async () => {
        const now = Date.now();
        const res = await viewer.get(`${PV}/multiple-arrays/time-period/${eight.join(',')}/COUNT?${qs({ from: now - 1e9, to: now, timePeriodType: 'SECONDS' })}`);
        const body = assertRefused(res, 'timePeriodType', 'timePeriods', '8,000,000', '200,000');
        assert.match(body.message, /longer timePeriodType|shorter from–to/);
      });

      it('refuses too many periods on every rollup route, JSON and CSV, even for XIDs that do not exist', async () => {
        const range = qs({ from: T0, to: T0 + 200_001 * 1000, timePeriodType: 'SECONDS' });
        const xid = eight[0]!;
        for (const path of [
          `/single/${xid}?rollup=AVERAGE&${range}`,
          `/time-period/${xid}?rollup=AVERAGE&${range}`,
          `/time-period/${xid}/COUNT?${range}`,
          `/time-period/lim-no-such-point/COUNT?${range}`,
          `/multiple-arrays/time-period/${xid}/COUNT?${range}`,
          `/multiple-arrays/time-period/lim-no-such-point,lim-nor-this/MAXIMUM?${range}`,
          `/single/${xid}?rollup=POINT_DEFAULT&${range}`,
        ]) {
          assertRefused(await viewer.get(PV + path), 'timePeriodType', 'timePeriods');
          assertRefused(await viewer.get(PV + path, { headers: { accept: 'text/csv' } }), 'timePeriodType');
        }
        // Without a rollup the same range is raw values: no periods to count.
        const rawRes = await viewer.get(`${PV}/single/${xid}?${range}`);
        assert.equal(rawRes.status, 200, rawRes.text);
      });

      it('counts the periods of all XIDs together: 2 × 100,000 is allowed, 2 × 100,001 is not', async () => {
        const [a, b] = eight as [string, string];
        const allowed = await viewer.get<Record<string, unknown[]>>(`${PV}/multiple-arrays/time-period/${a},${b}/COUNT?${qs({ from: T0, to: T0 + 100_000_000, timePeriodType: 'SECONDS' })}`);
        assert.equal(allowed.status, 200, allowed.text.slice(0, 300));
        assert.equal(allowed.body[a]!.length, 100_000);
        assert.equal(allowed.body[b]!.length, 100_000);
        assertRefused(
          await viewer.get(`${PV}/multiple-arrays/time-period/${a},${b}/COUNT?${qs({ from: T0, to: T0 + 100_001_000, timePeriodType: 'SECONDS' })}`),
          '200,002',
        );
      });

      it('refuses calendar periods from their estimated number, without stepping through them', async () => {
        const res = await viewer.get(
          `${PV}/single/${eight[0]}?${qs({ rollup: 'AVERAGE', from: '1000-01-01T00:00:00Z', to: '9000-01-01T00:00:00Z', timePeriodType: 'DAYS', timezone: 'Europe/Berlin' })}`,
        );
        assertRefused(res, 'timePeriodType', 'about 2,921,9');
        const months = await viewer.get(`${PV}/single/${eight[0]}?${qs({ rollup: 'AVERAGE', from: '1000-01-01T00:00:00Z', to: '9000-01-01T00:00:00Z', timePeriodType: 'MONTHS' })}`);
        assert.equal(months.status, 200, 'about 96,000 months are allowed');
        assert.equal((months.body as unknown[]).length, 96_000);
      });

      it('refuses more than 100 XIDs with 400 naming xids, before looking any of them up', async () => {
        const missing = Array.from({ length: 101 }, (_, i) => `lim-missing-${i}`);
        assertRefused(await viewer.get(`${PV}/multiple-arrays/time-period/${missing.join(',')}?from=${T0}&to=${T0 + HOUR}`), 'xids', '101', '100');
        assertRefused(await viewer.get(`${PV}/multiple-arrays/time-period/${[eight[0], ...missing].join(',')}/AVERAGE?from=${T0}&to=${T0 + HOUR}`), 'xids');
        // 100 is allowed: those are looked up, and the first missing one fails the request.
        assertError(await viewer.get(`${PV}/multiple-arrays/time-period/${missing.slice(1).join(',')}?from=${T0}&to=${T0 + HOUR}`), 404, -1, 'NOT_FOUND');
      });

      it('counts XIDs after removing repeats', async () => {
        const [a, b] = eight as [string, string];
        const xids = [...Array.from({ length: 150 }, () => a), b, a];
        const res = await viewer.get<Record<string, unknown>>(`${PV}/multiple-arrays/time-period/${xids.join(',')}?from=${T0}&to=${T0 + HOUR}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.body), [a, b]);
      });
    });

    describe('the limits come from POINT_VALUES_MAX_XIDS and ROLLUP_MAX_PERIODS', () => {
      let small: TestApp;
      let client: ApiClient;
      before(async () => {
        small = await startTestApp(engine, { POINT_VALUES_MAX_XIDS: '2', ROLLUP_MAX_PERIODS: '1000' });
        client = await loggedIn(small.url, 'admin', 'admin');
        assert.equal((await client.post('/rest/latest/data-sources', { xid: 's', name: 's', modelType: 'VIRTUAL', enabled: false })).status, 201);
        for (const xid of ['p1', 'p2', 'p3']) {
          const res = await client.post('/rest/latest/data-points', { xid, name: xid, dataSourceXid: 's', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
          assert.equal(res.status, 201, res.text);
        }
      });
      after(() => small?.stop());

      it('allows exactly the configured maximum and refuses one more', async () => {
        const minutes = (n: number) => qs({ from: T0, to: T0 + n * MINUTE, timePeriodType: 'MINUTES' });
        assert.equal((await client.get(`${PV}/multiple-arrays/time-period/p1,p2/COUNT?${minutes(500)}`)).status, 200);
        assertRefused(await client.get(`${PV}/multiple-arrays/time-period/p1,p2/COUNT?${minutes(501)}`), '1,002', '1,000');
        assert.equal((await client.get(`${PV}/single/p1?rollup=COUNT&${minutes(1000)}`)).status, 200);
        assertRefused(await client.get(`${PV}/single/p1?rollup=COUNT&${minutes(1001)}`), 'timePeriods');
        assertRefused(await client.get(`${PV}/multiple-arrays/time-period/p1,p2,p3?from=${T0}&to=${T0 + HOUR}`), 'xids');
      });
    });

    describe('the largest allowed request, answered in chunks', () => {
      /** 2 points × 100,000 one-minute periods = the default ROLLUP_MAX_PERIODS. */
      const PERIODS = 100_000;
      const spec: PeriodSpec = { from: T0, to: T0 + PERIODS * MINUTE, type: 'MINUTES', count: 1, zone: 'UTC', truncate: false };
      const series: Record<string, TimedValue<number>[]> = {};
      let xids: string[];
      before(async () => {
        xids = [await createPoint(), await createPoint()];
        for (const [i, xid] of xids.entries()) {
          series[xid] = irregular(T0 - DAY, spec.to + HOUR, 3000, 17 + i);
          await seed(xid, series[xid]);
        }
      });

      it('equals the same rollup computed in one piece, for every period of every point', async () => {
        const res = await viewer.get<Record<string, PeriodValue[]>>(`${PV}/multiple-arrays/time-period/${xids.join(',')}/AVERAGE?${qs({ from: spec.from, to: spec.to, timePeriodType: 'MINUTES' })}`);
        assert.equal(res.status, 200, res.text.slice(0, 300));
        const bounds = allBounds(spec);
        for (const [i, xid] of xids.entries()) {
          const store = new MemoryValueStore();
          await store.append({
            length: series[xid]!.length,
            series: new Int32Array(series[xid]!.length).fill(i),
            ts: Float64Array.from(series[xid]!, (v) => v.ts),
            value: Float64Array.from(series[xid]!, (v) => v.value),
            text: null,
            annotation: null,
          });
          const whole = await computeRollup(store, i, bounds, spec.to, true);
          const got = res.body[xid]!;
          assert.equal(got.length, PERIODS);
          // Integer values: every average is the same quotient of the same exact integers.
          assert.deepEqual(
            got.map((p) => p.timestamp),
            [...bounds.subarray(0, -1)],
          );
          const expected = Array.from({ length: PERIODS }, (_, k) => statisticOf(whole, k, 'AVERAGE', true));
          assert.deepEqual(
            got.map((p) => p.value),
            expected,
          );
        }
      });

      it('answers /health while the rollup is being answered (not after it)', async () => {
        const cookie = [...viewer.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
        const url = `${app.url}${PV}/multiple-arrays/time-period/${xids.join(',')}/ALL?${qs({ from: spec.from, to: spec.to, timePeriodType: 'MINUTES' })}`;
        const events: string[] = [];
        let rollupDone = false;
        const rollup = (async () => {
          const res = await fetch(url, { headers: { cookie } });
          assert.equal(res.status, 200);
          events.push('rollup started');
          let bytes = 0;
          for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
          events.push('rollup done');
          rollupDone = true;
          return bytes;
        })();
        while (!events.includes('rollup started')) await new Promise((resolve) => setImmediate(resolve));
        while (!rollupDone) {
          const health = await fetch(`${app.url}/health`);
          assert.equal(health.status, 200);
          await health.arrayBuffer();
          if (!rollupDone) events.push('health');
        }
        const bytes = await rollup;
        assert.ok(bytes > 10_000_000, `${bytes} bytes answered`);
        const answered = events.filter((e) => e === 'health').length;
        // 20 chunks of 10,000 periods with a turn of the event loop after each: /health gets in.
        assert.ok(answered >= 3, `only ${answered} /health answers while the rollup ran: ${events.slice(0, 5).join(', ')}`);
        assert.equal(events.at(-1), 'rollup done');
      });
    });

    describe('chunk boundaries are invisible', () => {
      const CHUNK = ROLLUP_CHUNK_PERIODS;
      const CALENDAR_CHUNK = ROLLUP_CALENDAR_CHUNK_PERIODS;

      async function allPeriods(xid: string, params: Record<string, string | number>): Promise<PeriodValue<Record<string, unknown>>[]> {
        const res = await viewer.get<PeriodValue<Record<string, unknown>>[]>(`${PV}/single/${xid}?${qs({ rollup: 'ALL', ...params })}`);
        assert.equal(res.status, 200, res.text.slice(0, 300));
        return res.body;
      }

      function assertReference(got: PeriodValue<Record<string, unknown>>[], series: TimedValue<number>[], bounds: Float64Array, end: number, check: (i: number) => boolean): void {
        const expected = referenceRollup(series, bounds, end);
        assert.equal(got.length, expected.length);
        for (let i = 0; i < got.length; i++) {
          if (!check(i)) continue;
          assert.equal(got[i]!.timestamp, bounds[i]);
          for (const [key, value] of Object.entries(expected[i]!)) near(got[i]!.value[key], value, `period ${i} ${key}`);
        }
      }

      it('carries the value in force across boundaries: START and AVERAGE in every one of 25,000 hours', async () => {
        const xid = await createPoint();
        await seed(xid, [{ ts: T0 - 7 * DAY, value: 42 }]);
        const periods = await allPeriods(xid, { from: T0, to: T0 + 25_000 * HOUR, timePeriodType: 'HOURS' });
        assert.equal(periods.length, 25_000);
        periods.forEach((p, i) => {
          assert.equal(p.timestamp, T0 + i * HOUR);
          assert.deepEqual([p.value.start, p.value.average, p.value.minimum, p.value.delta, p.value.count], [42, 42, 42, 0, 0], `period ${i}`);
        });
      });

      it('gives AVERAGE, START and DELTA at a boundary what the reference gives, on the raw path and the bucket path', async () => {
        const xid = await createPoint();
        for (const [label, from, step, type] of [
          ['minutes off the hour (raw values)', T0 + 7_000, MINUTE, 'MINUTES'],
          ['hours (buckets)', T0, HOUR, 'HOURS'],
        ] as const) {
          const boundary = from + CHUNK * step;
          const series = [
            { ts: from - step, value: 3 },
            { ts: boundary - step / 2, value: 10 },
            { ts: boundary + step / 4, value: 30 },
            { ts: boundary + step / 2, value: -6 },
            { ts: boundary + 2 * CHUNK * step, value: 1 },
          ];
          await admin.delete(`${PV}/${xid}?from=0&to=${T0 + 10_000 * DAY}`);
          await seed(xid, series);
          const to = from + (2 * CHUNK + 500) * step;
          const got = await allPeriods(xid, { from, to, timePeriodType: type });
          const bounds = allBounds({ from, to, type, count: 1, zone: 'UTC', truncate: false });
          assertReference(got, series, bounds, to, (i) => Math.abs(i - CHUNK) <= 2 || Math.abs(i - 2 * CHUNK) <= 2 || i % 997 === 0);
          assert.deepEqual([got[CHUNK]!.value.start, got[CHUNK]!.value.delta], [10, -16], `${label}: first period of the second chunk`);
        }
      });

      it('keeps DST days whole when a chunk starts on one (Europe/Berlin DAYS)', async () => {
        const xid = await createPoint();
        const zone = 'Europe/Berlin';
        // Calendar periods come ROLLUP_CALENDAR_CHUNK_PERIODS at a time: the second chunk starts on the
        // spring change of 2014 (a 23-hour day); all of it lies in the past, so `to` ends the data.
        const springDay = DateTime.fromISO('2014-03-30T00:00', { zone });
        const from = springDay.minus({ days: CALENDAR_CHUNK }).toMillis();
        const to = springDay.plus({ days: CALENDAR_CHUNK + 100 }).toMillis();
        const series = irregular(from - DAY, to, 400, 5).concat([
          { ts: springDay.toMillis() + HOUR, value: 500 },
          { ts: springDay.toMillis() + 5 * HOUR, value: -500 },
        ]);
        series.sort((a, b) => a.ts - b.ts);
        await seed(xid, series);
        const got = await allPeriods(xid, { from, to, timePeriodType: 'DAYS', timezone: zone });
        const bounds = allBounds({ from, to, type: 'DAYS', count: 1, zone, truncate: false });
        assert.equal(bounds[CALENDAR_CHUNK], springDay.toMillis(), 'a chunk boundary on the spring change');
        assert.equal(bounds[CALENDAR_CHUNK + 1]! - bounds[CALENDAR_CHUNK]!, 23 * HOUR);
        assertReference(got, series, bounds, to, (i) => Math.abs(i - CALENDAR_CHUNK) <= 3 || Math.abs(i - 2 * CALENDAR_CHUNK) <= 3 || i % 101 === 0);
      });
    });

    describe('CSV: cells a spreadsheet would run as formulas', () => {
      let text: string;
      let numeric: string;
      const TEXT_VALUES = ['=1+2', '-5', '+1.5e3', '@SUM(A1)', '\tcmd', '\r=cmd', '-2+3', 'plain'];
      before(async () => {
        text = await createPoint('ALPHANUMERIC');
        numeric = await createPoint('NUMERIC');
        await seed(
          text,
          TEXT_VALUES.map((value, i) => ({ ts: T0 + i * MINUTE, value, annotation: i === 0 ? '=HYPERLINK("http://evil","x")' : i === 1 ? '-3' : undefined })),
        );
        await seed(numeric, [
          { ts: T0, value: -5, annotation: '+cmd' },
          { ts: T0 + MINUTE, value: 2.5 },
        ]);
      });

      const PREFIXED = ["'=1+2", '-5', '+1.5e3', "'@SUM(A1)", "'\tcmd", "'\r=cmd", "'-2+3", 'plain'];

      it('prefixes text values and annotations in raw CSV, not plain decimals nor numbers', async () => {
        const res = await viewer.get(`${PV}/single/${text}?from=${T0}&to=${T0 + HOUR}`, { headers: { accept: 'text/csv' } });
        assert.equal(res.status, 200);
        const rows = parseCsv(res.text);
        assert.deepEqual(rows[0], ['timestamp', 'value', 'annotation']);
        assert.deepEqual(
          rows.slice(1).map((r) => r[1]),
          PREFIXED,
        );
        assert.deepEqual(rows[1]![2], `'=HYPERLINK("http://evil","x")`);
        assert.deepEqual(rows[2]![2], '-3', 'an annotation that is a plain decimal stays');
        const num = parseCsv((await viewer.get(`${PV}/single/${numeric}?from=${T0}&to=${T0 + HOUR}`, { headers: { accept: 'text/csv' } })).text);
        assert.deepEqual(num.slice(1), [
          [String(T0), '-5', "'+cmd"],
          [String(T0 + MINUTE), '2.5', ''],
        ]);
      });

      it('prefixes them in the latest values and in rollups of text (FIRST, ALL) too', async () => {
        const latest = parseCsv((await viewer.get(`${PV}/latest/${text}?limit=8`, { headers: { accept: 'text/csv' } })).text);
        assert.deepEqual(
          latest.slice(1).map((r) => r[1]),
          [...PREFIXED].reverse(),
        );
        assert.equal(latest.at(-1)![2], `'=HYPERLINK("http://evil","x")`);
        const first = parseCsv(
          (await viewer.get(`${PV}/single/${text}?${qs({ rollup: 'FIRST', from: T0, to: T0 + 8 * MINUTE, timePeriodType: 'MINUTES' })}`, { headers: { accept: 'text/csv' } })).text,
        );
        assert.deepEqual(
          first.slice(1).map((r) => r[1]),
          PREFIXED,
        );
        const all = parseCsv((await viewer.get(`${PV}/single/${text}?${qs({ rollup: 'ALL', from: T0, to: T0 + MINUTE })}`, { headers: { accept: 'text/csv' } })).text);
        const header = all[0]!;
        assert.equal(all[1]![header.indexOf('first')], "'=1+2");
        assert.equal(all[1]![header.indexOf('count')], '1');
        const numericAll = parseCsv((await viewer.get(`${PV}/single/${numeric}?${qs({ rollup: 'ALL', from: T0, to: T0 + HOUR })}`, { headers: { accept: 'text/csv' } })).text);
        assert.equal(numericAll[1]![header.indexOf('minimum')], '-5', 'numbers are never prefixed');
      });
    });
  });
}
