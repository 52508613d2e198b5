// Unreliable points: the registry (values/live/reliability.ts), and end to end what a client sees
// when a source cannot read its points: a real Modbus TCP device switched off and on, a register it
// refuses, a disabled source; the Mosquitto broker cut off behind a TCP relay; and, on PostgreSQL,
// two instances of which only one runs the source.
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import WebSocket from 'ws';
import type { Config } from '../src/config.js';
import { PointReliability } from '../src/values/live/reliability.js';
import { startService, type RunningService } from '../src/service.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { removeDir, tempDir, testDatabaseUrl } from './helpers/engines.js';
import { Device } from './helpers/modbus-device.js';
import { Relay } from './helpers/relay.js';
import { eventually, freePort } from './helpers/wait.js';

const API = '/rest/latest';
const BROKER = { host: '127.0.0.1', port: 1883 };

interface Unreliable {
  unreliable: boolean;
  unreliableSince: number | null;
  unreliableReason: string | null;
}
interface PointView extends Unreliable {
  xid: string;
  lastWarning: string | null;
  [field: string]: unknown;
}
interface CurrentValue extends Partial<Unreliable> {
  timestamp: number;
  value: unknown;
}
interface Payload extends Partial<Unreliable> {
  xid: string;
  event: string;
  value: { value: unknown; timestamp: number } | null;
  enabled: boolean;
  attributes?: { UNRELIABLE: boolean };
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;

describe('point reliability: the registry', () => {
  it('keeps the start of an episode when its reason changes, and tells each change once', () => {
    const r = new PointReliability();
    const told: [number[], boolean][] = [];
    r.onChange((ids, local) => told.push([[...ids], local]));
    r.mark([1, 2], 'connection refused', 1_000);
    r.mark([1, 2], 'connection refused', 2_000);
    r.mark([2], 'timeout', 3_000);
    assert.deepEqual(r.get(2), { since: 1_000, reason: 'timeout' });
    assert.deepEqual(r.get(1), { since: 1_000, reason: 'connection refused' });
    r.clear([1, 3]);
    assert.equal(r.has(1), false);
    assert.equal(r.size, 1);
    assert.deepEqual(told, [
      [[1, 2], true],
      [[2], true],
      [[1], true],
    ]);
  });

  it('cuts a long reason to fit a cluster message', () => {
    const r = new PointReliability();
    r.mark([1], 'x'.repeat(10_000));
    assert.equal(r.get(1)!.reason.length, 500);
  });

  it("decides its own points over another instance's messages, and forgets only the others' marks on resync", () => {
    const r = new PointReliability();
    const told: [number[], boolean][] = [];
    r.onChange((ids, local) => told.push([[...ids], local]));
    r.mark([1], 'here', 1_000);
    r.markedElsewhere([[1, 5], [2, 5]], 'there');
    assert.deepEqual(r.get(1), { since: 1_000, reason: 'here' }, 'a stale message about a point run here changes nothing');
    assert.deepEqual(r.get(2), { since: 5, reason: 'there' });
    r.markedElsewhere([[2, 5]], 'there');
    r.clearedElsewhere([1]);
    assert.equal(r.has(1), true);
    assert.deepEqual(r.localMarks(), [[1, { since: 1_000, reason: 'here' }]]);
    r.forgetElsewhere();
    assert.deepEqual([r.has(1), r.has(2)], [true, false]);
    assert.deepEqual(told, [
      [[1], true],
      [[2], false],
      [[2], false],
    ]);
  });
});

/** A point-value WebSocket client that keeps every message until the test takes it. */
class Socket {
  private readonly inbox: Payload[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { status: string; payload: Payload };
      if (m.status === 'OK') this.inbox.push(m.payload);
    });
  }

  static async open(url: string, token: string): Promise<Socket> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${API}/websocket/point-value`, { headers: { authorization: `Bearer ${token}` } });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new Socket(ws);
  }

  subscribe(xid: string): void {
    this.ws.send(JSON.stringify({ xid, eventTypes: ['REGISTERED', 'UPDATE', 'ATTRIBUTE_CHANGE'] }));
  }

  /** The first waiting message that matches (taken from the inbox, with those before it). */
  next(what: string, match: (p: Payload) => boolean, ms = 20_000): Promise<Payload> {
    return eventually(
      what,
      async () => {
        const i = this.inbox.findIndex(match);
        return i < 0 ? undefined : this.inbox.splice(0, i + 1).at(-1);
      },
      ms,
      20,
    );
  }

  close(): void {
    this.ws.terminate();
  }
}

async function tokenFor(c: ApiClient): Promise<string> {
  const res = await c.post<{ token: string }>(`${API}/auth-tokens/create`, {});
  assert.equal(res.status, 201, res.text);
  return res.body.token;
}

async function create(c: ApiClient, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await c.post<{ xid: string }>(`${API}${path}`, body);
  assert.equal(res.status, 201, res.text);
  return res.body.xid;
}

async function pointOf(c: ApiClient, xid: string): Promise<PointView> {
  const res = await c.get<PointView>(`${API}/data-points/${xid}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function currentValue(c: ApiClient, xid: string): Promise<CurrentValue | undefined> {
  const res = await c.get<CurrentValue[]>(`${API}/point-values/latest/${xid}?limit=3`);
  assert.equal(res.status, 200, res.text);
  for (const older of res.body.slice(1)) assert.equal(older.unreliable, undefined, 'only the current value carries the mark');
  return res.body[0];
}

/** The point once it is (un)reliable as asked, read through the API. */
function pointWhen(c: ApiClient, xid: string, unreliable: boolean): Promise<PointView> {
  return eventually(`${xid} unreliable=${unreliable}`, async () => {
    const p = await pointOf(c, xid);
    return p.unreliable === unreliable ? p : undefined;
  }, 20_000);
}

function modbusSource(port: number): Record<string, unknown> {
  return { xid: unique('rel-mb-'), name: 'PLC', modelType: 'MODBUS_IP', enabled: true, updatePeriods: 100, updatePeriodType: 'MILLISECONDS', host: '127.0.0.1', port, timeoutMs: 300, retries: 0 };
}

describe('unreliable points over HTTP and WebSocket', function () {
  this.timeout(90_000);
  let app: TestApp;
  let admin: ApiClient;
  const sockets: Socket[] = [];

  before(async () => {
    app = await startTestApp('pglite');
    admin = await loggedIn(app.url, 'admin', 'admin');
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });
  after(async () => {
    await app?.stop();
  });

  describe('MODBUS_IP: a real device switched off and on', () => {
    let device: Device;
    let source: string;
    let holding: string;
    let input: string;

    before(async () => {
      device = new Device(await freePort());
      device.setWords(0, [5]);
      device.input.set(0, 9);
      await device.start();
      source = await create(admin, '/data-sources', modbusSource(device.port));
      holding = await create(admin, '/data-points', { xid: unique('rel-h-'), name: 'holding', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', offset: 0 } });
      input = await create(admin, '/data-points', { xid: unique('rel-i-'), name: 'input', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', offset: 0, registerType: 'INPUT' } });
    });
    after(async () => {
      await device?.stop();
    });

    it('marks the points of a device switched off, on the point, its current value and the WebSocket, until their next value', async () => {
      await pointWhen(admin, holding, false);
      await pointWhen(admin, input, false);
      const first = await eventually('the first value', () => currentValue(admin, holding));
      assert.deepEqual([first.value, first.unreliable, first.unreliableSince], [5, false, undefined]);
      const socket = await Socket.open(app.url, await tokenFor(admin));
      sockets.push(socket);
      socket.subscribe(holding);
      const registered = await socket.next('REGISTERED', (p) => p.event === 'REGISTERED');
      assert.equal(registered.unreliable, false);

      const off = Date.now();
      await device.stop();
      const change = await socket.next('ATTRIBUTE_CHANGE to unreliable', (p) => p.event === 'ATTRIBUTE_CHANGE');
      assert.equal(change.xid, holding);
      assert.equal(change.value, null);
      assert.equal(change.unreliable, true);
      assert.deepEqual(change.attributes, { UNRELIABLE: true });
      assert.match(change.unreliableReason!, new RegExp(`^Modbus 127\\.0\\.0\\.1:${device.port}: .* reading (HOLDING|INPUT) 0$`));
      assert.ok(change.unreliableSince! >= off - 100, `since ${change.unreliableSince} (off at ${off})`);

      const point = await pointOf(admin, holding);
      assert.deepEqual([point.unreliable, point.unreliableSince, point.unreliableReason], [true, change.unreliableSince, change.unreliableReason]);
      const current = await currentValue(admin, holding);
      assert.equal(current?.value, 5, 'the last value is kept');
      assert.deepEqual([current?.unreliable, current?.unreliableSince, current?.unreliableReason], [true, change.unreliableSince, change.unreliableReason]);
      assert.equal((await pointWhen(admin, input, true)).unreliable, true, 'every point of the device');
      const list = await admin.get<{ items: PointView[] }>(`${API}/data-points?eq(dataSourceXid,${source})`);
      assert.deepEqual(list.body.items.map((p) => p.unreliable), [true, true]);
      const ds = await admin.get<{ state: string }>(`${API}/data-sources/${source}`);
      assert.equal(ds.body.state, 'ERROR');

      device.setWords(0, [6]);
      await device.start();
      const cleared = await socket.next('ATTRIBUTE_CHANGE to reliable', (p) => p.event === 'ATTRIBUTE_CHANGE' && p.unreliable === false);
      assert.deepEqual([cleared.unreliable, cleared.attributes, cleared.unreliableSince, cleared.unreliableReason], [false, { UNRELIABLE: false }, undefined, undefined]);
      const update = await socket.next('the next value', (p) => p.event === 'UPDATE');
      assert.deepEqual([update.value?.value, update.unreliable], [6, false]);
      assert.deepEqual(await pointWhen(admin, holding, false).then((p) => [p.unreliableSince, p.unreliableReason]), [null, null]);
      const now = await currentValue(admin, holding);
      assert.deepEqual([now?.value, now?.unreliable], [6, false]);
      await pointWhen(admin, input, false);
    });

    it('marks only the point whose register the device refuses', async () => {
      await pointWhen(admin, input, false);
      device.refuseInputReads = true;
      try {
        const refused = await pointWhen(admin, input, true);
        assert.match(refused.unreliableReason!, /exception 4 \(Slave device failure\) reading INPUT 0$/);
        assert.equal((await pointOf(admin, holding)).unreliable, false, 'the other request still reads');
      } finally {
        device.refuseInputReads = false;
      }
      await pointWhen(admin, input, false);
    });

    it("marks every point again after a change of the source's settings, and keeps the marks across a point's edit", async () => {
      await pointWhen(admin, holding, false);
      device.delayMs = 2_000; // each read takes a while
      try {
        const stored = (await admin.get<Record<string, unknown>>(`${API}/data-sources/${source}`)).body;
        const saved = await admin.put(`${API}/data-sources/${source}`, { ...stored, timeoutMs: 5_000 });
        assert.equal(saved.status, 200, saved.text);
        const restarted = await pointOf(admin, holding);
        assert.deepEqual([restarted.unreliable, restarted.unreliableReason?.replace(/^.*: /, '')], [true, 'not read yet'], 'new settings may name another device');
        await pointWhen(admin, holding, false);
        // Restarted for a point's edit, the source still reads the same device: holding stays reliable
        // although its next read is seconds away.
        const other = await pointOf(admin, input);
        assert.equal((await admin.put(`${API}/data-points/${input}`, { ...other, name: 'input, renamed' })).status, 200);
        assert.equal((await pointOf(admin, holding)).unreliable, false);
      } finally {
        device.delayMs = 0;
      }
    });

    it('clears the marks of a disabled source, and marks its points again from its start until the first read', async () => {
      await device.stop();
      await pointWhen(admin, holding, true);
      const disabled = await admin.put(`${API}/data-sources/enable-disable/${source}`, { enabled: false });
      assert.equal(disabled.status, 200, disabled.text);
      assert.equal((await pointOf(admin, holding)).unreliable, false, 'a stopped source makes no claim');
      assert.equal((await currentValue(admin, holding))?.unreliable, false);
      device.delayMs = 2_000; // the first read after the start takes a while
      await device.start();
      try {
        const stored = (await admin.get<Record<string, unknown>>(`${API}/data-sources/${source}`)).body;
        const enabled = await admin.put(`${API}/data-sources/${source}`, { ...stored, enabled: true, timeoutMs: 5_000 });
        assert.equal(enabled.status, 200, enabled.text);
        const started = await pointOf(admin, holding);
        assert.equal(started.unreliable, true);
        assert.match(started.unreliableReason!, /: not read yet$/);
        await pointWhen(admin, holding, false);
      } finally {
        device.delayMs = 0;
      }
    });

    it('ignores unreliable on input as other read-only fields, and refuses a value of the wrong type', async () => {
      const stored = await pointOf(admin, holding);
      const saved = await admin.put<PointView>(`${API}/data-points/${holding}`, { ...stored, unreliable: true, unreliableSince: 1, unreliableReason: 'said so' });
      assert.equal(saved.status, 200, saved.text);
      assert.deepEqual([saved.body.unreliable, saved.body.unreliableSince, saved.body.unreliableReason], [false, null, null]);
      const bad = await admin.put(`${API}/data-points/${holding}`, { ...stored, unreliable: 'yes' });
      assert.equal(bad.status, 422, bad.text);
    });
  });

  describe('MQTT_CLIENT: the broker cut off behind a relay', () => {
    let relay: Relay;
    let publisher: mqtt.MqttClient;
    let prefix: string;
    let source: string;
    let a: string;
    let b: string;

    before(async () => {
      relay = new Relay(await freePort(), BROKER);
      await relay.open();
      publisher = await mqtt.connectAsync(`mqtt://${BROKER.host}:${BROKER.port}`, { reconnectPeriod: 0 });
      prefix = `dds-test/${unique('rel-')}`;
      source = await create(admin, '/data-sources', { xid: unique('rel-mq-'), name: 'broker', modelType: 'MQTT_CLIENT', enabled: true, brokerUrl: `mqtt://127.0.0.1:${relay.port}` });
      a = await create(admin, '/data-points', { xid: unique('rel-a-'), name: 'a', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', topic: `${prefix}/a` } });
      b = await create(admin, '/data-points', { xid: unique('rel-b-'), name: 'b', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', topic: `${prefix}/b` } });
    });
    after(async () => {
      await publisher?.endAsync();
      await relay?.cut();
    });

    const send = (topic: string, payload: string) => publisher.publishAsync(`${prefix}/${topic}`, payload, { qos: 1 });
    const inState = (state: string) =>
      eventually(`${source} ${state}`, async () => ((await admin.get<{ state: string }>(`${API}/data-sources/${source}`)).body.state === state ? true : undefined), 20_000);

    it('marks every point when the connection is lost; after the reconnect each stays marked until its own next value', async () => {
      await inState('RUNNING');
      assert.match((await pointOf(admin, a)).unreliableReason ?? '', /: no message yet$/);
      await send('a', '1');
      await send('b', '2');
      await pointWhen(admin, a, false);
      await pointWhen(admin, b, false);
      const socket = await Socket.open(app.url, await tokenFor(admin));
      sockets.push(socket);
      socket.subscribe(b);
      await socket.next('REGISTERED', (p) => p.event === 'REGISTERED' && p.unreliable === false);

      await relay.cut();
      const lost = await pointWhen(admin, a, true);
      assert.match(lost.unreliableReason!, new RegExp(`^MQTT mqtt://127\\.0\\.0\\.1:${relay.port}: connection (lost|reset|refused)$`));
      await pointWhen(admin, b, true);
      const change = await socket.next('ATTRIBUTE_CHANGE', (p) => p.event === 'ATTRIBUTE_CHANGE');
      assert.deepEqual([change.xid, change.unreliable, change.attributes], [b, true, { UNRELIABLE: true }]);
      assert.equal((await currentValue(admin, b))?.unreliable, true);

      await inState('ERROR');
      await relay.open();
      await inState('RUNNING'); // connected and subscribed again
      assert.deepEqual([(await pointOf(admin, a)).unreliable, (await pointOf(admin, b)).unreliable], [true, true], 'a reconnect reads nothing');
      await send('a', '3');
      await pointWhen(admin, a, false);
      // The mark is cleared as the value goes into the pipeline, a moment before it is the latest one.
      const current = await eventually('3 as the current value of a', async () => {
        const v = await currentValue(admin, a);
        return v?.value === 3 ? v : undefined;
      });
      assert.equal(current.unreliable, false);
      assert.equal((await pointOf(admin, b)).unreliable, true, 'b has published nothing since');
      await send('b', '4');
      await pointWhen(admin, b, false);
      const update = await socket.next('the value of b', (p) => p.event === 'UPDATE');
      assert.deepEqual([update.value?.value, update.unreliable], [4, false]);
    });

    it('takes an unreadable payload as a warning on its point, not as a mark', async () => {
      await pointWhen(admin, a, false);
      await send('a', 'not a number');
      const warned = await eventually('a warning', async () => {
        const p = await pointOf(admin, a);
        return p.lastWarning ? p : undefined;
      });
      assert.equal(warned.unreliable, false);
    });
  });
});

const describePg = testDatabaseUrl ? describe : describe.skip;
if (!testDatabaseUrl) console.log('  skipped: unreliable points across instances need TEST_DATABASE_URL (PostgreSQL)');

describePg('unreliable points across two instances (PostgreSQL)', function () {
  this.timeout(120_000);
  let a: TestApp;
  let b: RunningService;
  let bDir: string;
  let device: Device;
  const sockets: Socket[] = [];

  /** A second instance of a's installation: same metadata and value store, its own DATA_DIR. */
  async function startOther(): Promise<RunningService> {
    const config: Config = { ...a.config, dataDir: bDir, instanceName: `${a.config.instanceName}-b` };
    return startService(config);
  }

  before(async () => {
    a = await startTestApp('postgresql', { VALUE_STORE: 'postgres' });
    bDir = await tempDir('dds-rel-b-');
    b = await startOther();
    device = new Device(await freePort());
    device.setWords(0, [7]);
    await device.start();
  });
  after(async () => {
    for (const s of sockets.splice(0)) s.close();
    await device?.stop();
    await b?.stop();
    await a?.stop();
    if (bDir) await removeDir(bDir);
  });

  it('shows the mark on the instance that does not run the source, also one started while the device is off', async () => {
    const atA = await loggedIn(a.url, 'admin', 'admin');
    const source = await create(atA, '/data-sources', modbusSource(device.port));
    const point = await create(atA, '/data-points', { xid: unique('rel-x-'), name: 'x', dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', offset: 0 } });
    const id = (await atA.get<{ id: number }>(`${API}/data-sources/${source}`)).body.id;
    const runner = await eventually('the instance running the source', async () =>
      (await a.service.services.runtime.runsHere(id)) ? 'a' : (await b.services.runtime.runsHere(id)) ? 'b' : undefined,
    );
    /** The instance that does not run the source, started afresh when asked. */
    const other = async (restart = false): Promise<string> => {
      if (runner === 'b') return restart ? (await a.restart()).url : a.url;
      if (restart) {
        await b.stop();
        b = await startOther();
      }
      return b.url;
    };
    const atRunner = await loggedIn(runner === 'a' ? a.url : b.url, 'admin', 'admin');
    let atOther = await loggedIn(await other(), 'admin', 'admin');
    await pointWhen(atOther, point, false);
    const socket = await Socket.open(await other(), await tokenFor(atOther));
    sockets.push(socket);
    socket.subscribe(point);
    await socket.next('REGISTERED', (p) => p.event === 'REGISTERED');

    await device.stop();
    const change = await socket.next('ATTRIBUTE_CHANGE on the other instance', (p) => p.event === 'ATTRIBUTE_CHANGE');
    assert.equal(change.unreliable, true);
    const seenThere = await pointWhen(atOther, point, true);
    const seenHere = await pointOf(atRunner, point);
    assert.equal(seenThere.unreliableSince, seenHere.unreliableSince, 'the same episode on both');
    assert.equal((await currentValue(atOther, point))?.unreliable, true);

    // A fresh instance knows no mark: it learns those of the sources run elsewhere when it says hello.
    socket.close();
    atOther = await loggedIn(await other(true), 'admin', 'admin');
    assert.equal((await pointWhen(atOther, point, true)).unreliableSince, seenHere.unreliableSince);

    await device.start();
    await pointWhen(atOther, point, false);
    assert.equal((await currentValue(atOther, point))?.unreliable, false);
  });
});
