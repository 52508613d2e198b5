// Mango's data source copy (PUT /data-sources/copy/<xid>, node-mango-client's DataSource.copy): the
// source's settings and secrets under a new XID and name, its points when asked, in one transaction.
import assert from 'node:assert/strict';
import { assertError } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
type Body = Record<string, unknown>;

announceEngines();
for (const engine of metadataEngines()) {
  describe(`data source copy (${engine})`, function () {
    this.timeout(30_000);
    let app: TestApp;
    let admin: ApiClient;

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      const source = await admin.post(DS, {
        xid: 'mqtt-src',
        name: 'Broker',
        modelType: 'MQTT_CLIENT',
        brokerUrl: 'mqtt://127.0.0.1:1',
        username: 'plant',
        password: 'broker-secret',
        editPermission: ['operators'],
      });
      assert.equal(source.status, 201, source.text);
      for (const [xid, device] of [
        ['mqtt-a', 'Boiler'],
        ['mqtt-b', 'Pump'],
      ]) {
        const res = await admin.post(DP, {
          xid,
          name: xid,
          deviceName: device,
          dataSourceXid: 'mqtt-src',
          tags: { site: 'north' },
          pointLocator: { dataType: 'NUMERIC', topic: `plant/${xid}` },
        });
        assert.equal(res.status, 201, res.text);
      }
    });
    after(() => app?.stop());

    it('copies the source alone: new XID and name, disabled, settings and secret kept', async () => {
      const res = await admin.put<Body>(`${DS}/copy/mqtt-src?copyXid=mqtt-copy&copyName=Broker%202`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('location'), `${DS}/mqtt-copy`);
      assert.equal(res.body.xid, 'mqtt-copy');
      assert.equal(res.body.name, 'Broker 2');
      assert.equal(res.body.enabled, false);
      assert.equal(res.body.brokerUrl, 'mqtt://127.0.0.1:1');
      assert.deepEqual(res.body.editPermission, ['operators']);
      assert.equal('password' in res.body, false);
      const stored = await app.service.services.dataSources.findByXid('mqtt-copy');
      assert.equal(stored?.settings.password, 'broker-secret');
      const points = await admin.get<{ total: number }>(`${DP}?eq(dataSourceXid,mqtt-copy)`);
      assert.equal(points.body.total, 0);
    });

    it("copies its points when asked: new XIDs, the same settings, the device name given", async () => {
      const res = await admin.put<Body>(`${DS}/copy/mqtt-src?copyXid=&copyName=null&copyPoints=true&copyDeviceName=Spare`);
      assert.equal(res.status, 200, res.text);
      const xid = res.body.xid as string;
      assert.match(xid, /^DS_/);
      assert.equal(res.body.name, 'Broker Copy');
      const points = await admin.get<{ items: Body[] }>(`${DP}?eq(dataSourceXid,${xid})&sort(name)`);
      assert.deepEqual(
        points.body.items.map((p) => [p.name, p.deviceName, (p.pointLocator as Body).topic, p.tags]),
        [
          ['mqtt-a', 'Spare', 'plant/mqtt-a', { site: 'north' }],
          ['mqtt-b', 'Spare', 'plant/mqtt-b', { site: 'north' }],
        ],
      );
      assert.ok(points.body.items.every((p) => !['mqtt-a', 'mqtt-b'].includes(p.xid as string)));
      // The original is untouched.
      const original = await admin.get<{ items: Body[] }>(`${DP}?eq(dataSourceXid,mqtt-src)&sort(name)`);
      assert.deepEqual(
        original.body.items.map((p) => [p.xid, p.deviceName]),
        [
          ['mqtt-a', 'Boiler'],
          ['mqtt-b', 'Pump'],
        ],
      );
    });

    it('refuses an XID in use (409), an unknown source (404), a bad flag (400), a bad XID (422, nothing written)', async () => {
      assertError(await admin.put(`${DS}/copy/mqtt-src?copyXid=mqtt-src`), 409, 4003);
      assertError(await admin.put(`${DS}/copy/no-such-source`), 404, -1);
      assertError(await admin.put(`${DS}/copy/mqtt-src?copyPoints=maybe`), 400, 4005);
      const long = 'x'.repeat(101);
      const bad = await admin.put(`${DS}/copy/mqtt-src?copyXid=${long}&copyPoints=true`);
      assert.equal(bad.status, 422, bad.text);
      // Nothing of it was written: the source fails, and its points with it (one transaction).
      assert.equal((await admin.get(`${DS}/${long}`)).status, 404);
      assert.equal((await admin.get<{ total: number }>(`${DP}?eq(dataSourceXid,${long})`)).body.total, 0);
    });

    it('is for superadmins only', async () => {
      await createUser(admin, 'copy-operator', 'copy-password-1', { permissions: ['user', 'operators'] });
      const operator = await loggedIn(app.url, 'copy-operator', 'copy-password-1');
      assertError(await operator.put(`${DS}/copy/mqtt-src?copyXid=by-operator`), 403, 4004);
      assert.equal((await admin.get(`${DS}/by-operator`)).status, 404);
    });

    it('starts an enabled copy with its points', async () => {
      const virtual = await admin.post(DS, { xid: 'virt-src', name: 'Sim', modelType: 'VIRTUAL', updatePeriods: 200, updatePeriodType: 'MILLISECONDS' });
      assert.equal(virtual.status, 201, virtual.text);
      const point = await admin.post(DP, { xid: 'virt-p', name: 'walk', dataSourceXid: 'virt-src', pointLocator: { dataType: 'NUMERIC', changeType: 'RANDOM_WALK' } });
      assert.equal(point.status, 201, point.text);
      const res = await admin.put<Body>(`${DS}/copy/virt-src?copyXid=virt-copy&enabled=true&copyPoints=true`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.enabled, true);
      const copied = await admin.get<{ items: Body[] }>(`${DP}?eq(dataSourceXid,virt-copy)`);
      const xid = copied.body.items[0]!.xid as string;
      const deadline = Date.now() + 10_000;
      let values: unknown[] = [];
      while (Date.now() < deadline && values.length === 0) {
        values = (await admin.get<unknown[]>(`/rest/latest/point-values/latest/${xid}`)).body;
        if (values.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(values.length, 1, 'the copied point got no value');
    });
  });
}
