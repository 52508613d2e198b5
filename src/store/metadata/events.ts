// Events table and its RQL properties; the writes of an event's life (raise, return to normal,
// acknowledge) and the reads the detector runtime starts from.
import type { ResourceDef } from '../../core/rql/index.js';
import { CrudRepository } from './crud.js';
import type { Queryable } from './db.js';
import { EVENT_COMMENTS, type EventComment } from './event-comments.js';
import { ALARM_LEVELS, type AlarmLevel, type EventDetectorRecord } from './event-detectors.js';
import type { HandlerJobsSql } from './event-handlers.js';

export const EVENT_TYPES = ['DATA_POINT', 'DATA_SOURCE', 'SYSTEM'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const RTN_CAUSES = ['RETURN_TO_NORMAL', 'SOURCE_DISABLED'] as const;
export type RtnCause = (typeof RTN_CAUSES)[number];

export interface EventRecord {
  [key: string]: unknown;
  id: number;
  alarmLevel: AlarmLevel;
  activeTimestamp: number;
  active: boolean;
  rtnApplicable: boolean;
  rtnTimestamp: number | null;
  rtnCause: RtnCause | null;
  message: string;
  acknowledgedTimestamp: number | null;
  acknowledgedByUserId: number | null;
  acknowledgedByUsername: string | null;
  eventType: EventType;
  subType: string | null;
  referenceId1: number | null;
  referenceId2: number | null;
  dataPointId: number | null;
  dataPointXid: string | null;
  dataSourceId: number | null;
  dataSourceXid: string | null;
  detectorId: number | null;
  /** Oldest first. */
  comments: EventComment[];
}

export type NewEvent = Pick<EventRecord, 'alarmLevel' | 'activeTimestamp' | 'rtnApplicable' | 'message' | 'eventType'> &
  Partial<Pick<EventRecord, 'subType' | 'referenceId1' | 'referenceId2' | 'dataPointId' | 'dataPointXid' | 'dataSourceId' | 'dataSourceXid' | 'detectorId'>>;

export const eventResource: ResourceDef = {
  name: 'events',
  properties: {
    id: { column: 't.id', type: 'integer' },
    alarmLevel: { column: 't.alarm_level', type: 'enum', values: ALARM_LEVELS },
    active: { column: 't.active', type: 'boolean' },
    acknowledged: { column: '(t.ack_ts is not null)', type: 'boolean' },
    activeTimestamp: { column: 't.active_ts', type: 'date' },
    rtnTimestamp: { column: 't.rtn_ts', type: 'date' },
    rtnApplicable: { column: 't.rtn_applicable', type: 'boolean' },
    rtnCause: { column: 't.rtn_cause', type: 'enum', values: RTN_CAUSES },
    acknowledgedTimestamp: { column: 't.ack_ts', type: 'date' },
    acknowledgedByUsername: { column: 't.ack_username', type: 'string' },
    eventType: { column: 't.event_type', type: 'enum', values: EVENT_TYPES },
    subType: { column: 't.sub_type', type: 'string' },
    dataPointXid: { column: 't.data_point_xid', type: 'string' },
    dataSourceXid: { column: 't.data_source_xid', type: 'string' },
    message: { column: 't.message', type: 'string' },
  },
  tiebreak: 't.id',
};

/** Which events to acknowledge: a filter (trusted SQL, bound values) and a window in an order. */
export interface AckSelection {
  where: string;
  values: readonly unknown[];
  orderBy: string;
  limit: number;
  offset: number;
}

/** A detector of a live point, with what the runtime needs to know of its point. */
export interface WatchedDetector {
  detector: EventDetectorRecord;
  point: { id: number; xid: string; name: string; deviceName: string; dataSourceId: number; dataSourceXid: string };
}

const EVENT_COLUMNS: { [K in keyof EventRecord]: string } = {
  id: 't.id',
  alarmLevel: 't.alarm_level',
  activeTimestamp: 't.active_ts',
  active: 't.active',
  rtnApplicable: 't.rtn_applicable',
  rtnTimestamp: 't.rtn_ts',
  rtnCause: 't.rtn_cause',
  message: 't.message',
  acknowledgedTimestamp: 't.ack_ts',
  acknowledgedByUserId: 't.ack_user_id',
  acknowledgedByUsername: 't.ack_username',
  eventType: 't.event_type',
  subType: 't.sub_type',
  referenceId1: 't.reference_id1',
  referenceId2: 't.reference_id2',
  dataPointId: 't.data_point_id',
  dataPointXid: 't.data_point_xid',
  dataSourceId: 't.data_source_id',
  dataSourceXid: 't.data_source_xid',
  detectorId: 't.detector_id',
  comments: EVENT_COMMENTS,
};

const RETURNING = Object.entries(EVENT_COLUMNS)
  .map(([field, column]) => `${column} as "${field}"`)
  .join(', ');

/** What a return to normal writes: rtn fields on events that return, the episode end on all. */
const CLOSE_SET = `cleared_ts = coalesce(t.cleared_ts, $1),
  active = case when t.rtn_applicable then false else t.active end,
  rtn_ts = case when t.rtn_applicable and t.active then $1 else t.rtn_ts end,
  rtn_cause = case when t.rtn_applicable and t.active then $2 else t.rtn_cause end`;

export class EventsRepository extends CrudRepository<EventRecord> {
  /** `jobs`: the event handlers' jobs are inserted by each statement that changes events (none without). */
  constructor(
    db: Queryable,
    private readonly jobs?: HandlerJobsSql,
  ) {
    super(db, {
      table: 'events',
      from: 'events t',
      read: EVENT_COLUMNS,
      write: {
        alarmLevel: 'alarm_level',
        activeTimestamp: 'active_ts',
        rtnApplicable: 'rtn_applicable',
        message: 'message',
        eventType: 'event_type',
        subType: 'sub_type',
        referenceId1: 'reference_id1',
        referenceId2: 'reference_id2',
        dataPointId: 'data_point_id',
        dataPointXid: 'data_point_xid',
        dataSourceId: 'data_source_id',
        dataSourceXid: 'data_source_xid',
        detectorId: 'detector_id',
      },
    });
  }

  /** Runs a statement that changes events and returns them, with the jobs of their handlers. */
  private change(action: 'RAISED' | 'RETURN_TO_NORMAL' | 'ACKNOWLEDGED', text: string, values: readonly unknown[]): Promise<EventRecord[]> {
    if (!this.jobs) return this.db.query<EventRecord>(text, values);
    const q = this.jobs.wrap(action, text, values);
    const jobs = this.jobs;
    return this.db.query<EventRecord>(q.text, q.values).then((rows) => jobs.took(rows));
  }

  /**
   * Stores a new active event, unless the same episode is already open (same detector, or same
   * source fault kind): then nothing is written and `created` is false with the open event.
   */
  async raise(e: NewEvent): Promise<{ event: EventRecord; created: boolean }> {
    const values = [
      e.alarmLevel, e.activeTimestamp, e.rtnApplicable, e.message, e.eventType, e.subType ?? null, e.referenceId1 ?? null,
      e.referenceId2 ?? null, e.dataPointId ?? null, e.dataPointXid ?? null, e.dataSourceId ?? null, e.dataSourceXid ?? null, e.detectorId ?? null,
    ];
    const inserted = await this.change(
      'RAISED',
      `insert into events as t (alarm_level, active_ts, active, rtn_applicable, message, event_type, sub_type, reference_id1,
         reference_id2, data_point_id, data_point_xid, data_source_id, data_source_xid, detector_id)
       values ($1, $2, true, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       on conflict do nothing returning ${RETURNING}`,
      values,
    );
    if (inserted[0]) return { event: inserted[0], created: true };
    const open = await this.db.query<EventRecord>(
      `select ${RETURNING} from events t where t.cleared_ts is null
         and ((t.detector_id = $1) or (t.event_type = 'DATA_SOURCE' and t.data_source_id = $2 and t.sub_type = $3))
       limit 1`,
      [e.detectorId ?? null, e.dataSourceId ?? null, e.subType ?? null],
    );
    if (!open[0]) throw new Error('event insert conflicted but no open episode was found');
    return { event: open[0], created: false };
  }

  /** Ends the episode of one event; returns it when it was still open. */
  async close(id: number, cause: RtnCause, ts: number): Promise<EventRecord | undefined> {
    const rows = await this.change('RETURN_TO_NORMAL', `update events t set ${CLOSE_SET} where t.id = $3 and t.cleared_ts is null returning ${RETURNING}`, [ts, cause, id]);
    return rows[0];
  }

  /** Ends the open episodes of these detectors; returns the events that changed. */
  async closeForDetectors(detectorIds: readonly number[], cause: RtnCause, ts: number): Promise<EventRecord[]> {
    if (detectorIds.length === 0) return [];
    return this.change(
      'RETURN_TO_NORMAL',
      `update events t set ${CLOSE_SET} where t.detector_id = any($3::int[]) and t.cleared_ts is null returning ${RETURNING}`,
      [ts, cause, detectorIds],
    );
  }

  /** Ends the open fault episodes of a source of one kind. */
  async closeSourceFault(sourceId: number, subType: string, cause: RtnCause, ts: number): Promise<EventRecord[]> {
    return this.change(
      'RETURN_TO_NORMAL',
      `update events t set ${CLOSE_SET}
       where t.event_type = 'DATA_SOURCE' and t.data_source_id = $3 and t.sub_type = $4 and t.cleared_ts is null returning ${RETURNING}`,
      [ts, cause, sourceId, subType],
    );
  }

  /**
   * Every active event of a source and of its points returns to normal (events that do not return
   * by themselves stay active until acknowledged); every open episode of its detectors ends.
   */
  async closeForSource(sourceId: number, cause: RtnCause, ts: number): Promise<EventRecord[]> {
    const closed = await this.change(
      'RETURN_TO_NORMAL',
      `update events t set ${CLOSE_SET} where t.data_source_id = $3 and t.active returning ${RETURNING}`,
      [ts, cause, sourceId],
    );
    // Non-returning events acknowledged while their condition still held: inactive, episode open.
    await this.db.query(
      `update events t set cleared_ts = $1 where t.cleared_ts is null and t.detector_id in (
         select d.id from event_detectors d join data_points p on p.id = d.data_point_id where p.data_source_id = $2)`,
      [ts, sourceId],
    );
    return closed;
  }

  /**
   * Records the first acknowledgement on the events of the window `select` describes (already
   * acknowledged ones keep theirs); returns the events it changed. A non-returning event is active
   * only until acknowledged.
   */
  async acknowledge(select: AckSelection, ack: { ts: number; userId: number; username: string }): Promise<EventRecord[]> {
    const n = select.values.length;
    return this.change(
      'ACKNOWLEDGED',
      `update events t set ack_ts = $${n + 3}, ack_user_id = $${n + 4}, ack_username = $${n + 5},
         active = case when t.rtn_applicable then t.active else false end
       where t.ack_ts is null and t.id in (
         select t.id from events t where ${select.where} order by ${select.orderBy} limit $${n + 1} offset $${n + 2})
       returning ${RETURNING}`,
      [...select.values, select.limit, select.offset, ack.ts, ack.userId, ack.username],
    );
  }

  /** Ids among these detectors that have an open episode (the runtime's state after a restart). */
  async openDetectorIds(detectorIds: readonly number[]): Promise<Set<number>> {
    if (detectorIds.length === 0) return new Set();
    const rows = await this.db.query<{ id: number }>(
      'select detector_id as id from events where detector_id = any($1::int[]) and cleared_ts is null',
      [detectorIds],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Keeps the copied XIDs current when a point or source is renamed. */
  async renamePoint(pointId: number, oldXid: string, newXid: string): Promise<void> {
    await this.db.query('update events set data_point_xid = $3 where data_point_xid = $2 and data_point_id = $1', [pointId, oldXid, newXid]);
  }

  async renameSource(sourceId: number, xid: string): Promise<void> {
    await this.db.query('update events set data_source_xid = $2 where data_source_id = $1 and data_source_xid <> $2', [sourceId, xid]);
  }

  /**
   * Detectors of live points (point and source enabled), optionally of one point, source or detector,
   * or of the listed points or detectors; by id, those after `afterId`, at most `limit` (a page).
   */
  async watchedDetectors(scope: DetectorScope = {}, afterId = 0, limit?: number): Promise<WatchedDetector[]> {
    const rows = await this.db.query<WatchedRow>(
      `select d.id, d.xid, d.name, d.data_point_id, p.xid as point_xid, d.detector_type, d.alarm_level, d.config,
              d.read_permission, d.edit_permission, p.name as point_name, p.device_name, s.id as source_id, s.xid as source_xid
       from event_detectors d join data_points p on p.id = d.data_point_id join data_sources s on s.id = p.data_source_id
       where p.enabled and s.enabled and ($1::int is null or p.id = $1) and ($2::int is null or s.id = $2) and ($3::int is null or d.id = $3)
         and ($4::int[] is null or p.id = any($4::int[])) and ($5::int[] is null or d.id = any($5::int[])) and d.id > $6
       order by d.id limit $7`,
      [scope.pointId ?? null, scope.sourceId ?? null, scope.detectorId ?? null, scope.pointIds ?? null, scope.detectorIds ?? null, afterId, limit ?? null],
    );
    return rows.map(watched);
  }
}

/** Which detectors the runtime asks for: one point, source or detector, or lists of points or detectors. */
export interface DetectorScope {
  pointId?: number;
  sourceId?: number;
  detectorId?: number;
  pointIds?: readonly number[];
  detectorIds?: readonly number[];
}

interface WatchedRow {
  [key: string]: unknown;
  id: number;
  xid: string;
  name: string;
  data_point_id: number;
  point_xid: string;
  detector_type: EventDetectorRecord['detectorType'];
  alarm_level: AlarmLevel;
  config: Record<string, unknown>;
  read_permission: string[];
  edit_permission: string[];
  point_name: string;
  device_name: string;
  source_id: number;
  source_xid: string;
}

function watched(r: WatchedRow): WatchedDetector {
  return {
    detector: {
      id: r.id,
      xid: r.xid,
      name: r.name,
      dataPointId: r.data_point_id,
      dataPointXid: r.point_xid,
      detectorType: r.detector_type,
      alarmLevel: r.alarm_level,
      config: r.config,
      readPermission: r.read_permission,
      editPermission: r.edit_permission,
    },
    point: { id: r.data_point_id, xid: r.point_xid, name: r.point_name, deviceName: r.device_name, dataSourceId: r.source_id, dataSourceXid: r.source_xid },
  };
}
