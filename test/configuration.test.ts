// Configuration export and import on the real service: the document's shapes (no ids, runtime state
// or secrets), the round trip into a fresh instance, importing twice, and refusals that write nothing.
import assert from 'node:assert/strict';
import { assertError, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createUser, loggedIn, type ApiClient } from './helpers/client.js';
import { created, exported, imported, type Doc, type Item } from './helpers/configuration.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';

const CFG = '/rest/latest/configuration';
const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PV = '/rest/latest/point-values';


announceEngines();
for (const engine of metadataEngines()) {
  describe(`configuration export and import (${engine})`, function () {
    this.timeout(120_000);
    let a: TestApp;
    let b: TestApp;
    let adminA: ApiClient;
    let adminB: ApiClient;

    /** The document with a password for each user the fresh instance does not have. */
    const withPasswords = (doc: Doc): Doc => ({ ...doc, users: doc.users!.map((u) => (u.username === 'admin' ? u : { ...u, password: 'imported-password-1' })) });

    before(async () => {
      [a, b] = await Promise.all([startTestApp(engine), startTestApp(engine)]);
      [adminA, adminB] = await Promise.all([loggedIn(a.url, 'admin', 'admin'), loggedIn(b.url, 'admin', 'admin')]);
      await created(adminA, DS, { xid: 'cfg-virtual', name: 'Generator', modelType: 'VIRTUAL', enabled: true, updatePeriods: 200, updatePeriodType: 'MILLISECONDS' });
      await created(adminA, DS, { xid: 'cfg-plc', name: 'PLC', modelType: 'MODBUS_IP', enabled: false, host: '127.0.0.1', port: 5020, unitId: 3 });
      await created(adminA, DS, { xid: 'cfg-broker', name: 'Broker', modelType: 'MQTT_CLIENT', enabled: false, brokerUrl: 'mqtt://127.0.0.1:1883', username: 'plant', password: 'mqtt-secret-1' });
      await created(adminA, DP, {
        xid: 'cfg-temp',
        name: 'Temperature',
        dataSourceXid: 'cfg-virtual',
        pointLocator: { dataType: 'NUMERIC', changeType: 'RANDOM_WALK', min: 10, max: 30 },
        unit: '°C',
        tags: { site: 'north' },
        loggingProperties: { loggingType: 'ALL' },
        purgeOverride: true,
        purgePeriod: { periods: 90, type: 'DAYS' },
      });
      await created(adminA, DP, { xid: 'cfg-reg', name: 'Register', dataSourceXid: 'cfg-plc', pointLocator: { dataType: 'NUMERIC', offset: 3, dataEncoding: 'INT32', wordOrder: 'LITTLE' } });
      await created(adminA, DP, { xid: 'cfg-topic', name: 'Level', dataSourceXid: 'cfg-broker', pointLocator: { dataType: 'NUMERIC', topic: 'plant/level', jsonPath: '$.v' } });
      await created(adminA, '/rest/latest/event-detectors', { xid: 'cfg-high', name: 'Too hot', dataPointXid: 'cfg-temp', detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 28 });
      await createUser(adminA, 'cfg-operator', 'secret-password-1', { permissions: ['user', 'operators'], name: 'Operator' });
      const json = await adminA.post('/rest/latest/json-store', { xid: 'cfg-dashboard', name: 'Dashboard', jsonData: { widgets: [{ point: 'cfg-temp', w: 4 }], title: 'North' } });
      assert.equal(json.status, 201, json.text);
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
    });

    it('is the superadmin\'s: 403 for anyone else', async () => {
      await createUser(adminA, 'cfg-viewer', 'secret-password-1', { permissions: ['user'] });
      const viewer = await loggedIn(a.url, 'cfg-viewer', 'secret-password-1');
      assertError(await viewer.get(`${CFG}/export`), 403, 4004);
      assertError(await viewer.post(`${CFG}/import`, {}), 403, 4004);
      const res = await adminA.delete('/rest/latest/users/cfg-viewer');
      assert.ok(res.status === 200 || res.status === 204, res.text);
    });

    it('exports every kind in the resources\' shapes, without ids, runtime state or secrets, ordered by XID', async () => {
      const doc = await exported(adminA);
      assert.deepEqual(Object.keys(doc), ['dataSources', 'dataPoints', 'eventDetectors', 'eventHandlers', 'users', 'jsonStore']);
      for (const items of Object.values(doc)) for (const item of items) assert.equal(item.id, undefined, JSON.stringify(item));
      assert.deepEqual(doc.dataSources!.map((s) => s.xid), ['cfg-broker', 'cfg-plc', 'cfg-virtual']);
      const broker = doc.dataSources!.find((s) => s.xid === 'cfg-broker')!;
      assert.equal(broker.password, undefined, 'no MQTT password');
      assert.equal(broker.username, 'plant');
      assert.equal(broker.state, undefined);
      assert.equal(broker.lastError, undefined);
      const temp = doc.dataPoints!.find((p) => p.xid === 'cfg-temp')!;
      assert.deepEqual(temp.tags, { site: 'north' });
      assert.deepEqual(temp.purgePeriod, { periods: 90, type: 'DAYS' });
      assert.equal((temp.loggingProperties as Item).loggingType, 'ALL');
      assert.equal(temp.dataSourceName, undefined);
      assert.deepEqual(doc.eventDetectors!.map((d) => [d.xid, d.dataPointXid, d.limit]), [['cfg-high', 'cfg-temp', 28]]);
      assert.deepEqual(doc.users!.map((u) => u.username), ['admin', 'cfg-operator']);
      for (const u of doc.users!) for (const secret of ['password', 'passwordHash', 'lastLogin', 'created']) assert.equal(u[secret], undefined, `${String(u.username)}.${secret}`);
      assert.deepEqual(doc.jsonStore, [{ xid: 'cfg-dashboard', name: 'Dashboard', readPermission: ['user'], editPermission: [], jsonData: { widgets: [{ point: 'cfg-temp', w: 4 }], title: 'North' } }]);
      assert.deepEqual(Object.keys(await exported(adminA, '?include=users,dataSources')), ['dataSources', 'users']);
      const bad = assertError(await adminA.get(`${CFG}/export?include=dataSources,gadgets`), 400, 4005);
      assert.match(bad.message, /include.*gadgets/);
    });

    it('round trip: export → import into a fresh instance → export again gives the same document, and the enabled source runs there', async () => {
      const doc = await exported(adminA);
      const counts = await imported(adminB, withPasswords(doc));
      // Everything but B's own admin, which equals A's, is new.
      assert.deepEqual(counts, { created: 3 + 3 + 1 + 1 + 1, updated: 0 });
      assert.deepEqual(await exported(adminB), doc);
      await eventually('the imported virtual source producing values', async () => {
        const res = await adminB.get<unknown[]>(`${PV}/latest/cfg-temp`);
        return res.status === 200 && res.body.length > 0 ? true : undefined;
      });
      const source = await adminB.get<{ state: string }>(`${DS}/cfg-plc`);
      assert.equal(source.body.state, 'STOPPED', 'a disabled source stays stopped');
      // The imported user logs in with the password the document gave.
      await loggedIn(b.url, 'cfg-operator', 'imported-password-1');
    });

    it('importing the same document again changes nothing; a changed item is replaced by its XID', async () => {
      const doc = withPasswords(await exported(adminB));
      assert.deepEqual(await imported(adminB, doc), { created: 0, updated: 0 });
      const before = await exported(adminB);
      assert.deepEqual(await imported(adminB, doc), { created: 0, updated: 0 });
      assert.deepEqual(await exported(adminB), before);
      const renamed = { dataPoints: doc.dataPoints!.map((p) => (p.xid === 'cfg-reg' ? { ...p, name: 'Register 3' } : p)) };
      assert.deepEqual(await imported(adminB, renamed), { created: 0, updated: 1 });
      assert.equal((await adminB.get<{ name: string }>(`${DP}/cfg-reg`)).body.name, 'Register 3');
    });

    it('with one bad item among many nothing is written, and the 422 names the item\'s field', async () => {
      const before = await exported(adminB);
      const doc = withPasswords(await exported(adminA));
      const bad: Doc = {
        dataSources: [...doc.dataSources!, { xid: 'cfg-new-source', name: 'New', modelType: 'VIRTUAL', enabled: false }],
        dataPoints: [
          ...doc.dataPoints!.map((p) => ({ ...p, name: `${String(p.name)} (changed)` })),
          { xid: 'cfg-bad', name: 'Bad', dataSourceXid: 'cfg-plc', pointLocator: { dataType: 'NUMERIC', offset: 65535, dataEncoding: 'INT32' } },
        ],
      };
      const messages = assertValidation(await adminB.post(`${CFG}/import`, bad));
      assert.deepEqual(
        messages.map((m) => m.property),
        ['dataPoints[3].pointLocator.offset'],
      );
      assert.deepEqual(await exported(adminB), before, 'nothing written');
      assert.equal((await adminB.get(`${DS}/cfg-new-source`)).status, 404);
    });

    it('restarts an enabled source once per import however many of its points it brings, and the imported detectors watch at once', async () => {
      const source = { xid: 'cfg-many', name: 'Many', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' };
      await created(adminA, DS, source);
      const starts = async () => {
        const res = await adminA.get<string>('/metrics');
        assert.equal(res.status, 200, res.text);
        const line = res.text.split('\n').find((l) => /^dds_data_source_starts_total\{[^}]*source="cfg-many"/.test(l));
        return Number(line?.split(' ').pop() ?? 0);
      };
      const first = await starts();
      assert.equal(first, 1, 'started once when created');
      const POINTS = 300;
      const points = Array.from({ length: POINTS }, (_, i) => ({
        xid: `cfg-many-${i}`,
        name: `Many ${i}`,
        dataSourceXid: 'cfg-many',
        pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', startValue: '1' },
      }));
      const detectors = Array.from({ length: 30 }, (_, i) => ({ xid: `cfg-many-high-${i}`, dataPointXid: `cfg-many-${i * 10}`, detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 50 }));
      // The source itself changed too: still one restart.
      assert.deepEqual(await imported(adminA, { dataSources: [{ ...source, name: 'Many points' }], dataPoints: points, eventDetectors: detectors }), { created: POINTS + 30, updated: 1 });
      assert.equal(await starts(), first + 1, 'one restart for the source and its 300 points');
      assert.deepEqual(await imported(adminA, { dataPoints: points.map((p) => ({ ...p, name: `${p.name} (renamed)` })) }), { created: 0, updated: POINTS });
      assert.equal(await starts(), first + 2, 'one restart for 300 changed points');
      const running = await adminA.get<{ state: string }>(`${DS}/cfg-many`);
      assert.equal(running.body.state, 'RUNNING');
      // The detectors watch the imported points: a value above the limit raises an event.
      const res = await adminA.post(PV, [{ xid: 'cfg-many-290', value: 99, timestamp: Date.now() }]);
      assert.equal(res.status, 200, res.text);
      await eventually('the imported detector raising an event', async () => {
        const events = await adminA.get<{ items: { active: boolean }[] }>('/rest/latest/events?dataPointXid=cfg-many-290');
        return events.body.items.some((e) => e.active) ? true : undefined;
      });
    });

    it('names every problem: an unknown source, a new user without password, a missing xid, an unknown kind, a repeated xid', async () => {
      const cases: [unknown, string[]][] = [
        [{ dataPoints: [{ xid: 'cfg-orphan', name: 'Orphan', dataSourceXid: 'no-such-source', pointLocator: { dataType: 'NUMERIC' } }] }, ['dataPoints[0].dataSourceXid']],
        [{ users: [{ username: 'cfg-new-user', permissions: ['user'] }] }, ['users[0].password']],
        [{ dataSources: [{ name: 'No xid', modelType: 'VIRTUAL' }] }, ['dataSources[0].xid']],
        [{ gadgets: [] }, ['gadgets']],
        [{ jsonStore: [{ xid: 'j', name: 'a', jsonData: 1 }, { xid: 'j', name: 'b', jsonData: 2 }] }, ['jsonStore[1].xid']],
        [{ eventDetectors: [{ xid: 'cfg-ed', dataPointXid: 'cfg-temp', detectorType: 'HIGH_LIMIT', alarmLevel: 'LOUD' }] }, ['eventDetectors[0].alarmLevel']],
      ];
      for (const [doc, properties] of cases) {
        const messages = assertValidation(await adminB.post(`${CFG}/import`, doc));
        for (const p of properties) assert.ok(messages.some((m) => m.property === p), `${JSON.stringify(doc)}: no ${p} in ${JSON.stringify(messages)}`);
      }
      assert.equal((await adminB.get('/rest/latest/users/cfg-new-user')).status, 404);
      assertValidation(await adminB.post(`${CFG}/import`, []));
    });

    it('refuses a user whose name differs from another only in case, stored or in the document', async () => {
      const password = 'imported-password-1';
      const stored = assertValidation(await adminB.post(`${CFG}/import`, { users: [{ username: 'ADMIN', password }] }));
      assert.deepEqual(stored.map((m) => [m.property, m.message]), [['users[0]', 'Username is already in use: admin differs only in case']]);
      const inDocument = assertValidation(await adminB.post(`${CFG}/import`, { users: [{ username: 'cfg-twin', password }, { username: 'CFG-Twin', password }] }));
      assert.deepEqual(inDocument.map((m) => [m.property, m.message]), [['users[1].username', 'repeats users[0]']]);
      for (const name of ['ADMIN', 'cfg-twin', 'CFG-Twin']) assert.equal((await adminB.get(`/rest/latest/users/${name}`)).status, 404, name);
    });
  });
}
