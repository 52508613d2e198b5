// POST /point-values (bulk ingest) on the real service (PGlite or PostgreSQL metadata, the suites'
// value engine): every data type, replacement, refusals and limits.
import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import type { TestApp } from './helpers/app.js';
import type { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { type BulkEntry, type DataType, DAY, DP, MiB, OFF_SOURCE, PV, type RawValue, T0, usePointValuesApp } from './helpers/point-values-app.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { unique, createPoint, bulk, seed, single, raw, latest } = pv;
    let app: TestApp;
    let admin: ApiClient;
    let viewer: ApiClient;
    let operator: ApiClient;
    before(() => ({ app, admin, viewer, operator } = pv));

    describe('POST /point-values (bulk)', () => {
      it('writes every data type: 200 {written: N}, readable at once (read-your-writes)', async () => {
        const num = await createPoint('NUMERIC');
        const multi = await createPoint('MULTISTATE');
        const bin = await createPoint('BINARY');
        const alpha = await createPoint('ALPHANUMERIC');
        const t = T0 + 7 * DAY;
        const res = await bulk([
          { xid: num, value: 21.5, timestamp: t, annotation: 'calibrated' },
          { xid: num, value: '22.25', timestamp: t + 1000, dataType: 'NUMERIC' },
          { xid: multi, value: 3, timestamp: t },
          { xid: multi, value: '4', timestamp: new Date(t + 1000).toISOString() },
          { xid: bin, value: true, timestamp: t },
          { xid: bin, value: 0, timestamp: t + 1000 },
          { xid: bin, value: 'true', timestamp: '2024-01-08T01:00:02.000+01:00' },
          { xid: alpha, value: 'on, "really"', timestamp: t },
          { xid: alpha, value: 42, timestamp: t + 1000 },
        ]);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { written: 9 });
        // Read at once, no waiting: the write resolved only when durable and visible.
        assert.deepEqual(await raw(num, t, t + DAY), [
          { timestamp: t, value: 21.5, annotation: 'calibrated' },
          { timestamp: t + 1000, value: 22.25 },
        ]);
        assert.deepEqual(await raw(multi, t, t + DAY), [
          { timestamp: t, value: 3 },
          { timestamp: t + 1000, value: 4 },
        ]);
        assert.deepEqual(await raw(bin, t, t + DAY), [
          { timestamp: t, value: true },
          { timestamp: t + 1000, value: false },
          { timestamp: t + 2000, value: true },
        ]);
        assert.deepEqual(await raw(alpha, t, t + DAY), [
          { timestamp: t, value: 'on, "really"' },
          { timestamp: t + 1000, value: '42' },
        ]);
        assert.deepEqual(await latest(num), [{ timestamp: t + 1000, value: 22.25 }]);
        assert.deepEqual(await latest(bin), [{ timestamp: t + 2000, value: true }]);
      });

      it('accepts an empty array: {written: 0}', async () => {
        const res = await bulk([]);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { written: 0 });
      });

      it('writes to a disabled point and a point of a disabled source (bulk ingest ignores the enabled state)', async () => {
        const off = await createPoint('NUMERIC', { enabled: false });
        const offSource = unique('pv-offsrc-');
        const created = await admin.post(DP, {
          xid: offSource,
          name: offSource,
          dataSourceXid: OFF_SOURCE,
          pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' },
        });
        assert.equal(created.status, 201, created.text);
        const res = await bulk([
          { xid: off, value: 1, timestamp: T0 },
          { xid: offSource, value: 2, timestamp: T0 },
        ]);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(await raw(off, T0, T0 + 1), [{ timestamp: T0, value: 1 }]);
        assert.deepEqual(await raw(offSource, T0, T0 + 1), [{ timestamp: T0, value: 2 }]);
      });

      it('replaces a value written again at the same timestamp, within one request and across requests', async () => {
        const xid = await createPoint('NUMERIC');
        await seed(xid, [
          [T0, 1],
          [T0, 2, 'second'],
          [T0 + 1, 5],
        ]);
        assert.deepEqual(await raw(xid, T0, T0 + 10), [
          { timestamp: T0, value: 2, annotation: 'second' },
          { timestamp: T0 + 1, value: 5 },
        ]);
        await seed(xid, [[T0, 3]]);
        assert.deepEqual(await raw(xid, T0, T0 + 10), [
          { timestamp: T0, value: 3 },
          { timestamp: T0 + 1, value: 5 },
        ]);
      });

      it('refuses an unknown xid with 422 [i].xid "Data point not found" and writes nothing', async () => {
        const xid = await createPoint('NUMERIC');
        const res = await bulk([
          { xid, value: 1, timestamp: T0 },
          { xid: 'pv-no-such-point', value: 2, timestamp: T0 },
        ]);
        const messages = assertValidation(res);
        assertHasMessage(messages, '[1].xid', 'Data point not found');
        assert.equal(messages.length, 1);
        assert.deepEqual(await raw(xid, T0 - DAY, T0 + DAY), []);
        assert.deepEqual(await latest(xid), []);
      });

      it('refuses entries without an xid, with a non-string xid, and non-object entries', async () => {
        const xid = await createPoint('NUMERIC');
        const messages = assertValidation(await bulk([{ xid, value: 1, timestamp: T0 }, { value: 1, timestamp: T0 } as BulkEntry, { xid: 7, value: 1, timestamp: T0 } as unknown as BulkEntry, 'x' as unknown as BulkEntry, null as unknown as BulkEntry]));
        assertHasMessage(messages, '[1].xid', 'is required');
        assertHasMessage(messages, '[2].xid', 'must be a string');
        assertHasMessage(messages, '[3]', /must be an object/);
        assertHasMessage(messages, '[4]', /must be an object/);
        assert.deepEqual(await raw(xid, T0 - DAY, T0 + DAY), []);
      });

      it('refuses a body that is not an array with 422', async () => {
        const messages = assertValidation(await admin.post(PV, { xid: 'x', value: 1, timestamp: T0 }));
        assert.ok(messages.some((m) => /array/.test(m.message)));
      });

      const badValues: [DataType, unknown, string][] = [
        ['NUMERIC', 'abc', 'must be a number'],
        ['NUMERIC', '', 'must be a number'],
        ['NUMERIC', null, 'must be a number'],
        ['NUMERIC', [1], 'must be a number'],
        ['NUMERIC', { v: 1 }, 'must be a number'],
        ['MULTISTATE', 1.5, 'must be an integer'],
        ['MULTISTATE', '2.5', 'must be an integer'],
        ['MULTISTATE', true, 'must be an integer'],
        ['BINARY', 2, 'must be true or false'],
        ['BINARY', 'yes', 'must be true or false'],
        ['BINARY', null, 'must be true or false'],
        ['ALPHANUMERIC', null, 'must be a string'],
        ['ALPHANUMERIC', { a: 1 }, 'must be a string'],
        ['ALPHANUMERIC', 'x'.repeat(65_536), 'must be at most 65535 characters'],
      ];
      it('refuses values of the wrong type per data type with 422 [i].value, writing nothing', async () => {
        const points = new Map<DataType, string>();
        for (const t of ['NUMERIC', 'MULTISTATE', 'BINARY', 'ALPHANUMERIC'] as DataType[]) points.set(t, await createPoint(t));
        const good: Record<DataType, unknown> = { NUMERIC: 1, MULTISTATE: 1, BINARY: true, ALPHANUMERIC: 'ok' };
        for (const [dataType, value, message] of badValues) {
          const xid = points.get(dataType)!;
          const res = await bulk([
            { xid, value: good[dataType], timestamp: T0 },
            { xid, value, timestamp: T0 + 1 },
          ]);
          const messages = assertValidation(res);
          assertHasMessage(messages, '[1].value', message);
        }
        // A missing value.
        assertHasMessage(assertValidation(await bulk([{ xid: points.get('NUMERIC')!, timestamp: T0 }])), '[0].value', 'is required');
        for (const xid of points.values()) assert.deepEqual(await raw(xid, T0 - DAY, T0 + DAY), [], `${xid}: nothing written`);
      });

      it('refuses a missing or bad timestamp with 422 [i].timestamp, writing nothing', async () => {
        const xid = await createPoint('NUMERIC');
        const cases: [unknown, string | RegExp][] = [
          [undefined, 'is required'],
          ['yesterday', /must be epoch milliseconds/],
          ['2024-01-01T00:00:00', /must be epoch milliseconds/], // no offset
          ['2024-13-45T00:00:00Z', /must be epoch milliseconds/],
          [1.5, /must be epoch milliseconds/],
          [null, /./],
          [true, /must be epoch milliseconds/],
          [Number.MAX_SAFE_INTEGER + 2, /must be epoch milliseconds/],
        ];
        for (const [timestamp, message] of cases) {
          const entry: BulkEntry = { xid, value: 2 };
          if (timestamp !== undefined) entry.timestamp = timestamp;
          const messages = assertValidation(await bulk([{ xid, value: 1, timestamp: T0 }, entry]));
          assertHasMessage(messages, '[1].timestamp', message);
        }
        assert.deepEqual(await latest(xid), []);
      });

      it("refuses a timestamp outside the store's range (±8.64e15 ms; QuestDB: 1970 to 9999) with 422, not a server error", async () => {
        const xid = await createPoint('NUMERIC');
        // QuestDB's designated timestamp holds 1970-01-01 to 9999-12-31 only.
        const [min, max] = app.config.values.questdbIlp ? [0, 253_402_300_799_999] : [-8.64e15, 8.64e15];
        for (const timestamp of [max + 1, 9_000_000_000_000_000, -9_000_000_000_000_000, min - 1]) {
          const res = await bulk([
            { xid, value: 1, timestamp: T0 },
            { xid, value: 2, timestamp },
          ]);
          assertHasMessage(assertValidation(res), '[1].timestamp', /must be epoch milliseconds .*, from .* to /);
        }
        assertHasMessage(
          assertValidation(await admin.put(`/rest/latest/point-values/${xid}`, { dataType: 'NUMERIC', value: 1, timestamp: max + 1 })),
          'timestamp',
          /must be epoch milliseconds .*, from .* to /,
        );
        assert.deepEqual(await latest(xid), []);
        // The edges of the range are fine.
        await seed(xid, [
          [min, 1],
          [max, 2],
        ]);
        assert.deepEqual(await latest(xid, 2), [
          { timestamp: max, value: 2 },
          { timestamp: min, value: 1 },
        ]);
      });

      it('refuses a dataType that differs from the point with 422 [i].dataType, writing nothing', async () => {
        const xid = await createPoint('NUMERIC');
        const messages = assertValidation(
          await bulk([
            { xid, value: 1, timestamp: T0, dataType: 'NUMERIC' },
            { xid, value: 1, timestamp: T0 + 1, dataType: 'BINARY' },
          ]),
        );
        assertHasMessage(messages, '[1].dataType', /NUMERIC/);
        assert.deepEqual(await latest(xid), []);
      });

      it('refuses a non-string annotation with 422 [i].annotation', async () => {
        const xid = await createPoint('NUMERIC');
        assertHasMessage(assertValidation(await bulk([{ xid, value: 1, timestamp: T0, annotation: 5 }])), '[0].annotation', 'must be a string');
        assert.deepEqual(await latest(xid), []);
      });

      it('reports every bad entry at once', async () => {
        const xid = await createPoint('BINARY');
        const messages = assertValidation(
          await bulk([
            { xid, value: 7, timestamp: 'soon' },
            { xid: 'pv-missing', value: 1, timestamp: T0 },
            { xid, value: true, timestamp: T0 },
            { xid, value: true, timestamp: T0, dataType: 'NUMERIC' },
          ]),
        );
        assertHasMessage(messages, '[0].value', 'must be true or false');
        assertHasMessage(messages, '[0].timestamp', /must be epoch/);
        assertHasMessage(messages, '[1].xid', 'Data point not found');
        assertHasMessage(messages, '[3].dataType', /BINARY/);
        assert.ok(!messages.some((m) => m.property.startsWith('[2]')));
      });

      it('refuses with 403 when the caller lacks set permission on any point, writing nothing', async () => {
        const settable = await createPoint('NUMERIC');
        const adminOnly = await createPoint('NUMERIC', { setPermission: [] });
        // The viewer may set neither.
        assertError(await bulk([{ xid: settable, value: 1, timestamp: T0 }], viewer), 403, 4004, 'ACCESS_DENIED');
        // The operator may set one of them: the whole request fails.
        const res = await bulk(
          [
            { xid: settable, value: 1, timestamp: T0 },
            { xid: adminOnly, value: 1, timestamp: T0 },
          ],
          operator,
        );
        assertError(res, 403, 4004, 'ACCESS_DENIED');
        assert.deepEqual(await latest(settable), []);
        assert.deepEqual(await latest(adminOnly), []);
        // With set permission on every point: fine.
        const ok = await bulk([{ xid: settable, value: 1, timestamp: T0 }], operator);
        assert.equal(ok.status, 200, ok.text);
        assert.deepEqual(await latest(settable), [{ timestamp: T0, value: 1 }]);
      });

      it('accepts a body over 1 MiB (the bulk limit is 16 MiB)', async () => {
        const xid = await createPoint('NUMERIC');
        const entries: BulkEntry[] = [];
        for (let i = 0; i < 30_000; i++) entries.push({ xid, value: i * 0.5, timestamp: T0 + i * 1000, annotation: i % 1000 === 0 ? 'mark' : undefined });
        const body = JSON.stringify(entries);
        assert.ok(body.length > 1.5 * MiB, `${body.length}`);
        const res = await admin.request<{ written: number }>('POST', PV, { rawBody: body });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { written: 30_000 });
        const all = await single(xid, { from: T0, to: T0 + 30_000 * 1000, 'limit': 100_000 });
        assert.equal((all.body as RawValue[]).length, 30_000);
        assert.deepEqual(await latest(xid), [{ timestamp: T0 + 29_999_000, value: 29_999 * 0.5 }]);
      });

      it('refuses a body over 16 MiB with 413 (4005)', async () => {
        const xid = await createPoint('NUMERIC');
        const entry = JSON.stringify({ xid, value: 1, timestamp: T0 });
        const body = `[${entry}${' '.repeat(16 * MiB)}]`;
        const res = await admin.request('POST', PV, { rawBody: body });
        assertError(res, 413, 4005, 'BAD_REQUEST');
        assert.deepEqual(await latest(xid), []);
        // Just under the limit is fine.
        const fits = `[${entry}${' '.repeat(16 * MiB - entry.length - 2)}]`;
        assert.equal(Buffer.byteLength(fits), 16 * MiB);
        const ok = await admin.request('POST', PV, { rawBody: fits });
        assert.equal(ok.status, 200, ok.text);
      });

      it('refuses malformed JSON, a wrong content type and a missing body with 400 4005', async () => {
        assertError(await admin.request('POST', PV, { rawBody: '[{"xid": "a", ' }), 400, 4005, 'BAD_REQUEST');
        assertError(await admin.request('POST', PV, { rawBody: '[]', headers: { 'content-type': 'text/plain' } }), 400, 4005);
        assertError(await admin.request('POST', PV), 400, 4005);
      });
    });
  });
}
