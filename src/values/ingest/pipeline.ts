// The ingest pipeline: every point value enters the history and the live bus here. The steps, in
// the order write() runs them:
// 1. Accept: a data source's values (acceptFromSource), a PUT's value once the device holds it
//    (acceptSet), a POST's batch (acceptBulk, its body read by body.ts), and the values INTERVAL
//    logging makes on the clock (storeMade: they enter at step 5, their periods lie behind).
// 2. Type check and coercion into a column batch (ValueBatch), no object per value: here for sources,
//    in body.ts for HTTP bodies.
// 3. Logging decides (logging.ts), for source and PUT values only (an import stores what it is given):
//    extreme values are dropped; what is not to be stored stays out of the batch to store (`logged`)
//    but is the point's newest accepted (values/live/newest.ts).
// 4. The values newer than their point's newest published go on the live bus (values/live/bus.ts;
//    every value for SET), only for points somebody follows: a trend or an alarm does not wait for
//    the disk, and nobody's values cost an object each.
// 5. The write buffer stores the logged batch (store/values/write-buffer.ts): durable when it resolves.
// 6. The point's newest stored is updated (values/live/newest.ts, which serves `latest`).
// 7. The written-listeners are told (series → earliest ts); the cluster tells the other instances.
// Should step 5 fail, what steps 3 and 4 remembered is forgotten: the next value is judged against
// the store again.
import type { DataPointRecord } from '../../store/metadata/data-points.js';
import { INSTANT_RANGE, type PointValueStore, type StoredValue, type TimeRange, type ValueBatch } from '../../store/values/types.js';
import { WriteBuffer } from '../../store/values/write-buffer.js';
import { earliestBySeries, emptyBatch, rowsBySeries, seriesOf, setRow, storedAt } from '../batch.js';
import type { LiveValueKind, PointValueBus } from '../live/bus.js';
import type { NewestValues } from '../live/newest.js';
import { timestampMessage } from './body.js';
import type { IntervalStateStore } from './interval-logging.js';
import { PointLogging } from './logging.js';
import { coerceValue, type StorableValue } from './types.js';

/** A value a data source produced for one of its points (raw: coerced here by the point's type). */
export interface SourceValue {
  point: DataPointRecord;
  value: unknown;
  ts?: number;
}

export interface IngestPorts {
  /** Where values go live. */
  bus: PointValueBus;
  /** Each point's newest value, which the pipeline keeps up to date. */
  newest: NewestValues;
  /** The point as it is now (INTERVAL logging looks a changed point's settings up again). */
  point(id: number): Promise<DataPointRecord | undefined>;
}

export type WrittenListener = (earliest: ReadonlyMap<number, number>) => void;

export class IngestPipeline {
  /** The timestamps the store can hold: others are refused with 422 before anything is written. */
  readonly timeRange: TimeRange;
  private readonly bus: PointValueBus;
  private readonly newest: NewestValues;
  /** Which source and PUT values are stored (the points' logging properties). */
  private readonly logging: PointLogging;
  private readonly buffer: WriteBuffer;
  private readonly writtenListeners: WrittenListener[] = [];

  constructor(store: PointValueStore, ports: IngestPorts, options: { writeBufferValues: number; zone?: string }) {
    this.bus = ports.bus;
    this.newest = ports.newest;
    const zone = options.zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    this.logging = new PointLogging({ newest: ports.newest, store: (b) => this.storeMade(b), point: ports.point }, zone);
    this.buffer = new WriteBuffer(store, options.writeBufferValues, undefined, (batch) => this.endedLate(batch));
    this.timeRange = store.timeRange ?? INSTANT_RANGE;
  }

  /** Told after values of these series became durable, or were deleted (series → earliest ts touched). */
  onWritten(listener: WrittenListener): void {
    this.writtenListeners.push(listener);
  }

  /**
   * Values from the data source runtime: coerced by each point's type, then through logging. Returns
   * a message for each value its point could not take (that value is dropped).
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

  /** A set value the device now holds (checked by body.ts): through logging, on the bus as SET. Resolves to it as stored. */
  async acceptSet(point: DataPointRecord, value: StorableValue, ts: number, annotation: string | null): Promise<StoredValue> {
    const batch = emptyBatch(1);
    batch.series[0] = point.id;
    batch.ts[0] = ts;
    setRow(batch, 0, value);
    if (annotation !== null) batch.annotation = [annotation];
    await this.write(batch, new Map([[point.id, point]]), 'SET', true);
    return storedAt(batch, 0);
  }

  /** A POST /point-values batch (checked by body.ts): an import of history, stored as given. */
  acceptBulk(batch: ValueBatch, points: ReadonlyMap<number, DataPointRecord>): Promise<void> {
    return this.write(batch, points, 'UPDATE');
  }

  /** Resumes INTERVAL logging's periods in progress and starts the clock that closes them. */
  start(states: IntervalStateStore, onError: (err: unknown) => void): Promise<void> {
    return this.logging.start(states, onError);
  }

  /** Closes the INTERVAL periods the clock passed now (the timer does it every second). */
  tick(now?: number): Promise<void> {
    return this.logging.tick(now);
  }

  /** Saves INTERVAL logging's periods in progress, then drains the write buffer. */
  async close(): Promise<void> {
    await this.logging.stop();
    await this.buffer.close();
  }

  get bufferedValues(): number {
    return this.buffer.bufferedValues;
  }

  /** A point changed or disappeared: its newest values and its INTERVAL period in progress go. */
  forgetPoint(id: number): void {
    this.newest.forget(id);
    this.logging.forget(id);
  }

  /** Another instance wrote or deleted these series' values (no argument: anything may have changed). */
  changedElsewhere(earliest?: ReadonlyMap<number, number>): void {
    if (earliest) {
      for (const id of earliest.keys()) this.newest.forget(id);
    } else {
      this.newest.forgetAll();
      this.logging.forgetAll();
    }
  }

  /** Values of these series were deleted from the store (series → earliest ts deleted): the listeners are told. */
  forgetDeleted(earliest: ReadonlyMap<number, number>): void {
    for (const id of earliest.keys()) this.newest.deleted(id);
    for (const l of this.writtenListeners) l(earliest);
  }

  /** Steps 3 to 7 (the header) for a batch of accepted values, coerced and in the store's time range. */
  private async write(batch: ValueBatch, points: ReadonlyMap<number, DataPointRecord>, kind: LiveValueKind, byLogging = false): Promise<void> {
    // 3. Logging decides.
    let accepted = batch;
    let logged = batch;
    if (byLogging) ({ accepted, logged } = await this.logging.decide(batch, points));
    else for (const id of points.keys()) this.newest.forgetLogged(id); // an import may change the newest stored value
    if (accepted.length === 0) return;
    if (byLogging && logged !== accepted) this.newest.noteAccepted(accepted);

    // 4. The bus. Values in objects (`rows`) only for points somebody follows.
    let rows: Map<number, StoredValue[]> | undefined;
    if ([...points.keys()].some((id) => this.bus.isLive(id))) {
      rows = rowsBySeries(accepted);
      const loaded = new Map<number, StoredValue | undefined>();
      for (const id of rows.keys()) loaded.set(id, await this.newest.loadPublished(id));
      // No await from here until the write buffer holds the batch: batches of one point go on the
      // bus, and into the buffer, one after another.
      for (const [id, values] of rows) this.publishNewer(points.get(id)!, values, loaded.get(id), kind);
    } else {
      // What was published for these points is out of date now; should someone follow them later,
      // the store decides again.
      for (const id of points.keys()) this.newest.forgetPublished(id);
    }

    // 5. The write buffer: durable when it resolves.
    try {
      if (logged.length > 0) await this.buffer.write(logged);
    } catch (err) {
      for (const id of points.keys()) this.newest.forgetLogged(id);
      if (rows) for (const id of rows.keys()) this.newest.forgetPublished(id);
      throw err;
    }

    // 6. The newest stored.
    if (!rows) this.newest.noteStoredBatch(logged);
    else for (const [id, values] of logged === accepted ? rows : rowsBySeries(logged)) this.newest.noteStoredRows(id, values);

    // 7. The listeners.
    this.tellWritten(logged);
  }

  /** Puts on the bus the point's values newer than its newest published (every value for SET), in time order. */
  private publishNewer(point: DataPointRecord, values: readonly StoredValue[], loaded: StoredValue | undefined, kind: LiveValueKind): void {
    let before = this.newest.newestPublished(point.id, loaded);
    for (const value of values) {
      const newer = before === undefined || value.ts > before.ts;
      if (!newer && kind !== 'SET') continue;
      this.bus.publish({ pointId: point.id, xid: point.xid, dataType: point.dataType, value, previous: before, kind });
      if (newer) before = value;
    }
    if (before) this.newest.notePublished(point.id, before);
  }

  /** What INTERVAL logging made on the clock: steps 5 to 7, live for nobody (its periods lie behind). */
  private async storeMade(batch: ValueBatch): Promise<void> {
    await this.buffer.write(batch);
    this.newest.noteStoredBatch(batch);
    this.tellWritten(batch);
  }

  /**
   * An append ended after its writers were answered 503 (the store's time-out): its values may be
   * stored after all, so what this instance and the others know of those points is forgotten.
   */
  private endedLate(batch: ValueBatch): void {
    for (const id of seriesOf(batch)) this.newest.forget(id);
    this.tellWritten(batch);
  }

  private tellWritten(batch: ValueBatch): void {
    if (this.writtenListeners.length === 0 || batch.length === 0) return;
    const earliest = earliestBySeries(batch);
    for (const l of this.writtenListeners) l(earliest);
  }
}

/** A raw value in a fault message: short, printable. */
function describe(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
