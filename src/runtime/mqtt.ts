// MQTT_CLIENT driver: one broker connection per source, subscribed to its points' topics; each
// message becomes a value for every point whose topic filter matches it, and a write publishes to the
// point's topic. The connection is re-established with backoff; connection failures and an overloaded
// queue are reported to the runtime as faults, an unreadable payload as a warning on its point.
// Unreliable points: every point from the start until its first message, every point again when the
// connection is lost (cleared by each one's next message, not by the reconnect: what was published
// meanwhile is gone), and a point whose locator MQTT refuses, for good. An unreadable payload is a
// warning only: it shows that the point's publisher is there.
// Sparkplug B payloads (payloadFormat SPARKPLUG_B) are read by sparkplug.ts, on the same helpers.
// "Publish" in this file is MQTT's word (a message sent to the broker), not the live bus's.
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { backoffMs, sleep, type DriverContext, type DriverFactory, type ProducedValue, type SourceDriver } from './driver.js';
import { compileJsonPath, hasWildcards, Payload, readPayload, topicFilterProblem, TopicRouter, writePayload, type PathStep } from './mqtt-messages.js';

/** Values waiting for the pipeline beyond this are dropped, oldest first. */
export const QUEUE_LIMIT = 10_000;
/** How long stop() lets writes awaiting an acknowledgement and the DISCONNECT finish. */
export const STOP_GRACE_MS = 1_000;
export const CONNECT_TIMEOUT_MS = 10_000;
/** A write the broker has not acknowledged by then is reported as failed (the REST caller is waiting). */
export const WRITE_TIMEOUT_MS = 10_000;
/** How long a written payload is expected back from our own subscription. */
const ECHO_TTL_MS = 5_000;
export const CONNECTION = 'connection';
const OVERLOAD = 'overload';
const ACCEPT = 'accept';

export interface MqttSettings {
  brokerUrl: string;
  clientId: string;
  username: string;
  password: string;
  qos: 0 | 1 | 2;
}

/** A point as the driver uses it: its record, topic filter and compiled jsonPath. */
interface MqttPoint {
  record: DataPointRecord;
  topic: string;
  path: PathStep[] | null;
}

interface SessionEnd {
  /** The session got connected and subscribed (a later failure starts the backoff afresh). */
  established: boolean;
  reason: string;
}

export const createMqttDriver: DriverFactory = (ctx) => new MqttDriver(ctx);

class MqttDriver implements SourceDriver {
  private readonly settings: MqttSettings;
  /** "MQTT mqtt://host:port", without credentials: starts every fault and error message. */
  private readonly label: string;
  private readonly points = new Map<number, MqttPoint>();
  private readonly router = new TopicRouter<MqttPoint>();
  private readonly health: Health;
  private readonly inbox: Inbox;
  private readonly echoes = new EchoFilter();
  private readonly stopper = new AbortController();
  private readonly signal: AbortSignal;
  private readonly pendingWrites = new Set<Promise<void>>();
  /** Points whose locator MQTT refuses, with the problem: never subscribed, so never read. */
  private readonly unusable: { record: DataPointRecord; problem: string }[] = [];
  private client: MqttClient | null = null;
  private loop: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;

  constructor(private readonly ctx: DriverContext) {
    this.settings = mqttSettings(ctx.source.settings);
    this.label = `MQTT ${displayUrl(this.settings.brokerUrl)}`;
    this.signal = AbortSignal.any([ctx.signal, this.stopper.signal]);
    this.health = new Health(ctx);
    this.inbox = new Inbox(ctx, this.health, this.label, this.signal);
    for (const record of ctx.points) this.addPoint(record);
  }

  start(): Promise<void> {
    if (this.loop || this.signal.aborted) return Promise.resolve();
    if (this.ctx.unread.length > 0) this.ctx.unreliable(this.ctx.unread, `${this.label}: no message yet`);
    for (const { record, problem } of this.unusable) this.ctx.unreliable([record], problem);
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

  async write(record: DataPointRecord, value: number | boolean | string): Promise<void> {
    const point = this.points.get(record.id) ?? toMqttPoint(record);
    if (typeof point === 'string') throw new Error(`${this.label}: point '${record.xid}' ${point}`);
    if (hasWildcards(point.topic)) throw new Error(`${this.label}: cannot publish to '${point.topic}': a topic filter with wildcards names no single topic`);
    const payload = writePayload(record.dataType, value, point.path);
    if ('error' in payload) throw new Error(`${this.label}: cannot write to '${point.topic}': ${payload.error}`);
    const client = this.client;
    if (this.signal.aborted || !client?.connected || client.disconnecting) throw new Error(`${this.label}: not connected`);
    const echo = this.echoes.expect(record.id, point.topic, payload.value);
    const pending = this.publishAcknowledged(client, point.topic, payload.value);
    this.pendingWrites.add(pending);
    try {
      await pending;
    } catch (err) {
      this.echoes.forget(echo);
      throw err;
    } finally {
      this.pendingWrites.delete(pending);
    }
  }

  private addPoint(record: DataPointRecord): void {
    const point = toMqttPoint(record);
    // A locator the schema let through but MQTT refuses: reported, and never cleared by a reconnect.
    if (typeof point === 'string') {
      const problem = `${this.label}: point '${record.xid}' ${point}`;
      this.unusable.push({ record, problem });
      return this.health.fail(`config:${record.id}`, problem);
    }
    this.points.set(record.id, point);
    this.router.add(point.topic, point);
  }

  /** Connects, and after each lost connection or failed attempt waits (1 s, 2 s, 4 s … 30 s) and reconnects. */
  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.signal.aborted) {
      const end = await this.session();
      if (this.signal.aborted) break;
      this.health.fail(CONNECTION, `${this.label}: ${end.reason}`);
      this.ctx.unreliable([...this.points.values()].map((p) => p.record), `${this.label}: ${end.reason}`);
      if (end.established) attempt = 0;
      // MQTT does not poll, so the period does not stretch the backoff.
      await sleep(backoffMs(attempt++), this.signal);
    }
  }

  /** One connection, from connecting to closing; resolves when it is closed, never rejects. */
  private session(): Promise<SessionEnd> {
    return new Promise((resolve) => {
      const client = connect(this.settings.brokerUrl, clientOptions(this.ctx.source.xid, this.settings));
      this.client = client;
      let established = false;
      let reason: string | null = null; // the first error says why the session ended
      client.on('error', (err) => (reason ??= describeError(err)));
      client.on('message', (topic, payload) => this.receive(topic, payload));
      client.once('connect', () => {
        this.subscribe(client).then(
          () => {
            established = true;
            this.connected(client);
          },
          (err: unknown) => {
            reason ??= errorText(err);
            client.end(true);
          },
        );
      });
      client.once('close', () => {
        if (this.client === client) this.client = null;
        client.end(true); // clears mqtt.js timers and fails writes still awaiting an acknowledgement
        resolve({ established, reason: reason ?? (established ? 'connection lost' : 'connection closed before the broker accepted it') });
      });
    });
  }

  private async subscribe(client: MqttClient): Promise<void> {
    const filters = this.router.filters();
    if (filters.length === 0) return;
    const qos = this.settings.qos;
    const granted = await client.subscribeAsync(Object.fromEntries(filters.map((f) => [f, { qos }])));
    const refused = granted.filter((g) => g.qos === 128).map((g) => `'${g.topic}'`);
    if (refused.length > 0) throw new Error(`the broker refused the subscription to ${refused.join(', ')}`);
  }

  private connected(client: MqttClient): void {
    if (this.signal.aborted || this.client !== client) return;
    this.health.connected();
  }

  /** An incoming message: a value for each point whose filter matches. Never throws (mqtt.js callback). */
  private receive(topic: string, bytes: Buffer): void {
    if (this.signal.aborted) return;
    try {
      const points = this.router.route(topic);
      if (points.length === 0) return;
      const ts = Date.now();
      const payload = new Payload(bytes);
      for (const point of points) this.read(point, topic, payload, ts);
    } catch (err) {
      this.health.fail('receive', `${this.label}: message on '${topic}' not handled: ${errorText(err)}`);
    }
  }

  private read(point: MqttPoint, topic: string, payload: Payload, ts: number): void {
    const { record } = point;
    if (this.echoes.take(record.id, topic, payload.bytes)) return;
    const reading = readPayload(payload, record.dataType, point.path);
    if (reading === null) return;
    // One bad message is that point's problem, not the source's (the runtime counts and coalesces them).
    if ('error' in reading) return this.ctx.warn(record, `topic '${topic}': ${reading.error}`);
    this.inbox.push({ point: record, value: reading.value, ts });
  }

  private publishAcknowledged(client: MqttClient, topic: string, payload: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.label}: the broker did not acknowledge the write to '${topic}' within ${WRITE_TIMEOUT_MS / 1000} s`)), WRITE_TIMEOUT_MS);
      // QoS 0: called once the packet is written; QoS 1 and 2: once the broker acknowledged it.
      client.publish(topic, payload, { qos: this.settings.qos, retain: false }, (err) => {
        clearTimeout(timer);
        if (err) reject(new Error(`${this.label}: write to '${topic}' failed: ${err.message}`));
        else resolve();
      });
    });
  }

  private async shutdown(): Promise<void> {
    this.stopper.abort();
    this.inbox.clear();
    await within(Promise.allSettled([...this.pendingWrites]), STOP_GRACE_MS);
    const client = this.client;
    if (client) await endClient(client, STOP_GRACE_MS);
    if (this.loop) await within(this.loop, STOP_GRACE_MS);
  }
}

/** The MQTT client's options for a source (plain JSON or Sparkplug B). */
export function clientOptions(sourceXid: string, settings: Pick<MqttSettings, 'clientId' | 'username' | 'password'>): IClientOptions {
  const { clientId, username, password } = settings;
  return {
    // 3.1.1: the version every broker speaks. Reconnection is ours (with backoff), and so is the
    // subscription after each connect: hence no automatic reconnect, resubscribe or offline queue.
    protocolVersion: 4,
    reconnectPeriod: 0,
    resubscribe: false,
    queueQoSZero: false,
    clean: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    clientId: clientId || `dds_${sourceXid.replace(/[^\w-]/g, '').slice(0, 40)}_${Math.random().toString(16).slice(2, 10)}`,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}

/** Closes a client: DISCONNECT when connected, the socket destroyed when that takes longer than the grace. */
export function endClient(client: MqttClient, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.stream.destroy();
      resolve();
    }, graceMs);
    client.end(!client.connected, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Resolves when the promise settles or after ms, whichever is first. */
export function within(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}

function toMqttPoint(record: DataPointRecord): MqttPoint | string {
  const topic = record.pointLocator.topic;
  if (typeof topic !== 'string') return 'has no topic';
  const problem = topicFilterProblem(topic);
  if (problem) return `topic '${topic}' ${problem}`;
  const jsonPath = record.pointLocator.jsonPath;
  if (typeof jsonPath !== 'string' || jsonPath === '') return { record, topic, path: null };
  const path = compileJsonPath(jsonPath);
  return path ? { record, topic, path } : `jsonPath '${jsonPath}' is not a path such as $.value or items[0].v`;
}

export function mqttSettings(settings: Record<string, unknown>): MqttSettings {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const qos = settings.qos === 1 || settings.qos === 2 ? settings.qos : 0;
  return { brokerUrl: text(settings.brokerUrl), clientId: text(settings.clientId), username: text(settings.username), password: text(settings.password), qos };
}

/** The broker URL without user name and password (messages end up in lastError and events). */
export function displayUrl(brokerUrl: string): string {
  try {
    const url = new URL(brokerUrl);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return brokerUrl.replace(/\/\/[^@/]*@/, '//');
  }
}

const CONNACK_REFUSALS: Record<number, string> = {
  1: 'the broker refused the protocol version',
  2: 'the broker refused the client id',
  3: 'the broker is unavailable',
  4: 'bad user name or password',
  5: 'not authorized',
};
const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
};

/** mqtt.js errors as short, stable texts: CONNACK refusals carry a numeric code, socket errors a string one. */
export function describeError(err: Error & { code?: unknown }): string {
  if (err.message === 'connack timeout') return `no answer from the broker within ${CONNECT_TIMEOUT_MS / 1000} s`;
  if (typeof err.code === 'number') return CONNACK_REFUSALS[err.code] ?? err.message;
  if (typeof err.code === 'string') return SOCKET_ERRORS[err.code] ?? err.message;
  return err.message;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The source's open problems by key (connection, overload, a bad point locator): fault() when one
 * appears or its message changes, recovered() when the last one clears.
 */
export class Health {
  private readonly problems = new Map<string, string>();

  constructor(private readonly ctx: Pick<DriverContext, 'fault' | 'recovered'>) {}

  fail(key: string, message: string): void {
    if (this.problems.get(key) === message) return;
    this.problems.set(key, message);
    this.ctx.fault(message);
  }

  clear(key: string): void {
    if (this.problems.delete(key) && this.problems.size === 0) this.ctx.recovered();
  }

  /** Connected and subscribed: a new episode, only bad point locators and the queue's state carry over. */
  connected(): void {
    for (const key of this.problems.keys()) if (!key.startsWith('config:') && key !== OVERLOAD && key !== ACCEPT) this.problems.delete(key);
    if (this.problems.size === 0) this.ctx.recovered();
  }
}

/**
 * Values on their way to the pipeline. What arrives within one tick goes in one accept(); while an
 * accept is pending, values wait, at most QUEUE_LIMIT of them: beyond that the oldest are dropped and
 * the count is reported as a fault, cleared once the queue has drained.
 */
export class Inbox {
  private queue: ProducedValue[] = [];
  private scheduled = false;
  private accepting = false;
  private droppedSinceReport = 0;
  private droppedInEpisode = 0;
  private settledWaiters: (() => void)[] = [];

  constructor(
    private readonly ctx: Pick<DriverContext, 'accept'>,
    private readonly health: Pick<Health, 'fail' | 'clear'>,
    private readonly label: string,
    private readonly signal: AbortSignal,
    private readonly limit = QUEUE_LIMIT,
  ) {}

  push(value: ProducedValue): void {
    if (this.signal.aborted) return;
    this.queue.push(value);
    if (this.queue.length > this.limit) {
      this.queue.shift();
      this.droppedSinceReport++;
    }
    this.schedule();
  }

  clear(): void {
    this.queue = [];
    this.wake();
  }

  /** Resolves once the values pushed so far went through accept() (at once when none wait). */
  settled(): Promise<void> {
    if (this.queue.length === 0 && !this.accepting && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  private wake(): void {
    const waiters = this.settledWaiters;
    this.settledWaiters = [];
    for (const w of waiters) w();
  }

  /** One drain per tick at most, and none while an accept is pending (the drain loop takes those). */
  private schedule(): void {
    if (this.scheduled || this.accepting) return;
    this.scheduled = true;
    setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    this.scheduled = false;
    this.accepting = true;
    try {
      while (this.queue.length > 0 && !this.signal.aborted) {
        const batch = this.queue;
        this.queue = [];
        await this.ctx.accept(batch);
        this.health.clear(ACCEPT);
        this.reportDrops();
      }
    } catch (err) {
      // accept() never rejects by contract; should it, that batch is lost but collecting goes on.
      this.health.fail(ACCEPT, `${this.label}: values lost: ${errorText(err)}`);
    } finally {
      this.accepting = false;
    }
    if (this.droppedSinceReport === 0 && this.droppedInEpisode > 0) {
      this.droppedInEpisode = 0;
      this.health.clear(OVERLOAD);
    }
    if (this.queue.length > 0 && !this.signal.aborted) this.schedule();
    else this.wake();
  }

  private reportDrops(): void {
    if (this.droppedSinceReport === 0) return;
    this.droppedInEpisode += this.droppedSinceReport;
    this.droppedSinceReport = 0;
    this.health.fail(OVERLOAD, `${this.label}: ${this.droppedInEpisode} values dropped: messages arrive faster than they are stored`);
  }
}

/**
 * Our own writes come back through our subscription. The runtime stores a written value itself, so
 * the echo (same point, topic and payload, within a few seconds) is skipped once.
 */
class EchoFilter {
  private readonly expected = new Map<string, number[]>();

  expect(pointId: number, topic: string, payload: string): string {
    const key = echoKey(pointId, topic, Buffer.from(payload));
    const now = Date.now();
    for (const [k, expiries] of this.expected) if (expiries.every((t) => t < now)) this.expected.delete(k);
    this.expected.set(key, [...(this.expected.get(key) ?? []), now + ECHO_TTL_MS]);
    return key;
  }

  forget(key: string): void {
    const expiries = this.expected.get(key);
    expiries?.shift();
    if (expiries?.length === 0) this.expected.delete(key);
  }

  /** Whether this message is an expected echo (and, if so, no longer expects it). */
  take(pointId: number, topic: string, payload: Buffer): boolean {
    if (this.expected.size === 0) return false;
    const key = echoKey(pointId, topic, payload);
    const expiries = this.expected.get(key);
    if (!expiries) return false;
    const now = Date.now();
    while (expiries.length > 0 && (expiries[0] as number) < now) expiries.shift();
    const hit = expiries.length > 0;
    if (hit) expiries.shift();
    if (expiries.length === 0) this.expected.delete(key);
    return hit;
  }
}

function echoKey(pointId: number, topic: string, payload: Buffer): string {
  return `${pointId}\u0000${topic}\u0000${payload.toString('latin1')}`;
}
