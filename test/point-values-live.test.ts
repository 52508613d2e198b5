// The live-value bus the point-value pipeline publishes on, driven through /point-values on the real
// service (PGlite or PostgreSQL metadata, the suites' value engine).
import assert from 'node:assert/strict';
import type { LiveValue } from '../src/values/live/bus.js';
import { assertError, assertValidation } from './helpers/assertions.js';
import type { TestApp } from './helpers/app.js';
import type { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { PV, T0, usePointValuesApp } from './helpers/point-values-app.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { createPoint, bulk, seed, latest } = pv;
    let app: TestApp;
    let admin: ApiClient;
    let viewer: ApiClient;
    before(() => ({ app, admin, viewer } = pv));

    describe('live-value bus', () => {
      let events: LiveValue[];
      let unsubscribe: () => void;
      beforeEach(() => {
        events = [];
        unsubscribe = app.service.services.pointValues.bus.subscribe((e) => events.push(e));
      });
      afterEach(() => unsubscribe());

      it('a bulk write publishes UPDATE only for values newer than the point latest, in ts order', async () => {
        const xid = await createPoint('NUMERIC');
        await seed(xid, [
          [T0 + 1000, 1],
          [T0 + 2000, 2],
        ]);
        assert.deepEqual(
          events.map((e) => [e.kind, e.value.ts]),
          [
            ['UPDATE', T0 + 1000],
            ['UPDATE', T0 + 2000],
          ],
        );
        events = [];
        // Late, newer out of order, an upsert of the newest, and one older than everything.
        await seed(xid, [
          [T0 + 4000, 4],
          [T0 + 1500, 1.5],
          [T0 + 3000, 3, 'three'],
          [T0 + 2000, 20],
          [T0, 0],
        ]);
        const mine = events.filter((e) => e.xid === xid);
        assert.deepEqual(
          mine.map((e) => [e.kind, e.value.ts, e.value.value]),
          [
            ['UPDATE', T0 + 3000, 3],
            ['UPDATE', T0 + 4000, 4],
          ],
        );
        assert.equal(mine[0]!.value.annotation, 'three');
        assert.equal(mine[0]!.dataType, 'NUMERIC');
        assert.equal(mine[0]!.previous?.ts, T0 + 2000, 'previous is the latest before the write');
        assert.equal(mine[1]!.previous?.ts, T0 + 3000);
        assert.equal(typeof mine[0]!.pointId, 'number');
        assert.deepEqual(await latest(xid), [{ timestamp: T0 + 4000, value: 4 }]);
        events = [];
        // Only older values: nothing live.
        await seed(xid, [[T0 + 500, 0.5]]);
        assert.deepEqual(events, []);
      });

      it('publishes per point for a bulk write over several points', async () => {
        const p1 = await createPoint('NUMERIC');
        const p2 = await createPoint('BINARY');
        await seed(p2, [[T0 + 5000, true]]);
        events = [];
        const res = await bulk([
          { xid: p1, value: 1, timestamp: T0 + 1000 },
          { xid: p2, value: false, timestamp: T0 + 1000 },
          { xid: p2, value: false, timestamp: T0 + 6000 },
          { xid: p1, value: 2, timestamp: T0 + 500 },
        ]);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(
          events.filter((e) => e.xid === p1).map((e) => e.value.ts),
          [T0 + 500, T0 + 1000],
        );
        assert.deepEqual(
          events.filter((e) => e.xid === p2).map((e) => [e.value.ts, e.value.value, e.dataType]),
          [[T0 + 6000, 0, 'BINARY']],
        );
      });

      it('a PUT publishes SET, also for a value older than the latest', async () => {
        const xid = await createPoint('NUMERIC');
        await seed(xid, [[T0 + 1000, 1]]);
        events = [];
        let res = await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 5, timestamp: T0 + 2000, annotation: 'set' });
        assert.equal(res.status, 200, res.text);
        assert.equal(events.length, 1);
        assert.equal(events[0]!.kind, 'SET');
        assert.equal(events[0]!.xid, xid);
        assert.deepEqual(events[0]!.value, { ts: T0 + 2000, value: 5, text: null, annotation: 'set' });
        assert.equal(events[0]!.previous?.ts, T0 + 1000);
        res = await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 4, timestamp: T0 });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(
          events.map((e) => [e.kind, e.value.ts]),
          [
            ['SET', T0 + 2000],
            ['SET', T0],
          ],
        );
      });

      it('a refused write publishes nothing', async () => {
        const xid = await createPoint('NUMERIC');
        assertValidation(await bulk([{ xid, value: 1, timestamp: T0 }, { xid: 'pv-no-such-point', value: 1, timestamp: T0 }]));
        assertError(await viewer.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1 }), 403, 4004);
        assert.deepEqual(events, []);
      });

      it('a throwing listener breaks neither the write nor the other listeners', async () => {
        const xid = await createPoint('NUMERIC');
        let thrown = 0;
        const off = app.service.services.pointValues.bus.subscribe(() => {
          thrown++;
          throw new Error('listener bug');
        });
        try {
          const res = await bulk([
            { xid, value: 1, timestamp: T0 },
            { xid, value: 2, timestamp: T0 + 1 },
          ]);
          assert.equal(res.status, 200, res.text);
          const set = await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 3, timestamp: T0 + 2 });
          assert.equal(set.status, 200, set.text);
        } finally {
          off();
        }
        assert.equal(thrown, 3);
        assert.deepEqual(
          events.map((e) => [e.kind, e.value.ts]),
          [
            ['UPDATE', T0],
            ['UPDATE', T0 + 1],
            ['SET', T0 + 2],
          ],
        );
        assert.deepEqual(await latest(xid), [{ timestamp: T0 + 2, value: 3 }]);
      });
    });
  });
}
