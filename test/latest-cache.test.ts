// The latest-value cache (src/values/live/latest-cache.ts) over the real DuckDB store: what it serves
// from memory, what it sends to the store, and what it holds after values are written.
import assert from 'node:assert/strict';
import { CACHE_DEPTH, LatestValueCache } from '../src/values/live/latest-cache.js';
import type { StoredValue } from '../src/store/values/types.js';
import { batchOf, numeric, openTempDuckDb, seriesBatch, SpyStore, type TempStore } from './helpers/duckdb-temp.js';

const tsOf = (values: readonly StoredValue[]) => values.map((v) => v.ts);
/** ts = from, from + 1, ..., newest first. */
const descending = (from: number, toInclusive: number) => Array.from({ length: toInclusive - from + 1 }, (_, i) => toInclusive - i);

describe('latest-value cache (DuckDB store)', function () {
  this.timeout(60_000);
  let temp: TempStore;
  let spy: SpyStore;
  let cache: LatestValueCache;
  let series = 0;

  before(async () => {
    temp = await openTempDuckDb();
  });
  after(() => temp.dispose());
  beforeEach(() => {
    spy = new SpyStore(temp.store);
    cache = new LatestValueCache(spy, 100);
    series++;
  });

  /** Appends to the store, then tells the cache, as the pipeline does. */
  async function written(values: StoredValue[]): Promise<void> {
    const sorted = [...values].sort((a, b) => a.ts - b.ts);
    await spy.inner.append(batchOf(sorted.map((v) => ({ series, ts: v.ts, value: v.value ?? NaN, text: v.text, annotation: v.annotation }))));
    cache.applyWritten(series, sorted);
  }

  it('fills on a miss and then answers from memory, newest first', async () => {
    await temp.store.append(seriesBatch(series, 1, 5));
    const first = await cache.latest(series, 3);
    assert.deepEqual(tsOf(first), [5, 4, 3]);
    assert.equal(spy.latestCalls, 1);
    assert.deepEqual(first[0], numeric(5, 5));
    assert.deepEqual(tsOf(await cache.latest(series, 1)), [5]);
    assert.deepEqual(tsOf(await cache.latest(series, 5)), [5, 4, 3, 2, 1]);
    assert.equal((await cache.newest(series))?.ts, 5);
    assert.equal(spy.latestCalls, 1, 'later reads came from the cache');
  });

  it('knows a short series is complete: a limit beyond its length does not go to the store', async () => {
    await temp.store.append(seriesBatch(series, 1, 3));
    assert.deepEqual(tsOf(await cache.latest(series, 10_000)), [3, 2, 1]);
    assert.deepEqual(tsOf(await cache.latest(series, 50)), [3, 2, 1]);
    assert.equal(spy.latestCalls, 1);
  });

  it('caches an empty series as empty', async () => {
    assert.deepEqual(await cache.latest(series, 5), []);
    assert.equal(await cache.newest(series), undefined);
    assert.equal(spy.latestCalls, 1);
  });

  it('sends a limit deeper than the cache depth to the store, and serves up to the depth from memory', async () => {
    const n = CACHE_DEPTH * 3;
    await temp.store.append(seriesBatch(series, 1, n));
    assert.deepEqual(tsOf(await cache.latest(series, CACHE_DEPTH)), descending(n - CACHE_DEPTH + 1, n));
    assert.equal(spy.latestCalls, 1);
    assert.deepEqual(tsOf(await cache.latest(series, CACHE_DEPTH + 1)), descending(n - CACHE_DEPTH, n));
    assert.equal(spy.latestCalls, 2, 'deeper than the cache: the store');
    assert.deepEqual(tsOf(await cache.latest(series, n + 10)), descending(1, n));
    assert.equal(spy.latestCalls, 3);
    assert.deepEqual(tsOf(await cache.latest(series, 2)), [n, n - 1]);
    assert.equal(spy.latestCalls, 3);
  });

  it('applyWritten keeps the values newer than the head, newest first', async () => {
    await temp.store.append(seriesBatch(series, 10, 5, 10)); // 10..50
    await cache.latest(series, 1);
    await written([numeric(60, 6), numeric(70, 7, 'note')]);
    assert.deepEqual(await cache.latest(series, 2), [numeric(70, 7, 'note'), numeric(60, 6)]);
    assert.deepEqual(tsOf(await cache.latest(series, 10)), [70, 60, 50, 40, 30, 20, 10]);
    assert.deepEqual((await cache.latest(series, 1))[0], numeric(70, 7, 'note'));
    assert.equal(spy.latestCalls, 1, 'live values went into the cache, no reload');
  });

  it('applyWritten on a series the cache does not hold caches nothing', async () => {
    await temp.store.append(seriesBatch(series, 1, 3));
    await written([numeric(4, 4)]);
    assert.equal(spy.latestCalls, 0);
    assert.deepEqual(tsOf(await cache.latest(series, 5)), [4, 3, 2, 1]);
  });

  it('applyWritten on an empty cached series keeps every written value', async () => {
    assert.deepEqual(await cache.latest(series, 1), []);
    await written([numeric(1, 1), numeric(2, 2)]);
    assert.deepEqual(tsOf(await cache.latest(series, 5)), [2, 1]);
    assert.equal(spy.latestCalls, 1);
  });

  it('keeps at most the cache depth after many live values, and stays correct past it', async () => {
    await cache.latest(series, 1);
    const many = Array.from({ length: CACHE_DEPTH * 2 }, (_, i) => numeric(i + 1, i + 1));
    await written(many);
    const calls = spy.latestCalls;
    assert.deepEqual(tsOf(await cache.latest(series, CACHE_DEPTH)), descending(CACHE_DEPTH + 1, CACHE_DEPTH * 2));
    assert.equal(spy.latestCalls, calls);
    assert.deepEqual(tsOf(await cache.latest(series, CACHE_DEPTH + 2)), descending(CACHE_DEPTH - 1, CACHE_DEPTH * 2));
    assert.equal(spy.latestCalls, calls + 1, 'no longer complete: deeper reads go to the store');
  });

  it('a late value inside the cached window invalidates: the next read reloads and shows it', async () => {
    await temp.store.append(seriesBatch(series, 10, 5, 10)); // 10..50
    await cache.latest(series, 1);
    await written([numeric(35, 3.5)]);
    const values = await cache.latest(series, 10);
    assert.equal(spy.latestCalls, 2, 'reloaded');
    assert.deepEqual(tsOf(values), [50, 40, 35, 30, 20, 10]);
  });

  it('a late value together with newer ones: the cache is right afterwards', async () => {
    await temp.store.append(seriesBatch(series, 10, 5, 10)); // 10..50
    await cache.latest(series, 1);
    await written([numeric(35, 3.5), numeric(60, 6), numeric(70, 7)]);
    assert.deepEqual(tsOf(await cache.latest(series, 10)), [70, 60, 50, 40, 35, 30, 20, 10]);
  });

  it('a late value older than the window of a full cache changes nothing', async () => {
    const n = CACHE_DEPTH + 10;
    await temp.store.append(seriesBatch(series, 100, n, 100)); // 100 .. 100n
    const before = await cache.latest(series, CACHE_DEPTH);
    assert.equal(spy.latestCalls, 1);
    await written([numeric(150, 1.5)]);
    assert.deepEqual(await cache.latest(series, CACHE_DEPTH), before);
    assert.equal(spy.latestCalls, 1, 'no reload');
    // Deeper reads go to the store, which has the late value.
    const deep = await cache.latest(series, n + 1);
    assert.equal(deep.length, n + 1);
    assert.deepEqual(deep.at(-2), numeric(150, 1.5));
  });

  it('a late value older than everything of a complete (short) cache invalidates, so it shows up', async () => {
    await temp.store.append(seriesBatch(series, 10, 3, 10)); // 10..30
    await cache.latest(series, 1);
    await written([numeric(5, 0.5)]);
    assert.deepEqual(tsOf(await cache.latest(series, 10)), [30, 20, 10, 5]);
    assert.equal(spy.latestCalls, 2);
  });

  it('an upsert of the head replaces the head on the next read', async () => {
    await temp.store.append(seriesBatch(series, 10, 3, 10)); // 10..30
    assert.deepEqual((await cache.latest(series, 1))[0], numeric(30, 3));
    await written([numeric(30, 99, 'corrected')]);
    assert.deepEqual(await cache.latest(series, 2), [numeric(30, 99, 'corrected'), numeric(20, 2)]);
    assert.equal((await cache.newest(series))?.value, 99);
  });

  it('invalidate() makes the next read go to the store', async () => {
    await temp.store.append(seriesBatch(series, 1, 3));
    await cache.latest(series, 1);
    // Written behind the cache's back (as a delete does), then invalidated.
    await temp.store.delete(series, 3, 4);
    cache.invalidate(series);
    assert.deepEqual(tsOf(await cache.latest(series, 5)), [2, 1]);
    assert.equal(spy.latestCalls, 2);
    cache.invalidate(series + 1_000); // unknown series: harmless
  });

  it('does not cache a read a write overtook: readers after the write read again', async () => {
    await temp.store.append(seriesBatch(series, 1, 3));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atHook = new Promise<void>((resolve) => (reached = resolve));
    spy.afterLatest = () => {
      reached();
      return held;
    };
    const reading = cache.latest(series, 1); // has read [3] from the store, held before it is cached
    await atHook;
    spy.afterLatest = undefined;
    const joined = cache.latest(series, 1); // joins the read under way
    await written([numeric(4, 4)]); // a write ends meanwhile
    const after = cache.latest(series, 1); // began after the write: reads again
    release();
    assert.deepEqual(tsOf(await reading), [3], 'concurrent with the write: the value before it');
    assert.deepEqual(tsOf(await joined), [3]);
    assert.deepEqual(tsOf(await after), [4]);
    assert.deepEqual(tsOf(await cache.latest(series, 1)), [4], 'the read the write overtook was not cached');
    assert.equal(spy.latestCalls, 2);
  });

  it('keeps ALPHANUMERIC text and annotations', async () => {
    await cache.latest(series, 1);
    const v: StoredValue = { ts: 5, value: null, text: 'on, "quoted"', annotation: 'by hand' };
    await written([v]);
    assert.deepEqual(await cache.latest(series, 1), [v], 'from memory');
    cache.invalidate(series);
    assert.deepEqual(await cache.latest(series, 1), [v]);
  });

  it('evicts the least recently used series beyond its point capacity', async () => {
    const small = new LatestValueCache(spy, 2);
    const base = series * 1000;
    for (const s of [base + 1, base + 2, base + 3]) await temp.store.append(seriesBatch(s, 1, 1));
    await small.latest(base + 1, 1);
    await small.latest(base + 2, 1);
    await small.latest(base + 3, 1); // evicts base + 1
    const calls = spy.latestCalls;
    await small.latest(base + 3, 1);
    await small.latest(base + 2, 1);
    assert.equal(spy.latestCalls, calls);
    await small.latest(base + 1, 1);
    assert.equal(spy.latestCalls, calls + 1);
  });
});
