// Event handlers, their jobs and deliveries: the handlers table (RQL), the jobs an event change
// inserts in its own statement (`HandlerJobsSql`), the claims of the worker and the record of
// every attempt.
import type { ResourceDef, SqlQueryParts } from '../../core/rql/index.js';
import { CrudRepository } from './crud.js';
import type { Queryable } from './db.js';
import { ALARM_LEVELS } from './event-detectors.js';
import { countRows, pageRows, type ListSource } from './list.js';

/** `{eventType, referenceXid?, minAlarmLevel?}`: which events a handler acts on. */
export interface EventTypeMatcher {
  eventType: string;
  referenceXid?: string;
  minAlarmLevel?: string;
}

export interface EventHandlerRecord {
  [key: string]: unknown;
  id: number;
  xid: string;
  name: string;
  disabled: boolean;
  handlerType: string;
  eventTypes: EventTypeMatcher[];
  /** The type's own fields, secrets included. */
  config: Record<string, unknown>;
  /** What the type acts on, derived from config at save. */
  actions: string[];
  escalationDelayMs: number | null;
  ownerUserId: number | null;
}

export const eventHandlerResource: ResourceDef = {
  name: 'event handlers',
  properties: {
    id: { column: 't.id', type: 'integer' },
    xid: { column: 't.xid', type: 'string' },
    name: { column: 't.name', type: 'string' },
    disabled: { column: 't.disabled', type: 'boolean' },
    handlerType: { column: 't.handler_type', type: 'string' },
  },
  tiebreak: 't.id',
};

export class EventHandlersRepository extends CrudRepository<EventHandlerRecord> {
  constructor(db: Queryable) {
    super(db, {
      table: 'event_handlers',
      from: 'event_handlers t',
      read: {
        id: 't.id',
        xid: 't.xid',
        name: 't.name',
        disabled: 't.disabled',
        handlerType: 't.handler_type',
        eventTypes: 't.event_types',
        config: 't.config',
        actions: 't.actions',
        escalationDelayMs: 't.escalation_delay_ms',
        ownerUserId: 't.owner_user_id',
      },
      write: {
        xid: 'xid',
        name: 'name',
        disabled: 'disabled',
        handlerType: 'handler_type',
        eventTypes: 'event_types',
        config: 'config',
        actions: 'actions',
        escalationDelayMs: 'escalation_delay_ms',
        ownerUserId: 'owner_user_id',
      },
      json: ['eventTypes', 'config'],
    });
  }

  /** Jobs waiting (due, claimed or retrying) in the cluster, by handler type (metrics, at scrape time). */
  pendingJobs(): Promise<{ handlerType: string; count: number }[]> {
    return this.db.query<{ handlerType: string; count: number }>(
      `select h.handler_type as "handlerType", count(*)::int as "count"
       from event_handler_jobs j join event_handlers h on h.id = j.handler_id group by h.handler_type`,
      [],
    );
  }
}

// ---- deliveries ---------------------------------------------------------------------------------

export const DELIVERY_OUTCOMES = ['SENT', 'FAILED', 'GAVE_UP'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];
const ACTIONS = ['RAISED', 'RETURN_TO_NORMAL', 'ACKNOWLEDGED', 'ESCALATED'] as const;

export interface DeliveryRecord {
  [key: string]: unknown;
  id: number;
  eventId: number;
  action: string;
  attempt: number;
  timestamp: number;
  outcome: DeliveryOutcome;
  status: number | null;
  error: string | null;
}

export const deliveryResource: ResourceDef = {
  name: 'deliveries',
  properties: {
    id: { column: 't.id', type: 'integer' },
    eventId: { column: 't.event_id', type: 'integer' },
    action: { column: 't.action', type: 'enum', values: ACTIONS },
    attempt: { column: 't.attempt', type: 'integer' },
    timestamp: { column: 't.ts', type: 'date' },
    outcome: { column: 't.outcome', type: 'enum', values: DELIVERY_OUTCOMES },
    status: { column: 't.status', type: 'integer' },
    error: { column: 't.error', type: 'string' },
  },
  tiebreak: 't.id',
};

const DELIVERY_SELECT =
  't.id as "id", t.event_id as "eventId", t.action as "action", t.attempt as "attempt", t.ts as "timestamp", t.outcome as "outcome", t.status as "status", t.error as "error"';

/** One handler's deliveries, listed by RQL. */
export class DeliveriesRepository {
  constructor(private readonly db: Queryable) {}

  /** `q` compiled with the handler's id as its first parameter (see `forHandler`). */
  private source(): ListSource {
    return { from: 'event_handler_deliveries t', select: DELIVERY_SELECT };
  }

  count(q: SqlQueryParts): Promise<number> {
    return countRows(this.db, this.source(), q);
  }

  page(q: SqlQueryParts): AsyncGenerator<DeliveryRecord[]> {
    return pageRows<DeliveryRecord>(this.db, this.source(), q);
  }

  /**
   * Deletes at most `limit` deliveries (of any handler) recorded before `cutoff`, the oldest first
   * (index event_handler_deliveries_age); returns how many went. One bounded statement: the caller
   * loops, so a purge of millions never holds one long delete.
   */
  async deleteBatchBefore(cutoff: number, limit: number): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `with gone as (delete from event_handler_deliveries where id in
         (select id from event_handler_deliveries where ts < $1 order by ts, id limit $2) returning 1)
       select count(*)::int as n from gone`,
      [cutoff, limit],
    );
    return rows[0]?.n ?? 0;
  }
}

// ---- jobs ---------------------------------------------------------------------------------------

/**
 * Deliveries recorded by this instance since start, by handler type and outcome (metrics): the
 * worker's attempts, and the work refused at raise because a handler's queue was full (GAVE_UP).
 */
export class DeliveryCounts {
  private readonly counts = new Map<string, number>();

  add(handlerType: string, outcome: DeliveryOutcome, n = 1): void {
    const key = `${handlerType}\t${outcome}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }

  *entries(): Generator<{ handlerType: string; outcome: DeliveryOutcome; count: number }> {
    for (const [key, count] of this.counts) {
      const [handlerType, outcome] = key.split('\t') as [string, DeliveryOutcome];
      yield { handlerType, outcome, count };
    }
  }
}

/** The column by which a wrapped statement's first row tells the work refused, by handler type. */
const REFUSED_COLUMN = '__handlerJobsRefused';

/** The alarm levels in order of severity, as an SQL array literal (trusted: our constants). */
const LEVELS = `array[${ALARM_LEVELS.map((l) => `'${l}'`).join(', ')}]::text[]`;

/**
 * Wraps an event statement (an insert or update `returning` the event's fields under their record
 * names) so that the same statement inserts the jobs of the handlers that match the events it
 * returns: one statement, so the event change and its handlers' work are committed together.
 * A handler that already has `maxPending` jobs gets a GAVE_UP delivery (attempt 0) instead of a job.
 */
export class HandlerJobsSql {
  constructor(
    private readonly maxPending: number,
    private readonly counts?: DeliveryCounts,
  ) {}

  /** Counts the work a wrapped statement refused and takes its column off the rows. */
  took<T extends Record<string, unknown>>(rows: T[]): T[] {
    const refused = rows[0]?.[REFUSED_COLUMN] as Record<string, number> | null | undefined;
    if (refused && this.counts) for (const [type, n] of Object.entries(refused)) this.counts.add(type, 'GAVE_UP', n);
    for (const row of rows) delete row[REFUSED_COLUMN];
    return rows;
  }

  wrap(action: 'RAISED' | 'RETURN_TO_NORMAL' | 'ACKNOWLEDGED', statement: string, values: readonly unknown[]): { text: string; values: unknown[] } {
    const n = values.length;
    const [now, act, max] = [`$${n + 1}::bigint`, `$${n + 2}::text`, `$${n + 3}::int`];
    // The event's reference: its detector's XID (DATA_POINT) or its source's XID (DATA_SOURCE), looked up
    // once per event (a materialized CTE; inlined in a join it was looked up once per handler). The
    // handlers with a matcher of the event's type and its reference or none come from
    // event_handler_matchers by index (migration 016), not from reading every handler.
    const reference = `case e."eventType" when 'DATA_POINT' then (select d.xid from event_detectors d where d.id = e."detectorId")
      when 'DATA_SOURCE' then e."dataSourceXid" end`;
    const text = `with ev as (${statement}),
      referenced as materialized (select e.*, ${reference} as "__referenceXid" from ev e),
      hits as materialized (
        select distinct e."id" as event_id, mm.handler_id from referenced e
        join event_handler_matchers mm on mm.event_type = e."eventType" and mm.reference_xid in ('', coalesce(e."__referenceXid", ''))
      ),
      candidates as (
        select h.id as handler_id, e."id" as event_id, x.action, x.due_ts,
          row_number() over (partition by h.id order by e."id", x.action) as n
        from hits
        join referenced e on e."id" = hits.event_id
        join event_handlers h on h.id = hits.handler_id and not h.disabled
          and (${act} <> 'RETURN_TO_NORMAL' or e."rtnApplicable")
          and exists (select 1 from jsonb_array_elements(h.event_types) m
            where m->>'eventType' = e."eventType"
              and (m->>'referenceXid' is null or m->>'referenceXid' = e."__referenceXid")
              and (m->>'minAlarmLevel' is null or array_position(${LEVELS}, e."alarmLevel"::text) >= array_position(${LEVELS}, m->>'minAlarmLevel')))
        cross join lateral (values (${act}, ${now}), ('ESCALATED', ${now} + h.escalation_delay_ms)) x(action, due_ts)
        where x.action = any(h.actions) and (x.action <> 'ESCALATED' or (${act} = 'RAISED' and h.escalation_delay_ms is not null))
      ),
      room as (
        select c.handler_id, ${max} - (select count(*) from (select 1 from event_handler_jobs j where j.handler_id = c.handler_id limit ${max}) z) as room
        from (select distinct handler_id from candidates) c
      ),
      queued as (
        insert into event_handler_jobs (handler_id, event_id, action, created_ts, due_ts)
        select c.handler_id, c.event_id, c.action, ${now}, c.due_ts from candidates c join room r using (handler_id) where c.n <= r.room
        returning 1
      ),
      refused as (
        insert into event_handler_deliveries (handler_id, event_id, action, attempt, ts, outcome, error)
        select c.handler_id, c.event_id, c.action, 0, ${now}, 'GAVE_UP', 'the handler already has ' || ${max} || ' pending jobs (EVENT_HANDLER_MAX_PENDING)'
        from candidates c join room r using (handler_id) where c.n > r.room
        returning handler_id
      )
      select ev.*, (select jsonb_object_agg(z.handler_type, z.n) from
        (select h.handler_type, count(*)::int as n from refused f join event_handlers h on h.id = f.handler_id group by h.handler_type) z) as "${REFUSED_COLUMN}"
      from ev`;
    return { text, values: [...values, Date.now(), action, this.maxPending] };
  }
}

/** A job as claimed: which handler, which event, which action, and the attempt it now is. */
export interface ClaimedJob {
  [key: string]: unknown;
  id: number;
  handlerId: number;
  eventId: number;
  action: string;
  createdTs: number;
  /** 1 for the first attempt. */
  attempt: number;
}

export interface DeliveryRow {
  eventId: number;
  action: string;
  attempt: number;
  outcome: DeliveryOutcome;
  status?: number | undefined;
  error?: string | undefined;
}

export class HandlerJobsRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Claims up to `limit` due jobs no live lease holds, for `leaseMs`: each goes to one claimant
   * (skip locked), and a claimant that dies leaves its jobs to whoever claims after the lease.
   */
  claim(instance: string, now: number, leaseMs: number, limit: number): Promise<ClaimedJob[]> {
    return this.db.query<ClaimedJob>(
      `update event_handler_jobs j set lease_until = $1::bigint + $2::bigint, claimed_by = $3, attempts = j.attempts + 1
       where j.id in (select id from event_handler_jobs where due_ts <= $1 and (lease_until is null or lease_until < $1)
                      order by due_ts, id limit $4 for update skip locked)
       returning j.id as "id", j.handler_id as "handlerId", j.event_id as "eventId", j.action as "action", j.created_ts as "createdTs", j.attempts as "attempt"`,
      [now, leaseMs, instance, limit],
    );
  }

  /**
   * When the worker should look again: the first due job no one holds, or the first lease to run out.
   * Both read an index from its start (claimed jobs are few), not the whole table.
   */
  async nextDue(): Promise<number | undefined> {
    const rows = await this.db.query<{ due: number | null }>(
      `select least((select due_ts from event_handler_jobs where lease_until is null order by due_ts, id limit 1),
                    (select min(lease_until) from event_handler_jobs where lease_until is not null)) as due`,
      [],
    );
    return rows[0]?.due ?? undefined;
  }

  /** Records the attempt and ends the job (sent, refused for good, given up, or dropped). */
  async finish(jobId: number, handlerId: number, delivery: DeliveryRow | undefined): Promise<void> {
    if (!delivery) {
      await this.db.query('delete from event_handler_jobs where id = $1', [jobId]);
      return;
    }
    await this.db.query(
      `with d as (insert into event_handler_deliveries (handler_id, event_id, action, attempt, ts, outcome, status, error)
                  values ($2, $3, $4, $5, $6, $7, $8, $9))
       delete from event_handler_jobs where id = $1`,
      [jobId, handlerId, delivery.eventId, delivery.action, delivery.attempt, Date.now(), delivery.outcome, delivery.status ?? null, delivery.error ?? null],
    );
  }

  /** Records a failed attempt and puts the job back, due at `dueTs`. */
  async retry(jobId: number, handlerId: number, delivery: DeliveryRow, dueTs: number): Promise<void> {
    await this.db.query(
      `with d as (insert into event_handler_deliveries (handler_id, event_id, action, attempt, ts, outcome, status, error)
                  values ($2, $3, $4, $5, $6, 'FAILED', $7, $8))
       update event_handler_jobs set due_ts = $9, lease_until = null, claimed_by = null where id = $1`,
      [jobId, handlerId, delivery.eventId, delivery.action, delivery.attempt, Date.now(), delivery.status ?? null, delivery.error ?? null, dueTs],
    );
  }

  /** Gives back jobs this instance claimed but did not finish (it is stopping): the attempt is not counted. */
  async release(instance: string, jobIds: readonly number[]): Promise<void> {
    if (jobIds.length === 0) return;
    await this.db.query(
      'update event_handler_jobs set lease_until = null, claimed_by = null, attempts = attempts - 1 where id = any($1::bigint[]) and claimed_by = $2',
      [jobIds, instance],
    );
  }
}
