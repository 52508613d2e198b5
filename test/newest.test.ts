// Each point's newest value (src/values/live/newest.ts) over the real DuckDB store: its four views
// (stored, accepted, published, logged) and what each event of invalidation drops.
import assert from 'node:assert/strict';
import { NewestValues } from '../src/values/live/newest.js';
import type { StoredValue } from '../src/store/values/types.js';
import { batchOf, numeric, openTempDuckDb, seriesBatch, SpyStore, type TempStore } from './helpers/duckdb-temp.js';

const tsOf = (values: readonly StoredValue[]) => values.map((v) => v.ts);

describe('newest values (DuckDB store)', function () {
  this.timeout(60_000);
  let temp: TempStore;
  let spy: SpyStore;
  let newest: NewestValues;
  let series = 0;

  before(async () => {
    temp = await openTempDuckDb();
  });
  after(() => temp.dispose());
  beforeEach(async () => {
    spy = new SpyStore(temp.store);
    newest = new NewestValues(spy, 100);
    series++;
    await temp.store.append(seriesBatch(series, 10, 3, 10)); // 10, 20, 30 stored
  });

  /** Every view of the point: which still answer without the store, and what. */
  async function views() {
    const calls = spy.latestCalls;
    const published = await newest.loadPublished(series);
    const storedFromMemory = spy.latestCalls === calls;
    return { latest: tsOf(await newest.latest(series, 2)), published: published?.ts, logged: newest.newestLogged(series)?.ts, storedFromMemory };
  }

  describe('views', () => {
    it('latest: the stored values, newest first, read once and then from memory', async () => {
      assert.deepEqual(tsOf(await newest.latest(series, 5)), [30, 20, 10]);
      assert.deepEqual(tsOf(await newest.latest(series, 1)), [30]);
      assert.equal(spy.latestCalls, 1);
    });

    it('latest: the newest accepted value ahead of the stored ones while it is newer', async () => {
      newest.noteAccepted(batchOf([{ series, ts: 40, value: 4 }]));
      assert.deepEqual(tsOf(await newest.latest(series, 2)), [40, 30], 'accepted, not stored: still the latest');
      newest.noteStoredBatch(batchOf([{ series, ts: 50, value: 5 }]));
      assert.deepEqual(tsOf(await newest.latest(series, 2)), [50, 30], 'a newer stored value wins');
    });

    it('an accepted value is not answered when a stored one is as new', async () => {
      newest.noteAccepted(batchOf([{ series, ts: 30, value: 99 }]));
      assert.deepEqual(await newest.latest(series, 1), [numeric(30, 3)]);
    });

    it('accepted: the newest of a batch counts, whatever the row order', async () => {
      newest.noteAccepted(batchOf([{ series, ts: 60, value: 6 }, { series, ts: 45, value: 4.5 }]));
      assert.deepEqual(await newest.latest(series, 1), [numeric(60, 6)]);
    });

    it('stored: a durable batch or rows update the view without a read of the store', async () => {
      await newest.latest(series, 1);
      newest.noteStoredBatch(batchOf([{ series, ts: 40, value: 4 }]));
      newest.noteStoredRows(series, [numeric(50, 5), numeric(60, 6)]);
      assert.deepEqual(tsOf(await newest.latest(series, 4)), [60, 50, 40, 30]);
      assert.equal(spy.latestCalls, 1);
    });

    it('published: the newest stored before anything was published, then the newest published', async () => {
      assert.deepEqual(await newest.loadPublished(series), numeric(30, 3));
      newest.notePublished(series, numeric(40, 4));
      assert.deepEqual(await newest.loadPublished(series), numeric(40, 4), 'ahead of the store while its write is under way');
      assert.deepEqual(newest.newestPublished(series, numeric(30, 3)), numeric(40, 4), 'what was published wins over what was loaded');
      assert.deepEqual(tsOf(await newest.latest(series, 1)), [30], 'published is not stored');
    });

    it('published: the loaded value when nothing was published since', () => {
      assert.deepEqual(newest.newestPublished(series, numeric(30, 3)), numeric(30, 3));
    });

    it('logged: unknown until loaded, then the newest stored, then what logging chose', async () => {
      assert.equal(newest.newestLogged(series), undefined);
      await newest.loadLogged(series);
      assert.deepEqual(newest.newestLogged(series), { ts: 30, value: 3, text: null });
      newest.noteLogged(series, { ts: 40, value: 4, text: null });
      await newest.loadLogged(series);
      assert.deepEqual(newest.newestLogged(series), { ts: 40, value: 4, text: null }, 'a known one is not loaded again');
    });

    it('logged: a value logged while the stored one loads is kept', async () => {
      const loading = newest.loadLogged(series);
      newest.noteLogged(series, { ts: 45, value: 4.5, text: null });
      await loading;
      assert.equal(newest.newestLogged(series)?.ts, 45);
    });

    it('logged: text values keep NaN in value', async () => {
      await newest.latest(series, 1);
      newest.noteStoredBatch(batchOf([{ series, ts: 40, text: 'on' }]));
      await newest.loadLogged(series);
      const logged = newest.newestLogged(series);
      assert.equal(logged?.text, 'on');
      assert.ok(Number.isNaN(logged?.value));
    });
  });

  describe('invalidation', () => {
    /** Each view holds something newer than the store: stored 40, accepted 45, published 50, logged 40. */
    async function everyViewAhead() {
      await newest.latest(series, 1);
      await temp.store.append(batchOf([{ series, ts: 40, value: 4 }]));
      newest.noteStoredBatch(batchOf([{ series, ts: 40, value: 4 }]));
      newest.noteAccepted(batchOf([{ series, ts: 45, value: 4.5 }]));
      newest.notePublished(series, numeric(50, 5));
      newest.noteLogged(series, { ts: 40, value: 4, text: null });
      assert.deepEqual(await views(), { latest: [45, 40], published: 50, logged: 40, storedFromMemory: true });
    }

    it('forget: the views that follow the store go; the newest accepted stays', async () => {
      await everyViewAhead();
      newest.forget(series);
      assert.deepEqual(await views(), { latest: [45, 40], published: 40, logged: undefined, storedFromMemory: false });
    });

    it('forgetAll: every point', async () => {
      await everyViewAhead();
      newest.forgetAll();
      assert.deepEqual(await views(), { latest: [45, 40], published: 40, logged: undefined, storedFromMemory: false });
    });

    it('deleted: the newest accepted goes too', async () => {
      await everyViewAhead();
      await temp.store.delete(series, 35, 100);
      newest.deleted(series);
      assert.deepEqual(await views(), { latest: [30, 20], published: 30, logged: undefined, storedFromMemory: false });
    });

    it('forgetLogged: only logging reads the store again', async () => {
      await everyViewAhead();
      newest.forgetLogged(series);
      assert.deepEqual(await views(), { latest: [45, 40], published: 50, logged: undefined, storedFromMemory: true });
      await newest.loadLogged(series);
      assert.equal(newest.newestLogged(series)?.ts, 40);
    });

    it('forgetPublished: only the bus judges against the store again', async () => {
      await everyViewAhead();
      newest.forgetPublished(series);
      assert.deepEqual(await views(), { latest: [45, 40], published: 40, logged: 40, storedFromMemory: true });
    });

    it('forgets one point, not its neighbours', async () => {
      const other = series + 10_000;
      newest.notePublished(series, numeric(50, 5));
      newest.notePublished(other, numeric(7, 7));
      newest.forget(series);
      assert.deepEqual(newest.newestPublished(other, undefined), numeric(7, 7));
    });
  });
});
