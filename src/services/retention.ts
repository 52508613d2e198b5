// Retention (API-DECISIONS "Logging, retention, configuration"): each point keeps its values for its
// purgePeriod when purgeOverride is set, else for HISTORY_RETENTION (unset: forever). A purge runs in the
// background at least daily (and at start-up when the last one is a day old or never ran), and on
// demand (POST /point-values/purge). Whole time partitions go at once where the engine has them and
// every point allows it; the rest is deleted series by series in slices (store/values/purge.ts).
// Afterwards the caches (latest values, hourly buckets) and the other instances are told. The daily run
// also purges event handler deliveries older than EVENT_HANDLER_DELIVERY_RETENTION, in bounded batches.
import { DateTime } from 'luxon';
import type { Logger } from 'pino';
import type { RetentionPeriod } from '../config.js';
import { DomainError, validationMessage, type ValidationMessage } from '../core/errors.js';
import { minOf } from '../core/extremes.js';
import { parseInstant } from '../core/time.js';
import type { Validator } from '../core/validation.js';
import type { Period, PointRetention } from '../store/metadata/data-points.js';
import type { DeliveriesRepository } from '../store/metadata/event-handlers.js';
import type { SettingsRepository } from '../store/metadata/settings.js';
import { purgeSeries } from '../store/values/purge.js';
import type { PointValueStore } from '../store/values/types.js';
import type { DataPointService } from './data-points.js';
import { assertSuperadmin, type Principal } from './permissions.js';
import type { PointValueService } from './point-values.js';

const DAY_MS = 86_400_000;
const LAST_PURGE_KEY = 'retention.lastPurge';
/** How often the schedule looks whether a day has passed since the last purge. */
const CHECK_EVERY_MS = 60 * 60_000;
/** The look at start-up waits this long, so start-up itself stays quick. */
const FIRST_CHECK_MS = 5_000;

/** Deliveries deleted per statement: a purge of millions is many short deletes, never one long one. */
export const DELIVERY_PURGE_BATCH = 5_000;

const UNIT: Record<string, 'days' | 'weeks' | 'months' | 'years'> = { DAYS: 'days', WEEKS: 'weeks', MONTHS: 'months', YEARS: 'years' };

/** now − period, by the UTC calendar (a month back from 31 March is 28 or 29 February). */
export function cutoffOf(period: Period, now: number): number {
  const unit = UNIT[period.type];
  if (!unit) throw new RangeError(`Unknown retention unit ${period.type}`);
  return DateTime.fromMillis(now, { zone: 'utc' }).minus({ [unit]: period.periods }).toMillis();
}

/** What a purge request did: values deleted, and how many of the selected points had a cutoff or keep everything. */
export interface PurgeOutcome {
  deleted: number;
  /** Selected points whose values before their cutoff (or `before`) were purged. */
  points: number;
  /** Selected points with neither purgeOverride nor HISTORY_RETENTION: every value is kept. */
  keptForever: number;
}

export interface RetentionDeps {
  points: Pick<DataPointService, 'retention'>;
  store: PointValueStore;
  pointValues: Pick<PointValueService, 'forgetDeleted'>;
  settings: SettingsRepository;
  defaultRetention: RetentionPeriod | undefined;
  validator: Validator;
  log: Logger;
  /** Event handler deliveries and how long they are kept (EVENT_HANDLER_DELIVERY_RETENTION). */
  deliveries?: { store: Pick<DeliveriesRepository, 'deleteBatchBefore'>; retention: RetentionPeriod; batch?: number };
}

export class RetentionService {
  /** Values purged since start (metrics). */
  purgedValues = 0;
  /** Event handler deliveries purged since start (metrics). */
  purgedDeliveries = 0;
  /** When the last purge ended (epoch ms), known after the first look at the settings. */
  lastPurge: number | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: RetentionDeps) {}

  /** Applies every point's retention now; returns how many values went. */
  async applyRetention(now = Date.now()): Promise<number> {
    return (await this.retentionNow(undefined, now)).deleted;
  }

  /**
   * Applies the retention of the listed points (every point's without a list) now. Only a purge of
   * every point counts as the daily one.
   */
  private retentionNow(xids: readonly string[] | undefined, now = Date.now()): Promise<PurgeOutcome> {
    return this.serialised(async () => {
      const points = selected(await this.deps.points.retention(), xids);
      const cutoffs = new Map<number, number>();
      // Points share a few periods: each cutoff is computed once (a calendar step costs microseconds).
      const byPeriod = new Map<string, number>();
      for (const p of points) {
        const period = p.purgeOverride ? p.purgePeriod : this.deps.defaultRetention;
        if (!period) continue;
        const key = `${period.periods} ${period.type}`;
        let cutoff = byPeriod.get(key);
        if (cutoff === undefined) byPeriod.set(key, (cutoff = cutoffOf(period, now)));
        cutoffs.set(p.id, cutoff);
      }
      const deleted = await this.purge(cutoffs, xids === undefined && points.length > 0 && cutoffs.size === points.length);
      if (xids === undefined) await this.recordPurge(now);
      return { deleted, points: cutoffs.size, keptForever: points.length - cutoffs.size };
    });
  }

  /**
   * POST /point-values/purge: superadmin; `before` deletes the listed points' (every point's) older
   * values, else their retention applies now.
   */
  async purgeRequest(user: Principal, body: unknown): Promise<PurgeOutcome> {
    assertSuperadmin(user);
    const { xids, before } = checkBody(this.deps.validator, body);
    if (before === undefined) return this.retentionNow(xids);
    return this.serialised(async () => {
      const ids = selected(await this.deps.points.retention(), xids).map((p) => p.id);
      const deleted = await this.purge(new Map(ids.map((id) => [id, before])), xids === undefined);
      return { deleted, points: ids.length, keptForever: 0 };
    });
  }

  /** Purges at start-up when overdue, then whenever a day has passed since the last purge. */
  start(): void {
    const check = () => void this.purgeIfDue().catch((err: unknown) => this.deps.log.warn({ err }, 'history purge failed'));
    this.timer = setTimeout(() => {
      check();
      this.timer = setInterval(check, CHECK_EVERY_MS);
      this.timer.unref();
    }, FIRST_CHECK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.running.catch(() => undefined);
  }

  async purgeIfDue(now = Date.now()): Promise<number> {
    this.lastPurge ??= await this.deps.settings.get<number>(LAST_PURGE_KEY);
    if (this.lastPurge !== undefined && now - this.lastPurge < DAY_MS) return 0;
    // The deliveries' purge does not wait for, nor depend on, the values' purge succeeding.
    const deliveries = await this.purgeDeliveries(now).catch((err: unknown) => {
      this.deps.log.warn({ err }, 'event handler delivery purge failed');
      return 0;
    });
    const deleted = await this.applyRetention(now);
    this.deps.log.info({ deleted, deliveries, ms: Date.now() - now }, 'history purged');
    return deleted;
  }

  /**
   * Deletes the event handler deliveries recorded before now − EVENT_HANDLER_DELIVERY_RETENTION, a
   * batch per statement until none is left; returns how many went. Several instances may run it at
   * once: each deletes what the others have not.
   */
  purgeDeliveries(now = Date.now()): Promise<number> {
    const d = this.deps.deliveries;
    if (!d) return Promise.resolve(0);
    return this.serialised(async () => {
      const cutoff = cutoffOf(d.retention, now);
      const batch = d.batch ?? DELIVERY_PURGE_BATCH;
      let deleted = 0;
      for (;;) {
        const n = await d.store.deleteBatchBefore(cutoff, batch);
        deleted += n;
        this.purgedDeliveries += n;
        if (n < batch) return deleted;
      }
    });
  }

  /**
   * Deletes each series' values before its cutoff. With `everySeries` (every point has one) the
   * engine may first drop whole partitions older than the earliest cutoff.
   */
  private async purge(cutoffs: ReadonlyMap<number, number>, everySeries: boolean): Promise<number> {
    const touched = new Map<number, number>();
    let deleted = 0;
    try {
      if (everySeries && cutoffs.size > 0 && this.deps.store.dropBefore) {
        const dropped = await this.deps.store.dropBefore(minOf(cutoffs.values()));
        if (dropped > 0) for (const id of cutoffs.keys()) touched.set(id, -Infinity);
        deleted += dropped;
      }
      deleted += await purgeSeries(this.deps.store, cutoffs, (series) => touched.set(series, -Infinity));
    } finally {
      if (touched.size > 0) this.deps.pointValues.forgetDeleted(touched);
      this.purgedValues += deleted;
    }
    return deleted;
  }

  private async recordPurge(now: number): Promise<void> {
    this.lastPurge = now;
    await this.deps.settings.put(LAST_PURGE_KEY, now);
  }

  /** One purge at a time (the schedule and requests): they would only race for the same rows. */
  private serialised<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.running.then(fn, fn);
    this.running = next.catch(() => undefined);
    return next;
  }
}

/** The listed points (every point without a list); an unknown XID is a 422 naming its place. */
function selected(points: PointRetention[], xids: readonly string[] | undefined): PointRetention[] {
  if (xids === undefined) return points;
  const byXid = new Map(points.map((p) => [p.xid, p]));
  const problems: ValidationMessage[] = [];
  xids.forEach((xid, i) => {
    if (!byXid.has(xid)) problems.push(validationMessage(`xids[${i}]`, 'Data point not found'));
  });
  if (problems.length > 0) throw DomainError.validation(problems);
  return [...new Set(xids)].map((xid) => byXid.get(xid)!);
}

/** The body {"xids"?: [...], "before"?: ms or ISO 8601}: the schema, then the instant. */
function checkBody(validator: Validator, body: unknown): { xids: string[] | undefined; before: number | undefined } {
  const { xids, before } = validator.validate<{ xids?: string[]; before?: number | string }>('point-values-purge', body ?? {});
  const at = before === undefined ? undefined : parseInstant(before);
  if (before !== undefined && at === undefined) throw DomainError.invalid('before', 'must be epoch milliseconds or an ISO 8601 date with offset');
  return { xids, before: at };
}
