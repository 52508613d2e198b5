// The data source runtime: one running driver per enabled data source. Saving a source (create,
// update, enable-disable) or changing one of its points restarts it cleanly; disabling or deleting
// stops it. Starts and stops of one source are serialised, so a burst of edits ends in the state of
// the last one. Drivers report device faults through their context: the source's state becomes
// ERROR with lastError (stored, so every instance's API shows it) and one DATA_SOURCE event is
// raised per fault episode; the first good poll after it returns the source to RUNNING and the event
// to normal. lastError keeps the last fault's text after recovery, for diagnosis.
//
// Several instances on one PostgreSQL run each enabled source once: a source runs where its lease is
// held (SourceLeases). An instance that cannot take a source's lease leaves it to its holder; a sweep
// every few seconds takes over the sources whose holder is gone, and stop() hands them back.
import type { Logger } from 'pino';
import { forEachLimited } from '../core/limited.js';
import { DeviceWriteError, type DeviceValue } from '../services/point-values.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { DataSourceRecord, DataSourceState, DataSourceType } from '../store/metadata/data-sources.js';
import { periodMs, type DriverContext, type DriverFactory, type ProducedValue, type SourceDriver } from './driver.js';
import { PointWarnings, type WarningStore } from './point-warnings.js';

/** Sources started or stopped at once (each costs store round trips; drivers do not wait for devices). */
const START_CONCURRENCY = 8;

/** What the runtime needs of the services (kept narrow: the runtime sees no HTTP and no SQL). */
export interface RuntimeSources {
  all(): Promise<DataSourceRecord[]>;
  findById(id: number): Promise<DataSourceRecord | undefined>;
  setState(id: number, state: DataSourceState, lastError: string | null): Promise<void>;
}

export interface RuntimePoints extends WarningStore {
  forSource(sourceId: number): Promise<DataPointRecord[]>;
}

export interface RuntimeValues {
  /** Stores produced values; returns a message per value its point's type could not take. */
  acceptFromSource(values: readonly ProducedValue[]): Promise<string[]>;
  /** The point's newest value as the API shows it. */
  lastValue(point: DataPointRecord): Promise<number | boolean | string | undefined>;
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

export interface DataSourceRuntimeOptions {
  leases?: SourceLeases;
  /** How often sources run nowhere are looked for, when leases are shared (default 2 s). */
  sweepMs?: number;
  sources: RuntimeSources;
  points: RuntimePoints;
  values: RuntimeValues;
  events?: SourceEvents;
  drivers: Partial<Record<DataSourceType, DriverFactory>>;
  log: Logger;
}

class RunningSource {
  readonly controller = new AbortController();
  driver: SourceDriver | undefined;
  faulted = false;
  lastError: string | null = null;

  constructor(readonly source: DataSourceRecord) {}
}

export class DataSourceRuntime {
  private readonly running = new Map<number, RunningSource>();
  /** Per source: the tail of its queued starts and stops. */
  private readonly queues = new Map<number, Promise<void>>();
  private stopped = false;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly leases: SourceLeases;
  /** Per-point warnings of every source run here (counts by source for /metrics). */
  readonly warnings: PointWarnings;
  /** Driver starts here since start, by source XID (/metrics): a restart per save, not per point saved. */
  readonly starts = new Map<string, number>();

  constructor(private readonly o: DataSourceRuntimeOptions) {
    this.warnings = new PointWarnings(o.points, o.log);
    this.leases = o.leases ?? { shared: false, tryAcquire: async () => true, release: async () => undefined, onLost: () => undefined };
    this.leases.onLost(() => {
      for (const id of [...this.running.keys()]) void this.enqueue(id, () => this.stopNow(id, false));
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

  /** Stops every source and hands back its lease; nothing is published after it resolves. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.queues.values()]);
    await forEachLimited([...this.running.keys()], START_CONCURRENCY, (id) => this.stopNow(id));
    await this.warnings.flush();
  }

  /** Whether this instance runs the source, once a start or stop under way has finished. */
  async runsHere(sourceId: number): Promise<boolean> {
    await this.queues.get(sourceId);
    return this.running.has(sourceId);
  }

  /** Another instance let a source go (it is stopping): look for it now rather than at the next sweep. */
  sourceReleasedElsewhere(): void {
    if (this.leases.shared && !this.stopped) void this.sweep();
  }

  /** Takes over enabled sources that run nowhere (their instance stopped or died). */
  private async sweep(): Promise<void> {
    if (this.stopped) return;
    try {
      for (const ds of await this.o.sources.all()) {
        if (!ds.enabled || this.running.has(ds.id) || this.queues.has(ds.id) || !this.o.drivers[ds.modelType]) continue;
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
      if (!ds) await this.stopNow(sourceId);
      else if (this.running.has(sourceId) || !ds.enabled) await this.restartNow(ds, false, true);
    });
  }

  sourceSaved(ds: DataSourceRecord): Promise<void> {
    return this.enqueue(ds.id, () => this.restartNow(ds, true));
  }

  sourceDeleted(ds: DataSourceRecord): Promise<void> {
    return this.enqueue(ds.id, async () => {
      await this.stopNow(ds.id);
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
    await this.queues.get(point.dataSourceId); // a restart in progress: write to the new driver
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
    const run = (this.queues.get(sourceId) ?? Promise.resolve()).then(task).catch((err: unknown) => {
      this.o.log.error({ err, sourceId }, 'data source runtime: start or stop failed');
    });
    this.queues.set(sourceId, run);
    void run.then(() => {
      if (this.queues.get(sourceId) === run) this.queues.delete(sourceId);
    });
    return run;
  }

  /**
   * `edited`: the user saved the source (a disabled one then has its events returned to normal).
   * `quiet`: told by another instance, which has already set the state and raised the events.
   */
  private async restartNow(ds: DataSourceRecord, edited: boolean, quiet = false): Promise<void> {
    const runs = ds.enabled && !this.stopped && this.o.drivers[ds.modelType] !== undefined;
    // The lease is kept across a restart here, so no other instance takes the source meanwhile.
    await this.stopNow(ds.id, !runs);
    const factory = this.o.drivers[ds.modelType];
    if (!ds.enabled || this.stopped || !factory) {
      if (!this.stopped && !quiet) await this.o.sources.setState(ds.id, 'STOPPED', ds.enabled && !factory ? `No driver for ${ds.modelType}` : null);
      if (!ds.enabled && edited) await this.o.events?.sourceDisabled(ds);
      return;
    }
    // Another instance runs it: that instance keeps its state.
    if (!(await this.leases.tryAcquire(ds.id))) return;
    const r = new RunningSource(ds);
    const points = (await this.o.points.forSource(ds.id)).filter((p) => p.enabled);
    this.running.set(ds.id, r);
    await this.o.sources.setState(ds.id, 'RUNNING', ds.lastError);
    r.driver = factory(this.contextFor(r, points));
    this.starts.set(ds.xid, (this.starts.get(ds.xid) ?? 0) + 1);
    await r.driver.start();
  }

  /** `release`: hand the lease back once the driver has stopped (not when it restarts here). */
  private async stopNow(sourceId: number, release = true): Promise<void> {
    const r = this.running.get(sourceId);
    if (r) {
      this.running.delete(sourceId);
      r.controller.abort();
      await r.driver?.stop().catch((err: unknown) => this.o.log.warn({ err, sourceId }, 'data source driver failed to stop cleanly'));
    }
    if (release) await this.leases.release(sourceId).catch((err: unknown) => this.o.log.warn({ err, sourceId }, 'data source lease release failed'));
  }

  private contextFor(r: RunningSource, points: readonly DataPointRecord[]): DriverContext {
    const { o, warnings } = this;
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
      periodMs: periodMs(r.source),
      signal: r.controller.signal,
      lastValue: (point) => o.values.lastValue(point),
      async publish(values) {
        if (!live() || values.length === 0) return;
        if (warnings.anyOpen) for (const v of values) warnings.goodValue(v.point.id);
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
