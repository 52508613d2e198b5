// The OPC_UA data source end to end over HTTP against a real node-opcua server the test starts on
// 127.0.0.1 (test/helpers/opcua-server.ts): values by subscription into the store, a write to a
// writable node answered with what the server holds, a read-only node and an array node refused,
// browse, security None and SignAndEncrypt with user name and password (the service's own
// certificate created under DATA_DIR), a server stopped and started again (unreliable, then values),
// and bad source and locator fields refused with 422.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { createUser, loggedIn, type ApiClient } from './helpers/client.js';
import { valueFor } from '../src/runtime/opcua.js';
import { OpcuaTestServer, PASSWORD, USER } from './helpers/opcua-server.js';
import { eventually, freePort } from './helpers/wait.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PV = '/rest/latest/point-values';

interface RawValue {
  timestamp: number;
  value: number | boolean | string | null;
}
interface PointView {
  unreliable: boolean;
  unreliableReason: string | null;
  lastWarning: string | null;
}
interface BrowsedNode {
  nodeId: string;
  browseName: string;
  nodeClass: string;
  dataType: string | null;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;

describe('OPC_UA data source', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;
  let server: OpcuaTestServer;

  before(async () => {
    server = new OpcuaTestServer(await freePort());
    await server.start();
    app = await startTestApp('pglite');
    admin = await loggedIn(app.url, 'admin', 'admin');
  });

  after(async () => {
    await app?.stop();
    await server?.dispose();
  });

  async function create(path: string, body: Record<string, unknown>): Promise<string> {
    const res = await admin.post<{ xid: string }>(path, body);
    assert.equal(res.status, 201, res.text);
    return res.body.xid;
  }

  async function latestValue(xid: string): Promise<RawValue | undefined> {
    const res = await admin.get<RawValue[]>(`${PV}/latest/${xid}`);
    assert.equal(res.status, 200, res.text);
    return res.body[0];
  }

  async function pointView(xid: string): Promise<PointView> {
    const res = await admin.get<PointView>(`${DP}/${xid}`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  function source(extra: Record<string, unknown> = {}): Promise<string> {
    return create(DS, {
      xid: unique('ua-'),
      name: 'OPC UA server',
      modelType: 'OPC_UA',
      enabled: true,
      endpointUrl: server.endpointUrl,
      publishingIntervalMs: 50,
      ...extra,
    });
  }

  function point(sourceXid: string, nodeId: string, dataType: string, settable = false): Promise<string> {
    return create(DP, { xid: unique('uap-'), name: nodeId, dataSourceXid: sourceXid, pointLocator: { dataType, settable, nodeId, samplingIntervalMs: 20 } });
  }

  describe('security None, anonymous', () => {
    let sourceXid: string;
    let temperature: string;
    let setpoint: string;
    let serial: string;
    let count: string;
    let running: string;
    let label: string;
    let samples: string;
    let missing: string;

    before(async () => {
      sourceXid = await source();
      temperature = await point(sourceXid, 'ns=1;s=Temperature', 'NUMERIC');
      setpoint = await point(sourceXid, 'ns=1;s=Setpoint', 'NUMERIC', true);
      serial = await point(sourceXid, 'ns=1;s=Serial', 'ALPHANUMERIC', true);
      count = await point(sourceXid, 'ns=1;s=Count', 'MULTISTATE', true);
      running = await point(sourceXid, 'ns=1;s=Running', 'BINARY', true);
      label = await point(sourceXid, 'ns=1;s=Label', 'ALPHANUMERIC');
      samples = await point(sourceXid, 'ns=1;s=Samples', 'NUMERIC');
      missing = await point(sourceXid, 'ns=1;s=Missing', 'NUMERIC');
    });

    it('stores the changing values the subscription delivers', async () => {
      const first = await eventually('a temperature', () => latestValue(temperature));
      const later = await eventually('a newer temperature', async () => {
        const v = await latestValue(temperature);
        return v && v.timestamp > first.timestamp && v.value !== first.value ? v : undefined;
      });
      assert.equal(typeof later.value, 'number');
      const from = first.timestamp;
      const res = await admin.get<RawValue[]>(`${PV}/single/${temperature}?from=${from}&to=${Date.now() + 60_000}`);
      assert.ok(res.body.length >= 2, res.text);
      assert.equal((await pointView(temperature)).unreliable, false);
    });

    it('maps Int32 to MULTISTATE, Boolean to BINARY and String to ALPHANUMERIC', async () => {
      await eventually('count 7', async () => ((await latestValue(count))?.value === 7 ? true : undefined));
      await eventually('running false', async () => ((await latestValue(running))?.value === false ? true : undefined));
      await eventually('label hello', async () => ((await latestValue(label))?.value === 'hello' ? true : undefined));
    });

    it('refuses an array node with a warning, and leaves the point unreliable', async () => {
      const view = await eventually('a warning on the array point', async () => {
        const v = await pointView(samples);
        return v.lastWarning ? v : undefined;
      });
      assert.match(view.lastWarning ?? '', /array of Double: arrays are not supported/);
      assert.equal(view.unreliable, true);
      assert.equal(await latestValue(samples), undefined);
    });

    it('warns on a point whose node the server does not have, and leaves it unreliable; the source stays RUNNING', async () => {
      const view = await eventually('a warning on the missing node', async () => {
        const v = await pointView(missing);
        return v.lastWarning ? v : undefined;
      });
      assert.match(view.lastWarning ?? '', /node 'ns=1;s=Missing': BadNodeIdUnknown/);
      assert.equal(view.unreliable, true);
      const ds = await admin.get<{ state: string }>(`${DS}/${sourceXid}`);
      assert.equal(ds.body.state, 'RUNNING');
    });

    it('writes a settable point to its node and stores what the server then holds', async () => {
      await eventually('the setpoint', () => latestValue(setpoint));
      const res = await admin.put(`${PV}/${setpoint}`, { dataType: 'NUMERIC', value: 42.5 });
      assert.equal(res.status, 200, res.text);
      assert.equal(server.setpoint, 42.5);
      assert.equal((await latestValue(setpoint))?.value, 42.5);
      const on = await admin.put(`${PV}/${running}`, { dataType: 'BINARY', value: true });
      assert.equal(on.status, 200, on.text);
      assert.equal(server.running, true);
    });

    it('answers a write with what the node then holds: 0.1 into a Float node is its 32-bit float', async () => {
      const ratio = await point(sourceXid, 'ns=1;s=Ratio', 'NUMERIC', true);
      await eventually('the ratio', () => latestValue(ratio));
      const res = await admin.put<{ value: number }>(`${PV}/${ratio}`, { dataType: 'NUMERIC', value: 0.1 });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.value, Math.fround(0.1));
      assert.notEqual(res.body.value, 0.1);
      assert.equal((await latestValue(ratio))?.value, Math.fround(0.1));
    });

    it('refuses a value the node cannot take (out of the Int32 range) with 422, writing nothing', async () => {
      const res = await admin.put(`${PV}/${count}`, { dataType: 'MULTISTATE', value: 70000000000 });
      assertError(res, 422, 4002);
      assert.equal(server.count, 7);
    });

    it('refuses a write to a read-only node with 422', async () => {
      await eventually('the serial', () => latestValue(serial));
      const res = await admin.put(`${PV}/${serial}`, { dataType: 'ALPHANUMERIC', value: 'SN-9' });
      const body = assertError(res, 422, 4002);
      assert.match(body.message, /BadNotWritable|read-only/);
    });

    it('browses the Objects folder and an object\'s variables with their data types', async () => {
      const top = await admin.get<BrowsedNode[]>(`${DS}/${sourceXid}/browse`);
      assert.equal(top.status, 200, top.text);
      const plant = top.body.find((n) => n.browseName === '1:Plant');
      assert.deepEqual(plant, { nodeId: 'ns=1;s=Plant', browseName: '1:Plant', nodeClass: 'Object', dataType: null });
      const children = await admin.get<BrowsedNode[]>(`${DS}/${sourceXid}/browse?nodeId=${encodeURIComponent('ns=1;s=Plant')}`);
      assert.equal(children.status, 200, children.text);
      const byName = new Map(children.body.map((n) => [n.browseName, n]));
      assert.deepEqual(byName.get('1:Temperature'), { nodeId: 'ns=1;s=Temperature', browseName: '1:Temperature', nodeClass: 'Variable', dataType: 'Double' });
      assert.equal(byName.get('1:Count')?.dataType, 'Int32');
      assert.equal(byName.get('1:Running')?.dataType, 'Boolean');
      assert.equal(byName.get('1:Label')?.dataType, 'String');
    });

    it('answers a browse of a bad node id with 400, of an unknown node with 404, of another source type with 400', async () => {
      assertError(await admin.get(`${DS}/${sourceXid}/browse?nodeId=nonsense`), 400, 4005);
      assertError(await admin.get(`${DS}/${sourceXid}/browse?nodeId=${encodeURIComponent('ns=1;s=Nothing')}`), 404, -1);
      const virtual = await create(DS, { xid: unique('v-'), name: 'virtual', modelType: 'VIRTUAL' });
      assertError(await admin.get(`${DS}/${virtual}/browse`), 400, 4005);
      assertError(await admin.get(`${DS}/nope/browse`), 404, -1);
    });

    it('browses with read permission on the source: 403 without it', async () => {
      const name = unique('viewer');
      await createUser(admin, name, 'viewer-password-1');
      const viewer = await loggedIn(app.url, name, 'viewer-password-1');
      const restricted = await source({ enabled: false, readPermission: [], editPermission: [] });
      assertError(await viewer.get(`${DS}/${restricted}/browse`), 403, 4004);
      const shared = await source({ enabled: false, readPermission: ['user'] });
      const res = await viewer.get<BrowsedNode[]>(`${DS}/${shared}/browse?nodeId=${encodeURIComponent('ns=1;s=Plant')}`);
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.some((n) => n.nodeId === 'ns=1;s=Setpoint'));
    });

    it('marks the points unreliable while the server is stopped, and stores values again once it is back', async () => {
      await eventually('a temperature', () => latestValue(temperature));
      await server.stop();
      const down = await eventually('temperature unreliable', async () => {
        const v = await pointView(temperature);
        return v.unreliable ? v : undefined;
      });
      assert.match(down.unreliableReason ?? '', /OPC UA/);
      const stoppedAt = Date.now();
      await server.start();
      await eventually('temperature reliable again', async () => ((await pointView(temperature)).unreliable ? undefined : true), 20_000);
      const v = await eventually('a value after the restart', async () => {
        const latest = await latestValue(temperature);
        return latest && latest.timestamp > stoppedAt ? latest : undefined;
      });
      assert.equal(typeof v.value, 'number');
    });
  });

  describe('security SignAndEncrypt with user name and password', () => {
    it('connects with the service\'s own certificate (created under DATA_DIR) and reads values', async () => {
      const xid = await source({ securityMode: 'SignAndEncrypt', securityPolicy: 'Basic256Sha256', username: USER, password: PASSWORD });
      const view = await admin.get<Record<string, unknown>>(`${DS}/${xid}`);
      assert.equal(view.body.password, undefined, 'the password is write-only');
      assert.equal(view.body.securityMode, 'SignAndEncrypt');
      const p = await point(xid, 'ns=1;s=Temperature', 'NUMERIC');
      await eventually('an encrypted temperature', () => latestValue(p), 20_000);
      const pki = join(app.config.dataDir, 'opcua-pki');
      assert.ok(existsSync(join(pki, 'own', 'certs')), 'the PKI folder is under DATA_DIR');
      assert.ok(readdirSync(join(pki, 'own', 'certs')).some((f) => f.endsWith('.pem')), 'an application certificate was created');
      const browse = await admin.get<BrowsedNode[]>(`${DS}/${xid}/browse?nodeId=${encodeURIComponent('ns=1;s=Plant')}`);
      assert.equal(browse.status, 200, browse.text);
    });

    it('connects with security Sign (anonymous)', async () => {
      const xid = await source({ securityMode: 'Sign', securityPolicy: 'Basic256Sha256' });
      const p = await point(xid, 'ns=1;s=Count', 'MULTISTATE');
      await eventually('a signed count', () => latestValue(p), 20_000);
    });

    it('reports a refused password as the source\'s error', async () => {
      const xid = await source({ securityMode: 'SignAndEncrypt', securityPolicy: 'Basic256Sha256', username: USER, password: 'wrong' });
      const view = await eventually('the source in ERROR', async () => {
        const res = await admin.get<{ state: string; lastError: string | null }>(`${DS}/${xid}`);
        return res.body.state === 'ERROR' ? res.body : undefined;
      });
      assert.match(view.lastError ?? '', /OPC UA .*user name or password refused/);
      assertError(await admin.get(`${DS}/${xid}/browse`), 502, 5000);
    });
  });

  describe('type mapping', () => {
    it('reads OPC UA values into the point types, and refuses structures and arrays', async () => {
      const ua = await import('node-opcua');
      const v = (dataType: number, value: unknown, arrayType = ua.VariantArrayType.Scalar) => new ua.Variant({ dataType, value, arrayType });
      assert.deepEqual(valueFor(ua, v(ua.DataType.Int64, ua.coerceInt64(-5)), 'NUMERIC'), { value: -5 });
      assert.deepEqual(valueFor(ua, v(ua.DataType.UInt64, ua.coerceUInt64(2 ** 40)), 'MULTISTATE'), { value: 2 ** 40 });
      assert.deepEqual(valueFor(ua, v(ua.DataType.Float, 1.5), 'NUMERIC'), { value: 1.5 });
      assert.deepEqual(valueFor(ua, v(ua.DataType.UInt16, 3), 'MULTISTATE'), { value: 3 });
      assert.deepEqual(valueFor(ua, v(ua.DataType.Byte, 1), 'BINARY'), { value: true });
      assert.deepEqual(valueFor(ua, v(ua.DataType.Boolean, true), 'NUMERIC'), { value: 1 });
      assert.deepEqual(valueFor(ua, v(ua.DataType.Double, 2.5), 'ALPHANUMERIC'), { value: '2.5' });
      assert.deepEqual(valueFor(ua, v(ua.DataType.LocalizedText, new ua.LocalizedText({ text: 'on', locale: 'en' })), 'ALPHANUMERIC'), { value: 'on' });
      assert.match(String((valueFor(ua, v(ua.DataType.Double, 2.5), 'MULTISTATE') as { error: string }).error), /MULTISTATE point takes integers/);
      assert.match(String((valueFor(ua, v(ua.DataType.String, 'x'), 'NUMERIC') as { error: string }).error), /NUMERIC point takes numbers/);
      assert.match(String((valueFor(ua, v(ua.DataType.ExtensionObject, null), 'NUMERIC') as { error: string }).error), /ExtensionObject.*no structures/);
      assert.match(String((valueFor(ua, v(ua.DataType.Int32, [1, 2], ua.VariantArrayType.Array), 'NUMERIC') as { error: string }).error), /array of Int32/);
    });
  });

  describe('validation', () => {
    it('refuses bad source fields with 422', async () => {
      const base = { name: 'bad', modelType: 'OPC_UA' };
      assertHasMessage(assertValidation(await admin.post(DS, base)), 'endpointUrl', /required/);
      assertHasMessage(assertValidation(await admin.post(DS, { ...base, endpointUrl: 'http://x' })), 'endpointUrl', 'must be an OPC UA endpoint URL such as opc.tcp://host:4840');
      assertHasMessage(assertValidation(await admin.post(DS, { ...base, endpointUrl: server.endpointUrl, securityMode: 'Encrypt' })), 'securityMode', /must be one of: None, Sign, SignAndEncrypt/);
      assertHasMessage(
        assertValidation(await admin.post(DS, { ...base, endpointUrl: server.endpointUrl, securityMode: 'Sign', securityPolicy: 'None' })),
        'securityPolicy',
        /must be one of: Basic128Rsa15/,
      );
      assertHasMessage(assertValidation(await admin.post(DS, { ...base, endpointUrl: server.endpointUrl, publishingIntervalMs: 0 })), 'publishingIntervalMs', /must be between/);
    });

    it('refuses bad point locators with 422', async () => {
      const ds = await source({ enabled: false });
      const bad = (pointLocator: Record<string, unknown>) => admin.post(DP, { name: 'bad', dataSourceXid: ds, pointLocator });
      assertHasMessage(assertValidation(await bad({ dataType: 'NUMERIC' })), 'pointLocator.nodeId', /required/);
      assertHasMessage(assertValidation(await bad({ dataType: 'NUMERIC', nodeId: 'Tag1' })), 'pointLocator.nodeId', 'must be a node id such as ns=2;s=Tag1');
      assertHasMessage(assertValidation(await bad({ dataType: 'NUMERIC', nodeId: 'ns=1;s=A', samplingIntervalMs: -1 })), 'pointLocator.samplingIntervalMs', /must be between/);
    });
  });
});
