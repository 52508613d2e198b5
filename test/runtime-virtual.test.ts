// The data source runtime with VIRTUAL sources, over HTTP on the real service: an enabled source
// produces values through the pipeline, each changeType behaves as documented, disabling stops it,
// enabling, updating and point edits restart it, deleting stops it, a restart of the service resumes
// it, and a set value on a settable point is stored and steers the generator.
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';
import { generatorFor } from '../src/runtime/virtual.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PV = '/rest/latest/point-values';

interface RawValue {
  timestamp: number;
  value: number | boolean | string | null;
}

interface SourceView {
  state: string;
  lastError: string | null;
  enabled: boolean;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;


for (const engine of metadataEngines()) {
  describe(`data source runtime: VIRTUAL (${engine})`, function () {
    this.timeout(60_000);
    let app: TestApp;
    let admin: ApiClient;

    before(async () => {
      announceEngines();
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
    });

    after(async () => {
      await app?.stop();
    });

    async function createSource(extra: Record<string, unknown> = {}): Promise<string> {
      const xid = unique('vds-');
      const res = await admin.post(DS, { xid, name: xid, modelType: 'VIRTUAL', enabled: true, updatePeriods: 50, updatePeriodType: 'MILLISECONDS', ...extra });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    async function createPoint(source: string, dataType: string, locator: Record<string, unknown>): Promise<string> {
      const xid = unique('vdp-');
      const res = await admin.post(DP, { xid, name: xid, dataSourceXid: source, pointLocator: { dataType, settable: true, ...locator }, setPermission: ['user'] });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    async function latest(xid: string, limit = 1): Promise<RawValue[]> {
      const res = await admin.get<RawValue[]>(`${PV}/latest/${xid}?limit=${limit}`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    }

    /** Waits for at least n values, newest first. */
    function values(xid: string, n: number): Promise<RawValue[]> {
      return eventually(`${n} values of ${xid}`, async () => {
        const v = await latest(xid, n);
        return v.length >= n ? v : undefined;
      });
    }

    async function source(xid: string): Promise<SourceView> {
      const res = await admin.get<SourceView>(`${DS}/${xid}`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    }

    it('runs an enabled source: RUNNING, and a random walk stays within min and max', async () => {
      const ds = await createSource();
      const p = await createPoint(ds, 'NUMERIC', { changeType: 'RANDOM_WALK', min: 10, max: 20, startValue: 15 });
      assert.equal((await source(ds)).state, 'RUNNING');
      const got = await values(p, 5);
      for (const v of got) assert.ok(typeof v.value === 'number' && v.value >= 10 && v.value <= 20, `out of range: ${v.value}`);
      assert.ok(got[0]!.timestamp > got[4]!.timestamp, 'newest first, distinct timestamps');
    });

    it('INCREMENT steps by step and wraps to min past max; SINE stays within its range', async () => {
      const ds = await createSource();
      const inc = await createPoint(ds, 'NUMERIC', { changeType: 'INCREMENT', min: 0, max: 3, step: 1 });
      const sine = await createPoint(ds, 'NUMERIC', { changeType: 'SINE', min: -1, max: 1, periodMs: 1000 });
      const got = (await values(inc, 6)).reverse().map((v) => v.value as number);
      for (let i = 1; i < got.length; i++) assert.equal(got[i], got[i - 1]! === 3 ? 0 : got[i - 1]! + 1, `sequence ${got.join(',')}`);
      for (const v of await values(sine, 5)) assert.ok((v.value as number) >= -1 && (v.value as number) <= 1);
    });

    it('BINARY ALTERNATE alternates; MULTISTATE INCREMENT cycles through its values', async () => {
      const ds = await createSource();
      const bin = await createPoint(ds, 'BINARY', { changeType: 'ALTERNATE' });
      const multi = await createPoint(ds, 'MULTISTATE', { changeType: 'INCREMENT', values: [2, 5, 7] });
      const b = (await values(bin, 4)).map((v) => v.value);
      for (let i = 1; i < b.length; i++) assert.notEqual(b[i], b[i - 1]);
      const m = (await values(multi, 6)).reverse().map((v) => v.value as number);
      const cycle = [2, 5, 7];
      for (let i = 1; i < m.length; i++) assert.equal(m[i], cycle[(cycle.indexOf(m[i - 1]!) + 1) % 3], `sequence ${m.join(',')}`);
    });

    it('starts from a startValue given as a string (as Mango sends it)', async () => {
      const ds = await createSource();
      const inc = await createPoint(ds, 'NUMERIC', { changeType: 'INCREMENT', min: 0, max: 100_000, step: 1, startValue: '500' });
      const multi = await createPoint(ds, 'MULTISTATE', { changeType: 'INCREMENT', values: [2, 5, 7], startValue: '5' });
      await Promise.all([values(inc, 2), values(multi, 2)]);
      const first = async (xid: string) => {
        const res = await admin.get<RawValue[]>(`${PV}/single/${xid}?from=0&to=${Date.now() + 60_000}&limit=1`);
        assert.equal(res.status, 200, res.text);
        return res.body[0]!.value;
      };
      assert.equal(await first(inc), 501, 'INCREMENT steps from the start value');
      assert.equal(await first(multi), 5, 'MULTISTATE INCREMENT shows the start value first');
    });

    it('disabling stops it (STOPPED, no new values); enabling starts it again', async () => {
      const ds = await createSource();
      const p = await createPoint(ds, 'NUMERIC', { changeType: 'RANDOM_WALK' });
      await values(p, 2);
      const off = await admin.put<SourceView>(`${DS}/enable-disable/${ds}`, { enabled: false });
      assert.equal(off.status, 200, off.text);
      assert.equal(off.body.state, 'STOPPED');
      const last = (await latest(p))[0]!.timestamp;
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await latest(p))[0]!.timestamp, last, 'no value after the source was disabled');
      const on = await admin.put<SourceView>(`${DS}/enable-disable/${ds}`, { enabled: true });
      assert.equal(on.body.state, 'RUNNING');
      await eventually('a new value', async () => ((await latest(p))[0]!.timestamp > last ? true : undefined));
    });

    it('an update restarts it with the new period; a new point joins; deleting stops it', async () => {
      const ds = await createSource();
      const p = await createPoint(ds, 'NUMERIC', { changeType: 'RANDOM_WALK' });
      await values(p, 2);
      const res = await admin.put<SourceView>(`${DS}/${ds}`, { xid: ds, name: ds, modelType: 'VIRTUAL', enabled: true, updatePeriods: 200, updatePeriodType: 'MILLISECONDS' });
      assert.equal(res.status, 200, res.text);
      const before = (await latest(p))[0]!.timestamp;
      const slow = await eventually('three values after the update', async () => {
        const v = (await latest(p, 10)).filter((x) => x.timestamp > before);
        return v.length >= 3 ? v : undefined;
      });
      const gaps = slow.slice(1).map((v, i) => slow[i]!.timestamp - v.timestamp);
      assert.ok(Math.min(...gaps) >= 150, `period now 200 ms, gaps ${gaps.join(',')}`);
      const added = await createPoint(ds, 'NUMERIC', { changeType: 'RANDOM_WALK' });
      await values(added, 2);
      const del = await admin.delete(`${DS}/${ds}`);
      assert.equal(del.status, 200, del.text);
      assert.equal((await admin.get(`${DP}/${added}`)).status, 404);
    });

    it('stores a set value on a settable NO_CHANGE point, which holds it and produces nothing itself', async () => {
      const ds = await createSource();
      const p = await createPoint(ds, 'NUMERIC', { changeType: 'NO_CHANGE' });
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(await latest(p), [], 'NO_CHANGE generates nothing');
      const set = await admin.put(`${PV}/${p}`, { dataType: 'NUMERIC', value: 42.5 });
      assert.equal(set.status, 200, set.text);
      const got = await latest(p, 5);
      assert.equal(got.length, 1);
      assert.equal(got[0]!.value, 42.5);
    });

    it('continues a walk from a set value', async () => {
      const ds = await createSource();
      const p = await createPoint(ds, 'NUMERIC', { changeType: 'INCREMENT', min: 0, max: 1000, step: 1 });
      await values(p, 1);
      const set = await admin.put(`${PV}/${p}`, { dataType: 'NUMERIC', value: 500 });
      assert.equal(set.status, 200, set.text);
      const next = await eventually('a generated value after the set', async () => {
        const v = (await latest(p, 3)).find((x) => x.value !== 500 && (x.value as number) > 500);
        return v;
      });
      assert.ok((next.value as number) <= 503, `continues from 500, got ${next.value}`);
    });

    it('resumes enabled sources when the service restarts on the same data', async () => {
      const ds = await createSource();
      const p = await createPoint(ds, 'NUMERIC', { changeType: 'RANDOM_WALK' });
      await values(p, 1);
      const restarted = await app.restart();
      admin = await loggedIn(restarted.url, 'admin', 'admin');
      assert.equal((await source(ds)).state, 'RUNNING');
      const last = (await latest(p))[0]!.timestamp;
      await eventually('a value after the restart', async () => ((await latest(p))[0]!.timestamp > last ? true : undefined));
    });
  });
}

describe('VIRTUAL generators', () => {
  const numeric = (pointLocator: Record<string, unknown>) => generatorFor({ dataType: 'NUMERIC', pointLocator });

  it('INCREMENT with roll false turns back at each end (Mango INCREMENT_ANALOG); roll true wraps', () => {
    const bounce = numeric({ changeType: 'INCREMENT', min: 0, max: 4, step: 2, roll: false, startValue: 0 });
    assert.deepEqual(
      Array.from({ length: 7 }, (_, i) => bounce.next(i)),
      [2, 4, 2, 0, 2, 4, 2],
    );
    const wrap = numeric({ changeType: 'INCREMENT', min: 0, max: 4, step: 2, startValue: 0 });
    assert.deepEqual(
      Array.from({ length: 4 }, (_, i) => wrap.next(i)),
      [2, 4, 0, 2],
    );
  });

  it('MULTISTATE INCREMENT with roll false walks back through the states', () => {
    const states = generatorFor({ dataType: 'MULTISTATE', pointLocator: { changeType: 'INCREMENT', values: [1, 2, 3], roll: false, startValue: 1 } });
    assert.deepEqual(
      Array.from({ length: 7 }, (_, i) => states.next(i)),
      [1, 2, 3, 2, 1, 2, 3],
    );
  });

  it('NUMERIC RANDOM draws within min and max (Mango RANDOM_ANALOG)', () => {
    const random = numeric({ changeType: 'RANDOM', min: 5, max: 6 });
    const drawn = Array.from({ length: 200 }, (_, i) => random.next(i) as number);
    assert.ok(drawn.every((v) => v >= 5 && v <= 6));
    assert.ok(new Set(drawn).size > 100, 'values repeat: not drawn');
  });
});
