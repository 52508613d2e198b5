import assert from 'node:assert/strict';
import { FifoLock, KeyedFifoLock } from '../src/core/fifo-lock.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('FifoLock', () => {
  it('runs tasks one at a time, in call order, whatever each outcome', async () => {
    const lock = new FifoLock();
    const log: string[] = [];
    let running = 0;
    const task = (name: string, fail = false) => async () => {
      running++;
      assert.equal(running, 1, `${name} ran beside another task`);
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      running--;
      if (fail) throw new Error(name);
      return name;
    };
    const a = lock.run(task('a'));
    const b = lock.run(task('b', true));
    const c = lock.run(task('c'));
    assert.equal(lock.pending, 3);
    assert.equal(await a, 'a');
    await assert.rejects(b, /b/);
    assert.equal(await c, 'c');
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    await lock.idle();
    assert.equal(lock.pending, 0);
  });

  it('takes a task that throws synchronously as a rejection of its own', async () => {
    const lock = new FifoLock();
    const bad = lock.run(() => {
      throw new Error('sync');
    });
    await assert.rejects(bad, /sync/);
    assert.equal(await lock.run(() => 7), 7);
  });

  it('keeps a lock per key, runs keys side by side and drops a key once idle', async () => {
    const locks = new KeyedFifoLock<number>();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = locks.run(1, async () => {
      await gate;
      log.push('1a');
    });
    const second = locks.run(1, () => {
      log.push('1b');
    });
    await locks.run(2, () => {
      log.push('2a');
    });
    assert.deepEqual(log, ['2a'], 'key 2 waited for key 1');
    await tick(); // key 2 is dropped once its last task has settled
    assert.ok(locks.has(1));
    assert.deepEqual([...locks.keys()], [1]);
    const oneIdle = locks.idle(1).then(() => log.push('1 idle'));
    release();
    await Promise.all([first, second]);
    await oneIdle;
    assert.deepEqual(log, ['2a', '1a', '1b', '1 idle']);
    await locks.idle();
    await tick();
    assert.equal(locks.size, 0);
  });
});
