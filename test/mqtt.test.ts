// The MQTT_CLIENT driver against real Mosquitto brokers: the shared one on 127.0.0.1:1883 and, for
// refusals and outages, private ones started on free ports. A recording DriverContext stands in for
// the runtime; a separate mqtt client publishes payloads and observes writes.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import type { DriverContext, ProducedValue, SourceDriver } from '../src/runtime/driver.js';
import { createMqttDriver, Inbox } from '../src/runtime/mqtt.js';
import type { DataPointRecord, DataType } from '../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../src/store/metadata/data-sources.js';
import { pointRecord, sourceRecord } from './helpers/records.js';
import { freePort, waitFor } from './helpers/wait.js';

const SHARED_BROKER = 'mqtt://127.0.0.1:1883';
const MOSQUITTO = '/usr/sbin/mosquitto';

/** Stands in for the runtime: records what the driver hands over and the source's state. */
class RecordingContext implements DriverContext {
  readonly values: ProducedValue[] = [];
  readonly batches: number[] = [];
  readonly faults: string[] = [];
  readonly warnings: { xid: string; message: string }[] = [];
  /** The points marked unreliable now (xid → reason): cleared by their next published value, as the runtime does. */
  readonly unreliableNow = new Map<string, string>();
  recoveries = 0;
  state: 'RUNNING' | 'ERROR' = 'RUNNING';
  stopped = false;
  publishedAfterStop = false;
  /** When set, accept() waits for it: the store is slow. */
  gate: Promise<void> | null = null;
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  readonly periodMs = 1_000;

  readonly unread: readonly DataPointRecord[];

  constructor(
    readonly source: DataSourceRecord,
    readonly points: readonly DataPointRecord[],
  ) {
    this.unread = points;
  }

  async accept(values: readonly ProducedValue[]): Promise<void> {
    if (this.stopped) this.publishedAfterStop = true;
    this.batches.push(values.length);
    for (const v of values) this.unreliableNow.delete(v.point.xid);
    if (this.gate) await this.gate;
    this.values.push(...values);
  }

  /** MQTT sources only report what arrives: they never ask for the last stored value. */
  lastValue(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  fault(message: string): void {
    this.faults.push(message);
    this.state = 'ERROR';
  }

  recovered(): void {
    this.recoveries++;
    this.state = 'RUNNING';
  }

  warn(point: DataPointRecord, message: string): void {
    this.warnings.push({ xid: point.xid, message });
  }

  unreliable(points: readonly DataPointRecord[], reason: string): void {
    for (const p of points) this.unreliableNow.set(p.xid, reason);
  }

  valuesOf(point: DataPointRecord): unknown[] {
    return this.values.filter((v) => v.point.id === point.id).map((v) => v.value);
  }

  /** What the runtime does on stop: abort the signal, then stop the driver. */
  async stop(driver: SourceDriver): Promise<void> {
    this.controller.abort();
    await driver.stop();
    this.stopped = true;
  }
}

let nextId = 1;

function source(settings: Record<string, unknown>): DataSourceRecord {
  const id = nextId++;
  return sourceRecord({ id, xid: `DS_mqtt_${id}`, name: `mqtt ${id}`, modelType: 'MQTT_CLIENT', settings: { clientId: '', username: '', password: '', qos: 0, ...settings } });
}

function point(dataType: DataType, topic: string, jsonPath?: string): DataPointRecord {
  const id = nextId++;
  return pointRecord({
    id, xid: `DP_mqtt_${id}`, name: `point ${id}`, deviceName: 'mqtt', dataSourceId: 0, dataSourceName: 'mqtt',
    dataSourceType: 'MQTT_CLIENT', dataType, settable: true, pointLocator: jsonPath === undefined ? { topic } : { topic, jsonPath },
  });
}



function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** A private Mosquitto that can be stopped and started again on the same port. */
class Broker {
  private process: ChildProcess | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'mqtt-test-'));

  constructor(
    readonly port: number,
    private readonly allowAnonymous = true,
  ) {}

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const config = join(this.dir, 'mosquitto.conf');
    writeFileSync(config, `listener ${this.port} 127.0.0.1\nallow_anonymous ${this.allowAnonymous}\npersistence false\n`);
    this.process = spawn(MOSQUITTO, ['-c', config], { stdio: 'ignore' });
    let ready = false;
    await waitFor(`mosquitto on port ${this.port}`, () => {
      void accepts(this.port).then((ok) => (ready ||= ok));
      return ready;
    });
  }

  async stop(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('MQTT_CLIENT driver', function () {
  this.timeout(30_000);
  let prefix = '';
  let testClient: MqttClient;
  const cleanups: (() => Promise<void>)[] = [];

  before(async () => {
    testClient = await connectAsync(SHARED_BROKER, { reconnectPeriod: 0 });
  });

  after(async () => {
    await testClient.endAsync();
  });

  beforeEach(() => {
    prefix = `dds-test/${process.pid}/${nextId++}`;
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Starts a driver and, when it should reach the broker, waits until it is subscribed. */
  async function started(settings: Record<string, unknown>, points: DataPointRecord[], waitSubscribed = true) {
    const ctx = new RecordingContext(source(settings), points);
    const driver = createMqttDriver(ctx);
    cleanups.push(() => ctx.stop(driver));
    await driver.start();
    if (waitSubscribed) await waitFor('the driver to connect and subscribe', () => ctx.recoveries > 0);
    return { ctx, driver };
  }

  function send(topic: string, payload: string | Buffer): Promise<unknown> {
    return testClient.publishAsync(topic, payload, { qos: 1 });
  }

  describe('reading', () => {
    it('publishes plain numeric, boolean, multistate and text payloads with their arrival time', async () => {
      const num = point('NUMERIC', `${prefix}/num`);
      const bin = point('BINARY', `${prefix}/bin`);
      const multi = point('MULTISTATE', `${prefix}/multi`);
      const text = point('ALPHANUMERIC', `${prefix}/text`);
      const { ctx } = await started({ brokerUrl: SHARED_BROKER }, [num, bin, multi, text]);
      const before = Date.now();
      for (const p of ['21.5', ' -3e2\n', '7']) await send(`${prefix}/num`, p);
      for (const p of ['true', 'OFF', 'on', '0', '1', 'False']) await send(`${prefix}/bin`, p);
      await send(`${prefix}/multi`, '3');
      await send(`${prefix}/text`, ' hello, wörld ');
      await waitFor('11 values', () => ctx.values.length === 11);
      assert.deepEqual(ctx.valuesOf(num), [21.5, -300, 7]);
      assert.deepEqual(ctx.valuesOf(bin), [true, false, true, false, true, false]);
      assert.deepEqual(ctx.valuesOf(multi), [3]);
      assert.deepEqual(ctx.valuesOf(text), [' hello, wörld ']);
      for (const v of ctx.values) assert.ok(v.ts !== undefined && v.ts >= before && v.ts <= Date.now());
      assert.deepEqual(ctx.faults, []);
    });

    it('reads the value at a jsonPath: nested keys, array indexes and the whole document', async () => {
      const dollar = point('NUMERIC', `${prefix}/a`, '$.value');
      const nested = point('NUMERIC', `${prefix}/b`, 'data.temperature');
      const indexed = point('BINARY', `${prefix}/c`, 'items[1].on');
      const whole = point('ALPHANUMERIC', `${prefix}/d`, '$');
      const { ctx } = await started({ brokerUrl: SHARED_BROKER }, [dollar, nested, indexed, whole]);
      await send(`${prefix}/a`, JSON.stringify({ value: 12.25, other: 'x' }));
      await send(`${prefix}/b`, JSON.stringify({ data: { temperature: '19.5' } }));
      await send(`${prefix}/c`, JSON.stringify({ items: [{ on: false }, { on: true }] }));
      await send(`${prefix}/d`, JSON.stringify({ k: [1, 2] }));
      await waitFor('4 values', () => ctx.values.length === 4);
      assert.deepEqual(ctx.valuesOf(dollar), [12.25]);
      assert.deepEqual(ctx.valuesOf(nested), [19.5]);
      assert.deepEqual(ctx.valuesOf(indexed), [true]);
      assert.deepEqual(ctx.valuesOf(whole), ['{"k":[1,2]}']);
    });

    it('hands one message to every point on its topic, including wildcard filters', async () => {
      const topic = `${prefix}/room1/state`;
      const temperature = point('NUMERIC', topic, 'temperature');
      const humidity = point('NUMERIC', topic, 'humidity');
      const anyRoom = point('ALPHANUMERIC', `${prefix}/+/state`);
      const everything = point('ALPHANUMERIC', `${prefix}/#`);
      const { ctx } = await started({ brokerUrl: SHARED_BROKER, qos: 1 }, [temperature, humidity, anyRoom, everything]);
      const payload = JSON.stringify({ temperature: 21, humidity: 40 });
      await send(topic, payload);
      await send(`${prefix}/room2/other`, 'x');
      await waitFor('5 values', () => ctx.values.length === 5);
      assert.deepEqual(ctx.valuesOf(temperature), [21]);
      assert.deepEqual(ctx.valuesOf(humidity), [40]);
      assert.deepEqual(ctx.valuesOf(anyRoom), [payload]);
      assert.deepEqual(ctx.valuesOf(everything), [payload, 'x']);
    });

    it('reports an unreadable payload as a warning on its point naming the topic, not a fault of the source, and goes on reading', async () => {
      const num = point('NUMERIC', `${prefix}/num`);
      const json = point('NUMERIC', `${prefix}/json`, 'data.v');
      const { ctx } = await started({ brokerUrl: SHARED_BROKER }, [num, json]);
      const notYet = new RegExp(`^MQTT ${SHARED_BROKER}: no message yet$`);
      assert.match(ctx.unreliableNow.get(num.xid) ?? '', notYet, 'unreliable until the first message');
      await send(`${prefix}/num`, 'abc');
      await waitFor('a warning', () => ctx.warnings.length === 1);
      assert.deepEqual(ctx.warnings[0], { xid: num.xid, message: `topic '${prefix}/num': payload is not a number` });
      await send(`${prefix}/num`, '5');
      await waitFor('the value', () => ctx.values.length === 1);
      assert.deepEqual(ctx.valuesOf(num), [5]);
      assert.equal(ctx.state, 'RUNNING');
      assert.deepEqual(ctx.faults, [], 'a bad message is no fault of the source');

      const garbage: [string | Buffer, RegExp][] = [
        ['{"data": ', /payload is not valid JSON/],
        [Buffer.from([0xff, 0xfe, 0x00, 0x80]), /payload is not UTF-8 text/],
        [Buffer.alloc(2 * 1024 * 1024, 0x31), /payload of 2097152 bytes is larger than 1048576 bytes/],
        ['{"data": {"w": 1}}', /payload has no value at \$\.data\.v/],
        ['{"data": {"v": [1]}}', /value at \$\.data\.v is not a number/],
      ];
      for (const [payload, expected] of garbage) {
        const count = ctx.warnings.length;
        await send(`${prefix}/json`, payload);
        await waitFor(`a warning for ${String(expected)}`, () => ctx.warnings.length === count + 1);
        assert.equal(ctx.warnings.at(-1)?.xid, json.xid);
        assert.match(ctx.warnings.at(-1)?.message ?? '', expected);
        assert.match(ctx.warnings.at(-1)?.message ?? '', new RegExp(`^topic '${prefix}/json': `));
      }
      assert.deepEqual([...ctx.unreliableNow.keys()], [json.xid], 'read: num; json has had unreadable messages only');
      assert.match(ctx.unreliableNow.get(json.xid) ?? '', notYet, 'an unreadable payload is a warning, not a reason to be unreliable');
      await send(`${prefix}/json`, '{"data": {"v": 8}}');
      await waitFor('the value', () => ctx.values.length === 2);
      assert.deepEqual(ctx.valuesOf(json), [8]);
      assert.equal(ctx.unreliableNow.size, 0);
      assert.deepEqual(ctx.faults, []);
      assert.equal(ctx.state, 'RUNNING');
    });

    it('ignores empty payloads (how MQTT clears a retained message)', async () => {
      const text = point('ALPHANUMERIC', `${prefix}/t`);
      const { ctx } = await started({ brokerUrl: SHARED_BROKER }, [text]);
      await send(`${prefix}/t`, '');
      await send(`${prefix}/t`, 'after');
      await waitFor('a value', () => ctx.values.length === 1);
      assert.deepEqual(ctx.valuesOf(text), ['after']);
      assert.deepEqual(ctx.faults, []);
    });
  });

  describe('writing', () => {
    async function observe(topic: string): Promise<string[]> {
      const seen: string[] = [];
      const observer = await connectAsync(SHARED_BROKER, { reconnectPeriod: 0 });
      cleanups.push(() => observer.endAsync());
      observer.on('message', (t, payload) => {
        if (t === topic) seen.push(payload.toString());
      });
      await observer.subscribeAsync(topic, { qos: 1 });
      return seen;
    }

    for (const qos of [0, 1, 2]) {
      it(`publishes the value as plain text to the point's topic (QoS ${qos}) and does not read its own write back`, async () => {
        const setpoint = point('NUMERIC', `${prefix}/setpoint`);
        const relay = point('BINARY', `${prefix}/relay`);
        const seen = await observe(`${prefix}/setpoint`);
        const seenRelay = await observe(`${prefix}/relay`);
        const { ctx, driver } = await started({ brokerUrl: SHARED_BROKER, qos }, [setpoint, relay]);
        await driver.write?.(setpoint, 21.5);
        await driver.write?.(relay, true);
        await waitFor('the observer to see both writes', () => seen.length === 1 && seenRelay.length === 1);
        assert.deepEqual(seen, ['21.5']);
        assert.deepEqual(seenRelay, ['true']);
        // A device publishing on the topic afterwards is read as usual.
        await send(`${prefix}/setpoint`, '22');
        await waitFor('the device value', () => ctx.values.length === 1);
        assert.deepEqual(ctx.valuesOf(setpoint), [22]);
      });
    }

    it('with a jsonPath publishes a JSON document holding the value at that path', async () => {
      const nested = point('NUMERIC', `${prefix}/cmd`, 'data.items[1].v');
      const seen = await observe(`${prefix}/cmd`);
      const { driver } = await started({ brokerUrl: SHARED_BROKER, qos: 1 }, [nested]);
      await driver.write?.(nested, 7);
      await waitFor('the observer to see the write', () => seen.length === 1);
      assert.deepEqual(JSON.parse(seen[0] ?? ''), { data: { items: [null, { v: 7 }] } });
    });

    it('rejects with a clear error when not connected, for a wildcard topic and for a value of the wrong type', async () => {
      const port = await freePort();
      const p = point('NUMERIC', `${prefix}/x`);
      const offline = await started({ brokerUrl: `mqtt://127.0.0.1:${port}` }, [p], false);
      await assert.rejects(offline.driver.write?.(p, 1) ?? Promise.resolve(), { message: `MQTT mqtt://127.0.0.1:${port}: not connected` });

      const wildcard = point('NUMERIC', `${prefix}/+`);
      const online = await started({ brokerUrl: SHARED_BROKER }, [p, wildcard]);
      await assert.rejects(online.driver.write?.(wildcard, 1) ?? Promise.resolve(), /cannot publish to '.*\/\+': a topic filter with wildcards/);
      await assert.rejects(online.driver.write?.(p, 'warm') ?? Promise.resolve(), /cannot write to '.*\/x': value is not a number/);
      await online.ctx.stop(online.driver);
      await assert.rejects(online.driver.write?.(p, 1) ?? Promise.resolve(), /not connected/);
    });
  });

  describe('connection', () => {
    it('reports a broker that refuses connections, with the URL, and keeps retrying until one answers', async () => {
      const broker = new Broker(await freePort());
      cleanups.push(() => broker.dispose());
      const { ctx } = await started({ brokerUrl: broker.url }, [point('NUMERIC', `${prefix}/x`)], false);
      await waitFor('a fault', () => ctx.faults.length > 0);
      assert.deepEqual(ctx.faults, [`MQTT ${broker.url}: connection refused`]);
      assert.equal(ctx.state, 'ERROR');
      assert.equal(ctx.recoveries, 0);
      await broker.start();
      await waitFor('recovery', () => ctx.state === 'RUNNING', 15_000);
      assert.equal(ctx.faults.length, 1, 'the same refusal is reported once per episode');
    });

    it('reports refused credentials without showing the password', async () => {
      const broker = new Broker(await freePort(), false);
      cleanups.push(() => broker.dispose());
      await broker.start();
      const { ctx } = await started({ brokerUrl: `mqtt://someone:secret@127.0.0.1:${broker.port}`, username: 'u', password: 'p' }, [], false);
      await waitFor('a fault', () => ctx.faults.length > 0);
      assert.deepEqual(ctx.faults, [`MQTT ${broker.url}: not authorized`]);
    });

    it('reports a lost broker, recovers when it returns, and values flow again', async () => {
      const broker = new Broker(await freePort());
      cleanups.push(() => broker.dispose());
      await broker.start();
      const p = point('NUMERIC', 'plant/flow');
      const { ctx } = await started({ brokerUrl: broker.url }, [p]);
      const publisher = async (payload: string) => {
        const client = await connectAsync(broker.url, { reconnectPeriod: 0 });
        await client.publishAsync('plant/flow', payload, { qos: 1 });
        await client.endAsync();
      };
      await publisher('1');
      await waitFor('the first value', () => ctx.values.length === 1);

      assert.equal(ctx.unreliableNow.size, 0);

      await broker.stop();
      await waitFor('the fault', () => ctx.state === 'ERROR');
      assert.match(ctx.faults[0] ?? '', new RegExp(`^MQTT ${broker.url}: (connection lost|connection reset)$`));
      assert.equal(ctx.unreliableNow.get(p.xid), ctx.faults[0], 'unreliable, with the fault as its reason');

      await broker.start();
      await waitFor('recovery', () => ctx.state === 'RUNNING', 15_000);
      assert.equal(ctx.recoveries, 2);
      assert.ok(ctx.unreliableNow.has(p.xid), 'still unreliable after the reconnect: nothing published since');
      await publisher('2');
      await waitFor('the second value', () => ctx.values.length === 2);
      assert.deepEqual(ctx.valuesOf(p), [1, 2]);
      assert.equal(ctx.unreliableNow.size, 0, 'cleared by the next value');
    });

    it('stops promptly whether connected, connecting or waiting to retry, and publishes nothing afterwards', async () => {
      const p = point('NUMERIC', `${prefix}/x`);
      const connected = await started({ brokerUrl: SHARED_BROKER, qos: 2 }, [p]);
      // A message in flight while stopping must not reach publish() after stop resolved.
      const sending = send(`${prefix}/x`, '1');
      let t0 = Date.now();
      await connected.ctx.stop(connected.driver);
      assert.ok(Date.now() - t0 < 1_000, `stop took ${Date.now() - t0} ms`);
      await sending;
      await send(`${prefix}/x`, '2');

      const port = await freePort();
      const retrying = await started({ brokerUrl: `mqtt://127.0.0.1:${port}` }, [p], false);
      await waitFor('a fault', () => retrying.ctx.faults.length > 0);
      t0 = Date.now();
      await retrying.ctx.stop(retrying.driver);
      assert.ok(Date.now() - t0 < 1_000, `stop took ${Date.now() - t0} ms`);

      // A black hole: the TCP connection opens, the broker never answers.
      const silent = net.createServer(() => {}).listen(0, '127.0.0.1');
      await once(silent, 'listening');
      cleanups.push(async () => void silent.close());
      const connecting = await started({ brokerUrl: `mqtt://127.0.0.1:${(silent.address() as net.AddressInfo).port}` }, [p], false);
      t0 = Date.now();
      await connecting.ctx.stop(connecting.driver);
      assert.ok(Date.now() - t0 < 1_000, `stop took ${Date.now() - t0} ms`);

      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(connected.ctx.publishedAfterStop, false);
      assert.ok(connected.ctx.values.every((v) => v.value === 1));
    });
  });

  describe('Inbox (the queue between messages and the store)', () => {
    function inbox(limit: number) {
      const ctx = new RecordingContext(source({}), []);
      const faults: string[] = [];
      const cleared: string[] = [];
      const health = { fail: (_key: string, message: string) => void faults.push(message), clear: (key: string) => void cleared.push(key) };
      const controller = new AbortController();
      return { ctx, faults, cleared, controller, box: new Inbox(ctx, health, 'MQTT x', controller.signal, limit) };
    }
    const value = (n: number): ProducedValue => ({ point: point('NUMERIC', 't'), value: n, ts: n });

    it('hands what arrives within one tick to one accept()', async () => {
      const { ctx, box } = inbox(100);
      for (let i = 0; i < 5; i++) box.push(value(i));
      await waitFor('5 values', () => ctx.values.length === 5);
      assert.deepEqual(ctx.batches, [5]);
    });

    it('while an accept is pending keeps at most the limit, dropping the oldest, and reports the count until drained', async () => {
      const { ctx, box, faults, cleared } = inbox(10);
      let open = () => {};
      ctx.gate = new Promise((resolve) => (open = resolve));
      box.push(value(0));
      await waitFor('the first accept', () => ctx.batches.length === 1);
      for (let i = 1; i <= 25; i++) box.push(value(i));
      open();
      await waitFor('11 values', () => ctx.values.length === 11);
      assert.deepEqual(ctx.values.map((v) => v.value), [0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
      assert.deepEqual(faults, ['MQTT x: 15 values dropped: messages arrive faster than they are stored']);
      await waitFor('the overload to clear', () => cleared.includes('overload'));
    });

    it('publishes nothing once its signal is aborted', async () => {
      const { ctx, box, controller } = inbox(10);
      box.push(value(1));
      controller.abort();
      box.push(value(2));
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(ctx.batches, []);
    });
  });
});
