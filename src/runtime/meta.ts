// The META data source: computed points. Each point's script (core/meta-script/) is computed over its
// context points, on each live value of one of them (CONTEXT_UPDATE; with executionDelayMs, a burst of
// updates makes one computation, when the delay after the first has run out, with the values then
// current and the last update's time) or on a cron pattern (CRON, croner; stamped with the tick). The
// values go in through DriverContext.accept like any driver's, so they are stored, live and heard by
// detectors, and by other computed points (a chain). A run-time failure (a division by zero, a context
// variable without a value, a window without data) is a warning on the point and no value.
//
// Context values come from the live bus (values/live/bus.ts: followed, so another instance of a cluster
// relays them), each point's newest seeded from the store at start. History functions (avg, min, max,
// last, delta over a window) are read through the rollup engine over [t − window, t] (t: the stamp;
// the value at t itself counts); as the bus hears a value before it is stored, a computation that reads
// a window first waits until its trigger is stored (onStored), at most STORED_WAIT_MS: a value the
// context point's logging does not store never is.
import { Cron } from 'croner';
import { evaluate, ScriptRuntimeError } from '../core/meta-script/evaluate.js';
import { parseScript, ScriptSyntaxError, type HistoryCall, type Script } from '../core/meta-script/parse.js';
import { forEachLimited } from '../core/limited.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { StoredValue } from '../store/values/types.js';
import type { LiveValue, PointValueBus } from '../values/live/bus.js';
import type { StatisticField } from '../values/read/statistics.js';
import type { DriverContext, DriverFactory, ProducedValue, SourceDriver } from './driver.js';

/** What the META driver needs beyond its DriverContext (the point-value facade implements it). */
export interface MetaPorts {
  /** Points by XID (the context points, of any source). */
  points(xids: readonly string[]): Promise<Map<string, DataPointRecord>>;
  bus: Pick<PointValueBus, 'subscribe' | 'follow'>;
  /** The point's newest value, if any. */
  newest(point: DataPointRecord): Promise<StoredValue | undefined>;
  /** One statistic over [from, to) by the rollup engine; null when the window has no value. */
  windowStatistic(point: DataPointRecord, from: number, to: number, field: StatisticField): Promise<number | null>;
  /** Told when values of these series are stored (series → earliest ts); returns the unsubscribe. */
  onStored(listener: (earliest: ReadonlyMap<number, number>) => void): () => void;
}

/** How long a computation that reads a window waits for its trigger value to be stored. */
export const STORED_WAIT_MS = 1_000;
/** Computations handed to the pipeline in one accept. */
const ACCEPT_PART = 5_000;
/** History reads under way at once. */
const READS_AT_ONCE = 8;

const FIELD: Record<HistoryCall['fn'], StatisticField> = { avg: 'average', min: 'minimum', max: 'maximum', last: 'last', delta: 'delta' };

interface Computed {
  point: DataPointRecord;
  script: Script;
  /** Context variable → its point. */
  variables: Map<string, DataPointRecord>;
  delayMs: number;
  /** A delayed computation waiting for its timer: the stamp it will carry. */
  pending?: { ts: number; timer: NodeJS.Timeout; stored: Promise<void> };
}

interface Job {
  computed: Computed;
  ts: number;
  /** The variables' values when the computation was asked for. */
  values: Map<string, number>;
  /** Resolves once the trigger value is stored (or at once when nothing waits for it). */
  stored: Promise<void>;
}

const NOW = Promise.resolve();

class MetaDriver implements SourceDriver {
  private readonly computed: Computed[] = [];
  /** Context point id → the computed points it triggers. */
  private readonly triggers = new Map<number, Computed[]>();
  /** Context point id → the point. */
  private readonly contextPoints = new Map<number, DataPointRecord>();
  /** Context point id → its newest value (ts, number). */
  private readonly current = new Map<number, { ts: number; value: number }>();
  private readonly undo: (() => void)[] = [];
  private readonly crons: Cron[] = [];
  private readonly queue: Job[] = [];
  private draining: Promise<void> | undefined;
  private drainRunning = false;
  /** The context's stored values are read (start): from here a heard value is computed at once. */
  private seeded = false;
  /** Series → computations waiting for a value at or before ts to be stored. */
  private readonly waiting = new Map<number, { ts: number; done: () => void }[]>();

  constructor(
    private readonly ctx: DriverContext,
    private readonly ports: MetaPorts,
  ) {}

  async start(): Promise<void> {
    const { ctx, ports } = this;
    const xids = new Set<string>();
    for (const p of ctx.points) for (const c of contextOf(p)) xids.add(c.xid);
    const found = await ports.points([...xids]);
    for (const point of ctx.points) {
      const c = this.prepare(point, found);
      if (c) this.computed.push(c);
    }
    const { contextPoints } = this;
    for (const c of this.computed) for (const p of c.variables.values()) contextPoints.set(p.id, p);
    // Listen before reading what is stored: a value stored in between is read, one not yet stored is heard.
    this.undo.push(ports.bus.subscribe((v) => this.heard(v), { followedOnly: true }));
    for (const id of contextPoints.keys()) this.undo.push(ports.bus.follow(id));
    this.undo.push(ports.onStored((earliest) => this.stored(earliest)));
    for (const c of this.computed) {
      const loc = c.point.pointLocator;
      if (loc.updateEvent === 'CRON') {
        // Stamped with the tick it was scheduled for (the callback runs a few ms after it).
        const cron = new Cron(String(loc.cronPattern), { paused: true }, (self: Cron) => {
          const ts = due?.getTime() ?? Date.now();
          due = self.nextRun();
          this.enqueue({ computed: c, ts, values: this.valuesOf(c), stored: NOW });
        });
        let due = cron.nextRun();
        cron.resume();
        this.crons.push(cron);
      } else {
        for (const p of new Set(c.variables.values())) {
          const list = this.triggers.get(p.id) ?? [];
          list.push(c);
          this.triggers.set(p.id, list);
        }
      }
    }
    await forEachLimited(contextPoints.values(), READS_AT_ONCE, async (p) => {
      const v = await ports.newest(p);
      const known = this.current.get(p.id);
      if (v && v.value !== null && (!known || v.ts > known.ts)) this.current.set(p.id, { ts: v.ts, value: v.value });
    });
    if (ctx.signal.aborted) return;
    this.seeded = true;
    await this.catchUp();
  }

  /**
   * Updates this driver did not hear (the source restarting as its points change, a hand-over to this
   * instance, values heard while it was starting): each point computed on context updates whose context
   * holds a value newer than its own newest is computed once, at that value's time.
   */
  private async catchUp(): Promise<void> {
    const behind = this.computed.filter((c) => c.point.pointLocator.updateEvent !== 'CRON' && c.variables.size > 0);
    await forEachLimited(behind, READS_AT_ONCE, async (c) => {
      let newest: { id: number; ts: number } | undefined;
      for (const p of c.variables.values()) {
        const v = this.current.get(p.id);
        if (!v) return; // a variable without a value: nothing to compute yet, and no warning for it
        if (!newest || v.ts > newest.ts) newest = { id: p.id, ts: v.ts };
      }
      const own = await this.ports.newest(c.point);
      if (!newest || (own && own.ts >= newest.ts) || this.ctx.signal.aborted) return;
      const stored = c.script.history.length > 0 ? this.whenStored(newest.id, newest.ts) : NOW;
      this.enqueue({ computed: c, ts: newest.ts, values: this.valuesOf(c), stored });
    });
  }

  async stop(): Promise<void> {
    for (const cron of this.crons) cron.stop();
    for (const u of this.undo) u();
    for (const c of this.computed) if (c.pending) clearTimeout(c.pending.timer);
    for (const list of this.waiting.values()) for (const w of list) w.done();
    this.waiting.clear();
    await this.draining;
  }

  /** The point's script and context, or undefined (with a warning) when it cannot run. */
  private prepare(point: DataPointRecord, found: ReadonlyMap<string, DataPointRecord>): Computed | undefined {
    const variables = new Map<string, DataPointRecord>();
    for (const c of contextOf(point)) {
      const p = found.get(c.xid);
      if (!p) {
        this.ctx.warn(point, `Context point not found: ${c.xid}`);
        return undefined;
      }
      variables.set(c.var, p);
    }
    try {
      const script = parseScript(String(point.pointLocator.script), new Set(variables.keys()));
      const delay = point.pointLocator.executionDelayMs;
      return { point, script, variables, delayMs: typeof delay === 'number' ? delay : 0 };
    } catch (err) {
      if (!(err instanceof ScriptSyntaxError)) throw err;
      this.ctx.warn(point, `Script: ${err.message}`);
      return undefined;
    }
  }

  private valuesOf(c: Computed): Map<string, number> {
    const values = new Map<string, number>();
    for (const [name, p] of c.variables) {
      const v = this.current.get(p.id);
      if (v) values.set(name, v.value);
    }
    return values;
  }

  /** A live value of a context point. */
  private heard(v: LiveValue): void {
    if (v.value.value !== null) this.updated(v.pointId, v.value.ts, v.value.value);
  }

  /** A context point's new value: its computed points are asked for, now or after their delay. */
  private updated(pointId: number, ts: number, value: number): void {
    const list = this.triggers.get(pointId);
    if (!list || this.ctx.signal.aborted) return;
    const known = this.current.get(pointId);
    if (!known || ts >= known.ts) this.current.set(pointId, { ts, value });
    // While starting, the other variables may not be read yet: the catch-up computes once they are.
    if (!this.seeded) return;
    for (const c of list) {
      const stored = c.script.history.length > 0 ? this.whenStored(pointId, ts) : NOW;
      if (c.delayMs <= 0) {
        this.enqueue({ computed: c, ts, values: this.valuesOf(c), stored });
        continue;
      }
      if (c.pending) {
        // Within the delay: one computation at its end, stamped with the latest update.
        if (ts >= c.pending.ts) c.pending = { ...c.pending, ts, stored };
        continue;
      }
      const timer = setTimeout(() => {
        const p = c.pending!;
        c.pending = undefined;
        this.enqueue({ computed: c, ts: p.ts, values: this.valuesOf(c), stored: p.stored });
      }, c.delayMs);
      c.pending = { ts, timer, stored };
    }
  }

  private whenStored(series: number, ts: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, STORED_WAIT_MS);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      const list = this.waiting.get(series) ?? [];
      list.push({ ts, done });
      this.waiting.set(series, list);
    });
  }

  private stored(earliest: ReadonlyMap<number, number>): void {
    this.storedUnheard(earliest);
    if (this.waiting.size === 0) return;
    for (const [series, from] of earliest) {
      const list = this.waiting.get(series);
      if (!list) continue;
      const left = list.filter((w) => {
        if (w.ts < from) return true;
        w.done();
        return false;
      });
      if (left.length > 0) this.waiting.set(series, left);
      else this.waiting.delete(series);
    }
  }

  /**
   * Context values stored but never heard: published before this driver listened and stored after it
   * read the context, or written on another instance before that one knew this one follows them. Their
   * newest is read and counts as an update (while starting, as a seed: the catch-up computes it).
   */
  private storedUnheard(earliest: ReadonlyMap<number, number>): void {
    for (const [series, from] of earliest) {
      const point = this.contextPoints.get(series);
      const known = this.current.get(series);
      if (!point || !this.triggers.has(series) || (known && known.ts >= from)) continue;
      void this.ports.newest(point).then(
        (v) => {
          const now = this.current.get(series);
          if (v && v.value !== null && (!now || v.ts > now.ts)) this.updated(series, v.ts, v.value);
        },
        () => undefined, // the next value read or heard counts instead
      );
    }
  }

  private enqueue(job: Job): void {
    if (this.ctx.signal.aborted) return;
    this.queue.push(job);
    if (!this.drainRunning) this.draining = this.drain();
  }

  /**
   * Computes what is queued, a part at a time, until the queue is empty. `drainRunning` is cleared in the same synchronous step as the loop's
   * last look at the queue: cleared in a later callback, a job queued in between would wait for the next.
   */
  private async drain(): Promise<void> {
    this.drainRunning = true;
    try {
      while (this.queue.length > 0 && !this.ctx.signal.aborted) await this.computePart(this.queue.splice(0, ACCEPT_PART));
    } catch {
      this.ctx.fault('Computing the points failed');
    } finally {
      this.drainRunning = false;
    }
  }

  /** One part of the queue computed and handed to the pipeline in one accept. */
  private async computePart(jobs: Job[]): Promise<void> {
    const results: (ProducedValue | undefined)[] = new Array(jobs.length);
    const reads: number[] = [];
    jobs.forEach((job, i) => {
      if (job.computed.script.history.length === 0) results[i] = this.compute(job, []);
      else reads.push(i);
    });
    // Their waits run side by side (each began when its trigger was heard): a part waits at most STORED_WAIT_MS.
    await Promise.all(reads.map((i) => jobs[i]!.stored));
    await forEachLimited(reads, READS_AT_ONCE, async (i) => {
      const job = jobs[i]!;
      let history: (number | null)[];
      try {
        history = await this.readHistory(job);
      } catch {
        this.ctx.warn(job.computed.point, 'Script: reading a history window failed');
        return;
      }
      results[i] = this.compute(job, history);
    });
    const values = results.filter((v): v is ProducedValue => v !== undefined);
    if (values.length > 0) await this.ctx.accept(values);
  }

  private async readHistory(job: Job): Promise<(number | null)[]> {
    const { computed, ts } = job;
    return Promise.all(
      computed.script.history.map(async (h) => {
        const point = computed.variables.get(h.variable)!;
        return this.ports.windowStatistic(point, ts - h.windowMs, ts + 1, FIELD[h.fn]);
      }),
    );
  }

  /** One computation: the value for the point, or a warning and nothing. */
  private compute(job: Job, history: readonly (number | null)[]): ProducedValue | undefined {
    const { point, script } = job.computed;
    try {
      const v = evaluate(script, { variables: job.values, history });
      return { point, value: typed(point, v), ts: job.ts };
    } catch (err) {
      this.ctx.warn(point, err instanceof ScriptRuntimeError ? `Script: ${err.message}` : 'Script: the computation failed');
      return undefined;
    }
  }
}

/** The script's number as a value of the point's type: BINARY is true when not 0; MULTISTATE must be whole. */
function typed(point: DataPointRecord, v: number): number | boolean {
  if (point.dataType === 'BINARY') return v !== 0;
  if (point.dataType === 'MULTISTATE' && !Number.isInteger(v)) throw new ScriptRuntimeError(`${v} is not a whole number, as a MULTISTATE value must be`);
  return v;
}

function contextOf(p: DataPointRecord): { xid: string; var: string }[] {
  const c = p.pointLocator.context;
  return Array.isArray(c) ? (c as { xid: string; var: string }[]) : [];
}

export function createMetaDriver(ports: MetaPorts): DriverFactory {
  return (ctx) => new MetaDriver(ctx, ports);
}
