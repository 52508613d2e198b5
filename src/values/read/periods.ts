// Rollup period boundaries: periods start at `from` and step by count × type, fixed absolute steps up
// to HOURS, calendar steps in the requested zone from DAYS up; the last period ends at `to` (partial).
import { DateTime, IANAZone, type DateTimeUnit } from 'luxon';
import { calendarSteps, type CalendarUnit } from './zone-calendar.js';

export const PERIOD_TYPES = ['MILLISECONDS', 'SECONDS', 'MINUTES', 'HOURS', 'DAYS', 'WEEKS', 'MONTHS', 'YEARS'] as const;
export type PeriodType = (typeof PERIOD_TYPES)[number];

/** The largest step count a request may name (timePeriods). */
export const MAX_PERIODS = 1_000_000;

export interface PeriodSpec {
  from: number;
  to: number;
  /** Without a type the whole range is one period. */
  type?: PeriodType;
  count: number;
  /** IANA zone name. */
  zone: string;
  /** Move `from` down and `to` up to boundaries of the type's unit in the zone first. */
  truncate: boolean;
}

const FIXED_STEP_MS: Partial<Record<PeriodType, number>> = {
  MILLISECONDS: 1,
  SECONDS: 1_000,
  MINUTES: 60_000,
  HOURS: 3_600_000,
};

const CALENDAR_UNIT: Partial<Record<PeriodType, CalendarUnit>> = {
  DAYS: 'days',
  WEEKS: 'weeks',
  MONTHS: 'months',
  YEARS: 'years',
};

// Average unit lengths, only to refuse hopeless requests before stepping through them.
const NOMINAL_CALENDAR_MS: Record<CalendarUnit, number> = {
  days: 86_400_000,
  weeks: 604_800_000,
  months: 2_629_746_000,
  years: 31_556_952_000,
};

const TRUNCATE_UNIT: Partial<Record<PeriodType, DateTimeUnit>> = {
  SECONDS: 'second',
  MINUTES: 'minute',
  HOURS: 'hour',
  DAYS: 'day',
  WEEKS: 'week', // ISO: Monday
  MONTHS: 'month',
  YEARS: 'year',
};

// luxon's (and Date's) range.
const MAX_INSTANT = 8.64e15;

// isValidZone builds an Intl formatter on every call; remember the (few hundred) valid names.
const validZones = new Set<string>();
function validZone(zone: string): boolean {
  if (validZones.has(zone)) return true;
  if (!IANAZone.isValidZone(zone)) return false;
  validZones.add(zone);
  return true;
}

/**
 * The periods of one request, planned once and the same for every series: their number known up
 * front, their bounds produced a chunk at a time, so a long request never holds all its bounds.
 */
export interface PeriodPlan {
  /** Start of the first period (`from`, or its truncation). */
  readonly from: number;
  /** End of the last period (`to`, or its truncation). */
  readonly to: number;
  /**
   * How many periods: exact for fixed steps (up to HOURS) and a single period; for calendar steps
   * (DAYS and longer) counted by the units' average lengths, which may differ from the steps in the
   * zone by a period or two (DST days, month lengths). Known without stepping through the periods.
   */
  readonly count: number;
  /** Whether `count` is exact. */
  readonly exact: boolean;
  /**
   * The bounds (period starts, then the end of the last period), at most `size` periods a chunk:
   * each chunk's last bound is the next one's first. Every chunk has at least one period.
   */
  chunks(size: number): Generator<Float64Array>;
}

/** Checks the spec and plans its periods, without stepping through them. */
export function planPeriods(spec: PeriodSpec): PeriodPlan {
  const { type, count, zone } = spec;
  let { from, to } = spec;
  if (!Number.isFinite(from) || !Number.isFinite(to) || Math.abs(from) > MAX_INSTANT || Math.abs(to) > MAX_INSTANT) {
    throw new RangeError('from and to must be instants (epoch ms)');
  }
  if (from >= to) throw new RangeError('from must be before to');
  if (!Number.isInteger(count) || count < 1) throw new RangeError('timePeriods must be an integer of at least 1');
  if (!validZone(zone)) throw new RangeError(`Unknown time zone: ${zone}`);
  if (type === undefined) return { from, to, count: 1, exact: true, chunks: () => single(from, to) };
  if (!PERIOD_TYPES.includes(type)) throw new RangeError(`Unknown time period type: ${String(type)}`);

  const truncateUnit = TRUNCATE_UNIT[type];
  if (spec.truncate && truncateUnit) {
    from = floorTo(from, truncateUnit, zone);
    to = ceilTo(to, truncateUnit, zone);
    if (!Number.isFinite(from) || !Number.isFinite(to)) throw new RangeError('from and to must be instants (epoch ms)');
  }
  const start = from;
  const end = to;
  const stepMs = FIXED_STEP_MS[type];
  if (stepMs !== undefined) {
    const step = stepMs * count;
    return { from, to, count: Math.ceil((to - from) / step), exact: true, chunks: (size) => fixedChunks(start, end, step, size) };
  }
  const unit = CALENDAR_UNIT[type] as CalendarUnit;
  const estimate = Math.max(1, Math.ceil((to - from) / (NOMINAL_CALENDAR_MS[unit] * count)));
  return { from, to, count: estimate, exact: false, chunks: (size) => calendarChunks(start, end, unit, count, zone, size) };
}

function* single(from: number, to: number): Generator<Float64Array> {
  yield Float64Array.of(from, to);
}

function* fixedChunks(from: number, to: number, step: number, size: number): Generator<Float64Array> {
  const n = Math.ceil((to - from) / step);
  for (let first = 0; first < n; first += size) {
    const periods = Math.min(size, n - first);
    const bounds = new Float64Array(periods + 1);
    for (let i = 0; i < periods; i++) bounds[i] = from + (first + i) * step;
    bounds[periods] = first + periods === n ? to : from + (first + periods) * step;
    yield bounds;
  }
}

function* calendarChunks(from: number, to: number, unit: CalendarUnit, count: number, zone: string, size: number): Generator<Float64Array> {
  const plus = calendarSteps(from, zone, unit);
  let starts: number[] = [from];
  let last = from;
  // Each start from `from` directly (i × count units), so month-end clamping never drifts.
  for (let i = 1; ; i++) {
    const start = plus(i * count);
    // NaN past the representable range ends the periods too.
    if (!(start < to)) break;
    // A step into a skipped calendar day can land on the previous start: no empty duplicate period.
    if (start <= last) continue;
    starts.push(start);
    last = start;
    if (starts.length > size) {
      // `size` periods: the next period's start ends this chunk and begins the next.
      yield Float64Array.from(starts);
      starts = [start];
    }
  }
  starts.push(to);
  yield Float64Array.from(starts);
}

function floorTo(t: number, unit: DateTimeUnit, zone: string): number {
  return DateTime.fromMillis(t, { zone }).startOf(unit).toMillis();
}

function ceilTo(t: number, unit: DateTimeUnit, zone: string): number {
  const start = DateTime.fromMillis(t, { zone }).startOf(unit);
  return start.toMillis() === t ? t : start.plus({ [unit]: 1 }).toMillis();
}
