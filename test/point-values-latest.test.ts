// GET /point-values/latest/<xid> on the real service (PGlite or PostgreSQL metadata, the suites' value
// engine).
import assert from 'node:assert/strict';
import { assertError } from './helpers/assertions.js';
import type { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { assertBadParam, PV, T0, usePointValuesApp } from './helpers/point-values-app.js';
import { parseCsv } from './helpers/csv.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { createPoint, seed, latest } = pv;
    let admin: ApiClient;
    let viewer: ApiClient;
    let operator: ApiClient;
    before(() => ({ admin, viewer, operator } = pv));

    describe('GET /point-values/latest/<xid>', () => {
      let xid: string;
      before(async () => {
        xid = await createPoint('NUMERIC');
        await seed(xid, [
          [T0, 1],
          [T0 + 1000, 2, 'two'],
          [T0 + 2000, 3],
          [T0 + 3000, 4],
        ]);
      });

      it('answers the newest value by default, newest first with a limit, annotation only when present', async () => {
        const res = await admin.get(`${PV}/latest/${xid}`);
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers.get('content-type') ?? '', /application\/json/);
        assert.deepEqual(res.body, [{ timestamp: T0 + 3000, value: 4, unreliable: false }]);
        assert.deepEqual(await latest(xid, 3), [
          { timestamp: T0 + 3000, value: 4 },
          { timestamp: T0 + 2000, value: 3 },
          { timestamp: T0 + 1000, value: 2, annotation: 'two' },
        ]);
        assert.equal((await latest(xid, 10_000)).length, 4);
        assert.deepEqual(await latest(xid, 10_000, viewer), await latest(xid, 4));
      });

      it('serves deeper reads than the cache holds from the store', async () => {
        const deep = await createPoint('NUMERIC');
        await seed(
          deep,
          Array.from({ length: 40 }, (_, i) => [T0 + i, i] as [number, number]),
        );
        const values = await latest(deep, 30);
        assert.deepEqual(
          values.map((v) => v.value),
          Array.from({ length: 30 }, (_, i) => 39 - i),
        );
      });

      it('refuses a limit outside 1..10000 or not an integer, and unknown parameters, with 400 naming it', async () => {
        assertBadParam(await admin.get(`${PV}/latest/${xid}?limit=10001`), 'limit');
        assertBadParam(await admin.get(`${PV}/latest/${xid}?limit=0`), 'limit');
        assertBadParam(await admin.get(`${PV}/latest/${xid}?limit=-1`), 'limit');
        assertBadParam(await admin.get(`${PV}/latest/${xid}?limit=2.5`), 'limit');
        assertBadParam(await admin.get(`${PV}/latest/${xid}?limit=many`), 'limit');
        assertBadParam(await admin.get(`${PV}/latest/${xid}?limit=1&limit=2`), 'limit');
        assertBadParam(await admin.get(`${PV}/latest/${xid}?count=2`), 'count');
      });

      it('shapes values per data type: BINARY booleans, ALPHANUMERIC strings, MULTISTATE integers', async () => {
        const bin = await createPoint('BINARY');
        const alpha = await createPoint('ALPHANUMERIC');
        const multi = await createPoint('MULTISTATE');
        await seed(bin, [
          [T0, true],
          [T0 + 1, false],
        ]);
        await seed(alpha, [
          [T0, '17'],
          [T0 + 1, ''],
        ]);
        await seed(multi, [[T0, 2, 'state two']]);
        assert.deepEqual(await latest(bin, 2), [
          { timestamp: T0 + 1, value: false },
          { timestamp: T0, value: true },
        ]);
        assert.deepEqual(await latest(alpha, 2), [
          { timestamp: T0 + 1, value: '' },
          { timestamp: T0, value: '17' },
        ]);
        assert.deepEqual(await latest(multi, 2), [{ timestamp: T0, value: 2, annotation: 'state two' }]);
      });

      it('answers [] for a point without values', async () => {
        assert.deepEqual(await latest(await createPoint('NUMERIC'), 5), []);
      });

      it('a late (older) value does not change latest; an upsert of the newest timestamp does', async () => {
        const p = await createPoint('NUMERIC');
        await seed(p, [
          [T0 + 1000, 1],
          [T0 + 2000, 2],
        ]);
        assert.deepEqual(await latest(p), [{ timestamp: T0 + 2000, value: 2 }]);
        await seed(p, [[T0 + 500, 0.5]]);
        assert.deepEqual(await latest(p), [{ timestamp: T0 + 2000, value: 2 }]);
        assert.deepEqual(await latest(p, 3), [
          { timestamp: T0 + 2000, value: 2 },
          { timestamp: T0 + 1000, value: 1 },
          { timestamp: T0 + 500, value: 0.5 },
        ]);
        await seed(p, [[T0 + 2000, 20, 'corrected']]);
        assert.deepEqual(await latest(p), [{ timestamp: T0 + 2000, value: 20, annotation: 'corrected' }]);
        // A late value and a newer one in one request: the newer one is the latest.
        await seed(p, [
          [T0 + 1500, 1.5],
          [T0 + 3000, 3],
        ]);
        assert.deepEqual(await latest(p, 2), [
          { timestamp: T0 + 3000, value: 3 },
          { timestamp: T0 + 2000, value: 20, annotation: 'corrected' },
        ]);
      });

      it('answers 404 -1 for an unknown point and 403 for an unreadable one', async () => {
        assertError(await admin.get(`${PV}/latest/pv-no-such-point`), 404, -1, 'NOT_FOUND');
        const secret = await createPoint('NUMERIC', { readPermission: [] });
        assertError(await viewer.get(`${PV}/latest/${secret}`), 403, 4004, 'ACCESS_DENIED');
        assertError(await operator.get(`${PV}/latest/${secret}`), 403, 4004);
        assert.deepEqual(await latest(secret), []);
      });

      it('answers CSV with Accept: text/csv', async () => {
        const res = await admin.get(`${PV}/latest/${xid}?limit=2`, { headers: { accept: 'text/csv' } });
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
        assert.deepEqual(parseCsv(res.text), [
          ['timestamp', 'value', 'annotation'],
          [String(T0 + 3000), '4', ''],
          [String(T0 + 2000), '3', ''],
        ]);
      });
    });
  });
}
