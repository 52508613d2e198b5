// GET /point-values/single/<xid> (raw values of a range) on the real service (PGlite or PostgreSQL
// metadata, the suites' value engine): ranges, limits, the aliases, CSV and errors.
import assert from 'node:assert/strict';
import { assertError } from './helpers/assertions.js';
import type { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { assertBadParam, DAY, HOUR, PV, type RawValue, T0, usePointValuesApp } from './helpers/point-values-app.js';
import { parseCsv } from './helpers/csv.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { createPoint, seed, single, raw } = pv;
    let admin: ApiClient;
    let viewer: ApiClient;
    let operator: ApiClient;
    before(() => ({ admin, viewer, operator } = pv));

    describe('GET /point-values/single/<xid> (raw)', () => {
      let xid: string;
      const values: [number, number][] = [
        [T0, 0],
        [T0 + 1000, 1],
        [T0 + 2000, 2],
        [T0 + 3000, 3],
        [T0 + 4000, 4],
      ];
      before(async () => {
        xid = await createPoint('NUMERIC');
        await seed(xid, values);
      });

      it('answers [from, to): from inclusive, to exclusive, oldest first', async () => {
        const got = await raw(xid, T0 + 1000, T0 + 3000);
        assert.deepEqual(got, [
          { timestamp: T0 + 1000, value: 1 },
          { timestamp: T0 + 2000, value: 2 },
        ]);
        assert.deepEqual(await raw(xid, T0 + 1000, T0 + 1001), [{ timestamp: T0 + 1000, value: 1 }]);
        assert.deepEqual(await raw(xid, T0 + 1001, T0 + 2000), []);
        assert.deepEqual(await raw(xid, T0 + 2000, T0 + 2000), [], 'from = to is an empty range');
        assert.equal((await raw(xid, T0 - DAY, T0 + DAY)).length, 5);
      });

      it('takes ISO 8601 with an offset and epoch ms', async () => {
        const res = await single(xid, { from: '2024-01-01T01:00:01.000+01:00', to: '2024-01-01T00:00:03Z' });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, [
          { timestamp: T0 + 1000, value: 1 },
          { timestamp: T0 + 2000, value: 2 },
        ]);
      });

      it('limits with limit=N and limit(N)', async () => {
        let res = await single(xid, { from: T0, to: T0 + DAY, limit: 2 });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(
          (res.body as RawValue[]).map((v) => v.timestamp),
          [T0, T0 + 1000],
        );
        res = await admin.get(`${PV}/single/${xid}?from=${T0 + 1000}&to=${T0 + DAY}&limit(3)`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(
          (res.body as RawValue[]).map((v) => v.timestamp),
          [T0 + 1000, T0 + 2000, T0 + 3000],
        );
        assertBadParam(await admin.get(`${PV}/single/${xid}?from=${T0}&to=${T0 + DAY}&limit(0)`), 'limit');
        assertBadParam(await single(xid, { from: T0, to: T0 + DAY, limit: 0 }), 'limit');
        assertBadParam(await single(xid, { from: T0, to: T0 + DAY, limit: 'x' }), 'limit');
      });

      it('defaults to to = now and from = to − 24 h', async () => {
        const p = await createPoint('NUMERIC');
        const now = Date.now();
        await seed(p, [
          [now - 25 * HOUR, 1],
          [now - 23 * HOUR, 2],
          [now - 1000, 3],
          [now + HOUR, 4],
        ]);
        let res = await admin.get(`${PV}/single/${p}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(
          (res.body as RawValue[]).map((v) => v.value),
          [2, 3],
        );
        // Only `to`: from = to − 24 h (so the value 23 h before now is out, the future one in).
        res = await single(p, { to: now + 2 * HOUR });
        assert.deepEqual(
          (res.body as RawValue[]).map((v) => v.value),
          [3, 4],
        );
        // Only `from`: to = now.
        res = await single(p, { from: now - 30 * HOUR });
        assert.deepEqual(
          (res.body as RawValue[]).map((v) => v.value),
          [1, 2, 3],
        );
      });

      it('refuses from after to with 400 naming from', async () => {
        assertBadParam(await single(xid, { from: T0 + 1, to: T0 }), 'from');
        // from defaults to to − 24 h, so a given from after now fails too.
        assertBadParam(await single(xid, { from: Date.now() + DAY }), 'from');
      });

      it('refuses bad dates with 400 naming the parameter', async () => {
        assertBadParam(await single(xid, { from: 'yesterday', to: T0 }), 'from');
        assertBadParam(await single(xid, { from: T0, to: '2024-01-02T00:00:00' }), 'to');
        assertBadParam(await single(xid, { from: '2024-02-30T00:00:00Z', to: T0 }), 'from');
        assertBadParam(await single(xid, { from: T0, to: '1.5' }), 'to');
        assertBadParam(await admin.get(`${PV}/single/${xid}?from=1&from=2`), 'from');
      });

      it('refuses unknown parameters with 400 naming them', async () => {
        assertBadParam(await single(xid, { from: T0, to: T0 + 1, start: T0 }), 'start');
        assertBadParam(await admin.get(`${PV}/single/${xid}?limit(2)&order=desc`), 'order');
      });

      it('answers 404 -1 for an unknown point and 403 for an unreadable one', async () => {
        assertError(await admin.get(`${PV}/single/pv-no-such-point`), 404, -1, 'NOT_FOUND');
        const secret = await createPoint('NUMERIC', { readPermission: ['operators'] });
        assertError(await viewer.get(`${PV}/single/${secret}`), 403, 4004);
        assertError(await viewer.get(`${PV}/time-period/${secret}/AVERAGE?timePeriodType=HOURS`), 403, 4004);
        assert.equal((await operator.get(`${PV}/single/${secret}`)).status, 200);
      });

      it('answers CSV rows timestamp,value,annotation, quoting text with commas, quotes and newlines', async () => {
        const alpha = await createPoint('ALPHANUMERIC');
        await seed(alpha, [
          [T0, 'plain'],
          [T0 + 1, 'a, b', 'note, with comma'],
          [T0 + 2, 'say "hi"'],
          [T0 + 3, 'two\nlines'],
        ]);
        const res = await single(alpha, { from: T0, to: T0 + 10 });
        assert.equal(res.status, 200);
        const csv = await admin.get(`${PV}/single/${alpha}?from=${T0}&to=${T0 + 10}`, { headers: { accept: 'text/csv' } });
        assert.equal(csv.status, 200, csv.text);
        assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
        assert.ok(csv.text.includes(`${T0 + 1},"a, b","note, with comma"\r\n`), csv.text);
        assert.ok(csv.text.includes(`${T0 + 2},"say ""hi""",\r\n`), csv.text);
        assert.deepEqual(parseCsv(csv.text), [
          ['timestamp', 'value', 'annotation'],
          [String(T0), 'plain', ''],
          [String(T0 + 1), 'a, b', 'note, with comma'],
          [String(T0 + 2), 'say "hi"', ''],
          [String(T0 + 3), 'two\nlines', ''],
        ]);
        const bin = await createPoint('BINARY');
        await seed(bin, [
          [T0, true],
          [T0 + 1, false],
        ]);
        const binCsv = await admin.get(`${PV}/single/${bin}?from=${T0}&to=${T0 + 10}`, { headers: { accept: 'text/csv' } });
        assert.deepEqual(parseCsv(binCsv.text), [
          ['timestamp', 'value', 'annotation'],
          [String(T0), 'true', ''],
          [String(T0 + 1), 'false', ''],
        ]);
        const empty = await admin.get(`${PV}/single/${bin}?from=${T0 + 100}&to=${T0 + 200}`, { headers: { accept: 'text/csv' } });
        assert.equal(empty.text, 'timestamp,value,annotation\r\n');
      });

      it('answers JSON when the client prefers it or accepts anything', async () => {
        for (const accept of ['application/json', '*/*', 'application/json, text/csv;q=0.5']) {
          const res = await admin.get(`${PV}/single/${xid}?from=${T0}&to=${T0 + 1}`, { headers: { accept } });
          assert.match(res.headers.get('content-type') ?? '', /application\/json/, accept);
          assert.deepEqual(res.body, [{ timestamp: T0, value: 0 }]);
        }
      });
    });
  });
}
