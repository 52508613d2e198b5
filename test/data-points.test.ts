import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation, type ValidationMessageShape } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, getList, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

interface PointBody {
  id: number;
  xid: string;
  name: string;
  enabled: boolean;
  deviceName: string;
  dataSourceXid: string;
  pointLocator: { dataType: string; settable: boolean; [key: string]: unknown };
  unit: string;
  tags: Record<string, string>;
  rollup: string;
  readPermission: string[];
  editPermission: string[];
  setPermission: string[];
  [key: string]: unknown;
}

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PASSWORD = 'secret-password-1';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`data points API (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    /** role "user" only. */
    let viewer: ApiClient;
    /** roles "user" and "operators". */
    let operator: ApiClient;
    let seq = 0;
    const unique = (prefix: string) => `${prefix}${++seq}`;

    const VIRTUAL = 'dp-src-virtual';
    const MODBUS = 'dp-src-modbus';
    const MQTT = 'dp-src-mqtt';
    /** A source operators may edit (but not the points' own permissions). */
    const OPS_SOURCE = 'dp-src-ops';

    async function createSource(body: Record<string, unknown>): Promise<void> {
      const res = await admin.post(DS, body);
      assert.equal(res.status, 201, res.text);
    }

    function point(dataSourceXid: string, pointLocator: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
      return { xid: unique('dp-'), name: unique('point '), dataSourceXid, pointLocator, ...extra };
    }

    async function create(body: Record<string, unknown>, as = admin): Promise<PointBody> {
      const res = await as.post<PointBody>(DP, body);
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    /** The request fails with 422 and a message for `property`; returns the messages. */
    async function rejects(body: Record<string, unknown>, property: string, message: string | RegExp): Promise<ValidationMessageShape[]> {
      const res = await admin.post(DP, body);
      const messages = assertValidation(res);
      assertHasMessage(messages, property, message);
      if (typeof body.xid === 'string') assert.equal((await admin.get(`${DP}/${encodeURIComponent(body.xid)}`)).status, 404, 'an invalid point was stored');
      return messages;
    }

    const list = (client: ApiClient, query: string) => getList<PointBody>(client, `${DP}?${query}`);

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
      await createSource({ xid: VIRTUAL, name: 'Virtual device', modelType: 'VIRTUAL' });
      await createSource({ xid: MODBUS, name: 'PLC', modelType: 'MODBUS_IP', host: '192.0.2.1' });
      await createSource({ xid: MQTT, name: 'Broker', modelType: 'MQTT_CLIENT', brokerUrl: 'mqtt://192.0.2.2:1883' });
      await createSource({ xid: OPS_SOURCE, name: 'Ops device', modelType: 'VIRTUAL', editPermission: ['operators'] });
    });
    after(() => app.stop());

    describe('POST /data-points', () => {
      it('creates a point: 201, Location, the stored resource with defaults', async () => {
        const xid = unique('dp-full-');
        const res = await admin.post<PointBody>(DP, {
          xid,
          name: 'Temperature',
          dataSourceXid: VIRTUAL,
          pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'SINE', min: -10, max: 40 },
          unit: '°C',
          tags: { site: 'north', floor: '2' },
        });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('location'), `${DP}/${xid}`);
        const body = res.body;
        assert.equal(typeof body.id, 'number');
        assert.equal(body.xid, xid);
        assert.equal(body.name, 'Temperature');
        assert.equal(body.deviceName, 'Virtual device', 'deviceName defaults to the source name');
        assert.equal(body.dataSourceXid, VIRTUAL);
        assert.equal(body.pointLocator.dataType, 'NUMERIC');
        assert.equal(body.pointLocator.settable, true);
        assert.equal(body.pointLocator.changeType, 'SINE');
        assert.equal(body.pointLocator.min, -10);
        assert.equal(body.pointLocator.max, 40);
        assert.ok(!('dataType' in body) && !('settable' in body), 'dataType and settable belong inside pointLocator');
        assert.equal(body.unit, '°C');
        assert.deepEqual(body.tags, { site: 'north', floor: '2' });
        assert.deepEqual(body.readPermission, ['user']);
        assert.deepEqual(body.editPermission, []);
        assert.deepEqual(body.setPermission, []);
        assert.equal(typeof body.enabled, 'boolean');

        const fetched = await admin.get<PointBody>(res.headers.get('location')!);
        assert.equal(fetched.status, 200);
        assert.deepEqual(fetched.body, body);
      });

      it('keeps a given deviceName, enabled flag, permissions and rollup, and settable defaults to false', async () => {
        const body = await create(
          point(VIRTUAL, { dataType: 'BINARY' }, { deviceName: 'Pump 7', enabled: false, readPermission: ['operators'], editPermission: ['operators'], setPermission: ['operators'], rollup: 'LAST' }),
        );
        assert.equal(body.deviceName, 'Pump 7');
        assert.equal(body.enabled, false);
        assert.deepEqual([body.readPermission, body.editPermission, body.setPermission], [['operators'], ['operators'], ['operators']]);
        assert.equal(body.rollup, 'LAST');
        assert.equal(body.pointLocator.settable, false);
        assert.equal(body.pointLocator.dataType, 'BINARY');
      });

      it('generates a DP_ XID when none is given', async () => {
        const res = await admin.post<PointBody>(DP, { name: 'No xid', dataSourceXid: VIRTUAL, pointLocator: { dataType: 'NUMERIC' } });
        assert.equal(res.status, 201, res.text);
        assert.match(res.body.xid, /^DP_[A-Z0-9]+$/);
        assert.equal(res.headers.get('location'), `${DP}/${res.body.xid}`);
        assert.equal((await admin.get(`${DP}/${res.body.xid}`)).status, 200);
      });

      it('refuses an existing XID with 409 4003 "XID is already in use"', async () => {
        const first = await create(point(VIRTUAL, { dataType: 'NUMERIC' }));
        const body = assertError(await admin.post(DP, point(VIRTUAL, { dataType: 'BINARY' }, { xid: first.xid })), 409, 4003, 'ALREADY_EXISTS');
        assert.equal(body.message, 'XID is already in use');
        assert.equal((await admin.get<PointBody>(`${DP}/${first.xid}`)).body.pointLocator.dataType, 'NUMERIC');
      });

      it('requires name, dataSourceXid, pointLocator and pointLocator.dataType ("is required"), naming DataPointVO', async () => {
        const res = await admin.post(DP, { xid: unique('dp-none-') });
        const messages = assertValidation(res);
        assertHasMessage(messages, 'name', 'is required');
        assertHasMessage(messages, 'dataSourceXid', 'is required');
        assertHasMessage(messages, 'pointLocator', 'is required');
        assert.match((res.body as { message: string }).message, /DataPointVO/);
        await rejects({ xid: unique('dp-'), name: 'n', pointLocator: { dataType: 'NUMERIC' } }, 'dataSourceXid', 'is required');
        await rejects(point(VIRTUAL, {}), 'pointLocator.dataType', 'is required');
        await rejects(point(VIRTUAL, { dataType: 'TEXT' }), 'pointLocator.dataType', /^must be one of/);
      });

      it('refuses an unknown dataSourceXid with 422 on dataSourceXid', async () => {
        const messages = await rejects(point('no-such-source', { dataType: 'NUMERIC' }), 'dataSourceXid', /.+/);
        assert.equal(messages.length, 1);
      });

      it('checks tags: string values only', async () => {
        await rejects(point(VIRTUAL, { dataType: 'NUMERIC' }, { tags: { floor: 2 } }), 'tags.floor', 'must be a string');
      });

      describe('MODBUS_IP locator', () => {
        it('stores a register locator with defaults', async () => {
          const body = await create(point(MODBUS, { dataType: 'NUMERIC', offset: 100 }));
          assert.equal(body.deviceName, 'PLC');
          assert.deepEqual(body.pointLocator, {
            dataType: 'NUMERIC',
            settable: false,
            offset: 100,
            registerType: 'HOLDING',
            dataEncoding: 'UINT16',
            wordOrder: 'BIG',
            multiplier: 1,
            additive: 0,
          });
        });

        it('reports offset -1 and 65536 as "must be between 0 and 65535" on pointLocator.offset', async () => {
          for (const offset of [-1, 65536]) {
            const messages = await rejects(point(MODBUS, { dataType: 'NUMERIC', offset }), 'pointLocator.offset', 'must be between 0 and 65535');
            assert.ok(messages.every((m) => m.property.startsWith('pointLocator.')), JSON.stringify(messages));
          }
          await create(point(MODBUS, { dataType: 'NUMERIC', offset: 0 }));
          await create(point(MODBUS, { dataType: 'NUMERIC', offset: 65535 }));
        });

        it('reports a missing offset as "is required" on pointLocator.offset', async () => {
          await rejects(point(MODBUS, { dataType: 'NUMERIC' }), 'pointLocator.offset', 'is required');
        });

        it('refuses a two-register encoding at offset 65535', async () => {
          await rejects(point(MODBUS, { dataType: 'NUMERIC', offset: 65535, dataEncoding: 'FLOAT32' }), 'pointLocator.offset', /.+/);
          await rejects(point(MODBUS, { dataType: 'NUMERIC', offset: 65535, dataEncoding: 'INT32' }), 'pointLocator.offset', /.+/);
          const ok = await create(point(MODBUS, { dataType: 'NUMERIC', offset: 65534, dataEncoding: 'FLOAT32', wordOrder: 'LITTLE', multiplier: 0.1, additive: -5 }));
          assert.deepEqual(
            [ok.pointLocator.offset, ok.pointLocator.dataEncoding, ok.pointLocator.wordOrder, ok.pointLocator.multiplier, ok.pointLocator.additive],
            [65534, 'FLOAT32', 'LITTLE', 0.1, -5],
          );
        });

        it('requires BINARY for coils and discrete inputs, and NUMERIC or MULTISTATE for registers', async () => {
          await rejects(point(MODBUS, { dataType: 'NUMERIC', offset: 1, registerType: 'COIL' }), 'pointLocator.dataType', /.+/);
          await rejects(point(MODBUS, { dataType: 'MULTISTATE', offset: 1, registerType: 'DISCRETE_INPUT' }), 'pointLocator.dataType', /.+/);
          await rejects(point(MODBUS, { dataType: 'BINARY', offset: 1, registerType: 'HOLDING' }), 'pointLocator.dataType', /.+/);
          await rejects(point(MODBUS, { dataType: 'ALPHANUMERIC', offset: 1 }), 'pointLocator.dataType', /.+/);
          const coil = await create(point(MODBUS, { dataType: 'BINARY', offset: 1, registerType: 'COIL', settable: true }));
          assert.equal(coil.pointLocator.registerType, 'COIL');
          assert.equal(coil.pointLocator.settable, true);
        });

        it('refuses a settable input register or discrete input with 422 on pointLocator.settable', async () => {
          await rejects(point(MODBUS, { dataType: 'NUMERIC', offset: 3, registerType: 'INPUT', settable: true }), 'pointLocator.settable', /.+/);
          await rejects(point(MODBUS, { dataType: 'BINARY', offset: 3, registerType: 'DISCRETE_INPUT', settable: true }), 'pointLocator.settable', /.+/);
          const input = await create(point(MODBUS, { dataType: 'NUMERIC', offset: 3, registerType: 'INPUT' }));
          assert.equal(input.pointLocator.registerType, 'INPUT');
        });

        it('refuses a FLOAT32 MULTISTATE point and a zero multiplier', async () => {
          await rejects(point(MODBUS, { dataType: 'MULTISTATE', offset: 1, dataEncoding: 'FLOAT32' }), 'pointLocator.dataEncoding', /.+/);
          await rejects(point(MODBUS, { dataType: 'NUMERIC', offset: 1, multiplier: 0 }), 'pointLocator.multiplier', /.+/);
          await rejects(point(MODBUS, { dataType: 'NUMERIC', offset: 1, registerType: 'FIFO' }), 'pointLocator.registerType', /^must be one of/);
        });
      });

      describe('VIRTUAL locator', () => {
        it('defaults the change type per data type', async () => {
          const numeric = await create(point(VIRTUAL, { dataType: 'NUMERIC' }));
          assert.deepEqual(numeric.pointLocator, { dataType: 'NUMERIC', settable: false, changeType: 'RANDOM_WALK', min: 0, max: 100 });
          const binary = await create(point(VIRTUAL, { dataType: 'BINARY' }));
          assert.equal(binary.pointLocator.changeType, 'ALTERNATE');
          const alpha = await create(point(VIRTUAL, { dataType: 'ALPHANUMERIC', startValue: 'hello' }));
          assert.equal(alpha.pointLocator.changeType, 'NO_CHANGE');
          assert.equal(alpha.pointLocator.startValue, 'hello');
        });

        it('refuses a change type the data type does not allow with 422 on pointLocator.changeType', async () => {
          await rejects(point(VIRTUAL, { dataType: 'BINARY', changeType: 'SINE' }), 'pointLocator.changeType', /.+/);
          await rejects(point(VIRTUAL, { dataType: 'NUMERIC', changeType: 'ALTERNATE' }), 'pointLocator.changeType', /.+/);
          await rejects(point(VIRTUAL, { dataType: 'ALPHANUMERIC', changeType: 'RANDOM' }), 'pointLocator.changeType', /.+/);
          await rejects(point(VIRTUAL, { dataType: 'NUMERIC', changeType: 'WOBBLE' }), 'pointLocator.changeType', /^must be one of/);
          const nc = await create(point(VIRTUAL, { dataType: 'BINARY', changeType: 'NO_CHANGE' }));
          assert.equal(nc.pointLocator.changeType, 'NO_CHANGE');
        });

        it('refuses min greater than max', async () => {
          const messages = assertValidation(await admin.post(DP, point(VIRTUAL, { dataType: 'NUMERIC', min: 10, max: 5 })));
          assert.ok(messages.some((m) => m.property === 'pointLocator.max' || m.property === 'pointLocator.min'), JSON.stringify(messages));
          await rejects(point(VIRTUAL, { dataType: 'NUMERIC', min: 200 }), 'pointLocator.max', /.+/);
          await create(point(VIRTUAL, { dataType: 'NUMERIC', min: 5, max: 5 }));
        });

        it('requires values for a MULTISTATE INCREMENT or RANDOM point', async () => {
          await rejects(point(VIRTUAL, { dataType: 'MULTISTATE', changeType: 'INCREMENT' }), 'pointLocator.values', 'is required');
          await rejects(point(VIRTUAL, { dataType: 'MULTISTATE', changeType: 'RANDOM' }), 'pointLocator.values', 'is required');
          await rejects(point(VIRTUAL, { dataType: 'MULTISTATE', changeType: 'INCREMENT', values: [] }), 'pointLocator.values', /at least 1/);
          await rejects(point(VIRTUAL, { dataType: 'MULTISTATE', changeType: 'INCREMENT', values: [1, 2.5] }), 'pointLocator.values[1]', 'must be an integer');
          const ms = await create(point(VIRTUAL, { dataType: 'MULTISTATE', changeType: 'INCREMENT', values: [1, 2, 3] }));
          assert.deepEqual(ms.pointLocator.values, [1, 2, 3]);
        });

        it('checks startValue against the data type', async () => {
          await rejects(point(VIRTUAL, { dataType: 'NUMERIC', startValue: 'warm' }), 'pointLocator.startValue', /.+/);
          await rejects(point(VIRTUAL, { dataType: 'BINARY', startValue: 1 }), 'pointLocator.startValue', /.+/);
          await rejects(point(VIRTUAL, { dataType: 'MULTISTATE', values: [1, 2], startValue: 1.5 }), 'pointLocator.startValue', /.+/);
          assert.equal((await create(point(VIRTUAL, { dataType: 'BINARY', startValue: true }))).pointLocator.startValue, true);
        });

        it('takes startValue as a string that parses as the data type (as Mango sends it) and stores it typed', async () => {
          const cases: [Record<string, unknown>, string, unknown][] = [
            [{ dataType: 'NUMERIC' }, '21.5', 21.5],
            [{ dataType: 'NUMERIC' }, '-3', -3],
            [{ dataType: 'NUMERIC' }, '1e2', 100],
            [{ dataType: 'NUMERIC' }, ' 7 ', 7],
            [{ dataType: 'MULTISTATE', values: [1, 2, 3] }, '2', 2],
            [{ dataType: 'BINARY' }, 'true', true],
            [{ dataType: 'BINARY' }, 'FALSE', false],
            [{ dataType: 'ALPHANUMERIC' }, '42', '42'],
          ];
          for (const [locator, given, stored] of cases) {
            const created = await create(point(VIRTUAL, { ...locator, startValue: given }));
            assert.deepEqual(created.pointLocator.startValue, stored, `${String(locator.dataType)} ${JSON.stringify(given)}`);
            const read = await admin.get<PointBody>(`${DP}/${encodeURIComponent(created.xid)}`);
            assert.equal(read.status, 200, read.text);
            assert.deepEqual(read.body.pointLocator.startValue, stored, 'reads back typed');
          }
        });

        it('refuses a startValue string that does not parse as the data type with 422 on pointLocator.startValue', async () => {
          const cases: [Record<string, unknown>, string][] = [
            [{ dataType: 'NUMERIC' }, ''],
            [{ dataType: 'NUMERIC' }, '12abc'],
            [{ dataType: 'NUMERIC' }, '0x10'],
            [{ dataType: 'NUMERIC' }, 'Infinity'],
            [{ dataType: 'NUMERIC' }, 'NaN'],
            [{ dataType: 'NUMERIC' }, '1e999'],
            [{ dataType: 'MULTISTATE', values: [1, 2] }, '1.5'],
            [{ dataType: 'MULTISTATE', values: [1, 2] }, 'two'],
            [{ dataType: 'BINARY' }, '1'],
            [{ dataType: 'BINARY' }, 'yes'],
          ];
          for (const [locator, given] of cases) {
            await rejects(point(VIRTUAL, { ...locator, startValue: given }), 'pointLocator.startValue', `must be a ${String(locator.dataType)} value`);
          }
        });

        it('takes a string startValue on update (PUT) too', async () => {
          const created = await create(point(VIRTUAL, { dataType: 'NUMERIC' }));
          const res = await admin.put<PointBody>(`${DP}/${encodeURIComponent(created.xid)}`, { ...created, pointLocator: { ...created.pointLocator, startValue: '55.25' } });
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.pointLocator.startValue, 55.25);
          const bad = await admin.put(`${DP}/${encodeURIComponent(created.xid)}`, { ...created, pointLocator: { ...created.pointLocator, startValue: 'warm' } });
          assertHasMessage(assertValidation(bad), 'pointLocator.startValue', 'must be a NUMERIC value');
        });
      });

      describe('MQTT_CLIENT locator', () => {
        it('requires a topic', async () => {
          await rejects(point(MQTT, { dataType: 'NUMERIC' }), 'pointLocator.topic', 'is required');
          await rejects(point(MQTT, { dataType: 'NUMERIC', topic: '' }), 'pointLocator.topic', /.+/);
        });

        it('refuses a wildcard topic on a settable point, allows it on a read-only one', async () => {
          await rejects(point(MQTT, { dataType: 'NUMERIC', topic: 'plant/+/temp', settable: true }), 'pointLocator.topic', /.+/);
          await rejects(point(MQTT, { dataType: 'NUMERIC', topic: 'plant/#', settable: true }), 'pointLocator.topic', /.+/);
          const wild = await create(point(MQTT, { dataType: 'NUMERIC', topic: 'plant/+/temp' }));
          assert.deepEqual(wild.pointLocator, { dataType: 'NUMERIC', settable: false, topic: 'plant/+/temp' });
          const settable = await create(point(MQTT, { dataType: 'ALPHANUMERIC', topic: 'plant/1/cmd', settable: true, jsonPath: '$.value' }));
          assert.deepEqual(settable.pointLocator, { dataType: 'ALPHANUMERIC', settable: true, topic: 'plant/1/cmd', jsonPath: '$.value' });
          assert.equal(settable.deviceName, 'Broker');
        });
      });
    });

    describe('GET /data-points/<xid>', () => {
      it('answers an unknown XID with 404, code -1', async () => {
        const body = assertError(await admin.get(`${DP}/no-such-point`), 404, -1, 'NOT_FOUND');
        assert.equal(body.message, 'Data point not found');
      });
    });

    describe('PUT /data-points/<xid>', () => {
      it('updates the point: 200 with the stored resource', async () => {
        const created = await create(point(VIRTUAL, { dataType: 'NUMERIC' }, { tags: { a: '1' } }));
        const res = await admin.put<PointBody>(`${DP}/${created.xid}`, {
          ...created,
          name: 'Renamed',
          deviceName: 'Other device',
          unit: 'kW',
          tags: { b: '2' },
          pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'INCREMENT', min: 1, max: 2 },
        });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, {
          ...created,
          name: 'Renamed',
          deviceName: 'Other device',
          unit: 'kW',
          tags: { b: '2' },
          pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'INCREMENT', min: 1, max: 2 },
        });
        assert.deepEqual((await admin.get(`${DP}/${created.xid}`)).body, res.body);
      });

      it('refuses a change of dataSourceXid with 422 on dataSourceXid', async () => {
        const created = await create(point(VIRTUAL, { dataType: 'NUMERIC' }));
        const messages = assertValidation(await admin.put(`${DP}/${created.xid}`, { ...created, dataSourceXid: OPS_SOURCE }));
        assert.ok(messages.some((m) => m.property === 'dataSourceXid'), JSON.stringify(messages));
        assert.equal((await admin.get<PointBody>(`${DP}/${created.xid}`)).body.dataSourceXid, VIRTUAL);
      });

      it('validates the locator on update against the source type', async () => {
        const created = await create(point(MODBUS, { dataType: 'NUMERIC', offset: 7 }));
        const messages = assertValidation(await admin.put(`${DP}/${created.xid}`, { ...created, pointLocator: { ...created.pointLocator, offset: 65536 } }));
        assertHasMessage(messages, 'pointLocator.offset', 'must be between 0 and 65535');
        assertHasMessage(assertValidation(await admin.put(`${DP}/${created.xid}`, { ...created, name: undefined })), 'name', 'is required');
        assert.deepEqual((await admin.get(`${DP}/${created.xid}`)).body, created);
      });

      it('answers an unknown XID with 404', async () => {
        assertError(await admin.put(`${DP}/no-such-point`, point(VIRTUAL, { dataType: 'NUMERIC' })), 404, -1);
      });

      it('refuses renaming onto an existing XID with 409 4003', async () => {
        const a = await create(point(VIRTUAL, { dataType: 'NUMERIC' }));
        const b = await create(point(VIRTUAL, { dataType: 'NUMERIC' }));
        assertError(await admin.put(`${DP}/${b.xid}`, { ...b, xid: a.xid }), 409, 4003);
      });
    });

    describe('DELETE /data-points/<xid>', () => {
      it('answers 200 with the deleted point, after which it is gone', async () => {
        const created = await create(point(VIRTUAL, { dataType: 'NUMERIC' }));
        const res = await admin.delete<PointBody>(`${DP}/${created.xid}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, created);
        assertError(await admin.get(`${DP}/${created.xid}`), 404, -1);
        assertError(await admin.delete(`${DP}/${created.xid}`), 404, -1);
        assert.equal((await admin.get(`${DS}/${VIRTUAL}`)).status, 200, 'deleting a point deleted its source');
      });
    });

    describe('GET /data-points (RQL)', () => {
      const src = 'dp-rql-src';
      before(async () => {
        await createSource({ xid: src, name: 'RQL device', modelType: 'VIRTUAL' });
        const rows: [string, string, Record<string, string>][] = [
          ['rqlpt-alpha', 'NUMERIC', { site: 'north', kind: 'temp' }],
          ['rqlpt-beta', 'BINARY', { site: 'south' }],
          ['rqlpt-gamma', 'NUMERIC', { site: 'north', kind: 'flow' }],
          ['rqlpt-delta', 'NUMERIC', { site: 'east' }],
        ];
        for (const [name, dataType, tags] of rows) await create({ xid: `xid-${name}`, name, dataSourceXid: src, pointLocator: { dataType }, tags });
        // A point of another source with a matching name, to tell dataSourceXid filtering apart.
        await create({ xid: 'xid-rqlpt-other', name: 'rqlpt-other', dataSourceXid: VIRTUAL, pointLocator: { dataType: 'NUMERIC' }, tags: { site: 'north' } });
      });

      it('lists as {items, total}, filtered by dataSourceXid', async () => {
        const body = await list(admin, `eq(dataSourceXid,${src})&sort(name)`);
        assert.deepEqual(body.items.map((p) => p.name), ['rqlpt-alpha', 'rqlpt-beta', 'rqlpt-delta', 'rqlpt-gamma']);
        assert.equal(body.total, 4);
        assert.ok(body.items.every((p) => p.dataSourceXid === src && p.deviceName === 'RQL device'));
      });

      it('filters with eq and match', async () => {
        const eq = await list(admin, 'eq(name,rqlpt-gamma)');
        assert.deepEqual(eq.items.map((p) => p.xid), ['xid-rqlpt-gamma']);
        assert.equal(eq.total, 1);
        const match = await list(admin, 'match(name,*ta*)&sort(name)');
        assert.deepEqual(match.items.map((p) => p.name), ['rqlpt-beta', 'rqlpt-delta']);
        const byType = await list(admin, `eq(dataSourceXid,${src})&eq(dataType,BINARY)`);
        assert.deepEqual(byType.items.map((p) => p.name), ['rqlpt-beta']);
        const byDevice = await list(admin, 'eq(deviceName,RQL%20device)');
        assert.equal(byDevice.total, 4);
      });

      it('filters on tags.<key>', async () => {
        const north = await list(admin, 'eq(tags.site,north)&match(name,rqlpt-*)&sort(name)');
        assert.deepEqual(north.items.map((p) => p.name), ['rqlpt-alpha', 'rqlpt-gamma', 'rqlpt-other']);
        const northHere = await list(admin, `eq(tags.site,north)&eq(dataSourceXid,${src})&eq(tags.kind,flow)`);
        assert.deepEqual(northHere.items.map((p) => p.name), ['rqlpt-gamma']);
      });

      it('sorts by a tag and by dataType, total still counting every match', async () => {
        const byTag = await list(admin, `eq(dataSourceXid,${src})&sort(-tags.site,name)&limit(3)`);
        assert.deepEqual(byTag.items.map((p) => p.name), ['rqlpt-beta', 'rqlpt-alpha', 'rqlpt-gamma']);
        assert.equal(byTag.total, 4);
        const byType = await list(admin, `eq(dataSourceXid,${src})&sort(dataType,name)&limit(2,2)`);
        // NUMERIC precedes BINARY in the declared order of data types.
        assert.deepEqual(byType.items.map((p) => p.name), ['rqlpt-gamma', 'rqlpt-beta']);
        assert.equal(byType.total, 4);
      });

      it('sorts descending and pages with limit(count,offset), total counting every match', async () => {
        const sorted = await list(admin, `eq(dataSourceXid,${src})&sort(-name)`);
        assert.deepEqual(sorted.items.map((p) => p.name), ['rqlpt-gamma', 'rqlpt-delta', 'rqlpt-beta', 'rqlpt-alpha']);
        const page = await list(admin, `eq(dataSourceXid,${src})&sort(-name)&limit(2,1)`);
        assert.deepEqual(page.items.map((p) => p.name), ['rqlpt-delta', 'rqlpt-beta']);
        assert.equal(page.total, 4);
      });

      it('refuses an unknown property with 400 4013', async () => {
        const body = assertError(await admin.get(`${DP}?eq(pointLocator.offset,1)`), 400, 4013, 'RQL_VISIT_ERROR');
        assert.match(body.message, /pointLocator\.offset/);
        assertError(await admin.get(`${DP}?sort(colour)`), 400, 4013);
      });
    });

    describe('permissions', () => {
      let open: PointBody;
      let adminOnly: PointBody;
      let operators: PointBody;
      let viaSource: PointBody;
      before(async () => {
        open = await create({ xid: 'perm-pt-open', name: 'perm open', dataSourceXid: VIRTUAL, pointLocator: { dataType: 'NUMERIC' } });
        adminOnly = await create({ xid: 'perm-pt-admin', name: 'perm admin', dataSourceXid: VIRTUAL, pointLocator: { dataType: 'NUMERIC' }, readPermission: [] });
        operators = await create({
          xid: 'perm-pt-ops',
          name: 'perm ops',
          dataSourceXid: VIRTUAL,
          pointLocator: { dataType: 'NUMERIC' },
          readPermission: ['operators'],
          editPermission: ['operators'],
        });
        viaSource = await create({ xid: 'perm-pt-via', name: 'perm via source', dataSourceXid: OPS_SOURCE, pointLocator: { dataType: 'NUMERIC' } });
      });

      it('refuses creating a point on a source the user may not edit with 403, and allows it with the source\'s edit permission', async () => {
        const xid = unique('dp-byuser-');
        const body = assertError(await viewer.post(DP, { xid, name: 'Mine', dataSourceXid: VIRTUAL, pointLocator: { dataType: 'NUMERIC' } }), 403, 4004, 'ACCESS_DENIED');
        assert.equal(body.message, 'Access denied');
        assertError(await operator.post(DP, { xid, name: 'Mine', dataSourceXid: VIRTUAL, pointLocator: { dataType: 'NUMERIC' } }), 403, 4004);
        assertError(await viewer.post(DP, { xid, name: 'Mine', dataSourceXid: OPS_SOURCE, pointLocator: { dataType: 'NUMERIC' } }), 403, 4004);
        assert.equal((await admin.get(`${DP}/${xid}`)).status, 404);
        const mine = await create({ xid, name: 'Mine', dataSourceXid: OPS_SOURCE, pointLocator: { dataType: 'NUMERIC' } }, operator);
        assert.equal(mine.dataSourceXid, OPS_SOURCE);
      });

      it('lists to each user only the points it may read', async () => {
        const forViewer = await list(viewer, 'match(xid,perm-pt-*)&sort(xid)');
        assert.deepEqual(forViewer.items.map((p) => p.xid), [open.xid, viaSource.xid]);
        assert.equal(forViewer.total, 2);
        const forOperator = await list(operator, 'match(xid,perm-pt-*)&sort(xid)');
        assert.deepEqual(forOperator.items.map((p) => p.xid), [open.xid, operators.xid, viaSource.xid]);
        assert.equal(forOperator.total, 3);
        const forAdmin = await list(admin, 'match(xid,perm-pt-*)&sort(xid)');
        assert.deepEqual(forAdmin.items.map((p) => p.xid), [adminOnly.xid, open.xid, operators.xid, viaSource.xid]);
      });

      it('answers 403 for a point the user may not read', async () => {
        for (const xid of [adminOnly.xid, operators.xid]) {
          const body = assertError(await viewer.get(`${DP}/${xid}`), 403, 4004, 'ACCESS_DENIED');
          assert.equal(body.message, 'Access denied');
        }
        assertError(await operator.get(`${DP}/${adminOnly.xid}`), 403, 4004);
        assert.deepEqual((await viewer.get(`${DP}/${open.xid}`)).body, open);
        assert.deepEqual((await operator.get(`${DP}/${operators.xid}`)).body, operators);
      });

      it('refuses update and delete without edit permission and changes nothing', async () => {
        for (const client of [viewer, operator]) {
          assertError(await client.put(`${DP}/${open.xid}`, { ...open, name: 'hijacked' }), 403, 4004);
          assertError(await client.delete(`${DP}/${open.xid}`), 403, 4004);
        }
        assertError(await viewer.put(`${DP}/${operators.xid}`, { ...operators, name: 'hijacked' }), 403, 4004);
        assertError(await viewer.delete(`${DP}/${operators.xid}`), 403, 4004);
        assertError(await viewer.put(`${DP}/${viaSource.xid}`, { ...viaSource, name: 'hijacked' }), 403, 4004);
        assertError(await viewer.delete(`${DP}/${viaSource.xid}`), 403, 4004);
        assert.deepEqual((await admin.get(`${DP}/${open.xid}`)).body, open);
        assert.deepEqual((await admin.get(`${DP}/${operators.xid}`)).body, operators);
        assert.deepEqual((await admin.get(`${DP}/${viaSource.xid}`)).body, viaSource);
      });

      it('allows update and delete with the point\'s edit permission', async () => {
        const p = await create({ xid: unique('perm-edit-'), name: 'ops point', dataSourceXid: VIRTUAL, pointLocator: { dataType: 'NUMERIC' }, editPermission: ['operators'] });
        const updated = await operator.put<PointBody>(`${DP}/${p.xid}`, { ...p, name: 'ops edited' });
        assert.equal(updated.status, 200, updated.text);
        assert.equal(updated.body.name, 'ops edited');
        const deleted = await operator.delete<PointBody>(`${DP}/${p.xid}`);
        assert.equal(deleted.status, 200, deleted.text);
        assertError(await admin.get(`${DP}/${p.xid}`), 404, -1);
      });

      it('allows update and delete with the source\'s edit permission', async () => {
        const p = await create({ xid: unique('perm-src-edit-'), name: 'via source', dataSourceXid: OPS_SOURCE, pointLocator: { dataType: 'NUMERIC' } });
        assert.deepEqual(p.editPermission, []);
        const updated = await operator.put<PointBody>(`${DP}/${p.xid}`, { ...p, name: 'edited via source' });
        assert.equal(updated.status, 200, updated.text);
        assert.equal(updated.body.name, 'edited via source');
        const deleted = await operator.delete<PointBody>(`${DP}/${p.xid}`);
        assert.equal(deleted.status, 200, deleted.text);
        assertError(await admin.get(`${DP}/${p.xid}`), 404, -1);
      });
    });
  });
}
