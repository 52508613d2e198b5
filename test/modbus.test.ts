// The Modbus TCP driver against a real Modbus TCP server (modbus-serial's ServerTCP over an in-memory
// device the tests change), with a recording DriverContext instead of the runtime.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import type { DriverContext, ProducedValue, SourceDriver } from '../src/runtime/driver.js';
import { createModbusDriver } from '../src/runtime/modbus.js';
import { encodeWrite, modbusLocator, planReads, rawFromWords, valueFromWords, type ModbusLocator } from '../src/runtime/modbus-codec.js';
import type { DataPointRecord, DataType } from '../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../src/store/metadata/data-sources.js';
import { Device } from './helpers/modbus-device.js';
import { pointRecord, sourceRecord } from './helpers/records.js';
import { freePort, waitFor } from './helpers/wait.js';

/** What the runtime would do with a driver's output, recorded. */
class RecordingContext implements DriverContext {
  readonly batches: ProducedValue[][] = [];
  readonly faults: string[] = [];
  /** fault / recovered in the order they happened. */
  readonly events: string[] = [];
  /** The points marked unreliable now (xid → reason): cleared by their next published value, as the runtime does. */
  readonly unreliableNow = new Map<string, string>();
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  readonly unread: readonly DataPointRecord[];

  constructor(
    readonly source: DataSourceRecord,
    readonly points: readonly DataPointRecord[],
    readonly periodMs: number,
  ) {
    this.unread = points;
  }

  accept(values: readonly ProducedValue[]): Promise<void> {
    this.batches.push([...values]);
    for (const v of values) this.unreliableNow.delete(v.point.xid);
    return Promise.resolve();
  }

  unreliable(points: readonly DataPointRecord[], reason: string): void {
    for (const p of points) this.unreliableNow.set(p.xid, reason);
  }

  fault(message: string): void {
    this.faults.push(message);
    this.events.push('fault');
  }

  recovered(): void {
    this.events.push('recovered');
  }

  warn(point: DataPointRecord, message: string): void {
    this.faults.push(`warning on ${point.xid}: ${message}`);
  }

  /** The Modbus driver reads its values from the device, never from history. */
  lastValue(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  get recoveries(): number {
    return this.events.filter((e) => e === 'recovered').length;
  }

  abort(): void {
    this.controller.abort();
  }

  /** The newest value published for a point. */
  latest(xid: string): unknown {
    for (let i = this.batches.length - 1; i >= 0; i--) {
      const hit = this.batches[i]!.find((v) => v.point.xid === xid);
      if (hit) return hit.value;
    }
    return undefined;
  }
}


let nextId = 1;
function point(xid: string, locator: Record<string, unknown>, dataType: DataType = 'NUMERIC', settable = false): DataPointRecord {
  return pointRecord({
    id: nextId++,
    xid,
    name: xid,
    deviceName: 'device',
    dataSourceXid: 'DS_MODBUS',
    dataSourceName: 'device',
    dataSourceType: 'MODBUS_IP',
    dataType,
    settable,
    pointLocator: { registerType: 'HOLDING', dataEncoding: 'UINT16', wordOrder: 'BIG', multiplier: 1, additive: 0, ...locator },
  });
}

function source(port: number, settings: Record<string, unknown> = {}): DataSourceRecord {
  return sourceRecord({
    xid: 'DS_MODBUS',
    name: 'device',
    modelType: 'MODBUS_IP',
    updatePeriods: 50,
    updatePeriodType: 'MILLISECONDS',
    settings: { host: '127.0.0.1', port, unitId: 1, timeoutMs: 1000, retries: 2, ...settings },
  });
}

function wordsOf(write: (b: Buffer) => void): number[] {
  const b = Buffer.alloc(4);
  write(b);
  return [b.readUInt16BE(0), b.readUInt16BE(2)];
}

describe('Modbus TCP driver', function () {
  let device: Device;
  let ctx: RecordingContext | undefined;
  let driver: SourceDriver | undefined;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  before(() => process.on('unhandledRejection', onUnhandled));
  after(() => {
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, [], 'no unhandled rejections');
  });

  beforeEach(async () => {
    device = new Device(await freePort());
    await device.start();
  });

  afterEach(async () => {
    await driver?.stop();
    ctx?.abort();
    driver = undefined;
    ctx = undefined;
    await device.stop();
  });

  async function startDriver(points: DataPointRecord[], settings: Record<string, unknown> = {}, periodMs = 50): Promise<RecordingContext> {
    ctx = new RecordingContext(source(device.port, settings), points, periodMs);
    driver = createModbusDriver(ctx);
    await driver.start();
    return ctx;
  }

  async function stopDriver(): Promise<void> {
    await driver?.stop();
    driver = undefined;
  }

  it('publishes the values of one poll in one batch with one timestamp, and reports the start as recovered', async () => {
    device.holding.set(0, 1234);
    device.holding.set(7, 42);
    const c = await startDriver([point('a', { offset: 0 }), point('b', { offset: 7 })]);
    await waitFor('two polls', () => c.batches.length >= 2);
    const [first] = c.batches;
    assert.deepEqual(
      first!.map((v) => [v.point.xid, v.value]),
      [
        ['a', 1234],
        ['b', 42],
      ],
    );
    assert.equal(typeof first![0]!.ts, 'number');
    assert.equal(first![0]!.ts, first![1]!.ts);
    assert.deepEqual(c.events, ['recovered']);
    device.holding.set(0, 99);
    await waitFor('the changed value', () => c.latest('a') === 99);
  });

  it('marks every point unreliable from the start until its first read', async () => {
    device.delayMs = 300;
    const c = await startDriver([point('a', { offset: 0 }), point('b', { offset: 1 })]);
    assert.deepEqual([...c.unreliableNow.keys()], ['a', 'b']);
    assert.match(c.unreliableNow.get('a')!, /^Modbus 127\.0\.0\.1:\d+: not read yet$/);
    await waitFor('the first values', () => c.batches.length >= 1);
    assert.deepEqual([...c.unreliableNow.keys()], []);
  });

  it('decodes every encoding in both word orders, with multiplier and additive', async () => {
    device.setWords(10, [0xfffe]);
    device.setWords(11, [0xfffe]);
    device.setWords(12, wordsOf((b) => b.writeInt32BE(-70000)));
    device.setWords(14, wordsOf((b) => b.writeInt32BE(-70000)).reverse());
    device.setWords(16, wordsOf((b) => b.writeUInt32BE(4_000_000_000)));
    device.setWords(18, wordsOf((b) => b.writeUInt32BE(4_000_000_000)).reverse());
    device.setWords(20, wordsOf((b) => b.writeFloatBE(-12.375)));
    device.setWords(22, wordsOf((b) => b.writeFloatBE(-12.375)).reverse());
    device.setWords(24, [100]);
    device.setWords(25, [3]);
    device.setWords(26, [5, 0]);
    device.input.set(3, 0x8000);
    const c = await startDriver([
      point('int16', { offset: 10, dataEncoding: 'INT16' }),
      point('uint16', { offset: 11, dataEncoding: 'UINT16' }),
      point('int32-big', { offset: 12, dataEncoding: 'INT32', wordOrder: 'BIG' }),
      point('int32-little', { offset: 14, dataEncoding: 'INT32', wordOrder: 'LITTLE' }),
      point('uint32-big', { offset: 16, dataEncoding: 'UINT32', wordOrder: 'BIG' }),
      point('uint32-little', { offset: 18, dataEncoding: 'UINT32', wordOrder: 'LITTLE' }),
      point('float-big', { offset: 20, dataEncoding: 'FLOAT32', wordOrder: 'BIG' }),
      point('float-little', { offset: 22, dataEncoding: 'FLOAT32', wordOrder: 'LITTLE' }),
      point('scaled', { offset: 24, multiplier: 0.5, additive: 10 }),
      point('multistate', { offset: 25 }, 'MULTISTATE'),
      point('binary-on', { offset: 26 }, 'BINARY'),
      point('binary-off', { offset: 27 }, 'BINARY'),
      point('input', { offset: 3, registerType: 'INPUT', dataEncoding: 'INT16', multiplier: 2 }),
    ]);
    await waitFor('a poll', () => c.batches.length >= 1);
    const got = Object.fromEntries(c.batches[0]!.map((v) => [v.point.xid, v.value]));
    assert.deepEqual(got, {
      int16: -2,
      uint16: 65534,
      'int32-big': -70000,
      'int32-little': -70000,
      'uint32-big': 4_000_000_000,
      'uint32-little': 4_000_000_000,
      'float-big': -12.375,
      'float-little': -12.375,
      scaled: 60,
      multistate: 3,
      'binary-on': true,
      'binary-off': false,
      input: -65536,
    });
  });

  it('reads coils and discrete inputs as BINARY', async () => {
    device.coils.set(0, true);
    device.coils.set(2, true);
    device.discrete.set(9, true);
    const c = await startDriver([
      point('c0', { offset: 0, registerType: 'COIL' }, 'BINARY'),
      point('c1', { offset: 1, registerType: 'COIL' }, 'BINARY'),
      point('c2', { offset: 2, registerType: 'COIL' }, 'BINARY'),
      point('d9', { offset: 9, registerType: 'DISCRETE_INPUT' }, 'BINARY'),
      point('d10', { offset: 10, registerType: 'DISCRETE_INPUT' }, 'BINARY'),
    ]);
    await waitFor('a poll', () => c.batches.length >= 1);
    const got = Object.fromEntries(c.batches[0]!.map((v) => [v.point.xid, v.value]));
    assert.deepEqual(got, { c0: true, c1: false, c2: true, d9: true, d10: false });
    device.coils.set(1, true);
    await waitFor('the changed coil', () => c.latest('c1') === true);
  });

  it('reads contiguous points with one request per poll (two past 125 registers)', async () => {
    const points = Array.from({ length: 100 }, (_, i) => point(`p${i}`, { offset: 200 + i }));
    // 30 more: 200..329 spans 130 registers, over the protocol limit of 125.
    const more = Array.from({ length: 30 }, (_, i) => point(`q${i}`, { offset: 300 + i }));
    for (let i = 0; i < 130; i++) device.holding.set(200 + i, i);
    const c = await startDriver([...points, ...more], {}, 20);
    await waitFor('five polls', () => c.batches.length >= 5);
    await stopDriver();
    const polls = c.batches.length;
    // A poll stopped between its requests and its publish leaves up to one poll's requests unpublished.
    assert.ok(device.requests.holding >= 2 * polls && device.requests.holding <= 2 * polls + 2, `${device.requests.holding} requests for ${polls} polls`);
    assert.equal(c.batches[0]!.length, 130);
    assert.equal(c.latest('q29'), 129);
  });

  it('writes 16-bit registers (FC6), 32-bit registers (FC16) and coils (FC5), scaled back', async () => {
    const scaled = point('scaled', { offset: 1, multiplier: 0.5, additive: 10 }, 'NUMERIC', true);
    const int32 = point('int32', { offset: 2, dataEncoding: 'INT32', wordOrder: 'LITTLE' }, 'NUMERIC', true);
    const float = point('float', { offset: 4, dataEncoding: 'FLOAT32' }, 'NUMERIC', true);
    const coil = point('coil', { offset: 5, registerType: 'COIL' }, 'BINARY', true);
    const c = await startDriver([scaled, int32, float, coil], {}, 1000);
    await waitFor('a poll', () => c.batches.length >= 1);
    assert.equal(await driver!.write!(scaled, 60.3), 60.5, 'answers what the register holds: raw 100.6 rounds to 101');
    assert.equal(device.holding.get(1), 101);
    assert.equal(await driver!.write!(float, 0.1), Math.fround(0.1));
    const tenths = point('tenths', { offset: 6, multiplier: 0.1 }, 'NUMERIC', true);
    assert.equal(await driver!.write!(tenths, 23.4), 23.4, 'raw 234 × 0.1 without binary noise (not 23.400000000000002)');
    await driver!.write!(scaled, 60);
    assert.equal(device.holding.get(1), 100);
    assert.equal(device.requests.fc6, 3);
    await driver!.write!(int32, -70000);
    assert.deepEqual([device.holding.get(2), device.holding.get(3)], wordsOf((b) => b.writeInt32BE(-70000)).reverse());
    await driver!.write!(float, 1.5);
    assert.deepEqual([device.holding.get(4), device.holding.get(5)], wordsOf((b) => b.writeFloatBE(1.5)));
    assert.equal(device.requests.fc16, 3);
    await driver!.write!(coil, true);
    assert.equal(device.coils.get(5), true);
    await driver!.write!(coil, false);
    assert.equal(device.coils.get(5), false);
  });

  it('rejects a write the device refuses, a read-only register and a value out of range', async () => {
    const holding = point('h', { offset: 1, dataEncoding: 'INT16' }, 'NUMERIC', true);
    const input = point('i', { offset: 1, registerType: 'INPUT' }, 'NUMERIC', true);
    const discrete = point('d', { offset: 1, registerType: 'DISCRETE_INPUT' }, 'BINARY', true);
    const c = await startDriver([holding], {}, 1000);
    await waitFor('a poll', () => c.batches.length >= 1);
    device.refuseWrites = true;
    await assert.rejects(driver!.write!(holding, 5), (err: Error) => {
      assert.match(err.message, /^Modbus 127\.0\.0\.1:\d+: exception 4 \(Slave device failure\) writing HOLDING 1$/);
      return true;
    });
    await assert.rejects(driver!.write!(input, 5), /cannot write INPUT 1: INPUT registers are read-only/);
    await assert.rejects(driver!.write!(discrete, true), /DISCRETE_INPUT registers are read-only/);
    await assert.rejects(driver!.write!(holding, 40000), /out of range for INT16 \(-32768\.\.32767\)/);
    assert.equal(device.requests.fc6, 1, 'only the refused write reached the device');
    assert.deepEqual(c.faults, [], 'a refused write is not a fault of the source');
  });

  it('publishes the other requests and reports a fault when the device refuses one read', async () => {
    device.holding.set(0, 7);
    device.refuseInputReads = true;
    const c = await startDriver([point('h', { offset: 0 }), point('i', { offset: 0, registerType: 'INPUT' })]);
    await waitFor('a fault', () => c.faults.length >= 1);
    assert.match(c.faults[0]!, /^Modbus 127\.0\.0\.1:\d+: exception 4 \(Slave device failure\) reading INPUT 0$/);
    await waitFor('the holding value', () => c.latest('h') === 7);
    // Only the point of the refused request is unreliable.
    assert.deepEqual([...c.unreliableNow], [['i', c.faults[0]]]);
    device.refuseInputReads = false;
    await waitFor('recovery', () => c.recoveries >= 1 && c.latest('i') === 0);
    assert.equal(c.unreliableNow.size, 0);
  });

  it('reports a stopped device, retries with backoff, and recovers when it is back on the same port', async function () {
    device.holding.set(0, 1);
    const c = await startDriver([point('a', { offset: 0 })], { timeoutMs: 500, retries: 1 });
    await waitFor('first values', () => c.batches.length >= 1);
    await device.stop();
    await waitFor('a fault', () => c.faults.length >= 1);
    const firstFault = Date.now();
    assert.match(c.faults[0]!, /^Modbus 127\.0\.0\.1:\d+: (connection closed|not connected).* reading HOLDING 0/);
    assert.equal(c.unreliableNow.get('a'), c.faults[0], 'unreliable, with the fault as its reason');
    await waitFor('a second fault', () => c.faults.length >= 2);
    assert.match(c.faults[1]!, /^Modbus 127\.0\.0\.1:\d+: not connected \(connection refused\) reading HOLDING 0$/);
    // Backoff: the next attempt comes about 1 s later, not at the 50 ms period.
    assert.ok(Date.now() - firstFault >= 800, `retried after ${Date.now() - firstFault} ms`);
    const published = c.batches.length;
    device.holding.set(0, 2);
    await device.start();
    await waitFor('recovery', () => c.recoveries >= 2 && c.latest('a') === 2, 15_000);
    assert.ok(c.batches.length > published);
    assert.deepEqual(c.events.slice(-1), ['recovered']);
    assert.equal(c.unreliableNow.size, 0, 'cleared by the value read');
  });

  it('recovers within 5 s of the device coming back, however long it was away (backoff capped)', async function () {
    this.timeout(40_000);
    device.holding.set(0, 1);
    const c = await startDriver([point('a', { offset: 0 })], { timeoutMs: 500, retries: 1 }, 200);
    await waitFor('first values', () => c.batches.length >= 1);
    await device.stop();
    await waitFor('a fault', () => c.faults.length >= 1);
    // Attempts of an uncapped doubling come 1, 3, 7, 15, 31 s after the fault: back at 16 s, it would wait 15 s.
    await new Promise((r) => setTimeout(r, 16_000));
    device.holding.set(0, 2);
    await device.start();
    const back = Date.now();
    await waitFor('recovery', () => c.latest('a') === 2, 10_000);
    const took = Date.now() - back;
    assert.ok(took <= 5_000, `recovered ${took} ms after the device returned`);
  });

  it('reports a device slower than timeoutMs after its retries', async () => {
    device.delayMs = 400;
    const c = await startDriver([point('a', { offset: 0 }), point('b', { offset: 1 })], { timeoutMs: 100, retries: 1 });
    await waitFor('a fault', () => c.faults.length >= 1);
    assert.match(c.faults[0]!, /^Modbus 127\.0\.0\.1:\d+: timeout after 100 ms reading HOLDING 0\.\.1 \(2 attempts\)$/);
    assert.equal(c.batches.length, 0);
    assert.deepEqual([...c.unreliableNow.values()], [c.faults[0], c.faults[0]]);
    device.delayMs = 0;
    await waitFor('recovery', () => c.recoveries >= 1, 15_000);
  });

  it('stops promptly while the device hangs, and publishes nothing afterwards', async () => {
    device.hang = true;
    const c = await startDriver([point('a', { offset: 0 }), point('b', { offset: 1 })], { timeoutMs: 30_000, retries: 5 });
    await waitFor('a request on the wire', () => device.requests.holding >= 1);
    const started = Date.now();
    await stopDriver();
    assert.ok(Date.now() - started < 1000, `stop took ${Date.now() - started} ms`);
    device.hang = false;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(c.batches.length, 0);
    assert.deepEqual(c.faults, []);
  });

  it('rejects a write once stopped', async () => {
    const p = point('a', { offset: 0 }, 'NUMERIC', true);
    await startDriver([p]);
    const stopped = driver!;
    await stopDriver();
    await assert.rejects(stopped.write!(p, 1), /not connected \(the data source is stopped\) writing HOLDING 0/);
  });
});

describe('Modbus TCP driver against a device that answers garbage', () => {
  let server: Server;
  let port: number;
  const sockets = new Set<Socket>();

  before(async () => {
    // Echoes the transaction id with a read response that is too short for the request.
    server = createServer((sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.on('data', (data) => sock.write(Buffer.from([data[0]!, data[1]!, 0, 0, 0, 3, data[6]!, 3, 0])));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    sockets.forEach((s) => s.destroy());
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reports an invalid response as a fault', async () => {
    const ctx = new RecordingContext(source(port, { timeoutMs: 2000 }), [point('a', { offset: 0 }), point('b', { offset: 1 })], 50);
    const driver = createModbusDriver(ctx);
    await driver.start();
    try {
      await waitFor('a fault', () => ctx.faults.length >= 1);
      assert.match(ctx.faults[0]!, /^Modbus 127\.0\.0\.1:\d+: invalid response \(Data length error.*\) reading HOLDING 0\.\.1$/);
      assert.equal(ctx.batches.length, 0);
    } finally {
      await driver.stop();
    }
  });
});

describe('Modbus codec', () => {
  const loc = (l: Record<string, unknown>): ModbusLocator => modbusLocator(point('x', l));

  it('merges nearby ranges per register type, splits at the protocol limits and over wide gaps', () => {
    const points = [
      point('h0', { offset: 0 }),
      point('h1', { offset: 1, dataEncoding: 'FLOAT32' }),
      point('h-gap', { offset: 10 }),
      point('h-far', { offset: 1000 }),
      point('i0', { offset: 0, registerType: 'INPUT' }),
      ...Array.from({ length: 2001 }, (_, i) => point(`c${i}`, { offset: i, registerType: 'COIL' }, 'BINARY')),
    ];
    const plan = planReads(points);
    assert.deepEqual(
      plan.map((r) => [r.registerType, r.start, r.count, r.points.length]),
      [
        ['HOLDING', 0, 11, 3],
        ['HOLDING', 1000, 1, 1],
        ['INPUT', 0, 1, 1],
        ['COIL', 0, 2000, 2000],
        ['COIL', 2000, 1, 1],
      ],
    );
    assert.deepEqual(
      plan[0]!.points.map((p) => p.index),
      [0, 1, 10],
    );
    const unbatched = planReads(points.slice(0, 3), { batching: false, maxGapRegisters: 0, maxGapBits: 0 });
    assert.deepEqual(
      unbatched.map((r) => [r.start, r.count]),
      [
        [0, 1],
        [1, 2],
        [10, 1],
      ],
    );
  });

  it('round-trips every encoding and word order through encodeWrite and valueFromWords', () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ dataEncoding: 'INT16' }, -32768],
      [{ dataEncoding: 'UINT16' }, 65535],
      [{ dataEncoding: 'INT32', wordOrder: 'BIG' }, -2_000_000_000],
      [{ dataEncoding: 'INT32', wordOrder: 'LITTLE' }, 2_000_000_000],
      [{ dataEncoding: 'UINT32', wordOrder: 'LITTLE' }, 4_294_967_295],
      [{ dataEncoding: 'FLOAT32', wordOrder: 'LITTLE' }, 3.25],
      [{ dataEncoding: 'INT16', multiplier: 0.1, additive: -40 }, -12.5],
    ];
    for (const [l, value] of cases) {
      const locator = loc({ offset: 0, ...l });
      const command = encodeWrite(locator, value);
      assert.equal(command.kind, 'registers');
      if (command.kind !== 'registers') continue;
      const back = valueFromWords(command.words, 0, locator, 'NUMERIC') as number;
      assert.ok(Math.abs(back - value) < 1e-9, `${JSON.stringify(l)}: ${value} → ${command.words} → ${back}`);
    }
  });

  it('rounds for integer encodings and rejects values that do not fit', () => {
    const uint16 = loc({ offset: 3 });
    assert.deepEqual(encodeWrite(uint16, 2.6), { kind: 'registers', offset: 3, words: [3] });
    assert.throws(() => encodeWrite(uint16, -1), RangeError);
    assert.throws(() => encodeWrite(loc({ offset: 3, multiplier: 10 }), 655_360), /cannot write 655360 \(raw 65536\) to HOLDING 3: out of range for UINT16/);
    assert.throws(() => encodeWrite(loc({ offset: 3, dataEncoding: 'FLOAT32' }), 1e39), /out of range for FLOAT32/);
    assert.throws(() => encodeWrite(uint16, 'high'), TypeError);
    assert.throws(() => encodeWrite(loc({ offset: 3, registerType: 'COIL' }), 2), /a coil takes true or false/);
    assert.equal(rawFromWords([0x8000], 0, loc({ offset: 0, dataEncoding: 'INT16' })), -32768);
  });
});
