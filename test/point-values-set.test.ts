// PUT /point-values/<xid> (set a value) on the real service (PGlite or PostgreSQL metadata, the
// suites' value engine): types, permissions, disabled points and errors.
import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import type { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { type DataType, DP, DS, OFF_SOURCE, PV, type SetResult, T0, usePointValuesApp } from './helpers/point-values-app.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { unique, createPoint, latest } = pv;
    let admin: ApiClient;
    let viewer: ApiClient;
    let operator: ApiClient;
    before(() => ({ admin, viewer, operator } = pv));

    describe('PUT /point-values/<xid>', () => {
      it('sets a value: 200 {xid, dataType, value, timestamp, annotation: null}, readable as latest', async () => {
        const xid = await createPoint('NUMERIC');
        const before = Date.now();
        const res = await operator.put<SetResult>(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 12.5 });
        const after = Date.now();
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.body).sort(), ['annotation', 'dataType', 'timestamp', 'value', 'xid']);
        assert.equal(res.body.xid, xid);
        assert.equal(res.body.dataType, 'NUMERIC');
        assert.equal(res.body.value, 12.5);
        assert.equal(res.body.annotation, null);
        assert.ok(res.body.timestamp >= before && res.body.timestamp <= after, 'timestamp defaults to now');
        assert.deepEqual(await latest(xid), [{ timestamp: res.body.timestamp, value: 12.5 }]);
      });

      it('takes a timestamp (epoch ms or ISO) and an annotation', async () => {
        const xid = await createPoint('NUMERIC');
        let res = await admin.put<SetResult>(`${PV}/${xid}`, { dataType: 'NUMERIC', value: '7', timestamp: T0, annotation: 'manual' });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { xid, dataType: 'NUMERIC', value: 7, timestamp: T0, annotation: 'manual' });
        res = await admin.put<SetResult>(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 8, timestamp: '2024-01-01T01:00:01.000+01:00', annotation: null });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { xid, dataType: 'NUMERIC', value: 8, timestamp: T0 + 1000, annotation: null });
        assert.deepEqual(await latest(xid, 5), [
          { timestamp: T0 + 1000, value: 8 },
          { timestamp: T0, value: 7, annotation: 'manual' },
        ]);
      });

      it('shapes the value per data type', async () => {
        const cases: [DataType, unknown, unknown][] = [
          ['BINARY', true, true],
          ['BINARY', 'false', false],
          ['BINARY', 1, true],
          ['MULTISTATE', '3', 3],
          ['ALPHANUMERIC', 'a, "b"', 'a, "b"'],
          ['ALPHANUMERIC', 12, '12'],
        ];
        for (const [dataType, value, shown] of cases) {
          const xid = await createPoint(dataType);
          const res = await admin.put<SetResult>(`${PV}/${xid}`, { dataType, value, timestamp: T0 });
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.body, { xid, dataType, value: shown, timestamp: T0, annotation: null });
          assert.deepEqual(await latest(xid), [{ timestamp: T0, value: shown }]);
        }
      });

      it('refuses a point that is not settable with 422', async () => {
        const xid = await createPoint('NUMERIC', {}, { settable: false });
        const messages = assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1 }));
        assertHasMessage(messages, 'xid', /not settable/);
        assert.deepEqual(await latest(xid), []);
      });

      it('refuses a disabled point and a point of a disabled source with 422; enabling the source makes it work', async () => {
        const off = await createPoint('NUMERIC', { enabled: false });
        assertHasMessage(assertValidation(await admin.put(`${PV}/${off}`, { dataType: 'NUMERIC', value: 1 })), 'xid', /not enabled/);
        const xid = unique('pv-offsrc-set-');
        const created = await admin.post(DP, {
          xid,
          name: xid,
          dataSourceXid: OFF_SOURCE,
          pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' },
        });
        assert.equal(created.status, 201, created.text);
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1 })), 'xid', /not enabled/);
        assert.deepEqual(await latest(off), []);
        assert.deepEqual(await latest(xid), []);
        const enabled = await admin.put(`${DS}/enable-disable/${OFF_SOURCE}`, { enabled: true });
        assert.equal(enabled.status, 200, enabled.text);
        try {
          const res = await admin.put<SetResult>(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1, timestamp: T0 });
          assert.equal(res.status, 200, res.text);
        } finally {
          assert.equal((await admin.put(`${DS}/enable-disable/${OFF_SOURCE}`, { enabled: false })).status, 200);
        }
      });

      it('refuses a dataType mismatch, a missing dataType or value, and a bad value with 422', async () => {
        const xid = await createPoint('NUMERIC');
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'BINARY', value: true })), 'dataType', /NUMERIC/);
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { value: 1 })), 'dataType', 'is required');
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC' })), 'value', 'is required');
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 'many' })), 'value', 'must be a number');
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1, timestamp: 'now' })), 'timestamp', /must be epoch/);
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1, annotation: 3 })), 'annotation', 'must be a string');
        assertValidation(await admin.put(`${PV}/${xid}`, [1]));
        assert.deepEqual(await latest(xid), []);
      });

      it('refuses a timestamp outside ±8.64e15 ms with 422, not a server error', async () => {
        const xid = await createPoint('NUMERIC');
        assertHasMessage(assertValidation(await admin.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1, timestamp: 9e15 })), 'timestamp', /must be epoch/);
        assert.deepEqual(await latest(xid), []);
      });

      it('refuses a caller without set permission with 403, and an unknown point with 404 -1', async () => {
        const xid = await createPoint('NUMERIC');
        assertError(await viewer.put(`${PV}/${xid}`, { dataType: 'NUMERIC', value: 1 }), 403, 4004, 'ACCESS_DENIED');
        const adminOnly = await createPoint('NUMERIC', { setPermission: [] });
        assertError(await operator.put(`${PV}/${adminOnly}`, { dataType: 'NUMERIC', value: 1 }), 403, 4004);
        assert.deepEqual(await latest(xid), []);
        assertError(await admin.put(`${PV}/pv-no-such-point`, { dataType: 'NUMERIC', value: 1 }), 404, -1, 'NOT_FOUND');
      });

      it('refuses malformed JSON and a wrong content type with 400 4005', async () => {
        const xid = await createPoint('NUMERIC');
        assertError(await admin.request('PUT', `${PV}/${xid}`, { rawBody: '{"dataType":' }), 400, 4005);
        assertError(await admin.request('PUT', `${PV}/${xid}`, { rawBody: '{}', headers: { 'content-type': 'text/plain' } }), 400, 4005);
      });
    });
  });
}
