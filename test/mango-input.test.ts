// Mango clients' input forms (API-DECISIONS "Mango clients"): permissions as a comma-separated
// string, "" or null; null for an optional field as "not given"; unknown fields ignored while a known
// field with a bad value stays a 422; Mango's virtual change types, poll period and detector fields.
// Answers keep this service's shapes.
import assert from 'node:assert/strict';
import { assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const API = '/rest/latest';
type Body = Record<string, unknown>;

announceEngines();
for (const engine of metadataEngines()) {
  describe(`Mango input forms (${engine})`, function () {
    this.timeout(30_000);
    let app: TestApp;
    let admin: ApiClient;
    let seq = 0;
    const unique = (prefix: string) => `${prefix}-${++seq}`;
    const SOURCE = 'mango-src';

    async function created(path: string, body: Body): Promise<Body> {
      const res = await admin.post<Body>(`${API}${path}`, body);
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    async function point(pointLocator: Body, extra: Body = {}): Promise<Body> {
      return created('/data-points', { xid: unique('mp'), name: 'p', dataSourceXid: SOURCE, pointLocator, ...extra });
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      // node-mango-client's default data source, with a poll period of 2 s.
      await created('/data-sources', {
        xid: SOURCE,
        name: 'Mango defaults',
        modelType: 'VIRTUAL',
        enabled: false,
        quantize: true,
        useCron: false,
        cronPattern: '',
        pollPeriod: { periods: 2, type: 'SECONDS' },
        purgeSettings: { override: false, frequency: { periods: 1, type: 'YEARS' } },
        eventAlarmLevels: [],
        editPermission: null,
      });
    });
    after(() => app?.stop());

    describe('permissions', () => {
      it('takes a comma-separated string, "" and null, and answers arrays', async () => {
        const p = await point({ dataType: 'NUMERIC', changeType: 'NO_CHANGE' }, { readPermission: 'user, operators', setPermission: '', editPermission: null });
        assert.deepEqual([...(p.readPermission as string[])].sort(), ['operators', 'user']);
        assert.deepEqual(p.setPermission, []);
        assert.deepEqual(p.editPermission, []);
        const source = await admin.get<Body>(`${API}/data-sources/${SOURCE}`);
        assert.deepEqual(source.body.editPermission, []);
      });

      it("takes Mango 4's role sets when each set is one role, and refuses a set that must all be held", async () => {
        const p = await point({ dataType: 'NUMERIC', changeType: 'NO_CHANGE' }, { readPermission: [['user'], ['operators']] });
        assert.deepEqual([...(p.readPermission as string[])].sort(), ['operators', 'user']);
        const res = await admin.post(`${API}/data-points`, {
          name: 'p',
          dataSourceXid: SOURCE,
          pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' },
          readPermission: [['user', 'operators']],
        });
        assertHasMessage(assertValidation(res), 'readPermission', /must all be held is not supported/);
      });

      it('refuses a permission that is neither roles nor such a string', async () => {
        const res = await admin.post(`${API}/data-points`, {
          name: 'p',
          dataSourceXid: SOURCE,
          pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' },
          readPermission: 5,
        });
        assertHasMessage(assertValidation(res), 'readPermission', 'must be an array');
      });

      it("takes a user's permissions as a string (Mango 3) and a JSON store item's", async () => {
        const username = unique('mango-user');
        const res = await createUser(admin, username, 'mango-password-1', { permissions: 'user,operators', receiveAlarmEmails: 'IGNORE', locale: '' });
        assert.deepEqual([...((res.body as Body).permissions as string[])].sort(), ['operators', 'user']);
        const operator = await loggedIn(app.url, username, 'mango-password-1');
        const item = await created('/json-store', { xid: unique('mj'), name: 'doc', jsonData: { a: 1 }, readPermission: 'operators', editPermission: '' });
        assert.deepEqual(item.readPermission, ['operators']);
        assert.equal((await operator.get(`${API}/json-store/${String(item.xid)}`)).status, 200);
      });
    });

    describe('null and unknown fields', () => {
      it("creates a point from node-mango-client's default object", async () => {
        const xid = unique('mango-default');
        const p = await created('/data-points', {
          xid,
          name: `${xid} Name`,
          enabled: false,
          deviceName: `${xid} Name`,
          dataSourceXid: SOURCE,
          useIntegralUnit: false,
          useRenderedUnit: false,
          readPermission: '',
          setPermission: '',
          chartColour: '',
          rollup: 'NONE',
          plotType: 'STEP',
          loggingProperties: { loggingType: 'ALL', discardExtremeValues: false, discardLowLimit: null, discardHighLimit: null, cacheSize: 1 },
          textRenderer: { useUnitAsSuffix: false, suffix: 'test', type: 'textRendererPlain' },
          pointLocator: { modelType: 'PL.VIRTUAL', dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE', startValue: '0' },
          purgeOverride: false,
          purgePeriod: { periods: 1, type: 'YEARS' },
          unit: '',
          integralUnit: 's',
          renderedUnit: '',
        });
        assert.equal(p.xid, xid);
        assert.equal((p.pointLocator as Body).startValue, 0);
        assert.equal((p.loggingProperties as Body).loggingType, 'ALL');
        assert.notEqual((p.loggingProperties as Body).discardLowLimit, null);
        // Our answer's shape: none of the fields we do not know come back; Mango's plain renderer is ours.
        assert.deepEqual(p.textRenderer, { type: 'PLAIN' });
        assert.equal('plotType' in p, false);
        // The client saves what it got back (with its own bookkeeping field): a PUT of it works.
        const again = await admin.put<Body>(`${API}/data-points/${xid}`, { ...p, originalId: xid, name: 'renamed' });
        assert.equal(again.status, 200, again.text);
        assert.equal(again.body.name, 'renamed');
      });

      it('refuses null for a required field and a bad value for a known one', async () => {
        const nullName = await admin.post(`${API}/data-points`, { name: null, dataSourceXid: SOURCE, pointLocator: { dataType: 'NUMERIC' } });
        assertHasMessage(assertValidation(nullName), 'name', 'must be a string');
        const badEnabled = await admin.post(`${API}/data-points`, { name: 'x', enabled: 'yes', dataSourceXid: SOURCE, pointLocator: { dataType: 'NUMERIC' } });
        assertHasMessage(assertValidation(badEnabled), 'enabled', 'must be true or false');
        const badLimit = await admin.post(`${API}/data-points`, {
          name: 'x',
          dataSourceXid: SOURCE,
          pointLocator: { dataType: 'NUMERIC' },
          loggingProperties: { discardLowLimit: 'low' },
        });
        assertHasMessage(assertValidation(badLimit), 'loggingProperties.discardLowLimit', 'must be a number');
      });
    });

    describe('data sources', () => {
      it("reads Mango's pollPeriod as the update period (days as hours)", async () => {
        const seconds = await admin.get<Body>(`${API}/data-sources/${SOURCE}`);
        assert.equal(seconds.body.updatePeriods, 2);
        assert.equal(seconds.body.updatePeriodType, 'SECONDS');
        const days = await created('/data-sources', { name: 'daily', modelType: 'VIRTUAL', pollPeriod: { periods: 2, type: 'DAYS' } });
        assert.equal(days.updatePeriods, 48);
        assert.equal(days.updatePeriodType, 'HOURS');
        const bad = await admin.post(`${API}/data-sources`, { name: 'bad', modelType: 'VIRTUAL', pollPeriod: { periods: 1, type: 'FORTNIGHTS' } });
        assertHasMessage(assertValidation(bad), 'updatePeriodType', /must be one of/);
      });

      it("reads a Modbus source's timeout as timeoutMs", async () => {
        const modbus = await created('/data-sources', { name: 'plc', modelType: 'MODBUS_IP', host: '127.0.0.1', port: 5020, timeout: 750 });
        assert.equal(modbus.timeoutMs, 750);
      });
    });

    describe('virtual change types', () => {
      it('reads BROWNIAN, INCREMENT_ANALOG, RANDOM_ANALOG as ours with their fields', async () => {
        const brownian = await point({ dataType: 'NUMERIC', changeType: 'BROWNIAN', min: 10, max: 90, maxChange: 0.5, startValue: '50' });
        assert.deepEqual(brownian.pointLocator, { dataType: 'NUMERIC', settable: false, changeType: 'RANDOM_WALK', min: 10, max: 90, step: 0.5, startValue: 50 });
        const increment = await point({ dataType: 'NUMERIC', changeType: 'INCREMENT_ANALOG', min: 0, max: 10, change: 2, roll: true, startValue: '0' });
        assert.equal((increment.pointLocator as Body).changeType, 'INCREMENT');
        assert.equal((increment.pointLocator as Body).step, 2);
        const random = await point({ dataType: 'NUMERIC', changeType: 'RANDOM_ANALOG', min: 1, max: 2 });
        assert.equal((random.pointLocator as Body).changeType, 'RANDOM');
        const bounce = await point({ dataType: 'NUMERIC', changeType: 'INCREMENT_ANALOG', min: 0, max: 10, change: 2, roll: false });
        assert.equal((bounce.pointLocator as Body).roll, false);
      });

      it("reads SINUSOIDAL's offset ± amplitude over a period counted in the source's polls", async () => {
        const sine = await point({ dataType: 'NUMERIC', changeType: 'SINUSOIDAL', amplitude: 10, offset: 50, period: 30, phaseShift: 0, startValue: '50' });
        const loc = sine.pointLocator as Body;
        assert.equal(loc.changeType, 'SINE');
        assert.equal(loc.min, 40);
        assert.equal(loc.max, 60);
        assert.equal(loc.periodMs, 60_000); // 30 polls of 2 s
        const shifted = await admin.post(`${API}/data-points`, {
          name: 'p',
          dataSourceXid: SOURCE,
          pointLocator: { dataType: 'NUMERIC', changeType: 'SINUSOIDAL', amplitude: 1, offset: 0, period: 10, phaseShift: 1.5 },
        });
        assertHasMessage(assertValidation(shifted), 'pointLocator.phaseShift', /not supported/);
      });

      it('reads the binary and multistate types, and refuses ANALOG_ATTRACTOR by name', async () => {
        const alternate = await point({ dataType: 'BINARY', changeType: 'ALTERNATE_BOOLEAN', startValue: 'true' });
        assert.deepEqual(
          [(alternate.pointLocator as Body).changeType, (alternate.pointLocator as Body).startValue],
          ['ALTERNATE', true],
        );
        const randomBool = await point({ dataType: 'BINARY', changeType: 'RANDOM_BOOLEAN' });
        assert.equal((randomBool.pointLocator as Body).changeType, 'RANDOM');
        const multi = await point({ dataType: 'MULTISTATE', changeType: 'RANDOM_MULTISTATE', values: [1, 2, 3], startValue: '2' });
        assert.deepEqual(multi.pointLocator, { dataType: 'MULTISTATE', settable: false, changeType: 'RANDOM', values: [1, 2, 3], startValue: 2 });
        const incMulti = await point({ dataType: 'MULTISTATE', changeType: 'INCREMENT_MULTISTATE', values: [1, 2], roll: true });
        assert.equal((incMulti.pointLocator as Body).changeType, 'INCREMENT');
        const attractor = await admin.post(`${API}/data-points`, {
          name: 'p',
          dataSourceXid: SOURCE,
          pointLocator: { dataType: 'NUMERIC', changeType: 'ANALOG_ATTRACTOR', maxChange: 1, volatility: 1 },
        });
        assertHasMessage(assertValidation(attractor), 'pointLocator.changeType', /must be one of/);
      });
    });

    describe('event detectors', () => {
      let target: Body;
      before(async () => {
        target = await point({ dataType: 'NUMERIC', changeType: 'NO_CHANGE' });
      });

      it("names the point by Mango's sourceId and reads duration {periods, type}", async () => {
        const d = await created('/event-detectors', {
          xid: unique('med'),
          name: 'high',
          detectorSourceType: 'DATA_POINT',
          sourceId: target.id,
          detectorType: 'HIGH_LIMIT',
          alarmLevel: 'NONE',
          limit: 15,
          resetLimit: 10,
          useResetLimit: true,
          notHigher: false,
          duration: { periods: 10, type: 'SECONDS' },
        });
        assert.equal(d.dataPointXid, target.xid);
        assert.equal(d.durationMs, 10_000);
        assert.equal(d.resetLimit, 10);
      });

      it("reads Mango 3's duration with durationType, and useResetLimit false drops the reset limit", async () => {
        const d = await created('/event-detectors', {
          dataPointXid: target.xid,
          detectorType: 'HIGH_LIMIT',
          alarmLevel: 'URGENT',
          limit: 15,
          resetLimit: 10,
          useResetLimit: false,
          duration: 5,
          durationType: 'MINUTES',
        });
        assert.equal(d.durationMs, 300_000);
        assert.equal('resetLimit' in d, false);
      });

      it('refuses what cannot be said here, naming the field', async () => {
        const base = { detectorSourceType: 'DATA_POINT', sourceId: target.id, detectorType: 'LOW_LIMIT', alarmLevel: 'NONE', limit: 15 };
        assertHasMessage(assertValidation(await admin.post(`${API}/event-detectors`, { ...base, notLower: true })), 'notLower', /not supported/);
        assertHasMessage(assertValidation(await admin.post(`${API}/event-detectors`, { ...base, sourceId: 987_654 })), 'sourceId', 'Data point not found');
        assertHasMessage(
          assertValidation(await admin.post(`${API}/event-detectors`, { ...base, detectorSourceType: 'DATA_SOURCE' })),
          'detectorSourceType',
          /must be DATA_POINT/,
        );
        assertHasMessage(assertValidation(await admin.post(`${API}/event-detectors`, { ...base, duration: { periods: 1, type: 'EONS' } })), 'duration', /must be/);
      });
    });
  });
}
