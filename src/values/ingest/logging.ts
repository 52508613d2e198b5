// Point logging properties (API-DECISIONS "Logging, retention, configuration"): which values from data
// sources and PUT /point-values are stored. Extreme values are dropped altogether; a value that is not
// stored is still live and the point's latest. POST /point-values (an import of history) stores what
// it is given and does not come here. Points that log ALL (and discard nothing) cost one look at
// their settings per batch. ON_CHANGE and ON_TS_CHANGE compare with the point's newest logged value,
// which the newest-value model keeps (values/live/newest.ts); this keeps only INTERVAL's periods.
import type { DataPointRecord } from '../../store/metadata/data-points.js';
import type { ValueBatch } from '../../store/values/types.js';
import { emptyBatch } from '../batch.js';
import type { LoggedValue, NewestValues } from '../live/newest.js';
import { IntervalLogger, type IntervalRow, type IntervalState, type IntervalStateStore } from './interval-logging.js';

export interface PointLoggingPorts {
  /** Each point's newest logged value: what the next value is compared with. */
  newest: Pick<NewestValues, 'loadLogged' | 'newestLogged' | 'noteLogged'>;
  /** Stores what INTERVAL logging made on the clock (the pipeline); durable on resolve. */
  store(batch: ValueBatch): Promise<void>;
  /** The point as it is now (its settings may have changed). */
  point(id: number): Promise<DataPointRecord | undefined>;
}

/** A batch split by the points' settings: `accepted` loses the extreme values, `logged` is what to store. */
export interface LoggingDecision {
  accepted: ValueBatch;
  logged: ValueBatch;
}

const TICK_MS = 1_000;
const SAVE_EVERY_MS = 5_000;

export class PointLogging {
  private readonly interval: IntervalLogger;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private lastSave = 0;
  private states: IntervalStateStore | undefined;
  private onError: (err: unknown) => void = () => {};

  constructor(
    private readonly ports: PointLoggingPorts,
    zone: string,
  ) {
    this.interval = new IntervalLogger(zone);
  }

  /** Resumes the saved INTERVAL periods and starts the clock that closes them. */
  async start(states: IntervalStateStore, onError: (err: unknown) => void, now = Date.now()): Promise<void> {
    this.states = states;
    this.onError = onError;
    this.interval.restore(await states.loadAll<IntervalState>(), now);
    this.lastSave = now;
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** Stops the clock and saves the periods in progress (their values so far) for the next start. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    if (this.states) await this.save(Date.now());
  }

  /** Closes the periods the clock passed; also what a test calls instead of waiting for the timer. */
  tick(now = Date.now()): Promise<void> {
    this.ticking ??= this.runTick(now).finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  /** The point's settings changed or it was deleted: its INTERVAL period in progress is dropped. */
  forget(id: number): void {
    this.interval.forget(id);
  }

  /** Any point may have changed (another instance, a resync): every period in progress is dropped. */
  forgetAll(): void {
    for (const id of this.interval.pending.keys()) this.interval.forget(id);
  }

  /** Splits a batch of accepted values (rows of one point in ascending ts) by the points' settings. */
  async decide(batch: ValueBatch, points: ReadonlyMap<number, DataPointRecord>): Promise<LoggingDecision> {
    let discards = false;
    let all = true;
    for (const p of points.values()) {
      const l = p.loggingProperties;
      if (l.discardExtremeValues && p.dataType === 'NUMERIC') discards = true;
      if (l.loggingType !== 'ALL') all = false;
    }
    const accepted = discards ? withoutExtremes(batch, points) : batch;
    if (all) return { accepted, logged: accepted };
    await this.loadLogged(points);
    // No await from here on: the comparisons and the state they update belong to this batch alone.
    const keep = new Uint8Array(accepted.length);
    const made: IntervalRow[] = [];
    const now = Date.now();
    let kept = 0;
    for (let i = 0; i < accepted.length; i++) {
      if (this.keeps(points.get(accepted.series[i]!)!, accepted, i, now, made)) {
        keep[i] = 1;
        kept++;
      }
    }
    const logged = kept === accepted.length && made.length === 0 ? accepted : select(accepted, keep, kept, made);
    return { accepted, logged };
  }

  private keeps(p: DataPointRecord, b: ValueBatch, i: number, now: number, made: IntervalRow[]): boolean {
    const l = p.loggingProperties;
    const ts = b.ts[i]!;
    const value = b.value[i]!;
    const text = b.text?.[i] ?? null;
    switch (l.loggingType) {
      case 'ALL':
        return true;
      case 'NONE':
        return false;
      case 'INTERVAL':
        this.interval.value(p, ts, value, text, now, made);
        return false;
      case 'ON_TS_CHANGE': {
        const last = this.ports.newest.newestLogged(p.id);
        if (last && last.ts === ts) return false;
        break;
      }
      case 'ON_CHANGE': {
        const last = this.ports.newest.newestLogged(p.id);
        if (last && !changed(p, l.tolerance, last, value, text)) return false;
        break;
      }
    }
    this.ports.newest.noteLogged(p.id, { ts, value, text });
    return true;
  }

  /** The newest logged value of each ON_CHANGE and ON_TS_CHANGE point, before the comparisons. */
  private async loadLogged(points: ReadonlyMap<number, DataPointRecord>): Promise<void> {
    for (const p of points.values()) {
      const type = p.loggingProperties.loggingType;
      // A known one costs no await.
      if ((type === 'ON_CHANGE' || type === 'ON_TS_CHANGE') && this.ports.newest.newestLogged(p.id) === undefined) await this.ports.newest.loadLogged(p.id);
    }
  }

  private async runTick(now: number): Promise<void> {
    try {
      const made: IntervalRow[] = [];
      for (const id of [...this.interval.pending.keys()]) {
        if (this.interval.isStale(id)) this.interval.refresh(id, await this.ports.point(id), now, made);
      }
      this.interval.tick(now, made);
      if (made.length > 0) await this.ports.store(select(emptyBatch(0), new Uint8Array(0), 0, made));
      if (this.states && now - this.lastSave >= SAVE_EVERY_MS) await this.save(now);
    } catch (err) {
      this.onError(err);
    }
  }

  private async save(now: number): Promise<void> {
    this.lastSave = now;
    this.interval.watchedUntil(now);
    await this.states!.remove(this.interval.takeRemoved());
    await this.states!.saveAll(this.interval.pending);
  }
}

/** ON_CHANGE: NUMERIC by more than the tolerance, other types any difference. */
function changed(p: DataPointRecord, tolerance: number, last: LoggedValue, value: number, text: string | null): boolean {
  if (p.dataType === 'ALPHANUMERIC') return text !== last.text;
  if (p.dataType === 'NUMERIC') return !(Math.abs(value - last.value) <= tolerance);
  return value !== last.value;
}

/** A NUMERIC value outside the limits of a point that discards extreme values. */
export function isExtreme(p: DataPointRecord, v: number): boolean {
  const l = p.loggingProperties;
  return p.dataType === 'NUMERIC' && l.discardExtremeValues && (v < l.discardLowLimit || v > l.discardHighLimit);
}

function withoutExtremes(b: ValueBatch, points: ReadonlyMap<number, DataPointRecord>): ValueBatch {
  const keep = new Uint8Array(b.length);
  let kept = 0;
  for (let i = 0; i < b.length; i++) {
    if (isExtreme(points.get(b.series[i]!)!, b.value[i]!)) continue;
    keep[i] = 1;
    kept++;
  }
  return kept === b.length ? b : select(b, keep, kept, []);
}

/** The kept rows of a batch, then the made ones. */
function select(b: ValueBatch, keep: Uint8Array, kept: number, made: readonly IntervalRow[]): ValueBatch {
  const out = emptyBatch(kept + made.length);
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    if (!keep[i]) continue;
    out.series[n] = b.series[i]!;
    out.ts[n] = b.ts[i]!;
    out.value[n] = b.value[i]!;
    if (b.text?.[i] != null) (out.text ??= new Array<string | null>(out.length).fill(null))[n] = b.text[i]!;
    if (b.annotation?.[i] != null) (out.annotation ??= new Array<string | null>(out.length).fill(null))[n] = b.annotation[i]!;
    n++;
  }
  for (const r of made) {
    out.series[n] = r.series;
    out.ts[n] = r.ts;
    out.value[n] = r.value;
    if (r.text !== null) (out.text ??= new Array<string | null>(out.length).fill(null))[n] = r.text;
    n++;
  }
  return out;
}
