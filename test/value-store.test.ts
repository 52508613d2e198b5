// Point-value store contract: the same cases on every engine (DuckDB always, QuestDB when
// TEST_QUESTDB_ILP and TEST_QUESTDB_PG are set), each on a fresh store, checked against a naive
// in-memory model. Engine-specific cases (durability across a kill, compaction, reopen) follow.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { openDuckDbStore, VALUES_FILE } from '../src/store/values/duckdb/index.js';
import { BUCKET_MS, type BucketAggregate, type PointValueStore, type StoredValue, type ValueBatch } from '../src/store/values/types.js';
import { KILL_BATCH, KILL_SERIES, killBatchTs } from './fixtures/duckdb-kill-batches.js';
import './helpers/value-engines.duckdb.js';
import './helpers/value-engines.questdb.js';
import './helpers/value-engines.postgres.js';
import { referenceBucket } from './helpers/reference-rollup.js';
import { announceValueEngines, valueEngines } from './helpers/value-engines.js';
import { prng } from './helpers/prng.js';

const H = BUCKET_MS;
const MIN = 60_000;
/** An hour boundary. */
const T0 = Date.UTC(2024, 0, 1);
/** Wide enough to hold every value the cases write. */
const ALL_FROM = Date.UTC(1960, 0, 1);
const ALL_TO = Date.UTC(2100, 0, 1);

interface Row {
  s: number;
  ts: number;
  /** Numeric value; absent for an ALPHANUMERIC row. */
  v?: number;
  text?: string;
  ann?: string;
}

function toBatch(rows: readonly Row[]): ValueBatch {
  const n = rows.length;
  const batch: ValueBatch = {
    length: n,
    series: new Int32Array(n),
    ts: new Float64Array(n),
    value: new Float64Array(n),
    text: rows.some((r) => r.text !== undefined) ? rows.map((r) => r.text ?? null) : null,
    annotation: rows.some((r) => r.ann !== undefined) ? rows.map((r) => r.ann ?? null) : null,
  };
  rows.forEach((r, i) => {
    batch.series[i] = r.s;
    batch.ts[i] = r.ts;
    batch.value[i] = r.v ?? NaN;
  });
  return batch;
}

function stored(r: Row): StoredValue {
  return { ts: r.ts, value: r.v ?? null, text: r.text ?? null, annotation: r.ann ?? null };
}

/** What every read must answer, computed the slow and obvious way. */
class Model {
  private readonly series = new Map<number, Map<number, StoredValue>>();

  apply(rows: readonly Row[]): void {
    for (const r of rows) {
      let m = this.series.get(r.s);
      if (!m) this.series.set(r.s, (m = new Map()));
      m.set(r.ts, stored(r));
    }
  }

  delete(s: number, from: number, to: number): number {
    const m = this.series.get(s);
    if (!m) return 0;
    let n = 0;
    for (const ts of [...m.keys()]) {
      if (ts >= from && ts < to) {
        m.delete(ts);
        n++;
      }
    }
    return n;
  }

  sorted(s: number): StoredValue[] {
    return [...(this.series.get(s)?.values() ?? [])].sort((a, b) => a.ts - b.ts);
  }

  seriesIds(): number[] {
    return [...this.series.keys()];
  }

  range(s: number, from: number, to: number, limit = Infinity): StoredValue[] {
    return this.sorted(s).filter((v) => v.ts >= from && v.ts < to).slice(0, limit);
  }

  latest(s: number, n: number): StoredValue[] {
    return this.sorted(s).reverse().slice(0, n);
  }

  valueAt(s: number, t: number): StoredValue | undefined {
    return this.sorted(s).filter((v) => v.ts <= t).pop();
  }

  buckets(s: number, from: number, to: number): BucketAggregate[] {
    return naiveBuckets(this.sorted(s), from, to);
  }
}

/** Partial aggregates straight from the definition in types.ts. */
function naiveBuckets(values: readonly StoredValue[], from: number, to: number): BucketAggregate[] {
  const byStart = new Map<number, { ts: number; v: number }[]>();
  for (const x of values) {
    if (x.value === null) continue;
    const start = Math.floor(x.ts / H) * H;
    if (start < from || start >= to) continue;
    if (!byStart.has(start)) byStart.set(start, []);
    byStart.get(start)!.push({ ts: x.ts, v: x.value });
  }
  return [...byStart.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([start, xs]) => referenceBucket(start, xs));
}

function close(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
}

/** Every field: exact, except sum and innerIntegral to 1e-9 relative. */
function assertBucketsEqual(actual: BucketAggregate[], expected: BucketAggregate[], label = ''): void {
  assert.deepEqual(
    actual.map((b) => b.start),
    expected.map((b) => b.start),
    `${label} bucket starts`,
  );
  actual.forEach((a, i) => {
    const e = expected[i]!;
    const where = `${label} bucket ${new Date(e.start).toISOString()}`;
    assert.deepEqual(
      { count: a.count, min: a.min, max: a.max, firstTs: a.firstTs, firstValue: a.firstValue, lastTs: a.lastTs, lastValue: a.lastValue },
      { count: e.count, min: e.min, max: e.max, firstTs: e.firstTs, firstValue: e.firstValue, lastTs: e.lastTs, lastValue: e.lastValue },
      where,
    );
    assert.ok(close(a.sum, e.sum), `${where}: sum ${a.sum} != ${e.sum}`);
    assert.ok(close(a.innerIntegral, e.innerIntegral), `${where}: innerIntegral ${a.innerIntegral} != ${e.innerIntegral}`);
  });
}

async function readAll(it: AsyncIterable<StoredValue[]>): Promise<{ values: StoredValue[]; batches: number }> {
  const values: StoredValue[] = [];
  let batches = 0;
  for await (const batch of it) {
    assert.ok(batch.length > 0, 'range() yields no empty batch');
    values.push(...batch);
    batches++;
  }
  return { values, batches };
}

/** compact() where the engine has one (DuckDB); engines without it keep their own layout. */
async function compactIfAvailable(store: PointValueStore): Promise<void> {
  const maybe = store as PointValueStore & { compact?: () => Promise<void> };
  if (typeof maybe.compact === 'function') await maybe.compact();
}

/** Every read of series s against the model: the whole range, latest, valueAt around each value, buckets. */
async function assertSeriesMatches(store: PointValueStore, model: Model, s: number, label = ''): Promise<void> {
  const expected = model.sorted(s);
  const { values } = await readAll(store.range(s, ALL_FROM, ALL_TO));
  assert.deepEqual(values, expected, `${label} range of series ${s}`);
  assert.deepEqual(await store.latest(s, 3), model.latest(s, 3), `${label} latest of series ${s}`);
  const probes = expected.length === 0 ? [T0] : [expected[0]!.ts - 1, expected[0]!.ts, expected[expected.length - 1]!.ts + 1];
  if (expected.length > 2) {
    const mid = expected[expected.length >> 1]!;
    probes.push(mid.ts, mid.ts - 1, mid.ts + 1);
  }
  for (const t of probes) assert.deepEqual(await store.valueAt(s, t), model.valueAt(s, t), `${label} valueAt(${s}, ${t})`);
  assertBucketsEqual(await store.buckets(s, ALL_FROM, ALL_TO), model.buckets(s, ALL_FROM, ALL_TO), `${label} series ${s}`);
}

/** n numeric rows of series s from ts, `step` apart, values v0, v0 + 1, ... */
function ramp(s: number, ts: number, n: number, step = MIN, v0 = 0): Row[] {
  return Array.from({ length: n }, (_, i) => ({ s, ts: ts + i * step, v: v0 + i }));
}

announceValueEngines();

for (const engine of valueEngines()) {
  describe(`point-value store contract (${engine.name})`, function () {
    this.timeout(60_000);
    let store: PointValueStore;
    let dispose: () => Promise<void>;
    let model: Model;
    /** Series ids are fresh per test, so one store serves the whole suite. */
    let nextSeries = 1000;
    const newSeries = () => nextSeries++;

    before(async () => {
      ({ store, dispose } = await engine.open());
    });
    after(async () => {
      await dispose?.();
    });
    beforeEach(() => {
      model = new Model();
    });

    async function write(rows: Row[]): Promise<void> {
      await store.append(toBatch(rows));
      model.apply(rows);
    }

    it('round-trips every data type, text and annotations', async () => {
      const num = newSeries();
      const bin = newSeries();
      const multi = newSeries();
      const alpha = newSeries();
      await write([
        { s: num, ts: T0, v: 21.5 },
        { s: num, ts: T0 + 1, v: -0.000123, ann: 'calibrated' },
        { s: num, ts: T0 + 2, v: 1e300 },
        { s: num, ts: T0 + 3, v: 0 },
        { s: bin, ts: T0, v: 0 },
        { s: bin, ts: T0 + MIN, v: 1, ann: 'switched' },
        { s: multi, ts: T0, v: 3 },
        { s: multi, ts: T0 + MIN, v: 7 },
        { s: alpha, ts: T0, text: 'hello' },
        { s: alpha, ts: T0 + 1, text: '' },
        { s: alpha, ts: T0 + 2, text: 'ünïcödé ✓ 温度', ann: 'note, with "quotes"' },
        { s: alpha, ts: T0 + 3, text: 'x'.repeat(5000) },
      ]);
      for (const s of [num, bin, multi, alpha]) await assertSeriesMatches(store, model, s);
      assert.deepEqual(await store.buckets(alpha, ALL_FROM, ALL_TO), [], 'ALPHANUMERIC values have no numeric aggregates');
    });

    it('replaces a value written again at the same timestamp (later write wins), before and after compaction', async () => {
      const s = newSeries();
      await write(ramp(s, T0, 120)); // two hours, one value a minute
      await write([
        { s, ts: T0 + 30 * MIN, v: 1000 }, // middle of the first hour
        { s, ts: T0 + 119 * MIN, v: -5, ann: 'fixed' }, // the newest value
        { s, ts: T0, text: 'now text' }, // the first value becomes ALPHANUMERIC
      ]);
      // The same timestamp twice in one batch: the later row wins.
      await write([
        { s, ts: T0 + 60 * MIN, v: 1 },
        { s, ts: T0 + 60 * MIN, v: 2 },
        { s, ts: T0 + 61 * MIN, v: 3 },
      ]);
      await assertSeriesMatches(store, model, s, 'before compaction');
      assert.equal((await readAll(store.range(s, ALL_FROM, ALL_TO))).values.length, 120, 'no duplicate rows');
      await compactIfAvailable(store);
      await assertSeriesMatches(store, model, s, 'after compaction');
      await write([{ s, ts: T0 + 30 * MIN, v: 2000 }]);
      await compactIfAvailable(store);
      await assertSeriesMatches(store, model, s, 'rewritten after compaction');
    });

    it('accepts out-of-order batches and late values older than what is stored', async () => {
      const s = newSeries();
      const rows = ramp(s, T0 + 24 * H, 300, 37_000, 10);
      const shuffled = [...rows].sort((a, b) => ((a.ts * 7919) % 1009) - ((b.ts * 7919) % 1009));
      await write(shuffled);
      await assertSeriesMatches(store, model, s, 'shuffled');
      // A late batch a day earlier, another interleaved with what is stored, one overlapping the end.
      await write(ramp(s, T0, 90, MIN, 500).reverse());
      await write(ramp(s, T0 + 24 * H + 18_500, 50, 37_000, -40));
      await write(ramp(s, T0 + 24 * H + 290 * 37_000, 40, 11_000, 7));
      await assertSeriesMatches(store, model, s, 'late');
    });

    it('range() reads [from, to) oldest first, in batches, at most limit values', async () => {
      const s = newSeries();
      await write(ramp(s, T0, 25_000, 1000));
      const all = model.sorted(s);
      const whole = await readAll(store.range(s, T0, T0 + 25_000 * 1000));
      assert.deepEqual(whole.values, all);
      assert.ok(whole.batches > 1, 'a long range comes in several batches');
      assert.deepEqual((await readAll(store.range(s, T0 + 5000, T0 + 9000))).values, model.range(s, T0 + 5000, T0 + 9000), 'from inclusive, to exclusive');
      assert.deepEqual((await readAll(store.range(s, T0 + 4500, T0 + 9500))).values, model.range(s, T0 + 4500, T0 + 9500), 'bounds between values');
      assert.deepEqual((await readAll(store.range(s, T0, ALL_TO, 5))).values, all.slice(0, 5), 'limit');
      assert.deepEqual((await readAll(store.range(s, T0 + 1000, ALL_TO, 12_345))).values, all.slice(1, 12_346), 'limit across batches');
      assert.deepEqual((await readAll(store.range(s, T0 + 3000, T0 + 3000))).values, [], 'empty range');
      assert.deepEqual((await readAll(store.range(s, T0 + 3000, T0 + 2000))).values, [], 'from after to');
      assert.deepEqual((await readAll(store.range(s, T0, ALL_TO, 0))).values, [], 'limit 0');
      assert.deepEqual((await readAll(store.range(newSeries(), ALL_FROM, ALL_TO))).values, [], 'unknown series');
    });

    it('range() stays in ts order, in batches of at most 10,000, when older values were written after newer ones and the density changes', async () => {
      const s = newSeries();
      await write(ramp(s, T0 + 20_000 * MIN, 15_000, MIN, 1)); // newer rows first…
      await write(ramp(s, T0, 15_000, MIN, 2)); // …then older ones, late
      await write(ramp(s, T0 + 40_000 * MIN, 30_000, 7, 3)); // a dense burst after a sparse stretch
      await write(ramp(s, T0 + 7_500 * MIN + 30, 4_000, 1_000, 4)); // late and dense inside the old rows
      const all = model.sorted(s);
      let largest = 0;
      const values: StoredValue[] = [];
      for await (const batch of store.range(s, T0, ALL_TO)) {
        largest = Math.max(largest, batch.length);
        values.push(...batch);
      }
      assert.deepEqual(values, all);
      assert.ok(largest <= 10_000, `a batch of ${largest}`);
      const from = T0 + 7_000 * MIN;
      assert.deepEqual((await readAll(store.range(s, from, ALL_TO, 23_456))).values, model.range(s, from, ALL_TO).slice(0, 23_456), 'limit across the late rows');
    });

    it('latest() answers newest first, at most limit', async () => {
      const s = newSeries();
      await write(ramp(s, T0, 50).reverse());
      assert.deepEqual(await store.latest(s, 1), model.latest(s, 1));
      assert.deepEqual(await store.latest(s, 10), model.latest(s, 10));
      assert.deepEqual(await store.latest(s, 1000), model.latest(s, 1000), 'limit above the count');
      assert.deepEqual(await store.latest(newSeries(), 5), [], 'unknown series');
    });

    it('valueAt() is the newest value at or before t', async () => {
      const s = newSeries();
      await write([
        { s, ts: T0 + 1000, v: 1 },
        { s, ts: T0 + 2000, text: 'two' },
        { s, ts: T0 + 3000, v: 3, ann: 'three' },
      ]);
      assert.equal(await store.valueAt(s, T0 + 999), undefined, 'before the first value');
      assert.deepEqual(await store.valueAt(s, T0 + 1000), stored({ s, ts: T0 + 1000, v: 1 }), 'at an exact ts');
      assert.deepEqual(await store.valueAt(s, T0 + 2999), stored({ s, ts: T0 + 2000, text: 'two' }), 'between values');
      assert.deepEqual(await store.valueAt(s, T0 + 99 * H), stored({ s, ts: T0 + 3000, v: 3, ann: 'three' }), 'after the last');
      assert.equal(await store.valueAt(newSeries(), T0), undefined, 'unknown series');
    });

    it('buckets() equal aggregates computed from the raw values, for buckets starting in [from, to)', async () => {
      const s = newSeries();
      const rnd = prng(7);
      const rows: Row[] = [];
      for (let t = T0 - 3 * H; t < T0 + 30 * H; t += 1 + Math.floor(rnd() * 9 * MIN)) rows.push({ s, ts: t, v: Math.round(rnd() * 2000 - 1000) / 8 });
      rows.push({ s, ts: T0 + 5 * H + 1, text: 'a text value does not count' });
      await write(rows);
      assertBucketsEqual(await store.buckets(s, ALL_FROM, ALL_TO), model.buckets(s, ALL_FROM, ALL_TO), 'all');
      for (const [from, to] of [
        [T0, T0 + 10 * H],
        [T0 + 1, T0 + 10 * H], // the bucket at T0 starts before from
        [T0 - 1, T0 + 10 * H + 1], // the bucket at T0 + 10 h starts before to
        [T0 + 2 * H, T0 + 2 * H],
      ] as const) {
        assertBucketsEqual(await store.buckets(s, from, to), model.buckets(s, from, to), `[${from - T0}, ${to - T0})`);
      }
      assert.deepEqual(await store.buckets(newSeries(), ALL_FROM, ALL_TO), [], 'unknown series');
    });

    it('buckets() follow appends that continue the current hour, late writes, duplicates and deletes', async () => {
      const s = newSeries();
      // Ten appends of 7 values each, 13 minutes apart: most continue the hour the previous one ended in.
      for (let i = 0; i < 10; i++) await write(ramp(s, T0 + i * 7 * 13 * MIN, 7, 13 * MIN, i * 10));
      assertBucketsEqual(await store.buckets(s, ALL_FROM, ALL_TO), model.buckets(s, ALL_FROM, ALL_TO), 'continued hours');
      await write([{ s, ts: T0 + 13 * MIN, v: 99 }, { s, ts: T0 + 14 * MIN, v: -99 }, { s, ts: T0 + 2 * H + 1, v: 5 }]);
      assertBucketsEqual(await store.buckets(s, ALL_FROM, ALL_TO), model.buckets(s, ALL_FROM, ALL_TO), 'late and duplicate');
      assert.equal(await store.delete(s, T0 + 50 * MIN, T0 + 3 * H + 10 * MIN), model.delete(s, T0 + 50 * MIN, T0 + 3 * H + 10 * MIN));
      assertBucketsEqual(await store.buckets(s, ALL_FROM, ALL_TO), model.buckets(s, ALL_FROM, ALL_TO), 'after delete');
      await compactIfAvailable(store);
      assertBucketsEqual(await store.buckets(s, ALL_FROM, ALL_TO), model.buckets(s, ALL_FROM, ALL_TO), 'after compaction');
      await write(ramp(s, T0 + 20 * H, 5, MIN, 3));
      await assertSeriesMatches(store, model, s, 'appended after compaction');
    });

    it('delete() removes [from, to) of one series and returns how many', async () => {
      const s = newSeries();
      const other = newSeries();
      await write([...ramp(s, T0, 200), ...ramp(other, T0, 200)]);
      assert.equal(await store.delete(s, T0 + 10 * MIN, T0 + 20 * MIN), 10);
      model.delete(s, T0 + 10 * MIN, T0 + 20 * MIN);
      assert.equal(await store.delete(s, T0 + 10 * MIN, T0 + 20 * MIN), 0, 'nothing left there');
      assert.equal(await store.delete(s, T0 + 5 * MIN, T0 + 5 * MIN), 0, 'empty range');
      await assertSeriesMatches(store, model, s);
      await assertSeriesMatches(store, model, other, 'the other series is untouched');
      // Deleting the newest values, then writing at those timestamps again.
      assert.equal(await store.delete(s, T0 + 150 * MIN, ALL_TO), model.delete(s, T0 + 150 * MIN, ALL_TO));
      await assertSeriesMatches(store, model, s, 'newest deleted');
      await write(ramp(s, T0 + 160 * MIN, 5, MIN, 50));
      await write(ramp(s, T0 + 140 * MIN, 30, MIN, 70));
      await assertSeriesMatches(store, model, s, 'rewritten');
      assert.equal(await store.delete(s, ALL_FROM, ALL_TO), model.delete(s, ALL_FROM, ALL_TO));
      await assertSeriesMatches(store, model, s, 'all deleted');
      await write(ramp(s, T0, 3));
      await assertSeriesMatches(store, model, s, 'written again after deleting everything');
    });

    it('keeps many series interleaved in one batch apart', async () => {
      const ids = Array.from({ length: 40 }, () => newSeries());
      const rows: Row[] = [];
      for (let i = 0; i < 250; i++) for (const s of ids) rows.push({ s, ts: T0 + i * MIN + (s % 7), v: s + i / 4 });
      await write(rows);
      for (const s of ids.slice(0, 5)) await assertSeriesMatches(store, model, s);
      for (const s of ids) assert.equal((await readAll(store.range(s, ALL_FROM, ALL_TO))).values.length, 250);
    });

    it('accepts an empty batch', async () => {
      await store.append(toBatch([]));
      await store.append({ length: 0, series: new Int32Array(0), ts: new Float64Array(0), value: new Float64Array(0), text: [], annotation: [] });
    });

    it('keeps both of two appends running at once', async () => {
      const a = newSeries();
      const b = newSeries();
      const rowsA = ramp(a, T0, 5000, 1000);
      const rowsB = ramp(b, T0, 5000, 1000);
      const half = [...ramp(a, T0 + 5000 * 1000, 3000, 1000, 1e6)];
      await Promise.all([store.append(toBatch(rowsA)), store.append(toBatch(rowsB))]);
      model.apply(rowsA);
      model.apply(rowsB);
      await Promise.all([store.append(toBatch(half)), store.append(toBatch(ramp(b, T0 + 5000 * 1000, 10, 1000)))]);
      model.apply(half);
      model.apply(ramp(b, T0 + 5000 * 1000, 10, 1000));
      await assertSeriesMatches(store, model, a);
      await assertSeriesMatches(store, model, b);
      // Two appends to the same timestamps at once: one of them wins, and every read agrees on which.
      const c = newSeries();
      await Promise.all([store.append(toBatch(ramp(c, T0, 100, MIN, 0))), store.append(toBatch(ramp(c, T0, 100, MIN, 1000)))]);
      const got = (await readAll(store.range(c, ALL_FROM, ALL_TO))).values;
      assert.equal(got.length, 100);
      const winner = got[0]!.value === 0 ? 0 : 1000;
      model.apply(ramp(c, T0, 100, MIN, winner));
      await assertSeriesMatches(store, model, c, 'concurrent upsert');
    });

    it('matches the model through a random sequence of appends, late writes, duplicates, deletes and compactions', async () => {
      const rnd = prng(20240101);
      const ids = [newSeries(), newSeries(), newSeries()];
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      const value = (): Partial<Row> => {
        const r = rnd();
        if (r < 0.1) return { text: `t${Math.floor(rnd() * 100)}` };
        const v = Math.round(rnd() * 10_000 - 5000) / 16;
        return r < 0.2 ? { v, ann: `a${Math.floor(rnd() * 10)}` } : { v };
      };
      const maxTs = new Map<number, number>(ids.map((s) => [s, T0]));
      for (let op = 0; op < 70; op++) {
        const r = rnd();
        const s = pick(ids);
        if (r < 0.35) {
          // Fresh values after the newest, sometimes continuing its hour.
          const rows: Row[] = [];
          let t = maxTs.get(s)! + 1 + Math.floor(rnd() * 20 * MIN);
          for (let i = 0, n = 1 + Math.floor(rnd() * 200); i < n; i++, t += 1 + Math.floor(rnd() * 3 * MIN)) rows.push({ s, ts: t, ...value() });
          maxTs.set(s, rows[rows.length - 1]!.ts);
          await write(rows);
        } else if (r < 0.65) {
          // Random timestamps anywhere in the written span, several series, repeats inside the batch.
          const rows: Row[] = [];
          for (let i = 0, n = 1 + Math.floor(rnd() * 150); i < n; i++) {
            const ss = pick(ids);
            const t = T0 + Math.floor(rnd() * (maxTs.get(ss)! - T0 + 2 * H));
            rows.push({ s: ss, ts: t, ...value() });
            if (rnd() < 0.2) rows.push({ s: ss, ts: t, ...value() });
            maxTs.set(ss, Math.max(maxTs.get(ss)!, t));
          }
          await write(rows);
        } else if (r < 0.85) {
          const from = T0 + Math.floor(rnd() * (maxTs.get(s)! - T0 + H));
          const to = from + Math.floor(rnd() * 4 * H);
          assert.equal(await store.delete(s, from, to), model.delete(s, from, to), `op ${op}: delete count`);
        } else {
          await compactIfAvailable(store);
        }
        await assertSeriesMatches(store, model, pick(ids), `op ${op}`);
      }
      for (const s of ids) await assertSeriesMatches(store, model, s, 'end');
    });

    // Its speed is the historian bench's to measure (npm run bench -- historian); here, that nothing is lost.
    it('appends 1,000,000 values in batches of 10,000 from two clients, every one counted in its hourly buckets', async () => {
      const ids = Array.from({ length: 10 }, () => newSeries());
      const perSeries = 100_000;
      const started = performance.now();
      // Two clients, each loading its series in time order, 10,000 values per append.
      await Promise.all(
        [ids.slice(0, 5), ids.slice(5)].map(async (mine) => {
          for (const s of mine) {
            for (let off = 0; off < perSeries; off += 10_000) {
              const batch: ValueBatch = { length: 10_000, series: new Int32Array(10_000).fill(s), ts: new Float64Array(10_000), value: new Float64Array(10_000), text: null, annotation: null };
              for (let i = 0; i < 10_000; i++) {
                batch.ts[i] = T0 + (off + i) * MIN;
                batch.value[i] = Math.sin((off + i) / 100);
              }
              await store.append(batch);
            }
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      console.log(`      ${engine.name}: 1,000,000 values in ${seconds.toFixed(2)} s (${Math.round(1e6 / seconds).toLocaleString('en')} values/s)`);
      const s = ids[3]!;
      const buckets = await store.buckets(s, ALL_FROM, ALL_TO);
      assert.equal(buckets.reduce((n, b) => n + b.count, 0), perSeries);
      assert.equal(buckets.length, Math.ceil((perSeries * MIN) / H));
      assert.deepEqual(await store.latest(s, 1), [{ ts: T0 + (perSeries - 1) * MIN, value: Math.sin((perSeries - 1) / 100), text: null, annotation: null }]);
    });

    it('answers ping()', async () => {
      await store.ping();
    });
  });
}

// ---- DuckDB only ----

describe('DuckDB value store', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dds-duckdb-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Opens the closed store's file directly to look at what is stored. */
  async function inspect<T>(fn: (run: (sql: string) => Promise<unknown[][]>) => Promise<T>): Promise<T> {
    const instance = await DuckDBInstance.create(join(dir, VALUES_FILE));
    const conn = await instance.connect();
    try {
      return await fn(async (sql) => (await conn.runAndReadAll(sql)).getRowsJS());
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  }

  it('keeps acknowledged values when the process is killed', async function () {
    const child = spawn(process.execPath, ['--import', 'tsx', join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'duckdb-kill-child.ts'), dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const lastAcked = await new Promise<number>((resolve, reject) => {
      let out = '';
      let acked = -1;
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        for (const m of out.matchAll(/acked (\d+)\n/g)) acked = Math.max(acked, Number(m[1]));
        if (acked >= 25 && !child.killed) {
          child.kill('SIGKILL');
        }
      });
      child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(acked) : reject(new Error(`child exited ${code}: ${stderr}`))));
    });
    assert.ok(lastAcked >= 25);
    const store = await openDuckDbStore(dir);
    try {
      const values = (await readAll(store.range(KILL_SERIES, ALL_FROM, ALL_TO))).values;
      assert.ok(values.length >= (lastAcked + 1) * KILL_BATCH, `${values.length} values, ${lastAcked + 1} batches acknowledged`);
      assert.equal(values.length % KILL_BATCH, 0, 'a batch is all or nothing');
      values.forEach((v, i) => {
        assert.equal(v.ts, killBatchTs(0, i));
        assert.equal(v.value, v.ts / 1000);
      });
      assert.equal(values[0]!.annotation, 'batch 0 ✓');
      assertBucketsEqual(await store.buckets(KILL_SERIES, ALL_FROM, ALL_TO), naiveBuckets(values, ALL_FROM, ALL_TO), 'aggregates after recovery');
      // The recovered max ts makes a rewrite an upsert, not a second row.
      await store.append(toBatch([{ s: KILL_SERIES, ts: killBatchTs(0, 0), v: -1 }]));
      assert.deepEqual((await readAll(store.range(KILL_SERIES, killBatchTs(0, 0), killBatchTs(0, 2)))).values.map((v) => v.value), [-1, killBatchTs(0, 1) / 1000]);
    } finally {
      await store.close();
    }
  });

  it('reopens with its values, aggregates and newest timestamps', async () => {
    const model = new Model();
    let store = await openDuckDbStore(dir);
    const rows = [...ramp(1, T0, 100), ...ramp(2, T0, 50, 7 * MIN), { s: 3, ts: T0, text: 'x' }];
    await store.append(toBatch(rows));
    model.apply(rows);
    await store.close();
    store = await openDuckDbStore(dir);
    try {
      const late = [{ s: 1, ts: T0 + 99 * MIN, v: 5 }, { s: 1, ts: T0 + 10 * MIN, v: 6 }, { s: 3, ts: T0, text: 'y' }];
      await store.append(toBatch(late));
      model.apply(late);
      for (const s of [1, 2, 3]) await assertSeriesMatches(store, model, s, 'reopened');
    } finally {
      await store.close();
    }
    const duplicates = await inspect((run) => run('SELECT count(*)::INTEGER FROM (SELECT series_id, ts FROM point_values GROUP BY ALL HAVING count(*) > 1)'));
    assert.deepEqual(duplicates, [[0]]);
  });

  it('applies appends, deletes and a compaction issued all at once as if one after another, in call order', async () => {
    const model = new Model();
    const store = await openDuckDbStore(dir, { mergePartialsAfter: 20, maxGroupValues: 1 }); // one transaction per append
    const rnd = prng(99);
    const next = new Map<number, number>([1, 2, 3, 4].map((s) => [s, T0]));
    const pending: Promise<unknown>[] = [];
    try {
      for (let op = 0; op < 150; op++) {
        const s = 1 + Math.floor(rnd() * 4);
        const r = rnd();
        if (r < 0.6) {
          // Fresh rows: pure appends, pipelined across writer connections.
          const rows = ramp(s, next.get(s)! + 1 + Math.floor(rnd() * MIN), 1 + Math.floor(rnd() * 2000), 7_000, op);
          next.set(s, rows[rows.length - 1]!.ts);
          pending.push(store.append(toBatch(rows)));
          model.apply(rows);
        } else if (r < 0.9) {
          // Late rows rewriting what earlier calls wrote (the newest of it likely still in flight).
          const written = model.sorted(s);
          if (written.length === 0) continue;
          const from = Math.floor(written.length * (0.5 + rnd() / 2));
          const rows = written.slice(from, from + 1 + Math.floor(rnd() * 50)).map((v, i) => ({ s, ts: v.ts, v: -op - i / 100 }));
          pending.push(store.append(toBatch(rows)));
          model.apply(rows);
        } else if (r < 0.98) {
          const from = T0 + Math.floor(rnd() * (next.get(s)! - T0 + 1));
          const expected = model.delete(s, from, from + 20 * MIN);
          pending.push(store.delete(s, from, from + 20 * MIN).then((n) => assert.equal(n, expected, `op ${op}: delete count`)));
        } else {
          pending.push(store.compact());
        }
      }
      await Promise.all(pending);
      for (const s of [1, 2, 3, 4]) await assertSeriesMatches(store, model, s, 'after the burst');
    } finally {
      await store.close();
    }
    const duplicates = await inspect((run) => run('SELECT count(*)::INTEGER FROM (SELECT series_id, ts FROM point_values GROUP BY ALL HAVING count(*) > 1)'));
    assert.deepEqual(duplicates, [[0]]);
  });

  it('refuses to open a file this process already has open', async () => {
    const store = await openDuckDbStore(dir);
    try {
      await assert.rejects(openDuckDbStore(dir), /already open/);
    } finally {
      await store.close();
    }
    await (await openDuckDbStore(dir)).close();
  });

  it('rejects infinite values and non-integer timestamps, writing nothing of the batch', async () => {
    const store = await openDuckDbStore(dir);
    try {
      await assert.rejects(store.append(toBatch([{ s: 1, ts: T0, v: 1 }, { s: 1, ts: T0 + 1, v: Infinity }])), RangeError);
      await assert.rejects(store.append(toBatch([{ s: 1, ts: T0 + 0.5, v: 1 }])), RangeError);
      await assert.rejects(store.append(toBatch([{ s: 1, ts: NaN, v: 1 }])), RangeError);
      await assert.rejects(store.append(toBatch([{ s: 1, ts: 9e15, v: 1 }])), RangeError);
      assert.deepEqual(await store.latest(1, 10), []);
    } finally {
      await store.close();
    }
  });

  it('buckets timestamps before 1970 by floor, like every other hour', async () => {
    const model = new Model();
    const store = await openDuckDbStore(dir);
    try {
      const rows = ramp(1, -3 * H + 17, 400, 97_000, -50);
      await store.append(toBatch(rows));
      model.apply(rows);
      const late = [{ s: 1, ts: -H - 1, v: 9 }, { s: 1, ts: -H, v: 8 }, { s: 1, ts: -1, v: 7 }];
      await store.append(toBatch(late));
      model.apply(late);
      await assertSeriesMatches(store, model, 1);
      assert.equal(await store.delete(1, -2 * H + 5, 10), model.delete(1, -2 * H + 5, 10));
      await assertSeriesMatches(store, model, 1, 'after delete');
    } finally {
      await store.close();
    }
  });

  it('merges the partial aggregate rows that small appends leave in the current hour', async () => {
    const model = new Model();
    const store = await openDuckDbStore(dir, { mergePartialsAfter: 50 });
    try {
      // Live data: three series, one value each per append, every 20 s for two hours.
      for (let i = 0; i < 360; i++) {
        const rows = [1, 2, 3].map((s) => ({ s, ts: T0 + i * 20_000 + s, v: Math.round(Math.sin(i / 9 + s) * 100) / 4 }));
        await store.append(toBatch(rows));
        model.apply(rows);
      }
      for (const s of [1, 2, 3]) assertBucketsEqual(await store.buckets(s, ALL_FROM, ALL_TO), model.buckets(s, ALL_FROM, ALL_TO), `series ${s}`);
    } finally {
      await store.close();
    }
    const [[rows]] = (await inspect((run) => run('SELECT count(*)::INTEGER FROM point_buckets'))) as [[number]];
    assert.equal(rows, 3 * 2, 'one row per (series, hour) once merged');
  });

  it('compacts while appends keep coming, losing none, and leaves the rows sorted and unique', async () => {
    const model = new Model();
    const store = await openDuckDbStore(dir);
    try {
      // Series written in alternating order, with late rows, so the table is far from sorted.
      for (let round = 0; round < 6; round++) {
        for (const s of [3, 1, 2]) {
          const rows = ramp(s, T0 + round * 500 * MIN, 500, MIN, round);
          await store.append(toBatch(rows));
          model.apply(rows);
        }
      }
      const pending: Promise<void>[] = [];
      for (let i = 0; i < 20; i++) {
        const rows = [...ramp(1, T0 + 3000 * MIN + i * 100 * MIN, 100, MIN, 7), { s: 2, ts: T0 + i * MIN, v: -i }];
        pending.push(store.append(toBatch(rows)));
        model.apply(rows);
        if (i === 5) pending.push(store.compact());
      }
      await Promise.all(pending);
      await store.compact();
      for (const s of [1, 2, 3]) await assertSeriesMatches(store, model, s, 'after compaction');
      await store.compact(); // nothing written since: only a checkpoint
    } finally {
      await store.close();
    }
    const rows = await inspect((run) => run('SELECT series_id, ts FROM point_values'));
    const keys = rows.map(([s, t]) => [Number(s), Number(t)] as const);
    for (let i = 1; i < keys.length; i++) {
      const [s0, t0] = keys[i - 1]!;
      const [s1, t1] = keys[i]!;
      assert.ok(s0 < s1 || (s0 === s1 && t0 < t1), `row ${i} out of (series, ts) order`);
    }
    const partials = await inspect((run) => run('SELECT count(*)::INTEGER FROM (SELECT series_id, bucket FROM point_buckets GROUP BY ALL HAVING count(*) > 1)'));
    assert.deepEqual(partials, [[0]], 'one aggregate row per (series, bucket) after compaction');
  });
});
