// Periods sized to a number of data points and aligned on the wall clock of a zone (Grafana's
// queries): the smallest step of a fixed ladder that gives at most that many periods, the first
// period starting on a step boundary at or before `from` in the zone (a 15-minute period at :00, :15,
// :30 or :45 local; 6 hours at 00, 06, 12, 18; a day at midnight; a week on Monday). The periods
// themselves are planPeriods' (fixed steps are absolute, days and weeks calendar steps in the zone).
import { DateTime } from 'luxon';
import { planPeriods, type PeriodPlan, type PeriodType } from './periods.js';

export interface PeriodStep {
  type: PeriodType;
  count: number;
}

/** The steps a sized query chooses from, shortest first. */
export const PERIOD_LADDER: readonly PeriodStep[] = [
  { type: 'SECONDS', count: 1 },
  { type: 'SECONDS', count: 10 },
  { type: 'MINUTES', count: 1 },
  { type: 'MINUTES', count: 5 },
  { type: 'MINUTES', count: 15 },
  { type: 'HOURS', count: 1 },
  { type: 'HOURS', count: 6 },
  { type: 'DAYS', count: 1 },
  { type: 'WEEKS', count: 1 },
];

const UNIT_MS: Record<PeriodType, number> = {
  MILLISECONDS: 1,
  SECONDS: 1_000,
  MINUTES: 60_000,
  HOURS: 3_600_000,
  DAYS: 86_400_000,
  WEEKS: 604_800_000,
  MONTHS: 2_629_746_000,
  YEARS: 31_556_952_000,
};

/** A step's length in ms (calendar units by their average length). */
export function nominalMs(step: PeriodStep): number {
  return UNIT_MS[step.type] * step.count;
}

/**
 * The start of the step's period holding `t`, on the zone's wall clock: the unit above the step
 * (second → minute → hour → day) floored, then whole steps from there; days at midnight, weeks on
 * Monday, months and years on the first. A step that does not divide its unit (7 minutes) counts from
 * the start of that unit all the same.
 */
export function alignedStart(t: number, step: PeriodStep, zone: string): number {
  const local = DateTime.fromMillis(t, { zone });
  if (!local.isValid) throw new RangeError(`Invalid instant or time zone: ${t} in ${zone}`);
  const { type, count } = step;
  switch (type) {
    case 'MILLISECONDS':
      return local.startOf('second').plus({ milliseconds: Math.floor(local.millisecond / count) * count }).toMillis();
    case 'SECONDS':
      return local.startOf('minute').plus({ seconds: Math.floor(local.second / count) * count }).toMillis();
    case 'MINUTES':
      return local.startOf('hour').plus({ minutes: Math.floor(local.minute / count) * count }).toMillis();
    case 'HOURS':
      // set(), not plus() from midnight: the wall-clock hour, whatever a DST change did earlier that day.
      return local.startOf('hour').set({ hour: Math.floor(local.hour / count) * count }).toMillis();
    case 'DAYS':
      return local.startOf('day').toMillis();
    case 'WEEKS':
      return local.startOf('week').toMillis();
    case 'MONTHS':
      return local.startOf('month').toMillis();
    case 'YEARS':
      return local.startOf('year').toMillis();
  }
}

/** How many periods of `step` cover [aligned start of from, to) (calendar steps by average length). */
export function periodCount(from: number, to: number, step: PeriodStep, zone: string): number {
  return Math.ceil((to - alignedStart(from, step, zone)) / nominalMs(step));
}

/** The shortest ladder step giving at most `maxPeriods` periods over [from, to); the longest when none does. */
export function sizedStep(from: number, to: number, maxPeriods: number, zone: string): PeriodStep {
  for (const step of PERIOD_LADDER) if (periodCount(from, to, step, zone) <= maxPeriods) return step;
  return PERIOD_LADDER[PERIOD_LADDER.length - 1]!;
}

/** The plan of `step`'s periods from the aligned start of `from` to `to` (the last one partial). */
export function alignedPlan(from: number, to: number, step: PeriodStep, zone: string): PeriodPlan {
  return planPeriods({ from: alignedStart(from, step, zone), to, type: step.type, count: step.count, zone, truncate: false });
}
