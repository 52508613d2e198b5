// What every point-value read shares, whatever form asks (GET with query parameters in
// point-values.ts, Mango's POST bodies in point-values-mango.ts): the query, the bounds checked
// before any work (XIDs, rollup periods, the rollup a point's type may have), the points looked up
// with their permissions, and the small encoders. A bound says what is wrong; each form turns that
// into its own error (a 400 naming a query parameter, a 422 naming a body field).
import type { PointValueReadLimits } from '../config.js';
import type { PointValueService } from '../services/point-values.js';
import type { Principal } from '../services/permissions.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { planPeriods, type PeriodPlan, type PeriodType } from '../values/read/periods.js';
import type { RollupResult } from '../values/read/rollup-result.js';
import { allowsRollup, type Rollup, type StatisticRollup, type StatisticsPresenter } from '../values/read/statistics.js';
import { csvCell } from './csv.js';

export { CSV_TYPE, JSON_TYPE } from './answer-format.js';
export const DAY_MS = 86_400_000;

export interface ReadQuery {
  from: number;
  to: number;
  limit?: number;
  rollup?: Rollup;
  periodType?: PeriodType;
  periods: number;
  zone: string;
  truncate: boolean;
  /** With a rollup other than NONE: its periods, the same for every point (none for an empty range). */
  plan?: PeriodPlan;
  /** When the request came: no value is in force after it. */
  now: number;
}

/** The query's periods; a RangeError says what is wrong with them. */
export function planOf(q: ReadQuery): PeriodPlan {
  return planPeriods({ from: q.from, to: q.to, type: q.periodType, count: q.periods, zone: q.zone, truncate: q.truncate });
}

export const formatCount = (n: number): string => n.toLocaleString('en-US');

/**
 * What is wrong with a rollup whose periods over all the points pass the limit (`names`: how the
 * request names the periods), or undefined. `perPoint`: at most this many periods of each point are
 * answered (a limit).
 */
export function periodsProblem(q: ReadQuery, points: number, limits: PointValueReadLimits, names: string, perPoint = Infinity): string | undefined {
  if (!q.plan) return undefined;
  const count = Math.min(q.plan.count, perPoint);
  const total = count * points;
  if (total <= limits.maxRollupPeriods) return undefined;
  const periods = `${q.plan.exact || count < q.plan.count ? '' : 'about '}${formatCount(count)} period${count === 1 ? '' : 's'}`;
  const product = points === 1 ? periods : `${periods} × ${formatCount(points)} points = ${formatCount(total)} periods`;
  return (
    `Too many rollup periods (${names}): ${product}; a request may ask for at most ${formatCount(limits.maxRollupPeriods)} ` +
    `(all points together). Ask for a longer period type, more periods, or a shorter from–to range.`
  );
}

/** What is wrong with this many XIDs (after removing repeats), or undefined. */
export function xidCountProblem(count: number, limits: PointValueReadLimits): string | undefined {
  if (count === 0) return 'name at least one point';
  if (count > limits.maxXids) return `${formatCount(count)} points named, at most ${formatCount(limits.maxXids)} per request`;
  return undefined;
}

/** The effective rollup: POINT_DEFAULT takes the point's, NONE means raw values. */
export function effectiveRollup(point: DataPointRecord, rollup: Rollup | undefined): StatisticRollup | undefined {
  const r = rollup === 'POINT_DEFAULT' ? (point.rollup as Rollup) : rollup;
  return r === undefined || r === 'NONE' ? undefined : (r as StatisticRollup);
}

/** What is wrong with a rollup the point's data type cannot have, or undefined. */
export function rollupProblem(point: DataPointRecord, rollup: Rollup | undefined): string | undefined {
  const r = effectiveRollup(point, rollup);
  if (r && !allowsRollup(point.dataType, r)) return `${r} needs a NUMERIC point; ${point.dataType} points allow NONE, FIRST, LAST, START, COUNT, ALL`;
  return undefined;
}

/**
 * Every point, in order, checked before anything is read: an unknown XID is a 404, an unreadable one
 * a 403, and either fails the whole request.
 */
export async function readablePoints(values: PointValueService, user: Principal, xids: readonly string[]): Promise<DataPointRecord[]> {
  const points: DataPointRecord[] = [];
  for (const xid of xids) points.push(await values.readablePoint(user, xid));
  return points;
}

/** JSON text of a value: numbers (nearly all of them) without JSON.stringify's generic path. */
export function jsonValue(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return JSON.stringify(value);
}

/** One period's CSV cells of a point (no line end): the value, or ALL's columns. */
export function periodCells(presenter: StatisticsPresenter, result: RollupResult, i: number): string {
  const columns = presenter.columns;
  let text = csvCell(presenter.value(result, i, columns[0]!));
  for (let c = 1; c < columns.length; c++) text += `,${csvCell(presenter.value(result, i, columns[c]!))}`;
  return text;
}
