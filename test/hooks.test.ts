// What a value store is given by its owner (src/store/values/hooks.ts): the engine's logger, and
// onAppended, told of every durable append, here through the real DuckDB store. The QuestDB store's
// use of the hook is checked over fake connections in questdb.test.ts.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuckDbStore, type DuckDbValueStore } from '../src/store/values/duckdb/index.js';
import { appendedHook, engineLogger } from '../src/store/values/hooks.js';
import type { StoredValue } from '../src/store/values/types.js';
import { seriesBatch, track } from './helpers/duckdb-temp.js';
import { capturingLogger, flushed } from './helpers/log.js';

describe('value store hooks', () => {
  it('gives each engine a child logger naming it, silent when the owner gives none', async () => {
    const { log, lines } = capturingLogger();
    engineLogger(log, 'duckdb').warn('hello');
    await flushed();
    assert.equal(lines[0]!.engine, 'duckdb');
    assert.equal(lines[0]!.msg, 'hello');
    assert.equal(engineLogger(undefined, 'questdb').level, 'silent');
  });

  it('keeps a throwing onAppended away from the write path, logging it', async () => {
    const { log, lines } = capturingLogger();
    const hook = appendedHook(() => {
      throw new Error('counter broke');
    }, log);
    assert.doesNotThrow(() => hook(3));
    await flushed();
    assert.equal(lines[0]!.level, 50);
    assert.match(String((lines[0]!.err as { message: string }).message), /counter broke/);
    assert.doesNotThrow(() => appendedHook(undefined, log)(3));
  });

  describe('the DuckDB store', function () {
    this.timeout(60_000);
    let dir: string;
    let store: DuckDbValueStore;
    let calls: number[];
    /** Per call: a read started from inside onAppended, and whether that append had resolved then. */
    let seen: { read: Promise<StoredValue[]>; resolvedBefore: boolean }[];
    let appends: ReturnType<typeof track<void>>[];

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'dds-hooks-'));
      calls = [];
      seen = [];
      appends = [];
      store = await openDuckDbStore(dir, {
        readers: 2,
        onAppended: (n) => {
          calls.push(n);
          seen.push({ read: store.latest(1, 100), resolvedBefore: appends[calls.length - 1]?.settled() ?? false });
        },
      });
    });
    afterEach(async () => {
      await store.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    });

    it('calls onAppended once per append with its value count, grouped or not, once the values are readable', async () => {
      // Queued together, these share one transaction: still one call per append, in order.
      for (const [start, count] of [[0, 1], [10, 2], [20, 3]] as const) appends.push(track(store.append(seriesBatch(1, start, count))));
      await Promise.all(appends.map((a) => a.promise));
      appends.push(track(store.append(seriesBatch(1, 5, 4)))); // late rows: the other write path
      await appends[3]!.promise;
      assert.deepEqual(calls, [1, 2, 3, 4]);
      const expected = [[0], [0, 10, 11], [0, 10, 11, 20, 21, 22], [0, 5, 6, 7, 8, 10, 11, 20, 21, 22]];
      for (let i = 0; i < seen.length; i++) {
        assert.equal(seen[i]!.resolvedBefore, false, `call ${i} came before its append resolved`);
        const read = (await seen[i]!.read).map((v) => v.ts).reverse();
        for (const ts of expected[i]!) assert.ok(read.includes(ts), `call ${i}: ${ts} was readable`);
      }
    });

    it('does not call onAppended for a refused or failed append, nor for an empty one', async () => {
      const bad = seriesBatch(1, 0, 2);
      bad.value[1] = Infinity;
      await assert.rejects(store.append(bad), /infinite/);
      // A failure inside the write transaction (the store's own write step made to fail).
      const internals = store as unknown as { writeRows: () => Promise<void> };
      internals.writeRows = async () => {
        throw new Error('disk on fire');
      };
      await assert.rejects(store.append(seriesBatch(1, 0, 3)), /disk on fire/);
      delete (internals as { writeRows?: unknown }).writeRows;
      await store.append(seriesBatch(1, 0, 0));
      assert.deepEqual(calls, []);
      await store.append(seriesBatch(1, 0, 2));
      assert.deepEqual(calls, [2]);
      await store.close();
      await assert.rejects(store.append(seriesBatch(1, 10, 1)), /closed/);
      assert.deepEqual(calls, [2]);
    });
  });
});
