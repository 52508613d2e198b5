// /websocket/point-value: clients subscribe to points by XID and receive their live values.
// Subscriptions are indexed by point id and the whole server holds one bus listener; each message
// is serialised once per (point, event) and the same string goes to every subscriber.
//
// TERMINATE (the contract leaves it open): sent when a point stops being live, i.e. it or its data
// source is disabled; the subscription stays, and REGISTERED follows when it is enabled again (the
// contract has no INITIALIZE). When the XID stops naming a point the subscriber may read (the point
// or its source was deleted, the XID renamed, the read permission withdrawn), TERMINATE is sent with
// "value": null and the subscription ends. Like every event, it goes only to those who asked for it;
// the first REGISTERED, the answer to a subscription, is always sent.
//
// Every OK payload says whether the point's source can read it now: `unreliable` (with
// `unreliableSince` and `unreliableReason` while true). ATTRIBUTE_CHANGE, as Mango's, is sent when
// that (or the reason) changes, whether or not a value follows (the device went off; it is back and
// the value read next is an UPDATE after it), with `value: null` and Mango's `attributes: {"UNRELIABLE": …}`.
import type { Logger } from 'pino';
import type { RawData } from 'ws';
import { depthExceededAt } from '../core/json.js';
import { badCharacterIn, badTextMessages, mayHoldBadText } from '../core/text.js';
import type { LiveValue } from '../values/live/bus.js';
import type { DataPointService } from '../services/data-points.js';
import type { DataSourceService } from '../services/data-sources.js';
import type { PointValueService } from '../services/point-values.js';
import { hasPermission } from '../services/permissions.js';
import { unreliableJsonMembers, type Unreliability } from '../values/live/reliability.js';
import { apiValue } from '../values/ingest/types.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { StoredValue } from '../store/values/types.js';
import type { Connection } from './websocket-connection.js';
import { errorMessage, type Channel, type ErrorType } from './websocket-channel.js';

const EVENT_TYPES = ['UPDATE', 'CHANGE', 'SET', 'REGISTERED', 'TERMINATE', 'ATTRIBUTE_CHANGE'] as const;
type PointEvent = (typeof EVENT_TYPES)[number];
const BIT: Record<PointEvent, number> = { UPDATE: 1, CHANGE: 2, SET: 4, REGISTERED: 8, TERMINATE: 16, ATTRIBUTE_CHANGE: 32 };

// Values that arrive while a subscription's REGISTERED is being prepared wait here (bounded).
const MAX_EARLY_MESSAGES = 1_000;

interface Subscription {
  /** The XID the client subscribed with (a rename ends the subscription). */
  xid: string;
  mask: number;
  /** Set while REGISTERED is pending: live messages wait so none is lost or sent before it. */
  early: { ts: number; event: PointEvent; text: Buffer }[] | undefined;
}

/** A point with at least one subscriber. `enabled` follows the point and its source. */
interface WatchedPoint {
  point: DataPointRecord;
  enabled: boolean;
  subscribers: Map<Connection, Subscription>;
  /** Ends the bus follow of this point. */
  unfollow: () => void;
}

/** A client message: the subscription's XID and its event types as a bit mask (0: unsubscribe). */
interface SubscribeRequest {
  xid: string;
  mask: number;
}

export interface PointValueLimits {
  /** Points one connection may follow at once. */
  maxSubscriptions: number;
  /** JSON_MAX_DEPTH: a message nesting deeper is refused before it is parsed. */
  maxJsonDepth: number;
}

/** A message the channel answers with an error instead of acting on it. */
interface Refusal {
  type: ErrorType;
  message: string;
}

/** The contract's error types leave SERVER_ERROR for a malformed request. */
const malformed = (message: string): Refusal => ({ type: 'SERVER_ERROR', message });

function parseRequest(data: RawData, isBinary: boolean, maxDepth: number): SubscribeRequest | Refusal {
  if (isBinary) return malformed('Messages must be JSON text: {"xid", "eventTypes": [...]}');
  const text = data.toString();
  if (depthExceededAt(text, maxDepth) !== -1) return malformed(`Malformed request: the message nests deeper than ${maxDepth} levels (JSON_MAX_DEPTH)`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return malformed('Malformed JSON: expected {"xid", "eventTypes": [...]}');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return malformed('Expected an object {"xid", "eventTypes": [...]}');
  const { xid, eventTypes } = body as { xid?: unknown; eventTypes?: unknown };
  if (typeof xid !== 'string' || xid === '') return malformed('xid must be a non-empty string');
  const badText = mayHoldBadText(text) ? textRefusal(xid, body) : undefined;
  if (badText) return badText;
  if (!Array.isArray(eventTypes)) return malformed(`eventTypes must be an array of ${EVENT_TYPES.join(', ')}`);
  let mask = 0;
  for (const type of eventTypes) {
    if (!EVENT_TYPES.includes(type as PointEvent)) return malformed(`Unknown event type ${JSON.stringify(type)}: expected ${EVENT_TYPES.join(', ')}`);
    mask |= BIT[type as PointEvent];
  }
  return { xid, mask };
}

/**
 * Text the stores cannot hold (core/text.ts) names nothing that can exist: an XID holding it is
 * not found, without asking the store; any other such string is the client's mistake, which the
 * contract's error types can only call NOT_FOUND (SERVER_ERROR would blame the service).
 */
function textRefusal(xid: string, body: object): Refusal | undefined {
  if (badCharacterIn(xid) !== undefined) return { type: 'NOT_FOUND', message: notFound(xid) };
  const [bad] = badTextMessages(body);
  return bad && { type: 'NOT_FOUND', message: `Malformed request: ${bad.property || 'the message'} ${bad.message}` };
}

function notFound(xid: string): string {
  return `Data point not found: ${xid}`;
}

function rawLength(data: RawData): number {
  return Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
}

function valueJson(dataType: string, v: StoredValue | undefined): string {
  if (!v) return 'null';
  return JSON.stringify({ dataType, value: apiValue(dataType, v), timestamp: v.ts, annotation: v.annotation });
}

/** Encoded once and sent as is to every subscriber (ws would otherwise encode it per socket). */
function okMessage(xid: string, event: PointEvent, value: string, enabled: boolean, mark: Unreliability | undefined): Buffer {
  const attributes = event === 'ATTRIBUTE_CHANGE' ? `,"attributes":{"UNRELIABLE":${mark !== undefined}}` : '';
  return Buffer.from(
    `{"status":"OK","payload":{"xid":${JSON.stringify(xid)},"event":"${event}","value":${value},"enabled":${enabled},${unreliableJsonMembers(mark)}${attributes}}}`,
  );
}

function differs(a: StoredValue, b: StoredValue | undefined): boolean {
  return b === undefined || a.text !== b.text || !Object.is(a.value, b.value);
}

/** The events one live value is: UPDATE for a new newest value, CHANGE when it differs, SET when set. */
function eventsOf(v: LiveValue): PointEvent[] {
  const newest = v.previous === undefined || v.value.ts >= v.previous.ts;
  const events: PointEvent[] = [];
  if (newest) events.push('UPDATE');
  if (newest && differs(v.value, v.previous)) events.push('CHANGE');
  if (v.kind === 'SET') events.push('SET');
  return events;
}

export interface PointValueChannelDeps {
  pointValues: PointValueService;
  dataPoints: DataPointService;
  dataSources: DataSourceService;
}

export class PointValueChannel implements Channel {
  private readonly watched = new Map<number, WatchedPoint>();
  /** Per connection: subscribed XID → point id. */
  private readonly sockets = new Map<Connection, Map<string, number>>();
  private busOff: (() => void) | undefined;
  private readonly reliabilityOff: () => void;
  private closed = false;

  constructor(
    private readonly s: PointValueChannelDeps,
    private readonly log: Logger,
    private readonly limits: PointValueLimits,
  ) {
    const report = (err: unknown) => this.log.warn({ err }, 'websocket: following a point change failed');
    // Awaited by the API: a client that changed a point hears the TERMINATE before its answer.
    s.dataPoints.onChange({ pointChanged: (p) => this.pointChanged(p.id).catch(report) });
    s.dataSources.onChange({
      sourceSaved: (ds) => this.sourceChanged(ds.id, ds.enabled).catch(report),
      sourceDeleted: (ds) => this.sourceDeleted(ds.id),
    });
    this.reliabilityOff = s.pointValues.reliability.onChange((ids) => this.reliabilityChanged(ids));
  }

  get watchedPoints(): number {
    return this.watched.size;
  }

  open(conn: Connection): void {
    const subscriptions = new Map<string, number>();
    this.sockets.set(conn, subscriptions);
    conn.ws.on('message', (data, isBinary) => conn.enqueue(rawLength(data), () => this.handle(conn, parseRequest(data, isBinary, this.limits.maxJsonDepth))));
    conn.onRelease(() => {
      this.sockets.delete(conn);
      for (const id of subscriptions.values()) this.removeSubscriber(id, conn);
    });
  }

  close(): void {
    this.closed = true;
    this.reliabilityOff();
    this.busOff?.();
    this.busOff = undefined;
  }

  private async handle(conn: Connection, request: SubscribeRequest | Refusal): Promise<void> {
    if ('type' in request) return conn.send(errorMessage(request.type, request.message));
    const subscriptions = this.sockets.get(conn);
    if (!subscriptions) return;
    if (request.mask === 0) return this.unsubscribe(conn, subscriptions, request.xid);
    if (!subscriptions.has(request.xid) && subscriptions.size >= this.limits.maxSubscriptions) {
      return conn.send(errorMessage('SERVER_ERROR', `Subscription limit reached: at most ${this.limits.maxSubscriptions} points per connection`));
    }
    try {
      await this.subscribe(conn, subscriptions, request);
    } catch (err) {
      this.log.warn({ err, xid: request.xid }, 'websocket: subscription failed');
      conn.send(errorMessage('SERVER_ERROR', `Could not subscribe to ${request.xid}`));
    }
  }

  private async subscribe(conn: Connection, subscriptions: Map<string, number>, { xid, mask }: SubscribeRequest): Promise<void> {
    const point = await this.s.pointValues.point(xid);
    if (!point) return conn.send(errorMessage('NOT_FOUND', notFound(xid)));
    if (!hasPermission(conn.auth.user, point.readPermission)) return conn.send(errorMessage('PERMISSION_DENIED', `Access denied: no read permission on ${xid}`));
    const before = subscriptions.get(xid);
    if (before !== undefined && before !== point.id) this.unsubscribe(conn, subscriptions, xid);

    let w = this.watched.get(point.id);
    if (!w) {
      const enabled = point.enabled && (await this.s.dataSources.findById(point.dataSourceId))?.enabled === true;
      if (!conn.open || this.closed) return;
      w = this.watched.get(point.id) ?? this.watch(point, enabled); // another subscriber may have started it
    }
    // No await from here until the subscriber is in place: an entry never stays without one.
    const sub: Subscription = { xid, mask, early: [] };
    w.subscribers.set(conn, sub);
    subscriptions.set(xid, point.id);

    let latest: StoredValue | undefined;
    try {
      [latest] = await this.s.pointValues.latest(w.point, 1);
    } catch (err) {
      if (w.subscribers.get(conn) === sub) this.unsubscribe(conn, subscriptions, xid); // never half-subscribed
      throw err;
    }
    if (w.subscribers.get(conn) !== sub) return; // unsubscribed or terminated meanwhile
    conn.send(okMessage(xid, 'REGISTERED', valueJson(w.point.dataType, latest), w.enabled, this.markOf(w)));
    const early = sub.early ?? [];
    sub.early = undefined;
    // What REGISTERED already shows is not news; a SET is, whatever its time.
    for (const m of early) if (m.event === 'SET' || latest === undefined || m.ts > latest.ts) conn.send(m.text);
  }

  /** Starts following a point, for its first subscriber. */
  private watch(point: DataPointRecord, enabled: boolean): WatchedPoint {
    const bus = this.s.pointValues.bus;
    const w: WatchedPoint = { point, enabled, subscribers: new Map(), unfollow: bus.follow(point.id) };
    this.watched.set(point.id, w);
    // Only while someone listens, and only the followed points cost the ingest path live-value work.
    this.busOff ??= bus.subscribe((v) => this.deliver(v), { followedOnly: true });
    return w;
  }

  private unsubscribe(conn: Connection, subscriptions: Map<string, number>, xid: string): void {
    const id = subscriptions.get(xid);
    if (id === undefined) return;
    subscriptions.delete(xid);
    this.removeSubscriber(id, conn);
  }

  private removeSubscriber(id: number, conn: Connection): void {
    const w = this.watched.get(id);
    if (!w) return;
    w.subscribers.delete(conn);
    if (w.subscribers.size > 0) return;
    w.unfollow();
    this.watched.delete(id);
    if (this.watched.size === 0) {
      this.busOff?.();
      this.busOff = undefined;
    }
  }

  /** The one bus listener: fan-out to the point's subscribers, each message serialised once. */
  private deliver(v: LiveValue): void {
    const w = this.watched.get(v.pointId);
    if (!w) return;
    const value = valueJson(v.dataType, v.value);
    const mark = this.markOf(w);
    for (const event of eventsOf(v)) {
      const bit = BIT[event];
      let text: Buffer | undefined;
      for (const [conn, sub] of w.subscribers) {
        if ((sub.mask & bit) === 0) continue;
        text ??= okMessage(w.point.xid, event, value, w.enabled, mark);
        if (sub.early) {
          if (sub.early.length >= MAX_EARLY_MESSAGES) sub.early.shift();
          sub.early.push({ ts: v.value.ts, event, text });
        } else {
          conn.send(text);
        }
      }
    }
  }

  private markOf(w: WatchedPoint): Unreliability | undefined {
    return this.s.pointValues.reliability.get(w.point.id);
  }

  /**
   * Points became unreliable or reliable: ATTRIBUTE_CHANGE. A subscription still waiting for its
   * REGISTERED gets the state in that one.
   */
  private reliabilityChanged(pointIds: readonly number[]): void {
    for (const id of pointIds) {
      const w = this.watched.get(id);
      if (!w) continue;
      const text = okMessage(w.point.xid, 'ATTRIBUTE_CHANGE', 'null', w.enabled, this.markOf(w));
      this.notify(w, 'ATTRIBUTE_CHANGE', text, (sub) => sub.early !== undefined);
    }
  }

  /** Sends one event, serialised once, to the subscribers that asked for it. */
  private notify(w: WatchedPoint, event: PointEvent, text: Buffer, except?: (sub: Subscription) => boolean): void {
    for (const [conn, sub] of w.subscribers) if (sub.mask & BIT[event] && !except?.(sub)) conn.send(text);
  }

  /** A point was saved or deleted: follow its new state, or end the subscriptions it no longer allows. */
  private async pointChanged(id: number): Promise<void> {
    if (!this.watched.has(id)) return;
    const now = await this.s.dataPoints.findById(id);
    const w = this.watched.get(id);
    if (!w) return;
    if (!now) return this.end(w, () => true);
    this.end(w, (conn, sub) => sub.xid !== now.xid || !hasPermission(conn.auth.user, now.readPermission));
    w.point = now;
    const source = await this.s.dataSources.findById(now.dataSourceId);
    await this.setEnabled(w, now.enabled && source?.enabled === true);
  }

  private async sourceChanged(sourceId: number, sourceEnabled: boolean): Promise<void> {
    for (const w of [...this.watched.values()]) {
      if (w.point.dataSourceId === sourceId) await this.setEnabled(w, w.point.enabled && sourceEnabled);
    }
  }

  private sourceDeleted(sourceId: number): void {
    for (const w of [...this.watched.values()]) if (w.point.dataSourceId === sourceId) this.end(w, () => true);
  }

  /** Disabled → TERMINATE, enabled again → REGISTERED, each with the current value. */
  private async setEnabled(w: WatchedPoint, enabled: boolean): Promise<void> {
    if (w.enabled === enabled) return;
    w.enabled = enabled;
    const [latest] = await this.s.pointValues.latest(w.point, 1);
    if (w.enabled !== enabled) return; // changed again meanwhile: that change reports itself
    const event = enabled ? 'REGISTERED' : 'TERMINATE';
    // A subscription still waiting for its first REGISTERED gets the new state in that one.
    this.notify(w, event, okMessage(w.point.xid, event, valueJson(w.point.dataType, latest), enabled, this.markOf(w)), (sub) => sub.early !== undefined);
  }

  /** Ends the chosen subscriptions with TERMINATE and no value (the subscriber may no longer see one). */
  private end(w: WatchedPoint, which: (conn: Connection, sub: Subscription) => boolean): void {
    for (const [conn, sub] of [...w.subscribers]) {
      if (!which(conn, sub)) continue;
      if (sub.mask & BIT.TERMINATE) conn.send(okMessage(sub.xid, 'TERMINATE', 'null', false, undefined));
      this.sockets.get(conn)?.delete(sub.xid);
      this.removeSubscriber(w.point.id, conn);
    }
  }
}
