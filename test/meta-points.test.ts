// Computed points (a META data source) through the API on the real service: a COP from two context
// points written with POST /point-values, a 15-minute average equal to GET /point-values' AVERAGE of
// the same window, cron updates every second, a delay that coalesces a burst, a chain A → B, cycles
// and bad scripts refused with 422 (also through a configuration import), a run-time error shown as
// a warning on the point, and 100 computed points over 1,000 context updates (throughput printed).
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertHasMessage, assertValidation } from './helpers/assertions.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';

const API = '/rest/latest';
const DS = `${API}/data-sources`;
const DP = `${API}/data-points`;
const PV = `${API}/point-values`;
const MINUTE = 60_000;

interface PointView {
  xid: string;
  lastWarning: string | null;
}

interface RawValue {
  timestamp: number;
  value: number | boolean;
}

announceEngines();
for (const engine of metadataEngines()) describe(`computed points (META, ${engine})`, function () {
  this.timeout(240_000);
  let app: TestApp;
  let admin: ApiClient;
  let n = 0;

  before(async () => {
    app = await startTestApp(engine);
    admin = await loggedIn(app.url, 'admin', 'admin');
    assert.equal((await admin.post(DS, { xid: 'ctx-src', name: 'context', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' })).status, 201);
    const meta = await admin.post(DS, { xid: 'meta-src', name: 'computed', modelType: 'META', enabled: true });
    assert.equal(meta.status, 201, meta.text);
  });

  after(async () => {
    await app?.stop();
  });

  /** A point whose values are written through the API (a NO_CHANGE virtual point). */
  async function contextPoint(dataType = 'NUMERIC'): Promise<string> {
    const xid = `ctx-${++n}`;
    const res = await admin.post(DP, { xid, name: xid, dataSourceXid: 'ctx-src', pointLocator: { dataType, changeType: 'NO_CHANGE' }, loggingProperties: { loggingType: 'ALL' } });
    assert.equal(res.status, 201, res.text);
    return xid;
  }

  function computedBody(xid: string, locator: Record<string, unknown>, dataType = 'NUMERIC') {
    return { xid, name: xid, dataSourceXid: 'meta-src', pointLocator: { dataType, ...locator }, loggingProperties: { loggingType: 'ALL' } };
  }

  async function computed(locator: Record<string, unknown>, dataType = 'NUMERIC'): Promise<string> {
    const xid = `meta-${++n}`;
    const res = await admin.post(DP, computedBody(xid, locator, dataType));
    assert.equal(res.status, 201, res.text);
    return xid;
  }

  async function write(values: { xid: string; value: number | boolean; timestamp: number }[]): Promise<void> {
    const res = await admin.post(PV, values);
    assert.ok(res.status < 300, `${res.status} ${res.text}`);
  }

  async function raw(xid: string, from: number, to: number): Promise<RawValue[]> {
    const res = await admin.get<RawValue[]>(`${PV}/single/${xid}?from=${from}&to=${to}&limit=100000`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  async function latest(xid: string): Promise<RawValue | undefined> {
    const res = await admin.get<RawValue[]>(`${PV}/latest/${xid}?limit=1`);
    assert.equal(res.status, 200, res.text);
    const v = res.body[0];
    return v && { timestamp: v.timestamp, value: v.value };
  }

  it('computes a COP from two context points written through POST /point-values, stamped with the update', async () => {
    const heat = await contextPoint();
    const power = await contextPoint();
    const cop = await computed({ script: 'heat / power', context: [{ xid: heat, var: 'heat' }, { xid: power, var: 'power' }] });
    const t = Date.now() - 10_000;
    await write([{ xid: power, value: 4, timestamp: t }]);
    await write([{ xid: heat, value: 12, timestamp: t + 1_000 }]);
    const v = await eventually('the COP', async () => (await latest(cop))?.timestamp === t + 1_000 ? latest(cop) : undefined);
    assert.deepEqual(v, { timestamp: t + 1_000, value: 3 });
    await write([{ xid: power, value: 5, timestamp: t + 2_000 }]);
    assert.deepEqual(await eventually('the next COP', async () => ((await latest(cop))?.timestamp === t + 2_000 ? latest(cop) : undefined)), { timestamp: t + 2_000, value: 12 / 5 });
    const view = (await admin.get<Record<string, unknown>>(`${DP}/${cop}`)).body;
    assert.equal(view.dataSourceType, 'META');
    assert.deepEqual(view.pointLocator, { dataType: 'NUMERIC', settable: false, script: 'heat / power', context: [{ xid: heat, var: 'heat' }, { xid: power, var: 'power' }], updateEvent: 'CONTEXT_UPDATE', executionDelayMs: 0 });
  });

  it('after a restart, computes from the context values stored before it', async () => {
    const heat = await contextPoint();
    const power = await contextPoint();
    const cop = await computed({ script: 'heat / power', context: [{ xid: heat, var: 'heat' }, { xid: power, var: 'power' }] });
    const t = Date.now() - 10_000;
    await write([{ xid: heat, value: 10, timestamp: t }]);
    await app.restart();
    admin = await loggedIn(app.url, 'admin', 'admin');
    await write([{ xid: power, value: 4, timestamp: t + 1 }]);
    assert.deepEqual(await eventually('the COP', async () => ((await latest(cop))?.timestamp === t + 1 ? latest(cop) : undefined)), { timestamp: t + 1, value: 2.5 });
  });

  it('computes avg(x, "15m") as the rollup AVERAGE of GET /point-values over the same window', async () => {
    const x = await contextPoint();
    const avg = await computed({ script: 'avg(x, "15m")', context: [{ xid: x, var: 'x' }] });
    const end = Date.now() - 5_000;
    const values = Array.from({ length: 40 }, (_, i) => ({ xid: x, value: Math.round(50 + 30 * Math.sin(i / 3)), timestamp: end - 30 * MINUTE + i * 45_000 + (i % 7) * 1_000 }));
    values.push({ xid: x, value: 99, timestamp: end });
    await write(values);
    const got = await eventually('the average at the last update', async () => ((await latest(avg))?.timestamp === end ? latest(avg) : undefined));
    const res = await admin.get<{ timestamp: number; value: number }[]>(`${PV}/single/${x}?from=${end - 15 * MINUTE}&to=${end + 1}&rollup=AVERAGE`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.length, 1);
    assert.equal(got!.value, res.body[0]!.value, 'the same number as the rollup');
    // and it is time-weighted, not the mean of the values in the window
    const inWindow = values.filter((v) => v.timestamp >= end - 15 * MINUTE);
    assert.notEqual(got!.value, inWindow.reduce((s, v) => s + v.value, 0) / inWindow.length);
  });

  it('computes min, max, delta and last over a window', async () => {
    const x = await contextPoint();
    const p = await computed({ script: 'max(x, "1h") * 10000 + min(x, "1h") * 100 + delta(x, "1h") + last(x, "1h") / 1000', context: [{ xid: x, var: 'x' }] });
    const end = Date.now() - 5_000;
    await write([5, 9, 2, 7].map((value, i) => ({ xid: x, value, timestamp: end - (3 - i) * MINUTE })));
    const v = await eventually('the statistics', async () => ((await latest(p))?.timestamp === end ? latest(p) : undefined));
    // the window [end − 1h, end]: max 9, min 2, delta last − first... as the rollup's DELTA, last 7
    const delta = (await admin.get<{ value: number }[]>(`${PV}/single/${x}?from=${end - 60 * MINUTE}&to=${end + 1}&rollup=DELTA`)).body[0]!.value;
    assert.equal(v!.value, 9 * 10000 + 2 * 100 + delta + 7 / 1000);
  });

  it('updates on a cron pattern every second, stamped with the tick', async () => {
    const x = await contextPoint();
    await write([{ xid: x, value: 21, timestamp: Date.now() - 1_000 }]);
    const start = Date.now();
    const p = await computed({ script: 'x * 2', context: [{ xid: x, var: 'x' }], updateEvent: 'CRON', cronPattern: '* * * * * *' });
    const values = await eventually('three ticks', async () => {
      const got = await raw(p, start, Date.now() + 1_000);
      return got.length >= 3 ? got : undefined;
    });
    for (const v of values) {
      assert.equal(v.value, 42);
      assert.equal(v.timestamp % 1_000, 0, 'on the second');
    }
    const steps = values.slice(1).map((v, i) => v.timestamp - values[i]!.timestamp);
    assert.ok(steps.every((s) => s === 1_000), `one a second: ${steps.join(', ')}`);
    assert.equal((await admin.delete(`${DP}/${p}`)).status, 200);
  });

  it('coalesces a burst of context updates within executionDelayMs into one computation', async () => {
    const x = await contextPoint();
    const p = await computed({ script: 'x + 1', context: [{ xid: x, var: 'x' }], executionDelayMs: 700 });
    const t = Date.now() - 20_000;
    // One request: ten writes one after the other can take longer than the delay on a loaded machine.
    await write(Array.from({ length: 10 }, (_, i) => ({ xid: x, value: i, timestamp: t + i * 100 })));
    await eventually('the computation', async () => ((await raw(p, t - 1, t + 10_000)).length > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 1_200));
    assert.deepEqual(await raw(p, t - 1, t + 10_000), [{ timestamp: t + 900, value: 10 }], 'one value: the last update, its time');
  });

  it('computes a chain: A from a context point, B from A', async () => {
    const x = await contextPoint();
    const a = await computed({ script: 'x * 2', context: [{ xid: x, var: 'x' }] });
    const b = await computed({ script: 'a + 1', context: [{ xid: a, var: 'a' }] }, 'NUMERIC');
    const c = await computed({ script: 'b > 10', context: [{ xid: b, var: 'b' }] }, 'BINARY');
    const t = Date.now() - 3_000;
    await write([{ xid: x, value: 5, timestamp: t }]);
    assert.deepEqual(await eventually('B', async () => ((await latest(b))?.timestamp === t ? latest(b) : undefined)), { timestamp: t, value: 11 });
    assert.deepEqual(await eventually('C', async () => ((await latest(c))?.timestamp === t ? latest(c) : undefined)), { timestamp: t, value: true });
  });

  it('refuses a cycle with 422: itself, two points, three points', async () => {
    const x = await contextPoint();
    const self = assertValidation(await admin.post(DP, computedBody('meta-self', { script: 'me + 1', context: [{ xid: 'meta-self', var: 'me' }] })));
    assertHasMessage(self, 'pointLocator.context[0].xid', /the point itself/);
    const a = await computed({ script: 'x', context: [{ xid: x, var: 'x' }] });
    const b = await computed({ script: 'a', context: [{ xid: a, var: 'a' }] });
    const two = assertValidation(await admin.put(`${DP}/${a}`, computedBody(a, { script: 'b', context: [{ xid: b, var: 'b' }] })));
    assertHasMessage(two, 'pointLocator.context', new RegExp(`makes a cycle of computed points: ${a} → ${b} → ${a}`));
    const c = await computed({ script: 'b', context: [{ xid: b, var: 'b' }] });
    const three = assertValidation(await admin.put(`${DP}/${a}`, computedBody(a, { script: 'c + x', context: [{ xid: c, var: 'c' }, { xid: x, var: 'x' }] })));
    assertHasMessage(three, 'pointLocator.context', new RegExp(`${a} → ${c} → ${b} → ${a}`));
    const patched = assertValidation(await admin.patch(`${DP}/${a}`, { pointLocator: { dataType: 'NUMERIC', script: 'c', context: [{ xid: c, var: 'c' }] } }));
    assertHasMessage(patched, 'pointLocator.context', /makes a cycle/);
    // and a cycle through an import is refused as a whole
    const imported = await admin.post(`${API}/configuration/import`, {
      dataPoints: [computedBody('meta-imp-1', { script: 'q', context: [{ xid: 'meta-imp-2', var: 'q' }] }), computedBody('meta-imp-2', { script: 'p', context: [{ xid: 'meta-imp-1', var: 'p' }] })],
    });
    assertHasMessage(assertValidation(imported), 'dataPoints[0].pointLocator.context', /makes a cycle of computed points: meta-imp-1 → meta-imp-2 → meta-imp-1/);
    assert.equal((await admin.get(`${DP}/meta-imp-1`)).status, 404, 'nothing imported');
    // without the cycle, a context point later in the document is fine
    const fine = await admin.post(`${API}/configuration/import`, {
      dataPoints: [computedBody('meta-imp-1', { script: 'q', context: [{ xid: 'meta-imp-2', var: 'q' }] }), computedBody('meta-imp-2', { script: 'p', context: [{ xid: x, var: 'p' }] })],
    });
    assert.equal(fine.status, 200, fine.text);
  });

  it('refuses bad scripts, contexts and cron patterns with 422 naming the field', async () => {
    const x = await contextPoint();
    const text = await contextPoint('ALPHANUMERIC');
    const binary = await contextPoint('BINARY');
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ script: 'x.constructor', context: [{ xid: x, var: 'x' }] }, 'pointLocator.script', /property access/],
      [{ script: 'x +', context: [{ xid: x, var: 'x' }] }, 'pointLocator.script', /Expected expression after \+ \(at character 3\)/],
      [{ script: 'x + y', context: [{ xid: x, var: 'x' }] }, 'pointLocator.script', /unknown name "y".*at character 4/],
      [{ script: 'process.exit()', context: [{ xid: x, var: 'x' }] }, 'pointLocator.script', /property access|unknown|only the listed functions/],
      [{ script: 'x', context: [{ xid: 'no-such-point', var: 'x' }] }, 'pointLocator.context[0].xid', /Data point not found: no-such-point/],
      [{ script: 'x', context: [{ xid: text, var: 'x' }] }, 'pointLocator.context[0].xid', /NUMERIC, BINARY or MULTISTATE/],
      [{ script: 'avg(b, "1h")', context: [{ xid: binary, var: 'b' }] }, 'pointLocator.script', /needs a NUMERIC point/],
      [{ script: 'x', context: [{ xid: x, var: 'x' }, { xid: x, var: 'x' }] }, 'pointLocator.context[1].var', /bound twice/],
      [{ script: 'x', context: [{ xid: x, var: 'max' }] }, 'pointLocator.context[0].var', /function name/],
      [{ script: 'x', context: [{ xid: x, var: 'x' }], updateEvent: 'CRON' }, 'pointLocator.cronPattern', /required/],
      [{ script: 'x', context: [{ xid: x, var: 'x' }], updateEvent: 'CRON', cronPattern: '61 * * * *' }, 'pointLocator.cronPattern', /not a cron pattern/],
      [{ script: 'x', context: [] }, 'pointLocator.context', /at least one point/],
      [{ script: 'x'.repeat(2_001), context: [{ xid: x, var: 'x' }] }, 'pointLocator.script', /./],
    ];
    for (const [locator, property, message] of cases) {
      const res = await admin.post(DP, computedBody(`meta-bad-${++n}`, locator));
      assertHasMessage(assertValidation(res), property, message);
    }
    assertHasMessage(assertValidation(await admin.post(DP, computedBody(`meta-bad-${++n}`, { script: 'x', context: [{ xid: x, var: 'x' }] }, 'ALPHANUMERIC'))), 'pointLocator.dataType', /./);
  });

  it('shows a run-time error as a warning on the point, and no value', async () => {
    const x = await contextPoint();
    const y = await contextPoint();
    const p = await computed({ script: 'x / y', context: [{ xid: x, var: 'x' }, { xid: y, var: 'y' }] });
    const t = Date.now() - 5_000;
    await write([{ xid: y, value: 0, timestamp: t }, { xid: x, value: 3, timestamp: t }]);
    const view = await eventually('the warning', async () => {
      const v = (await admin.get<PointView>(`${DP}/${p}`)).body;
      return v.lastWarning?.includes('division by zero') ? v : undefined;
    });
    assert.match(view.lastWarning!, /Script: division by zero \(3 \/ 0\)/);
    assert.equal(await latest(p), undefined, 'no value');
    // a history window without data: a warning too
    const z = await contextPoint();
    const empty = await computed({ script: 'avg(z, "1m")', context: [{ xid: z, var: 'z' }], updateEvent: 'CRON', cronPattern: '* * * * * *' });
    await eventually('the empty-window warning', async () => {
      const v = (await admin.get<PointView>(`${DP}/${empty}`)).body;
      return v.lastWarning?.includes('no values of z in the window') ? v : undefined;
    });
    assert.equal(await latest(empty), undefined);
    assert.equal((await admin.delete(`${DP}/${empty}`)).status, 200);
  });

  it('100 computed points over 1,000 context updates: no cliff', async function () {
    this.timeout(300_000);
    const rate = async (points: number, updates: number): Promise<number> => {
      const x = await contextPoint();
      const xids: string[] = [];
      for (let i = 0; i < points; i++) xids.push(await computed({ script: `x * ${i} + 1`, context: [{ xid: x, var: 'x' }] }));
      const t0 = Date.now() - updates * 10 - 60_000;
      // The source restarts as its points are created; values it is not running for are never computed,
      // so one computed value of the last point created says it runs with all of them.
      await write([{ xid: x, value: -1, timestamp: t0 - 1_000 }]);
      await eventually('the source running with every point', async () => ((await latest(xids[points - 1]!))?.timestamp === t0 - 1_000 ? true : undefined), 60_000, 100);
      const started = performance.now();
      for (let i = 0; i < updates; i += 100) {
        await write(Array.from({ length: 100 }, (_, j) => ({ xid: x, value: i + j, timestamp: t0 + (i + j) * 10 })));
      }
      const last = t0 + (updates - 1) * 10;
      await eventually(`all ${points} computed`, async () => {
        for (const xid of [xids[0]!, xids[points - 1]!]) {
          const got = await latest(xid);
          if (process.env.META_DEBUG) console.log(xid, got, last);
          if (got?.timestamp !== last) return undefined;
        }
        return true;
      }, 240_000, 100);
      const seconds = (performance.now() - started) / 1000;
      const count = (await admin.get<{ value: number }[]>(`${PV}/single/${xids[points - 1]}?from=${t0}&to=${last + 1}&rollup=COUNT`)).body[0]!.value;
      assert.equal(count, updates, 'a value per update');
      const perSecond = (points * updates) / seconds;
      console.log(`      ${points} computed points × ${updates} updates: ${seconds.toFixed(2)} s, ${Math.round(perSecond)} computed values/s`);
      return perSecond;
    };
    const small = await rate(10, 1_000);
    const big = await rate(100, 1_000);
    assert.ok(big > small / 3, `100 points: ${Math.round(big)}/s against ${Math.round(small)}/s for 10`);
  });
});
