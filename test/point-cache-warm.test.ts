// Warming the point cache after a start (PointValueService.warmPointCache): every point is cached a
// page at a time, so a first read looks nothing up; a point changed while its page was read is read
// again, never cached as it was.
import assert from 'node:assert/strict';
import { PointValueService } from '../src/services/point-values.js';
import type { DataPointService } from '../src/services/data-points.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { openTempDuckDb, type TempStore } from './helpers/duckdb-temp.js';

/** More than one page (crud.ts READ_PAGE = 100). */
const POINTS = 130;

describe('point cache warm-up', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;
  let temp: TempStore;

  before(async () => {
    app = await startTestApp('pglite');
    admin = await loggedIn(app.url, 'admin', 'admin');
    await admin.post('/rest/latest/data-sources', { xid: 'warm-src', name: 'warm', modelType: 'VIRTUAL' });
    for (let i = 0; i < POINTS; i++) {
      const res = await admin.post('/rest/latest/data-points', { xid: `warm-${i}`, name: `warm ${i}`, dataSourceXid: 'warm-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
      assert.equal(res.status, 201);
    }
    temp = await openTempDuckDb();
  });

  after(async () => {
    await temp?.dispose();
    await app?.stop();
  });

  /** The app's point service, counting lookups by XID; `pages` may be replaced. */
  function counted(pages?: DataPointService['pages']) {
    const real = app.service.services.dataPoints;
    const lookups: string[] = [];
    const points = Object.create(real) as DataPointService;
    points.findByXid = (xid) => {
      lookups.push(xid);
      return real.findByXid(xid);
    };
    if (pages) points.pages = pages;
    const s = app.service.services;
    const values = new PointValueService(temp.store, points, s.dataSources, { writeBufferValues: 1_000, latestCachePoints: 10, alone: true });
    return { values, lookups };
  }

  it('caches every point, so that the first read of each looks nothing up', async () => {
    const { values, lookups } = counted();
    const warmed = await values.warmPointCache();
    assert.ok(warmed >= POINTS, `${warmed} points warmed`);
    for (let i = 0; i < POINTS; i++) {
      const p = await values.point(`warm-${i}`);
      assert.equal(p?.name, `warm ${i}`);
      assert.deepEqual(p, await app.service.services.dataPoints.findByXid(`warm-${i}`));
    }
    assert.deepEqual(lookups, [], 'no lookup by XID after the warm-up');
    assert.equal(await values.point('warm-none'), undefined);
    assert.deepEqual(lookups, ['warm-none'], 'an unknown XID is still looked up');
    await values.close();
  });

  it('reads a page again when a point changed while it was read, and keeps what a read cached first', async () => {
    const real = app.service.services.dataPoints;
    const held: { values?: PointValueService } = {};
    // The first page is held until the point is renamed and forgotten, as the app's listener would.
    async function* racing(): AsyncGenerator<DataPointRecord[]> {
      const pages = real.pages();
      const first = await pages.next();
      const res = await admin.request('PATCH', '/rest/latest/data-points/warm-3', { body: { name: 'renamed' } });
      assert.equal(res.status, 200);
      held.values!.forgetPoint({ id: 0, xid: 'warm-3' });
      if (!first.done) yield first.value;
      yield* pages;
    }
    const setup = counted(racing);
    const values = setup.values;
    held.values = values;
    const early = await values.point('warm-7'); // cached by a read before the warm-up
    assert.ok((await values.warmPointCache()) >= POINTS);
    assert.equal((await values.point('warm-3'))?.name, 'renamed', 'the point as it is now, not as the page first read it');
    assert.equal(await values.point('warm-7'), early, 'the entry a read cached first is kept');
    assert.deepEqual(setup.lookups, ['warm-7']);
    await values.close();
  });
});
