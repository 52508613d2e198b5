import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, getList, loggedIn, type List } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

interface SourceBody {
  id: number;
  xid: string;
  name: string;
  enabled: boolean;
  modelType: string;
  updatePeriods: number;
  updatePeriodType: string;
  readPermission: string[];
  editPermission: string[];
  state: string;
  lastError: string | null;
  [setting: string]: unknown;
}

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PASSWORD = 'secret-password-1';
const COMMON_KEYS = ['editPermission', 'enabled', 'id', 'lastError', 'lastErrorCleared', 'lastErrorTimestamp', 'modelType', 'name', 'readPermission', 'runningOn', 'state', 'updatePeriodType', 'updatePeriods', 'xid'];

announceEngines();
for (const engine of metadataEngines()) {
  describe(`data sources API (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    /** role "user" only. */
    let viewer: ApiClient;
    /** roles "user" and "operators". */
    let operator: ApiClient;
    let seq = 0;
    const unique = (prefix: string) => `${prefix}${++seq}`;

    async function create(body: Record<string, unknown>, as = admin): Promise<SourceBody> {
      const res = await as.post<SourceBody>(DS, { modelType: 'VIRTUAL', ...body });
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    async function storedSettings(xid: string): Promise<Record<string, unknown>> {
      const rows = await app.service.services.db.query<{ settings: unknown }>('select settings from data_sources where xid=$1', [xid]);
      assert.equal(rows.length, 1, `no row for ${xid}`);
      const settings = rows[0]!.settings;
      return (typeof settings === 'string' ? JSON.parse(settings) : settings) as Record<string, unknown>;
    }

    const list = (client: ApiClient, query: string) => getList<SourceBody>(client, `${DS}?${query}`);

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
    });
    after(() => app.stop());

    describe('POST /data-sources', () => {
      it('creates a VIRTUAL source: 201, Location, the stored resource with defaults', async () => {
        const xid = unique('ds-virtual-');
        const res = await admin.post<SourceBody>(DS, { xid, name: 'Virtual one', modelType: 'VIRTUAL' });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('location'), `${DS}/${xid}`);
        assert.deepEqual(Object.keys(res.body).sort(), COMMON_KEYS);
        assert.equal(typeof res.body.id, 'number');
        assert.deepEqual(
          { ...res.body, id: 0 },
          {
            id: 0,
            xid,
            name: 'Virtual one',
            enabled: false,
            modelType: 'VIRTUAL',
            updatePeriods: 1,
            updatePeriodType: 'SECONDS',
            readPermission: ['user'],
            editPermission: [],
            state: 'STOPPED',
            lastError: null,
            lastErrorTimestamp: null,
            lastErrorCleared: false,
            runningOn: null,
          },
        );
        const fetched = await admin.get<SourceBody>(res.headers.get('location')!);
        assert.equal(fetched.status, 200);
        assert.deepEqual(fetched.body, res.body);
      });

      it('keeps given values of the optional fields', async () => {
        const body = await create({
          xid: unique('ds-given-'),
          name: 'Given',
          enabled: true,
          updatePeriods: 250,
          updatePeriodType: 'MILLISECONDS',
          readPermission: ['operators'],
          editPermission: ['operators', 'engineers'],
        });
        assert.equal(body.enabled, true);
        assert.equal(body.updatePeriods, 250);
        assert.equal(body.updatePeriodType, 'MILLISECONDS');
        assert.deepEqual(body.readPermission, ['operators']);
        assert.deepEqual(body.editPermission, ['operators', 'engineers']);
      });

      it('applies the MODBUS_IP defaults: port 502, unitId 1, timeoutMs 1000, retries 2', async () => {
        const xid = unique('ds-modbus-');
        const body = await create({ xid, name: 'PLC', modelType: 'MODBUS_IP', host: '192.0.2.10' });
        assert.deepEqual(Object.keys(body).sort(), [...COMMON_KEYS, 'host', 'port', 'retries', 'timeoutMs', 'unitId'].sort());
        assert.deepEqual(
          { host: body.host, port: body.port, unitId: body.unitId, timeoutMs: body.timeoutMs, retries: body.retries },
          { host: '192.0.2.10', port: 502, unitId: 1, timeoutMs: 1000, retries: 2 },
        );
        const custom = await create({ xid: unique('ds-modbus-'), name: 'PLC2', modelType: 'MODBUS_IP', host: 'plc.local', port: 1502, unitId: 247, timeoutMs: 50, retries: 0 });
        assert.deepEqual([custom.port, custom.unitId, custom.timeoutMs, custom.retries], [1502, 247, 50, 0]);
      });

      it('never returns the MQTT password, and a PUT without a password keeps it', async () => {
        const xid = unique('ds-mqtt-');
        const secret = 'broker-secret-42';
        const res = await admin.post<SourceBody>(DS, { xid, name: 'Broker', modelType: 'MQTT_CLIENT', brokerUrl: 'mqtt://broker:1883', username: 'dev', password: secret });
        assert.equal(res.status, 201, res.text);
        assert.ok(!('password' in res.body), 'create returns the password');
        assert.ok(!res.text.includes(secret));
        assert.equal(res.body.brokerUrl, 'mqtt://broker:1883');
        assert.equal(res.body.username, 'dev');
        assert.equal((await storedSettings(xid)).password, secret);

        const fetched = await admin.get<SourceBody>(`${DS}/${xid}`);
        assert.ok(!fetched.text.includes(secret) && !('password' in fetched.body), 'GET returns the password');
        const listed = await admin.get(`${DS}?eq(xid,${xid})`);
        assert.ok(!listed.text.includes(secret), 'list returns the password');

        const updated = await admin.put<SourceBody>(`${DS}/${xid}`, { ...fetched.body, name: 'Broker renamed' });
        assert.equal(updated.status, 200, updated.text);
        assert.equal(updated.body.name, 'Broker renamed');
        assert.ok(!('password' in updated.body));
        assert.equal((await storedSettings(xid)).password, secret, 'PUT without password lost it');

        const changed = await admin.put<SourceBody>(`${DS}/${xid}`, { ...fetched.body, password: 'new-secret' });
        assert.equal(changed.status, 200, changed.text);
        assert.ok(!changed.text.includes('new-secret'));
        assert.equal((await storedSettings(xid)).password, 'new-secret');
      });

      it('generates a DS_ XID when none is given', async () => {
        const res = await admin.post<SourceBody>(DS, { name: 'No xid', modelType: 'VIRTUAL' });
        assert.equal(res.status, 201, res.text);
        assert.match(res.body.xid, /^DS_[A-Z0-9]+$/);
        assert.equal(res.headers.get('location'), `${DS}/${res.body.xid}`);
        const other = await create({ name: 'No xid either' });
        assert.notEqual(other.xid, res.body.xid);
        assert.equal((await admin.get(`${DS}/${res.body.xid}`)).status, 200);
      });

      it('percent-encodes the XID in Location, and GET, PUT and DELETE find the source there', async () => {
        const xid = unique('ds with/slash ü%');
        const res = await admin.post<SourceBody>(DS, { xid, name: 'Odd', modelType: 'VIRTUAL' });
        assert.equal(res.status, 201, res.text);
        const location = res.headers.get('location')!;
        assert.equal(location, `${DS}/${encodeURIComponent(xid)}`);
        assert.deepEqual((await admin.get(location)).body, res.body);
        assert.equal((await admin.put<SourceBody>(location, { ...res.body, name: 'Odder' })).body.name, 'Odder');
        assert.equal((await admin.delete<SourceBody>(location)).body.xid, xid);
      });

      it('refuses an existing XID with 409 4003 "XID is already in use"', async () => {
        const xid = unique('ds-dup-');
        await create({ xid, name: 'First' });
        const body = assertError(await admin.post(DS, { xid, name: 'Second', modelType: 'VIRTUAL' }), 409, 4003, 'ALREADY_EXISTS');
        assert.equal(body.message, 'XID is already in use');
        assert.equal((await admin.get<SourceBody>(`${DS}/${xid}`)).body.name, 'First');
      });

      it('reports a missing name as "is required", naming DataSourceVO in the summary, and stores nothing', async () => {
        const xid = unique('ds-noname-');
        const res = await admin.post(DS, { xid, modelType: 'VIRTUAL' });
        const messages = assertValidation(res);
        assertHasMessage(messages, 'name', 'is required');
        assert.match((res.body as { message: string }).message, /DataSourceVO/);
        assert.equal((await admin.get(`${DS}/${xid}`)).status, 404);
      });

      it('reports updatePeriods 0 and -1 as "must be greater than 0"', async () => {
        for (const updatePeriods of [0, -1]) {
          const res = await admin.post(DS, { name: 'Bad period', modelType: 'VIRTUAL', updatePeriods });
          assertHasMessage(assertValidation(res), 'updatePeriods', 'must be greater than 0');
          assert.match((res.body as { message: string }).message, /DataSourceVO/);
        }
      });

      it('reports a non-integer updatePeriods and an unknown updatePeriodType', async () => {
        assertHasMessage(assertValidation(await admin.post(DS, { name: 'x', modelType: 'VIRTUAL', updatePeriods: 1.5 })), 'updatePeriods', 'must be an integer');
        assertHasMessage(assertValidation(await admin.post(DS, { name: 'x', modelType: 'VIRTUAL', updatePeriodType: 'DAYS' })), 'updatePeriodType', /^must be one of/);
      });

      it('reports a MODBUS_IP source without host, and port, unitId out of range', async () => {
        assertHasMessage(assertValidation(await admin.post(DS, { name: 'm', modelType: 'MODBUS_IP' })), 'host', 'is required');
        assertHasMessage(
          assertValidation(await admin.post(DS, { name: 'm', modelType: 'MODBUS_IP', host: 'h', port: 70000 })),
          'port',
          'must be between 1 and 65535',
        );
        for (const unitId of [0, 248]) {
          assertHasMessage(
            assertValidation(await admin.post(DS, { name: 'm', modelType: 'MODBUS_IP', host: 'h', unitId })),
            'unitId',
            'must be between 1 and 247',
          );
        }
      });

      it('reports an MQTT_CLIENT source without brokerUrl or with an invalid one', async () => {
        assertHasMessage(assertValidation(await admin.post(DS, { name: 'q', modelType: 'MQTT_CLIENT' })), 'brokerUrl', 'is required');
        for (const brokerUrl of ['http://broker:1883', 'broker:1883', 'mqtt://']) {
          const messages = assertValidation(await admin.post(DS, { name: 'q', modelType: 'MQTT_CLIENT', brokerUrl }));
          assertHasMessage(messages, 'brokerUrl', /broker URL/);
        }
        assertHasMessage(assertValidation(await admin.post(DS, { name: 'q', modelType: 'MQTT_CLIENT', brokerUrl: 'mqtt://b', qos: 3 })), 'qos', /^must be one of/);
      });

      it('reports a missing or unknown modelType', async () => {
        assertHasMessage(assertValidation(await admin.post(DS, { name: 'x' })), 'modelType', 'is required');
        assertHasMessage(assertValidation(await admin.post(DS, { name: 'x', modelType: 'PROFIBUS' })), 'modelType', 'must be one of: VIRTUAL, MODBUS_IP, MQTT_CLIENT, LINE_PROTOCOL, META, OPC_UA, BACNET_IP');
      });

      it('reports every failing field at once', async () => {
        const messages = assertValidation(await admin.post(DS, { modelType: 'MODBUS_IP', updatePeriods: 0, port: 0 }));
        assertHasMessage(messages, 'name', 'is required');
        assertHasMessage(messages, 'updatePeriods', 'must be greater than 0');
        assertHasMessage(messages, 'host', 'is required');
        assertHasMessage(messages, 'port', 'must be between 1 and 65535');
      });

      it('answers malformed JSON with 400 4005', async () => {
        assertError(await admin.request('POST', DS, { rawBody: '{"name": ' }), 400, 4005, 'BAD_REQUEST');
      });
    });

    describe('GET /data-sources/<xid> and /data-sources/by-xid/<xid>', () => {
      it('answers the same source on both paths', async () => {
        const created = await create({ xid: unique('ds-get-'), name: 'Readable', modelType: 'MODBUS_IP', host: 'h' });
        const a = await admin.get<SourceBody>(`${DS}/${created.xid}`);
        const b = await admin.get<SourceBody>(`${DS}/by-xid/${created.xid}`);
        assert.equal(a.status, 200);
        assert.equal(b.status, 200);
        assert.deepEqual(a.body, created);
        assert.deepEqual(b.body, created);
      });

      it('answers an unknown XID with 404, code -1, "Data source not found" on both paths', async () => {
        for (const path of [`${DS}/no-such-source`, `${DS}/by-xid/no-such-source`]) {
          const body = assertError(await admin.get(path), 404, -1, 'NOT_FOUND');
          assert.equal(body.message, 'Data source not found');
        }
      });

      it('requires authentication', async () => {
        const body = assertError(await new ApiClient(app.url).get(DS), 401, 4008);
        assert.equal(body.message, 'Authentication required');
      });
    });

    describe('PUT /data-sources/<xid>', () => {
      it('updates the changed fields: 200 with the stored source', async () => {
        const created = await create({ xid: unique('ds-put-'), name: 'Before', modelType: 'MODBUS_IP', host: 'old-host' });
        const res = await admin.put<SourceBody>(`${DS}/${created.xid}`, {
          ...created,
          name: 'After',
          updatePeriods: 5,
          updatePeriodType: 'MINUTES',
          host: 'new-host',
          port: 1502,
          editPermission: ['operators'],
        });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { ...created, name: 'After', updatePeriods: 5, updatePeriodType: 'MINUTES', host: 'new-host', port: 1502, editPermission: ['operators'] });
        assert.deepEqual((await admin.get(`${DS}/${created.xid}`)).body, res.body);
      });

      it('refuses a modelType change with 422 on modelType and keeps the source', async () => {
        const created = await create({ xid: unique('ds-type-'), name: 'Typed' });
        const res = await admin.put(`${DS}/${created.xid}`, { ...created, modelType: 'MODBUS_IP', host: 'h' });
        const messages = assertValidation(res);
        assert.ok(messages.some((m) => m.property === 'modelType'), JSON.stringify(messages));
        assert.match((res.body as { message: string }).message, /DataSourceVO/);
        assert.equal((await admin.get<SourceBody>(`${DS}/${created.xid}`)).body.modelType, 'VIRTUAL');
      });

      it('validates an update like a create', async () => {
        const created = await create({ xid: unique('ds-putbad-'), name: 'Valid' });
        assertHasMessage(assertValidation(await admin.put(`${DS}/${created.xid}`, { ...created, updatePeriods: 0 })), 'updatePeriods', 'must be greater than 0');
        assertHasMessage(assertValidation(await admin.put(`${DS}/${created.xid}`, { modelType: 'VIRTUAL' })), 'name', 'is required');
        assert.deepEqual((await admin.get(`${DS}/${created.xid}`)).body, created);
      });

      it('answers an unknown XID with 404', async () => {
        const body = assertError(await admin.put(`${DS}/no-such-source`, { name: 'x', modelType: 'VIRTUAL' }), 404, -1, 'NOT_FOUND');
        assert.equal(body.message, 'Data source not found');
      });

      it('refuses renaming onto an existing XID with 409 4003', async () => {
        const a = await create({ xid: unique('ds-ren-'), name: 'A' });
        const b = await create({ xid: unique('ds-ren-'), name: 'B' });
        assertError(await admin.put(`${DS}/${b.xid}`, { ...b, xid: a.xid }), 409, 4003);
      });
    });

    describe('PUT /data-sources/enable-disable/<xid>', () => {
      it('enables and disables the source: 200 with the source', async () => {
        const created = await create({ xid: unique('ds-en-'), name: 'Toggle' });
        const on = await admin.put<SourceBody>(`${DS}/enable-disable/${created.xid}`, { enabled: true });
        assert.equal(on.status, 200, on.text);
        assert.deepEqual(Object.keys(on.body).sort(), COMMON_KEYS);
        assert.equal(on.body.enabled, true);
        assert.equal(on.body.xid, created.xid);
        assert.equal((await admin.get<SourceBody>(`${DS}/${created.xid}`)).body.enabled, true);
        const off = await admin.put<SourceBody>(`${DS}/enable-disable/${created.xid}`, { enabled: false });
        assert.equal(off.status, 200, off.text);
        assert.equal(off.body.enabled, false);
        assert.equal((await admin.get<SourceBody>(`${DS}/${created.xid}`)).body.enabled, false);
      });

      it('refuses a non-boolean enabled with 422 and a missing body with 400 4005', async () => {
        const created = await create({ xid: unique('ds-enbad-'), name: 'Toggle bad' });
        const res = await admin.put(`${DS}/enable-disable/${created.xid}`, { enabled: 'yes' });
        assertHasMessage(assertValidation(res), 'enabled', 'must be true or false');
        assert.match((res.body as { message: string }).message, /DataSourceVO/);
        assertHasMessage(assertValidation(await admin.put(`${DS}/enable-disable/${created.xid}`, {})), 'enabled', 'is required');
        assertError(await admin.put(`${DS}/enable-disable/${created.xid}`), 400, 4005, 'BAD_REQUEST');
        assert.equal((await admin.get<SourceBody>(`${DS}/${created.xid}`)).body.enabled, false);
      });

      it('answers an unknown XID with 404', async () => {
        assertError(await admin.put(`${DS}/enable-disable/no-such-source`, { enabled: true }), 404, -1, 'NOT_FOUND');
      });
    });

    describe('runningOn', () => {
      it('names this instance while the source runs and is null once it stops; read-only; filterable with RQL', async () => {
        const me = app.config.instanceName;
        const created = await create({ xid: unique('ds-runs-'), name: 'Runs', updatePeriods: 1, updatePeriodType: 'HOURS' });
        assert.equal(created.runningOn, null);
        const on = await admin.put<SourceBody>(`${DS}/enable-disable/${created.xid}`, { enabled: true });
        assert.equal(on.body.runningOn, me, 'the answer to the enable');
        assert.equal((await admin.get<SourceBody>(`${DS}/${created.xid}`)).body.runningOn, me);
        const running = await list(admin, `eq(runningOn,${encodeURIComponent(me)})&eq(xid,${created.xid})`);
        assert.deepEqual(running.items.map((s) => s.xid), [created.xid]);

        // Sent back (as the console's PUT does) or made up: ignored like state and lastError.
        const put = await admin.put<SourceBody>(`${DS}/${created.xid}`, { ...on.body, runningOn: 'somebody-else', name: 'Runs still' });
        assert.equal(put.status, 200, put.text);
        assert.equal(put.body.runningOn, me);
        const madeUp = await admin.post<SourceBody>(DS, { xid: unique('ds-runs-'), name: 'Not running', modelType: 'VIRTUAL', runningOn: me });
        assert.equal(madeUp.status, 201, madeUp.text);
        assert.equal(madeUp.body.runningOn, null);

        const off = await admin.put<SourceBody>(`${DS}/enable-disable/${created.xid}`, { enabled: false });
        assert.equal(off.body.runningOn, null);
        assert.equal(off.body.state, 'STOPPED');
        const nowhere = await list(admin, `eq(runningOn,null)&eq(xid,${created.xid})`);
        assert.equal(nowhere.total, 1);
      });
    });

    describe('DELETE /data-sources/<xid>', () => {
      it('answers 200 with the deleted source and deletes its points', async () => {
        const source = await create({ xid: unique('ds-del-'), name: 'Doomed' });
        const pointXid = unique('dp-of-doomed-');
        const point = await admin.post(DP, { xid: pointXid, name: 'P', dataSourceXid: source.xid, pointLocator: { dataType: 'NUMERIC' } });
        assert.equal(point.status, 201, point.text);

        const res = await admin.delete<SourceBody>(`${DS}/${source.xid}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, source);
        assertError(await admin.get(`${DS}/${source.xid}`), 404, -1);
        assertError(await admin.get(`${DP}/${pointXid}`), 404, -1);
        const points = await admin.get<List<unknown>>(`${DP}?eq(dataSourceXid,${source.xid})`);
        assert.equal(points.status, 200, points.text);
        assert.equal(points.body.total, 0);
        assertError(await admin.delete(`${DS}/${source.xid}`), 404, -1);
      });
    });

    describe('GET /data-sources (RQL)', () => {
      let names: string[];
      before(async () => {
        names = ['rqlsrc-alpha', 'rqlsrc-beta', 'rqlsrc-gamma', 'rqlsrc-delta'];
        for (const name of names) await create({ xid: `xid-${name}`, name });
        await create({ xid: 'xid-rqlsrc-modbus', name: 'rqlsrc-zeta', modelType: 'MODBUS_IP', host: 'h' });
      });

      it('lists as {items, total}', async () => {
        const body = await list(admin, 'match(name,rqlsrc-*)');
        assert.equal(body.total, 5);
        assert.equal(body.items.length, 5);
        for (const item of body.items) assert.deepEqual(Object.keys(item).filter((k) => COMMON_KEYS.includes(k)).sort(), COMMON_KEYS);
      });

      it('filters with eq and match', async () => {
        const eq = await list(admin, 'eq(name,rqlsrc-beta)');
        assert.deepEqual(eq.items.map((s) => s.xid), ['xid-rqlsrc-beta']);
        assert.equal(eq.total, 1);
        const match = await list(admin, 'match(name,*ta)&sort(name)');
        assert.deepEqual(match.items.map((s) => s.name), ['rqlsrc-beta', 'rqlsrc-delta', 'rqlsrc-zeta']);
        const byType = await list(admin, 'match(name,rqlsrc-*)&eq(modelType,MODBUS_IP)');
        assert.deepEqual(byType.items.map((s) => s.xid), ['xid-rqlsrc-modbus']);
      });

      it('sorts descending and pages with limit(count,offset), total counting every match', async () => {
        const sorted = await list(admin, 'match(name,rqlsrc-*)&sort(-name)');
        assert.deepEqual(sorted.items.map((s) => s.name), ['rqlsrc-zeta', 'rqlsrc-gamma', 'rqlsrc-delta', 'rqlsrc-beta', 'rqlsrc-alpha']);
        const page = await list(admin, 'match(name,rqlsrc-*)&sort(-name)&limit(2,1)');
        assert.deepEqual(page.items.map((s) => s.name), ['rqlsrc-gamma', 'rqlsrc-delta']);
        assert.equal(page.total, 5);
      });

      it('sorts and pages by an enum property, total still counting every match', async () => {
        const page = await list(admin, 'match(name,rqlsrc-*)&sort(-modelType,name)&limit(2)');
        // MODBUS_IP comes after VIRTUAL in the declared order, so it leads a descending sort.
        assert.deepEqual(page.items.map((s) => s.name), ['rqlsrc-zeta', 'rqlsrc-alpha']);
        assert.equal(page.total, 5);
        const byState = await list(admin, 'match(name,rqlsrc-*)&sort(state)&limit(1)');
        assert.equal(byState.total, 5);
      });

      it('refuses an unknown property with 400 4013', async () => {
        const body = assertError(await admin.get(`${DS}?eq(colour,red)`), 400, 4013, 'RQL_VISIT_ERROR');
        assert.match(body.message, /colour/);
      });
    });

    describe('permissions', () => {
      let open: SourceBody;
      let adminOnly: SourceBody;
      let operators: SourceBody;
      before(async () => {
        open = await create({ xid: 'perm-src-open', name: 'perm open' });
        adminOnly = await create({ xid: 'perm-src-admin', name: 'perm admin', readPermission: [] });
        operators = await create({ xid: 'perm-src-ops', name: 'perm ops', readPermission: ['operators'], editPermission: ['operators'] });
      });

      it('refuses a non-superadmin creating a source with 403 4004 "Access denied"', async () => {
        const xid = unique('ds-byuser-');
        const body = assertError(await viewer.post(DS, { xid, name: 'Mine', modelType: 'VIRTUAL' }), 403, 4004, 'ACCESS_DENIED');
        assert.equal(body.message, 'Access denied');
        assertError(await operator.post(DS, { xid, name: 'Mine', modelType: 'VIRTUAL' }), 403, 4004);
        assert.equal((await admin.get(`${DS}/${xid}`)).status, 404);
      });

      it('lists to each user only the sources it may read', async () => {
        const forViewer = await list(viewer, 'match(xid,perm-src-*)&sort(xid)');
        assert.deepEqual(forViewer.items.map((s) => s.xid), [open.xid]);
        assert.equal(forViewer.total, 1);
        const forOperator = await list(operator, 'match(xid,perm-src-*)&sort(xid)');
        assert.deepEqual(forOperator.items.map((s) => s.xid), [open.xid, operators.xid]);
        assert.equal(forOperator.total, 2);
        const forAdmin = await list(admin, 'match(xid,perm-src-*)&sort(xid)');
        assert.deepEqual(forAdmin.items.map((s) => s.xid), [adminOnly.xid, open.xid, operators.xid]);
        const everything = await list(viewer, 'limit(100000)');
        assert.ok(everything.items.every((s) => s.readPermission.includes('user')), 'viewer sees a source without the user role');
        assert.equal(everything.total, everything.items.length);
      });

      it('answers 403 for a source the user may not read, on both paths', async () => {
        for (const path of [`${DS}/${adminOnly.xid}`, `${DS}/by-xid/${adminOnly.xid}`, `${DS}/${operators.xid}`]) {
          const body = assertError(await viewer.get(path), 403, 4004, 'ACCESS_DENIED');
          assert.equal(body.message, 'Access denied');
        }
        assert.deepEqual((await viewer.get(`${DS}/${open.xid}`)).body, open);
        assert.deepEqual((await operator.get(`${DS}/by-xid/${operators.xid}`)).body, operators);
        assertError(await operator.get(`${DS}/${adminOnly.xid}`), 403, 4004);
      });

      it('refuses update, enable-disable and delete without edit permission and changes nothing', async () => {
        for (const client of [viewer, operator]) {
          assertError(await client.put(`${DS}/${open.xid}`, { ...open, name: 'hijacked' }), 403, 4004);
          assertError(await client.put(`${DS}/enable-disable/${open.xid}`, { enabled: true }), 403, 4004);
          assertError(await client.delete(`${DS}/${open.xid}`), 403, 4004);
        }
        assertError(await viewer.put(`${DS}/${operators.xid}`, { ...operators, name: 'hijacked' }), 403, 4004);
        assertError(await viewer.put(`${DS}/enable-disable/${operators.xid}`, { enabled: true }), 403, 4004);
        assertError(await viewer.delete(`${DS}/${operators.xid}`), 403, 4004);
        assert.deepEqual((await admin.get(`${DS}/${open.xid}`)).body, open);
        assert.deepEqual((await admin.get(`${DS}/${operators.xid}`)).body, operators);
      });

      it('allows update, enable-disable and delete with the edit permission', async () => {
        const src = await create({ xid: unique('perm-edit-'), name: 'ops editable', readPermission: ['operators'], editPermission: ['operators'] });
        const updated = await operator.put<SourceBody>(`${DS}/${src.xid}`, { ...src, name: 'ops edited' });
        assert.equal(updated.status, 200, updated.text);
        assert.equal(updated.body.name, 'ops edited');
        const enabled = await operator.put<SourceBody>(`${DS}/enable-disable/${src.xid}`, { enabled: true });
        assert.equal(enabled.status, 200, enabled.text);
        assert.equal(enabled.body.enabled, true);
        const deleted = await operator.delete<SourceBody>(`${DS}/${src.xid}`);
        assert.equal(deleted.status, 200, deleted.text);
        assert.equal(deleted.body.xid, src.xid);
        assertError(await admin.get(`${DS}/${src.xid}`), 404, -1);
      });
    });
  });
}
