// Hourly aggregates as columns (store/values/bucket-columns.ts) and the rollup engine's fold over
// them (NumericAccumulator.buckets): the merge rounds exactly as BucketMerger does, a view lent out
// never changes when the columns it came from are cut and extended (in the bucket cache too), and the
// fused fold gives bit for bit what the walk of one bucket at a time gave (the reference below is
// the engine's code before the fold was fused, kept here to compare with).
import assert from 'node:assert/strict';
import { BucketMerger } from '../src/store/values/aggregates.js';
import { SeriesBuckets } from '../src/store/values/bucket-columns.js';
import { withBucketCache } from '../src/store/values/bucket-cache.js';
import { BUCKET_MS, type BucketAggregate, type PointValueStore, type StoredValue } from '../src/store/values/types.js';
import { NumericAccumulator, type InForce } from '../src/values/read/accumulators.js';
import { PeriodWalker } from '../src/values/read/period-walker.js';
import { RollupResult } from '../src/values/read/rollup-result.js';
import { seriesBatch } from './helpers/duckdb-temp.js';
import { MemoryValueStore } from './helpers/memory-store.js';
import { prng } from './helpers/prng.js';

const H = BUCKET_MS;
const MIN = 60_000;

function row(start: number, random: () => number): BucketAggregate {
  const firstTs = random() < 0.3 ? start : start + Math.floor(random() * 30) * MIN;
  const lastTs = firstTs + Math.floor(random() * 29) * MIN;
  const a = random() * 100 - 50;
  const b = random() * 100 - 50;
  return {
    start,
    count: 1 + Math.floor(random() * 60),
    sum: random() * 1e4 - 5e3,
    min: Math.min(a, b),
    max: Math.max(a, b),
    firstTs,
    firstValue: random() * 10,
    lastTs,
    lastValue: random() * 10 - 5,
    innerIntegral: (random() - 0.5) * 1e7,
  };
}

/** The numeric walk over whole buckets one at a time, as the engine had it before the fused fold. */
class ReferenceAccumulator extends PeriodWalker {
  private current = 0;
  private first = 0;
  private last = 0;
  private startValue = 0;
  private sum = 0;
  private minimum = 0;
  private maximum = 0;
  private integralMs = 0;
  private inForceMs = 0;

  constructor(result: RollupResult, endOfData: number, inForce: InForce<number> | undefined) {
    super(result, endOfData, inForce?.ts);
    if (inForce) this.current = this.startValue = inForce.value;
  }

  buckets(buckets: readonly BucketAggregate[]): void {
    for (const b of buckets) this.bucket(b);
  }

  value(ts: number, v: number): void {
    if (ts >= this.periodEnd) this.advance(ts);
    if (this.hasCurrent) this.accrue(ts);
    if (this.count === 0) {
      this.first = v;
      this.minimum = v;
      this.maximum = v;
    } else {
      if (v < this.minimum) this.minimum = v;
      if (v > this.maximum) this.maximum = v;
    }
    this.sum += v;
    this.last = v;
    this.current = v;
    if (this.took(1, ts, ts)) this.startValue = v;
  }

  private bucket(b: BucketAggregate): void {
    if (b.count === 0) return;
    if (b.start >= this.periodEnd) this.advance(b.start);
    if (this.hasCurrent) this.accrue(b.firstTs);
    if (this.count === 0) {
      this.first = b.firstValue;
      this.minimum = b.min;
      this.maximum = b.max;
    } else {
      if (b.min < this.minimum) this.minimum = b.min;
      if (b.max > this.maximum) this.maximum = b.max;
    }
    this.sum += b.sum;
    this.integralMs += b.innerIntegral;
    this.inForceMs += b.lastTs - b.firstTs;
    this.last = b.lastValue;
    this.current = b.lastValue;
    if (this.took(b.count, b.firstTs, b.lastTs)) this.startValue = b.firstValue;
  }

  private accrue(until: number): void {
    const from = this.since > this.periodStart ? this.since : this.periodStart;
    const to = until < this.inForceEnd ? until : this.inForceEnd;
    if (to > from) {
      this.integralMs += this.current * (to - from);
      this.inForceMs += to - from;
    }
  }

  protected writeOut(i: number): void {
    if (this.hasCurrent) this.accrue(this.inForceEnd);
    const r = this.result;
    const has = this.count > 0;
    let minimum = has ? this.minimum : NaN;
    let maximum = has ? this.maximum : NaN;
    if (this.hasStart) {
      minimum = has && minimum < this.startValue ? minimum : this.startValue;
      maximum = has && maximum > this.startValue ? maximum : this.startValue;
    }
    r.sum[i] = has ? this.sum : NaN;
    r.minimum[i] = minimum;
    r.maximum[i] = maximum;
    r.first[i] = has ? this.first : NaN;
    r.last[i] = has ? this.last : NaN;
    r.startValue[i] = this.hasStart ? this.startValue : NaN;
    r.integralMs[i] = this.integralMs;
    r.inForceMs[i] = this.inForceMs;
    this.sum = 0;
    this.integralMs = 0;
    this.inForceMs = 0;
    this.startValue = this.current;
  }
}

const COLUMNS = ['count', 'firstTs', 'lastTs', 'hasStart', 'sum', 'minimum', 'maximum', 'first', 'last', 'startValue', 'integralMs', 'inForceMs'] as const;

function assertSameResult(actual: RollupResult, expected: RollupResult, what: string): void {
  for (const column of COLUMNS) {
    const a = actual[column];
    const e = expected[column];
    for (let i = 0; i < expected.length; i++) {
      if (!Object.is(a[i], e[i])) assert.fail(`${what}: ${column}[${i}] is ${a[i]}, expected ${e[i]}`);
    }
  }
}

describe('SeriesBuckets', () => {
  it('merges partial rows with the arithmetic of BucketMerger, bit for bit', () => {
    const random = prng(7);
    for (let round = 0; round < 50; round++) {
      const merger = new BucketMerger();
      const columns = new SeriesBuckets();
      let start = 0;
      for (let k = 0; k < 200; k++) {
        if (random() < 0.6) start += H * (1 + Math.floor(random() * 3));
        const r = row(start, random);
        merger.add(r.start, r.count, r.sum, r.min, r.max, r.firstTs, r.firstValue, r.lastTs, r.lastValue, r.innerIntegral);
        columns.merge(r.start, r.count, r.sum, r.min, r.max, r.firstTs, r.firstValue, r.lastTs, r.lastValue, r.innerIntegral);
      }
      assert.deepEqual(columns.toAggregates(), merger.out);
    }
  });

  it('round-trips rows, finds bucket starts, and views only the rows asked for', () => {
    const random = prng(11);
    const rows = Array.from({ length: 40 }, (_, i) => row(i * 2 * H, random));
    const columns = SeriesBuckets.from(rows);
    assert.deepEqual(columns.toAggregates(), rows);
    assert.equal(columns.firstAtOrAfter(0), 0);
    assert.equal(columns.firstAtOrAfter(H), 1);
    assert.equal(columns.firstAtOrAfter(2 * H), 1);
    assert.equal(columns.firstAtOrAfter(1000 * H), 40);
    assert.deepEqual(columns.view(5, 9).toAggregates(), rows.slice(5, 9));
    assert.deepEqual(columns.view(5, 9).view(1).toAggregates(), rows.slice(6, 9));
  });

  it('never changes a view it lent out: cut, then pushed and merged into, the columns copy first', () => {
    const random = prng(13);
    const rows = Array.from({ length: 10 }, (_, i) => row(i * H, random));
    const columns = SeriesBuckets.from(rows);
    const lent = columns.view(2, 10);
    columns.truncate(4);
    columns.push(...(Object.values(row(4 * H, random)) as Parameters<SeriesBuckets['push']>));
    const late = row(4 * H, random);
    columns.merge(late.start, late.count, late.sum, late.min, late.max, late.lastTs + MIN, late.firstValue, late.lastTs + 2 * MIN, late.lastValue, late.innerIntegral);
    assert.deepEqual(lent.toAggregates(), rows.slice(2, 10));
    assert.equal(columns.length, 5);
    assert.deepEqual(columns.view(0, 4).toAggregates(), rows.slice(0, 4));
    // A view's own pushes leave the memory it shares alone too.
    const again = columns.view(0, 2);
    again.push(...(Object.values(row(9 * H, random)) as Parameters<SeriesBuckets['push']>));
    assert.deepEqual(columns.view(0, 4).toAggregates(), rows.slice(0, 4));
  });
});

describe('bucket cache columns', () => {
  it('answers bucketColumns() as buckets() does, and a view held across a write and a re-read stays as it was', async () => {
    const inner = new MemoryValueStore();
    const store = withBucketCache(inner as unknown as PointValueStore);
    await store.append(seriesBatch(1, 0, 48 * 60, MIN));
    const held = await store.bucketColumns(1, 0, 48 * H);
    const before = held.toAggregates();
    assert.equal(before.length, 48);
    assert.deepEqual(before, await store.buckets(1, 0, 48 * H));
    assert.deepEqual((await store.bucketColumns(1, 5 * H + 1, 20 * H)).toAggregates(), before.slice(6, 20));
    // A late write at hour 30 cuts the window there; the next read extends it again from the store.
    await store.append(seriesBatch(1, 30 * H + 30 * MIN, 60, 1000));
    const after = await store.bucketColumns(1, 0, 60 * H);
    assert.deepEqual(held.toAggregates(), before, 'the view lent before the write is unchanged');
    assert.notDeepEqual(after.at(30), before[30]);
    assert.deepEqual(after.toAggregates(), await inner.buckets(1, 0, 60 * H));
  });
});

describe('NumericAccumulator.buckets (the fused fold)', () => {
  it('gives bit for bit what the walk of one bucket at a time gives, values after the buckets included', () => {
    const random = prng(42);
    for (let round = 0; round < 400; round++) {
      const from = (1000 + Math.floor(random() * 100)) * H;
      // Periods of 1 to 4 whole hours (buckets lie inside one), then raw values after the buckets.
      const starts: number[] = [from];
      const periods = 1 + Math.floor(random() * 40);
      for (let i = 0; i < periods; i++) starts.push(starts[starts.length - 1]! + H * (1 + Math.floor(random() * 4)));
      const bounds = Float64Array.from(starts);
      const to = bounds[bounds.length - 1]!;
      const bucketEnd = from + Math.floor(((to - from) / H) * random()) * H;
      const endOfData = random() < 0.5 ? to : bucketEnd + Math.floor(random() * (to - bucketEnd + 1));
      const rows: BucketAggregate[] = [];
      for (let start = from; start < bucketEnd && start + H <= endOfData; start += H) {
        if (random() < 0.25) continue; // an empty hour
        const r = row(start, random);
        if (random() < 0.05) r.count = 0;
        rows.push(r);
      }
      const values: StoredValue[] = [];
      const rawFrom = rows.length > 0 ? rows[rows.length - 1]!.start + H : from;
      for (let ts = rawFrom + Math.floor(random() * 20) * MIN; ts < to; ts += (1 + Math.floor(random() * 90)) * MIN) {
        values.push({ ts, value: random() < 0.05 ? null : random() * 20 - 10, text: null, annotation: null });
      }
      const inForce = random() < 0.7 ? { ts: from - Math.floor(random() * 5 * H), value: random() * 10 } : undefined;

      const expected = new RollupResult(bounds, true);
      const reference = new ReferenceAccumulator(expected, endOfData, inForce);
      reference.buckets(rows);
      for (const v of values) if (v.value !== null) reference.value(v.ts, v.value);
      reference.finish();

      const actual = new RollupResult(bounds, true);
      const fused = new NumericAccumulator(actual, endOfData, inForce);
      fused.buckets(SeriesBuckets.from(rows).view());
      fused.values(values, rawFrom, to);
      fused.finish();
      assertSameResult(actual, expected, `round ${round}`);
    }
  });
});
