// Mango 4/5's point-value query bodies (XidLatestQueryInfoModel, XidTimeRangeQueryModel,
// XidRollupTimeRangeQueryModel) read into the query every read shares: the body's schema
// (schemas/point-values-query.json, unknown fields ignored), then the same bounds as the GET forms,
// each a 422 naming the body field (the GET forms' 400s name query parameters).
import type { PointValueReadLimits } from '../config.js';
import { DateTimePatternError, compileDateTimePattern } from '../core/date-time-pattern.js';
import { DomainError } from '../core/errors.js';
import { parseInstant } from '../core/time.js';
import type { Validator } from '../core/validation.js';
import { MAX_LATEST_LIMIT } from '../services/point-values.js';
import type { PeriodType } from '../values/read/periods.js';
import { ROLLUPS, type Rollup } from '../values/read/statistics.js';
import { DEFAULT_FIELDS, type FormatTime, type MangoField } from './mango-value-encoder.js';
import { DAY_MS, formatCount, periodsProblem, planOf, xidCountProblem, type ReadQuery } from './point-value-reads.js';

/** The body as its schema lets it through (null: not given). */
interface MangoQueryBody {
  xids: string[];
  from?: string | number | null;
  to?: string | number | null;
  before?: string | number | null;
  limit?: number | null;
  rollup?: string | null;
  timePeriod?: { periods?: number | null; type: PeriodType } | null;
  truncate?: boolean | null;
  timezone?: string | null;
  dateTimeFormat?: string | null;
  fields?: MangoField[] | null;
  bookend?: boolean | null;
}

/** Which read: the newest values, or a time period; several arrays, or one merged. */
export interface MangoReadShape {
  latest: boolean;
  single: boolean;
}

export interface MangoQuery {
  /** Repeats removed, in the body's order. */
  xids: string[];
  read: ReadQuery;
  fields: ReadonlySet<MangoField>;
  format: FormatTime;
  bookend: boolean;
}

const invalid = (property: string, message: string) => DomainError.invalid(property, message, 'PointValueQuery');

function instant(body: MangoQueryBody, name: 'from' | 'to', fallback: number): number {
  const given = body[name];
  if (given === undefined || given === null || given === '') return fallback;
  const ms = parseInstant(given);
  if (ms === undefined) throw invalid(name, 'must be an ISO 8601 date with offset (2024-01-01T00:00:00.000Z) or epoch milliseconds');
  return ms;
}

/** The rollup: the path's, else the body's (Mango clients send it in either case). */
function rollupOf(body: MangoQueryBody, pathRollup: Rollup | undefined): Rollup | undefined {
  if (pathRollup !== undefined) return pathRollup;
  if (body.rollup === undefined || body.rollup === null) return undefined;
  const named = body.rollup.toUpperCase();
  if (!(ROLLUPS as readonly string[]).includes(named)) throw invalid('rollup', `must be one of ${ROLLUPS.join(', ')}`);
  return named as Rollup;
}

function limitOf(body: MangoQueryBody, shape: MangoReadShape, points: number, limits: PointValueReadLimits): number | undefined {
  const limit = body.limit ?? undefined;
  if (!shape.latest) {
    if (limit !== undefined && limit > Number.MAX_SAFE_INTEGER) throw invalid('limit', `must be at most ${Number.MAX_SAFE_INTEGER}`);
    return limit;
  }
  if (limit !== undefined && limit > MAX_LATEST_LIMIT) throw invalid('limit', `must be between 1 and ${formatCount(MAX_LATEST_LIMIT)}`);
  const n = limit ?? 1;
  // A single array of latest values merges every point's newest values, all held at once.
  if (shape.single && n * points > limits.maxRollupPeriods) {
    throw invalid(
      'limit',
      `${formatCount(n)} values × ${formatCount(points)} points = ${formatCount(n * points)} values held at once; a single array of latest values may hold at most ${formatCount(limits.maxRollupPeriods)} (ROLLUP_MAX_PERIODS)`,
    );
  }
  return n;
}

/** Reads and checks a query body before any point is looked up (`pathRollup` already checked). */
export function mangoQuery(validator: Validator, raw: unknown, shape: MangoReadShape, pathRollup: Rollup | undefined, limits: PointValueReadLimits): MangoQuery {
  const body = validator.validate<MangoQueryBody>('point-values-query', raw);
  const xids = [...new Set(body.xids)];
  const xidProblem = xidCountProblem(xids.length, limits);
  if (xidProblem) throw invalid('xids', xidProblem);
  if (body.before !== undefined && body.before !== null) throw invalid('before', 'is not supported: ask for a time period ending there (to) instead');

  const now = Date.now();
  const to = instant(body, 'to', now);
  const from = instant(body, 'from', to - DAY_MS);
  if (from > to) throw invalid('from', 'must not be after to');
  const zone = body.timezone || 'UTC';
  const read: ReadQuery = {
    from,
    to,
    limit: limitOf(body, shape, xids.length, limits),
    rollup: shape.latest ? undefined : rollupOf(body, pathRollup),
    periodType: body.timePeriod?.type,
    periods: body.timePeriod?.periods ?? 1,
    zone,
    truncate: body.truncate === true,
    now,
  };
  // POINT_DEFAULT counts as a rollup here: the points are not looked up yet.
  if (read.rollup !== undefined && read.rollup !== 'NONE' && from < to) {
    try {
      read.plan = planOf(read);
    } catch (err) {
      if (err instanceof RangeError) throw invalid(read.periodType ? 'timePeriod' : 'from', err.message);
      throw err;
    }
    const problem = periodsProblem(read, xids.length, limits, 'timePeriod', read.limit);
    if (problem) throw invalid('timePeriod', problem);
  }

  let format: FormatTime;
  if (body.dateTimeFormat !== undefined && body.dateTimeFormat !== null) {
    try {
      format = compileDateTimePattern(body.dateTimeFormat, zone);
    } catch (err) {
      if (err instanceof DateTimePatternError) throw invalid('dateTimeFormat', `is not a supported pattern: ${err.message}`);
      throw err;
    }
  }
  const fields = body.fields && body.fields.length > 0 ? new Set(body.fields) : DEFAULT_FIELDS;
  return { xids, read, fields, format, bookend: body.bookend === true };
}
