// Point logging properties on the real service (PGlite metadata, the configured value engine): which
// values from PUT /point-values and from a virtual source are stored, what stays live and latest,
// the validation of every field, and INTERVAL logging against the rollup of the same values and
// across a restart.
import assert from 'node:assert/strict';
import { assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, loggedIn } from './helpers/client.js';
import { announceEngines } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';

const PV = '/rest/latest/point-values';
const DP = '/rest/latest/data-points';
const DS = '/rest/latest/data-sources';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface RawValue {
  timestamp: number;
  value: number | boolean | string | null;
}

announceEngines();
describe('point logging properties', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;
  let seq = 0;
  const SOURCE = 'log-src';

  before(async () => {
    app = await startTestApp('pglite');
    admin = await loggedIn(app.url, 'admin', 'admin');
    const res = await admin.post(DS, { xid: SOURCE, name: 'Logging device', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
    assert.equal(res.status, 201, res.text);
  });
  after(() => app?.stop());

  async function createPoint(dataType: string, extra: Record<string, unknown> = {}, source = SOURCE, locator: Record<string, unknown> = {}): Promise<string> {
    const xid = `log-${++seq}`;
    const res = await admin.post(DP, { xid, name: xid, dataSourceXid: source, pointLocator: { dataType, settable: true, changeType: 'NO_CHANGE', ...locator }, ...extra });
    assert.equal(res.status, 201, res.text);
    return xid;
  }

  async function put(xid: string, value: unknown, timestamp?: number, dataType = 'NUMERIC'): Promise<void> {
    const res = await admin.put(`${PV}/${xid}`, { dataType, value, ...(timestamp === undefined ? {} : { timestamp }) });
    assert.equal(res.status, 200, res.text);
  }

  async function stored(xid: string, from = 0, to = Date.now() + 400 * 24 * HOUR): Promise<RawValue[]> {
    const res = await admin.get<RawValue[]>(`${PV}/single/${xid}?from=${from}&to=${to}`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  async function latest(xid: string): Promise<RawValue | undefined> {
    const res = await admin.get<(RawValue & { unreliable?: boolean })[]>(`${PV}/latest/${xid}?limit=1`);
    assert.equal(res.status, 200, res.text);
    const [current] = res.body;
    if (!current) return undefined;
    const { unreliable, ...v } = current;
    assert.equal(unreliable, false, 'the current value is reliable (no source marks these points)');
    return v;
  }

  describe('settings', () => {
    it('gives a new point the contract defaults (ON_CHANGE, no purge override) and shows every field', async () => {
      const xid = await createPoint('NUMERIC');
      const res = await admin.get<Record<string, unknown>>(`${DP}/${xid}`);
      assert.deepEqual(res.body.loggingProperties, {
        loggingType: 'ON_CHANGE',
        tolerance: 0,
        intervalLoggingPeriod: { periods: 15, type: 'MINUTES' },
        intervalLoggingType: 'INSTANT',
        discardExtremeValues: false,
        discardLowLimit: -Number.MAX_VALUE,
        discardHighLimit: Number.MAX_VALUE,
      });
      assert.equal(res.body.purgeOverride, false);
      assert.deepEqual(res.body.purgePeriod, { periods: 1, type: 'YEARS' });
    });

    it('keeps the fields an update leaves out and replaces those it gives', async () => {
      const xid = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'ALL', tolerance: 2 }, purgeOverride: true, purgePeriod: { periods: 30, type: 'DAYS' } });
      const point = (await admin.get<Record<string, unknown>>(`${DP}/${xid}`)).body;
      const res = await admin.put<Record<string, unknown>>(`${DP}/${xid}`, { ...point, loggingProperties: { loggingType: 'INTERVAL', intervalLoggingType: 'AVERAGE' }, purgePeriod: undefined });
      assert.equal(res.status, 200, res.text);
      const l = res.body.loggingProperties as Record<string, unknown>;
      assert.equal(l.loggingType, 'INTERVAL');
      assert.equal(l.intervalLoggingType, 'AVERAGE');
      assert.equal(l.tolerance, 2);
      assert.deepEqual(res.body.purgePeriod, { periods: 30, type: 'DAYS' });
      assert.equal(res.body.purgeOverride, true);
    });

    it('refuses every bad field with 422 naming it', async () => {
      const base = { name: 'bad', dataSourceXid: SOURCE };
      const cases: [Record<string, unknown>, string, string][] = [
        [{ loggingProperties: { loggingType: 'SOMETIMES' } }, 'NUMERIC', 'loggingProperties.loggingType'],
        [{ loggingProperties: { tolerance: -1 } }, 'NUMERIC', 'loggingProperties.tolerance'],
        [{ loggingProperties: { intervalLoggingPeriod: { periods: 0, type: 'MINUTES' } } }, 'NUMERIC', 'loggingProperties.intervalLoggingPeriod.periods'],
        [{ loggingProperties: { intervalLoggingPeriod: { periods: 1, type: 'FORTNIGHTS' } } }, 'NUMERIC', 'loggingProperties.intervalLoggingPeriod.type'],
        [{ loggingProperties: { intervalLoggingType: 'MEDIAN' } }, 'NUMERIC', 'loggingProperties.intervalLoggingType'],
        [{ loggingProperties: { discardExtremeValues: 'yes' } }, 'NUMERIC', 'loggingProperties.discardExtremeValues'],
        [{ loggingProperties: { discardExtremeValues: true, discardLowLimit: 5, discardHighLimit: 5 } }, 'NUMERIC', 'loggingProperties.discardHighLimit'],
        [{ loggingProperties: { loggingType: 'INTERVAL', intervalLoggingType: 'AVERAGE' } }, 'BINARY', 'loggingProperties.intervalLoggingType'],
        [{ loggingProperties: { discardExtremeValues: true } }, 'ALPHANUMERIC', 'loggingProperties.discardExtremeValues'],
        [{ purgeOverride: 1 }, 'NUMERIC', 'purgeOverride'],
        [{ purgePeriod: { periods: 1, type: 'HOURS' } }, 'NUMERIC', 'purgePeriod.type'],
        [{ purgePeriod: { type: 'DAYS' } }, 'NUMERIC', 'purgePeriod.periods'],
      ];
      for (const [extra, dataType, property] of cases) {
        const res = await admin.post(DP, { ...base, pointLocator: { dataType, changeType: 'NO_CHANGE' }, ...extra });
        const messages = assertValidation(res);
        assert.ok(
          messages.some((m) => m.property === property),
          `${JSON.stringify(extra)}: no message for ${property} in ${JSON.stringify(messages)}`,
        );
      }
      assertHasMessage(
        assertValidation(await admin.post(DP, { ...base, pointLocator: { dataType: 'NUMERIC' }, loggingProperties: { discardExtremeValues: true, discardLowLimit: 9, discardHighLimit: 1 } })),
        'loggingProperties.discardHighLimit',
        'must be greater than discardLowLimit',
      );
    });
  });

  describe('PUT /point-values', () => {
    const t0 = Date.UTC(2025, 5, 1);

    it('ON_CHANGE with a tolerance stores a value only when it moved by more than the tolerance from the last stored one; the rest is still the latest', async () => {
      const xid = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'ON_CHANGE', tolerance: 0.5 } });
      const values = [10, 10.2, 10.6, 10.7, 11.2, 10.9, 10.7, 10.6];
      for (const [i, v] of values.entries()) {
        await put(xid, v, t0 + i * 1000);
        assert.deepEqual(await latest(xid), { timestamp: t0 + i * 1000, value: v }, `latest after ${v}`);
      }
      assert.deepEqual(
        (await stored(xid)).map((r) => r.value),
        [10, 10.6, 11.2, 10.6], // 10.7 is 0.5 from 11.2: not more than the tolerance
      );
    });

    it('ON_CHANGE without a tolerance stores every change of every type, and nothing that repeats', async () => {
      const num = await createPoint('NUMERIC');
      const alpha = await createPoint('ALPHANUMERIC');
      const bin = await createPoint('BINARY');
      for (const [i, v] of [1, 1, 2, 2, 1].entries()) await put(num, v, t0 + i * 1000);
      for (const [i, v] of ['a', 'a', 'b', 'b'].entries()) await put(alpha, v, t0 + i * 1000, 'ALPHANUMERIC');
      for (const [i, v] of [true, true, false, true].entries()) await put(bin, v, t0 + i * 1000, 'BINARY');
      assert.deepEqual((await stored(num)).map((r) => r.value), [1, 2, 1]);
      assert.deepEqual((await stored(alpha)).map((r) => r.value), ['a', 'b']);
      assert.deepEqual((await stored(bin)).map((r) => r.value), [true, false, true]);
    });

    it('ALL stores every value, NONE none (yet the latest moves), ON_TS_CHANGE one per timestamp', async () => {
      const all = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'ALL' } });
      const none = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'NONE' } });
      const ts = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'ON_TS_CHANGE' } });
      for (const xid of [all, none]) for (const [i, v] of [5, 5, 6].entries()) await put(xid, v, t0 + i * 1000);
      for (const [t, v] of [[0, 1], [0, 2], [1000, 2], [2000, 3]] as const) await put(ts, v, t0 + t);
      assert.deepEqual((await stored(all)).map((r) => r.value), [5, 5, 6]);
      assert.deepEqual(await stored(none), []);
      assert.deepEqual(await latest(none), { timestamp: t0 + 2000, value: 6 });
      assert.deepEqual(
        (await stored(ts)).map((r) => [r.timestamp - t0, r.value]),
        [[0, 1], [1000, 2], [2000, 3]],
      );
    });

    it('drops extreme values from a source altogether (not stored, not the latest, not live), and refuses them through PUT before the device', async () => {
      const xid = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'ALL', discardExtremeValues: true, discardLowLimit: 0, discardHighLimit: 100 } });
      const pointValues = app.service.services.pointValues;
      const point = (await pointValues.point(xid))!;
      const live: unknown[] = [];
      const unsubscribe = pointValues.bus.subscribe((e) => {
        if (e.xid === xid) live.push(e.value.value);
      });
      after(unsubscribe);
      for (const [i, value] of [50, 150, -1, 100, 1e9].entries()) await pointValues.acceptFromSource([{ point, value, ts: t0 + i * 1000 }]);
      assert.deepEqual((await stored(xid)).map((r) => r.value), [50, 100]);
      assert.deepEqual(await latest(xid), { timestamp: t0 + 3000, value: 100 });
      assert.deepEqual(live, [50, 100]);
      const refused = await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 101 });
      assertHasMessage(assertValidation(refused), 'value', /outside the point's discard limits/);
      assert.deepEqual(await latest(xid), { timestamp: t0 + 3000, value: 100 });
    });

    it('POST /point-values (an import of history) stores what it is given, whatever the logging', async () => {
      const xid = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'NONE', discardExtremeValues: true, discardLowLimit: 0, discardHighLimit: 1 } });
      const res = await admin.post(PV, [5, 5, 7].map((value, i) => ({ xid, value, timestamp: t0 + i })));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual((await stored(xid)).map((r) => r.value), [5, 5, 7]);
    });

    it('a change of the settings takes effect for the next value', async () => {
      const xid = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'NONE' } });
      await put(xid, 1, t0);
      const point = (await admin.get<Record<string, unknown>>(`${DP}/${xid}`)).body;
      assert.equal((await admin.put(`${DP}/${xid}`, { ...point, loggingProperties: { loggingType: 'ALL' } })).status, 200);
      await put(xid, 1, t0 + 1000);
      assert.deepEqual((await stored(xid)).map((r) => r.timestamp - t0), [1000]);
    });
  });

  describe('INTERVAL', () => {
    /** An hour three hours back: its values come in order, then one of the next hour closes it. */
    const hour = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
    const series: [number, number][] = [
      [hour - 10 * MINUTE, 10],
      [hour + 5 * MINUTE, 20],
      [hour + 20 * MINUTE, 5],
      [hour + 21 * MINUTE, 40],
      [hour + 50 * MINUTE, 12],
      [hour + 65 * MINUTE, 30],
    ];

    async function rollup(xid: string, statistic: string, from: number, to: number): Promise<unknown> {
      const res = await admin.get<{ timestamp: number; value: unknown }[]>(`${PV}/single/${xid}?from=${from}&to=${to}&rollup=${statistic}&timePeriodType=HOURS&timePeriods=1`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.length, 1);
      return res.body[0]!.value;
    }

    for (const statistic of ['AVERAGE', 'MAXIMUM', 'MINIMUM'] as const) {
      it(`an hourly ${statistic} equals the ${statistic} rollup of the same values stored with ALL`, async () => {
        const reference = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'ALL' } });
        const interval = await createPoint('NUMERIC', {
          loggingProperties: { loggingType: 'INTERVAL', intervalLoggingType: statistic, intervalLoggingPeriod: { periods: 1, type: 'HOURS' } },
        });
        for (const [ts, v] of series) {
          await put(reference, v, ts);
          await put(interval, v, ts);
        }
        await app.service.services.pointValues.logIntervals(); // the clock does not close a period of past values
        const rows = await stored(interval);
        assert.deepEqual(rows.map((r) => r.timestamp), [hour - HOUR, hour], 'one value per period, stamped with its start');
        const expected = await rollup(reference, statistic, hour, hour + HOUR);
        assert.equal(typeof expected, 'number');
        assert.ok(Math.abs((rows[1]!.value as number) - (expected as number)) < 1e-9, `${String(rows[1]!.value)} vs ${String(expected)}`);
        if (statistic === 'AVERAGE') {
          // by hand: 10 for 5 min, 20 for 15, 5 for 1, 40 for 29, 12 for 10
          assert.ok(Math.abs((rows[1]!.value as number) - (10 * 5 + 20 * 15 + 5 * 1 + 40 * 29 + 12 * 10) / 60) < 1e-9);
        }
        assert.equal(rows[0]!.value, 10, 'the hour before: only the first value, from its arrival');
        assert.deepEqual(await latest(interval), { timestamp: hour + 65 * MINUTE, value: 30 }, 'the newest value is still the latest');
      });
    }

    it('INSTANT stores the value in force at each period start', async () => {
      const xid = await createPoint('MULTISTATE', { loggingProperties: { loggingType: 'INTERVAL', intervalLoggingPeriod: { periods: 30, type: 'MINUTES' } } });
      for (const [ts, v] of [[hour - 5 * MINUTE, 1], [hour + 10 * MINUTE, 2], [hour + 20 * MINUTE, 3], [hour + 95 * MINUTE, 4]] as const) await put(xid, v, ts, 'MULTISTATE');
      assert.deepEqual(
        (await stored(xid)).map((r) => [(r.timestamp - hour) / MINUTE, r.value]),
        [[0, 1], [30, 3], [60, 3], [90, 3]],
      );
    });

    it('keeps a period across a restart: written once, from the values before and after it', async () => {
      const reference = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'ALL' } });
      const xid = await createPoint('NUMERIC', { loggingProperties: { loggingType: 'INTERVAL', intervalLoggingType: 'AVERAGE', intervalLoggingPeriod: { periods: 1, type: 'HOURS' } } });
      const before = series.slice(0, 3);
      const afterRestart = series.slice(3);
      for (const [ts, v] of before) {
        await put(reference, v, ts);
        await put(xid, v, ts);
      }
      await app.restart();
      admin = await loggedIn(app.url, 'admin', 'admin');
      for (const [ts, v] of afterRestart) {
        await put(reference, v, ts);
        await put(xid, v, ts);
      }
      const rows = await stored(xid);
      assert.deepEqual(rows.map((r) => r.timestamp), [hour - HOUR, hour]);
      const expected = (await rollup(reference, 'AVERAGE', hour, hour + HOUR)) as number;
      assert.ok(Math.abs((rows[1]!.value as number) - expected) < 1e-9, `${String(rows[1]!.value)} vs ${expected}`);
    });

    it('on a virtual source: one value per period on the clock, each period once, also across a restart of the service and of the source', async function () {
      this.timeout(60_000);
      const src = `log-virtual-${++seq}`;
      let res = await admin.post(DS, { xid: src, name: src, modelType: 'VIRTUAL', enabled: true, updatePeriods: 200, updatePeriodType: 'MILLISECONDS' });
      assert.equal(res.status, 201, res.text);
      const xid = await createPoint(
        'NUMERIC',
        { loggingProperties: { loggingType: 'INTERVAL', intervalLoggingType: 'AVERAGE', intervalLoggingPeriod: { periods: 1, type: 'SECONDS' } } },
        src,
        { changeType: 'INCREMENT', min: 0, max: 1e9, step: 1, settable: false },
      );
      const onChange = await createPoint('NUMERIC', {}, src, { changeType: 'RANDOM_WALK', min: 7, max: 7, settable: false });
      const started = Date.now();
      await eventually('three periods', async () => ((await stored(xid)).length >= 3 ? true : undefined));
      await app.restart();
      admin = await loggedIn(app.url, 'admin', 'admin');
      const restarted = Date.now();
      await eventually('two periods after the restart', async () => ((await stored(xid, restarted)).length >= 2 ? true : undefined));
      // The source restarted (disabled and enabled again): its point's periods go on.
      for (const enabled of [false, true]) assert.equal((await admin.put(`${DS}/enable-disable/${src}`, { enabled })).status, 200);
      const resumed = Date.now();
      await eventually('two periods after the source restarted', async () => ((await stored(xid, resumed)).length >= 2 ? true : undefined));
      const rows = await stored(xid, started - 1000);
      const stamps = rows.map((r) => r.timestamp);
      assert.ok(stamps.every((t) => t % 1000 === 0), `stamped with period starts: ${stamps.join(', ')}`);
      assert.equal(new Set(stamps).size, stamps.length, 'no period twice');
      assert.ok(rows.every((r) => typeof r.value === 'number' && r.value >= 0), JSON.stringify(rows));
      // A constant point under ON_CHANGE: one stored value, while its latest keeps moving.
      const kept = await stored(onChange);
      assert.equal(kept.length, 1, JSON.stringify(kept));
      assert.equal(kept[0]!.value, 7);
      const newest = await latest(onChange);
      assert.ok(newest && newest.timestamp > kept[0]!.timestamp, 'the latest value is newer than the stored one');
      res = await admin.put(`${DS}/${src}`, { xid: src, name: src, modelType: 'VIRTUAL', enabled: false, updatePeriods: 200, updatePeriodType: 'MILLISECONDS' });
      assert.equal(res.status, 200, res.text);
    });
  });

  it('an unauthenticated client cannot see the settings', async () => {
    const xid = await createPoint('NUMERIC');
    assert.equal((await new ApiClient(app.url).get(`${DP}/${xid}`)).status, 401);
  });
});
