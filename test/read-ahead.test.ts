import assert from 'node:assert/strict';
import { readAhead } from '../src/core/read-ahead.js';

describe('readAhead', () => {
  it('asks for the next item while the current one is used, one ahead at most, all in order', async () => {
    const asked: number[] = [];
    async function* source() {
      for (let i = 0; i < 4; i++) {
        asked.push(i);
        yield i;
      }
    }
    const seen: number[] = [];
    for await (const item of readAhead(source())) {
      await new Promise((r) => setImmediate(r)); // the consumer works; the source runs meanwhile
      seen.push(item);
      assert.ok(asked.length <= item + 2, `asked ${asked.length} while using item ${item}`);
      if (item < 3) assert.equal(asked.length, item + 2, 'the next item was asked for');
    }
    assert.deepEqual(seen, [0, 1, 2, 3]);
  });

  it('ends the source when the consumer stops early, and a failure of the read ahead is not left unhandled', async () => {
    let ended = false;
    async function* source() {
      try {
        yield 1;
        throw new Error('the read ahead failed');
      } finally {
        ended = true;
      }
    }
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      for await (const item of readAhead(source())) {
        assert.equal(item, 1);
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    assert.equal(ended, true);
    assert.deepEqual(unhandled, []);
  });

  it('passes a failure of the source to the consumer', async () => {
    async function* source() {
      yield 1;
      throw new Error('store gone');
    }
    const seen: number[] = [];
    await assert.rejects(async () => {
      for await (const item of readAhead(source())) seen.push(item);
    }, /store gone/);
    assert.deepEqual(seen, [1]);
  });
});
