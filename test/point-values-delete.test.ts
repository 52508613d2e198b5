// DELETE /point-values/<xid> on the real service (PGlite or PostgreSQL metadata, the suites' value
// engine).
import assert from 'node:assert/strict';
import { assertError } from './helpers/assertions.js';
import type { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { assertBadParam, DAY, HOUR, PV, T0, usePointValuesApp } from './helpers/point-values-app.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { createPoint, seed, single, raw, latest } = pv;
    let admin: ApiClient;
    let viewer: ApiClient;
    let operator: ApiClient;
    before(() => ({ admin, viewer, operator } = pv));

    describe('DELETE /point-values/<xid>', () => {
      it('deletes [from, to): {deleted: N}; latest reflects it', async () => {
        const xid = await createPoint('NUMERIC');
        await seed(xid, [
          [T0, 0],
          [T0 + 1000, 1],
          [T0 + 2000, 2],
          [T0 + 3000, 3],
        ]);
        assert.deepEqual(await latest(xid), [{ timestamp: T0 + 3000, value: 3 }]);
        let res = await admin.delete<{ deleted: number }>(`${PV}/${xid}?from=${T0 + 1000}&to=${T0 + 3000}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { deleted: 2 });
        assert.deepEqual(await raw(xid, T0, T0 + DAY), [
          { timestamp: T0, value: 0 },
          { timestamp: T0 + 3000, value: 3 },
        ]);
        // Deleting the newest: latest moves back.
        res = await admin.delete<{ deleted: number }>(`${PV}/${xid}?from=${new Date(T0 + 3000).toISOString()}&to=${T0 + 3001}`);
        assert.deepEqual(res.body, { deleted: 1 });
        assert.deepEqual(await latest(xid, 5), [{ timestamp: T0, value: 0 }]);
        res = await admin.delete<{ deleted: number }>(`${PV}/${xid}?from=${T0 + 10}&to=${T0 + 20}`);
        assert.deepEqual(res.body, { deleted: 0 });
        res = await admin.delete<{ deleted: number }>(`${PV}/${xid}?from=${T0 - DAY}&to=${T0 + DAY}`);
        assert.deepEqual(res.body, { deleted: 1 });
        assert.deepEqual(await latest(xid, 5), []);
        // Rollups see the deletion too.
        const count = await single(xid, { from: T0, to: T0 + HOUR, rollup: 'COUNT' });
        assert.deepEqual(count.body, [{ timestamp: T0, value: 0 }]);
      });

      it('requires both from and to; refuses from after to and bad dates', async () => {
        const xid = await createPoint('NUMERIC');
        await seed(xid, [[T0, 1]]);
        assertBadParam(await admin.delete(`${PV}/${xid}?to=${T0 + 1}`), 'from');
        assertBadParam(await admin.delete(`${PV}/${xid}?from=${T0}`), 'to');
        assertBadParam(await admin.delete(`${PV}/${xid}`), 'from');
        assertBadParam(await admin.delete(`${PV}/${xid}?from=${T0 + 1}&to=${T0}`), 'from');
        assertBadParam(await admin.delete(`${PV}/${xid}?from=soon&to=${T0}`), 'from');
        assertBadParam(await admin.delete(`${PV}/${xid}?from=${T0}&to=${T0 + 1}&bogus=1`), 'bogus');
        assertBadParam(await admin.delete(`${PV}/${xid}?from=${T0}&to=${T0 + 1}&timezone=Mars/Olympus_Mons`), 'timezone');
        assert.deepEqual(await latest(xid), [{ timestamp: T0, value: 1 }]);
      });

      it("takes node-mango-client's purge: ISO instants and a timezone, empty or a zone", async () => {
        const xid = await createPoint('NUMERIC');
        await seed(xid, [
          [T0, 1],
          [T0 + 1000, 2],
        ]);
        const iso = (ms: number) => new Date(ms).toISOString();
        let res = await admin.delete<{ deleted: number }>(`${PV}/${xid}?from=${iso(T0)}&to=${iso(T0 + 1000)}&timezone=`);
        assert.deepEqual(res.body, { deleted: 1 }, res.text);
        res = await admin.delete<{ deleted: number }>(`${PV}/${xid}?from=${iso(T0)}&to=${iso(T0 + 2000)}&timezone=Europe%2FBerlin`);
        assert.deepEqual(res.body, { deleted: 1 }, res.text);
        assert.deepEqual(await latest(xid), []);
      });

      it('needs edit permission: 403 for a user who may only read and set; allowed with the edit permission', async () => {
        const xid = await createPoint('NUMERIC');
        await seed(xid, [[T0, 1]]);
        assertError(await operator.delete(`${PV}/${xid}?from=${T0}&to=${T0 + 1}`), 403, 4004, 'ACCESS_DENIED');
        assertError(await viewer.delete(`${PV}/${xid}?from=${T0}&to=${T0 + 1}`), 403, 4004);
        assert.deepEqual(await latest(xid), [{ timestamp: T0, value: 1 }]);
        const editable = await createPoint('NUMERIC', { editPermission: ['operators'] });
        await seed(editable, [[T0, 1]]);
        const res = await operator.delete(`${PV}/${editable}?from=${T0}&to=${T0 + 1}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { deleted: 1 });
        const secret = await createPoint('NUMERIC', { readPermission: [] });
        assertError(await viewer.delete(`${PV}/${secret}?from=${T0}&to=${T0 + 1}`), 403, 4004);
        assertError(await admin.delete(`${PV}/pv-no-such-point?from=${T0}&to=${T0 + 1}`), 404, -1, 'NOT_FOUND');
      });
    });
  });
}
