// Sparkplug B on the MQTT_CLIENT source, end to end: the real service, the Mosquitto broker on
// 127.0.0.1:1883, and an edge node played by the test with payloads built by Eclipse Tahu's
// sparkplug-payload. Each test has its own group id, so that tests do not hear each other.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import mqtt from 'mqtt';
import { get as sparkplug } from 'sparkplug-payload';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError } from './helpers/assertions.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PV = '/rest/latest/point-values';
const BROKER = 'mqtt://127.0.0.1:1883';
const codec = sparkplug('spBv1.0')!;

type Payload = ReturnType<typeof codec.decodePayload>;
type Metric = NonNullable<Payload['metrics']>[number];

interface RawValue {
  timestamp: number;
  value: number | boolean | string | null;
}

interface PointView {
  xid: string;
  name: string;
  deviceName: string;
  pointLocator: { dataType: string; metricName: string; deviceId?: string };
  unreliable: boolean;
  unreliableReason: string | null;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;

/** An edge node as Sparkplug B has it: bdSeq per session, seq 0–255 over every message but NDEATH. */
class EdgeNode {
  private seq = 0;
  bdSeq = 0;

  constructor(
    private readonly client: mqtt.MqttClient,
    readonly group: string,
    readonly edge: string,
  ) {}

  private send(type: string, metrics: Metric[], device?: string, seq: number | null = this.nextSeq()): Promise<unknown> {
    const topic = `spBv1.0/${this.group}/${type}/${this.edge}${device === undefined ? '' : `/${device}`}`;
    const payload: Payload = { timestamp: Date.now(), metrics, ...(seq === null ? {} : { seq }) };
    return this.client.publishAsync(topic, Buffer.from(codec.encodePayload(payload)), { qos: 1 });
  }

  private nextSeq(): number {
    const s = this.seq;
    this.seq = (this.seq + 1) % 256;
    return s;
  }

  nbirth(metrics: Metric[]): Promise<unknown> {
    this.seq = 0;
    return this.send('NBIRTH', [{ name: 'bdSeq', type: 'UInt64', value: this.bdSeq }, { name: 'Node Control/Rebirth', type: 'Boolean', value: false }, ...metrics]);
  }

  ndata(metrics: Metric[]): Promise<unknown> {
    return this.send('NDATA', metrics);
  }

  dbirth(device: string, metrics: Metric[]): Promise<unknown> {
    return this.send('DBIRTH', metrics, device);
  }

  ddata(device: string, metrics: Metric[]): Promise<unknown> {
    return this.send('DDATA', metrics, device);
  }

  ddeath(device: string): Promise<unknown> {
    return this.send('DDEATH', [], device);
  }

  ndeath(bdSeq = this.bdSeq): Promise<unknown> {
    return this.send('NDEATH', [{ name: 'bdSeq', type: 'UInt64', value: bdSeq }], undefined, null);
  }

  /** Skips sequence numbers, as a node whose messages were lost appears. */
  skip(n: number): void {
    this.seq = (this.seq + n) % 256;
  }
}

announceEngines();
for (const engine of metadataEngines()) describe(`Sparkplug B (MQTT_CLIENT payloadFormat SPARKPLUG_B, ${engine})`, function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;
  let client: mqtt.MqttClient;
  /** Commands (NCMD/DCMD) the service sent, by topic. */
  const commands: { topic: string; payload: Payload }[] = [];

  before(async () => {
    app = await startTestApp(engine);
    admin = await loggedIn(app.url, 'admin', 'admin');
    client = await mqtt.connectAsync(BROKER, { clientId: unique('spb-test-') });
    client.on('message', (topic, bytes) => {
      if (/^spBv1\.0\/[^/]+\/(NCMD|DCMD)\//.test(topic)) commands.push({ topic, payload: codec.decodePayload(bytes) });
    });
    await client.subscribeAsync('spBv1.0/+/NCMD/#');
    await client.subscribeAsync('spBv1.0/+/DCMD/#');
  });

  after(async () => {
    await client?.endAsync();
    await app?.stop();
  });

  async function create(path: string, body: Record<string, unknown>): Promise<string> {
    const res = await admin.post<{ xid: string }>(path, body);
    assert.equal(res.status, 201, res.text);
    return res.body.xid;
  }

  function source(group: string, settings: Record<string, unknown> = {}): Promise<string> {
    return create(DS, { xid: unique('spb-'), name: `sparkplug ${group}`, modelType: 'MQTT_CLIENT', enabled: true, brokerUrl: BROKER, payloadFormat: 'SPARKPLUG_B', groupId: group, edgeNodeId: 'E1', ...settings });
  }

  async function latest(xid: string): Promise<RawValue | undefined> {
    const res = await admin.get<RawValue[]>(`${PV}/latest/${xid}`);
    assert.equal(res.status, 200, res.text);
    const v = res.body[0];
    return v && { timestamp: v.timestamp, value: v.value };
  }

  async function pointView(xid: string): Promise<PointView | undefined> {
    const res = await admin.get<PointView>(`${DP}/${xid}`);
    return res.status === 200 ? res.body : undefined;
  }

  /** Publishes until the probe holds: the source subscribes some time after it is saved. */
  function until<T>(what: string, publish: () => Promise<unknown>, probe: () => Promise<T | undefined>): Promise<T> {
    return eventually(what, async () => {
      const found = await probe();
      if (found !== undefined) return found;
      await publish();
      return undefined;
    }, 20_000, 200);
  }

  it('makes points for a BIRTH\'s metrics (createPoints), of their data types, and stores their values at the metrics\' timestamps, by alias too', async () => {
    const group = unique('G');
    const ds = await source(group, { createPoints: true });
    const edge = new EdgeNode(client, group, 'E1');
    const t0 = Date.now() - 60_000;
    const nodeMetrics: Metric[] = [
      { name: 'Temperature', alias: 1, type: 'Double', value: 20.5, timestamp: t0 },
      { name: 'Running', alias: 2, type: 'Boolean', value: true, timestamp: t0 },
      { name: 'Mode', alias: 3, type: 'String', value: 'auto', timestamp: t0 },
      { name: 'Blob', alias: 4, type: 'Bytes', value: new Uint8Array([1, 2]), timestamp: t0 },
    ];
    const temperature = await until('the points of the NBIRTH', () => edge.nbirth(nodeMetrics), () => pointView('SPB_E1_Temperature'));
    assert.deepEqual(temperature.pointLocator, { dataType: 'NUMERIC', settable: false, metricName: 'Temperature' });
    assert.equal(temperature.deviceName, 'E1');
    assert.equal((await pointView('SPB_E1_Running'))?.pointLocator.dataType, 'BINARY');
    assert.equal((await pointView('SPB_E1_Mode'))?.pointLocator.dataType, 'ALPHANUMERIC');
    assert.equal(await pointView('SPB_E1_Blob'), undefined, 'no point for a Bytes metric');
    assert.equal(await pointView('SPB_E1_bdSeq'), undefined, 'no point for bdSeq');
    const list = await admin.get<{ total: number }>(`${DP}?dataSourceXid=${ds}`);
    assert.equal(list.body.total, 3, list.text);
    // The BIRTH's values, at its metrics' timestamps, reach the points made for them.
    assert.deepEqual(await eventually('the BIRTH value', async () => latest('SPB_E1_Temperature')), { timestamp: t0, value: 20.5 });
    assert.deepEqual(await eventually('the BIRTH value', async () => latest('SPB_E1_Mode')), { timestamp: t0, value: 'auto' });

    const level = await until('the point of the DBIRTH', () => edge.dbirth('D1', [{ name: 'Level', alias: 10, type: 'Int32', value: 3, timestamp: t0 }]), () => pointView('SPB_E1_D1_Level'));
    assert.deepEqual(level.pointLocator, { dataType: 'NUMERIC', settable: false, metricName: 'Level', deviceId: 'D1' });
    // By alias only, as a node sends once its BIRTH named them.
    await until('NDATA by alias', () => edge.ndata([{ alias: 1, type: 'Double', value: 21.5, timestamp: t0 + 1_000 }]), async () => ((await latest('SPB_E1_Temperature'))?.value === 21.5 ? true : undefined));
    assert.deepEqual(await latest('SPB_E1_Temperature'), { timestamp: t0 + 1_000, value: 21.5 });
    await until('DDATA by alias', () => edge.ddata('D1', [{ alias: 10, type: 'Int32', value: 4, timestamp: t0 + 2_000 }]), async () => ((await latest('SPB_E1_D1_Level'))?.value === 4 ? true : undefined));
    assert.deepEqual(await latest('SPB_E1_D1_Level'), { timestamp: t0 + 2_000, value: 4 });
  });

  it('marks points unreliable on DDEATH and on an NDEATH of the same bdSeq (not of another); the next BIRTH clears it', async () => {
    const group = unique('G');
    const ds = await source(group);
    const temp = await create(DP, { xid: unique('spbp-'), name: 'temp', dataSourceXid: ds, pointLocator: { dataType: 'NUMERIC', metricName: 'Temperature' } });
    const level = await create(DP, { xid: unique('spbp-'), name: 'level', dataSourceXid: ds, pointLocator: { dataType: 'MULTISTATE', metricName: 'Level', deviceId: 'D1' } });
    const edge = new EdgeNode(client, group, 'E1');
    edge.bdSeq = 7;
    const births = async (t: number, l: number) => {
      await edge.nbirth([{ name: 'Temperature', alias: 1, type: 'Float', value: t }]);
      await edge.dbirth('D1', [{ name: 'Level', alias: 2, type: 'UInt16', value: l }]);
    };
    await until('the BIRTH values', () => births(1, 1), async () => ((await latest(level))?.value === 1 ? true : undefined));
    assert.equal((await pointView(temp))?.unreliable, false);
    assert.equal((await pointView(level))?.unreliable, false);

    await edge.ddeath('D1');
    const dead = await eventually('the device point unreliable', async () => {
      const p = await pointView(level);
      return p?.unreliable ? p : undefined;
    });
    assert.match(dead.unreliableReason ?? '', /device .*\/E1\/D1 is offline \(DDEATH\)/);
    assert.equal((await pointView(temp))?.unreliable, false, 'the node is alive');

    // An NDEATH of an earlier session (another bdSeq) does not end this one: the NDATA after it is stored.
    await edge.ndeath(6);
    await edge.ndata([{ alias: 1, type: 'Float', value: 2 }]);
    await eventually('the NDATA after a stale NDEATH', async () => ((await latest(temp))?.value === 2 ? true : undefined));
    assert.equal((await pointView(temp))?.unreliable, false);

    await edge.ndeath();
    const nodeDead = await eventually('the node point unreliable', async () => {
      const p = await pointView(temp);
      return p?.unreliable ? p : undefined;
    });
    assert.match(nodeDead.unreliableReason ?? '', /edge node .*\/E1 is offline \(NDEATH\)/);

    await births(5, 6);
    await eventually('the next BIRTH\'s values', async () => ((await latest(temp))?.value === 5 && (await latest(level))?.value === 6 ? true : undefined));
    assert.equal((await pointView(temp))?.unreliable, false, 'the NBIRTH cleared it');
    assert.equal((await pointView(level))?.unreliable, false, 'the DBIRTH cleared it');
  });

  it('asks for a rebirth (NCMD Node Control/Rebirth) on a sequence gap and on data before any BIRTH', async () => {
    const group = unique('G');
    const ds = await source(group, { edgeNodeId: '' });
    const temp = await create(DP, { xid: unique('spbp-'), name: 'temp', dataSourceXid: ds, pointLocator: { dataType: 'NUMERIC', metricName: 'Temperature' } });
    const edge = new EdgeNode(client, group, 'E1');
    await until('the BIRTH value', () => edge.nbirth([{ name: 'Temperature', type: 'Double', value: 1 }]), async () => ((await latest(temp))?.value === 1 ? true : undefined));
    // 300 messages: seq wraps from 255 to 0, which is no gap.
    for (let i = 0; i < 300; i++) await edge.ndata([{ name: 'Temperature', type: 'Double', value: i }]);
    await eventually('the NDATA in sequence', async () => ((await latest(temp))?.value === 299 ? true : undefined));
    const rebirths = (edgeId: string) => commands.filter((c) => c.topic === `spBv1.0/${group}/NCMD/${edgeId}`);
    assert.equal(rebirths('E1').length, 0, 'no rebirth while in sequence, across the wrap');

    edge.skip(3);
    await edge.ndata([{ name: 'Temperature', type: 'Double', value: 3 }]);
    const [asked] = await eventually('the NCMD after the gap', async () => (rebirths('E1').length > 0 ? rebirths('E1') : undefined));
    assert.deepEqual(
      asked!.payload.metrics?.map((m) => [m.name, m.type, m.value]),
      [['Node Control/Rebirth', 'Boolean', true]],
    );

    // Another edge node of the group (edgeNodeId empty: all of them) whose NBIRTH was never seen.
    const other = new EdgeNode(client, group, 'E2');
    other.skip(4);
    await other.ndata([{ name: 'Temperature', type: 'Double', value: 9 }]);
    await eventually('the NCMD to the unknown node', async () => (rebirths('E2').length > 0 ? true : undefined));
    assert.notEqual((await latest(temp))?.value, 9, 'data before a BIRTH is not stored');
  });

  it('writes a settable point with a DCMD carrying the metric, as its BIRTH typed it; a value the type cannot hold is a 422', async () => {
    const group = unique('G');
    const ds = await source(group);
    const level = await create(DP, { xid: unique('spbp-'), name: 'level', dataSourceXid: ds, pointLocator: { dataType: 'NUMERIC', settable: true, metricName: 'Setpoint', deviceId: 'D1' }, setPermission: ['user'] });
    const blob = await create(DP, { xid: unique('spbp-'), name: 'blob', dataSourceXid: ds, pointLocator: { dataType: 'NUMERIC', metricName: 'Blob', deviceId: 'D1' } });
    const edge = new EdgeNode(client, group, 'E1');
    await until(
      'the BIRTH value',
      async () => {
        await edge.nbirth([]);
        await edge.dbirth('D1', [
          { name: 'Setpoint', alias: 5, type: 'Int32', value: 10 },
          { name: 'Blob', alias: 6, type: 'Bytes', value: new Uint8Array([1]) },
        ]);
      },
      async () => ((await latest(level))?.value === 10 ? true : undefined),
    );
    const warned = await eventually('the warning on the point of a Bytes metric', async () => {
      const p = await admin.get<{ lastWarning: string | null }>(`${DP}/${blob}`);
      return p.body.lastWarning ?? undefined;
    });
    assert.match(warned, /^metric 'Blob' of .*\/E1\/D1 is of type Bytes, which no point holds$/);
    const res = await admin.put(`${PV}/${level}`, { dataType: 'NUMERIC', value: 12 });
    assert.equal(res.status, 200, res.text);
    const sent = await eventually('the DCMD', async () => commands.find((c) => c.topic === `spBv1.0/${group}/DCMD/E1/D1`));
    assert.deepEqual(
      sent.payload.metrics?.map((m) => [m.name, m.type, m.value]),
      [['Setpoint', 'Int32', 12]],
    );
    assert.equal((await latest(level))?.value, 12, 'answered with the value sent');
    const refused = await admin.put(`${PV}/${level}`, { dataType: 'NUMERIC', value: 12.5 });
    assertError(refused, 422, 4002);
    assert.match(refused.text, /not an integer \(metric type Int32\)/);
  });

  it('reads the README\'s edge node (scripts/sparkplug-edge.mjs): points made from its BIRTHs, values by alias, a write answered by its DDATA', async () => {
    const group = unique('G');
    await source(group, { edgeNodeId: 'Line1', createPoints: true });
    const edge = spawn(process.execPath, ['scripts/sparkplug-edge.mjs', '--group', group, '--interval', '200'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    edge.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      // The source may subscribe after the first BIRTHs: its rebirth request brings them again.
      const speed = await eventually('the device point', () => pointView('SPB_Line1_Pump1_Speed'), 20_000);
      assert.equal(speed.pointLocator.dataType, 'NUMERIC');
      const seen = new Set<unknown>();
      await eventually('changing values', async () => {
        seen.add((await latest('SPB_Line1_Temperature'))?.value);
        return seen.size >= 3 ? true : undefined;
      }, 20_000, 300);
      const patched = await admin.patch(`${DP}/SPB_Line1_Pump1_Setpoint`, { pointLocator: { dataType: 'NUMERIC', settable: true, metricName: 'Setpoint', deviceId: 'Pump1' } });
      assert.equal(patched.status, 200, patched.text);
      await eventually('the restarted source', async () => {
        const res = await admin.put(`${PV}/SPB_Line1_Pump1_Setpoint`, { dataType: 'NUMERIC', value: 62.5 });
        return res.status === 200 ? true : undefined;
      });
      await eventually('the edge node applied the DCMD', async () => (out.includes(`spBv1.0/${group}/DCMD/Line1/Pump1: Setpoint = 62.5`) ? true : undefined));
    } finally {
      edge.kill('SIGTERM');
    }
    await eventually('its NDEATH marks the points unreliable', async () => ((await pointView('SPB_Line1_Temperature'))?.unreliable ? true : undefined));
  });

  it('refuses bad Sparkplug fields with 422', async () => {
    const base = { name: 'bad', modelType: 'MQTT_CLIENT', brokerUrl: BROKER };
    for (const [field, value] of [
      ['payloadFormat', 'XML'],
      ['groupId', 'a/b'],
      ['groupId', 'g#'],
      ['edgeNodeId', '+'],
      ['createPoints', 'yes'],
    ] as const) {
      const res = await admin.post(DS, { ...base, [field]: value });
      const body = assertError(res, 422, 4002);
      assert.ok(JSON.stringify(body).includes(field), `${field}: ${res.text}`);
    }
    const ds = await source(unique('G'));
    for (const locator of [{ dataType: 'NUMERIC', topic: 'a/b' }, { dataType: 'NUMERIC', metricName: '' }, { dataType: 'NUMERIC', metricName: 'm', deviceId: 'd/1' }]) {
      const res = await admin.post(DP, { name: 'bad', dataSourceXid: ds, pointLocator: locator });
      assertError(res, 422, 4002);
    }
  });
});
