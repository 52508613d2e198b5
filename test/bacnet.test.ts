// BACNET_IP end to end over HTTP against a simulated BACnet/IP device on 127.0.0.1 (scripts/bacnet-device.ts,
// answered by @bacnet-js/client): polled values (ReadPropertyMultiple, and ReadProperty when the
// device refuses it), COV notifications, a write at a priority answered with the read-back, a
// device that stops answering, discovery, and refused fields. Every source and device gets its own
// free UDP ports, so the tests never share a socket.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BacnetDevice, exampleDevice, OBJECT } from '../scripts/bacnet-device.js';
import { bacnetDriverFactory } from '../src/runtime/bacnet.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { pointRecord, sourceRecord } from './helpers/records.js';
import { recordingContext } from './helpers/recording-context.js';
import { eventually, freeUdpPort } from './helpers/wait.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PV = '/rest/latest/point-values';

interface RawValue {
  timestamp: number;
  value: number | boolean | string | null;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;

describe('BACNET_IP data sources against a simulated device', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;
  const devices: BacnetDevice[] = [];

  before(async () => {
    app = await startTestApp('pglite');
    admin = await loggedIn(app.url, 'admin', 'admin');
  });

  after(async () => {
    for (const d of devices) d.stop();
    await app?.stop();
  });

  async function startDevice(): Promise<BacnetDevice> {
    const device = exampleDevice(await freeUdpPort(), 1000 + counter++);
    await device.start();
    devices.push(device);
    return device;
  }

  async function create(path: string, body: Record<string, unknown>): Promise<string> {
    const res = await admin.post<{ xid: string }>(path, body);
    assert.equal(res.status, 201, res.text);
    return res.body.xid;
  }

  async function bacnetSource(device: BacnetDevice, settings: Record<string, unknown> = {}): Promise<string> {
    return create(DS, {
      xid: unique('bacnet-'),
      name: 'AHU 1',
      modelType: 'BACNET_IP',
      enabled: true,
      updatePeriods: 100,
      updatePeriodType: 'MILLISECONDS',
      localPort: await freeUdpPort(),
      broadcastAddress: `127.0.0.1:${device.port}`,
      deviceInstance: device.deviceInstance,
      address: `127.0.0.1:${device.port}`,
      timeoutMs: 500,
      ...settings,
    });
  }

  function bacnetPoint(source: string, locator: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
    return create(DP, { xid: unique('bacnet-p-'), name: 'point', dataSourceXid: source, pointLocator: locator, ...extra });
  }

  async function latestValue(xid: string): Promise<RawValue | undefined> {
    const res = await admin.get<RawValue[]>(`${PV}/latest/${xid}`);
    assert.equal(res.status, 200, res.text);
    return res.body[0];
  }

  const valueIs = (xid: string, expected: unknown) => async () => ((await latestValue(xid))?.value === expected ? true : undefined);

  async function pointView(xid: string): Promise<{ unreliable: boolean; unreliableReason: string | null }> {
    const res = await admin.get<{ unreliable: boolean; unreliableReason: string | null }>(`${DP}/${xid}`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  it('polls analog, binary and multi-state present values with ReadPropertyMultiple into the points', async () => {
    const device = await startDevice();
    const source = await bacnetSource(device);
    const av = await bacnetPoint(source, { dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 1 });
    const bv = await bacnetPoint(source, { dataType: 'BINARY', objectType: 'BINARY_VALUE', objectInstance: 1 });
    const msv = await bacnetPoint(source, { dataType: 'MULTISTATE', objectType: 'MULTI_STATE_VALUE', objectInstance: 1 });
    const ai = await bacnetPoint(source, { dataType: 'NUMERIC', objectType: 'ANALOG_INPUT', objectInstance: 1 });
    await eventually('21.5 from AV 1', valueIs(av, 21.5));
    await eventually('true from BV 1', valueIs(bv, true));
    await eventually('2 from MSV 1', valueIs(msv, 2));
    await eventually('8.25 from AI 1', valueIs(ai, 8.25));
    device.set(OBJECT.AV, 1, 23.75);
    await eventually('a changed value polled', valueIs(av, 23.75));
    assert.ok(device.counts.rpm > 0 && device.counts.rp === 0, JSON.stringify(device.counts));
    assert.equal((await pointView(av)).unreliable, false);
  });

  it('falls back to ReadProperty when the device refuses ReadPropertyMultiple', async () => {
    const device = await startDevice();
    device.refuseRpm = true;
    const source = await bacnetSource(device);
    const av = await bacnetPoint(source, { dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 1 });
    await eventually('21.5 by ReadProperty', valueIs(av, 21.5));
    assert.ok(device.counts.rp > 0 && device.counts.rpm === 0, JSON.stringify(device.counts));
    const ds = await admin.get<{ state: string }>(`${DS}/${source}`);
    assert.equal(ds.body.state, 'RUNNING');
  });

  it('finds the device by Who-Is when no address is given, and marks an unknown object unreliable', async () => {
    const device = await startDevice();
    const source = await bacnetSource(device, { address: '' });
    const av = await bacnetPoint(source, { dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 1 });
    const missing = await bacnetPoint(source, { dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 99 });
    await eventually('21.5 after Who-Is', valueIs(av, 21.5));
    assert.ok(device.counts.whoIs > 0);
    const view = await eventually('the unknown object unreliable', async () => {
      const v = await pointView(missing);
      return v.unreliable && v.unreliableReason?.includes('ANALOG_VALUE 99') ? v : undefined;
    });
    assert.match(view.unreliableReason!, /error class 1, code 31/);
  });

  it('stores values from COV notifications, without polling the subscribed objects', async () => {
    const device = await startDevice();
    // A long period: values that come sooner come by notification.
    const source = await bacnetSource(device, { covSubscribe: true, updatePeriods: 30, updatePeriodType: 'SECONDS' });
    const av = await bacnetPoint(source, { dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 1 });
    await eventually('a subscription', async () => (device.subscriptions.length > 0 ? true : undefined));
    await eventually('the initial notification stored', valueIs(av, 21.5));
    for (const value of [22, 22.5, 23]) {
      device.set(OBJECT.AV, 1, value);
      await eventually(`${value} by COV`, valueIs(av, value), 5_000);
    }
    assert.equal(device.counts.rp, 0);
  });

  it('writes a set value with WriteProperty at the point\'s priority, and stores what the device then holds', async () => {
    const device = await startDevice();
    const source = await bacnetSource(device);
    const ao = await bacnetPoint(source, { dataType: 'NUMERIC', objectType: 'ANALOG_OUTPUT', objectInstance: 1, settable: true, writePriority: 8 });
    await eventually('40 from AO 1', valueIs(ao, 40));
    const res = await admin.put<{ value: number }>(`${PV}/${ao}`, { dataType: 'NUMERIC', value: 55.5 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.value, 55.5);
    const damper = device.objects.get(`${OBJECT.AO}:1`)!;
    assert.equal(damper.priorities![7], 55.5, 'written at priority 8');
    // An operator's override at priority 2 wins over ours: the write is answered with what the device holds.
    damper.priorities![1] = 10;
    const overridden = await admin.put<{ value: number }>(`${PV}/${ao}`, { dataType: 'NUMERIC', value: 70 });
    assert.equal(overridden.status, 200, overridden.text);
    assert.equal(overridden.body.value, 10);
    assert.equal(damper.priorities![7], 70);
    assert.equal((await latestValue(ao))?.value, 10);
  });

  it('marks the points unreliable and faults the source while the device does not answer, then reads again', async () => {
    const device = await startDevice();
    const source = await bacnetSource(device);
    const av = await bacnetPoint(source, { dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 1 });
    await eventually('21.5 from AV 1', valueIs(av, 21.5));
    device.silent = true;
    const view = await eventually('the point unreliable', async () => {
      const v = await pointView(av);
      return v.unreliable ? v : undefined;
    });
    assert.match(view.unreliableReason!, /^BACnet device \d+: no answer within 500 ms$/);
    const faulted = await eventually('the source in ERROR', async () => {
      const ds = await admin.get<{ state: string; lastError: string }>(`${DS}/${source}`);
      return ds.body.state === 'ERROR' ? ds.body : undefined;
    });
    assert.match(faulted.lastError, /no answer within 500 ms/);
    device.set(OBJECT.AV, 1, 19);
    device.silent = false;
    await eventually('19 once the device answers again', valueIs(av, 19));
    assert.equal((await pointView(av)).unreliable, false);
    await eventually('the source RUNNING again', async () => ((await admin.get<{ state: string }>(`${DS}/${source}`)).body.state === 'RUNNING' ? true : undefined));
  });

  it('discovers the device and its objects by Who-Is', async () => {
    const device = await startDevice();
    const source = await bacnetSource(device, { enabled: false, address: '' });
    const res = await admin.get<{ devices: { deviceInstance: number; address: string; name: string; objects: { objectType: string; objectInstance: number; name: string }[] }[] }>(
      `${DS}/${source}/discover?waitMs=500`,
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.devices.length, 1);
    const [found] = res.body.devices;
    assert.equal(found!.deviceInstance, device.deviceInstance);
    assert.equal(found!.address, `127.0.0.1:${device.port}`);
    assert.equal(found!.name, `Simulated device ${device.deviceInstance}`);
    assert.deepEqual(
      found!.objects.map((o) => `${o.objectType} ${o.objectInstance} ${o.name}`),
      ['ANALOG_VALUE 1 Zone temperature', 'ANALOG_OUTPUT 1 Damper', 'BINARY_VALUE 1 Fan', 'BINARY_INPUT 1 Filter alarm', 'MULTI_STATE_VALUE 1 Mode', 'ANALOG_INPUT 1 Outside air'],
    );
    // Discovery shares the local port with the running source.
    const running = await bacnetSource(device);
    const again = await admin.get<{ devices: unknown[] }>(`${DS}/${running}/discover?waitMs=300`);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.devices.length, 1);
    assertError(await admin.get(`${DS}/${running}/discover?waitMs=5`), 400, 4005);
  });

  it('refuses discovery on another source type', async () => {
    const virtual = await create(DS, { name: 'v', modelType: 'VIRTUAL' });
    assertError(await admin.get(`${DS}/${virtual}/discover`), 400, 4005);
  });

  it('refuses bad source and point fields with 422', async () => {
    const device = await startDevice();
    const noInstance = await admin.post(DS, { name: 'x', modelType: 'BACNET_IP' });
    assertHasMessage(assertValidation(noInstance), 'deviceInstance', /required/);
    const bad = await admin.post(DS, { name: 'x', modelType: 'BACNET_IP', deviceInstance: 4194304, localPort: 70000, address: 'not an address!', covSubscribe: 'yes' });
    const messages = assertValidation(bad);
    for (const field of ['deviceInstance', 'localPort', 'address', 'covSubscribe']) assert.ok(messages.some((m) => m.property === field), `${field}: ${JSON.stringify(messages)}`);
    const source = await bacnetSource(device, { enabled: false });
    const point = (locator: Record<string, unknown>) => admin.post(DP, { name: 'p', dataSourceXid: source, pointLocator: locator });
    assertHasMessage(assertValidation(await point({ dataType: 'NUMERIC', objectType: 'CALENDAR', objectInstance: 1 })), 'pointLocator.objectType', /must be one of/);
    assertHasMessage(assertValidation(await point({ dataType: 'NUMERIC', objectType: 'ANALOG_VALUE' })), 'pointLocator.objectInstance', /required/);
    assertHasMessage(assertValidation(await point({ dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 1, writePriority: 17 })), 'pointLocator.writePriority', /16/);
    assertHasMessage(assertValidation(await point({ dataType: 'NUMERIC', objectType: 'ANALOG_VALUE', objectInstance: 1, property: 'UNITS' })), 'pointLocator.property', /must be one of/);
    assertHasMessage(assertValidation(await point({ dataType: 'BINARY', objectType: 'ANALOG_VALUE', objectInstance: 1 })), 'pointLocator.dataType', /NUMERIC for analog objects/);
    assertHasMessage(assertValidation(await point({ dataType: 'NUMERIC', objectType: 'ANALOG_INPUT', objectInstance: 1, settable: true })), 'pointLocator.settable', /read-only/);
  });
});

// The driver alone, with a recording context: what the runtime would get.
describe('BACNET_IP driver: COV renewal and refusals', function () {
  this.timeout(30_000);
  const devices: BacnetDevice[] = [];
  after(() => devices.forEach((d) => d.stop()));

  function point(id: number, locator: Record<string, unknown>, settable = false): DataPointRecord {
    return pointRecord({ id, xid: `p${id}`, name: `p${id}`, deviceName: 'd', dataSourceName: 'd', dataSourceType: 'BACNET_IP', settable, pointLocator: { property: 'PRESENT_VALUE', writePriority: 16, ...locator } });
  }

  async function run(device: BacnetDevice, points: DataPointRecord[], settings: Record<string, unknown>, periodMs: number) {
    const source = sourceRecord({
      name: 'd',
      modelType: 'BACNET_IP',
      updatePeriods: periodMs,
      updatePeriodType: 'MILLISECONDS',
      settings: { localPort: await freeUdpPort(), deviceInstance: device.deviceInstance, address: `127.0.0.1:${device.port}`, timeoutMs: 500, ...settings },
    });
    const { ctx, values, abort } = recordingContext(source, points, periodMs);
    const driver = bacnetDriverFactory({ covLifetimeS: 2 })(ctx);
    await driver.start();
    return { driver, values, stop: async () => (await driver.stop(), abort()) };
  }

  it('renews its COV subscription at half the lifetime, and cancels it when stopped', async () => {
    const device = exampleDevice(await freeUdpPort(), 77);
    await device.start();
    devices.push(device);
    const r = await run(device, [point(1, { objectType: 'ANALOG_VALUE', objectInstance: 1 })], { covSubscribe: true }, 300);
    await eventually('a renewal', async () => (device.counts.cov >= 2 ? true : undefined), 5_000);
    device.set(OBJECT.AV, 1, 30.5);
    await eventually('the notification after renewal', async () => (r.values.some((v) => v.value === 30.5) ? true : undefined), 3_000);
    await r.stop();
    assert.equal(device.subscriptions.length, 0, 'cancelled at stop');
  });

  it('renews its COV subscription between polls when the period is longer than half the lifetime', async () => {
    const device = exampleDevice(await freeUdpPort(), 80);
    await device.start();
    devices.push(device);
    // A 60 s period and a 2 s lifetime: renewed every second, while the device is polled once.
    const r = await run(device, [point(1, { objectType: 'ANALOG_VALUE', objectInstance: 1 })], { covSubscribe: true }, 60_000);
    await eventually('three subscriptions', async () => (device.counts.cov >= 3 ? true : undefined), 6_000);
    assert.equal(device.counts.rpm, 1, JSON.stringify(device.counts));
    device.set(OBJECT.AV, 1, 31.25);
    await eventually('a notification on the renewed subscription', async () => (r.values.some((v) => v.value === 31.25) ? true : undefined), 3_000);
    await r.stop();
    assert.equal(device.subscriptions.length, 0, 'cancelled at stop');
  });

  it('polls the objects whose COV subscription the device refuses, without stalling the event loop', async function () {
    // In a child process, killed after 25 s: a blocked event loop fails this test instead of freezing mocha.
    this.timeout(40_000);
    const script = fileURLToPath(new URL('./helpers/bacnet-cov-refused.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { timeout: 25_000, killSignal: 'SIGKILL' }).catch((err: unknown) => {
      throw new Error(`the scenario did not finish: ${String(err)}`);
    });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { error: string | null; counts: BacnetDevice['counts']; subscriptions: number; faults: string[]; maxLagMs: number };
    assert.equal(result.error, null, stdout);
    assert.ok(result.counts.rpm >= 3 && result.counts.cov === 0 && result.counts.covRefused >= 4, stdout);
    assert.equal(result.subscriptions, 0);
    assert.deepEqual(result.faults, [], 'a refused subscription is no fault');
    assert.ok(result.maxLagMs < 1_000, `event loop stalled ${result.maxLagMs} ms`);
  });

  it('refuses a value the object cannot take before sending, and reports a write the device refuses', async () => {
    const device = exampleDevice(await freeUdpPort(), 79);
    await device.start();
    devices.push(device);
    const bv = point(1, { objectType: 'BINARY_VALUE', objectInstance: 1 }, true);
    const msv = point(2, { objectType: 'MULTI_STATE_VALUE', objectInstance: 1 }, true);
    const missing = point(3, { objectType: 'ANALOG_VALUE', objectInstance: 42 }, true);
    const r = await run(device, [bv, msv, missing], {}, 1_000);
    await assert.rejects(r.driver.write!(bv, 2), RangeError);
    await assert.rejects(r.driver.write!(msv, 0), RangeError);
    assert.equal(device.counts.wp, 0, 'nothing sent');
    assert.equal(await r.driver.write!(msv, 3), 3);
    await assert.rejects(r.driver.write!(missing, 1), /BACnet device 79: error class 1, code 31 writing ANALOG_VALUE 42/);
    await r.stop();
  });
});
