// The point-value service: the facade the API, the runtime and the cluster use. It finds points by
// XID (a refreshing cache), checks permissions (read; set = read and set; delete = edit) and hands the
// work to the point-value domain: ingest (values/ingest/pipeline.ts, the one ordered path of every
// value in; body.ts reads the HTTP bodies), live (values/live/: the bus, each point's newest value,
// reliability) and read (values/read/).
import { RefreshingCache } from '../core/refreshing-cache.js';
import { PointValueBus } from '../values/live/bus.js';
import { NewestValues } from '../values/live/newest.js';
import { PointReliability } from '../values/live/reliability.js';
import type { BulkColumns } from '../core/bulk-values.js';
import { DomainError } from '../core/errors.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { TimeSlice, yieldToEventLoop } from '../core/time-slice.js';
import { planPeriods, type PeriodPlan } from '../values/read/periods.js';
import { statistic, type StatisticField } from '../values/read/statistics.js';
import { pointRollup, type RollupResult } from '../values/read/rollup.js';
import type { PointValueStore, StoredValue, TimeRange, ValueBatch } from '../store/values/types.js';
import type { DataPointService } from './data-points.js';
import type { DataSourceService } from './data-sources.js';
import type { IntervalStateStore } from '../values/ingest/interval-logging.js';
import { readBulkBody, readBulkColumns, readSetBody, type WriterPorts } from '../values/ingest/body.js';
import { IngestPipeline, type SourceValue, type WrittenListener } from '../values/ingest/pipeline.js';
import { assertPermission, hasPermission, type Principal } from './permissions.js';
import { apiValue, coerceValue, type StorableValue } from '../values/ingest/types.js';

export const MAX_LATEST_LIMIT = 10_000;

/**
 * Writes a set value to the point's device first (the data source runtime); rejects when refused. A
 * device may hold it only approximately: resolves to what it now holds (undefined: the value as given).
 */
export type DeviceWriter = (point: DataPointRecord, value: number | boolean | string) => Promise<DeviceValue | void>;
export type DeviceValue = number | boolean | string;

/**
 * A set value that did not reach the device. reason `value`:  the value cannot be written there (type or
 * range: the caller's mistake), `device` when the device or the connection failed.
 */
export class DeviceWriteError extends Error {
  override readonly name = 'DeviceWriteError';

  constructor(
    message: string,
    readonly reason: 'value' | 'device' = 'device',
  ) {
    super(message);
  }
}

export interface SetValueResult {
  xid: string;
  dataType: string;
  value: unknown;
  timestamp: number;
  annotation: string | null;
}

/** Names the XID: a request for several points says which one is missing. */
const pointNotFound = (xid: string) => DomainError.notFound(`Data point not found: ${xid}`);
const NO_SET_PERMISSION = 'Access denied: setting a value needs read and set permission';

/** Setting a value needs read permission as well as set permission (the answer shows the value). */
function maySet(user: Principal, point: DataPointRecord): boolean {
  return hasPermission(user, point.readPermission) && hasPermission(user, point.setPermission);
}

// Bounds how long another instance's rename or permission change can go unnoticed here.
const POINT_CACHE_TTL_MS = 2_000;

export class PointValueService {
  readonly bus = new PointValueBus();
  /** Which points their source cannot read now: shown with their current value (latest, WebSocket). */
  readonly reliability = new PointReliability();
  private readonly newest: NewestValues;
  private readonly ingest: IngestPipeline;
  /**
   * Points by XID. An entry older than the TTL is still answered while it is refreshed in the
   * background: a bulk write of a thousand points must not stall on a thousand lookups each time
   * the TTL runs out. This instance's own changes evict at once (forgetPoint); alone (PGlite
   * metadata) there are no others, and entries are never refreshed.
   */
  private readonly pointsByXid: RefreshingCache<string, DataPointRecord>;
  private deviceWriter: DeviceWriter | undefined;
  /** Bumped whenever cached points are forgotten: a warm-up page read across it is read again. */
  private pointChanges = 0;
  private readonly pointCacheMax: number;
  /** How long a cached point may be answered without a look at the store (0: until forgotten). */
  readonly pointCacheTtlMs: number;

  constructor(
    private readonly store: PointValueStore,
    private readonly points: DataPointService,
    private readonly sources: DataSourceService,
    options: { writeBufferValues: number; latestCachePoints: number; zone?: string; alone?: boolean },
  ) {
    this.pointCacheMax = 100_000;
    this.pointCacheTtlMs = options.alone ? 0 : POINT_CACHE_TTL_MS;
    this.pointsByXid = new RefreshingCache((xid) => this.points.findByXid(xid), {
      max: this.pointCacheMax,
      refreshAfterMs: this.pointCacheTtlMs,
      loadMany: (xids) => this.points.findManyByXid(xids),
    });
    this.newest = new NewestValues(store, options.latestCachePoints);
    this.ingest = new IngestPipeline(store, { bus: this.bus, newest: this.newest, point: (id) => this.points.findById(id) }, options);
    this.ingest.onWritten((earliest) => this.tellStored(earliest));
  }

  private readonly storedListeners = new Set<WrittenListener>();

  /**
   * Told when values of these series are durable and readable here, written by this instance or by
   * another (series → earliest ts); returns the function that stops it. A computed point's history
   * function waits for its trigger's value to be stored before it reads the window.
   */
  onStored(listener: WrittenListener): () => void {
    this.storedListeners.add(listener);
    return () => this.storedListeners.delete(listener);
  }

  private tellStored(earliest: ReadonlyMap<number, number>): void {
    for (const l of this.storedListeners) {
      try {
        l(earliest);
      } catch {
        // listeners report their own failures
      }
    }
  }

  /**
   * Told after values of these series became durable, or were deleted (series → earliest ts touched):
   * the cluster tells the other instances, whose caches of them are out of date then.
   */
  onWritten(listener: WrittenListener): void {
    this.ingest.onWritten(listener);
  }

  /** Another instance wrote or deleted these series' values (no argument: anything may have changed). */
  changedElsewhere(earliest?: ReadonlyMap<number, number>): void {
    this.ingest.changedElsewhere(earliest);
    if (earliest) this.tellStored(earliest);
    if (!earliest) {
      this.pointChanges++;
      this.pointsByXid.forgetAll(); // point changes may have gone unheard too
    }
    this.store.changedElsewhere?.(earliest);
  }

  /** Set values go to the device through this before they are stored. */
  setDeviceWriter(writer: DeviceWriter): void {
    this.deviceWriter = writer;
  }

  /**
   * Values from the data source runtime: coerced by each point's type and written through the
   * pipeline. Returns a message for each value its point could not take (that value is dropped).
   */
  acceptFromSource(values: readonly SourceValue[]): Promise<string[]> {
    return this.ingest.acceptFromSource(values);
  }

  async lastValue(point: DataPointRecord): Promise<number | boolean | string | undefined> {
    const [newest] = await this.latest(point, 1);
    return (newest && apiValue(point.dataType, newest)) ?? undefined;
  }

  /**
   * Changes whenever cached points are forgotten (a point changed here or elsewhere, a resync): a cache
   * of points made while it had one value holds as long as it keeps it (and pointCacheTtlMs allows).
   */
  get pointsVersion(): number {
    return this.pointChanges;
  }

  /** A point changed or disappeared: forget what was cached about it. */
  forgetPoint(point: Pick<DataPointRecord, 'id' | 'xid'>): void {
    this.pointChanges++;
    this.pointsByXid.forget(point.xid);
    this.ingest.forgetPoint(point.id);
  }

  /** Resumes INTERVAL logging's periods in progress and starts the clock that closes them. */
  startLogging(states: IntervalStateStore, onError: (err: unknown) => void): Promise<void> {
    return this.ingest.start(states, onError);
  }

  /** Closes the INTERVAL periods the clock passed now (the timer does it every second). */
  logIntervals(now?: number): Promise<void> {
    return this.ingest.tick(now);
  }

  /**
   * Fills the point cache after a start, a page of points at a time with the event loop let in
   * between, so that the first read of each point (an analytics tool reading many once) finds it
   * without a metadata query. Stops when the cache is full. A page read while any point changed is
   * read again; an entry cached meanwhile (a read's own lookup) is kept.
   */
  async warmPointCache(): Promise<number> {
    let warmed = 0;
    const pages = this.points.pages();
    for (;;) {
      const changes = this.pointChanges;
      const next = await pages.next();
      if (next.done) return warmed;
      let page = next.value;
      if (this.pointChanges !== changes) {
        // Something changed while the page was read: read those points again, as they are now.
        const again = this.pointChanges;
        const fresh = await this.points.findManyByXid(page.map((p) => p.xid));
        page = [...fresh.values()];
        if (this.pointChanges !== again) continue; // still moving: leave them to the readers
      }
      for (const p of page) this.pointsByXid.prime(p.xid, p);
      warmed += page.length;
      if (this.pointsByXid.size >= this.pointCacheMax) {
        await pages.return(undefined);
        return warmed;
      }
      await yieldToEventLoop();
    }
  }

  async point(xid: string): Promise<DataPointRecord | undefined> {
    return this.pointsByXid.get(xid);
  }

  /** The point, if it exists and the user may read it (404 before 403). */
  async readablePoint(user: Principal, xid: string): Promise<DataPointRecord> {
    const p = await this.point(xid);
    if (!p) throw pointNotFound(xid);
    assertPermission(user, p.readPermission);
    return p;
  }

  /** Newest first: the stored values, after the newest value its logging did not store. */
  latest(point: DataPointRecord, limit: number): Promise<StoredValue[]> {
    return this.newest.latest(point.id, limit);
  }

  /** Raw values with from <= ts < to, oldest first, in batches; at most `limit` when given. */
  range(point: DataPointRecord, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]> {
    return this.store.range(point.id, from, to, limit);
  }

  /** The value in force at t (the newest with ts <= t), if any. */
  valueAt(point: DataPointRecord, t: number): Promise<StoredValue | undefined> {
    return this.store.valueAt(point.id, t);
  }

  /**
   * Statistics of the point (read permission checked: readablePoint) over each period of the plan, a
   * chunk of periods at a time, yielding to the event loop in between (values/read/rollup.ts pointRollup).
   */
  rollup(point: DataPointRecord, plan: PeriodPlan, now: number, slice = new TimeSlice()): AsyncGenerator<RollupResult> {
    return pointRollup(this.store, point, plan, now, { slice });
  }

  /**
   * One statistic of the point over [from, to), computed as GET /point-values computes a rollup of that
   * range as one period (the rollup engine; AVERAGE time-weighted); null when the window has no value.
   * No permission check: the caller (a computed point's runtime) checked its context at save.
   */
  async windowStatistic(point: DataPointRecord, from: number, to: number, field: StatisticField, now = Date.now()): Promise<number | null> {
    const plan = planPeriods({ from, to, count: 1, zone: 'UTC', truncate: false });
    for await (const r of this.rollup(point, plan, now)) {
      const v = statistic(r, 0, field);
      return typeof v === 'number' ? v : null;
    }
    return null;
  }

  /** Which value engine answers, and whether it does (for /health). */
  get engine(): PointValueStore['engine'] {
    return this.store.engine;
  }

  ping(): Promise<void> {
    return this.store.ping();
  }

  /**
   * PUT /point-values/<xid>: the point must be live and settable, the caller needs read and set
   * permission (checked before anything reaches the device, here or through another instance).
   */
  async set(user: Principal, xid: string, body: unknown): Promise<SetValueResult> {
    const point = await this.point(xid);
    if (!point) throw pointNotFound(xid);
    if (!maySet(user, point)) throw DomainError.accessDenied(NO_SET_PERMISSION);
    const input = await readSetBody(point, body, this.ingest.timeRange, async () => (await this.sources.findById(point.dataSourceId))?.enabled === true);
    const held = this.deviceWriter ? await this.writeToDevice(point, input.value) : input.value;
    const stored = await this.ingest.acceptSet(point, held, input.ts, input.annotation);
    return { xid: point.xid, dataType: point.dataType, value: apiValue(point.dataType, stored), timestamp: input.ts, annotation: stored.annotation };
  }

  /** POST /point-values: validated as a whole (nothing is written unless every entry is good). */
  async bulk(user: Principal, body: unknown): Promise<number> {
    const read = await readBulkBody(body, this.writer(user), this.ingest.timeRange);
    if ('denied' in read) throw DomainError.accessDenied(`${NO_SET_PERMISSION} on ${read.denied.slice(0, 10).join(', ')}`);
    await this.ingest.acceptBulk(read.batch, read.points);
    return read.batch.length;
  }

  /**
   * The bulk fast path for bodies already read into columns (numbers for NUMERIC points). Returns
   * undefined, having written nothing, whenever anything is unusual: the caller then takes the
   * general path, which also words the errors.
   */
  async bulkColumns(user: Principal, c: BulkColumns): Promise<number | undefined> {
    const read = await readBulkColumns(c, this.writer(user), this.ingest.timeRange);
    if (!read) return undefined;
    await this.ingest.acceptBulk(read.batch, read.points);
    return c.length;
  }

  /**
   * A batch its caller built and checked (points found, permissions, types, timestamps within
   * `timeRange`): written as bulk ingest is, durable when it resolves. Line-protocol writes use it.
   */
  writeBatch(batch: ValueBatch, points: ReadonlyMap<number, DataPointRecord>): Promise<void> {
    return this.ingest.acceptBulk(batch, points);
  }

  /** The instants the value store keeps. */
  get timeRange(): TimeRange {
    return this.ingest.timeRange;
  }

  /** DELETE /point-values/<xid>?from&to: history is the point's, so this needs edit permission. */
  async delete(user: Principal, xid: string, from: number, to: number): Promise<number> {
    const point = await this.point(xid);
    if (!point) throw pointNotFound(xid);
    assertPermission(user, point.readPermission);
    if (!(await this.points.mayEdit(user, point))) throw DomainError.accessDenied();
    const deleted = await this.store.delete(point.id, from, to);
    this.forgetDeleted(new Map([[point.id, from]]));
    return deleted;
  }

  /**
   * Values of these series were deleted from the store (series → earliest ts deleted; a purge too):
   * what is known of them goes, and the other instances are told.
   */
  forgetDeleted(earliest: ReadonlyMap<number, number>): void {
    this.ingest.forgetDeleted(earliest);
  }

  /** Saves INTERVAL logging's periods in progress, then drains the write buffer. */
  close(): Promise<void> {
    return this.ingest.close();
  }

  get bufferedValues(): number {
    return this.ingest.bufferedValues;
  }

  /** The points a user may write values of: read and set permission on each. */
  private writer(user: Principal): WriterPorts {
    return { point: (xid) => this.point(xid), mayWrite: (point) => maySet(user, point) };
  }

  /**
   * The device must accept a set value before it is stored: a refusal is a 502 (5000). Resolves to the
   * value the device now holds (a register rounds 12.7 to 13): that is what is stored and answered.
   */
  private async writeToDevice(point: DataPointRecord, coerced: StorableValue): Promise<StorableValue> {
    const value = apiValue(point.dataType, { ts: 0, value: Number.isNaN(coerced.value) ? null : coerced.value, text: coerced.text, annotation: null });
    let held: DeviceValue | void;
    try {
      held = await this.deviceWriter!(point, value ?? '');
    } catch (err) {
      const reason = err instanceof Error ? err.message : 'unknown error';
      if (err instanceof DeviceWriteError && err.reason === 'value') throw DomainError.invalid('value', reason);
      throw new DomainError('device-failed', `Device write failed: ${reason}`);
    }
    if (held === undefined) return coerced;
    const stored = coerceValue(point.dataType, held);
    return typeof stored === 'string' ? coerced : stored;
  }
}
