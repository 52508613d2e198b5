// The statistics of a rollup and how they are presented: the rollups a request names, each one's value
// for a period of a RollupResult (semantics: API-DECISIONS "Point values"), and that value in the
// API's form for the point's data type. The one presenter of rolled-up periods that every answer
// format writes from (JSON and CSV now): a statistic at a time, without an object per period.
import type { RollupResult, StoredScalar } from './rollup-result.js';
import { rollsUpNumbers } from './rollup-result.js';

export const ROLLUPS = [
  'NONE',
  'AVERAGE',
  'ARITHMETIC_MEAN',
  'MINIMUM',
  'MAXIMUM',
  'SUM',
  'FIRST',
  'LAST',
  'START',
  'COUNT',
  'DELTA',
  'INTEGRAL',
  'ALL',
  'POINT_DEFAULT',
] as const;
export type Rollup = (typeof ROLLUPS)[number];

/** A rollup that is statistics: NONE (raw values) and POINT_DEFAULT (the point's rollup) resolved. */
export type StatisticRollup = Exclude<Rollup, 'NONE' | 'POINT_DEFAULT'>;

/** Rollups a non-numeric point cannot have (it allows only NONE, FIRST, LAST, START, COUNT and ALL). */
export const NUMERIC_ONLY: ReadonlySet<Rollup> = new Set<Rollup>([
  'AVERAGE',
  'ARITHMETIC_MEAN',
  'MINIMUM',
  'MAXIMUM',
  'SUM',
  'DELTA',
  'INTEGRAL',
  'POINT_DEFAULT',
]);

/** ALL's statistics, in the order of its members and columns. */
export const ALL_FIELDS = ['average', 'arithmeticMean', 'minimum', 'maximum', 'sum', 'first', 'last', 'start', 'count', 'delta', 'integral'] as const;
export type StatisticField = (typeof ALL_FIELDS)[number];

/** The statistics a non-numeric point has (values as stored). */
const STORED_FIELDS: readonly StatisticField[] = ['first', 'last', 'start', 'count'];

/** The statistic each single-statistic rollup names. */
const FIELD_OF: Record<Exclude<StatisticRollup, 'ALL'>, StatisticField> = {
  AVERAGE: 'average',
  ARITHMETIC_MEAN: 'arithmeticMean',
  MINIMUM: 'minimum',
  MAXIMUM: 'maximum',
  SUM: 'sum',
  FIRST: 'first',
  LAST: 'last',
  START: 'start',
  COUNT: 'count',
  DELTA: 'delta',
  INTEGRAL: 'integral',
};

export interface AllStatistics {
  average: number | null;
  arithmeticMean: number | null;
  minimum: number | null;
  maximum: number | null;
  sum: number | null;
  first: number | null;
  last: number | null;
  start: number | null;
  count: number;
  delta: number | null;
  integral: number | null;
}

export interface AllStoredStatistics {
  first: StoredScalar;
  last: StoredScalar;
  start: StoredScalar;
  count: number;
}

export type Statistic = number | string | null | AllStatistics | AllStoredStatistics;

/** A statistic as the API shows it. */
export type PresentedValue = number | boolean | string | null;

/**
 * One statistic of period i: a number, or for a non-numeric result a value as stored; null when the
 * period has none, and for a statistic a non-numeric result does not have.
 */
export function statistic(r: RollupResult, i: number, field: StatisticField): number | string | null {
  if (!r.numeric) {
    switch (field) {
      case 'first':
        return r.firstStored[i] ?? null;
      case 'last':
        return r.lastStored[i] ?? null;
      case 'start':
        return r.startStored[i] ?? null;
      case 'count':
        return r.count[i] as number;
      default:
        return null;
    }
  }
  switch (field) {
    case 'average':
      return average(r, i);
    case 'arithmeticMean':
      return arithmeticMean(r, i);
    case 'minimum':
      return orNull(r.minimum[i]);
    case 'maximum':
      return orNull(r.maximum[i]);
    case 'sum':
      return orNull(r.sum[i]);
    case 'first':
      return orNull(r.first[i]);
    case 'last':
      return orNull(r.last[i]);
    case 'start':
      return orNull(r.startValue[i]);
    case 'count':
      return r.count[i] as number;
    case 'delta':
      return delta(r, i);
    case 'integral':
      return integral(r, i);
  }
}

/**
 * The rollup's value for period i, as the domain has it (numbers and values as stored; ALL as an
 * object). Refuses NONE and POINT_DEFAULT (resolved by the caller), a numeric-only rollup of a
 * non-numeric result, and a `numeric` unlike the result's.
 */
export function statisticOf(result: RollupResult, i: number, rollup: Rollup, numeric: boolean): Statistic {
  if (numeric !== result.numeric) throw new Error('statisticOf: numeric differs from the computed result');
  if (rollup === 'NONE' || rollup === 'POINT_DEFAULT') throw new Error(`${rollup} is not a statistic; resolve it first`);
  if (!numeric && NUMERIC_ONLY.has(rollup)) throw new RangeError(`${rollup} needs a numeric point`);
  if (rollup !== 'ALL') return statistic(result, i, FIELD_OF[rollup]);
  const all: Record<string, number | string | null> = {};
  for (const field of numeric ? ALL_FIELDS : STORED_FIELDS) all[field] = statistic(result, i, field);
  return all as unknown as AllStatistics | AllStoredStatistics;
}

/** Shapes a statistic's number (or stored value) for the API: BINARY states as booleans. */
export function apiStatistic(dataType: string, value: number | string | null): PresentedValue {
  if (value === null) return null;
  if (dataType === 'BINARY' && typeof value === 'number') return value !== 0;
  return value;
}

/** Whether a point of this data type can have the rollup (before any value is read). */
export function allowsRollup(dataType: string, rollup: Rollup): boolean {
  return rollsUpNumbers(dataType) || !NUMERIC_ONLY.has(rollup);
}

/**
 * One point's rolled-up periods as the API presents them, for every format: a single statistic per
 * period, or ALL's. The writers ask for a period's statistics one by one (`value`), in the order of
 * `members` (ALL as an object: JSON) or of `columns` (a table: CSV), so nothing is allocated per period.
 */
export class StatisticsPresenter {
  /** ALL: every statistic; otherwise one, the rollup's. */
  readonly all: boolean;
  /** A period's statistics as members of an object (ALL in JSON): the ones the data type has. */
  readonly members: readonly StatisticField[];
  /**
   * A period's statistics as columns of a table (CSV): the rollup's one, or ALL's eleven whatever the
   * data type, null where the point has none, so every point's table has the same columns.
   */
  readonly columns: readonly StatisticField[];

  constructor(
    rollup: StatisticRollup,
    private readonly dataType: string,
  ) {
    if (!allowsRollup(dataType, rollup)) throw new RangeError(`${rollup} needs a numeric point`);
    this.all = rollup === 'ALL';
    const field = rollup === 'ALL' ? undefined : FIELD_OF[rollup];
    if (!this.all && field === undefined) throw new Error(`${rollup} is not a statistic; resolve it first`);
    this.columns = field === undefined ? ALL_FIELDS : [field];
    this.members = field !== undefined ? [field] : rollsUpNumbers(dataType) ? ALL_FIELDS : STORED_FIELDS;
  }

  /** A statistic of period i in the API's form: COUNT is a number whatever the data type (a BINARY count is not a state). */
  value(result: RollupResult, i: number, field: StatisticField): PresentedValue {
    const v = statistic(result, i, field);
    return field === 'count' ? v : apiStatistic(this.dataType, v);
  }

  /**
   * A statistic of periods [from, to) as numbers, for the columnar writers: out[k] is period from + k's
   * value(), NaN for null, a BINARY state as 1 or 0, NaN for text. A numeric result's statistic is
   * computed column-wise, with the arithmetic of value(); the rest goes period by period.
   */
  numbers(result: RollupResult, field: StatisticField, from: number, to: number, out: Float64Array): Float64Array {
    if (!result.numeric || (this.dataType === 'BINARY' && field !== 'count')) {
      for (let i = from; i < to; i++) out[i - from] = asNumber(this.value(result, i, field));
      return out;
    }
    numericColumn(result, field, from, to, out);
    return out;
  }
}

/** A presented value as a number: NaN for null and text, a boolean as 1 or 0. */
function asNumber(v: PresentedValue): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return NaN;
}

/** statistic() of a numeric result over [from, to), NaN for null (orNull's NaN stays NaN). */
function numericColumn(r: RollupResult, field: StatisticField, from: number, to: number, out: Float64Array): void {
  const n = to - from;
  switch (field) {
    case 'average':
      for (let k = 0; k < n; k++) {
        const ms = r.inForceMs[from + k]!;
        out[k] = ms > 0 ? r.integralMs[from + k]! / ms : NaN;
      }
      return;
    case 'arithmeticMean':
      for (let k = 0; k < n; k++) {
        const count = r.count[from + k]!;
        out[k] = count > 0 ? r.sum[from + k]! / count : NaN;
      }
      return;
    case 'minimum':
      out.set(r.minimum.subarray(from, to));
      return;
    case 'maximum':
      out.set(r.maximum.subarray(from, to));
      return;
    case 'sum':
      out.set(r.sum.subarray(from, to));
      return;
    case 'first':
      out.set(r.first.subarray(from, to));
      return;
    case 'last':
      out.set(r.last.subarray(from, to));
      return;
    case 'start':
      out.set(r.startValue.subarray(from, to));
      return;
    case 'count':
      out.set(r.count.subarray(from, to));
      return;
    default:
      // delta and integral: their nulls depend on several columns.
      for (let k = 0; k < n; k++) out[k] = asNumber(statistic(r, from + k, field));
  }
}

/** Time-weighted over the in-force window; null when the window is empty. */
function average(r: RollupResult, i: number): number | null {
  const ms = r.inForceMs[i] as number;
  return ms > 0 ? (r.integralMs[i] as number) / ms : null;
}

function arithmeticMean(r: RollupResult, i: number): number | null {
  const count = r.count[i] as number;
  return count > 0 ? (r.sum[i] as number) / count : null;
}

/** (last, else start) − (start, else first). */
function delta(r: RollupResult, i: number): number | null {
  const hasStart = r.hasStart[i] === 1;
  const hasInside = (r.count[i] as number) > 0;
  if (!hasStart && !hasInside) return null;
  const end = hasInside ? (r.last[i] as number) : (r.startValue[i] as number);
  const begin = hasStart ? (r.startValue[i] as number) : (r.first[i] as number);
  return end - begin;
}

/** value × seconds; null when no value is in force at the start nor inside. */
function integral(r: RollupResult, i: number): number | null {
  if (r.hasStart[i] !== 1 && r.count[i] === 0) return null;
  return (r.integralMs[i] as number) / 1000;
}

function orNull(x: number | undefined): number | null {
  return x === undefined || Number.isNaN(x) ? null : x;
}
