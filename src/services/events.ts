// Events (alarms): raising, returning to normal, acknowledging and commenting on them, who may see which,
// and the live feed of those changes (WebSocket). Data source faults arrive here from the source runtime.
import { LRUCache } from 'lru-cache';
import { DomainError } from '../core/errors.js';
import { FifoLock } from '../core/fifo-lock.js';
import { SqlParams, compileRql, type SqlQueryParts } from '../core/rql/index.js';
import { parseRql } from '../core/rql/parse.js';
import type { DataSourceRecord } from '../store/metadata/data-sources.js';
import type { EventComment, EventCommentsRepository } from '../store/metadata/event-comments.js';
import type { AlarmLevel } from '../store/metadata/event-detectors.js';
import {
  eventResource,
  type AckSelection,
  type EventRecord,
  type EventsRepository,
  type EventType,
  type NewEvent,
  type RtnCause,
  type DetectorScope,
  type WatchedDetector,
} from '../store/metadata/events.js';
import type { DataPointService } from './data-points.js';
import type { DataSourceService } from './data-sources.js';
import { hasPermission, isSuperadmin, USER_ROLE, type Principal } from './permissions.js';
import type { ListResult } from './resources.js';

export type { EventRecord } from '../store/metadata/events.js';
export type { EventComment } from '../store/metadata/event-comments.js';

/** What changed: the event's life (RAISED, ACKNOWLEDGED, RETURN_TO_NORMAL), or a comment on it. */
export type EventAction = 'RAISED' | 'ACKNOWLEDGED' | 'RETURN_TO_NORMAL' | 'COMMENT_ADDED';
/**
 * `local`: stored by this instance (false: relayed from another instance of the cluster).
 * `comment`: the comment COMMENT_ADDED added, or the one an acknowledgement came with (ACKNOWLEDGED);
 * the event carries it among its comments too.
 */
export type EventListener = (action: EventAction, event: EventRecord, local: boolean, comment?: EventComment) => void;

/** The event stores on one connection: an acknowledgement with a comment writes both in one transaction. */
export interface EventStores {
  events: EventsRepository;
  comments: EventCommentsRepository;
}
export type EventTransaction = <T>(fn: (stores: EventStores) => Promise<T>) => Promise<T>;

/** What the cluster relay says of an event's comments (it carries none: a NOTIFY holds 8,000 bytes). */
export interface RelayedComments {
  /** How many the event has: none spares the receiver a read. */
  count: number;
  /** The id of the comment the action added, if any. */
  addedId?: number;
}

/**
 * Sub type of the DATA_SOURCE event a source raises while its device (or broker) cannot be
 * reached or answers with errors: one per fault episode, URGENT, back to normal on recovery.
 */
export const SOURCE_FAULT_SUB_TYPE = 'DEVICE_FAULT';
const SOURCE_FAULT_LEVEL: AlarmLevel = 'URGENT';

export interface RaiseInput {
  alarmLevel: AlarmLevel;
  eventType: EventType;
  subType?: string | null;
  message: string;
  /** Epoch ms; defaults to now. */
  activeTimestamp?: number;
  /** Default true. False: the event never returns to normal; it stays active until acknowledged. */
  rtnApplicable?: boolean;
  referenceId1?: number | null;
  referenceId2?: number | null;
  dataPointId?: number | null;
  dataPointXid?: string | null;
  dataSourceId?: number | null;
  dataSourceXid?: string | null;
  detectorId?: number | null;
}

/** Who acknowledges or comments: the acknowledgement and the comment record the user's id and name. */
export interface Acknowledger extends Principal {
  id: number;
}

/** A comment as the API shows it. */
export function commentView(comment: EventComment): { username: string; timestamp: number; text: string } {
  return { username: comment.username, timestamp: comment.timestamp, text: comment.text };
}

/** The event as the API shows it (timestamps epoch ms, null when not set). */
export function eventView(event: EventRecord): Record<string, unknown> {
  return {
    id: event.id,
    alarmLevel: event.alarmLevel,
    activeTimestamp: event.activeTimestamp,
    active: event.active,
    rtnApplicable: event.rtnApplicable,
    rtnTimestamp: event.rtnTimestamp,
    rtnCause: event.rtnCause,
    message: event.message,
    acknowledged: event.acknowledgedTimestamp !== null,
    acknowledgedTimestamp: event.acknowledgedTimestamp,
    acknowledgedByUsername: event.acknowledgedByUsername,
    eventType: { eventType: event.eventType, subType: event.subType, referenceId1: event.referenceId1, referenceId2: event.referenceId2 },
    dataPointXid: event.dataPointXid,
    dataSourceXid: event.dataSourceXid,
    comments: event.comments.map(commentView),
  };
}

const notFound = () => DomainError.notFound('Event not found');
/** Acknowledging by RQL without limit() works through all matches in batches of this size. */
const ACK_BATCH = 1000;
// mayRead runs per event per WebSocket session: a short cache keeps it off the metadata store.
const PERMISSION_CACHE_TTL_MS = 2_000;

export class EventService {
  private readonly listeners = new Set<EventListener>();
  private readonly sourceDisabledHooks: ((source: DataSourceRecord) => Promise<void> | void)[] = [];
  private readonly readPermissions = new LRUCache<string, { roles: readonly string[] | null }>({ max: 10_000, ttl: PERMISSION_CACHE_TTL_MS });
  /** Relayed events that must be read here first (they have comments), told in arrival order. */
  private readonly relayed = new FifoLock();

  constructor(
    private readonly repo: EventsRepository,
    private readonly points: DataPointService,
    private readonly sources: DataSourceService,
    private readonly comments: EventCommentsRepository,
    private readonly transaction: EventTransaction,
  ) {}

  /** Every raise, acknowledgement, return to normal and comment, as it is stored. Returns the unsubscribe. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called first by sourceDisabled (the detector runtime forgets the source's points there). */
  onSourceDisabled(hook: (source: DataSourceRecord) => Promise<void> | void): void {
    this.sourceDisabledHooks.push(hook);
  }

  /**
   * An event another instance stored and published, told to this instance's listeners. The relay
   * carries no comments: an event that has some is read here first (its state then, which may be
   * newer than the action's). In arrival order, so a socket sees an event's actions in order.
   */
  publishedElsewhere(action: EventAction, event: EventRecord, relay: RelayedComments): void {
    if (relay.count === 0 && this.relayed.pending === 0) {
      this.publish(action, [{ ...event, comments: [] }], false);
      return;
    }
    void this.relayed
      .run(async () => {
        const stored = relay.count === 0 ? { ...event, comments: [] } : await this.repo.findOne('id', event.id);
        if (!stored) return;
        const comment = relay.addedId === undefined ? undefined : stored.comments.find((c) => c.id === relay.addedId);
        this.publish(action, [stored], false, comment);
      })
      // The store cannot be read: the push is lost as a message the channel lost would be; clients reload.
      .catch(() => undefined);
  }

  /** Forgets the cached read permissions (a point or source changed on another instance). */
  forgetPermissions(): void {
    this.readPermissions.clear();
  }

  private publish(action: EventAction, events: readonly EventRecord[], local = true, comment?: EventComment): void {
    for (const event of events) {
      for (const listener of this.listeners) {
        try {
          listener(action, event, local, comment);
        } catch {
          // a listener reports its own failures; the others and the writer go on
        }
      }
    }
  }

  async list(user: Principal, rawQuery: string): Promise<ListResult<EventRecord>> {
    const q = this.query(user, rawQuery);
    return { total: await this.repo.count(q), batches: this.repo.page(q) };
  }

  /** The event if it exists (404) and the user may read it (403). */
  async get(user: Principal, id: number): Promise<EventRecord> {
    const event = Number.isSafeInteger(id) ? await this.repo.findOne('id', id) : undefined;
    if (!event) throw notFound();
    if (!(await this.mayRead(user, event))) throw DomainError.accessDenied();
    return event;
  }

  /** The event as stored, whoever asks (the event handlers' worker). */
  findById(id: number): Promise<EventRecord | undefined> {
    return this.repo.findOne('id', id);
  }

  /** Superadmin: every event; others: events of points and sources they may read (not SYSTEM). */
  async mayRead(user: Principal, event: EventRecord): Promise<boolean> {
    if (isSuperadmin(user)) return true;
    const roles =
      event.eventType === 'DATA_POINT' && event.dataPointId !== null
        ? await this.readRoles('point', event.dataPointId)
        : event.eventType === 'DATA_SOURCE' && event.dataSourceId !== null
          ? await this.readRoles('source', event.dataSourceId)
          : null;
    return roles !== null && hasPermission(user, roles);
  }

  private async readRoles(kind: 'point' | 'source', id: number): Promise<readonly string[] | null> {
    const key = `${kind}:${id}`;
    let cached = this.readPermissions.get(key);
    if (!cached) {
      const owner = kind === 'point' ? await this.points.findById(id) : await this.sources.findById(id);
      cached = { roles: owner ? owner.readPermission : null };
      this.readPermissions.set(key, cached);
    }
    return cached.roles;
  }

  /** Stores a new active event (or returns the open one of the same episode without a new RAISED). */
  async raise(input: RaiseInput): Promise<EventRecord> {
    const e: NewEvent = { ...input, activeTimestamp: input.activeTimestamp ?? Date.now(), rtnApplicable: input.rtnApplicable ?? true };
    const { event, created } = await this.repo.raise(e);
    if (created) this.publish('RAISED', [event]);
    return event;
  }

  /** Ends the event's episode; undefined when no such event. A non-returning event stays active. */
  async returnToNormal(id: number, cause: RtnCause, ts = Date.now()): Promise<EventRecord | undefined> {
    const closed = await this.repo.close(id, cause, ts);
    if (closed) this.publishReturned([closed]);
    return closed ?? (await this.repo.findOne('id', id));
  }

  private publishReturned(events: readonly EventRecord[]): void {
    this.publish('RETURN_TO_NORMAL', events.filter((e) => e.rtnApplicable));
  }

  /**
   * The first acknowledgement is kept: acknowledging again changes nothing and returns the event.
   * A comment is stored with the acknowledgement, in its transaction; it is stored also when the
   * event was acknowledged before (then it is a COMMENT_ADDED: the operator's words are not dropped).
   */
  async acknowledge(user: Acknowledger, id: number, comment?: string): Promise<EventRecord> {
    const event = await this.get(user, id);
    const one: AckSelection = { where: 't.id = $1', values: [event.id], orderBy: 't.id', limit: 1, offset: 0 };
    const ack = this.ackBy(user);
    if (comment === undefined) {
      const [changed] = await this.repo.acknowledge(one, ack);
      if (!changed) return (await this.repo.findOne('id', event.id)) ?? event;
      this.publish('ACKNOWLEDGED', [changed]);
      return changed;
    }
    const { changed, added, current } = await this.transaction(async (tx) => {
      const added = await tx.comments.add(event.id, { userId: user.id, username: user.username, timestamp: ack.ts, text: comment });
      const [changed] = await tx.events.acknowledge(one, ack);
      return { changed, added, current: changed ?? (await tx.events.findOne('id', event.id)) ?? event };
    });
    this.publish(changed ? 'ACKNOWLEDGED' : 'COMMENT_ADDED', [current], true, added);
    return current;
  }

  /** A comment on an event the user may read (404, 403 as GET); returns the event with it. */
  async addComment(user: Acknowledger, id: number, text: string): Promise<EventRecord> {
    const event = await this.get(user, id);
    const added = await this.comments.add(event.id, { userId: user.id, username: user.username, timestamp: Date.now(), text });
    const current = (await this.repo.findOne('id', event.id)) ?? { ...event, comments: [...event.comments, added] };
    this.publish('COMMENT_ADDED', [current], true, added);
    return current;
  }

  /**
   * Acknowledges the readable events the RQL selects and returns how many this call acknowledged.
   * With limit() only that window (in the query's order); without it every match, not only the
   * first page a list would show.
   */
  async acknowledgeMany(user: Acknowledger, rawQuery: string): Promise<number> {
    const q = this.query(user, rawQuery);
    const ack = this.ackBy(user);
    if (parseRql(rawQuery).limit) {
      const changed = await this.repo.acknowledge(q, ack);
      this.publish('ACKNOWLEDGED', changed);
      return changed.length;
    }
    const batch: AckSelection = {
      where: `t.ack_ts is null and ${q.where}`,
      values: q.values.slice(0, q.whereValueCount),
      orderBy: 't.id',
      limit: ACK_BATCH,
      offset: 0,
    };
    let count = 0;
    for (;;) {
      const changed = await this.repo.acknowledge(batch, ack);
      this.publish('ACKNOWLEDGED', changed);
      count += changed.length;
      if (changed.length < ACK_BATCH) return count;
    }
  }

  private ackBy(user: Acknowledger): { ts: number; userId: number; username: string } {
    return { ts: Date.now(), userId: user.id, username: user.username };
  }

  /** The RQL query narrowed, for non-superadmins, to events of points and sources they may read. */
  private query(user: Principal, rawQuery: string): SqlQueryParts {
    if (isSuperadmin(user)) return compileRql(eventResource, rawQuery);
    const params = new SqlParams();
    const roles = params.add([...user.permissions, USER_ROLE]);
    const scope = `((t.event_type = 'DATA_POINT' and exists (select 1 from data_points p where p.id = t.data_point_id and p.read_permission && ${roles}::text[]))
      or (t.event_type = 'DATA_SOURCE' and exists (select 1 from data_sources s where s.id = t.data_source_id and s.read_permission && ${roles}::text[])))`;
    const q = compileRql(eventResource, rawQuery, params);
    return { ...q, where: `${scope} and ${q.where}` };
  }

  // ---- data source runtime ------------------------------------------------------------------

  /** A device fault: one active URGENT DEVICE_FAULT event per episode; nothing if one is active. */
  async sourceFault(source: DataSourceRecord, message: string): Promise<void> {
    await this.raise({
      alarmLevel: SOURCE_FAULT_LEVEL,
      eventType: 'DATA_SOURCE',
      subType: SOURCE_FAULT_SUB_TYPE,
      message: `Data source ${source.name} (${source.xid}) fault: ${message}`,
      referenceId1: source.id,
      dataSourceId: source.id,
      dataSourceXid: source.xid,
    });
  }

  /** The device answers again: the fault episode's event returns to normal. */
  async sourceRecovered(source: DataSourceRecord): Promise<void> {
    this.publishReturned(await this.repo.closeSourceFault(source.id, SOURCE_FAULT_SUB_TYPE, 'RETURN_TO_NORMAL', Date.now()));
  }

  /**
   * The source stopped (disabled or deleted): the detector runtime forgets its points, then every
   * active event of the source and its points returns to normal with cause SOURCE_DISABLED.
   */
  async sourceDisabled(source: DataSourceRecord): Promise<void> {
    for (const hook of this.sourceDisabledHooks) await hook(source);
    this.publishReturned(await this.repo.closeForSource(source.id, 'SOURCE_DISABLED', Date.now()));
  }

  // ---- detector runtime ---------------------------------------------------------------------

  /** Detectors of live points, optionally narrowed (DetectorScope); a page of them by id when `limit` is given. */
  watchedDetectors(scope?: DetectorScope, afterId?: number, limit?: number): Promise<WatchedDetector[]> {
    return this.repo.watchedDetectors(scope, afterId, limit);
  }

  /** Which of these detectors have an open episode (an event raised and not yet cleared). */
  openDetectorIds(detectorIds: readonly number[]): Promise<Set<number>> {
    return this.repo.openDetectorIds(detectorIds);
  }

  /** The detectors' conditions ended (or they stopped watching): their open episodes end. */
  async detectorsCleared(detectorIds: readonly number[], cause: RtnCause, ts = Date.now()): Promise<void> {
    this.publishReturned(await this.repo.closeForDetectors(detectorIds, cause, ts));
  }

  /** Keeps the XIDs copied into events current. */
  async pointRenamed(pointId: number, oldXid: string, newXid: string): Promise<void> {
    if (oldXid !== newXid) await this.repo.renamePoint(pointId, oldXid, newXid);
  }

  async sourceRenamed(source: DataSourceRecord): Promise<void> {
    await this.repo.renameSource(source.id, source.xid);
  }
}
