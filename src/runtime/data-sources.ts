// The data source runtime: one running driver per enabled data source. Saving a source (create,
// update, enable-disable) or changing one of its points restarts it cleanly; disabling or deleting
// stops it. Starts and stops of one source are serialised, so a burst of edits ends in the state of
// the last one. Drivers report device faults through their context: the source's state becomes
// ERROR with lastError (stored, so every instance's API shows it) and one DATA_SOURCE event is
// raised per fault episode; the first good poll after it returns the source to RUNNING and the event
// to normal. lastError keeps the last fault's text after recovery, for diagnosis.
//
// Points a driver cannot read are marked unreliable (RuntimeReliability) until their next value. A
// source that stops here (disabled, deleted, handed over) clears its points' marks: a point of a
// stopped source makes no claim (its WebSocket says TERMINATE); one that restarts in place for a
// point's edit keeps them, and its driver marks only the points it has not read yet (all of them
// when the source's own settings changed: they may name another device).
//
// Several instances on one PostgreSQL run each enabled source once: a source runs where its lease is
// held (SourceLeases). An instance that cannot take a source's lease leaves it to its holder; a sweep
// every few seconds takes over the sources whose holder is gone, and stop() hands them back. The
// holder writes its name into the source (runningOn) when it takes the lease and clears it when it
// hands the source over; each sweep also corrects what it says about the sources of this instance.
import { updatePeriodMs } from '../core/time.js';
import type { Logger } from 'pino';
import { forEachLimited } from '../core/limited.js';
import { KeyedFifoLock } from '../core/fifo-lock.js';
import { DeviceWriteError, type DeviceValue } from '../services/point-values.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { DataSourceRecord, DataSourceState, DataSourceType } from '../store/metadata/data-sources.js';
import { type DriverContext, type DriverFactory, type NewPoint, type ProducedValue, type SourceDriver } from './driver.js';
import { PointWarnings, type WarningStore } from './point-warnings.js';

/** Sources started or stopped at once (each costs store round trips; drivers do not wait for devices). */
const START_CONCURRENCY = 8;

/** What the runtime needs of the services (kept narrow: the runtime sees no HTTP and no SQL). */
export interface RuntimeSources {
  all(): Promise<DataSourceRecord[]>;
  findById(id: number): Promise<DataSourceRecord | undefined>;
  setState(id: number, state: DataSourceState, lastError: string | null): Promise<void>;
  setRunningOn(id: number, instance: string): Promise<void>;
  /** Clears runningOn of the sources that it still says run on `instance`. */
  clearRunningOn(ids: readonly number[], instance: string): Promise<void>;
}

export interface RuntimePoints extends WarningStore {
  forSource(sourceId: number): Promise<DataPointRecord[]>;
  /** Makes points a driver asks for on its source (DriverContext.createPoints); absent: refused. */
  createForSource?(source: DataSourceRecord, points: readonly NewPoint[]): Promise<DataPointRecord[]>;
}

export interface RuntimeValues {
  /** Stores produced values; returns a message per value its point's type could not take. */
  acceptFromSource(values: readonly ProducedValue[]): Promise<string[]>;
  /** The point's newest value as the API shows it. */
  lastValue(point: DataPointRecord): Promise<number | boolean | string | undefined>;
}

/** Points their source cannot read now (values/live/reliability.ts). */
export interface RuntimeReliability {
  mark(pointIds: readonly number[], reason: string): void;
  clear(pointIds: Iterable<number>): void;
  has(pointId: number): boolean;
  /** How many points are marked (0: a good value needs no look-up). */
  readonly size: number;
}

/** DATA_SOURCE events (the event service implements these). */
export interface SourceEvents {
  sourceFault(source: DataSourceRecord, message: string): Promise<void>;
  sourceRecovered(source: DataSourceRecord): Promise<void>;
  sourceDisabled(source: DataSourceRecord): Promise<void>;
}

/** Which instance runs a source (store/cluster/leases.ts); alone, every lease is granted. */
export interface SourceLeases {
  readonly shared: boolean;
  tryAcquire(sourceId: number): Promise<boolean>;
  release(sourceId: number): Promise<void>;
  /** Every lease was lost at once: the sources run under them must stop. */
  onLost(listener: () => void): void;
}

/** Why this instance stopped running a source that another may now run. */
export type HandOver = 'instance stopping' | 'disabled' | 'deleted' | 'no driver' | 'lease lost' | 'start failed';

/** How long a source-free message names who let the source go, for the take-over log line. */
const RELEASED_BY_MS = 10_000;

export interface DataSourceRuntimeOptions {
  /** This instance's name (INSTANCE_NAME): the sources it runs say so (runningOn). */
  instance: string;
  leases?: SourceLeases;
  /** How often sources run nowhere are looked for, when leases are shared (default 2 s). */
  sweepMs?: number;
  sources: RuntimeSources;
  points: RuntimePoints;
  values: RuntimeValues;
  reliability: RuntimeReliability;
  events?: SourceEvents;
  drivers: Partial<Record<DataSourceType, DriverFactory>>;
  log: Logger;
}

class RunningSource {
  readonly controller = new AbortController();
  driver: SourceDriver | undefined;
  faulted = false;
  lastError: string | null = null;

  constructor(
    readonly source: DataSourceRecord,
    /** The points the driver runs with. */
    readonly pointIds: ReadonlySet<number>,
  ) {}
}

export class DataSourceRuntime {
  private readonly running = new Map<number, RunningSource>();
  /** Per source: its starts, stops and state updates, one at a time in call order. */
  private readonly queues = new KeyedFifoLock<number>();
  private stopped = false;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly leases: SourceLeases;
  /** Who let a source go lately (their source-free messages): named when this instance takes it over. */
  private readonly releasedBy = new Map<number, { from: string; at: number }>();
  /** Per-point warnings of every source run here (counts by source for /metrics). */
  readonly warnings: PointWarnings;
  /** Driver starts here since start, by source XID (/metrics): a restart per save, not per point saved. */
  readonly starts = new Map<string, number>();

  constructor(private readonly o: DataSourceRuntimeOptions) {
    this.warnings = new PointWarnings(o.points, o.log);
    this.leases = o.leases ?? { shared: false, tryAcquire: async () => true, release: async () => undefined, onLost: () => undefined };
    this.leases.onLost(() => {
      // Also the sources whose start is under way: it may have taken its lease on the lost connection.
      for (const id of new Set([...this.running.keys(), ...this.queues.keys()])) void this.enqueue(id, () => this.stopNow(id, 'lease lost'));
    });
  }

  /** Starts every enabled source; marks the others STOPPED (a crash may have left them RUNNING). */
  async start(): Promise<void> {
    await forEachLimited(await this.o.sources.all(), START_CONCURRENCY, (ds) => this.enqueue(ds.id, () => this.restartNow(ds, false)));
    if (this.leases.shared) {
      this.sweeper = setInterval(() => void this.sweep(), this.o.sweepMs ?? 2_000);
      this.sweeper.unref();
    }
  }

  /** Stops every source and hands back its lease; no value is accepted from it after it resolves. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    await this.queues.idle();
    const ids = [...this.running.keys()];
    // One statement for them all (an UPDATE each took ~1.5 ms on PGlite), while the leases are still held.
    const cleared = await this.o.sources.clearRunningOn(ids, this.o.instance).then(
      () => true,
      (err: unknown) => this.o.log.warn({ err }, 'data source runtime: clearing runningOn failed'),
    );
    await forEachLimited(ids, START_CONCURRENCY, (id) => this.stopNow(id, 'instance stopping', cleared === true));
    await this.warnings.flush();
  }

  /** The sources this instance runs now, and how many of them are in ERROR (for /metrics). */
  get runningHere(): { total: number; faulted: number } {
    let faulted = 0;
    for (const r of this.running.values()) if (r.faulted) faulted++;
    return { total: this.running.size, faulted };
  }

  /** Whether this instance runs the source, once a start or stop under way has finished. */
  async runsHere(sourceId: number): Promise<boolean> {
    await this.queues.idle(sourceId);
    return this.running.has(sourceId);
  }

  /**
   * Another instance (`from`) let a source go (it is stopping): look for it now rather than at the
   * next sweep.
   */
  sourceReleasedElsewhere(sourceId?: number, from?: string): void {
    if (sourceId !== undefined && from) this.releasedBy.set(sourceId, { from, at: Date.now() });
    if (this.leases.shared && !this.stopped) void this.sweep();
  }

  /** Takes over enabled sources that run nowhere (their instance stopped or died). */
  private async sweep(): Promise<void> {
    if (this.stopped) return;
    for (const [id, { at }] of this.releasedBy) if (Date.now() - at > RELEASED_BY_MS) this.releasedBy.delete(id);
    try {
      for (const ds of await this.o.sources.all()) {
        if (this.queues.has(ds.id)) continue;
        // A name written late (after a lease lost and taken elsewhere) or a hand-over not recorded.
        if (this.running.has(ds.id) !== (ds.runningOn === this.o.instance)) void this.enqueue(ds.id, () => this.correctRunningOn(ds.id));
        if (!ds.enabled || this.running.has(ds.id) || !this.o.drivers[ds.modelType]) continue;
        void this.enqueue(ds.id, async () => {
          const fresh = await this.o.sources.findById(ds.id);
          if (fresh?.enabled && !this.running.has(ds.id)) await this.restartNow(fresh, false);
        });
      }
    } catch (err) {
      this.o.log.warn({ err }, 'data source runtime: looking for sources to take over failed');
    }
  }

  /**
   * Another instance saved the source or one of its points: restart it here if it runs here (the
   * others leave it to its lease holder).
   */
  sourceChangedElsewhere(sourceId: number): Promise<void> {
    return this.enqueue(sourceId, async () => {
      const ds = await this.o.sources.findById(sourceId);
      if (!ds) await this.stopNow(sourceId, 'deleted');
      else if (this.running.has(sourceId) || !ds.enabled) await this.restartNow(ds, false, true);
    });
  }

  sourceSaved(ds: DataSourceRecord): Promise<void> {
    return this.enqueue(ds.id, () => this.restartNow(ds, true));
  }

  sourceDeleted(ds: DataSourceRecord): Promise<void> {
    return this.enqueue(ds.id, async () => {
      await this.stopNow(ds.id, 'deleted');
      await this.o.events?.sourceDisabled(ds);
    });
  }

  /** A point was created, changed or deleted: its source restarts with the new point list. */
  pointChanged(point: Pick<DataPointRecord, 'dataSourceId'>): Promise<void> {
    return this.enqueue(point.dataSourceId, async () => {
      const ds = await this.o.sources.findById(point.dataSourceId);
      if (ds) await this.restartNow(ds, false);
    });
  }

  /** Many points changed at once (an import): each of their sources restarts once, with the new point list. */
  async pointsChanged(points: readonly Pick<DataPointRecord, 'dataSourceId'>[]): Promise<void> {
    const sources = new Set<number>();
    for (const p of points) sources.add(p.dataSourceId);
    for (const id of sources) await this.pointChanged({ dataSourceId: id });
  }

  /**
   * Writes a set value through the point's source to its device. Resolves when the device accepted
   * it (at once for sources without a device) with what the device now holds (undefined: as given);
   * rejects with DeviceWriteError otherwise.
   */
  async write(point: DataPointRecord, value: number | boolean | string): Promise<DeviceValue | void> {
    await this.queues.idle(point.dataSourceId); // a restart in progress: write to the new driver
    const r = this.running.get(point.dataSourceId);
    if (!r?.driver) throw new DeviceWriteError('Data source is not running');
    if (!r.driver.write) return undefined;
    try {
      return await r.driver.write(point, value);
    } catch (err) {
      const refusedValue = err instanceof TypeError || err instanceof RangeError;
      throw new DeviceWriteError(err instanceof Error ? err.message : String(err), refusedValue ? 'value' : 'device');
    }
  }

  private enqueue(sourceId: number, task: () => Promise<void>): Promise<void> {
    return this.queues.run(sourceId, task).catch((err: unknown) => {
      this.o.log.error({ err, sourceId }, 'data source runtime: start or stop failed');
    });
  }

  /**
   * `edited`: the user saved the source (a disabled one then has its events returned to normal).
   * `quiet`: told by another instance, which has already set the state and raised the events.
   */
  private async restartNow(ds: DataSourceRecord, edited: boolean, quiet = false): Promise<void> {
    const runs = ds.enabled && !this.stopped && this.o.drivers[ds.modelType] !== undefined;
    const previous = this.running.get(ds.id);
    // The lease and the points' marks are kept across a restart here, so no other instance takes the source meanwhile.
    await this.stopNow(ds.id, runs ? undefined : !ds.enabled ? 'disabled' : this.stopped ? 'instance stopping' : 'no driver');
    const factory = this.o.drivers[ds.modelType];
    if (!ds.enabled || this.stopped || !factory) {
      if (!this.stopped && !quiet) await this.o.sources.setState(ds.id, 'STOPPED', ds.enabled && !factory ? `No driver for ${ds.modelType}` : null);
      if (!ds.enabled && edited) await this.o.events?.sourceDisabled(ds);
      return;
    }
    // Another instance runs it: that instance keeps its state.
    if (!(await this.leases.tryAcquire(ds.id))) {
      if (previous) this.o.reliability.clear(previous.pointIds);
      return;
    }
    if (!previous) this.tookOver(ds);
    if (ds.runningOn !== this.o.instance) await this.o.sources.setRunningOn(ds.id, this.o.instance);
    try {
      const points = (await this.o.points.forSource(ds.id)).filter((p) => p.enabled);
      const r = new RunningSource(ds, new Set(points.map((p) => p.id)));
      // Points deleted or disabled by the edit make no claim any more.
      if (previous) this.o.reliability.clear([...previous.pointIds].filter((id) => !r.pointIds.has(id)));
      // Points already read from the same device stay as they were; new settings may name another device.
      const read = previous && sameSettings(previous.source, ds) ? previous.pointIds : undefined;
      const unread = read ? points.filter((p) => !read.has(p.id)) : points;
      this.running.set(ds.id, r);
      await this.o.sources.setState(ds.id, 'RUNNING', ds.lastError);
      r.driver = factory(this.contextFor(r, points, unread));
      this.starts.set(ds.xid, (this.starts.get(ds.xid) ?? 0) + 1);
      await r.driver.start();
    } catch (err) {
      // Not started (a store unavailable a moment): the lease goes back, so that a sweep, here or on
      // another instance, starts the source again rather than nobody running it.
      if (previous) this.o.reliability.clear(previous.pointIds);
      await this.stopNow(ds.id, 'start failed');
      throw err;
    }
  }

  /** Logs that this instance runs a source now, and from whom it took it over when known. */
  private tookOver(ds: DataSourceRecord): void {
    const released = this.releasedBy.get(ds.id);
    this.releasedBy.delete(ds.id);
    const previous = ds.runningOn ?? (released && Date.now() - released.at <= RELEASED_BY_MS ? released.from : null);
    if (previous !== null && previous !== this.o.instance) this.o.log.info({ source: ds.xid, from: previous }, 'data source taken over');
    else this.o.log.info({ source: ds.xid }, 'data source started on this instance');
  }

  /**
   * `handOver`: why another instance may run the source now: the lease goes back once the driver
   * has stopped (unless it was lost), and its points' marks are cleared. Without it the source
   * restarts here and keeps its lease and marks.
   */
  private async stopNow(sourceId: number, handOver?: HandOver, cleared = false): Promise<void> {
    const r = this.running.get(sourceId);
    if (r) {
      this.running.delete(sourceId);
      r.controller.abort();
      await r.driver?.stop().catch((err: unknown) => this.o.log.warn({ err, sourceId }, 'data source driver failed to stop cleanly'));
      if (handOver) this.o.reliability.clear(r.pointIds);
    }
    if (!handOver) return;
    if (r) {
      this.o.log.info({ source: r.source.xid, reason: handOver }, 'data source handed over');
      // Before the lease goes: the next holder's name is never overwritten.
      if (!cleared) await this.o.sources.clearRunningOn([sourceId], this.o.instance).catch((err: unknown) => this.o.log.warn({ err, sourceId }, 'data source: clearing runningOn failed'));
    }
    if (handOver !== 'lease lost') await this.leases.release(sourceId).catch((err: unknown) => this.o.log.warn({ err, sourceId }, 'data source lease release failed'));
  }

  /** Makes runningOn say whether this instance runs the source. */
  private async correctRunningOn(sourceId: number): Promise<void> {
    if (this.running.has(sourceId)) await this.o.sources.setRunningOn(sourceId, this.o.instance);
    else await this.o.sources.clearRunningOn([sourceId], this.o.instance);
  }

  private contextFor(r: RunningSource, points: readonly DataPointRecord[], unread: readonly DataPointRecord[]): DriverContext {
    const { o, warnings } = this;
    const { reliability } = o;
    const live = () => !r.controller.signal.aborted;
    const fault = (message: string) => {
      if (!live() || (r.faulted && r.lastError === message)) return;
      const firstOfEpisode = !r.faulted;
      r.faulted = true;
      r.lastError = message;
      o.log.warn({ source: r.source.xid, error: message }, 'data source fault');
      void this.report(r, async () => {
        await o.sources.setState(r.source.id, 'ERROR', message);
        if (firstOfEpisode) await o.events?.sourceFault(r.source, message);
      });
    };
    return {
      source: r.source,
      points,
      unread,
      periodMs: updatePeriodMs(r.source),
      signal: r.controller.signal,
      lastValue: (point) => o.values.lastValue(point),
      createPoints: async (made) => {
        if (!o.points.createForSource) throw new Error('points cannot be made here');
        return made.length === 0 ? [] : o.points.createForSource(r.source, made);
      },
      async accept(values) {
        if (!live() || values.length === 0) return;
        if (warnings.anyOpen) for (const v of values) warnings.goodValue(v.point.id);
        // Cleared before the values go live, so their UPDATE already says reliable.
        if (reliability.size > 0) reliability.clear(values.filter((v) => reliability.has(v.point.id)).map((v) => v.point.id));
        try {
          const rejected = await o.values.acceptFromSource(values);
          if (rejected.length > 0) fault(rejected.length === 1 ? rejected[0]! : `${rejected[0]} (and ${rejected.length - 1} more)`);
        } catch (err) {
          o.log.error({ err, source: r.source.xid }, 'storing values from a data source failed');
          fault('Storing values failed');
        }
      },
      fault,
      warn: (point, message) => {
        if (live()) warnings.warn(point, r.source.xid, message);
      },
      unreliable: (marked, reason) => {
        if (live() && marked.length > 0) reliability.mark(marked.map((p) => p.id), reason);
      },
      recovered: () => {
        if (!live() || !r.faulted) return;
        r.faulted = false;
        o.log.info({ source: r.source.xid }, 'data source recovered');
        void this.report(r, async () => {
          await o.sources.setState(r.source.id, 'RUNNING', r.lastError);
          await o.events?.sourceRecovered(r.source);
        });
      },
    };
  }

  /** State and event updates run in the source's queue, in order, and never throw at the driver. */
  private report(r: RunningSource, update: () => Promise<void>): Promise<void> {
    return this.enqueue(r.source.id, async () => {
      if (this.running.get(r.source.id) === r) await update();
    });
  }
}

/** Whether a restarted source still talks to the same device (its type's settings unchanged). */
function sameSettings(a: DataSourceRecord, b: DataSourceRecord): boolean {
  return JSON.stringify(a.settings) === JSON.stringify(b.settings);
}
