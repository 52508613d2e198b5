// The point-value pipeline: accept → type check and coercion → write buffer → store, then the
// latest-value cache and the live bus; and the reads (latest, raw ranges, rollups) with permissions.
import { LRUCache } from 'lru-cache';
import { RefreshingCache } from '../core/refreshing-cache.js';
import { PointValueBus, type LiveValueKind } from '../values/live/bus.js';
import { PointReliability } from '../values/live/reliability.js';
import type { BulkColumns } from '../core/bulk-values.js';
import { DomainError, validationMessage, type ValidationMessage } from '../core/errors.js';
import { parseInstant } from '../core/time.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { TimeSlice } from '../core/time-slice.js';
import type { PeriodPlan } from '../values/read/periods.js';
import { pointRollup, type RollupResult } from '../values/read/rollup.js';
import { INSTANT_RANGE, type PointValueStore, type StoredValue, type TimeRange, type ValueBatch } from '../store/values/types.js';
import { WriteBuffer } from '../store/values/write-buffer.js';
import type { DataPointService } from './data-points.js';
import type { DataSourceService } from './data-sources.js';
import { LatestValueCache, storedAt } from '../values/live/latest-cache.js';
import type { IntervalStateStore } from '../values/ingest/interval-logging.js';
import { isExtreme, PointLogging } from '../values/ingest/logging.js';
import { assertPermission, hasPermission, type Principal } from './permissions.js';
import { apiValue, coerceValue, type StorableValue } from '../values/ingest/types.js';

export const MAX_LATEST_LIMIT = 10_000;
/** Rows of a bulk body checked between looks at the time slice (a clock read per row would cost). */
const SLICE_CHECK_ROWS = 1024;

/** Writes a set value to the point's device first (the data source runtime); rejects when refused. */
/** A set value a device may hold only approximately: resolves to what it now holds (undefined: the value as given). */
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

/** A value a data source produced for one of its points (raw: coerced here by the point's type). */
export interface SourceValue {
  point: DataPointRecord;
  value: unknown;
  ts?: number;
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
  private readonly latestCache: LatestValueCache;
  private readonly buffer: WriteBuffer;
  /**
   * Points by XID. An entry older than the TTL is still answered while it is refreshed in the
   * background: a bulk write of a thousand points must not stall on a thousand lookups each time
   * the TTL runs out. This instance's own changes evict at once (forgetPoint).
   */
  private readonly pointsByXid = new RefreshingCache<string, DataPointRecord>((xid) => this.points.findByXid(xid), {
    max: 100_000,
    refreshAfterMs: POINT_CACHE_TTL_MS,
  });
  private deviceWriter: DeviceWriter | undefined;
  private readonly writtenListeners: ((earliest: ReadonlyMap<number, number>) => void)[] = [];
  /** Each point's newest published live value: what "newer than the latest" means for the bus. */
  private readonly published: LRUCache<number, StoredValue>;
  /** The timestamps the store can hold: others are refused with 422 before anything is written. */
  private readonly timeRange: TimeRange;
  /** Which source and PUT values are stored (the points' logging properties). */
  private readonly logging: PointLogging;
  /**
   * Each point's newest value from a source or PUT, stored or not: a value its logging did not store
   * is still the point's latest (answered while newer than the newest stored one).
   */
  private readonly newestAccepted: LRUCache<number, StoredValue>;

  constructor(
    private readonly store: PointValueStore,
    private readonly points: DataPointService,
    private readonly sources: DataSourceService,
    options: { writeBufferValues: number; latestCachePoints: number; zone?: string },
  ) {
    this.latestCache = new LatestValueCache(store, options.latestCachePoints);
    this.published = new LRUCache({ max: options.latestCachePoints });
    this.newestAccepted = new LRUCache({ max: options.latestCachePoints });
    const zone = options.zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    this.logging = new PointLogging(
      { newestStored: (id) => this.latestCache.newest(id), store: (b) => this.storeMade(b), point: (id) => this.points.findById(id) },
      zone,
    );
    this.buffer = new WriteBuffer(store, options.writeBufferValues, undefined, (batch) => this.forgetLateWrite(batch));
    this.timeRange = store.timeRange ?? INSTANT_RANGE;
  }

  /**
   * Told after values of these series became durable, or were deleted (series → earliest ts touched):
   * the cluster tells the other instances, whose caches of them are out of date then.
   */
  onWritten(listener: (earliest: ReadonlyMap<number, number>) => void): void {
    this.writtenListeners.push(listener);
  }

  /** Another instance wrote or deleted these series' values (no argument: anything may have changed). */
  changedElsewhere(earliest?: ReadonlyMap<number, number>): void {
    if (earliest) {
      for (const id of earliest.keys()) {
        this.latestCache.invalidate(id);
        this.published.delete(id);
        this.logging.storedElsewhere(id);
      }
    } else {
      this.latestCache.clear();
      this.published.clear();
      this.logging.forgetAll();
      this.pointsByXid.forgetAll(); // point changes may have gone unheard too
    }
    this.store.changedElsewhere?.(earliest);
  }

  private tellWritten(batch: ValueBatch): void {
    if (this.writtenListeners.length === 0 || batch.length === 0) return;
    const earliest = new Map<number, number>();
    for (let i = 0; i < batch.length; i++) {
      const s = batch.series[i]!;
      const t = batch.ts[i]!;
      const known = earliest.get(s);
      if (known === undefined || t < known) earliest.set(s, t);
    }
    for (const l of this.writtenListeners) l(earliest);
  }

  /**
   * An append ended after its writers were answered 503 (the store's time-out): its values may be
   * stored after all, so what this instance and the others cache of those points is forgotten.
   */
  private forgetLateWrite(batch: ValueBatch): void {
    for (const id of new Set(batch.series.subarray(0, batch.length))) {
      this.latestCache.invalidate(id);
      this.published.delete(id);
      this.logging.storedElsewhere(id);
    }
    this.tellWritten(batch);
  }

  /** Set values go to the device through this before they are stored. */
  setDeviceWriter(writer: DeviceWriter): void {
    this.deviceWriter = writer;
  }

  /**
   * Values from the data source runtime: coerced by each point's type and written like a bulk
   * request. Returns a message for each value its point could not take (that value is dropped).
   */
  async acceptFromSource(values: readonly SourceValue[]): Promise<string[]> {
    const rejected: string[] = [];
    const batch = emptyBatch(values.length);
    const points = new Map<number, DataPointRecord>();
    let n = 0;
    const now = Date.now();
    for (const { point, value, ts } of values) {
      const coerced = coerceValue(point.dataType, value);
      if (typeof coerced === 'string') {
        rejected.push(`${point.xid}: value ${describe(value)} ${coerced}`);
        continue;
      }
      if (ts !== undefined && !(ts >= this.timeRange.min && ts <= this.timeRange.max)) {
        rejected.push(`${point.xid}: timestamp ${ts} ${timestampMessage(this.timeRange)}`);
        continue;
      }
      batch.series[n] = point.id;
      batch.ts[n] = ts ?? now;
      setRow(batch, n, coerced);
      points.set(point.id, point);
      n++;
    }
    batch.length = n;
    if (n > 0) await this.write(batch, points, 'UPDATE', true);
    return rejected;
  }

  async lastValue(point: DataPointRecord): Promise<number | boolean | string | undefined> {
    const [newest] = await this.latest(point, 1);
    return (newest && apiValue(point.dataType, newest)) ?? undefined;
  }

  /** A point changed or disappeared: forget what was cached about it. */
  forgetPoint(point: Pick<DataPointRecord, 'id' | 'xid'>): void {
    this.pointsByXid.forget(point.xid);
    this.latestCache.invalidate(point.id);
    this.published.delete(point.id);
    this.logging.forget(point.id);
  }

  /** Resumes INTERVAL logging's periods in progress and starts the clock that closes them. */
  startLogging(states: IntervalStateStore, onError: (err: unknown) => void): Promise<void> {
    return this.logging.start(states, onError);
  }

  /** Closes the INTERVAL periods the clock passed now (the timer does it every second). */
  logIntervals(now?: number): Promise<void> {
    return this.logging.tick(now);
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
  async latest(point: DataPointRecord, limit: number): Promise<StoredValue[]> {
    const stored = await this.latestCache.latest(point.id, limit);
    const accepted = this.newestAccepted.get(point.id);
    if (accepted === undefined || (stored[0] !== undefined && stored[0].ts >= accepted.ts)) return stored;
    return [accepted, ...stored].slice(0, limit);
  }

  /** Raw values with from <= ts < to, oldest first, in batches; at most `limit` when given. */
  range(point: DataPointRecord, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]> {
    return this.store.range(point.id, from, to, limit);
  }

  /**
   * Statistics of the point (read permission checked: readablePoint) over each period of the plan, a
   * chunk of periods at a time, yielding to the event loop in between (values/read/rollup.ts pointRollup).
   */
  rollup(point: DataPointRecord, plan: PeriodPlan, now: number, slice = new TimeSlice()): AsyncGenerator<RollupResult> {
    return pointRollup(this.store, point, plan, now, { slice });
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
    const input = (body ?? {}) as Record<string, unknown>;
    const problems: ValidationMessage[] = [];
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw DomainError.invalid('', 'must be an object {dataType, value}');
    if (input.dataType === undefined) problems.push(validationMessage('dataType', 'is required'));
    else if (input.dataType !== point.dataType) problems.push(validationMessage('dataType', `must be ${point.dataType}, the point's data type`));
    if (input.value === undefined) problems.push(validationMessage('value', 'is required'));
    if (!point.settable) problems.push(validationMessage('xid', 'Data point is not settable'));
    const source = await this.sources.findById(point.dataSourceId);
    if (!point.enabled || !source?.enabled) problems.push(validationMessage('xid', 'Data point is not enabled (the point and its data source must be enabled)'));
    const ts = input.timestamp === undefined ? Date.now() : toTimestamp(input.timestamp, this.timeRange);
    if (ts === undefined) problems.push(validationMessage('timestamp', timestampMessage(this.timeRange)));
    const annotation = input.annotation === undefined || input.annotation === null ? null : input.annotation;
    if (annotation !== null && typeof annotation !== 'string') problems.push(validationMessage('annotation', 'must be a string'));
    const coerced = input.value === undefined ? undefined : coerceValue(point.dataType, input.value);
    if (typeof coerced === 'string') problems.push(validationMessage('value', coerced));
    if (problems.length > 0 || coerced === undefined || typeof coerced === 'string' || ts === undefined) throw DomainError.validation(problems);

    // A value the point discards would be dropped after reaching the device: refuse it before.
    if (isExtreme(point, coerced.value)) throw DomainError.invalid('value', `is outside the point's discard limits (discardLowLimit ${point.loggingProperties.discardLowLimit}, discardHighLimit ${point.loggingProperties.discardHighLimit})`);
    const held = this.deviceWriter ? await this.writeToDevice(point, coerced) : coerced;
    const batch = emptyBatch(1);
    batch.series[0] = point.id;
    batch.ts[0] = ts;
    setRow(batch, 0, held);
    if (annotation !== null) batch.annotation = [annotation as string];
    await this.write(batch, new Map([[point.id, point]]), 'SET', true);
    const stored = storedAt(batch, 0);
    return { xid: point.xid, dataType: point.dataType, value: apiValue(point.dataType, stored), timestamp: ts, annotation: stored.annotation };
  }

  /**
   * POST /point-values: validated as a whole (nothing is written unless every entry is good).
   * Values go straight into the batch's columns: this loop runs for every ingested value.
   */
  async bulk(user: Principal, body: unknown): Promise<number> {
    if (!Array.isArray(body)) throw DomainError.invalid('', 'must be an array of {xid, value, timestamp}');
    const problems: ValidationMessage[] = [];
    const denied = new Set<string>();
    const batch = emptyBatch(body.length);
    const points = new Map<number, DataPointRecord>();
    const byXid = new Map<string, DataPointRecord | null>();
    const { min, max } = this.timeRange;
    const slice = new TimeSlice();
    let n = 0;
    for (let i = 0; i < body.length && problems.length < 100; i++) {
      // The lookups below are mostly cached: microtasks, which let no other request in.
      if (i % SLICE_CHECK_ROWS === 0) await slice.yieldIfExpired();
      const entry = body[i] as Record<string, unknown> | null;
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        problems.push(validationMessage(`[${i}]`, 'must be an object {xid, value, timestamp}'));
        continue;
      }
      const { xid, value, timestamp, dataType, annotation } = entry;
      if (typeof xid !== 'string') {
        problems.push(validationMessage(`[${i}].xid`, xid === undefined ? 'is required' : 'must be a string'));
        continue;
      }
      let point = byXid.get(xid);
      if (point === undefined) {
        point = (await this.point(xid)) ?? null;
        byXid.set(xid, point);
        if (point && !maySet(user, point)) denied.add(point.xid);
      }
      if (!point) {
        problems.push(validationMessage(`[${i}].xid`, 'Data point not found'));
        continue;
      }
      if (dataType !== undefined && dataType !== point.dataType) problems.push(validationMessage(`[${i}].dataType`, `must be ${point.dataType}, the point's data type`));
      const ts =
        typeof timestamp === 'number' && Number.isSafeInteger(timestamp) && timestamp >= min && timestamp <= max ? timestamp : toTimestamp(timestamp, this.timeRange);
      if (ts === undefined) problems.push(validationMessage(`[${i}].timestamp`, timestamp === undefined ? 'is required' : timestampMessage(this.timeRange)));
      // The common case, a finite number for a NUMERIC point, skips the general coercion.
      const coerced = point.dataType === 'NUMERIC' && typeof value === 'number' && Number.isFinite(value) ? value : value === undefined ? 'is required' : coerceValue(point.dataType, value);
      if (typeof coerced === 'string') problems.push(validationMessage(`[${i}].value`, coerced));
      if (annotation !== undefined && annotation !== null && typeof annotation !== 'string') problems.push(validationMessage(`[${i}].annotation`, 'must be a string'));
      if (problems.length > 0 || ts === undefined || typeof coerced === 'string') continue;
      batch.series[n] = point.id;
      batch.ts[n] = ts;
      if (typeof coerced === 'number') batch.value[n] = coerced;
      else setRow(batch, n, coerced);
      if (typeof annotation === 'string') (batch.annotation ??= new Array<string | null>(body.length).fill(null))[n] = annotation;
      points.set(point.id, point);
      n++;
    }
    if (denied.size > 0) throw DomainError.accessDenied(`${NO_SET_PERMISSION} on ${[...denied].slice(0, 10).join(', ')}`);
    if (problems.length > 0) throw DomainError.validation(problems);
    batch.length = n;
    await this.write(batch, points, 'UPDATE');
    return n;
  }

  /**
   * The bulk fast path for bodies already read into columns (numbers for NUMERIC points). Returns
   * undefined, having written nothing, whenever anything is unusual: the caller then takes the
   * general path, which also words the errors.
   */
  async bulkColumns(user: Principal, c: BulkColumns): Promise<number | undefined> {
    const batch = emptyBatch(c.length);
    const points = new Map<number, DataPointRecord>();
    let xid: string | undefined;
    let point: DataPointRecord | undefined;
    const { min, max } = this.timeRange;
    const slice = new TimeSlice();
    for (let i = 0; i < c.length; i++) {
      if (i % SLICE_CHECK_ROWS === 0) await slice.yieldIfExpired();
      if (c.xids[i] !== xid) {
        xid = c.xids[i]!;
        point = await this.point(xid);
        if (!point || point.dataType !== 'NUMERIC' || !maySet(user, point)) return undefined;
        points.set(point.id, point);
      }
      const value = c.values[i]!;
      const ts = c.timestamps[i]!;
      if (!Number.isFinite(value) || !Number.isSafeInteger(ts) || ts < min || ts > max) return undefined;
      batch.series[i] = point!.id;
      batch.ts[i] = ts;
      batch.value[i] = value;
    }
    await this.write(batch, points, 'UPDATE');
    return c.length;
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
   * what is cached of them goes, and the other instances are told.
   */
  forgetDeleted(earliest: ReadonlyMap<number, number>): void {
    for (const id of earliest.keys()) {
      this.latestCache.invalidate(id);
      this.published.delete(id);
      this.newestAccepted.delete(id);
      this.logging.storedElsewhere(id);
    }
    for (const l of this.writtenListeners) l(earliest);
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

  /** Saves INTERVAL logging's periods in progress, then drains the write buffer. */
  async close(): Promise<void> {
    await this.logging.stop();
    await this.buffer.close();
  }

  /** What INTERVAL logging made on the clock: stored like any write, live for nobody (its periods lie behind). */
  private async storeMade(batch: ValueBatch): Promise<void> {
    await this.buffer.write(batch);
    this.latestCache.applyBatch(batch);
    this.tellWritten(batch);
  }

  get bufferedValues(): number {
    return this.buffer.bufferedValues;
  }

  /**
   * Publishes the values that became their point's newest as live values (bus: WebSocket,
   * detectors) as soon as they are accepted, then writes durably, then updates the latest cache:
   * the pipeline of docs/ARCHITECTURE.md (accept → type check → latest → bus → write buffer). A trend or
   * an alarm does not wait for the disk; older values only enter history. Should the write fail,
   * what was published is forgotten, so the next value is judged against the store again.
   */
  private async write(batch: ValueBatch, points: ReadonlyMap<number, DataPointRecord>, kind: LiveValueKind, byLogging = false): Promise<void> {
    let accepted = batch;
    let logged = batch;
    if (byLogging) ({ accepted, logged } = await this.logging.decide(batch, points));
    else for (const id of points.keys()) this.logging.storedElsewhere(id); // an import may change the newest stored value
    if (accepted.length === 0) return;
    if (byLogging && logged !== accepted) this.noteAccepted(accepted);
    if (![...points.keys()].some((id) => this.bus.isLive(id))) {
      // Nobody follows these points: no object per value. What was published for them is out of
      // date now; should someone follow them later, the latest cache decides again.
      for (const id of points.keys()) this.published.delete(id);
      await this.durably(logged, points);
      this.latestCache.applyBatch(logged);
      this.tellWritten(logged);
      return;
    }
    const rows = rowsBySeries(accepted);
    const loaded = new Map<number, StoredValue | undefined>();
    for (const id of rows.keys()) loaded.set(id, await this.newestPublished(id));
    // No await from here to the end of the loop: batches of one point publish one after another.
    for (const [id, stored] of rows) this.publishLive(points.get(id)!, stored, loaded.get(id), kind);
    try {
      await this.durably(logged, points);
    } catch (err) {
      for (const id of rows.keys()) this.published.delete(id);
      throw err;
    }
    for (const [id, stored] of logged === accepted ? rows : rowsBySeries(logged)) this.latestCache.applyWritten(id, stored);
    this.tellWritten(logged);
  }

  /** Writes through the buffer; on failure what logging remembered as stored is forgotten. */
  private async durably(batch: ValueBatch, points: ReadonlyMap<number, DataPointRecord>): Promise<void> {
    if (batch.length === 0) return;
    try {
      await this.buffer.write(batch);
    } catch (err) {
      for (const id of points.keys()) this.logging.storedElsewhere(id);
      throw err;
    }
  }

  /** Remembers each point's newest accepted value (logged or not) for latest(). */
  private noteAccepted(b: ValueBatch): void {
    for (let i = 0; i < b.length; i++) {
      const id = b.series[i]!;
      const known = this.newestAccepted.get(id);
      if (known === undefined || b.ts[i]! >= known.ts) this.newestAccepted.set(id, storedAt(b, i));
    }
  }

  /** The newest value published for a point, or its newest stored value before any was. */
  private async newestPublished(id: number): Promise<StoredValue | undefined> {
    if (this.published.has(id)) return this.published.get(id);
    const stored = await this.latestCache.newest(id);
    return this.published.has(id) ? this.published.get(id) : stored;
  }

  /** Publishes the values newer than the point's newest (every value for SET), in time order. */
  private publishLive(point: DataPointRecord, stored: readonly StoredValue[], loaded: StoredValue | undefined, kind: LiveValueKind): void {
    let before = this.published.has(point.id) ? this.published.get(point.id) : loaded;
    for (const value of stored) {
      const newer = before === undefined || value.ts > before.ts;
      if (!newer && kind !== 'SET') continue;
      this.bus.publish({ pointId: point.id, xid: point.xid, dataType: point.dataType, value, previous: before, kind });
      if (newer) before = value;
    }
    if (before) this.published.set(point.id, before);
  }
}

/** A raw value in a fault message: short, printable. */
function describe(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** The batch's rows per series, ascending by ts. */
function rowsBySeries(batch: ValueBatch): Map<number, StoredValue[]> {
  const rows = new Map<number, StoredValue[]>();
  for (let i = 0; i < batch.length; i++) {
    let list = rows.get(batch.series[i]!);
    if (!list) rows.set(batch.series[i]!, (list = []));
    list.push(storedAt(batch, i));
  }
  for (const list of rows.values()) list.sort((a, b) => a.ts - b.ts);
  return rows;
}

function emptyBatch(n: number): ValueBatch {
  return { length: n, series: new Int32Array(n), ts: new Float64Array(n), value: new Float64Array(n), text: null, annotation: null };
}

/** Puts a coerced value into row i (ALPHANUMERIC: NaN in value, the text beside it). */
function setRow(batch: ValueBatch, i: number, v: StorableValue): void {
  batch.value[i] = v.value;
  if (v.text !== null) (batch.text ??= new Array<string | null>(batch.value.length).fill(null))[i] = v.text;
}


/** Epoch ms from a number or an ISO 8601 string with offset; undefined when neither or outside the store's range. */
function toTimestamp(raw: unknown, range: TimeRange): number | undefined {
  const ms = typeof raw === 'number' || typeof raw === 'string' ? parseInstant(raw) : undefined;
  // A store refuses another one with an error that would fail the whole write group (500).
  return ms !== undefined && ms >= range.min && ms <= range.max ? ms : undefined;
}

/** The validation message of a timestamp that is not one, or not one the store can hold. */
function timestampMessage(range: TimeRange): string {
  return `must be epoch milliseconds or an ISO 8601 date with offset, from ${new Date(range.min).toISOString()} to ${new Date(range.max).toISOString()}`;
}
