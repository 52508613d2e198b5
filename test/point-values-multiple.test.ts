// GET /point-values/multiple-arrays/time-period/<xid,xid> on the real service (PGlite or PostgreSQL
// metadata, the suites' value engine).
import assert from 'node:assert/strict';
import { assertError } from './helpers/assertions.js';
import type { ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { assertBadParam, DAY, HOUR, MINUTE, PV, T0, usePointValuesApp } from './helpers/point-values-app.js';
import { parseCsv } from './helpers/csv.js';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    const { createPoint, seed, single } = pv;
    let admin: ApiClient;
    let viewer: ApiClient;
    before(() => ({ admin, viewer } = pv));

    describe('GET /point-values/multiple-arrays/time-period/<xid,xid>', () => {
      let a: string;
      let b: string;
      before(async () => {
        a = await createPoint('NUMERIC');
        b = await createPoint('BINARY');
        await seed(a, [
          [T0, 1],
          [T0 + HOUR, 3],
          [T0 + 2 * HOUR, 5],
        ]);
        await seed(b, [
          [T0 + 10 * MINUTE, true],
          [T0 + HOUR + 10 * MINUTE, false],
        ]);
      });

      it('answers {xid: [...]} for each point, raw or rolled up, with the same parameters as single', async () => {
        const res = await admin.get<Record<string, unknown>>(`${PV}/multiple-arrays/time-period/${a},${b}?from=${T0}&to=${T0 + 2 * HOUR}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.body), [a, b]);
        assert.deepEqual(res.body[a], (await single(a, { from: T0, to: T0 + 2 * HOUR })).body);
        assert.deepEqual(res.body[b], [
          { timestamp: T0 + 10 * MINUTE, value: true },
          { timestamp: T0 + HOUR + 10 * MINUTE, value: false },
        ]);
        const rolled = await admin.get<Record<string, unknown>>(`${PV}/multiple-arrays/time-period/${a},${b}/COUNT?from=${T0}&to=${T0 + 2 * HOUR}&timePeriodType=HOURS`);
        assert.equal(rolled.status, 200, rolled.text);
        assert.deepEqual(rolled.body, {
          [a]: [
            { timestamp: T0, value: 1 },
            { timestamp: T0 + HOUR, value: 1 },
          ],
          [b]: [
            { timestamp: T0, value: 1 },
            { timestamp: T0 + HOUR, value: 1 },
          ],
        });
        const limited = await admin.get<Record<string, unknown[]>>(`${PV}/multiple-arrays/time-period/${a},${b}?from=${T0}&to=${T0 + DAY}&limit=1`);
        assert.equal(limited.body[a]!.length, 1);
        assert.equal(limited.body[b]!.length, 1);
        // A rollup a point cannot have fails the request.
        assertBadParam(await admin.get(`${PV}/multiple-arrays/time-period/${a},${b}/AVERAGE?from=${T0}&to=${T0 + HOUR}`), 'rollup');
      });

      it('answers Accept: text/csv with one timestamp column and one column per point, rows merged by time, the same values as JSON', async () => {
        const csv = { headers: { accept: 'text/csv' } };
        const raw = await admin.get(`${PV}/multiple-arrays/time-period/${a},${b}?from=${T0}&to=${T0 + 3 * HOUR}`, csv);
        assert.equal(raw.status, 200, raw.text);
        assert.match(raw.headers.get('content-type') ?? '', /^text\/csv/);
        assert.deepEqual(parseCsv(raw.text), [
          ['timestamp', a, b],
          [String(T0), '1', ''],
          [String(T0 + 10 * MINUTE), '', 'true'],
          [String(T0 + HOUR), '3', ''],
          [String(T0 + HOUR + 10 * MINUTE), '', 'false'],
          [String(T0 + 2 * HOUR), '5', ''],
        ]);
        // The same cells as the JSON answer, whatever the order of the XIDs.
        const json = await admin.get<Record<string, { timestamp: number; value: unknown }[]>>(`${PV}/multiple-arrays/time-period/${b},${a}?from=${T0}&to=${T0 + 3 * HOUR}`);
        const table = parseCsv((await admin.get(`${PV}/multiple-arrays/time-period/${b},${a}?from=${T0}&to=${T0 + 3 * HOUR}`, csv)).text);
        assert.deepEqual(table[0], ['timestamp', b, a]);
        for (const [column, xid] of [[1, b], [2, a]] as const) {
          const fromCsv = table.slice(1).filter((r) => r[column] !== '').map((r) => [Number(r[0]), r[column]]);
          assert.deepEqual(fromCsv, json.body[xid]!.map((v) => [v.timestamp, String(v.value)]));
        }
        const rolled = await admin.get(`${PV}/multiple-arrays/time-period/${a},${b}/COUNT?from=${T0}&to=${T0 + 2 * HOUR}&timePeriodType=HOURS`, csv);
        assert.deepEqual(parseCsv(rolled.text), [
          ['timestamp', a, b],
          [String(T0), '1', '1'],
          [String(T0 + HOUR), '1', '1'],
        ]);
        const all = parseCsv((await admin.get(`${PV}/multiple-arrays/time-period/${a}/ALL?from=${T0}&to=${T0 + HOUR}&timePeriodType=HOURS`, csv)).text);
        assert.deepEqual(all[0]!.slice(0, 3), ['timestamp', `${a}.average`, `${a}.arithmeticMean`]);
        assert.equal(all[0]!.length, 12);
        assert.equal(all[1]![all[0]!.indexOf(`${a}.count`)], '1');
        // A point without values in the range still has its column.
        const empty = parseCsv((await admin.get(`${PV}/multiple-arrays/time-period/${a},${b}?from=${T0 + 3 * HOUR}&to=${T0 + 4 * HOUR}`, csv)).text);
        assert.deepEqual(empty, [['timestamp', a, b]]);
        assertBadParam(await admin.get(`${PV}/multiple-arrays/time-period/${a},${b}/AVERAGE?from=${T0}&to=${T0 + HOUR}`, csv), 'rollup');
      });

      it('fails the whole request for an unknown XID (404) or an unreadable one (403)', async () => {
        assertError(await admin.get(`${PV}/multiple-arrays/time-period/${a},pv-no-such-point?from=${T0}&to=${T0 + HOUR}`), 404, -1, 'NOT_FOUND');
        const secret = await createPoint('NUMERIC', { readPermission: [] });
        assertError(await viewer.get(`${PV}/multiple-arrays/time-period/${a},${secret}?from=${T0}&to=${T0 + HOUR}`), 403, 4004);
        assertError(await viewer.get(`${PV}/multiple-arrays/time-period/${secret},${a}/AVERAGE?from=${T0}&to=${T0 + HOUR}`), 403, 4004);
        const ok = await viewer.get<Record<string, unknown>>(`${PV}/multiple-arrays/time-period/${a}?from=${T0}&to=${T0 + HOUR}`);
        assert.equal(ok.status, 200, ok.text);
        assert.deepEqual(Object.keys(ok.body), [a]);
      });

      it('refuses bad parameters with 400 naming them', async () => {
        assertBadParam(await admin.get(`${PV}/multiple-arrays/time-period/${a},${b}?from=${T0 + 1}&to=${T0}`), 'from');
        assertBadParam(await admin.get(`${PV}/multiple-arrays/time-period/${a},${b}/BOGUS`), 'rollup');
        assertBadParam(await admin.get(`${PV}/multiple-arrays/time-period/${a}?bogus=1`), 'bogus');
      });
    });
  });
}
