// The value store's one write queue (src/store/values/write-queue.ts) on its own, without a store:
// groups, groups in flight answered in order, exclusive tasks ordered against writes in call order,
// backpressure, the time-out and close().
import assert from 'node:assert/strict';
import { DomainError } from '../src/core/errors.js';
import type { ValueBatch } from '../src/store/values/types.js';
import { WriteQueue, type WriteQueueOptions } from '../src/store/values/write-queue.js';
import { gate, seriesBatch, settle, track } from './helpers/duckdb-temp.js';
import { waitFor } from './helpers/wait.js';

/** A queue whose groups are recorded and held until released one by one (or written at once when `hold` is false). */
function recordingQueue(options: Partial<WriteQueueOptions> = {}, hold = true) {
  const events: string[] = [];
  const groups: ValueBatch[] = [];
  const gates: ReturnType<typeof gate>[] = [];
  const queue = new WriteQueue({
    name: 'test queue',
    writeGroup: async (batch) => {
      const n = groups.push(batch);
      events.push(`start ${n}`);
      if (hold) {
        const g = gate();
        gates.push(g);
        await g.opened;
      }
      events.push(`end ${n}`);
    },
    ...options,
  });
  /** Ends the n-th group (1-based). */
  const end = (n: number) => gates[n - 1]!.open();
  return { queue, events, groups, end };
}

const batch = (n: number, from = 0) => seriesBatch(1, from, n);
const isUnavailable = (err: unknown) => err instanceof DomainError && err.kind === 'unavailable';

describe('write queue', function () {
  this.timeout(10_000);
  it('groups the writes queued while a group is under way, whole writes up to maxGroupValues', async () => {
    const { queue, groups, end } = recordingQueue({ maxGroupValues: 25 });
    const first = track(queue.write(batch(5)));
    await settle(1);
    const rest = [10, 10, 10, 30].map((n, i) => track(queue.write(batch(n, 100 * (i + 1)))));
    assert.equal(groups.length, 1, 'one group under way');
    end(1);
    await first.promise;
    await waitFor('the second group', () => groups.length === 2);
    assert.equal(groups[1]!.length, 20, 'two writes of 10; the third would pass 25');
    end(2);
    await waitFor('the third group', () => groups.length === 3);
    assert.equal(groups[2]!.length, 10);
    end(3);
    await waitFor('the fourth group', () => groups.length === 4);
    assert.equal(groups[3]!.length, 30, 'a larger write goes alone');
    end(4);
    await Promise.all(rest.map((w) => w.promise));
    assert.deepEqual([...groups[1]!.ts.subarray(0, 3)], [100, 101, 102], 'in call order');
  });

  it('keeps at most inFlight groups under way and answers them in order, whichever ends first', async () => {
    const written: number[] = [];
    const { queue, groups, end } = recordingQueue({ inFlight: 2, maxGroupValues: 1, onWritten: (n) => written.push(n) });
    const writes = [1, 2, 3].map((n) => track(queue.write(batch(1, n))));
    await settle(1);
    assert.equal(groups.length, 2, 'two groups under way, the third waits');
    end(2);
    await settle(5);
    assert.equal(writes[1]!.state(), 'pending', 'not answered before the group before it');
    assert.equal(groups.length, 2, 'a group ended but not answered still holds its place');
    end(1);
    await writes[0]!.promise;
    await writes[1]!.promise;
    await waitFor('the third group', () => groups.length === 3);
    end(3);
    await writes[2]!.promise;
    assert.deepEqual(written, [1, 1, 1]);
  });

  it('runs an exclusive task after every write before it and before every write after it, alone', async () => {
    const { queue, events, end } = recordingQueue({ inFlight: 2, maxGroupValues: 1 });
    const a = queue.write(batch(1, 1));
    const b = queue.write(batch(1, 2));
    const task = queue.exclusive(async () => {
      events.push('task');
      await settle(5);
      events.push('task done');
      return 42;
    });
    const c = queue.write(batch(1, 3));
    await settle(1);
    assert.deepEqual(events, ['start 1', 'start 2'], 'the task waits for the groups before it');
    end(2);
    end(1);
    assert.equal(await task, 42);
    await a;
    await b;
    await waitFor('the write after the task', () => events.includes('start 3'));
    end(3);
    await c;
    assert.deepEqual(events, ['start 1', 'start 2', 'end 2', 'end 1', 'task', 'task done', 'start 3', 'end 3']);
  });

  it('a failed task or group fails its own callers only', async () => {
    let call = 0;
    const queue = new WriteQueue({
      name: 'test queue',
      writeGroup: async () => {
        if (++call === 1) throw new Error('disk on fire');
      },
    });
    await assert.rejects(queue.write(batch(1)), /disk on fire/);
    await assert.rejects(
      queue.exclusive(() => Promise.reject(new Error('task failed'))),
      /task failed/,
    );
    await queue.write(batch(1));
    assert.equal(await queue.exclusive(async () => 'ok'), 'ok');
  });

  it('holds writers back past the capacity, in arrival order, with a task behind them kept in its place', async () => {
    const { queue, events, end } = recordingQueue({ capacity: 10 });
    const first = track(queue.write(batch(8)));
    await settle(1);
    const big = track(queue.write(batch(5, 100)));
    const small = track(queue.write(batch(2, 200)));
    const task = track(queue.exclusive(async () => void events.push('task')));
    await settle(5);
    assert.equal(queue.bufferedValues, 8);
    assert.equal(small.state(), 'pending', 'a writer never overtakes one waiting');
    assert.deepEqual(events, ['start 1']);
    end(1);
    await first.promise;
    await waitFor('the next group', () => events.includes('start 2'));
    assert.equal(queue.bufferedValues, 7, 'both waiting writers admitted once there was room');
    end(2);
    await big.promise;
    await waitFor('the small write', () => events.includes('start 3'));
    end(3);
    await small.promise;
    await task.promise;
    assert.deepEqual(events, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3', 'task']);
    assert.equal(queue.bufferedValues, 0);
  });

  it('answers 503 at the time-out: unsent values leave, the group under way keeps its room until it ends and reports its late outcome', async () => {
    const late: ValueBatch[] = [];
    const { queue, groups, end } = recordingQueue({ capacity: 100, timeoutMs: () => 50, onLateOutcome: (b) => late.push(b) });
    const sent = track(queue.write(batch(10)));
    await settle(1);
    const unsent = track(queue.write(batch(10, 100)));
    await assert.rejects(sent.promise, isUnavailable);
    await assert.rejects(unsent.promise, isUnavailable);
    assert.equal(queue.bufferedValues, 10, 'the group under way keeps its room');
    await settle(20);
    assert.equal(groups.length, 1, 'the unsent writer was never written');
    end(1);
    await waitFor('the late outcome', () => late.length === 1);
    assert.equal(queue.bufferedValues, 0);
  });

  it('close() answers everything queued, then refuses writes and tasks', async () => {
    const { queue, end } = recordingQueue({ capacity: 10 });
    const writes = [track(queue.write(batch(8))), track(queue.write(batch(8, 100)))];
    const task = track(queue.exclusive(async () => 'done'));
    const closed = track(queue.close());
    await settle(5);
    assert.equal(closed.state(), 'pending');
    await assert.rejects(queue.write(batch(1)), /test queue is closed/);
    await assert.rejects(queue.exclusive(async () => 1), /test queue is closed/);
    end(1);
    await waitFor('the second group', () => writes[0]!.settled());
    end(2);
    await closed.promise;
    for (const w of writes) assert.equal(w.state(), 'resolved');
    assert.equal(task.state(), 'resolved');
    await queue.close();
  });

  it('accepts an empty write without a group', async () => {
    const { queue, groups } = recordingQueue({}, false);
    await queue.write(batch(0));
    assert.equal(groups.length, 0);
  });
});
