// MQTT_CLIENT with payloadFormat SPARKPLUG_B: a Sparkplug B host application (not the primary one:
// it publishes no STATE). One broker connection per source, subscribed to spBv1.0/<groupId>/+/<edge
// node or +>/#. NBIRTH/DBIRTH define the node's and its devices' metrics (names, types, aliases) and
// carry their values; NDATA/DDATA carry values, each at its metric's timestamp, by name or by the
// alias the BIRTH gave; a point is a metric by locator {metricName, deviceId?}. NDEATH (whose bdSeq
// matches the NBIRTH's) and DDEATH mark the points of the node or device unreliable until its next
// BIRTH. Sequence numbers (0–255, wrapping) are checked per edge node: a gap, or data from a node or
// device whose BIRTH was not seen, asks the node for a rebirth (NCMD Node Control/Rebirth = true).
// With createPoints, a BIRTH's metrics that match no point make points (one restart of the source
// for all of them); what the driver knew (births, sequence numbers) and the BIRTH's values for the
// new points are handed to the restarted driver. A write sends an NCMD/DCMD carrying the metric and
// is answered with the value sent: Sparkplug has no read-back, the device's next DATA updates the point.
import { connect, type MqttClient } from 'mqtt';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { backoffMs, sleep, type DriverContext, type DriverFactory, type NewPoint, type SourceDriver } from './driver.js';
import { clientOptions, CONNECTION, describeError, displayUrl, endClient, errorText, Health, Inbox, mqttSettings, STOP_GRACE_MS, within, WRITE_TIMEOUT_MS, type MqttSettings } from './mqtt.js';
import type { PointValue } from './mqtt-messages.js';
import {
  commandMetric,
  commandTopic,
  createdPointXid,
  dataTypeFor,
  isControlMetric,
  nextSeq,
  parseTopic,
  readMetric,
  subscriptionFilter,
  toNumber,
  type SparkplugTopic,
} from './sparkplug-messages.js';

/** A node is asked for a rebirth at most this often (its data keeps coming until the BIRTH). */
const REBIRTH_INTERVAL_MS = 5_000;
const NAME_MAX = 255;
/** A restart for points made or an edit takes a moment; what a source stopped longer ago knew may be stale. */
const CARRY_TTL_MS = 30_000;

type Codec = NonNullable<ReturnType<typeof import('sparkplug-payload').get>>;
type Payload = ReturnType<Codec['decodePayload']>;
type Metric = NonNullable<Payload['metrics']>[number];

/** The metrics a BIRTH defined: their types by name, and names by alias. */
interface Birth {
  types: Map<string, string | undefined>;
  names: Map<number, string>;
}

/** What is known of an edge node: its NBIRTH (null before it or after its NDEATH), its devices', its sequence. */
interface NodeState {
  group: string;
  edge: string;
  bdSeq: number | undefined;
  seq: number | undefined;
  node: Birth | null;
  devices: Map<string, Birth>;
  rebirthAskedAt: number;
}

/** A BIRTH's value for a metric a point is being made for. */
interface PendingValue {
  key: string;
  value: unknown;
  metricType: string | undefined;
  ts: number;
}

/** What a driver hands to its successor when points it made restart the source. */
interface CarryOver {
  /** When the previous driver stopped (or asked for points): older knowledge is not taken over. */
  at: number;
  settings: string;
  nodes: Map<string, NodeState>;
  pending: PendingValue[];
}

const carried = new Map<number, CarryOver>();

/** Which point(s) a metric feeds: device ('' for the node) and metric name. */
function metricKey(device: string | undefined, name: string): string {
  return `${device ?? ''}\u0000${name}`;
}

interface SparkplugSettings extends MqttSettings {
  groupId: string;
  edgeNodeId: string;
  createPoints: boolean;
}

function sparkplugSettings(settings: Record<string, unknown>): SparkplugSettings {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { ...mqttSettings(settings), groupId: text(settings.groupId) || '+', edgeNodeId: text(settings.edgeNodeId), createPoints: settings.createPoints === true };
}

export const createSparkplugDriver: DriverFactory = (ctx) => new SparkplugDriver(ctx);

class SparkplugDriver implements SourceDriver {
  private readonly settings: SparkplugSettings;
  private readonly label: string;
  /** Points by metric key. */
  private readonly points = new Map<string, DataPointRecord[]>();
  private readonly unusable: { record: DataPointRecord; problem: string }[] = [];
  private readonly health: Health;
  private readonly inbox: Inbox;
  private readonly stopper = new AbortController();
  private readonly signal: AbortSignal;
  private nodes = new Map<string, NodeState>();
  /** Metric keys a BIRTH is making points for (asked once per driver). */
  private readonly making = new Set<string>();
  private codec: Codec | null = null;
  private client: MqttClient | null = null;
  private loop: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;

  constructor(private readonly ctx: DriverContext) {
    this.settings = sparkplugSettings(ctx.source.settings);
    this.label = `Sparkplug B ${displayUrl(this.settings.brokerUrl)}`;
    this.signal = AbortSignal.any([ctx.signal, this.stopper.signal]);
    this.health = new Health(ctx);
    this.inbox = new Inbox(ctx, this.health, this.label, this.signal);
    for (const record of ctx.points) {
      const { metricName, deviceId } = record.pointLocator;
      if (typeof metricName !== 'string' || metricName === '') {
        this.unusable.push({ record, problem: `${this.label}: point '${record.xid}' has no metricName` });
        continue;
      }
      const key = metricKey(typeof deviceId === 'string' ? deviceId : undefined, metricName);
      this.points.set(key, [...(this.points.get(key) ?? []), record]);
    }
  }

  start(): Promise<void> {
    if (this.loop || this.signal.aborted) return Promise.resolve();
    if (this.ctx.unread.length > 0) this.ctx.unreliable(this.ctx.unread, `${this.label}: no message yet`);
    for (const { record, problem } of this.unusable) {
      this.health.fail(`config:${record.id}`, problem);
      this.ctx.unreliable([record], problem);
    }
    this.takeOver();
    if (!this.settings.brokerUrl) {
      this.health.fail(CONNECTION, `${this.label}: no broker URL`);
      this.ctx.unreliable(this.ctx.points, `${this.label}: no broker URL`);
      return Promise.resolve();
    }
    this.loop = this.run().catch((err: unknown) => this.health.fail(CONNECTION, `${this.label}: ${errorText(err)}`));
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  async write(record: DataPointRecord, value: PointValue): Promise<void> {
    const { metricName, deviceId } = record.pointLocator;
    if (typeof metricName !== 'string') throw new Error(`${this.label}: point '${record.xid}' has no metricName`);
    const device = typeof deviceId === 'string' ? deviceId : undefined;
    const node = this.nodeOf(device, metricName);
    if (!node) throw new Error(`${this.label}: no BIRTH has defined metric '${metricName}'${device === undefined ? '' : ` of device '${device}'`} yet: its edge node is unknown`);
    const birth = device === undefined ? node.node : node.devices.get(device);
    const metric = commandMetric(metricName, birth?.types.get(metricName), record.dataType, value);
    if ('error' in metric) throw new TypeError(`${this.label}: cannot write metric '${metricName}': ${metric.error}`);
    const client = this.client;
    if (this.signal.aborted || !this.codec || !client?.connected || client.disconnecting) throw new Error(`${this.label}: not connected`);
    const topic = commandTopic(node.group, node.edge, device);
    await this.publish(client, topic, { timestamp: Date.now(), metrics: [metric.value] });
  }

  /** The node whose BIRTH defined the metric last; with a fixed group and edge node, that one. */
  private nodeOf(device: string | undefined, name: string): NodeState | undefined {
    for (const node of this.nodes.values()) {
      const birth = device === undefined ? node.node : node.devices.get(device);
      if (birth?.types.has(name)) return node;
    }
    const { groupId, edgeNodeId } = this.settings;
    if (groupId !== '+' && edgeNodeId) return this.nodes.get(`${groupId}/${edgeNodeId}`) ?? newNode(groupId, edgeNodeId);
    return undefined;
  }

  /** What the previous driver of this source knew, and the values of points it made. */
  private takeOver(): void {
    const carry = carried.get(this.ctx.source.id);
    carried.delete(this.ctx.source.id);
    if (!carry || carry.settings !== JSON.stringify(this.ctx.source.settings) || Date.now() - carry.at > CARRY_TTL_MS) return;
    this.nodes = carry.nodes;
    for (const p of carry.pending) {
      for (const point of this.points.get(p.key) ?? []) {
        const reading = readMetric(point.dataType, p.metricType, p.value);
        if ('value' in reading) this.inbox.push({ point, value: reading.value, ts: p.ts });
      }
    }
  }

  private async run(): Promise<void> {
    const module = await import('sparkplug-payload');
    this.codec = module.get('spBv1.0');
    let attempt = 0;
    while (!this.signal.aborted) {
      const end = await this.session();
      if (this.signal.aborted) break;
      this.health.fail(CONNECTION, `${this.label}: ${end.reason}`);
      this.ctx.unreliable(this.ctx.points, `${this.label}: ${end.reason}`);
      if (end.established) attempt = 0;
      await sleep(backoffMs(attempt++), this.signal);
    }
  }

  private session(): Promise<{ established: boolean; reason: string }> {
    return new Promise((resolve) => {
      const client = connect(this.settings.brokerUrl, clientOptions(this.ctx.source.xid, this.settings));
      this.client = client;
      let established = false;
      let reason: string | null = null;
      client.on('error', (err) => (reason ??= describeError(err)));
      client.on('message', (topic, payload) => this.receive(topic, payload));
      client.once('connect', () => {
        const filter = subscriptionFilter(this.settings.groupId, this.settings.edgeNodeId);
        client.subscribeAsync(filter, { qos: this.settings.qos }).then(
          (granted) => {
            if (granted.some((g) => g.qos === 128)) throw new Error(`the broker refused the subscription to '${filter}'`);
            established = true;
            if (!this.signal.aborted && this.client === client) this.health.connected();
          },
          (err: unknown) => {
            reason ??= errorText(err);
            client.end(true);
          },
        );
      });
      client.once('close', () => {
        if (this.client === client) this.client = null;
        client.end(true);
        resolve({ established, reason: reason ?? (established ? 'connection lost' : 'connection closed before the broker accepted it') });
      });
    });
  }

  /** A message (mqtt.js callback): never throws. */
  private receive(topic: string, bytes: Buffer): void {
    if (this.signal.aborted || !this.codec) return;
    const t = parseTopic(topic);
    if (!t) return;
    let payload: Payload;
    try {
      payload = this.codec.decodePayload(bytes);
    } catch {
      return this.health.fail('receive', `${this.label}: message on '${topic}' is not a Sparkplug B payload`);
    }
    try {
      this.handle(t, payload);
      this.health.clear('receive'); // an unreadable message was one message's problem
    } catch (err) {
      this.health.fail('receive', `${this.label}: message on '${topic}' not handled: ${errorText(err)}`);
    }
  }

  private handle(t: SparkplugTopic, payload: Payload): void {
    const nodeKey = `${t.group}/${t.edge}`;
    const seq = toNumber(payload.seq);
    if (t.type === 'NBIRTH') {
      const node = newNode(t.group, t.edge);
      node.bdSeq = bdSeqOf(payload);
      node.seq = seq;
      node.node = defineBirth(payload);
      this.nodes.set(nodeKey, node);
      return this.born(node, undefined, node.node, payload);
    }
    const node = this.nodes.get(nodeKey);
    if (t.type === 'NDEATH') {
      if (!node?.node) return;
      const bdSeq = bdSeqOf(payload);
      // A DEATH of an earlier session (the broker's will, delivered late) is not this one's.
      if (bdSeq !== undefined && node.bdSeq !== undefined && bdSeq !== node.bdSeq) return;
      this.died(node, undefined, `edge node ${nodeKey} is offline (NDEATH)`);
      node.node = null;
      node.devices.clear();
      return;
    }
    if (!node?.node) return this.askRebirth(node ?? this.remember(newNode(t.group, t.edge)), `${t.type} before the edge node's NBIRTH`);
    if (seq !== undefined && node.seq !== undefined && seq !== nextSeq(node.seq)) this.askRebirth(node, `sequence gap: ${nextSeq(node.seq)} expected, ${seq} received`);
    node.seq = seq ?? node.seq;
    const device = t.device;
    switch (t.type) {
      case 'NDATA':
        return this.values(node, undefined, node.node, payload);
      case 'DBIRTH': {
        const birth = defineBirth(payload);
        node.devices.set(device!, birth);
        return this.born(node, device, birth, payload);
      }
      case 'DDATA': {
        const birth = node.devices.get(device!);
        if (!birth) return this.askRebirth(node, `DDATA of device ${device} before its DBIRTH`);
        return this.values(node, device, birth, payload);
      }
      case 'DDEATH':
        this.died(node, device, `device ${nodeKey}/${device} is offline (DDEATH)`);
        node.devices.delete(device!);
        return;
    }
  }

  private remember(node: NodeState): NodeState {
    this.nodes.set(`${node.group}/${node.edge}`, node);
    return node;
  }

  /** A BIRTH: its values, and (createPoints) points for its metrics that have none. */
  private born(node: NodeState, device: string | undefined, birth: Birth, payload: Payload): void {
    this.values(node, device, birth, payload);
    if (!this.settings.createPoints || !this.ctx.createPoints) return;
    const made: NewPoint[] = [];
    const pending: PendingValue[] = [];
    for (const metric of payload.metrics ?? []) {
      const name = metric.name;
      if (!name || isControlMetric(name)) continue;
      const key = metricKey(device, name);
      const dataType = dataTypeFor(metric.type);
      if (this.points.has(key) || this.making.has(key) || dataType === null) continue;
      this.making.add(key);
      made.push({
        xid: createdPointXid(node.edge, device, name),
        name: name.slice(0, NAME_MAX),
        deviceName: (device ?? node.edge).slice(0, NAME_MAX),
        pointLocator: { dataType, settable: false, metricName: name, ...(device === undefined ? {} : { deviceId: device }) },
      });
      if (!metric.isNull && metric.value !== null && metric.value !== undefined) pending.push({ key, value: metric.value, metricType: metric.type, ts: timestampOf(metric, payload) });
    }
    if (made.length === 0) return;
    // Handed over before the points exist: making them restarts the source, and its next driver starts with them.
    const carry = carried.get(this.ctx.source.id) ?? { at: Date.now(), settings: JSON.stringify(this.ctx.source.settings), nodes: this.nodes, pending: [] };
    carry.at = Date.now();
    carry.pending.push(...pending);
    carried.set(this.ctx.source.id, carry);
    this.ctx.createPoints(made).then(
      () => this.health.clear('create'),
      (err: unknown) => this.health.fail('create', `${this.label}: points for ${made.map((m) => `'${m.name}'`).join(', ')} not made: ${errorText(err)}`),
    );
  }

  /** The metrics' values to their points, at each metric's timestamp. */
  private values(node: NodeState, device: string | undefined, birth: Birth, payload: Payload): void {
    for (const metric of payload.metrics ?? []) {
      const alias = toNumber(metric.alias);
      const name = metric.name || (alias === undefined ? undefined : birth.names.get(alias));
      if (name === undefined) {
        this.askRebirth(node, `alias ${alias} that no BIRTH defined`);
        continue;
      }
      const points = this.points.get(metricKey(device, name));
      if (!points || metric.isNull || metric.value === null || metric.value === undefined) continue;
      const type = metric.type ?? birth.types.get(name);
      const ts = timestampOf(metric, payload);
      for (const point of points) {
        const reading = readMetric(point.dataType, type, metric.value);
        if ('error' in reading) this.ctx.warn(point, `metric '${name}' of ${node.group}/${node.edge}${device === undefined ? '' : `/${device}`} ${reading.error}`);
        else this.inbox.push({ point, value: reading.value, ts });
      }
    }
  }

  /** A DEATH: the points of the node (and its devices), or of the device, are unreliable until the next BIRTH. */
  private died(node: NodeState, device: string | undefined, reason: string): void {
    const births = device === undefined ? [[undefined, node.node] as const, ...[...node.devices].map(([d, b]) => [d, b] as const)] : [[device, node.devices.get(device)] as const];
    const dead: DataPointRecord[] = [];
    for (const [d, birth] of births) for (const name of birth?.types.keys() ?? []) dead.push(...(this.points.get(metricKey(d, name)) ?? []));
    if (dead.length === 0) return;
    // After the values received before the DEATH are stored (storing one clears its point's mark),
    // unless a BIRTH came meanwhile.
    const key = `${node.group}/${node.edge}`;
    void this.inbox.settled().then(() => {
      const current = this.nodes.get(key);
      const reborn = current !== node || (device === undefined ? node.node !== null : node.devices.has(device));
      if (!reborn && !this.signal.aborted) this.ctx.unreliable(dead, `${this.label}: ${reason}`);
    });
  }

  /** NCMD Node Control/Rebirth = true, at most once per REBIRTH_INTERVAL_MS per node. */
  private askRebirth(node: NodeState, why: string): void {
    const now = Date.now();
    const client = this.client;
    if (!this.codec || !client?.connected || now - node.rebirthAskedAt < REBIRTH_INTERVAL_MS) return;
    node.rebirthAskedAt = now;
    const metric = { name: 'Node Control/Rebirth', type: 'Boolean', value: true, timestamp: now };
    this.publish(client, commandTopic(node.group, node.edge), { timestamp: now, metrics: [metric] }).then(
      () => undefined,
      (err: unknown) => this.health.fail('rebirth', `${this.label}: asking ${node.group}/${node.edge} for a rebirth (${why}) failed: ${errorText(err)}`),
    );
  }

  /** Publishes a command (QoS 0, as Sparkplug has commands sent); resolves once it is written. */
  private publish(client: MqttClient, topic: string, payload: { timestamp: number; metrics: { name: string; type: string; value: PointValue; timestamp: number }[] }): Promise<void> {
    const bytes = Buffer.from(this.codec!.encodePayload(payload as Payload));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.label}: the command to '${topic}' was not sent within ${WRITE_TIMEOUT_MS / 1000} s`)), WRITE_TIMEOUT_MS);
      client.publish(topic, bytes, { qos: 0, retain: false }, (err) => {
        clearTimeout(timer);
        if (err) reject(new Error(`${this.label}: command to '${topic}' failed: ${err.message}`));
        else resolve();
      });
    });
  }

  private async shutdown(): Promise<void> {
    this.stopper.abort();
    this.inbox.clear();
    // The next driver of this source (a restart for points made, or an edit) continues from what is known.
    const carry = carried.get(this.ctx.source.id);
    if (carry) Object.assign(carry, { at: Date.now(), nodes: this.nodes });
    else carried.set(this.ctx.source.id, { at: Date.now(), settings: JSON.stringify(this.ctx.source.settings), nodes: this.nodes, pending: [] });
    const client = this.client;
    if (client) await endClient(client, STOP_GRACE_MS);
    if (this.loop) await within(this.loop, STOP_GRACE_MS);
  }
}

function newNode(group: string, edge: string): NodeState {
  return { group, edge, bdSeq: undefined, seq: undefined, node: null, devices: new Map(), rebirthAskedAt: 0 };
}

function defineBirth(payload: Payload): Birth {
  const birth: Birth = { types: new Map(), names: new Map() };
  for (const metric of payload.metrics ?? []) {
    if (!metric.name) continue;
    birth.types.set(metric.name, metric.type);
    const alias = toNumber(metric.alias);
    if (alias !== undefined) birth.names.set(alias, metric.name);
  }
  return birth;
}

function bdSeqOf(payload: Payload): number | undefined {
  const metric = payload.metrics?.find((m: Metric) => m.name === 'bdSeq');
  return metric ? toNumber(metric.value) : undefined;
}

function timestampOf(metric: Metric, payload: Payload): number {
  return toNumber(metric.timestamp) ?? toNumber(payload.timestamp) ?? Date.now();
}
