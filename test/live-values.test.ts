// Live values leave on the bus as soon as they are accepted, before the (slower) durable write, as
// in docs/ARCHITECTURE.md's pipeline; the caller is still answered only once the write is durable; and
// a failed write does not leave the bus believing in values the store never got.
import assert from 'node:assert/strict';
import type { LiveValue } from '../src/values/live/bus.js';
import { PointValueService } from '../src/services/point-values.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import type { PointValueStore, ValueBatch } from '../src/store/values/types.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { openTempDuckDb, type TempStore } from './helpers/duckdb-temp.js';
import { loggedIn } from './helpers/client.js';

/** A real store whose appends wait for the test (or fail when told to). */
function gated(inner: PointValueStore) {
  let release: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();
  let fail = false;
  const store: PointValueStore = Object.create(inner) as PointValueStore;
  store.append = async (batch: ValueBatch) => {
    await gate;
    if (fail) throw new Error('disk full');
    return inner.append(batch);
  };
  return {
    store,
    hold() {
      gate = new Promise((resolve) => (release = resolve));
    },
    release: () => release(),
    failNext(on: boolean) {
      fail = on;
    },
  };
}

describe('live values', function () {
  this.timeout(30_000);
  let app: TestApp;
  let temp: TempStore;
  let point: DataPointRecord;

  before(async () => {
    app = await startTestApp('pglite');
    const admin = await loggedIn(app.url, 'admin', 'admin');
    await admin.post('/rest/latest/data-sources', { xid: 'live-src', name: 'live', modelType: 'VIRTUAL' });
    await admin.post('/rest/latest/data-points', { xid: 'live-p', name: 'live', dataSourceXid: 'live-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
    point = (await app.service.services.dataPoints.findByXid('live-p'))!;
    temp = await openTempDuckDb();
  });

  after(async () => {
    await temp?.dispose();
    await app?.stop();
  });

  function service(store: PointValueStore): PointValueService {
    const s = app.service.services;
    return new PointValueService(store, s.dataPoints, s.dataSources, { writeBufferValues: 10_000, latestCachePoints: 100 });
  }

  it('publishes before the durable write, and answers only after it', async () => {
    const g = gated(temp.store);
    const values = service(g.store);
    const seen: LiveValue[] = [];
    values.bus.subscribe((v) => seen.push(v));
    g.hold();
    let answered = false;
    const pending = values.acceptFromSource([{ point, value: 21.5, ts: 1_000 }]).then(() => (answered = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      seen.map((v) => [v.xid, v.value.value, v.kind]),
      [['live-p', 21.5, 'UPDATE']],
      'on the bus while the write waits',
    );
    assert.equal(answered, false, 'not answered before the write is durable');
    g.release();
    await pending;
    assert.equal((await values.latest(point, 1))[0]?.value, 21.5);
    await values.close();
  });

  it('publishes only values newer than the newest, in time order, across batches', async () => {
    const values = service(temp.store);
    const seen: number[] = [];
    values.bus.subscribe((v) => seen.push(v.value.ts));
    await values.acceptFromSource([{ point, value: 0, ts: 1_500 }]);
    // Two batches at once: the first (in call order) publishes both of its values, sorted; the
    // second's value is older than what was just published, so it only enters history.
    await Promise.all([values.acceptFromSource([{ point, value: 1, ts: 3_000 }, { point, value: 2, ts: 2_000 }]), values.acceptFromSource([{ point, value: 3, ts: 2_500 }])]);
    await values.acceptFromSource([{ point, value: 4, ts: 4_000 }]);
    assert.deepEqual(seen, [1_500, 2_000, 3_000, 4_000]);
    await values.close();
  });

  it('forgets what it published when the write fails, so the store decides again', async () => {
    const g = gated(temp.store);
    const values = service(g.store);
    const seen: number[] = [];
    values.bus.subscribe((v) => seen.push(v.value.ts));
    g.failNext(true);
    await assert.rejects(values.acceptFromSource([{ point, value: 9, ts: 1e12 }]), /disk full/);
    g.failNext(false);
    // Older than the failed value, newer than anything stored: live again.
    await values.acceptFromSource([{ point, value: 5, ts: 5_000 }]);
    assert.deepEqual(seen, [1e12, 5_000]);
    await values.close();
  });

  it('publishes a point only while somebody follows it, when no listener takes every point', async () => {
    const values = service(temp.store);
    const seen: number[] = [];
    values.bus.subscribe((v) => seen.push(v.value.ts), { followedOnly: true });
    await values.acceptFromSource([{ point, value: 1, ts: 6_000 }]);
    assert.deepEqual(seen, [], 'not followed: the write takes the path without live values');
    const unfollow = values.bus.follow(point.id);
    await values.acceptFromSource([{ point, value: 2, ts: 7_000 }]);
    unfollow();
    await values.acceptFromSource([{ point, value: 3, ts: 8_000 }]);
    assert.deepEqual(seen, [7_000]);
    await values.close();
  });
});

