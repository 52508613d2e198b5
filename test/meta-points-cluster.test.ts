// Computed points on two instances of one installation (PostgreSQL metadata and values): the META
// source runs on one of them (its lease), context values written through the other reach it (the
// cluster relays the live values it follows) and are computed once, a window read waits for the
// other instance's write; when the running instance stops, the other takes the source over and computes.
import assert from 'node:assert/strict';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { dropSchema, newSchemaName, removeDir, testDatabaseUrl } from './helpers/engines.js';
import { startInstance, type Instance } from './helpers/instances.js';
import { eventually } from './helpers/wait.js';

const API = '/rest/latest';

interface Member extends Instance {
  admin: ApiClient;
}

async function startMember(schema: string, name: string): Promise<Member> {
  const instance = await startInstance(schema, name);
  return { ...instance, admin: await loggedIn(instance.service.url, 'admin', 'admin') };
}

interface RawValue {
  timestamp: number;
  value: number;
}

const describePg = testDatabaseUrl ? describe : describe.skip;

describePg('computed points on two instances', function () {
  this.timeout(120_000);
  const schema = newSchemaName();
  let a: Member;
  let b: Member;
  const stopped = new Set<Member>();

  before(async () => {
    a = await startMember(schema, 'meta-a');
    b = await startMember(schema, 'meta-b');
  });

  after(async () => {
    for (const i of [a, b]) {
      if (!i) continue;
      if (!stopped.has(i)) await i.service.stop();
      await removeDir(i.dataDir);
    }
    await dropSchema(schema);
  });

  it('computes values written through the other instance once, and on the other after a hand-over', async () => {
    const admin = a.admin;
    assert.equal((await admin.post(`${API}/data-sources`, { xid: 'c-src', name: 'context', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' })).status, 201);
    for (const xid of ['c-heat', 'c-power']) {
      const res = await admin.post(`${API}/data-points`, { xid, name: xid, dataSourceXid: 'c-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' }, loggingProperties: { loggingType: 'ALL' } });
      assert.equal(res.status, 201, res.text);
    }
    assert.equal((await admin.post(`${API}/data-sources`, { xid: 'm-src', name: 'computed', modelType: 'META', enabled: true })).status, 201);
    const point = (xid: string, script: string) => ({
      xid,
      name: xid,
      dataSourceXid: 'm-src',
      pointLocator: { dataType: 'NUMERIC', script, context: [{ xid: 'c-heat', var: 'heat' }, { xid: 'c-power', var: 'power' }] },
      loggingProperties: { loggingType: 'ALL' },
    });
    assert.equal((await admin.post(`${API}/data-points`, point('m-cop', 'heat / power'))).status, 201);
    assert.equal((await admin.post(`${API}/data-points`, point('m-avg', 'avg(heat, "10m")'))).status, 201);
    const runningOn = (await admin.get<{ runningOn: string }>(`${API}/data-sources/m-src`)).body.runningOn;
    const [runner, other] = runningOn === a.name ? [a, b] : [b, a];
    assert.equal(runner.name, runningOn);

    // Written through the instance that does not run the source. The other instance's follows reach
    // it asynchronously: write until the first value is computed.
    const t = Date.now() - 60_000;
    await other.admin.post(`${API}/point-values`, [{ xid: 'c-power', value: 4, timestamp: t }]);
    let ts = t;
    const first = await eventually('a COP from values written on the other instance', async () => {
      ts += 10;
      const res = await other.admin.post(`${API}/point-values`, [{ xid: 'c-heat', value: 10, timestamp: ts }]);
      assert.equal(res.status, 200, res.text);
      const got = (await other.admin.get<RawValue[]>(`${API}/point-values/latest/m-cop?limit=1`)).body[0];
      return got ? got : undefined;
    }, 30_000, 300);
    assert.equal(first.value, 2.5);
    const t2 = ts + 1_000;
    await other.admin.post(`${API}/point-values`, [{ xid: 'c-heat', value: 20, timestamp: t2 }]);
    const cop = await eventually('the next COP', async () => {
      const got = (await other.admin.get<RawValue[]>(`${API}/point-values/latest/m-cop?limit=1`)).body[0];
      return got?.timestamp === t2 ? got : undefined;
    });
    assert.equal(cop.value, 5);
    // computed in one place: the source's driver started on the runner only
    const starts = async (i: Member) => {
      const text = (await i.admin.get<string>('/metrics')).text;
      return /dds_data_source_starts_total\{[^}]*source="m-src"[^}]*\} (\d+)/.exec(text)?.[1];
    };
    assert.ok(Number(await starts(runner)) >= 1, 'started on the runner');
    assert.equal(await starts(other), undefined, 'never started on the other instance');
    // the window read saw the value written on the other instance
    const avg = await eventually('the average', async () => {
      const got = (await other.admin.get<RawValue[]>(`${API}/point-values/latest/m-avg?limit=1`)).body[0];
      return got?.timestamp === t2 ? got : undefined;
    });
    const rollup = (await other.admin.get<RawValue[]>(`${API}/point-values/single/c-heat?from=${t2 - 600_000}&to=${t2 + 1}&rollup=AVERAGE`)).body[0]!;
    assert.equal(avg.value, rollup.value);

    // The running instance stops: the other takes the source over and computes.
    await runner.service.stop();
    stopped.add(runner);
    await eventually('the take-over', async () => ((await other.admin.get<{ runningOn: string | null }>(`${API}/data-sources/m-src`)).body.runningOn === other.name ? true : undefined), 30_000, 200);
    const t3 = t2 + 1_000;
    await other.admin.post(`${API}/point-values`, [{ xid: 'c-power', value: 8, timestamp: t3 }]);
    const after = await eventually('a COP after the hand-over', async () => {
      const got = (await other.admin.get<RawValue[]>(`${API}/point-values/latest/m-cop?limit=1`)).body[0];
      return got?.timestamp === t3 ? got : undefined;
    });
    assert.equal(after.value, 2.5);
  });
});
