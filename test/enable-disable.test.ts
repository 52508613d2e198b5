// PUT /data-points/enable-disable/<xid> (Mango's): the query parameters enabled and restart, as
// node-mango-client sends them (no body, `restart=` when it has none), or the body {"enabled", "restart"};
// edit permission; the runtime, the caches, the detectors and the other instances follow at once.
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { ApiClient, createRoleUsers, getList, loggedIn } from './helpers/client.js';
import { announceEngines, dropSchema, metadataEngines, newSchemaName, testDatabaseUrl } from './helpers/engines.js';
import { startInstance, stopInstance, type Instance } from './helpers/instances.js';
import { eventually } from './helpers/wait.js';

interface PointBody {
  xid: string;
  enabled: boolean;
  name: string;
}

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const ED = '/rest/latest/event-detectors';
const PV = '/rest/latest/point-values';
const EV = '/rest/latest/events';
const PASSWORD = 'enable-disable-1';

const toggle = (xid: string, query: string) => `${DP}/enable-disable/${encodeURIComponent(xid)}?${query}`;

announceEngines();
for (const engine of metadataEngines()) {
  describe(`PUT /data-points/enable-disable/<xid> (${engine})`, function () {
    this.timeout(30_000);
    let app: TestApp;
    let admin: ApiClient;
    let viewer: ApiClient;
    let operator: ApiClient;
    let seq = 0;
    const SOURCE = 'ed-src';

    async function point(extra: Record<string, unknown> = {}): Promise<string> {
      const xid = `ed-p${++seq}`;
      const res = await admin.post(DP, { xid, name: `Point ${seq}`, dataSourceXid: SOURCE, pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' }, setPermission: ['user'], ...extra });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    const setValue = (client: ApiClient, xid: string, value: number) => client.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value });
    const stored = async (xid: string) => (await admin.get<PointBody>(`${DP}/${xid}`)).body;

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
      const res = await admin.post(DS, { xid: SOURCE, name: 'Toggle device', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
      assert.equal(res.status, 201, res.text);
    });
    after(() => app.stop());

    it("takes node-mango-client's request (query only, restart empty, no body): 200 with the point; a disabled point takes no value", async () => {
      const xid = await point();
      assert.equal((await setValue(admin, xid, 1)).status, 200);
      const off = await admin.request<PointBody>('PUT', toggle(xid, 'enabled=false&restart='));
      assert.equal(off.status, 200, off.text);
      assert.equal(off.body.xid, xid);
      assert.equal(off.body.enabled, false);
      assert.equal((await stored(xid)).enabled, false);
      assertHasMessage(assertValidation(await setValue(admin, xid, 2)), 'xid', /not enabled/);

      const on = await admin.request<PointBody>('PUT', toggle(xid, 'enabled=true'));
      assert.equal(on.status, 200, on.text);
      assert.equal(on.body.enabled, true);
      assert.equal((await setValue(admin, xid, 3)).status, 200, 'enabled again: the value is taken');
    });

    it('takes the body {"enabled"} too, and the same value in both places', async () => {
      const xid = await point();
      const off = await admin.put<PointBody>(`${DP}/enable-disable/${xid}`, { enabled: false });
      assert.equal(off.status, 200, off.text);
      assert.equal((await stored(xid)).enabled, false);
      const on = await admin.put<PointBody>(toggle(xid, 'enabled=true'), { enabled: true, restart: false });
      assert.equal(on.status, 200, on.text);
      assert.equal((await stored(xid)).enabled, true);
    });

    it("restarts the point's source for enabled=true&restart=true; the same state without restart changes nothing", async () => {
      const xid = await point();
      const starts = () => app.service.services.runtime.starts.get(SOURCE) ?? 0;
      const before = starts();
      assert.equal((await admin.request('PUT', toggle(xid, 'enabled=true'))).status, 200);
      assert.equal(starts(), before, 'already enabled, no restart: nothing happens (as in Mango)');
      assert.equal((await admin.request('PUT', toggle(xid, 'enabled=true&restart=true'))).status, 200);
      assert.equal(starts(), before + 1, 'the source started again with the point');
      assert.equal((await admin.request('PUT', toggle(xid, 'enabled=false&restart=true'))).status, 200);
      assert.equal((await stored(xid)).enabled, false, 'restart with enabled=false only disables');
    });

    it("ends the point's active events when disabled and watches it again when enabled (the detectors follow)", async () => {
      const xid = await point();
      assert.equal((await admin.post(ED, { xid: `${xid}-hi`, dataPointXid: xid, detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 10 })).status, 201);
      assert.equal((await setValue(admin, xid, 20)).status, 200);
      await app.service.services.detectors.idle();
      const events = async () => (await getList<{ active: boolean; rtnCause: string | null }>(admin, `${EV}?dataPointXid=${xid}&sort(id)`)).items;
      assert.deepEqual((await events()).map((e) => e.active), [true]);

      assert.equal((await admin.request('PUT', toggle(xid, 'enabled=true&restart=true'))).status, 200);
      assert.deepEqual((await events()).map((e) => e.active), [true], 'a restart keeps the open event');

      assert.equal((await admin.request('PUT', toggle(xid, 'enabled=false'))).status, 200);
      const ended = await events();
      assert.equal(ended[0]!.active, false);
      assert.equal(ended[0]!.rtnCause, 'SOURCE_DISABLED');

      assert.equal((await admin.request('PUT', toggle(xid, 'enabled=true'))).status, 200);
      await new Promise((r) => setTimeout(r, 5)); // the PUT of a value stamps it with now
      assert.equal((await setValue(admin, xid, 30)).status, 200);
      await app.service.services.detectors.idle();
      assert.deepEqual((await events()).map((e) => e.active), [false, true]);
    });

    it("needs edit permission on the point or its source: a reader gets 403, the point's editor 200", async () => {
      const xid = await point({ editPermission: ['operators'] });
      assertError(await viewer.request('PUT', toggle(xid, 'enabled=false')), 403, 4004);
      assert.equal((await stored(xid)).enabled, true, 'refused: nothing changed');
      const res = await operator.request<PointBody>('PUT', toggle(xid, 'enabled=false'));
      assert.equal(res.status, 200, res.text);
      assert.equal((await stored(xid)).enabled, false);
      const hidden = await point({ readPermission: ['nobody-has-this'] });
      assertError(await operator.request('PUT', toggle(hidden, 'enabled=false')), 403, 4004);
    });

    it('refuses bad input with the error envelope, and an unknown XID with 404', async () => {
      const xid = await point();
      assertError(await admin.request('PUT', toggle(xid, 'enabled=yes')), 400, 4005, 'BAD_REQUEST');
      assertError(await admin.request('PUT', toggle(xid, 'enabled=true&restart=1')), 400, 4005, 'BAD_REQUEST');
      assertError(await admin.request('PUT', toggle(xid, 'enabled=true&enabled=false')), 400, 4005, 'BAD_REQUEST');
      assertError(await admin.put(toggle(xid, 'enabled=false'), { enabled: true }), 400, 4005, 'BAD_REQUEST');
      const wrongType = await admin.put(`${DP}/enable-disable/${xid}`, { enabled: 'no' });
      assertHasMessage(assertValidation(wrongType), 'enabled', 'must be true or false');
      assert.match((wrongType.body as { message: string }).message, /DataPointVO/);
      assertHasMessage(assertValidation(await admin.request('PUT', `${DP}/enable-disable/${xid}`)), 'enabled', 'is required');
      assertHasMessage(assertValidation(await admin.put(`${DP}/enable-disable/${xid}`, [true])), '', /object/);
      assertError(await admin.request('PUT', `${DP}/enable-disable/${xid}`, { rawBody: 'enabled=true', headers: { 'content-type': 'text/plain' } }), 400, 4005);
      assert.equal((await stored(xid)).enabled, true, 'nothing refused changed the point');
      assertError(await admin.request('PUT', toggle('no-such-point', 'enabled=false')), 404, -1, 'NOT_FOUND');
    });
  });
}

const describeCluster = testDatabaseUrl ? describe : describe.skip;

describeCluster('PUT /data-points/enable-disable/<xid> across instances (PostgreSQL)', function () {
  this.timeout(60_000);
  const schema = newSchemaName();
  const instances: Instance[] = [];

  async function start(name: string): Promise<ApiClient> {
    const instance = await startInstance(schema, name, { logLevel: 'silent' });
    instances.push(instance);
    return loggedIn(instance.service.url, 'admin', 'admin');
  }

  after(async () => {
    for (const i of instances.reverse()) await stopInstance(i);
    await dropSchema(schema);
  });

  it('is heard by the other instance at once: its point cache refuses and then takes values', async () => {
    const a = await start('toggle-a');
    const b = await start('toggle-b');
    assert.equal((await a.post(DS, { xid: 'x-src', name: 'Shared', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' })).status, 201);
    const created = await a.post(DP, { xid: 'x-point', name: 'Shared point', dataSourceXid: 'x-src', pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
    assert.equal(created.status, 201, created.text);
    const set = (value: number) => b.put(`${PV}/x-point`, { dataType: 'NUMERIC', value });
    await eventually('instance b knows the point', async () => ((await set(1)).status === 200 ? true : undefined));

    assert.equal((await a.request('PUT', toggle('x-point', 'enabled=false'))).status, 200);
    await eventually('instance b refuses values of the disabled point', async () => ((await set(2)).status === 422 ? true : undefined));
    assert.equal((await a.request('PUT', toggle('x-point', 'enabled=true'))).status, 200);
    await eventually('instance b takes values again', async () => ((await set(3)).status === 200 ? true : undefined));
  });
});
