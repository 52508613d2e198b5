// Data sources that talk to real devices, end to end over HTTP: a Modbus TCP device started by the
// test and the Mosquitto broker on 127.0.0.1:1883. Values arrive through the pipeline; a set writes
// the device first (stored only when the device accepted it: 502 otherwise, 422 for a value the
// register cannot hold); a device that goes away puts the source in ERROR with lastError and it
// recovers when the device is back.
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError } from './helpers/assertions.js';
import { createUser, loggedIn, type ApiClient } from './helpers/client.js';
import { Device } from './helpers/modbus-device.js';
import { eventually, freePort } from './helpers/wait.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PV = '/rest/latest/point-values';
const BROKER = 'mqtt://127.0.0.1:1883';

interface RawValue {
  timestamp: number;
  value: number | boolean | string | null;
}

interface EventView {
  active: boolean;
  alarmLevel: string;
  rtnCause: string | null;
  eventType: { eventType: string };
}

interface SourceView {
  state: string;
  lastError: string | null;
  lastErrorTimestamp: number | null;
  lastErrorCleared: boolean;
}

interface PointView {
  lastWarning: string | null;
  lastWarningTimestamp: number | null;
  lastWarningCleared: boolean;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;


describe('data source runtime: devices over HTTP', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;

  before(async () => {
    app = await startTestApp('pglite');
    admin = await loggedIn(app.url, 'admin', 'admin');
  });

  after(async () => {
    await app?.stop();
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

  async function storedValues(xid: string, from: number): Promise<RawValue[]> {
    const res = await admin.get<RawValue[]>(`${PV}/single/${xid}?from=${from}&to=${Date.now() + 60_000}`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  async function sourceEvents(xid: string): Promise<{ items: EventView[]; total: number }> {
    const res = await admin.get<{ items: EventView[]; total: number }>(`/rest/latest/events?eq(dataSourceXid,${xid})`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  function sourceState(xid: string, state: string): Promise<SourceView> {
    return eventually(`${xid} ${state}`, async () => {
      const res = await admin.get<SourceView>(`${DS}/${xid}`);
      return res.body.state === state ? res.body : undefined;
    });
  }

  describe('MODBUS_IP', () => {
    let device: Device;
    let source: string;
    let point: string;

    before(async () => {
      device = new Device(await freePort());
      device.setWords(0, [1234]);
      await device.start();
      source = await create(DS, {
        xid: unique('mb-'),
        name: 'PLC',
        modelType: 'MODBUS_IP',
        enabled: true,
        updatePeriods: 50,
        updatePeriodType: 'MILLISECONDS',
        host: '127.0.0.1',
        port: device.port,
        timeoutMs: 300,
        retries: 0,
      });
      point = await create(DP, {
        xid: unique('mbp-'),
        name: 'setpoint',
        dataSourceXid: source,
        pointLocator: { dataType: 'NUMERIC', settable: true, offset: 0, registerType: 'HOLDING', dataEncoding: 'UINT16', multiplier: 0.1 },
        setPermission: ['user'],
      });
    });

    after(async () => {
      await device?.stop();
    });

    it('polls the register into the point (raw × multiplier)', async () => {
      await eventually('123.4 from the device', async () => ((await latestValue(point))?.value === 123.4 ? true : undefined));
      assert.equal((await sourceState(source, 'RUNNING')).state, 'RUNNING');
    });

    it('stores polled values by the point\'s logging: ON_CHANGE keeps one of a steady register, ALL keeps every poll', async () => {
      device.setWords(1, [777]);
      const onChange = await create(DP, { xid: unique('mbp-'), name: 'steady', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', offset: 1, registerType: 'HOLDING' } });
      const all = await create(DP, {
        xid: unique('mbp-'),
        name: 'steady, all',
        dataSourceXid: source,
        pointLocator: { dataType: 'NUMERIC', offset: 1, registerType: 'HOLDING' },
        loggingProperties: { loggingType: 'ALL' },
      });
      const from = Date.now() - 1000;
      await eventually('five polls stored under ALL', async () => ((await storedValues(all, from)).length >= 5 ? true : undefined));
      const kept = await storedValues(onChange, from);
      assert.deepEqual(kept.map((v) => v.value), [777]);
      const newest = await latestValue(onChange);
      assert.ok(newest && newest.value === 777 && newest.timestamp > kept[0]!.timestamp, 'the latest poll is the latest value, though not stored');
    });

    it('writes a set value to the register before storing it', async () => {
      const res = await admin.put(`${PV}/${point}`, { dataType: 'NUMERIC', value: 50 });
      assert.equal(res.status, 200, res.text);
      assert.equal(device.holding.get(0), 500);
      assert.equal((await latestValue(point))?.value, 50);
    });

    it('stores and answers the value the register holds, not the one asked for (12.77 on a ×0.1 register is 12.8)', async () => {
      const res = await admin.put<{ value: number }>(`${PV}/${point}`, { dataType: 'NUMERIC', value: 12.77 });
      assert.equal(res.status, 200, res.text);
      assert.equal(device.holding.get(0), 128);
      assert.equal(res.body.value, 12.8);
      assert.equal((await latestValue(point))?.value, 12.8);
      const stored = await storedValues(point, Date.now() - 5_000);
      assert.ok(stored.some((v) => v.value === 12.8) && !stored.some((v) => v.value === 12.77), JSON.stringify(stored));
    });

    it('refuses a user with set but not read permission with 403 before the device is written (PUT and bulk); with read it sets', async () => {
      const xid = await create(DP, {
        xid: unique('mbp-'),
        name: 'hidden setpoint',
        dataSourceXid: source,
        pointLocator: { dataType: 'NUMERIC', settable: true, offset: 5, registerType: 'HOLDING' },
        readPermission: ['readers'],
        setPermission: ['setters'],
      });
      device.setWords(5, [7]);
      const name = unique('setter-');
      await createUser(admin, name, 'setter-password-1', { permissions: ['setters'] });
      const setter = await loggedIn(app.url, name, 'setter-password-1');
      const writes = device.requests.fc6 + device.requests.fc16;
      const put = await setter.put<{ message: string }>(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 42 });
      assertError(put, 403, 4004);
      assert.equal(put.body.message, 'Access denied: setting a value needs read and set permission');
      assert.ok(!put.text.includes('"value"'), 'nothing of the device answered');
      assertError(await setter.post(PV, [{ xid, value: 43, timestamp: Date.now() }]), 403, 4004);
      assertError(await setter.post(PV, [{ xid, value: 'x', timestamp: 'y' }]), 403, 4004);
      assert.equal(device.requests.fc6 + device.requests.fc16, writes, 'the device was not written');
      assert.equal(device.holding.get(5), 7);
      assert.ok(!(await storedValues(xid, 0)).some((v) => v.value === 42 || v.value === 43), 'nothing stored');

      const point = (await admin.get<Record<string, unknown>>(`${DP}/${xid}`)).body;
      assert.equal((await admin.put(`${DP}/${xid}`, { ...point, readPermission: ['readers', 'setters'] })).status, 200);
      const allowed = await setter.put<{ value: number }>(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 42 });
      assert.equal(allowed.status, 200, allowed.text);
      assert.equal(device.holding.get(5), 42);
    });

    it('answers 422 for a value the register cannot hold, and writes nothing', async () => {
      const before = device.requests.fc6;
      const res = await admin.put(`${PV}/${point}`, { dataType: 'NUMERIC', value: 1e6 });
      assertError(res, 422, 4002);
      assert.equal(device.requests.fc6, before);
    });

    it('answers 502 (5000) when the device refuses the write, and stores nothing', async () => {
      device.refuseWrites = true;
      const written = (await latestValue(point))!;
      try {
        const res = await admin.put(`${PV}/${point}`, { dataType: 'NUMERIC', value: 77, timestamp: Date.now() + 1000 });
        const body = assertError(res, 502, 5000);
        assert.match(body.localizedMessage ?? '', /Device write failed/);
        const now = await latestValue(point);
        assert.notEqual(now?.value, 77, 'the refused value was not stored');
      } finally {
        device.refuseWrites = false;
      }
      assert.ok(written);
    });

    it('goes to ERROR with lastError when the device stops, and back to RUNNING when it returns', async () => {
      const stopped = Date.now();
      await device.stop();
      const failed = await sourceState(source, 'ERROR');
      assert.match(failed.lastError ?? '', /Modbus 127\.0\.0\.1:\d+/);
      assert.ok(failed.lastErrorTimestamp !== null && failed.lastErrorTimestamp >= stopped && failed.lastErrorTimestamp <= Date.now(), `lastErrorTimestamp ${failed.lastErrorTimestamp}`);
      assert.equal(failed.lastErrorCleared, false);
      const raised = await eventually('one active DATA_SOURCE event', async () => {
        const list = await sourceEvents(source);
        return list.items.some((e) => e.active) ? list : undefined;
      });
      assert.equal(raised.total, 1, 'one event per fault episode, not one per failed poll');
      assert.equal(raised.items[0]!.eventType.eventType, 'DATA_SOURCE');
      assert.equal(raised.items[0]!.alarmLevel, 'URGENT');
      const set = await admin.put(`${PV}/${point}`, { dataType: 'NUMERIC', value: 1 });
      assertError(set, 502, 5000);
      device.setWords(0, [999]);
      await device.start();
      const recovered = await sourceState(source, 'RUNNING');
      assert.equal(recovered.lastErrorCleared, true, 'the error shows as cleared beside RUNNING');
      assert.match(recovered.lastError ?? '', /Modbus 127\.0\.0\.1:\d+/, 'its text is kept for diagnosis');
      assert.ok(recovered.lastErrorTimestamp !== null && recovered.lastErrorTimestamp >= failed.lastErrorTimestamp!);
      await eventually('99.9 after recovery', async () => ((await latestValue(point))?.value === 99.9 ? true : undefined));
      const after = await eventually('the event returned to normal', async () => {
        const list = await sourceEvents(source);
        return list.items.every((e) => !e.active) ? list : undefined;
      });
      assert.equal(after.total, 1);
      assert.equal(after.items[0]!.rtnCause, 'RETURN_TO_NORMAL');
    });
  });

  describe('MQTT_CLIENT', () => {
    let client: mqtt.MqttClient;

    before(async () => {
      client = await mqtt.connectAsync(BROKER, { clientId: unique('test-') });
    });

    after(async () => {
      await client?.endAsync();
    });

    it('stores what is published on the topic, and publishes a set value to it', async () => {
      const topic = `dds-test/${unique('t')}/temp`;
      const source = await create(DS, { xid: unique('mq-'), name: 'broker', modelType: 'MQTT_CLIENT', enabled: true, brokerUrl: BROKER });
      const point = await create(DP, {
        xid: unique('mqp-'),
        name: 'temp',
        dataSourceXid: source,
        pointLocator: { dataType: 'NUMERIC', settable: true, topic, jsonPath: '$.t' },
        setPermission: ['user'],
      });
      await sourceState(source, 'RUNNING');
      await eventually('21.5 from the broker', async () => {
        await client.publishAsync(topic, JSON.stringify({ t: 21.5 }));
        return (await latestValue(point))?.value === 21.5 ? true : undefined;
      });
      const seen: string[] = [];
      await client.subscribeAsync(topic);
      client.on('message', (t, payload) => {
        if (t === topic) seen.push(payload.toString());
      });
      const res = await admin.put(`${PV}/${point}`, { dataType: 'NUMERIC', value: 19 });
      assert.equal(res.status, 200, res.text);
      await eventually('the set value on the topic', async () => (seen.some((p) => JSON.parse(p).t === 19) ? true : undefined));
      assert.equal((await latestValue(point))?.value, 19);
    });

    it('makes an unreadable payload a warning on its point (counted in /metrics), not an ERROR of the source; a good value clears it', async () => {
      const topic = `dds-test/${unique('t')}/flow`;
      const source = await create(DS, { xid: unique('mq-'), name: 'broker', modelType: 'MQTT_CLIENT', enabled: true, brokerUrl: BROKER });
      const point = await create(DP, { xid: unique('mqp-'), name: 'flow', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', topic, jsonPath: '$.v' } });
      await sourceState(source, 'RUNNING');
      await eventually('the first value', async () => {
        await client.publishAsync(topic, JSON.stringify({ v: 1 }));
        return (await latestValue(point))?.value === 1 ? true : undefined;
      });
      const sent = Date.now();
      for (let i = 0; i < 50; i++) await client.publishAsync(topic, i % 2 ? 'not json' : '{"w": 2}', { qos: 1 });
      const warned = await eventually('the warning on the point', async () => {
        const res = await admin.get<PointView>(`${DP}/${point}`);
        return res.body.lastWarning ? res.body : undefined;
      });
      assert.match(warned.lastWarning!, new RegExp(`^topic '${topic}': payload (is not valid JSON|has no value at \\$\\.v)$`));
      assert.ok(warned.lastWarningTimestamp! >= sent, `lastWarningTimestamp ${warned.lastWarningTimestamp}`);
      assert.equal(warned.lastWarningCleared, false);
      const counted = await eventually('50 warnings counted', async () => {
        const res = await admin.get('/metrics');
        const line = res.text.split('\n').find((l) => l.startsWith(`dds_data_point_warnings_total{source="${source}"}`));
        return line && Number(line.split(' ')[1]) === 50 ? line : undefined;
      });
      assert.ok(counted);
      const state = await admin.get<SourceView>(`${DS}/${source}`);
      assert.equal(state.body.state, 'RUNNING');
      assert.equal(state.body.lastError, null);
      assert.equal((await sourceEvents(source)).total, 0, 'no DATA_SOURCE event');
      await client.publishAsync(topic, JSON.stringify({ v: 3 }));
      const cleared = await eventually('the warning cleared (writes are coalesced: within about 5 s)', async () => {
        const res = await admin.get<PointView>(`${DP}/${point}`);
        return res.body.lastWarningCleared ? res.body : undefined;
      }, 15_000);
      assert.match(cleared.lastWarning ?? '', new RegExp(`^topic '${topic}': `), 'the text is kept for diagnosis');
      assert.equal((await latestValue(point))?.value, 3);
    });

    it('stores published values by the point\'s logging: ON_CHANGE skips a repeat, NONE stores nothing but is the latest', async () => {
      const topic = `dds-test/${unique('t')}/level`;
      const source = await create(DS, { xid: unique('mq-'), name: 'broker', modelType: 'MQTT_CLIENT', enabled: true, brokerUrl: BROKER });
      const onChange = await create(DP, { xid: unique('mqp-'), name: 'level', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', topic } });
      const none = await create(DP, { xid: unique('mqp-'), name: 'level, none', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', topic }, loggingProperties: { loggingType: 'NONE' } });
      await sourceState(source, 'RUNNING');
      await eventually('the first value', async () => {
        await client.publishAsync(topic, '5');
        return (await latestValue(onChange))?.value === 5 ? true : undefined;
      });
      await client.publishAsync(topic, '5');
      await client.publishAsync(topic, '6');
      await eventually('6 from the broker', async () => ((await latestValue(onChange))?.value === 6 && (await latestValue(none))?.value === 6 ? true : undefined));
      assert.deepEqual((await storedValues(onChange, 0)).map((v) => v.value), [5, 6]);
      assert.deepEqual(await storedValues(none, 0), []);
    });

    it('reports ERROR with lastError for a broker that is not there', async () => {
      const port = await freePort();
      const source = await create(DS, { xid: unique('mq-'), name: 'nowhere', modelType: 'MQTT_CLIENT', enabled: true, brokerUrl: `mqtt://127.0.0.1:${port}` });
      await create(DP, { xid: unique('mqp-'), name: 'x', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', topic: 'a/b' } });
      const failed = await sourceState(source, 'ERROR');
      assert.match(failed.lastError ?? '', /connection refused/);
    });
  });
});
