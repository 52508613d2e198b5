// The hourly-aggregate cache in front of a store: hits read nothing, live data reads only the new
// tail, writes and deletes are seen at once, a read racing a write never leaves stale buckets behind,
// and the bound holds. The contract and rollup suites also run through it ("duckdb+cache").
import assert from 'node:assert/strict';
import { withBucketCache } from '../src/store/values/bucket-cache.js';
import { BUCKET_MS, type BucketAggregate, type PointValueStore } from '../src/store/values/types.js';
import { batchOf, seriesBatch } from './helpers/duckdb-temp.js';
import { MemoryValueStore } from './helpers/memory-store.js';

const H = BUCKET_MS;
const MIN = 60_000;

/** A memory store that records bucket reads and can hold one until released. */
class RecordingStore extends MemoryValueStore {
  readonly bucketReads: [number, number, number][] = [];
  private gate: Promise<void> | undefined;
  private release: (() => void) | undefined;

  holdNextBucketRead(): () => void {
    this.gate = new Promise((resolve) => (this.release = resolve));
    return () => this.release?.();
  }

  override async buckets(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    this.bucketReads.push([series, from, to]);
    const rows = await super.buckets(series, from, to);
    const gate = this.gate;
    this.gate = undefined;
    if (gate) await gate;
    return rows;
  }
}

function cached(maxBuckets?: number) {
  const inner = new RecordingStore();
  const store = withBucketCache(inner as unknown as PointValueStore, { maxBuckets });
  return { inner, store };
}

describe('bucket cache', () => {
  it('answers a repeated read, and any read inside it, without asking the store', async () => {
    const { inner, store } = cached();
    await store.append(seriesBatch(1, 0, 48 * 60, MIN));
    const day2 = await store.buckets(1, 0, 48 * H);
    assert.equal(day2.length, 48);
    assert.equal(inner.bucketReads.length, 1);
    assert.deepEqual(await store.buckets(1, 0, 48 * H), day2);
    assert.deepEqual(await store.buckets(1, 5 * H + 1, 20 * H), await inner.buckets(1, 5 * H + 1, 20 * H));
    assert.equal(inner.bucketReads.length, 2, 'only the direct comparison read reached the store');
    assert.equal(store.size, 48);
  });

  it('reads only the new hours when live data extends a cached series', async () => {
    const { inner, store } = cached();
    await store.append(seriesBatch(1, 0, 10 * 60, MIN));
    await store.buckets(1, 0, 24 * H);
    await store.append(seriesBatch(1, 10 * H + 30 * MIN, 120, MIN)); // 10:30 to 12:29
    inner.bucketReads.length = 0;
    const rows = await store.buckets(1, 0, 24 * H);
    assert.deepEqual(rows, await inner.buckets(1, 0, 24 * H));
    assert.equal(rows.length, 13);
    assert.deepEqual(inner.bucketReads[0], [1, 10 * H, 24 * H], 'the append cut the window at its first hour; only that tail is read');
    inner.bucketReads.length = 0;
    await store.buckets(1, 0, 30 * H);
    assert.deepEqual(inner.bucketReads, [[1, 24 * H, 30 * H]]);
  });

  it('sees late writes and deletes inside the cached window at once', async () => {
    const { inner, store } = cached();
    await store.append(seriesBatch(1, 0, 24 * 60, MIN));
    await store.buckets(1, 0, 24 * H);
    await store.append(batchOf([{ series: 1, ts: 3 * H + 5 * MIN, value: 1e6 }]));
    const afterLate = await store.buckets(1, 0, 24 * H);
    assert.deepEqual(afterLate, await inner.buckets(1, 0, 24 * H));
    assert.equal(afterLate[3]!.max, 1e6);
    await store.delete(1, 6 * H, 8 * H);
    const afterDelete = await store.buckets(1, 0, 24 * H);
    assert.deepEqual(afterDelete, await inner.buckets(1, 0, 24 * H));
    assert.equal(afterDelete.length, 22);
  });

  it('keeps series apart: a write to one leaves the other cached', async () => {
    const { inner, store } = cached();
    await store.append(batchOf([...[1, 2].flatMap((series) => [0, 1, 2].map((h) => ({ series, ts: h * H, value: h })))]));
    await store.buckets(1, 0, 3 * H);
    await store.buckets(2, 0, 3 * H);
    await store.append(batchOf([{ series: 2, ts: 0, value: 9 }]));
    inner.bucketReads.length = 0;
    await store.buckets(1, 0, 3 * H);
    assert.equal(inner.bucketReads.length, 0);
    assert.equal((await store.buckets(2, 0, 3 * H))[0]!.firstValue, 9);
    assert.equal(inner.bucketReads.length, 1);
  });

  it('does not keep what a read saw when a write landed while it ran', async () => {
    const { inner, store } = cached();
    await store.append(seriesBatch(1, 0, 4 * 60, MIN));
    const release = inner.holdNextBucketRead();
    const racing = store.buckets(1, 0, 4 * H);
    await store.append(batchOf([{ series: 1, ts: 2 * H, value: -5 }]));
    release();
    await racing;
    const now = await store.buckets(1, 0, 4 * H);
    assert.equal(now[2]!.firstValue, -5, 'the racing read was not cached');
    assert.deepEqual(now, await inner.buckets(1, 0, 4 * H));
  });

  it('does not extend a window with a tail read that raced a write', async () => {
    const { inner, store } = cached();
    await store.append(seriesBatch(1, 0, 4 * 60, MIN));
    await store.buckets(1, 0, 4 * H);
    await store.append(seriesBatch(1, 4 * H, 60, MIN));
    const release = inner.holdNextBucketRead();
    const racing = store.buckets(1, 0, 8 * H);
    await store.append(batchOf([{ series: 1, ts: 4 * H + 10 * MIN, value: 1e9 }]));
    release();
    await racing;
    assert.deepEqual(await store.buckets(1, 0, 8 * H), await inner.buckets(1, 0, 8 * H));
  });

  it('holds at most maxBuckets, dropping the least recently used series first', async () => {
    const { inner, store } = cached(30);
    await store.append(batchOf([1, 2, 3].flatMap((series) => Array.from({ length: 12 }, (_, h) => ({ series, ts: h * H, value: h })))));
    await store.buckets(1, 0, 12 * H);
    await store.buckets(2, 0, 12 * H);
    await store.buckets(1, 0, 12 * H); // 1 is now the most recent
    await store.buckets(3, 0, 12 * H);
    assert.ok(store.size <= 30, `size ${store.size}`);
    inner.bucketReads.length = 0;
    await store.buckets(1, 0, 12 * H);
    assert.equal(inner.bucketReads.length, 0, 'series 1 stayed cached');
    await store.buckets(2, 0, 12 * H);
    assert.equal(inner.bucketReads.length, 1, 'series 2 was evicted');
  });

  it('never expires a window by time: a repeat read long after stays from memory', async () => {
    const { inner, store } = cached();
    await store.append(seriesBatch(1, 0, 120, MIN));
    await store.buckets(1, 0, 2 * H);
    await new Promise((r) => setTimeout(r, 60));
    await store.buckets(1, 0, 2 * H);
    assert.equal(inner.bucketReads.length, 1);
  });
});
