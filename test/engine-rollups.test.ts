// Rollups over the real point-value engines (DuckDB always, QuestDB when TEST_QUESTDB_ILP and
// TEST_QUESTDB_PG are set): computeRollup reading each engine must give what the plain reference
// (test/helpers/reference-rollup.ts) gives, on random irregular series written the way data really
// arrives: gaps of hours and days, newer data first and older batches later, a batch overlapping
// both, rewrites of a timestamp in later appends (upsert), several series in the same appends,
// periods in DST zones, every kind of end of data, both planner paths (buckets and raw), deletes, and
// (DuckDB) compaction at any point. One store per engine, a fresh set of series ids per run.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { openDuckDbStore } from '../src/store/values/duckdb/index.js';
import type { PeriodType } from '../src/values/read/periods.js';
import { computeRollup, type RollupResult } from '../src/values/read/rollup.js';
import { statisticOf } from '../src/values/read/statistics.js';
import { allBounds } from './helpers/period-bounds.js';
import { BUCKET_MS, type PointValueStore, type ValueBatch } from '../src/store/values/types.js';
import { effectiveSeries, referenceRollup, type ReferenceStatistics, type TimedValue } from './helpers/reference-rollup.js';
import './helpers/value-engines.duckdb.js';
import './helpers/value-engines.questdb.js';
import './helpers/value-engines.postgres.js';
import { announceValueEngines, valueEngines, type ValueEngine } from './helpers/value-engines.js';
import { spy, STATISTIC_KEY, STATISTICS } from './helpers/rollup-checks.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Runs per property on DuckDB; QuestDB waits for its WAL on every append, so it gets a quarter.
 * TEST_ENGINE_ROLLUP_RUNS=n runs each property n times instead (a longer soak; raise mocha's timeout).
 */
const RUNS = { rollups: 80, deletes: 50 };
const RUNS_OVERRIDE = Number(process.env.TEST_ENGINE_ROLLUP_RUNS) || undefined;
function runsFor(engine: ValueEngine, runs: number): number {
  const n = RUNS_OVERRIDE ?? runs;
  return engine.name === 'questdb' ? Math.ceil(n / 4) : n;
}

// ---- comparing with the reference ----


/** Equal to 1e-9 relative, 1e-9 absolute near zero; null only as null. */
function close(actual: unknown, expected: unknown): boolean {
  if (typeof actual === 'number' && typeof expected === 'number') {
    return Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(actual), Math.abs(expected));
  }
  return actual === expected;
}

/** Every rollup of every period, and ALL key by key; lists the first mismatches. */
function assertMatchesReference(result: RollupResult, expected: readonly ReferenceStatistics[], context: string): void {
  assert.equal(result.length, expected.length, `${context}: number of periods`);
  const wrong: string[] = [];
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i] as ReferenceStatistics;
    for (const rollup of STATISTICS) {
      const got = statisticOf(result, i, rollup, true);
      const key = STATISTIC_KEY[rollup];
      if (!close(got, want[key])) wrong.push(`period ${i} [${result.start(i)}, ${result.end(i)}) ${rollup}: ${String(got)}, reference ${String(want[key])}`);
    }
    const all = statisticOf(result, i, 'ALL', true) as unknown as Record<string, unknown>;
    assert.deepEqual(Object.keys(all).sort(), Object.keys(want).sort(), `${context}: ALL keys`);
    for (const [key, value] of Object.entries(want)) {
      if (!close(all[key], value)) wrong.push(`period ${i} ALL.${key}: ${String(all[key])}, reference ${String(value)}`);
    }
  }
  if (wrong.length > 0) assert.fail(`${context}: ${wrong.length} mismatches, first: ${wrong.slice(0, 6).join('; ')}`);
}

/**
 * The reference one period at a time over only what that period depends on (the value in force at
 * its start and the values inside), which is what referenceRollup does over the whole series but
 * without its quadratic cost on long series.
 */
function referenceByPeriod(series: readonly TimedValue<number>[], bounds: Float64Array, endOfData: number): ReferenceStatistics[] {
  const firstAtOrAfter = (t: number): number => {
    let lo = 0;
    let hi = series.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((series[mid] as TimedValue<number>).ts < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const out: ReferenceStatistics[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const a = bounds[i] as number;
    const b = bounds[i + 1] as number;
    const lo = firstAtOrAfter(a);
    const start = series[lo]?.ts === a ? lo : Math.max(0, lo - 1);
    out.push(...referenceRollup(series.slice(start, firstAtOrAfter(b)), [a, b], endOfData));
  }
  return out;
}

// ---- writing ----

interface Row {
  s: number;
  ts: number;
  v: number;
}

function toBatch(rows: readonly Row[]): ValueBatch {
  return {
    length: rows.length,
    series: Int32Array.from(rows, (r) => r.s),
    ts: Float64Array.from(rows, (r) => r.ts),
    value: Float64Array.from(rows, (r) => r.v),
    text: null,
    annotation: null,
  };
}

/** What the store should hold for series s after these rows arrived in this order. */
function seriesOf(sent: readonly Row[], s: number): TimedValue<number>[] {
  return effectiveSeries(sent.filter((r) => r.s === s).map((r) => ({ ts: r.ts, value: r.v })));
}

function compactOf(store: PointValueStore): (() => Promise<void>) | undefined {
  const compact = (store as PointValueStore & { compact?: () => Promise<void> }).compact;
  return typeof compact === 'function' ? () => compact.call(store) : undefined;
}

/** A small deterministic PRNG for shuffling batches (the seed comes from fast-check). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed >>> 0 || 1;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * The companions of the main series in every append: another series at the same ts, one a
 * millisecond later, one seven minutes earlier, each with large values of its own, so a leak shows.
 */
const COMPANIONS = [
  { offset: 0, value: (v: number) => 10_000 - 3 * v, keep: (i: number) => i % 3 !== 0 },
  { offset: 1, value: (v: number) => -20_000 + v, keep: (i: number) => i % 2 === 0 },
  { offset: -7 * MINUTE, value: (v: number) => 30_000 + 2 * v, keep: (i: number) => i % 4 !== 1 },
];

/** Main rows plus their companion rows, interleaved row by row. */
function withCompanions(main: readonly Row[], ids: readonly number[], firstIndex: number): Row[] {
  const rows: Row[] = [];
  main.forEach((r, k) => {
    rows.push(r);
    COMPANIONS.forEach((c, j) => {
      if (c.keep(firstIndex + k)) rows.push({ s: ids[j] as number, ts: r.ts + c.offset, v: c.value(r.v) });
    });
  });
  return rows;
}

// ---- generators ----

const ZONES = ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata'] as const;
// DST changes (Berlin, New York) and Kolkata's midnight of a leap-year month end (UTC+5:30).
const ANCHORS = [
  Date.UTC(2024, 2, 31, 1),
  Date.UTC(2024, 9, 27, 1),
  Date.UTC(2024, 2, 10, 7),
  Date.UTC(2024, 10, 3, 6),
  Date.UTC(2024, 1, 29, 18, 30),
];
const NOMINAL_MS: Partial<Record<PeriodType, number>> = { HOURS: HOUR, DAYS: DAY, MONTHS: 30 * DAY };

/** Uniform in [0, 1] (fc.double favours the ends and tiny numbers). */
const fraction = fc.integer({ min: 0, max: 1000 }).map((k) => k / 1000);

interface PeriodsCase {
  bounds: Float64Array;
  label: string;
}

const periodsArb: fc.Arbitrary<PeriodsCase> = fc
  .record({
    anchor: fc.constantFrom(...ANCHORS),
    zone: fc.constantFrom(...ZONES),
    period: fc.oneof(
      fc.record({ type: fc.constant('HOURS' as const), count: fc.integer({ min: 1, max: 3 }), periods: fc.integer({ min: 1, max: 36 }) }),
      fc.record({ type: fc.constant('DAYS' as const), count: fc.integer({ min: 1, max: 2 }), periods: fc.integer({ min: 1, max: 8 }) }),
      fc.record({ type: fc.constant('MONTHS' as const), count: fc.constant(1), periods: fc.integer({ min: 1, max: 3 }) }),
    ),
    truncate: fc.boolean(),
    // Starts on an hour (where the planner can use buckets) as often as anywhere.
    shift: fc.oneof(
      fc.integer({ min: -72, max: 24 }).map((h) => h * HOUR),
      fc.integer({ min: -3 * DAY, max: DAY }),
    ),
    // How much of the last period the range covers.
    tail: fraction,
  })
  .map(({ anchor, zone, period, truncate, shift, tail }) => {
    const nominal = (NOMINAL_MS[period.type] as number) * period.count;
    // Monthly ranges start up to six weeks before the anchor, so its DST change falls inside.
    const from = anchor + (period.type === 'MONTHS' ? 14 * shift : shift);
    const to = from + Math.max(1, Math.round(nominal * (period.periods - 1 + tail)));
    const bounds = allBounds({ from, to, type: period.type, count: period.count, zone, truncate });
    const label = `${period.count} ${period.type} in ${zone}${truncate ? ', truncated' : ''}, ${new Date(bounds[0] as number).toISOString()} .. ${new Date(bounds.at(-1) as number).toISOString()}`;
    return { bounds, label };
  });

const valueArb = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1000, max: 1000, noNaN: true }));

/** Generators of instants around a range: anywhere, at and near its bounds and hours, near DST changes. */
function instantsAround(bounds: Float64Array) {
  const from = bounds[0] as number;
  const to = bounds.at(-1) as number;
  const span = to - from;
  const anywhere = fc.integer({ min: Math.floor(from - span / 2), max: Math.ceil(to + span / 2) });
  const bound = fc.integer({ min: 0, max: bounds.length - 1 }).map((k) => bounds[k] as number);
  const near = (at: fc.Arbitrary<number>, d: number) => fc.tuple(at, fc.integer({ min: -d, max: d })).map(([t, e]) => t + e);
  const anchors = ANCHORS.filter((a) => a > from - span && a < to + span);
  const instant = fc.oneof(
    anywhere,
    near(bound, 1),
    near(bound, 2 * HOUR),
    near(
      anywhere.map((t) => Math.round(t / HOUR) * HOUR),
      1,
    ),
    ...(anchors.length > 0 ? [near(fc.constantFrom(...anchors), 3 * HOUR)] : []),
  );
  const endOfData = fc.oneof(
    fc.integer({ min: from, max: to }),
    fc.integer({ min: Math.floor(from - span), max: from }),
    fc.integer({ min: to, max: Math.ceil(to + span) }),
    fc.constant(to),
    near(bound, 1),
    fc.integer({ min: from, max: to }).map((t) => Math.floor(t / HOUR) * HOUR),
  );
  return { instant, endOfData };
}

/** Clusters of values (steps of ms to hours) at random instants: gaps of hours and days between them. */
function seriesArb(instant: fc.Arbitrary<number>): fc.Arbitrary<TimedValue<number>[]> {
  const step = fc.oneof(fc.integer({ min: 1, max: 999 }), fc.integer({ min: SECOND, max: 10 * MINUTE }), fc.constant(MINUTE), fc.integer({ min: 10 * MINUTE, max: 3 * HOUR }));
  const cluster = fc.record({ at: instant, first: valueArb, rest: fc.array(fc.tuple(step, valueArb), { maxLength: 12 }) }).map(({ at, first, rest }) => {
    let t = at;
    return [{ ts: t, value: first }, ...rest.map(([d, value]) => ({ ts: (t += d), value }))];
  });
  // One value per ts here; rewrites come from the corrections.
  return fc.array(cluster, { maxLength: 8 }).map((clusters) => effectiveSeries(clusters.flat()));
}

/** A rewrite of an existing value (by index) or a value at a new instant. */
type Correction = { existing: number; value: number } | { ts: number; value: number };

function correctionsArb(instant: fc.Arbitrary<number>, maxLength: number): fc.Arbitrary<Correction[]> {
  return fc.array(
    fc.oneof(
      fc.record({ existing: fc.nat(), value: valueArb }),
      fc.record({ ts: instant, value: valueArb }),
    ),
    { maxLength },
  );
}

function resolve(corrections: readonly Correction[], base: readonly TimedValue<number>[]): TimedValue<number>[] {
  const out: TimedValue<number>[] = [];
  for (const c of corrections) {
    if ('ts' in c) out.push({ ts: c.ts, value: c.value });
    else if (base.length > 0) out.push({ ts: (base[c.existing % base.length] as TimedValue<number>).ts, value: c.value });
  }
  return out;
}

interface Arrival {
  /** Where newer data ends and older begins, as a fraction of the values. */
  split: number;
  newerChunk: number;
  olderChunk: number;
  /** Rows of each append in random order (else sorted by ts). */
  shuffle: boolean;
  /** The appends of a phase are issued together, not one after another. */
  concurrent: boolean;
  seed: number;
}

const arrivalArb: fc.Arbitrary<Arrival> = fc.record({
  split: fraction,
  newerChunk: fc.integer({ min: 1, max: 40 }),
  olderChunk: fc.integer({ min: 1, max: 40 }),
  shuffle: fc.boolean(),
  concurrent: fc.boolean(),
  seed: fc.integer(),
});

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

interface Ids {
  main: number;
  /** Companions, in COMPANIONS order; ids on both sides of main. */
  others: number[];
}

/**
 * Phases of appends for a base series: the newer part in ascending chunks (pure appends, several
 * partial aggregates per bucket), then the older part in chunks from the newest back (late data),
 * then each batch of corrections (overlapping both, rewriting values: upsert). The main series'
 * companions ride along in every append; the first companion also gets a value far after the range
 * in the very first append, so all its later rows are late while the main series' are not.
 */
function phasesOf(base: readonly TimedValue<number>[], corrections: readonly TimedValue<number>[][], arrival: Arrival, ids: Ids, farFuture: number): Row[][][] {
  const rows = base.map((w) => ({ s: ids.main, ts: w.ts, v: w.value }));
  const split = Math.floor(arrival.split * rows.length);
  let index = 0;
  const append = (main: readonly Row[]): Row[] => {
    const batch = withCompanions(main, ids.others, index);
    index += main.length;
    return arrival.shuffle ? shuffled(batch, arrival.seed + index) : batch.sort((x, y) => x.ts - y.ts);
  };
  const newer = chunks(rows.slice(split), arrival.newerChunk).map(append);
  const first = newer[0] ?? [];
  first.push({ s: ids.others[0] as number, ts: farFuture, v: 12_345 });
  if (newer.length === 0) newer.push(first);
  const older = chunks(rows.slice(0, split), arrival.olderChunk).reverse().map(append);
  const late = corrections.map((batch) => [append(batch.map((w) => ({ s: ids.main, ts: w.ts, v: w.value })))]);
  return [newer, older, ...late].map((phase) => phase.filter((batch) => batch.length > 0));
}

/** Appends phase by phase (concurrently inside the first two when asked: their rows do not overlap), compacting after phase `compactAt`. */
async function play(store: PointValueStore, phases: readonly Row[][][], concurrent: boolean, compactAt: number): Promise<Row[]> {
  const sent: Row[] = [];
  const compact = compactOf(store);
  for (const [k, phase] of phases.entries()) {
    if (concurrent && k < 2) {
      await Promise.all(phase.map((rows) => store.append(toBatch(rows))));
    } else {
      for (const rows of phase) await store.append(toBatch(rows));
    }
    for (const rows of phase) sent.push(...rows);
    if (k === compactAt && compact) await compact();
  }
  return sent;
}

/**
 * Both planner paths for each series against the reference of what was sent. When the bucket path
 * read no bucket it ran exactly the raw path, which is then not run again.
 */
async function checkAll(store: PointValueStore, sent: readonly Row[], series: readonly number[], bounds: Float64Array, endOfData: number, context: string): Promise<void> {
  for (const s of series) {
    const expected = referenceRollup(seriesOf(sent, s), bounds, endOfData);
    const { source, bucketCalls } = spy(store);
    const where = `${context}, series ${s}, endOfData ${endOfData}`;
    assertMatchesReference(await computeRollup(source, s, bounds, endOfData, true), expected, `${where}, ${bucketCalls.length > 0 ? 'bucket path' : 'raw path'}`);
    if (bucketCalls.length > 0) assertMatchesReference(await computeRollup(store, s, bounds, endOfData, true, { useBuckets: false }), expected, `${where}, raw path`);
  }
}

/**
 * Periods of whole hours over every value of series s, the data ending with them: the bucket path
 * answers them from the engine's bucket aggregates only, so every bucket is checked, wherever the
 * random periods fell. One hour per period, or a few when the values span more than 20 days.
 */
async function checkEveryHour(store: PointValueStore, sent: readonly Row[], s: number, context: string): Promise<void> {
  const series = seriesOf(sent, s);
  if (series.length === 0) return;
  const from = Math.floor((series[0] as TimedValue<number>).ts / HOUR) * HOUR;
  const to = Math.floor((series.at(-1) as TimedValue<number>).ts / HOUR) * HOUR + HOUR;
  const count = Math.ceil((to - from) / HOUR / 480);
  const bounds = allBounds({ from, to, type: 'HOURS', count, zone: 'UTC', truncate: false });
  const expected = referenceByPeriod(series, bounds, to);
  for (const useBuckets of [true, false]) {
    const result = await computeRollup(store, s, bounds, to, true, { useBuckets });
    assertMatchesReference(result, expected, `${context}, series ${s}, every hour, ${useBuckets ? 'bucket path' : 'raw path'}`);
  }
}


type Deletion = { from: number; length: number } | { fromValue: number; values: number; fromShift: number; toShift: number };

/** The range [from, to) a deletion stands for, given the stored values. */
function deletedRange(deletion: Deletion, base: readonly TimedValue<number>[], fallback: number): { from: number; to: number } {
  if ('from' in deletion) return { from: deletion.from, to: deletion.from + deletion.length };
  if (base.length === 0) return { from: fallback, to: fallback + HOUR };
  const i = deletion.fromValue % base.length;
  const from = (base[i] as TimedValue<number>).ts + deletion.fromShift;
  const to = (base[Math.min(base.length - 1, i + deletion.values)] as TimedValue<number>).ts + deletion.toShift;
  return { from, to: Math.max(to, from + 1) };
}

// ---- the suites ----

type OpenStore = () => Promise<{ store: PointValueStore; dispose(): Promise<void> }>;

interface SuiteRuns {
  rollups: number;
  deletes: number;
}

/** The properties and the 30-day case on one store, kept open across them. */
function engineSuite(title: string, open: OpenStore, runs: SuiteRuns): void {
  describe(title, () => {
    let store: PointValueStore;
    let dispose: (() => Promise<void>) | undefined;
    // Four fresh ids per run: the main series between its companions.
    let nextId = 1000;
    const freshIds = (): Ids => {
      const base = nextId;
      nextId += 4;
      return { main: base + 1, others: [base, base + 2, base + 3] };
    };

    before(async () => {
      ({ store, dispose } = await open());
    });

    after(async () => {
      await dispose?.();
    });

    it('equals the reference for every rollup, on both planner paths, whatever the arrival order, and after compaction', async () => {
      const scenario = periodsArb.chain(({ bounds, label }) => {
        const { instant, endOfData } = instantsAround(bounds);
        return fc.record({
          bounds: fc.constant(bounds),
          label: fc.constant(label),
          base: seriesArb(instant),
          overlap: correctionsArb(instant, 15),
          again: correctionsArb(instant, 8),
          arrival: arrivalArb,
          // After which phase to compact as well (-1: only at the end).
          compactAt: fc.oneof({ arbitrary: fc.constant(-1), weight: 2 }, { arbitrary: fc.integer({ min: 0, max: 3 }), weight: 3 }),
          endOfData,
        });
      });
      await fc.assert(
        fc.asyncProperty(scenario, async ({ bounds, label, base, overlap, again, arrival, compactAt, endOfData }) => {
          const ids = freshIds();
          const span = (bounds.at(-1) as number) - (bounds[0] as number);
          const phases = phasesOf(base, [resolve(overlap, base), resolve(again, base)], arrival, ids, (bounds.at(-1) as number) + 2 * span + HOUR);
          const sent = await play(store, phases, arrival.concurrent, compactAt);
          const series = [ids.main, ...ids.others];
          await checkAll(store, sent, series, bounds, endOfData, label);
          await checkEveryHour(store, sent, ids.main, label);
          const compact = compactOf(store);
          if (compact) {
            await compact();
            await checkAll(store, sent, [ids.main, ids.others[0] as number], bounds, endOfData, `${label}, after compact()`);
            await checkEveryHour(store, sent, ids.main, `${label}, after compact()`);
          }
        }),
        { numRuns: runs.rollups },
      );
    });

    it('equals the reference on the remaining values after deleting a sub-range, and after writing into it again', async () => {
      const scenario = periodsArb.chain(({ bounds, label }) => {
        const { instant, endOfData } = instantsAround(bounds);
        const span = (bounds.at(-1) as number) - (bounds[0] as number);
        return fc.record({
          bounds: fc.constant(bounds),
          label: fc.constant(label),
          base: seriesArb(instant),
          arrival: arrivalArb,
          // The deleted range: from an instant for a short or long while or to the end, or from one
          // stored value to (about) another a few values later, so the edges cut through buckets.
          deletion: fc.oneof(
            fc.record({
              from: instant,
              length: fc.oneof(
                fc.integer({ min: 1, max: 1000 }),
                fc.integer({ min: MINUTE, max: 3 * HOUR }),
                fc.integer({ min: 1, max: 48 }).map((h) => h * HOUR),
                fc.integer({ min: DAY, max: 10 * DAY }),
                fc.constant(10 * span + 10 * DAY),
              ),
            }),
            fc.record({ fromValue: fc.nat(), values: fc.integer({ min: 0, max: 6 }), fromShift: fc.integer({ min: -1, max: 1 }), toShift: fc.integer({ min: -1, max: 1 }) }),
          ),
          // Values written afterwards, as fractions of [from − 1 h, to + 1 h] of the deleted range.
          rewrite: fc.array(fc.record({ at: fraction, value: valueArb }), { maxLength: 10 }),
          compactBeforeDelete: fc.boolean(),
          endOfData,
        });
      });
      await fc.assert(
        fc.asyncProperty(scenario, async ({ bounds, label, base, arrival, deletion, rewrite, compactBeforeDelete, endOfData }) => {
          const ids = freshIds();
          const span = (bounds.at(-1) as number) - (bounds[0] as number);
          const phases = phasesOf(base, [], arrival, ids, (bounds.at(-1) as number) + 2 * span + HOUR);
          const sent = await play(store, phases, arrival.concurrent, compactBeforeDelete ? 1 : -1);

          const { from, to } = deletedRange(deletion, base, bounds[0] as number);
          const stored = seriesOf(sent, ids.main);
          const deleted = await store.delete(ids.main, from, to);
          assert.equal(deleted, stored.filter((w) => w.ts >= from && w.ts < to).length, 'deleted count');
          // What is left, as if it had been written so.
          const remaining: Row[] = sent.filter((r) => r.s !== ids.main || r.ts < from || r.ts >= to);
          const context = `${label}, deleted [${from}, ${to})`;
          await checkAll(store, remaining, [ids.main, ...ids.others], bounds, endOfData, context);
          await checkEveryHour(store, remaining, ids.main, context);

          const again = rewrite.map(({ at, value }) => ({ s: ids.main, ts: Math.round(from - HOUR + at * (to - from + 2 * HOUR)), v: value }));
          if (again.length > 0) {
            await store.append(toBatch(again));
            remaining.push(...again);
          }
          // The companions were checked right after the delete: from here on only the main series.
          await checkAll(store, remaining, [ids.main], bounds, endOfData, `${context}, rewritten`);
          await checkEveryHour(store, remaining, ids.main, `${context}, rewritten`);
          const compact = compactOf(store);
          if (compact) {
            await compact();
            await checkAll(store, remaining, [ids.main], bounds, endOfData, `${context}, after compact()`);
            await checkEveryHour(store, remaining, ids.main, `${context}, after compact()`);
          }
        }),
        { numRuns: runs.deletes },
      );
    });

    it('gives the same hourly averages from buckets as from raw values, and as the reference, over 30 days of a value every minute with late corrections', async () => {
      const ids = freshIds();
      const companion = ids.others[0] as number;
      const t0 = Date.UTC(2024, 2, 10);
      const days = 30;
      const minutes = days * 1440;
      const end = t0 + days * DAY;
      const valueOf = (i: number) => 20 + 10 * Math.sin(i / 97) + (i % 11) * 0.37;
      const minute = (i: number): Row => ({ s: ids.main, ts: t0 + i * MINUTE, v: valueOf(i) });
      const sent: Row[] = [];
      const send = async (rows: Row[]) => {
        await store.append(toBatch(rows));
        sent.push(...rows);
      };
      // Live data in appends of 1,000 minutes (so appends end inside hours: several partial
      // aggregates per bucket), a companion series in the same appends; day 12 arrives last.
      const day12 = (i: number) => i >= 12 * 1440 && i < 13 * 1440;
      for (let i = 0; i < minutes; i += 1000) {
        const rows = Array.from({ length: Math.min(1000, minutes - i) }, (_, k) => minute(i + k)).filter((r) => !day12((r.ts - t0) / MINUTE));
        await send([...rows, ...rows.filter((_, k) => k % 5 === 0).map((r) => ({ s: companion, ts: r.ts, v: -r.v }))]);
      }
      await send(shuffled(Array.from({ length: 1440 }, (_, k) => minute(12 * 1440 + k)), 12));
      // Corrections in days 5 to 15 only (the other days keep the aggregates of the live appends):
      // every 37th minute rewritten, values between the minutes, in one shuffled batch; a rewrite
      // of one timestamp twice in the batch, the later winning.
      const corrections: Row[] = [];
      for (let i = 5 * 1440; i < 15 * 1440; i += 37) corrections.push({ s: ids.main, ts: t0 + i * MINUTE, v: 100 + (i % 13) });
      for (let i = 5 * 1440 + 5; i < 15 * 1440; i += 101) corrections.push({ s: ids.main, ts: t0 + i * MINUTE + 29_999, v: -50 + (i % 7) });
      const twice = t0 + 8 * DAY + 7 * HOUR;
      await send([...shuffled(corrections, 99), { s: ids.main, ts: twice, v: 1e3 }, { s: companion, ts: twice, v: 5 }, { s: ids.main, ts: twice, v: -1e3 }]);
      // A batch overlapping the newest values and reaching past them.
      await send(Array.from({ length: 120 }, (_, k) => ({ s: ids.main, ts: end - 60 * MINUTE + k * MINUTE + 500, v: 7 + k / 10 })));

      const bounds = allBounds({ from: t0, to: end, type: 'HOURS', count: 1, zone: 'UTC', truncate: false });
      assert.equal(bounds.length - 1, days * 24);
      const endOfData = end - 90 * MINUTE + 17 * SECOND;
      const expected = referenceByPeriod(seriesOf(sent, ids.main), bounds, endOfData);
      const check = async (context: string) => {
        const { source, bucketCalls, rawTs } = spy(store);
        const viaBuckets = await computeRollup(source, ids.main, bounds, endOfData, true);
        assert.equal(bucketCalls.length, 1, `${context}: one bucket read`);
        const rawFrom = Math.floor(endOfData / BUCKET_MS) * BUCKET_MS;
        assert.ok(rawTs.length > 0 && rawTs.every((ts) => ts >= rawFrom), `${context}: raw values only from the hour of the end of data`);
        const raw = await computeRollup(store, ids.main, bounds, endOfData, true, { useBuckets: false });
        const wrong: string[] = [];
        for (let i = 0; i < expected.length; i++) {
          const b = statisticOf(viaBuckets, i, 'AVERAGE', true);
          const r = statisticOf(raw, i, 'AVERAGE', true);
          const want = (expected[i] as ReferenceStatistics).average;
          if (!close(b, r) || !close(b, want)) wrong.push(`hour ${i}: buckets ${String(b)}, raw ${String(r)}, reference ${String(want)}`);
        }
        assert.deepEqual(wrong.slice(0, 6), [], `${context}: hourly AVERAGE (${wrong.length} hours differ)`);
        assertMatchesReference(viaBuckets, expected, `${context}, bucket path`);
        assertMatchesReference(raw, expected, `${context}, raw path`);
        const companionExpected = referenceByPeriod(seriesOf(sent, companion), bounds, endOfData);
        for (const useBuckets of [true, false]) {
          const result = await computeRollup(store, companion, bounds, endOfData, true, { useBuckets });
          assertMatchesReference(result, companionExpected, `${context}, companion series, ${useBuckets ? 'bucket' : 'raw'} path`);
        }
      };
      await check('30 days');
      const compact = compactOf(store);
      if (compact) {
        await compact();
        await check('30 days, after compact()');
      }
    });
  });
}

describe('rollups on the value engines', function () {
  // Property runs against a real engine take tens of seconds on 2 busy cores.
  this.timeout(300_000);
  before(() => announceValueEngines());

  for (const engine of valueEngines()) engineSuite(engine.name, () => engine.open(), { rollups: runsFor(engine, RUNS.rollups), deletes: runsFor(engine, RUNS.deletes) });

  // DuckDB merges the partial bucket rows of appends that continue an hour only every 10,000 of
  // them (and at close): here after every one, so buckets() reads merged rows out of table order.
  engineSuite(
    'duckdb, partial bucket rows merged after every append',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'dds-rollups-'));
      const store = await openDuckDbStore(dir, { readers: 2, mergePartialsAfter: 1 });
      return {
        store,
        async dispose() {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
    { rollups: RUNS_OVERRIDE ?? 30, deletes: RUNS_OVERRIDE ?? 15 },
  );
});
