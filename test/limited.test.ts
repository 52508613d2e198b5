// forEachLimited (core/limited.ts): every item, never more than the limit at once, the first failure.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachLimited } from '../src/core/limited.js';

describe('forEachLimited', () => {
  it('runs every item, at most `limit` at a time', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await forEachLimited(Array.from({ length: 50 }, (_, i) => i), 4, async (i) => {
      running++;
      most = Math.max(most, running);
      await sleep(i % 3);
      seen.push(i);
      running--;
    });
    assert.equal(most, 4);
    assert.deepEqual([...seen].sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i));
  });

  it('rejects with the first failure once the started items settled, and starts no more', async () => {
    const started: number[] = [];
    let settled = 0;
    await assert.rejects(
      forEachLimited(Array.from({ length: 100 }, (_, i) => i), 3, async (i) => {
        started.push(i);
        await sleep(2);
        settled++;
        if (i === 4) throw new Error('item 4');
      }),
      /item 4/,
    );
    assert.equal(settled, started.length, 'nothing left running');
    assert.ok(started.length < 20, `${started.length} started`);
  });
});
