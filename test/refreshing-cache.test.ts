// The refreshing cache (src/core/refreshing-cache.ts): old entries are answered while refreshed, and the
// refreshes that fall due together are loaded in one loadMany.
import assert from 'node:assert/strict';
import { RefreshingCache } from '../src/core/refreshing-cache.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('refreshing cache', () => {
  it('loads a missing key on its own, and refreshes the old keys read together with one loadMany', async () => {
    const version = new Map([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
    const loads: string[] = [];
    const batches: string[][] = [];
    const cache = new RefreshingCache<string, { v: number }>(
      async (key) => {
        loads.push(key);
        const v = version.get(key);
        return v === undefined ? undefined : { v };
      },
      {
        max: 100,
        refreshAfterMs: 20,
        loadMany: async (keys) => {
          batches.push([...keys]);
          return new Map(keys.filter((k) => version.has(k)).map((k) => [k, { v: version.get(k)! }]));
        },
      },
    );
    for (const key of ['a', 'b', 'c']) assert.deepEqual(await cache.get(key), { v: 1 });
    assert.deepEqual(loads, ['a', 'b', 'c']);

    await sleep(30);
    version.set('a', 2);
    // Old entries answer at once, as they were; their refreshes go out together.
    for (const key of ['a', 'b', 'c']) assert.deepEqual(await cache.get(key), { v: 1 });
    await sleep(5);
    assert.deepEqual(batches, [['a', 'b', 'c']]);
    assert.deepEqual(loads, ['a', 'b', 'c']);
    assert.deepEqual(await cache.get('a'), { v: 2 });
    assert.deepEqual(await cache.get('c'), { v: 1 });
  });

  it('keeps the old entry when the refresh fails', async () => {
    let fail = false;
    const cache = new RefreshingCache<string, { v: number }>(async () => ({ v: 1 }), {
      max: 10,
      refreshAfterMs: 10,
      loadMany: async () => {
        if (fail) throw new Error('store down');
        return new Map();
      },
    });
    assert.deepEqual(await cache.get('a'), { v: 1 });
    await sleep(20);
    fail = true;
    assert.deepEqual(await cache.get('a'), { v: 1 });
    await sleep(5);
    assert.deepEqual(await cache.get('a'), { v: 1 });
  });
});
