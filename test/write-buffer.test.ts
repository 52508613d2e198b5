// The bounded write buffer (src/store/values/write-buffer.ts) in front of the real DuckDB store:
// group commit, backpressure, oversized batches, draining on close, append failures and the store's
// time-out (a server store's STORE_TIMEOUT_MS, given here to the DuckDB store through the spy).
import assert from 'node:assert/strict';
import { DomainError } from '../src/core/errors.js';
import { concatBatches, WriteBuffer } from '../src/store/values/write-buffer.js';
import type { ValueBatch } from '../src/store/values/types.js';
import { batchOf, gate, openTempDuckDb, readAll, seriesBatch, settle, SpyStore, track, type TempStore } from './helpers/duckdb-temp.js';
import { waitFor } from './helpers/wait.js';

describe('write buffer (DuckDB store)', function () {
  this.timeout(60_000);
  let temp: TempStore;
  let spy: SpyStore;
  let series = 0;

  beforeEach(async () => {
    temp = await openTempDuckDb();
    spy = new SpyStore(temp.store);
  });
  afterEach(() => temp.dispose());

  const nextSeries = () => ++series;

  it('concatBatches keeps every column, text and annotation of every batch in order', () => {
    const a = batchOf([{ series: 1, ts: 1, value: 1 }]);
    const b = batchOf([
      { series: 2, ts: 2, text: 'x', annotation: 'n' },
      { series: 3, ts: 3, value: 3 },
    ]);
    const c = concatBatches([a, b]);
    assert.equal(c.length, 3);
    assert.deepEqual([...c.series], [1, 2, 3]);
    assert.deepEqual([...c.ts], [1, 2, 3]);
    assert.equal(c.value[0], 1);
    assert.ok(Number.isNaN(c.value[1]));
    assert.deepEqual(c.text, [null, 'x', null]);
    assert.deepEqual(c.annotation, [null, 'n', null]);
    assert.equal(concatBatches([a]), a);
  });

  it("runs as many appends at once as the store's appendConcurrency, started in arrival order; one by default", async () => {
    for (const concurrency of [undefined, 3]) {
      spy.appendConcurrency = concurrency;
      const buffer = new WriteBuffer(spy, 1_000, 10);
      const gates = Array.from({ length: 5 }, () => gate());
      let running = 0;
      let maxRunning = 0;
      const started: number[] = [];
      spy.beforeAppend = async (batch) => {
        started.push(batch.series[0]!);
        maxRunning = Math.max(maxRunning, ++running);
        await gates[started.length - 1]!.opened;
        running--;
      };
      const ids = [1, 2, 3, 4, 5].map(() => nextSeries());
      // Batches of 10: one group each.
      const writes = ids.map((s) => track(buffer.write(seriesBatch(s, 0, 10))));
      await settle();
      assert.equal(maxRunning, concurrency ?? 1);
      for (const g of gates) {
        g.open();
        await settle();
      }
      await Promise.all(writes.map((w) => w.promise));
      assert.deepEqual(started, ids, 'appends start in the order the writes came');
      assert.equal(maxRunning, concurrency ?? 1);
      spy.beforeAppend = undefined;
      await buffer.close();
    }
  });

  it('many concurrent writers: each resolves once its values are durable, never more than capacity buffered, appends grouped', async () => {
    const capacity = 200;
    const buffer = new WriteBuffer(spy, capacity);
    let maxSeen = 0;
    const sample = () => (maxSeen = Math.max(maxSeen, buffer.bufferedValues));
    // Sample on every append and on a fast timer while writing.
    spy.beforeAppend = () => {
      sample();
    };
    const timer = setInterval(sample, 0);
    const s = nextSeries();
    const writers = 120;
    const perWriter = (i: number) => 5 + (i % 20); // 5..24 values each
    let start = 0;
    const jobs: Promise<void>[] = [];
    const readBackFailures: string[] = [];
    for (let i = 0; i < writers; i++) {
      const n = perWriter(i);
      const from = start;
      start += n;
      const batch = seriesBatch(s, from, n);
      jobs.push(
        buffer.write(batch).then(async () => {
          sample();
          // Durable and visible: the writer's own values are in the store when it is answered.
          const got: number[] = [];
          for await (const page of temp.store.range(s, from, from + n)) got.push(...page.map((v) => v.ts));
          if (got.length !== n) readBackFailures.push(`writer ${i}: ${got.length}/${n}`);
        }),
      );
      sample();
    }
    await Promise.all(jobs);
    clearInterval(timer);
    assert.deepEqual(readBackFailures, []);
    assert.ok(maxSeen <= capacity, `buffered ${maxSeen} > capacity ${capacity}`);
    assert.ok(maxSeen > 0);
    assert.equal(buffer.bufferedValues, 0);
    const all = await readAll(temp.store, s);
    assert.equal(all.length, start);
    assert.deepEqual(
      all.map((v) => v.ts),
      Array.from({ length: start }, (_, i) => i),
    );
    assert.ok(spy.appendCalls < writers, `group commit: ${spy.appendCalls} appends for ${writers} writers`);
    for (const size of spy.appendSizes) assert.ok(size <= capacity, `an append of ${size} values`);
    await buffer.close();
  });

  it('holds a writer back while the buffer is full, until the earlier values are flushed', async () => {
    const buffer = new WriteBuffer(spy, 10);
    const g = gate();
    spy.beforeAppend = (_b, call) => (call === 1 ? g.opened : undefined);
    const s = nextSeries();
    const first = track(buffer.write(seriesBatch(s, 0, 8)));
    await settle();
    assert.equal(buffer.bufferedValues, 8);
    assert.equal(spy.appendCalls, 1, 'the first group is being appended');
    // 8 + 5 > 10: waits without entering the buffer.
    const second = track(buffer.write(seriesBatch(s, 100, 5)));
    // 8 + 2 <= 10 would fit, but a writer never overtakes one already waiting.
    const small = track(buffer.write(seriesBatch(s, 200, 2)));
    await settle(50);
    assert.equal(second.state(), 'pending');
    assert.equal(small.state(), 'pending');
    assert.equal(first.state(), 'pending', 'not durable yet');
    assert.equal(buffer.bufferedValues, 8, 'the waiting writers did not enter the buffer');
    assert.equal((await readAll(temp.store, s)).length, 0);
    g.open();
    await first.promise;
    await small.promise;
    await second.promise;
    assert.equal(buffer.bufferedValues, 0);
    assert.deepEqual(
      (await readAll(temp.store, s)).map((v) => v.ts),
      [0, 1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103, 104, 200, 201],
    );
    await buffer.close();
  });

  it('lets a single batch larger than the capacity through alone, and holds others back meanwhile', async () => {
    const capacity = 10;
    const buffer = new WriteBuffer(spy, capacity);
    const s = nextSeries();
    // Alone into an empty buffer.
    await buffer.write(seriesBatch(s, 0, 25));
    assert.equal((await readAll(temp.store, s)).length, 25);
    assert.deepEqual(spy.appendSizes, [25]);

    // Behind a small batch it waits until the buffer is empty, then goes alone.
    const g = gate();
    spy.beforeAppend = (_b, call) => (call === 2 ? g.opened : undefined);
    const small = track(buffer.write(seriesBatch(s, 100, 3)));
    const big = track(buffer.write(seriesBatch(s, 200, 30)));
    await settle();
    assert.equal(buffer.bufferedValues, 3);
    assert.equal(big.state(), 'pending');
    g.open();
    await small.promise;
    await big.promise;
    assert.deepEqual(spy.appendSizes, [25, 3, 30]);

    // While the big one is in flight nothing else enters.
    const g2 = gate();
    spy.beforeAppend = (_b, call) => (call === 4 ? g2.opened : undefined);
    const big2 = track(buffer.write(seriesBatch(s, 300, 40)));
    await settle();
    assert.equal(buffer.bufferedValues, 40);
    const after = track(buffer.write(seriesBatch(s, 400, 1)));
    await settle(30);
    assert.equal(after.state(), 'pending');
    assert.equal(buffer.bufferedValues, 40, 'at most one oversized batch is buffered');
    g2.open();
    await big2.promise;
    await after.promise;
    assert.equal((await readAll(temp.store, s)).length, 25 + 3 + 30 + 40 + 1);
    await buffer.close();
  });

  it('lets an oversized batch through under a steady stream of small writers (admission is first come, first served)', async () => {
    const buffer = new WriteBuffer(spy, 10);
    spy.beforeAppend = () => settle(2);
    let stop = false;
    let ts = 0;
    const streams = Array.from({ length: 4 }, async (_, c) => {
      while (!stop) await buffer.write(seriesBatch(1_000 + c, ts++, 1));
    });
    await settle(30);
    const s = nextSeries();
    const big = track(buffer.write(seriesBatch(s, 0, 25)));
    const mid = track(buffer.write(seriesBatch(s, 100, 9)));
    const deadline = Date.now() + 5_000;
    while ((!big.settled() || !mid.settled()) && Date.now() < deadline) await settle(10);
    stop = true;
    await Promise.all(streams);
    assert.equal(big.state(), 'resolved', 'the oversized batch was starved by small writers');
    assert.equal(mid.state(), 'resolved');
    assert.equal((await readAll(temp.store, s)).length, 34);
    await buffer.close();
  });

  it('caps one append at maxAppend values (a larger single batch still goes alone)', async () => {
    const buffer = new WriteBuffer(spy, 1_000, 50);
    const g = gate();
    spy.beforeAppend = (_b, call) => (call === 1 ? g.opened : undefined);
    const s = nextSeries();
    const jobs = [track(buffer.write(seriesBatch(s, 0, 10)))];
    await settle();
    for (let i = 1; i <= 20; i++) jobs.push(track(buffer.write(seriesBatch(s, i * 100, 10))));
    jobs.push(track(buffer.write(seriesBatch(s, 10_000, 70))));
    g.open();
    await Promise.all(jobs.map((j) => j.promise));
    assert.equal(spy.appendSizes[0], 10);
    for (const size of spy.appendSizes.slice(1)) assert.ok(size <= 50 || size === 70, `append of ${size}`);
    assert.ok(spy.appendSizes.includes(70));
    assert.equal(
      spy.appendSizes.reduce((a, b) => a + b, 0),
      10 + 200 + 70,
    );
    assert.equal((await readAll(temp.store, s)).length, 280);
    await buffer.close();
  });

  it('close() drains every buffered and waiting writer before resolving, then refuses writes', async () => {
    const buffer = new WriteBuffer(spy, 20);
    const g = gate();
    spy.beforeAppend = (_b, call) => (call === 1 ? g.opened : undefined);
    const s = nextSeries();
    const jobs = [track(buffer.write(seriesBatch(s, 0, 15)))];
    await settle();
    for (let i = 1; i <= 10; i++) jobs.push(track(buffer.write(seriesBatch(s, i * 100, 15)))); // each waits for room
    const closed = track(buffer.close());
    await settle(30);
    assert.equal(closed.state(), 'pending');
    await assert.rejects(buffer.write(seriesBatch(s, 5_000, 1)), /closed/);
    g.open();
    await closed.promise;
    for (const j of jobs) assert.equal(j.state(), 'resolved', 'every writer accepted before close was answered before close resolved');
    assert.equal(buffer.bufferedValues, 0);
    assert.equal((await readAll(temp.store, s)).length, 15 * 11);
    await assert.rejects(buffer.write(seriesBatch(s, 6_000, 1)), /closed/);
    // An empty batch is refused too once closed.
    await assert.rejects(buffer.write(seriesBatch(s, 7_000, 0)), /closed/);
    await buffer.close(); // idempotent
  });

  it('an append failure rejects exactly the writers of that group; later groups are written once the store recovers', async () => {
    const buffer = new WriteBuffer(spy, 100);
    const g = gate();
    spy.beforeAppend = async (_b, call) => {
      if (call === 1) await g.opened;
      if (call === 2) throw new Error('disk on fire');
    };
    const s = nextSeries();
    const a = track(buffer.write(seriesBatch(s, 0, 5)));
    await settle();
    // b and c queue behind a's append and form the second group.
    const b = track(buffer.write(seriesBatch(s, 100, 5)));
    const c = track(buffer.write(seriesBatch(s, 200, 5)));
    await settle();
    g.open();
    await a.promise;
    await assert.rejects(b.promise, /disk on fire/);
    await assert.rejects(c.promise, /disk on fire/);
    assert.equal(spy.appendSizes[1], 10, 'b and c were one group');
    assert.equal(buffer.bufferedValues, 0, 'the failed group left the buffer');
    // The store works again: later writes go through.
    await buffer.write(seriesBatch(s, 300, 5));
    assert.deepEqual(
      (await readAll(temp.store, s)).map((v) => v.ts),
      [0, 1, 2, 3, 4, 300, 301, 302, 303, 304],
    );
    await buffer.close();
  });

  it('a closed DuckDB store rejects every group (it does not recover); the buffer neither hangs nor leaks', async () => {
    const buffer = new WriteBuffer(temp.store, 100);
    const s = nextSeries();
    await buffer.write(seriesBatch(s, 0, 3));
    await temp.store.close();
    const writes: Promise<void>[] = [];
    for (let i = 1; i <= 5; i++) writes.push(buffer.write(seriesBatch(s, i * 10, 30)));
    const results = await Promise.allSettled(writes);
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.match(String((r as PromiseRejectedResult).reason), /closed/);
    }
    assert.equal(buffer.bufferedValues, 0);
    // close() resolves: nothing is left to drain.
    await buffer.close();
  });

  it('never holds more than the capacity while writers keep arriving (memory stays bounded)', async () => {
    const capacity = 50;
    const buffer = new WriteBuffer(spy, capacity);
    const s = nextSeries();
    let maxSeen = 0;
    // Slow appends: writers pile up behind a full buffer.
    spy.beforeAppend = async () => {
      maxSeen = Math.max(maxSeen, buffer.bufferedValues);
      await settle(5);
    };
    const jobs: Promise<void>[] = [];
    const total = 2_000;
    for (let i = 0; i < total / 10; i++) {
      jobs.push(buffer.write(seriesBatch(s, i * 10, 10)));
      maxSeen = Math.max(maxSeen, buffer.bufferedValues);
      if (i % 7 === 0) await settle(1);
      maxSeen = Math.max(maxSeen, buffer.bufferedValues);
    }
    await Promise.all(jobs);
    assert.ok(maxSeen <= capacity, `buffered ${maxSeen}`);
    assert.equal((await readAll(temp.store, s)).length, total);
    await buffer.close();
  });

  it('accepts an empty batch without touching the store', async () => {
    const buffer = new WriteBuffer(spy, 10);
    const empty: ValueBatch = seriesBatch(nextSeries(), 0, 0);
    await buffer.write(empty);
    assert.equal(spy.appendCalls, 0);
    await buffer.close();
  });

  describe("the store's time-out", () => {
    const TIMEOUT_MS = 150;
    const isUnavailable = (err: unknown) => err instanceof DomainError && err.kind === 'unavailable' && /point-value store is unavailable/.test(err.message);

    it('answers writers 503 at the time-out; values not sent yet are dropped, the append under way keeps its place and its room until it ends', async () => {
      spy.timeoutMs = TIMEOUT_MS;
      const late: ValueBatch[] = [];
      const buffer = new WriteBuffer(spy, 1_000, 200_000, (batch) => late.push(batch));
      const held = gate();
      spy.beforeAppend = (_batch, call) => (call === 1 ? held.opened : undefined);
      const s = nextSeries();
      const sent = track(buffer.write(seriesBatch(s, 0, 10)));
      await settle();
      const queued = track(buffer.write(seriesBatch(s, 100, 10)));
      const started = Date.now();
      await assert.rejects(sent.promise, isUnavailable);
      await assert.rejects(queued.promise, isUnavailable);
      assert.ok(Date.now() - started < TIMEOUT_MS + 1_000, 'answered at the time-out, not when the append ends');
      await settle(TIMEOUT_MS);
      assert.equal(spy.appendCalls, 1, 'no second append while the first is under way');
      assert.equal(buffer.bufferedValues, 10, "the append under way keeps its room; the unsent writer's values are gone");
      assert.equal(late.length, 0);

      // The store answers again: the append ends (here it commits, though its writer heard 503).
      held.open();
      await waitFor('the late outcome', () => late.length === 1);
      assert.deepEqual([...late[0]!.ts], [...seriesBatch(s, 0, 10).ts]);
      assert.equal(buffer.bufferedValues, 0);
      assert.deepEqual((await readAll(temp.store, s)).map((v) => v.ts), [...seriesBatch(s, 0, 10).ts], 'the dropped writer was never sent');
      // Later writes go through.
      await buffer.write(seriesBatch(s, 200, 10));
      assert.equal((await readAll(temp.store, s)).length, 20);
      assert.equal(late.length, 1, 'an append answered in time is no late outcome');
      await buffer.close();
    });

    it('answers a writer waiting for room at its time-out and lets the writers behind it in', async () => {
      spy.timeoutMs = TIMEOUT_MS;
      const buffer = new WriteBuffer(spy, 20);
      const held = gate();
      spy.beforeAppend = (_batch, call) => (call === 1 ? held.opened : undefined);
      const s = nextSeries();
      const first = track(buffer.write(seriesBatch(s, 0, 20)));
      await settle();
      const big = track(buffer.write(seriesBatch(s, 100, 20))); // waits for room
      await assert.rejects(big.promise, isUnavailable);
      await assert.rejects(first.promise, isUnavailable);
      spy.timeoutMs = undefined; // from here on the store answers in time
      held.open();
      await waitFor('room again', () => buffer.bufferedValues === 0);
      await buffer.write(seriesBatch(s, 200, 20));
      assert.deepEqual((await readAll(temp.store, s)).map((v) => v.ts), [...seriesBatch(s, 0, 20).ts, ...seriesBatch(s, 200, 20).ts]);
      await buffer.close();
    });

    it('never holds more than the capacity while the store does not answer, however many writers time out', async () => {
      spy.timeoutMs = TIMEOUT_MS;
      const capacity = 50;
      const buffer = new WriteBuffer(spy, capacity);
      const held = gate();
      spy.beforeAppend = () => held.opened;
      const s = nextSeries();
      let maxSeen = 0;
      const writes: ReturnType<typeof track<void>>[] = [];
      for (let i = 0; i < 100; i++) {
        writes.push(track(buffer.write(seriesBatch(s, i * 10, 10))));
        maxSeen = Math.max(maxSeen, buffer.bufferedValues);
        if (i % 10 === 0) await settle(30);
      }
      await waitFor('every writer answered', () => writes.every((w) => w.settled()), 5_000);
      assert.ok(writes.every((w) => w.state() === 'rejected' && isUnavailable(w.error())));
      assert.ok(maxSeen <= capacity, `buffered ${maxSeen}`);
      assert.equal(spy.appendCalls, 1, 'one append under way, no pile of them');
      held.open();
      await waitFor('the append ended', () => buffer.bufferedValues === 0);
      await buffer.close();
    });
  });
});
