// INTERVAL logging: one stored value per period, stamped with the period start: the value in force
// then (INSTANT, written as the period opens) or the period's MAXIMUM, MINIMUM or time-weighted AVERAGE
// (written as it closes), by the same rules as the rollups (values/read/accumulators.ts: the
// value in force at the start counts for the minimum, maximum and average).
//
// Periods close when a value of a later period arrives, or on the clock (a tick each second) once it
// passes the end of a period it was inside of. The
// period in progress is saved every few seconds and on stop; after a restart it is closed as far as
// it was watched, so it is written once. Periods the service was down for are not written: nobody
// saw the value then. A stored period is an upsert at its start, so writing one again cannot double it.
import { DateTime } from 'luxon';
import type { DataPointRecord, LoggingProperties, Period } from '../../store/metadata/data-points.js';

/** A value the interval logger wants stored. */
export interface IntervalRow {
  series: number;
  ts: number;
  /** NaN for ALPHANUMERIC (the text beside it). */
  value: number;
  text: string | null;
}

/** Where the periods in progress are kept across restarts. */
export interface IntervalStateStore {
  loadAll<T>(): Promise<Map<number, T>>;
  saveAll(states: ReadonlyMap<number, unknown>): Promise<void>;
  remove(ids: readonly number[]): Promise<void>;
}

/** The period in progress of one point; plain JSON (finite numbers only). */
export interface IntervalState {
  key: string;
  start: number;
  end: number;
  /** The service watched this period up to here (saved with it: a restart resumes after it). */
  observedUntil: number;
  /**
   * The clock was inside this period while the service ran: the clock closes it. A period of values
   * stamped in the past is closed only by a value of a later period (the clock would close it before
   * the rest of its values came).
   */
  live: boolean;
  // The value in force and since when.
  hasCurrent: boolean;
  current: number;
  text: string | null;
  since: number;
  // This period.
  count: number;
  min: number;
  max: number;
  integralMs: number;
  inForceMs: number;
  hasStart: boolean;
  startValue: number;
  startText: string | null;
}

/** Periods filled at most in one step (a value far ahead, a long stall): then the gap is skipped. */
const MAX_FILLED_PERIODS = 10_000;

const FIXED_MS: Record<string, number> = { SECONDS: 1_000, MINUTES: 60_000, HOURS: 3_600_000 };
const CALENDAR: Record<string, 'days' | 'weeks' | 'months' | 'years'> = { DAYS: 'days', WEEKS: 'weeks', MONTHS: 'months', YEARS: 'years' };

/**
 * The period [start, end) holding ts. Up to HOURS: multiples of the length since the epoch (UTC, so
 * the clock's minutes and hours in whole-hour zones); from DAYS: calendar units in `zone`, counted
 * from 1970 (weeks from Monday 1970-01-05), so "2 DAYS" falls on the same days every time.
 */
export function periodOf(ts: number, period: Period, zone: string): [number, number] {
  const fixed = FIXED_MS[period.type];
  if (fixed !== undefined) {
    const step = fixed * period.periods;
    const start = Math.floor(ts / step) * step;
    return [start, start + step];
  }
  const unit = CALENDAR[period.type];
  if (unit === undefined) throw new RangeError(`Unknown period type ${period.type}`);
  const t = DateTime.fromMillis(ts, { zone });
  const base = DateTime.fromObject(unit === 'weeks' ? { year: 1970, month: 1, day: 5 } : { year: 1970, month: 1, day: 1 }, { zone });
  const index =
    unit === 'years'
      ? t.year - 1970
      : unit === 'months'
        ? (t.year - 1970) * 12 + t.month - 1
        : Math.floor(t.startOf(unit === 'weeks' ? 'week' : 'day').diff(base, unit).get(unit) + 1e-9);
  const k = index - (((index % period.periods) + period.periods) % period.periods);
  const start = base.plus({ [unit]: k });
  return [start.toMillis(), start.plus({ [unit]: period.periods }).toMillis()];
}

export function intervalKey(l: LoggingProperties): string {
  return `${l.intervalLoggingPeriod.periods} ${l.intervalLoggingPeriod.type} ${l.intervalLoggingType}`;
}

export class IntervalLogger {
  private readonly states = new Map<number, IntervalState>();
  /** Points whose settings changed: looked up again before their next period closes. */
  private readonly stale = new Set<number>();
  private readonly points = new Map<number, DataPointRecord>();
  private readonly removed = new Set<number>();
  /** Restored periods that ended while the service was down. */
  private readonly interrupted = new Set<number>();

  constructor(private readonly zone: string) {}

  /**
   * The saved periods in progress. One the clock was in that still runs goes on, the value in force
   * counting again from now; one that ended while we were down is closed as far as it was watched.
   */
  restore(saved: ReadonlyMap<number, IntervalState>, now: number): void {
    for (const [id, s] of saved) {
      if (typeof s?.key !== 'string' || !Number.isFinite(s.start) || !Number.isFinite(s.end)) continue;
      this.states.set(id, s);
      this.stale.add(id); // its point's settings may have changed while we were down
      if (!s.live) continue; // values stamped in the past: their timestamps close it, not the clock
      if (s.end <= now) this.interrupted.add(id);
      else s.since = Math.max(s.since, now);
    }
  }

  /**
   * Every period in progress was watched up to now (before they are saved): the value in force is
   * counted up to here, so a restart that resumes after now keeps it.
   */
  watchedUntil(now: number): void {
    for (const s of this.states.values()) {
      if (!s.live) continue;
      const t = Math.min(Math.max(s.observedUntil, now), s.end);
      if (s.hasCurrent) accrue(s, t, t);
      s.observedUntil = t;
    }
  }

  has(id: number): boolean {
    return this.states.has(id);
  }

  /** Points whose periods are in progress, with the record they were last seen with. */
  get pending(): ReadonlyMap<number, IntervalState> {
    return this.states;
  }

  /** Settings of this point may have changed: check them before its period closes. */
  forget(id: number): void {
    if (this.states.has(id)) this.stale.add(id);
  }

  isStale(id: number): boolean {
    return this.stale.has(id);
  }

  /** The point as it is now (undefined: deleted): a changed interval ends its period as far as watched. */
  refresh(id: number, point: DataPointRecord | undefined, now: number, out: IntervalRow[]): void {
    this.stale.delete(id);
    const s = this.states.get(id);
    if (!s) return;
    if (point && point.loggingProperties.loggingType === 'INTERVAL' && intervalKey(point.loggingProperties) === s.key) {
      this.points.set(id, point);
      return;
    }
    if (point) this.closeAt(id, s, this.watchedEnd(id, s, now), out);
    this.drop(id);
  }

  /** A value of an INTERVAL point (ascending ts per point); what became storable goes to `out`. */
  value(point: DataPointRecord, ts: number, value: number, text: string | null, now: number, out: IntervalRow[]): void {
    const l = point.loggingProperties;
    const key = intervalKey(l);
    let s = this.states.get(point.id);
    if (s && s.key !== key) {
      this.closeAt(point.id, s, this.watchedEnd(point.id, s, now), out);
      this.drop(point.id);
      s = undefined;
    }
    this.points.set(point.id, point);
    this.stale.delete(point.id);
    if (!s) {
      const [start, end] = periodOf(ts, l.intervalLoggingPeriod, this.zone);
      s = emptyState(key, start, end);
      this.states.set(point.id, s);
    }
    if (ts < s.start) return; // its period is written already
    if (ts >= s.end) this.advance(point.id, s, ts, out);
    if (s.start <= now && now < s.end) s.live = true;
    if (ts === s.start) {
      s.hasStart = true;
      s.startValue = value;
      s.startText = text;
      if (this.type(point.id) === 'INSTANT') out.push(row(point.id, s.start, value, text));
    }
    if (s.hasCurrent) accrue(s, ts, s.end);
    if (s.count === 0 || value < s.min) s.min = value;
    if (s.count === 0 || value > s.max) s.max = value;
    s.count++;
    s.hasCurrent = true;
    s.current = value;
    s.text = text;
    s.since = ts;
  }

  /** The clock passed period ends: close them (and open the next). */
  tick(now: number, out: IntervalRow[]): void {
    for (const [id, s] of this.states) {
      if (this.stale.has(id)) continue; // refreshed first by the caller
      if (s.end <= now && s.live) {
        this.advance(id, s, now, out);
        s.live = true;
      } else if (s.start <= now && now < s.end) s.live = true;
    }
  }

  /** Ids whose saved rows must go (their interval ended), collected since the last call. */
  takeRemoved(): number[] {
    const ids = [...this.removed];
    this.removed.clear();
    return ids;
  }

  /** Closes periods up to the one holding t, filling those between with the value in force. */
  private advance(id: number, s: IntervalState, t: number, out: IntervalRow[]): void {
    const point = this.points.get(id);
    const interrupted = this.interrupted.delete(id);
    this.closeAt(id, s, interrupted ? s.observedUntil : s.end, out);
    const period = point?.loggingProperties.intervalLoggingPeriod ?? parsePeriod(s.key);
    if (interrupted) {
      // Down for part of it (a restart): skip to now's period, the value in force counting from now.
      const [start, end] = periodOf(t, period, this.zone);
      this.open(id, s, start, end, out);
      s.since = Math.max(s.since, t);
      return;
    }
    let filled = 0;
    let [start, end] = [s.end, periodOf(s.end, period, this.zone)[1]];
    while (t >= end && filled++ < MAX_FILLED_PERIODS) {
      this.open(id, s, start, end, out);
      this.closeAt(id, s, end, out);
      [start, end] = [end, periodOf(end, period, this.zone)[1]];
    }
    if (t >= end) [start, end] = periodOf(t, period, this.zone);
    this.open(id, s, start, end, out);
  }

  private open(id: number, s: IntervalState, start: number, end: number, out: IntervalRow[]): void {
    s.start = start;
    s.end = end;
    s.observedUntil = start;
    s.live = false;
    s.count = 0;
    s.min = 0;
    s.max = 0;
    s.integralMs = 0;
    s.inForceMs = 0;
    s.hasStart = s.hasCurrent;
    s.startValue = s.current;
    s.startText = s.text;
    if (s.hasCurrent && this.type(id) === 'INSTANT') out.push(row(id, start, s.current, s.text));
  }

  /** Ends the period, watched up to `until`: MAXIMUM, MINIMUM and AVERAGE are written now. */
  private closeAt(id: number, s: IntervalState, until: number, out: IntervalRow[]): void {
    if (s.hasCurrent) accrue(s, until, until);
    const type = this.type(id);
    if (type === 'INSTANT') return;
    const has = s.count > 0;
    if (!has && !s.hasStart) return;
    if (type === 'AVERAGE') {
      if (s.inForceMs > 0) out.push(row(id, s.start, s.integralMs / s.inForceMs, null));
      return;
    }
    let v = type === 'MAXIMUM' ? s.max : s.min;
    if (!has) v = s.startValue;
    else if (s.hasStart) v = type === 'MAXIMUM' ? Math.max(v, s.startValue) : Math.min(v, s.startValue);
    out.push(row(id, s.start, v, null));
  }

  /** How far a period ending early (its settings changed) was watched. */
  private watchedEnd(id: number, s: IntervalState, now: number): number {
    return this.interrupted.has(id) ? s.observedUntil : Math.min(now, s.end);
  }

  private type(id: number): string {
    const s = this.states.get(id);
    return this.points.get(id)?.loggingProperties.intervalLoggingType ?? (s ? s.key.split(' ')[2]! : 'INSTANT');
  }

  private drop(id: number): void {
    this.states.delete(id);
    this.interrupted.delete(id);
    this.points.delete(id);
    this.stale.delete(id);
    this.removed.add(id);
  }
}

/** The value in force (since `since`) counts up to `until`, inside the period and before `limit`. */
function accrue(s: IntervalState, until: number, limit: number): void {
  const from = Math.max(s.since, s.start);
  const to = Math.min(until, limit, s.end);
  if (to > from) {
    s.integralMs += s.current * (to - from);
    s.inForceMs += to - from;
  }
  if (until > s.since) s.since = Math.min(until, s.end);
}

function emptyState(key: string, start: number, end: number): IntervalState {
  return {
    key,
    start,
    end,
    observedUntil: start,
    live: false,
    hasCurrent: false,
    current: 0,
    text: null,
    since: start,
    count: 0,
    min: 0,
    max: 0,
    integralMs: 0,
    inForceMs: 0,
    hasStart: false,
    startValue: 0,
    startText: null,
  };
}

function row(series: number, ts: number, value: number, text: string | null): IntervalRow {
  return { series, ts, value: text === null ? value : NaN, text };
}

function parsePeriod(key: string): Period {
  const [periods, type] = key.split(' ');
  return { periods: Number(periods), type: type! };
}
