// The event detector runtime: watches the live values of live points (point and source enabled)
// and raises and returns to normal their detectors' events, one event per crossing.
//
// State per detector: `inAlarm` (an episode is open: its event raised and its condition not yet
// seen to end), restored at start from the open episodes in the database so that a restart raises
// no duplicates (a unique index makes a duplicate raise a no-op anyway). Decisions are taken
// synchronously as values arrive; the database writes they cause run one at a time, in order.
//
// rtnApplicable false: such an event cannot end by itself, so it stays active until someone
// acknowledges it (an operator's "active alarms" view keeps showing it); the detector still
// re-arms when the condition ends, and the next crossing raises a new event.
//
// durationMs: the condition must hold for that long (wall clock, or value timestamps as far apart)
// before the event is raised; a value outside the condition cancels the wait.
//
// ALPHANUMERIC_REGEX_STATE: the condition is its pattern found in the text value, compiled once per watch
// and matched in bounded time (core/bounded-regex.ts); numeric detectors ignore text values and it ignores
// numbers.
import type { Logger } from 'pino';
import { compilePattern, isPatternError, type TextPattern } from '../core/bounded-regex.js';
import { FifoLock } from '../core/fifo-lock.js';
import type { DataPointListener } from '../services/data-points.js';
import type { DataSourceListener } from '../services/data-sources.js';
import type { EventDetectorListener, SavedDetector } from '../services/event-detectors.js';
import type { RaiseInput } from '../services/events.js';
import type { LiveValue, PointValueBus } from '../values/live/bus.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { DataSourceRecord } from '../store/metadata/data-sources.js';
import type { DetectorSettings, EventDetectorRecord } from '../store/metadata/event-detectors.js';
import type { DetectorScope, RtnCause, WatchedDetector } from '../store/metadata/events.js';
import type { StoredValue } from '../store/values/types.js';

/** What the runtime needs of the event service: the detectors to watch, and their events. */
export interface DetectorEvents {
  /** The detectors in scope by id: after `afterId`, at most `limit`. */
  watchedDetectors(scope: DetectorScope, afterId: number, limit: number): Promise<WatchedDetector[]>;
  openDetectorIds(detectorIds: readonly number[]): Promise<Set<number>>;
  raise(input: RaiseInput): Promise<unknown>;
  detectorsCleared(detectorIds: readonly number[], cause: RtnCause, ts?: number): Promise<void>;
  pointRenamed(pointId: number, oldXid: string, newXid: string): Promise<void>;
  sourceRenamed(source: DataSourceRecord): Promise<void>;
  sourceDisabled(source: DataSourceRecord): Promise<void>;
}

export interface DetectorRuntimeDeps {
  events: DetectorEvents;
  points: { findById(id: number): Promise<DataPointRecord | undefined> };
  sources: { findById(id: number): Promise<DataSourceRecord | undefined> };
  bus: Pick<PointValueBus, 'subscribe' | 'follow'>;
  log: Pick<Logger, 'error'>;
}

interface Watch extends WatchedDetector {
  inAlarm: boolean;
  /** Value timestamp since which the condition holds while durationMs has not passed yet. */
  pendingSince?: number;
  /** The duration wait, or the NO_UPDATE timeout. */
  timer?: NodeJS.Timeout;
  /** Ends the bus follow of the point. */
  unfollow: () => void;
  /** ALPHANUMERIC_REGEX_STATE: its `state`, compiled once when watched. */
  pattern?: TextPattern;
}

const settings = (d: EventDetectorRecord): DetectorSettings => d.config as DetectorSettings;

/** Detectors loaded per query: each page is a statement of its own (PGlite decodes rows on this thread). */
const LOAD_PAGE = 100;

/** Does the alarm condition hold for this value? In alarm, limits return only past resetLimit. */
export function conditionHolds(d: EventDetectorRecord, value: number, inAlarm: boolean): boolean {
  const s = settings(d);
  switch (d.detectorType) {
    case 'HIGH_LIMIT':
      if (!inAlarm) return value > s.limit!;
      return s.resetLimit !== undefined ? value >= s.resetLimit : value > s.limit!;
    case 'LOW_LIMIT':
      if (!inAlarm) return value < s.limit!;
      return s.resetLimit !== undefined ? value <= s.resetLimit : value < s.limit!;
    case 'RANGE':
      return value < s.low! || value > s.high!;
    case 'BINARY_STATE':
      return value === (s.state === true ? 1 : 0);
    case 'MULTISTATE_STATE':
      return value === s.state;
    case 'ALPHANUMERIC_REGEX_STATE':
    case 'NO_UPDATE':
      return false;
  }
}

/**
 * Does the value meet the watched detector's condition; undefined: the value says nothing to it (a
 * numeric detector given a value that is not a finite number, a text detector given no text).
 */
function holds(w: Watch, value: StoredValue): boolean | undefined {
  if (w.pattern) return value.text === null ? undefined : w.pattern.test(value.text);
  const n = value.value;
  if (n === null || !Number.isFinite(n)) return undefined;
  return conditionHolds(w.detector, n, w.inAlarm);
}

function describe(w: Watch, value: number | undefined): string {
  const d = w.detector;
  const s = settings(d);
  const point = `${w.point.deviceName ? `${w.point.deviceName} - ` : ''}${w.point.name} (${w.point.xid})`;
  const label = d.name || d.detectorType;
  const held = s.durationMs && d.detectorType !== 'NO_UPDATE' ? ` for ${s.durationMs} ms` : '';
  switch (d.detectorType) {
    case 'HIGH_LIMIT':
      return `${label}: ${point} is ${value}, above the high limit ${s.limit}${held}`;
    case 'LOW_LIMIT':
      return `${label}: ${point} is ${value}, below the low limit ${s.limit}${held}`;
    case 'RANGE':
      return `${label}: ${point} is ${value}, outside the range ${s.low} to ${s.high}${held}`;
    case 'BINARY_STATE':
    case 'MULTISTATE_STATE':
      return `${label}: ${point} is in state ${String(s.state)}${held}`;
    case 'ALPHANUMERIC_REGEX_STATE':
      return `${label}: ${point} matches ${String(s.state)}${held}`;
    case 'NO_UPDATE':
      return `${label}: ${point} has had no value for ${s.durationMs} ms`;
  }
}

/** Same type, level, settings and point: an edit of the name keeps the detector's state. */
function sameDefinition(a: EventDetectorRecord, b: EventDetectorRecord): boolean {
  return a.detectorType === b.detectorType && a.alarmLevel === b.alarmLevel && a.dataPointId === b.dataPointId && JSON.stringify(a.config) === JSON.stringify(b.config);
}

export class DetectorRuntime {
  private readonly byId = new Map<number, Watch>();
  private readonly byPoint = new Map<number, Watch[]>();
  /** Loads, reloads and event writes: one at a time, in the order decided. */
  private readonly tasks = new FifoLock();
  private unsubscribe?: () => void;
  private running = false;

  constructor(private readonly deps: DetectorRuntimeDeps) {}

  /**
   * Loads the detectors of live points with their state and starts following values and changes.
   * Rejects when they could not be loaded (a store unavailable): the caller stops and tries again.
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    // Only the points with a detector cost the ingest path live-value work (see watch()).
    this.unsubscribe = this.deps.bus.subscribe((v) => this.onValue(v), { followedOnly: true });
    await this.tasks.run(() => this.load({}));
  }

  /** Stops watching: timers cleared, pending writes finished. */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const id of [...this.byId.keys()]) this.unwatch(id);
    await this.idle();
  }

  /** Resolves once the event writes decided so far are done. */
  idle(): Promise<void> {
    return this.tasks.idle();
  }

  /** How many detectors are watched (live points only). */
  get watchedCount(): number {
    return this.byId.size;
  }

  private enqueue(task: () => Promise<unknown>): void {
    this.tasks.run(task).catch((err: unknown) => this.deps.log.error({ err }, 'event detector task failed'));
  }

  // ---- following changes --------------------------------------------------------------------

  // Changes made through another instance of the cluster arrive here by id (services/cluster.ts):
  // only the instance that runs the detectors acts on them, as its own listeners would have.

  /** A detector was created, redefined or deleted elsewhere. */
  detectorChangedElsewhere(id: number): Promise<void> {
    return this.detectorsChangedElsewhere([id]);
  }

  /** Detectors were created, redefined or deleted elsewhere (an import there: all at once). */
  async detectorsChangedElsewhere(ids: readonly number[]): Promise<void> {
    if (!this.running) return;
    this.enqueue(async () => {
      const fresh = new Map<number, WatchedDetector>();
      for await (const page of this.pages({ detectorIds: ids })) for (const f of page) fresh.set(f.detector.id, f);
      const ended: number[] = [];
      const reload: number[] = [];
      for (const id of ids) {
        const w = this.byId.get(id);
        const f = fresh.get(id);
        if (w && f && sameDefinition(f.detector, w.detector)) {
          w.detector = f.detector;
          continue;
        }
        if (w || !f) {
          this.unwatch(id);
          ended.push(id);
        }
        if (f) reload.push(id);
      }
      await this.deps.events.detectorsCleared(ended, 'SOURCE_DISABLED');
      if (reload.length > 0) await this.load({ detectorIds: reload });
    });
    await this.idle();
  }

  /** A point was edited, disabled or deleted elsewhere; `oldXid`: its XID before. */
  async pointChangedElsewhere(pointId: number, oldXid: string): Promise<void> {
    if (!this.running) return;
    this.enqueue(() => this.pointChanged({ id: pointId, xid: oldXid }));
    await this.idle();
  }

  /** Points were edited in place elsewhere (an import there: XIDs kept), all at once. */
  async pointsChangedElsewhere(pointIds: readonly number[]): Promise<void> {
    if (!this.running) return;
    this.enqueue(() => this.reloadPoints(pointIds));
    await this.idle();
  }

  /** A source was saved or deleted elsewhere (that instance ended the events of a disabled one). */
  async sourceChangedElsewhere(sourceId: number): Promise<void> {
    if (!this.running) return;
    const ds = await this.deps.sources.findById(sourceId);
    if (ds?.enabled) return this.sourceSaved(ds);
    this.unwatchSource(sourceId);
  }

  /**
   * What the detectors must hear of changes, registered once by the composition root
   * (change-listeners.ts) after every other listener; each ignores calls while the detectors are stopped.
   */
  changeListeners(): { detectors: EventDetectorListener; points: DataPointListener; sources: DataSourceListener; sourceDisabled: (ds: DataSourceRecord) => void } {
    const { events } = this.deps;
    return {
      // Awaited by the API: a value written after the answer meets the detector as it now is.
      detectors: {
        detectorCreated: (d) => {
          if (!this.running) return;
          this.enqueue(() => this.load({ detectorId: d.id }));
          return this.idle();
        },
        detectorUpdated: (d, before) => {
          if (!this.running) return;
          this.detectorUpdated(d, before);
          return this.idle();
        },
        detectorDeleted: (d) => {
          if (!this.running) return;
          this.detectorGone(d.id);
          return this.idle();
        },
        detectorsSaved: (saved) => {
          if (!this.running) return;
          this.detectorsSaved(saved);
          return this.idle();
        },
      },
      points: {
        // Awaited by the API: the answer to a point edit comes once its detectors follow it.
        pointChanged: async (p) => {
          if (!this.running) return;
          this.enqueue(() => this.pointChanged(p));
          await this.idle();
        },
        // An import: the saved sources' detectors reloaded with them (sourceSaved); the rest at once.
        pointsChanged: async (points, savedSources) => {
          if (!this.running) return;
          const ids = points.filter((p) => !savedSources.has(p.dataSourceId)).map((p) => p.id);
          if (ids.length > 0) this.enqueue(() => this.reloadPoints(ids));
          await this.idle();
        },
      },
      sources: {
        sourceSaved: (ds) => (this.running ? this.sourceSaved(ds) : undefined),
        // Deleting stops the source first: its active events end as when it is disabled.
        sourceDeleted: (ds) => (this.running ? this.guard(events.sourceDisabled(ds)) : undefined),
      },
      sourceDisabled: (ds) => this.forgetSource(ds.id),
    };
  }

  private async guard(work: Promise<void>): Promise<void> {
    await work.catch((err: unknown) => this.deps.log.error({ err }, 'event detector change failed'));
  }

  private detectorUpdated(d: EventDetectorRecord, before: EventDetectorRecord): void {
    const w = this.byId.get(d.id);
    if (w && sameDefinition(d, before)) {
      w.detector = d;
      return;
    }
    this.detectorGone(d.id);
    this.enqueue(() => this.load({ detectorId: d.id }));
  }

  /**
   * Saved at once (an import): a redefined detector's open episode ends; the others keep their state
   * (one created beside its point may be watched already: its point's reload loaded it). Whatever is
   * not watched yet loads in one query.
   */
  private detectorsSaved(changes: readonly SavedDetector[]): void {
    const redefined: number[] = [];
    const load: number[] = [];
    for (const { saved, before } of changes) {
      const w = this.byId.get(saved.id);
      if (before && !sameDefinition(saved, before)) {
        this.unwatch(saved.id);
        redefined.push(saved.id);
        load.push(saved.id);
      } else if (w) w.detector = saved;
      else load.push(saved.id);
    }
    if (redefined.length > 0) this.enqueue(() => this.deps.events.detectorsCleared(redefined, 'SOURCE_DISABLED'));
    if (load.length > 0) this.enqueue(() => this.load({ detectorIds: load }));
  }

  /** Deleted or redefined: stop watching it; its open episode ends (cause SOURCE_DISABLED). */
  private detectorGone(id: number): void {
    this.unwatch(id);
    this.enqueue(() => this.deps.events.detectorsCleared([id], 'SOURCE_DISABLED'));
  }

  /** A point was edited, disabled or deleted: reload its detectors; those no longer live end. */
  private async pointChanged(before: Pick<DataPointRecord, 'id' | 'xid'>): Promise<void> {
    const now = await this.deps.points.findById(before.id);
    if (now) await this.deps.events.pointRenamed(before.id, before.xid, now.xid);
    const previous = (this.byPoint.get(before.id) ?? []).map((w) => w.detector.id);
    for (const id of previous) this.unwatch(id);
    const loaded = await this.load({ pointId: before.id });
    const ended = previous.filter((id) => !loaded.has(id));
    await this.deps.events.detectorsCleared(ended, 'SOURCE_DISABLED');
  }

  /** Points edited in place (XIDs kept): their detectors reload at once; those no longer live end. */
  private async reloadPoints(pointIds: readonly number[]): Promise<void> {
    const previous: number[] = [];
    for (const id of pointIds) for (const w of this.byPoint.get(id) ?? []) previous.push(w.detector.id);
    for (const id of previous) this.unwatch(id);
    const loaded = await this.load({ pointIds });
    await this.deps.events.detectorsCleared(previous.filter((id) => !loaded.has(id)), 'SOURCE_DISABLED');
  }

  private async sourceSaved(ds: DataSourceRecord): Promise<void> {
    this.enqueue(() => this.deps.events.sourceRenamed(ds));
    if (!ds.enabled) return this.guard(this.deps.events.sourceDisabled(ds));
    this.enqueue(async () => {
      this.unwatchSource(ds.id);
      await this.load({ sourceId: ds.id });
    });
    await this.idle();
  }

  /** EventService.sourceDisabled calls this before ending the events: forget the source's points. */
  private async forgetSource(sourceId: number): Promise<void> {
    this.unwatchSource(sourceId);
    await this.idle();
  }

  private unwatchSource(sourceId: number): void {
    for (const w of [...this.byId.values()]) if (w.point.dataSourceId === sourceId) this.unwatch(w.detector.id);
  }

  // ---- watching -----------------------------------------------------------------------------

  /** Watches the live detectors in scope with their state from the database, a page at a time; returns their ids. */
  private async load(scope: DetectorScope): Promise<Set<number>> {
    const ids = new Set<number>();
    if (!this.running) return ids;
    for await (const found of this.pages(scope)) {
      if (!this.running) break;
      const open = await this.deps.events.openDetectorIds(found.map((f) => f.detector.id));
      for (const f of found) {
        this.watch(f, open.has(f.detector.id));
        ids.add(f.detector.id);
      }
    }
    return ids;
  }

  private async *pages(scope: DetectorScope): AsyncGenerator<WatchedDetector[]> {
    for (let after = 0; ; ) {
      const page = await this.deps.events.watchedDetectors(scope, after, LOAD_PAGE);
      if (page.length > 0) yield page;
      if (page.length < LOAD_PAGE) return;
      after = page[page.length - 1]!.detector.id;
    }
  }

  private watch(f: WatchedDetector, inAlarm: boolean): void {
    if (!this.running) return;
    this.unwatch(f.detector.id);
    let pattern: TextPattern | undefined;
    if (f.detector.detectorType === 'ALPHANUMERIC_REGEX_STATE') {
      // Checked when saved; a pattern this engine no longer takes is not watched rather than guessed at.
      const compiled = compilePattern(String(settings(f.detector).state));
      if (isPatternError(compiled)) {
        this.deps.log.error({ detector: f.detector.xid, state: settings(f.detector).state }, `event detector not watched: its state ${compiled.error}`);
        return;
      }
      pattern = compiled;
    }
    const w: Watch = { detector: f.detector, point: f.point, inAlarm, pattern, unfollow: this.deps.bus.follow(f.point.id) };
    this.byId.set(f.detector.id, w);
    const list = this.byPoint.get(f.point.id) ?? [];
    list.push(w);
    this.byPoint.set(f.point.id, list);
    if (f.detector.detectorType === 'NO_UPDATE' && !inAlarm) this.armNoUpdate(w);
  }

  private unwatch(id: number): void {
    const w = this.byId.get(id);
    if (!w) return;
    clearTimeout(w.timer);
    w.unfollow();
    this.byId.delete(id);
    const rest = (this.byPoint.get(w.point.id) ?? []).filter((x) => x !== w);
    if (rest.length > 0) this.byPoint.set(w.point.id, rest);
    else this.byPoint.delete(w.point.id);
  }

  // ---- evaluating ---------------------------------------------------------------------------

  private onValue(v: LiveValue): void {
    const watches = this.byPoint.get(v.pointId);
    if (!watches) return;
    for (const w of watches) {
      try {
        this.evaluate(w, v.value);
      } catch (err) {
        this.deps.log.error({ err, detector: w.detector.xid }, 'event detector failed');
      }
    }
  }

  private evaluate(w: Watch, value: StoredValue): void {
    if (w.detector.detectorType === 'NO_UPDATE') {
      if (w.inAlarm) this.clear(w, value.ts);
      this.armNoUpdate(w);
      return;
    }
    const met = holds(w, value);
    if (met === undefined) return;
    if (!met) {
      this.cancelWait(w);
      if (w.inAlarm) this.clear(w, value.ts);
      return;
    }
    if (w.inAlarm) return;
    const n = value.value ?? undefined; // for the message (a text detector's names its pattern)
    const duration = settings(w.detector).durationMs ?? 0;
    if (duration <= 0) return this.raise(w, value.ts, n);
    if (w.pendingSince === undefined) {
      w.pendingSince = value.ts;
      w.timer = setTimeout(() => this.raise(w, Date.now(), n), duration);
      w.timer.unref();
    } else if (value.ts - w.pendingSince >= duration) {
      this.raise(w, value.ts, n);
    }
  }

  private cancelWait(w: Watch): void {
    clearTimeout(w.timer);
    w.timer = undefined;
    w.pendingSince = undefined;
  }

  private armNoUpdate(w: Watch): void {
    clearTimeout(w.timer);
    w.timer = setTimeout(() => this.raise(w, Date.now(), undefined), settings(w.detector).durationMs ?? 0);
    w.timer.unref();
  }

  private raise(w: Watch, ts: number, value: number | undefined): void {
    this.cancelWait(w);
    // A timer of a detector that was since unloaded or replaced must not raise.
    if (!this.running || this.byId.get(w.detector.id) !== w || w.inAlarm) return;
    w.inAlarm = true;
    const d = w.detector;
    const message = describe(w, value);
    this.enqueue(async () => {
      await this.deps.events.raise({
        alarmLevel: d.alarmLevel,
        eventType: 'DATA_POINT',
        subType: d.detectorType,
        message,
        activeTimestamp: ts,
        rtnApplicable: settings(d).rtnApplicable ?? true,
        referenceId1: w.point.id,
        referenceId2: d.id,
        dataPointId: w.point.id,
        dataPointXid: w.point.xid,
        dataSourceId: w.point.dataSourceId,
        dataSourceXid: w.point.dataSourceXid,
        detectorId: d.id,
      });
    });
  }

  private clear(w: Watch, ts: number): void {
    w.inAlarm = false;
    this.enqueue(() => this.deps.events.detectorsCleared([w.detector.id], 'RETURN_TO_NORMAL', ts));
  }
}
