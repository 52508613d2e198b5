// PATCH on data sources, data points and users (Mango's partial update): the fields given replace the
// stored ones, the rest are kept, and the result is checked exactly as a PUT of the whole resource
// (validation, permissions, self-service rules), so a PATCH can do nothing a PUT could not. Shallow, as
// Mango's: a nested object given replaces the stored one whole. The CSRF check covers PATCH.
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { ApiClient, createRoleUsers, createUser, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

type Body = Record<string, unknown>;

const API = '/rest/latest';
const DS = `${API}/data-sources`;
const DP = `${API}/data-points`;
const PV = `${API}/point-values`;
const USERS = `${API}/users`;
const PASSWORD = 'patch-password-1';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`PATCH (${engine})`, function () {
    this.timeout(30_000);
    let app: TestApp;
    let admin: ApiClient;
    /** role "user" only. */
    let viewer: ApiClient;
    /** roles "user" and "operators". */
    let operator: ApiClient;
    let seq = 0;
    const unique = (prefix: string) => `${prefix}${++seq}`;

    async function created(path: string, body: Body): Promise<Body> {
      const res = await admin.post<Body>(path, body);
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    const get = async (path: string) => {
      const res = await admin.get<Body>(path);
      assert.equal(res.status, 200, res.text);
      return res.body;
    };

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
    });
    after(() => app.stop());

    describe('PATCH /data-sources/<xid>', () => {
      it('replaces the fields given and keeps the rest, settings and permissions included', async () => {
        const xid = unique('ps-');
        const before = await created(DS, { xid, name: 'PLC', modelType: 'MODBUS_IP', host: 'plc.local', port: 1502, unitId: 7, readPermission: ['user', 'operators'], editPermission: ['operators'] });
        const res = await admin.patch<Body>(`${DS}/${xid}`, { name: 'PLC renamed', timeoutMs: 250 });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { ...before, name: 'PLC renamed', timeoutMs: 250 });
        assert.deepEqual(await get(`${DS}/${xid}`), res.body);
      });

      it('keeps a write-only setting left out, and replaces it when given', async () => {
        const xid = unique('ps-mqtt-');
        await created(DS, { xid, name: 'Broker', modelType: 'MQTT_CLIENT', brokerUrl: 'mqtt://broker:1883', username: 'dev', password: 'first-secret' });
        const stored = async () => {
          const rows = await app.service.services.db.query<{ settings: unknown }>('select settings from data_sources where xid=$1', [xid]);
          const settings = rows[0]!.settings;
          return (typeof settings === 'string' ? JSON.parse(settings) : settings) as Body;
        };
        assert.equal((await admin.patch(`${DS}/${xid}`, { name: 'Broker 2' })).status, 200);
        assert.equal((await stored()).password, 'first-secret');
        const res = await admin.patch<Body>(`${DS}/${xid}`, { password: 'second-secret' });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.password, undefined, 'still never answered');
        assert.equal((await stored()).password, 'second-secret');
      });

      it('starts a source patched to enabled: the runtime hears it as a PUT', async () => {
        const xid = unique('ps-run-');
        await created(DS, { xid, name: 'Runs', modelType: 'VIRTUAL', updatePeriods: 1, updatePeriodType: 'HOURS' });
        const res = await admin.patch<Body>(`${DS}/${xid}`, { enabled: true });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.state, 'RUNNING');
        assert.equal(res.body.runningOn, app.config.instanceName);
      });

      it('refuses what PUT refuses: 422 naming the field, nothing stored', async () => {
        const xid = unique('ps-bad-');
        const before = await created(DS, { xid, name: 'Bad', modelType: 'VIRTUAL' });
        assertHasMessage(assertValidation(await admin.patch(`${DS}/${xid}`, { updatePeriods: 0 })), 'updatePeriods', /.+/);
        assertHasMessage(assertValidation(await admin.patch(`${DS}/${xid}`, { modelType: 'MODBUS_IP', host: 'plc.local' })), 'modelType', 'cannot be changed');
        assertHasMessage(assertValidation(await admin.patch(`${DS}/${xid}`, { name: null })), 'name', /.+/);
        assertValidation(await admin.patch(`${DS}/${xid}`, ['name']));
        assertError(await admin.patch(`${DS}/${xid}`), 400, 4005);
        assertError(await admin.request('PATCH', `${DS}/${xid}`, { rawBody: '{"name":' }), 400, 4005);
        assert.deepEqual(await get(`${DS}/${xid}`), before);
      });

      it('needs edit permission (403), read permission (403) and an existing source (404)', async () => {
        const xid = unique('ps-perm-');
        await created(DS, { xid, name: 'Ops', modelType: 'VIRTUAL', editPermission: ['operators'] });
        assertError(await viewer.patch(`${DS}/${xid}`, { name: 'mine' }), 403, 4004);
        const ok = await operator.patch<Body>(`${DS}/${xid}`, { name: 'Ops edited' });
        assert.equal(ok.status, 200, ok.text);
        const hidden = unique('ps-hidden-');
        await created(DS, { xid: hidden, name: 'Hidden', modelType: 'VIRTUAL', readPermission: ['nobody-has-this'] });
        assertError(await operator.patch(`${DS}/${hidden}`, { name: 'x' }), 403, 4004);
        assertError(await admin.patch(`${DS}/no-such-source`, { name: 'x' }), 404, -1);
      });

      it('renames the XID as PUT does; a taken XID is 409', async () => {
        const xid = unique('ps-old-');
        const other = unique('ps-taken-');
        await created(DS, { xid, name: 'Rename', modelType: 'VIRTUAL' });
        await created(DS, { xid: other, name: 'Taken', modelType: 'VIRTUAL' });
        assertError(await admin.patch(`${DS}/${xid}`, { xid: other }), 409, 4003);
        const res = await admin.patch<Body>(`${DS}/${xid}`, { xid: `${xid}-new` });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.xid, `${xid}-new`);
        assertError(await admin.get(`${DS}/${xid}`), 404, -1);
      });
    });

    describe('PATCH /data-points/<xid>', () => {
      const SOURCE = 'pp-src';
      const OPS_SOURCE = 'pp-ops-src';

      before(async () => {
        await created(DS, { xid: SOURCE, name: 'Points', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
        await created(DS, { xid: OPS_SOURCE, name: 'Ops points', modelType: 'VIRTUAL', editPermission: ['operators'] });
      });

      const point = (xid: string, extra: Body = {}) =>
        created(DP, {
          xid,
          name: 'Flow',
          dataSourceXid: SOURCE,
          pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'RANDOM_WALK', min: 0, max: 100, step: 5 },
          unit: 'l/s',
          tags: { site: 'north', line: '2' },
          setPermission: ['user'],
          loggingProperties: { loggingType: 'ALL' },
          ...extra,
        });

      it('replaces the fields given and keeps the rest', async () => {
        const xid = unique('pp-');
        const before = await point(xid);
        const res = await admin.patch<Body>(`${DP}/${xid}`, { name: 'Flow renamed', unit: 'm3/h' });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { ...before, name: 'Flow renamed', unit: 'm3/h' });
      });

      it('is shallow, as Mango: a pointLocator or tags given replace the stored ones whole', async () => {
        const xid = unique('pp-shallow-');
        await point(xid);
        const locator = await admin.patch<{ pointLocator: Body }>(`${DP}/${xid}`, { pointLocator: { dataType: 'NUMERIC', changeType: 'RANDOM_WALK', min: 10, max: 20 } });
        assert.equal(locator.status, 200, locator.text);
        assert.deepEqual(locator.body.pointLocator, { dataType: 'NUMERIC', settable: false, changeType: 'RANDOM_WALK', min: 10, max: 20 }, 'step and settable are not carried over');
        const tags = await admin.patch<{ tags: Body }>(`${DP}/${xid}`, { tags: { site: 'south' } });
        assert.deepEqual(tags.body.tags, { site: 'south' });
        assertHasMessage(assertValidation(await admin.patch(`${DP}/${xid}`, { pointLocator: { min: 1 } })), 'pointLocator.dataType', 'is required');
      });

      it('merges loggingProperties over the stored ones, as PUT does', async () => {
        const xid = unique('pp-logging-');
        await point(xid);
        const res = await admin.patch<{ loggingProperties: Body }>(`${DP}/${xid}`, { loggingProperties: { tolerance: 2 } });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.loggingProperties.loggingType, 'ALL');
        assert.equal(res.body.loggingProperties.tolerance, 2);
      });

      it('disables the point as PUT does: its values are refused', async () => {
        const xid = unique('pp-off-');
        await point(xid);
        assert.equal((await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1 })).status, 200);
        const res = await admin.patch<Body>(`${DP}/${xid}`, { enabled: false });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.enabled, false);
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 2 })), 'xid', /not enabled/);
      });

      it('refuses what PUT refuses, and checks the same permissions', async () => {
        const xid = unique('pp-bad-');
        const before = await point(xid);
        assertHasMessage(assertValidation(await admin.patch(`${DP}/${xid}`, { dataSourceXid: OPS_SOURCE })), 'dataSourceXid', 'cannot be changed');
        assertHasMessage(assertValidation(await admin.patch(`${DP}/${xid}`, { pointLocator: { dataType: 'NUMERIC', min: 5, max: 1 } })), 'pointLocator.max', /.+/);
        assertHasMessage(assertValidation(await admin.patch(`${DP}/${xid}`, { purgePeriod: { periods: 0, type: 'DAYS' } })), 'purgePeriod.periods', /.+/);
        assertError(await viewer.patch(`${DP}/${xid}`, { name: 'mine' }), 403, 4004);
        assertError(await operator.patch(`${DP}/${xid}`, { name: 'mine' }), 403, 4004);
        assert.deepEqual(await get(`${DP}/${xid}`), before);

        const ops = unique('pp-ops-');
        await created(DP, { xid: ops, name: 'Ops point', dataSourceXid: OPS_SOURCE, pointLocator: { dataType: 'BINARY' } });
        const ok = await operator.patch<Body>(`${DP}/${ops}`, { name: 'Edited by the source editor' });
        assert.equal(ok.status, 200, ok.text);
        assertError(await admin.patch(`${DP}/no-such-point`, { name: 'x' }), 404, -1);
      });
    });

    describe('PATCH /users/<username>', () => {
      async function user(prefix: string, extra: Body = {}): Promise<{ name: string; client: ApiClient }> {
        const name = unique(prefix);
        await createUser(admin, name, PASSWORD, { name: 'Someone', locale: 'de', timezone: 'Europe/Berlin', ...extra });
        return { name, client: await loggedIn(app.url, name, PASSWORD) };
      }

      it('lets a superadmin change some fields and keeps the rest; the user stays logged in', async () => {
        const { name, client } = await user('pu-');
        const before = await get(`${USERS}/${name}`);
        const res = await admin.patch<Body>(`${USERS}/${name}`, { email: `${name}@example.org`, name: 'Changed' });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { ...before, email: `${name}@example.org`, name: 'Changed' });
        assert.equal((await client.get(`${USERS}/current`)).status, 200, 'no credential changed: the session lives');
      });

      it('lets users change their own name, not their own permissions or disabled (403, as PUT)', async () => {
        const { name, client } = await user('pu-self-');
        const res = await client.patch<Body>(`${USERS}/${name}`, { name: 'Me myself', timezone: 'UTC' });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.locale, 'de', 'kept');
        assertError(await client.patch(`${USERS}/${name}`, { permissions: ['user', 'superadmin'] }), 403, 4004);
        assertError(await client.patch(`${USERS}/${name}`, { disabled: true }), 403, 4004);
        assertError(await client.patch(`${USERS}/admin`, { name: 'Taken over' }), 403, 4004);
        assert.deepEqual((await get(`${USERS}/${name}`)).permissions, ['user']);
      });

      it('follows the password rules: length, currentPassword for one\'s own, other sessions end', async () => {
        const { name, client } = await user('pu-pw-');
        const elsewhere = await loggedIn(app.url, name, PASSWORD);
        assertHasMessage(assertValidation(await client.patch(`${USERS}/${name}`, { password: 'short' })), 'password', 'must be at least 8 characters');
        assertError(await client.patch(`${USERS}/${name}`, { password: 'a-new-password' }), 400, 4012);
        assertError(await client.patch(`${USERS}/${name}`, { password: 'a-new-password', currentPassword: 'wrong-password' }), 400, 4012);
        const ok = await client.patch(`${USERS}/${name}`, { password: 'a-new-password', currentPassword: PASSWORD });
        assert.equal(ok.status, 200, ok.text);
        assert.equal((await client.get(`${USERS}/current`)).status, 200, 'own session survives');
        assertError(await elsewhere.get(`${USERS}/current`), 401, 4008);
        await loggedIn(app.url, name, 'a-new-password');
      });

      it('refuses bad values with 422 and an unknown user with 404', async () => {
        const { name } = await user('pu-bad-');
        assertHasMessage(assertValidation(await admin.patch(`${USERS}/${name}`, { email: 'not-an-email' })), 'email', /.+/);
        assertHasMessage(assertValidation(await admin.patch(`${USERS}/${name}`, { timezone: 'Mars/Olympus' })), 'timezone', /.+/);
        assertError(await admin.patch(`${USERS}/no-such-user`, { name: 'x' }), 404, -1);
      });
    });

    describe('CSRF', () => {
      it('refuses a PATCH by session cookie without the X-XSRF-TOKEN header (403 4004), nothing changed', async () => {
        const xid = unique('pc-');
        const before = await created(DS, { xid, name: 'Guarded', modelType: 'VIRTUAL' });
        const res = await admin.patch(`${DS}/${xid}`, { name: 'forged' }, { csrf: false });
        assertError(res, 403, 4004);
        assert.match((res.body as { message: string }).message, /CSRF/);
        assertError(await admin.patch(`${DS}/${xid}`, { name: 'forged' }, { headers: { 'x-xsrf-token': 'not-the-cookie' } }), 403, 4004);
        assert.deepEqual(await get(`${DS}/${xid}`), before);
      });

      it('needs no CSRF header with a bearer token (no cookie)', async () => {
        const xid = unique('pc-token-');
        await created(DS, { xid, name: 'Token', modelType: 'VIRTUAL' });
        const token = await admin.post<{ token: string }>(`${API}/auth-tokens/create`, {});
        assert.equal(token.status, 201, token.text);
        const bearer = new ApiClient(app.url).useBearer(token.body.token);
        const res = await bearer.patch<Body>(`${DS}/${xid}`, { name: 'By token' });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.name, 'By token');
      });
    });
  });
}
