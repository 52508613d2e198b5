// The rollup engine: per-period statistics of one series (semantics: API-DECISIONS "Point values").
// The planner answers whole buckets from the store's partial aggregates where it can, so an aligned
// request costs what its periods and buckets cost, and reads raw values only for the rest.
import { yieldToEventLoop, type TimeSlice } from '../../core/time-slice.js';
import type { PeriodPlan } from './periods.js';
import { NumericAccumulator, StoredValueAccumulator, type InForce } from './accumulators.js';
import { RollupResult, rollsUpNumbers, storedScalar } from './rollup-result.js';
import type { DataPointRecord } from '../../store/metadata/data-points.js';
import { SeriesBuckets } from '../../store/values/bucket-columns.js';
import { BUCKET_MS, type PointValueStore, type StoredValue } from '../../store/values/types.js';

export { RollupResult, type StoredScalar } from './rollup-result.js';

/** The store verbs a rollup reads with. */
export type RollupSource = Pick<PointValueStore, 'valueAt' | 'range' | 'buckets' | 'bucketColumns'>;

export interface RollupOptions {
  /** Answer whole buckets from store.buckets() where possible (default true); false reads raw values only. */
  useBuckets?: boolean;
  /** Yields to the event loop between batches of raw values once the slice has run its budget. */
  slice?: TimeSlice;
}

/**
 * Periods computed (and written out by the caller) at a time: a bounded piece of work and memory.
 * At least a leap year of hours (8,784), so an hourly trend over a year stays one piece.
 */
export const ROLLUP_CHUNK_PERIODS = 10_000;
/** The same for calendar periods (DAYS and longer), whose bounds cost 3–7 µs each to step through. */
export const ROLLUP_CALENDAR_CHUNK_PERIODS = 2_000;

/**
 * Statistics of `series` for the periods between consecutive `bounds` (a chunk of a PeriodPlan).
 * `endOfData` = min(to, now): the newest value stays in force until then. `numeric` = false for
 * ALPHANUMERIC points and for points the caller treats as non-numeric; numeric rows whose value is
 * null are skipped, as the store's buckets skip them.
 */
export async function computeRollup(
  store: RollupSource,
  series: number,
  bounds: Float64Array,
  endOfData: number,
  numeric: boolean,
  options: RollupOptions = {},
): Promise<RollupResult> {
  checkBounds(bounds, endOfData);
  const from = bounds[0] as number;
  const to = bounds[bounds.length - 1] as number;
  const result = new RollupResult(bounds, numeric);

  const slice = options.slice;
  if (!numeric) {
    const inForce = await store.valueAt(series, from);
    const accumulator = new StoredValueAccumulator(result, endOfData, inForce && { ts: inForce.ts, value: storedScalar(inForce) });
    for await (const batch of store.range(series, from, to)) {
      accumulator.values(batch, from, to);
      await slice?.yieldIfExpired();
    }
    accumulator.finish();
    return result;
  }

  const bucketEnd = options.useBuckets === false ? from : bucketStretchEnd(bounds, endOfData);
  let rawFrom = from;
  let buckets = NO_BUCKETS;
  let inForce: InForce<number> | undefined;
  if (bucketEnd > from) {
    // One more bucket, the hour before `from`: its last value is the one in force at `from`.
    buckets = await bucketColumns(store, series, from - BUCKET_MS, bucketEnd);
    inForce = await inForceFromBuckets(store, series, from, buckets);
    if (buckets.length > 0 && buckets.start[0] === from - BUCKET_MS) buckets = buckets.view(1);
    rawFrom = bucketEnd;
  } else {
    inForce = numericValue(await store.valueAt(series, from));
  }
  const accumulator = new NumericAccumulator(result, endOfData, inForce);
  accumulator.buckets(buckets);
  for await (const batch of store.range(series, rawFrom, to)) {
    accumulator.values(batch, rawFrom, to);
    await slice?.yieldIfExpired();
  }
  accumulator.finish();
  return result;
}

/**
 * computeRollup over a plan's periods, `chunkPeriods` at a time (by default ROLLUP_CHUNK_PERIODS, or
 * ROLLUP_CALENDAR_CHUNK_PERIODS for calendar periods), each chunk an independent rollup
 * of its slice of the bounds: a period depends only on the values inside it and the value in force
 * at its start, which each chunk looks up. Between chunks it yields to the event loop, so a long
 * request shares it with the others; its memory is a chunk's worth, whatever the periods.
 */
export async function* rollupInChunks(
  store: RollupSource,
  series: number,
  plan: PeriodPlan,
  endOfData: number,
  numeric: boolean,
  options: RollupOptions & { chunkPeriods?: number } = {},
): AsyncGenerator<RollupResult> {
  let first = true;
  const size = options.chunkPeriods ?? (plan.exact ? ROLLUP_CHUNK_PERIODS : ROLLUP_CALENDAR_CHUNK_PERIODS);
  for (const bounds of plan.chunks(size)) {
    if (!first) await (options.slice ? options.slice.yield() : yieldToEventLoop());
    first = false;
    yield await computeRollup(store, series, bounds, endOfData, numeric, options);
  }
}

/**
 * A point's statistics over each period of the plan, in chunks (rollupInChunks): as numbers for a
 * NUMERIC point, as stored values otherwise. No value is in force after `now` (when the request
 * came): a period still running is rolled up as far as it has gone.
 */
export function pointRollup(
  store: RollupSource,
  point: Pick<DataPointRecord, 'id' | 'dataType'>,
  plan: PeriodPlan,
  now: number,
  options: RollupOptions = {},
): AsyncGenerator<RollupResult> {
  return rollupInChunks(store, point.id, plan, Math.min(plan.to, now), rollsUpNumbers(point.dataType), options);
}

const NO_BUCKETS = new SeriesBuckets();

/** The store's buckets as columns: its own where it has them (the bucket cache does), else converted. */
async function bucketColumns(store: RollupSource, series: number, from: number, to: number): Promise<SeriesBuckets> {
  if (store.bucketColumns) return store.bucketColumns(series, from, to);
  return SeriesBuckets.from(await store.buckets(series, from, to));
}

function numericValue(v: StoredValue | undefined): InForce<number> | undefined {
  return v && v.value !== null ? { ts: v.ts, value: v.value } : undefined;
}

/**
 * The numeric value in force at `from` (a bucket boundary), from `buckets` (read from the hour
 * before `from`) where they tell: the last value of that hour; or none needed when the first value
 * inside is at `from` itself (it is the value in force then). Otherwise the store is asked.
 */
async function inForceFromBuckets(store: RollupSource, series: number, from: number, buckets: SeriesBuckets): Promise<InForce<number> | undefined> {
  if (buckets.length > 0) {
    const start = buckets.start[0];
    if (start === from - BUCKET_MS) return { ts: buckets.lastTs[0] as number, value: buckets.lastValue[0] as number };
    if (start === from && buckets.firstTs[0] === from) return undefined;
  }
  return numericValue(await store.valueAt(series, from));
}

/**
 * End of the stretch [bounds[0], end) that whole buckets answer: buckets that lie inside one period
 * (the bounds up to there are multiples of BUCKET_MS) and end by endOfData (values after it would
 * spoil a bucket's integral). Equals bounds[0] when there is none.
 */
function bucketStretchEnd(bounds: Float64Array, endOfData: number): number {
  const from = bounds[0] as number;
  const last = bounds.length - 1;
  if (from % BUCKET_MS !== 0) return from;
  let end = Math.floor(Math.min(endOfData, bounds[last] as number) / BUCKET_MS) * BUCKET_MS;
  for (let i = 1; i <= last; i++) {
    const bound = bounds[i] as number;
    if (bound >= end) break;
    if (bound % BUCKET_MS !== 0) {
      end = Math.floor(bound / BUCKET_MS) * BUCKET_MS;
      break;
    }
  }
  return end > from ? end : from;
}

function checkBounds(bounds: Float64Array, endOfData: number): void {
  if (bounds.length < 2) throw new RangeError('A rollup needs at least one period');
  for (let i = 1; i < bounds.length; i++) {
    if (!((bounds[i] as number) > (bounds[i - 1] as number))) throw new RangeError('Period bounds must increase');
  }
  if (Number.isNaN(endOfData)) throw new RangeError('endOfData must be an instant');
}
