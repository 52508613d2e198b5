// /point-values across its routes on the real service (PGlite or PostgreSQL metadata, the suites'
// value engine): the store's health and authentication on every endpoint.
import assert from 'node:assert/strict';
import { assertError } from './helpers/assertions.js';
import type { TestApp } from './helpers/app.js';
import { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { PV, T0, usePointValuesApp } from './helpers/point-values-app.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { createPoint } = pv;
    let app: TestApp;
    before(() => ({ app } = pv));

    it('GET /health reports the value store ok (DuckDB, or the engine TEST_VALUE_STORE names)', async () => {
      const res = await new ApiClient(app.url).get<{ status: string; values: { engine: string; ok: boolean }; metadata: { ok: boolean } }>('/health');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'ok');
      assert.deepEqual(res.body.values, { engine: app.config.values.engine, ok: true });
      assert.equal(res.body.metadata.ok, true);
    });

    it('needs authentication on every endpoint (401 4008)', async () => {
      const xid = await createPoint('NUMERIC');
      const anonymous = new ApiClient(app.url);
      assertError(await anonymous.get(`${PV}/latest/${xid}`), 401, 4008);
      assertError(await anonymous.get(`${PV}/single/${xid}`), 401, 4008);
      assertError(await anonymous.get(`${PV}/time-period/${xid}`), 401, 4008);
      assertError(await anonymous.get(`${PV}/multiple-arrays/time-period/${xid}`), 401, 4008);
      assertError(await anonymous.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1 }), 401, 4008);
      assertError(await anonymous.post(PV, [{ xid, value: 1, timestamp: T0 }]), 401, 4008);
      assertError(await anonymous.delete(`${PV}/${xid}?from=0&to=1`), 401, 4008);
    });
  });
}
