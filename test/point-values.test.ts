// /point-values over HTTP on the real service (PGlite or PostgreSQL metadata, DuckDB values): bulk
// ingest, set, latest, ranges, rollups (checked against the plain reference), the aliases, CSV,
// delete, permissions and errors; and the live-value bus the pipeline publishes on.
import assert from 'node:assert/strict';
import type { LiveValue } from '../src/values/live/bus.js';
import { assertError, assertHasMessage, assertValidation, type ErrorBodyShape } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, loggedIn, type Response } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { referenceRollup, referenceStoredRollup, type TimedValue } from './helpers/reference-rollup.js';
import { parseCsv } from './helpers/csv.js';
import { STATISTIC_KEY, STATISTICS } from './helpers/rollup-checks.js';

const PV = '/rest/latest/point-values';
const DP = '/rest/latest/data-points';
const DS = '/rest/latest/data-sources';
const PASSWORD = 'secret-password-1';
const MiB = 1024 * 1024;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** 2024-01-01T00:00:00Z: the rollup series lives around here, safely in the past. */
const T0 = Date.UTC(2024, 0, 1);

type DataType = 'NUMERIC' | 'MULTISTATE' | 'BINARY' | 'ALPHANUMERIC';

interface RawValue {
  timestamp: number;
  value: number | boolean | string | null;
  annotation?: string;
}

interface PeriodValue<T = unknown> {
  timestamp: number;
  value: T;
}

interface SetResult {
  xid: string;
  dataType: string;
  value: unknown;
  timestamp: number;
  annotation: string | null;
}

interface BulkEntry {
  xid: string;
  value?: unknown;
  timestamp?: unknown;
  dataType?: string;
  annotation?: unknown;
}

const ALL_KEYS = Object.values(STATISTIC_KEY);

function near(actual: unknown, expected: number | null, what: string): void {
  if (expected === null) {
    assert.equal(actual, null, `${what}: expected null, got ${JSON.stringify(actual)}`);
    return;
  }
  assert.equal(typeof actual, 'number', `${what}: expected ${expected}, got ${JSON.stringify(actual)}`);
  const diff = Math.abs((actual as number) - expected);
  assert.ok(diff <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${String(actual)} != ${expected}`);
}

/** The named parameter appears in the 400's message. */
function assertBadParam(res: Response, name: string): ErrorBodyShape {
  const body = assertError(res, 400, 4005, 'BAD_REQUEST');
  assert.ok(body.message.includes(name), `message does not name ${name}: ${body.message}`);
  return body;
}

function query(params: Record<string, string | number | boolean | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) if (v !== undefined) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.join('&');
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API (${engine})`, function () {
    this.timeout(60_000);
    let app: TestApp;
    let admin: ApiClient;
    /** role "user" only: reads public points, sets and edits nothing. */
    let viewer: ApiClient;
    /** roles "user" and "operators": sets the default test points, edits none of them. */
    let operator: ApiClient;
    let seq = 0;
    const unique = (prefix: string) => `${prefix}${++seq}`;

    const SOURCE = 'pv-src';
    const OFF_SOURCE = 'pv-src-off';

    /** Creates a settable point (set: operators, read: user, edit: superadmin) and returns its xid. */
    async function createPoint(dataType: DataType, extra: Record<string, unknown> = {}, locator: Record<string, unknown> = {}): Promise<string> {
      const xid = unique(`pv-${dataType.toLowerCase()}-`);
      const res = await admin.post(DP, {
        xid,
        name: xid,
        dataSourceXid: SOURCE,
        pointLocator: { dataType, settable: true, changeType: 'NO_CHANGE', ...locator },
        setPermission: ['operators'],
        ...extra,
      });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    async function bulk(entries: BulkEntry[], as = admin): Promise<Response<{ written: number }>> {
      return as.post<{ written: number }>(PV, entries);
    }

    async function seed(xid: string, values: [ts: number, value: unknown, annotation?: string][]): Promise<void> {
      const res = await bulk(values.map(([timestamp, value, annotation]) => ({ xid, timestamp, value, ...(annotation === undefined ? {} : { annotation }) })));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { written: values.length });
    }

    async function single(xid: string, params: Record<string, string | number | boolean | undefined>, as = admin): Promise<Response> {
      return as.get(`${PV}/single/${encodeURIComponent(xid)}?${query(params)}`);
    }

    async function raw(xid: string, from: number, to: number, as = admin): Promise<RawValue[]> {
      const res = await single(xid, { from, to }, as);
      assert.equal(res.status, 200, res.text);
      return res.body as RawValue[];
    }

    /** The latest values; the newest (the current one) says it is reliable, as no source marks these points. */
    async function latest(xid: string, limit?: number, as = admin): Promise<RawValue[]> {
      const res = await as.get<(RawValue & { unreliable?: boolean })[]>(`${PV}/latest/${encodeURIComponent(xid)}${limit === undefined ? '' : `?limit=${limit}`}`);
      assert.equal(res.status, 200, res.text);
      return res.body.map(({ unreliable, ...v }, i) => {
        assert.equal(unreliable, i === 0 ? false : undefined, 'only the current value says whether it is reliable');
        return v;
      });
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
      let res = await admin.post(DS, { xid: SOURCE, name: 'Historian device', modelType: 'VIRTUAL', enabled: true });
      assert.equal(res.status, 201, res.text);
      res = await admin.post(DS, { xid: OFF_SOURCE, name: 'Switched off', modelType: 'VIRTUAL', enabled: false });
      assert.equal(res.status, 201, res.text);
    });
    after(() => app?.stop());

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

    describe('rollups', () => {
      /** A small series around T0: one value before it (in force at T0), values inside several hours. */
      const SERIES: TimedValue<number>[] = [
        { ts: T0 - 30 * MINUTE, value: 10 },
        { ts: T0 + 10 * MINUTE, value: 20 },
        { ts: T0 + 25 * MINUTE, value: 5 },
        { ts: T0 + 70 * MINUTE, value: 30 },
        { ts: T0 + 130 * MINUTE, value: -4 },
        { ts: T0 + 130 * MINUTE + 1, value: 6.5 },
        { ts: T0 + 200 * MINUTE, value: 8 },
        { ts: T0 + 5 * HOUR, value: 100 },
      ];
      let xid: string;
      before(async () => {
        xid = await createPoint('NUMERIC', { rollup: 'MAXIMUM' });
        await seed(
          xid,
          SERIES.map((v) => [v.ts, v.value]),
        );
      });

      /** Requests every statistic for the given window and checks it against the reference. */
      async function checkAll(from: number, to: number, periodType: string | undefined, periods: number | undefined, bounds: number[]): Promise<void> {
        const expected = referenceRollup(SERIES, bounds, to);
        for (const rollup of STATISTICS) {
          const res = await single(xid, { from, to, rollup, timePeriodType: periodType, timePeriods: periods });
          assert.equal(res.status, 200, `${rollup}: ${res.text}`);
          const got = res.body as PeriodValue[];
          assert.deepEqual(
            got.map((p) => p.timestamp),
            bounds.slice(0, -1),
            `${rollup} period starts`,
          );
          got.forEach((p, i) => {
            assert.deepEqual(Object.keys(p).sort(), ['timestamp', 'value']);
            near(p.value, expected[i]![STATISTIC_KEY[rollup]], `${rollup} period ${i}`);
          });
        }
        const all = await single(xid, { from, to, rollup: 'ALL', timePeriodType: periodType, timePeriods: periods });
        assert.equal(all.status, 200, all.text);
        (all.body as PeriodValue<Record<string, unknown>>[]).forEach((p, i) => {
          assert.deepEqual(Object.keys(p.value).sort(), [...ALL_KEYS].sort(), 'ALL has every statistic');
          for (const key of ALL_KEYS) near(p.value[key], expected[i]![key], `ALL.${key} period ${i}`);
        });
      }

      it('every statistic per hour matches the reference (hour-aligned: answered from buckets)', async () => {
        const bounds = [0, 1, 2, 3, 4].map((h) => T0 + h * HOUR);
        await checkAll(T0, T0 + 4 * HOUR, 'HOURS', undefined, bounds);
      });

      it('every statistic over unaligned periods matches the reference (raw path)', async () => {
        const from = T0 + 5 * MINUTE;
        const to = T0 + 215 * MINUTE;
        const bounds = [from, from + 45 * MINUTE, from + 90 * MINUTE, from + 135 * MINUTE, from + 180 * MINUTE, to];
        await checkAll(from, to, 'MINUTES', 45, bounds);
      });

      it('without timePeriodType the whole range is one period', async () => {
        await checkAll(T0, T0 + 6 * HOUR, undefined, undefined, [T0, T0 + 6 * HOUR]);
        await checkAll(T0 - HOUR, T0 + 150 * MINUTE, undefined, undefined, [T0 - HOUR, T0 + 150 * MINUTE]);
      });

      it('timePeriods steps by several units; the last period is cut at to', async () => {
        await checkAll(T0, T0 + 5 * HOUR, 'HOURS', 2, [T0, T0 + 2 * HOUR, T0 + 4 * HOUR, T0 + 5 * HOUR]);
      });

      it('answers null (COUNT 0) for periods with nothing to say', async () => {
        const res = await single(xid, { from: T0 - 3 * HOUR, to: T0 - HOUR, rollup: 'AVERAGE', timePeriodType: 'HOURS' });
        assert.deepEqual(res.body, [
          { timestamp: T0 - 3 * HOUR, value: null },
          { timestamp: T0 - 2 * HOUR, value: null },
        ]);
        const count = await single(xid, { from: T0 - 3 * HOUR, to: T0 - 2 * HOUR, rollup: 'COUNT', timePeriodType: 'HOURS' });
        assert.deepEqual(count.body, [{ timestamp: T0 - 3 * HOUR, value: 0 }]);
      });

      it('the newest value stays in force until the earlier of to and now', async () => {
        const p = await createPoint('NUMERIC');
        const now = Date.now();
        await seed(p, [[now - 2 * HOUR, 4]]);
        const res = await single(p, { from: now - 3 * HOUR, to: now + 3 * HOUR, rollup: 'INTEGRAL' });
        assert.equal(res.status, 200, res.text);
        const integral = (res.body as PeriodValue<number>[])[0]!.value;
        // 4 × (about) 2 h in seconds: not 4 × 5 h.
        const twoHours = 4 * 2 * 3600;
        assert.ok(Math.abs(integral - twoHours) < 4 * 60, `integral ${integral} vs ${twoHours}`);
      });

      it('POINT_DEFAULT uses the point rollup; NONE and a point rollup NONE give raw values', async () => {
        const byDefault = await single(xid, { from: T0, to: T0 + 4 * HOUR, rollup: 'POINT_DEFAULT', timePeriodType: 'HOURS' });
        const maximum = await single(xid, { from: T0, to: T0 + 4 * HOUR, rollup: 'MAXIMUM', timePeriodType: 'HOURS' });
        assert.equal(byDefault.status, 200, byDefault.text);
        assert.deepEqual(byDefault.body, maximum.body);
        const none = await single(xid, { from: T0, to: T0 + HOUR, rollup: 'NONE', timePeriodType: 'HOURS' });
        assert.deepEqual(none.body, [
          { timestamp: T0 + 10 * MINUTE, value: 20 },
          { timestamp: T0 + 25 * MINUTE, value: 5 },
        ]);
        const plain = await createPoint('NUMERIC');
        await seed(plain, [[T0, 1]]);
        const rawDefault = await single(plain, { from: T0, to: T0 + HOUR, rollup: 'POINT_DEFAULT', timePeriodType: 'HOURS' });
        assert.deepEqual(rawDefault.body, [{ timestamp: T0, value: 1 }]);
      });

      it('the time-period alias equals single, with the rollup in the path or the query', async () => {
        const params = { from: T0, to: T0 + 4 * HOUR, timePeriodType: 'HOURS' };
        for (const rollup of ['AVERAGE', 'DELTA', 'ALL', 'POINT_DEFAULT']) {
          const expected = await single(xid, { ...params, rollup });
          const viaPath = await admin.get(`${PV}/time-period/${xid}/${rollup}?${query(params)}`);
          const viaQuery = await admin.get(`${PV}/time-period/${xid}?${query({ ...params, rollup })}`);
          assert.equal(viaPath.status, 200, viaPath.text);
          assert.deepEqual(viaPath.body, expected.body, rollup);
          assert.deepEqual(viaQuery.body, expected.body, rollup);
        }
        const rawAlias = await admin.get(`${PV}/time-period/${xid}?from=${T0}&to=${T0 + HOUR}&limit=1`);
        assert.deepEqual(rawAlias.body, (await single(xid, { from: T0, to: T0 + HOUR, limit: 1 })).body);
        assertError(await admin.get(`${PV}/time-period/pv-no-such-point/AVERAGE`), 404, -1);
      });

      it('refuses bad rollup, timePeriodType, timePeriods, timezone and truncate with 400 naming them', async () => {
        const base = { from: T0, to: T0 + 4 * HOUR };
        assertBadParam(await single(xid, { ...base, rollup: 'MEDIAN' }), 'rollup');
        assertBadParam(await single(xid, { ...base, rollup: 'average' }), 'rollup');
        assertBadParam(await admin.get(`${PV}/time-period/${xid}/MEDIAN?${query(base)}`), 'rollup');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'FORTNIGHTS' }), 'timePeriodType');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timePeriods: 0 }), 'timePeriods');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timePeriods: -1 }), 'timePeriods');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timePeriods: 1.5 }), 'timePeriods');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', timePeriods: 'two' }), 'timePeriods');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timezone: 'Mars/Olympus_Mons' }), 'timezone');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timezone: '' }), 'timezone');
        assertBadParam(await single(xid, { ...base, rollup: 'AVERAGE', timePeriodType: 'HOURS', truncate: 'yes' }), 'truncate');
        // An empty range (from = to) has no periods: an empty answer, not an error.
        for (const extra of [{}, { timePeriodType: 'HOURS' }]) {
          const res = await single(xid, { from: T0, to: T0, rollup: 'AVERAGE', ...extra });
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.body, []);
        }
        // Too many periods.
        assertBadParam(await single(xid, { from: 0, to: T0, rollup: 'AVERAGE', timePeriodType: 'MILLISECONDS' }), 'timePeriodType');
      });

      it('refuses numeric-only rollups on non-numeric points with 400 naming rollup; FIRST, LAST, START, COUNT and ALL work', async () => {
        const bin = await createPoint('BINARY', { rollup: 'AVERAGE' });
        const multi = await createPoint('MULTISTATE');
        const alpha = await createPoint('ALPHANUMERIC');
        const binSeries: TimedValue<boolean>[] = [
          { ts: T0 - MINUTE, value: true },
          { ts: T0 + 10 * MINUTE, value: false },
          { ts: T0 + 20 * MINUTE, value: true },
          { ts: T0 + 70 * MINUTE, value: false },
        ];
        const alphaSeries: TimedValue<string>[] = [
          { ts: T0 + 5 * MINUTE, value: 'a, "x"' },
          { ts: T0 + 65 * MINUTE, value: 'b' },
        ];
        await seed(
          bin,
          binSeries.map((v) => [v.ts, v.value]),
        );
        await seed(multi, [
          [T0, 1],
          [T0 + MINUTE, 3],
        ]);
        await seed(
          alpha,
          alphaSeries.map((v) => [v.ts, v.value]),
        );
        const base = { from: T0, to: T0 + 2 * HOUR, timePeriodType: 'HOURS' };
        for (const p of [bin, multi, alpha]) {
          for (const rollup of ['AVERAGE', 'ARITHMETIC_MEAN', 'MINIMUM', 'MAXIMUM', 'SUM', 'DELTA', 'INTEGRAL']) {
            assertBadParam(await single(p, { ...base, rollup }), 'rollup');
          }
        }
        // POINT_DEFAULT resolves to the point's AVERAGE: refused too.
        assertBadParam(await single(bin, { ...base, rollup: 'POINT_DEFAULT' }), 'rollup');

        const bounds = [T0, T0 + HOUR, T0 + 2 * HOUR];
        const binRef = referenceStoredRollup(binSeries, bounds);
        const alphaRef = referenceStoredRollup(alphaSeries, bounds);
        for (const rollup of ['FIRST', 'LAST', 'START', 'COUNT'] as const) {
          const key = rollup.toLowerCase() as 'first' | 'last' | 'start' | 'count';
          const b = await single(bin, { ...base, rollup });
          assert.equal(b.status, 200, b.text);
          assert.deepEqual(
            b.body,
            bounds.slice(0, -1).map((timestamp, i) => ({ timestamp, value: binRef[i]![key] })),
            `BINARY ${rollup}`,
          );
          const a = await single(alpha, { ...base, rollup });
          assert.equal(a.status, 200, a.text);
          assert.deepEqual(
            a.body,
            bounds.slice(0, -1).map((timestamp, i) => ({ timestamp, value: alphaRef[i]![key] })),
            `ALPHANUMERIC ${rollup}`,
          );
        }
        const all = await single(bin, { ...base, rollup: 'ALL' });
        assert.equal(all.status, 200, all.text);
        assert.deepEqual(
          all.body,
          bounds.slice(0, -1).map((timestamp, i) => ({ timestamp, value: binRef[i] })),
        );
        // CSV of ALL: the stored statistics' columns carry the same values as the JSON.
        const allCsv = parseCsv((await admin.get(`${PV}/single/${bin}?${query({ ...base, rollup: 'ALL' })}`, { headers: { accept: 'text/csv' } })).text);
        const header = allCsv[0]!;
        assert.equal(header[0], 'timestamp');
        allCsv.slice(1).forEach((row, i) => {
          assert.equal(Number(row[0]), bounds[i]);
          for (const key of ['first', 'last', 'start', 'count'] as const) {
            const c = header.indexOf(key);
            assert.ok(c > 0, `no ${key} column in ${header.join(',')}`);
            const expected = binRef[i]![key];
            assert.equal(row[c], expected === null ? '' : String(expected), `${key} period ${i}`);
          }
        });
        const countCsv = await admin.get(`${PV}/single/${bin}?${query({ ...base, rollup: 'COUNT' })}`, { headers: { accept: 'text/csv' } });
        assert.equal(countCsv.text, `timestamp,value\r\n${T0},${binRef[0]!.count}\r\n${T0 + HOUR},${binRef[1]!.count}\r\n`);
        const multiFirst = await single(multi, { ...base, rollup: 'LAST' });
        assert.deepEqual(multiFirst.body, [
          { timestamp: T0, value: 3 },
          { timestamp: T0 + HOUR, value: null },
        ]);
      });

      describe('time zones and DST (Europe/Berlin)', () => {
        // 2024-03-31: 02:00 CET → 03:00 CEST (a 23-hour day); 2024-10-27: 03:00 CEST → 02:00 CET (25 hours).
        const springDay = Date.parse('2024-03-31T00:00:00+01:00');
        const springNext = Date.parse('2024-04-01T00:00:00+02:00');
        const autumnDay = Date.parse('2024-10-27T00:00:00+02:00');
        const autumnNext = Date.parse('2024-10-28T00:00:00+01:00');
        let hourly: string;
        const hourlySeries: TimedValue<number>[] = [];
        before(async () => {
          hourly = await createPoint('NUMERIC');
          // One value at every full UTC hour around both changes, value = its index.
          const addRange = (from: number, to: number) => {
            for (let t = from; t < to; t += HOUR) hourlySeries.push({ ts: t, value: hourlySeries.length });
          };
          addRange(springDay - 2 * DAY, springNext + 2 * DAY);
          addRange(autumnDay - 2 * DAY, autumnNext + 2 * DAY);
          await seed(
            hourly,
            hourlySeries.map((v) => [v.ts, v.value]),
          );
        });

        async function periods(params: Record<string, string | number | boolean>): Promise<PeriodValue<number>[]> {
          const res = await single(hourly, params);
          assert.equal(res.status, 200, res.text);
          return res.body as PeriodValue<number>[];
        }

        it('DAYS: local midnights; the spring day has 23 hours, the autumn day 25', async () => {
          const spring = await periods({ from: springDay - DAY, to: springNext + DAY, rollup: 'COUNT', timePeriodType: 'DAYS', timezone: 'Europe/Berlin' });
          assert.deepEqual(spring, [
            { timestamp: springDay - DAY, value: 24 },
            { timestamp: springDay, value: 23 },
            { timestamp: springNext, value: 24 },
          ]);
          const autumn = await periods({ from: autumnDay, to: autumnNext + DAY, rollup: 'COUNT', timePeriodType: 'DAYS', timezone: 'Europe/Berlin' });
          assert.deepEqual(autumn, [
            { timestamp: autumnDay, value: 25 },
            { timestamp: autumnNext, value: 24 },
          ]);
          // In UTC the same range cuts at UTC midnights.
          const utc = await periods({ from: Date.UTC(2024, 2, 31), to: Date.UTC(2024, 3, 1), rollup: 'COUNT', timePeriodType: 'DAYS' });
          assert.deepEqual(utc, [{ timestamp: Date.UTC(2024, 2, 31), value: 24 }]);
        });

        it('DAYS across DST: every statistic matches the reference over the 23- and 25-hour days', async () => {
          for (const bounds of [
            [springDay - DAY, springDay, springNext, springNext + DAY],
            [autumnDay - DAY, autumnDay, autumnNext, autumnNext + DAY],
          ]) {
            const from = bounds[0]!;
            const to = bounds.at(-1)!;
            const expected = referenceRollup(hourlySeries, bounds, to);
            const res = await single(hourly, { from, to, rollup: 'ALL', timePeriodType: 'DAYS', timezone: 'Europe/Berlin' });
            assert.equal(res.status, 200, res.text);
            const got = res.body as PeriodValue<Record<string, unknown>>[];
            assert.deepEqual(
              got.map((p) => p.timestamp),
              bounds.slice(0, -1),
            );
            got.forEach((p, i) => {
              for (const key of ALL_KEYS) near(p.value[key], expected[i]![key], `${new Date(p.timestamp).toISOString()} ${key}`);
            });
          }
        });

        it('HOURS over a local day: 23 periods in spring, 25 in autumn', async () => {
          const spring = await periods({ from: springDay, to: springNext, rollup: 'COUNT', timePeriodType: 'HOURS', timezone: 'Europe/Berlin' });
          assert.equal(spring.length, 23);
          assert.ok(spring.every((p) => p.value === 1));
          assert.deepEqual(
            spring.map((p) => p.timestamp),
            Array.from({ length: 23 }, (_, i) => springDay + i * HOUR),
          );
          const autumn = await periods({ from: autumnDay, to: autumnNext, rollup: 'COUNT', timePeriodType: 'HOURS', timezone: 'Europe/Berlin' });
          assert.equal(autumn.length, 25);
        });

        it('truncate=true moves from down and to up to period boundaries in the zone', async () => {
          // Noon to 13:00 local on the short day → the whole local day.
          const day = await periods({
            from: '2024-03-31T12:00:00+02:00',
            to: '2024-03-31T13:00:00+02:00',
            rollup: 'COUNT',
            timePeriodType: 'DAYS',
            timezone: 'Europe/Berlin',
            truncate: true,
          });
          assert.deepEqual(day, [{ timestamp: springDay, value: 23 }]);
          // Without truncate: just that hour.
          const hour = await periods({
            from: '2024-03-31T12:00:00+02:00',
            to: '2024-03-31T13:00:00+02:00',
            rollup: 'COUNT',
            timePeriodType: 'DAYS',
            timezone: 'Europe/Berlin',
          });
          assert.deepEqual(hour, [{ timestamp: Date.parse('2024-03-31T12:00:00+02:00'), value: 1 }]);
          // HOURS in a half-hour zone: local hours start at :30 UTC.
          const kolkata = await periods({
            from: springDay + 10 * MINUTE,
            to: springDay + 2 * HOUR,
            rollup: 'COUNT',
            timePeriodType: 'HOURS',
            timezone: 'Asia/Kolkata',
            truncate: true,
          });
          assert.deepEqual(
            kolkata.map((p) => p.timestamp),
            [springDay - 30 * MINUTE, springDay + 30 * MINUTE, springDay + 90 * MINUTE],
          );
          assert.deepEqual(
            kolkata.map((p) => p.value),
            [1, 1, 1],
          );
          // truncate=false is the default.
          const untruncated = await periods({ from: springDay + 10 * MINUTE, to: springDay + 2 * HOUR, rollup: 'COUNT', timePeriodType: 'HOURS', truncate: false });
          assert.equal(untruncated[0]!.timestamp, springDay + 10 * MINUTE);
        });

        it('MONTHS step by calendar months in the zone', async () => {
          const res = await periods({
            from: '2024-03-01T00:00:00+01:00',
            to: '2024-05-01T00:00:00+02:00',
            rollup: 'FIRST',
            timePeriodType: 'MONTHS',
            timezone: 'Europe/Berlin',
          });
          assert.deepEqual(
            res.map((p) => p.timestamp),
            [Date.parse('2024-03-01T00:00:00+01:00'), Date.parse('2024-04-01T00:00:00+02:00')],
          );
        });
      });

      it('answers rollups as CSV: timestamp,value, and one column per statistic for ALL', async () => {
        const params = { from: T0, to: T0 + 2 * HOUR, timePeriodType: 'HOURS' };
        const json = (await single(xid, { ...params, rollup: 'AVERAGE' })).body as PeriodValue<number>[];
        const csv = await admin.get(`${PV}/single/${xid}?${query({ ...params, rollup: 'AVERAGE' })}`, { headers: { accept: 'text/csv' } });
        assert.equal(csv.status, 200, csv.text);
        assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
        const rows = parseCsv(csv.text);
        assert.deepEqual(rows[0], ['timestamp', 'value']);
        assert.deepEqual(
          rows.slice(1).map(([ts, v]) => [Number(ts), Number(v)]),
          json.map((p) => [p.timestamp, p.value]),
        );

        const allJson = (await single(xid, { ...params, rollup: 'ALL' })).body as PeriodValue<Record<string, number | null>>[];
        const allCsv = await admin.get(`${PV}/single/${xid}?${query({ ...params, rollup: 'ALL' })}`, { headers: { accept: 'text/csv' } });
        const allRows = parseCsv(allCsv.text);
        const header = allRows[0]!;
        assert.equal(header[0], 'timestamp');
        assert.deepEqual([...header.slice(1)].sort(), [...ALL_KEYS].sort());
        allRows.slice(1).forEach((row, i) => {
          assert.equal(Number(row[0]), allJson[i]!.timestamp);
          header.slice(1).forEach((key, c) => {
            const expected = allJson[i]!.value[key];
            assert.equal(row[c + 1], expected === null || expected === undefined ? '' : String(expected), `${key} period ${i}`);
          });
        });

        // Text statistics are quoted.
        const alpha = await createPoint('ALPHANUMERIC');
        await seed(alpha, [[T0 + MINUTE, 'x, "y"']]);
        const textCsv = await admin.get(`${PV}/single/${alpha}?${query({ from: T0, to: T0 + HOUR, rollup: 'FIRST' })}`, { headers: { accept: 'text/csv' } });
        assert.equal(textCsv.text, `timestamp,value\r\n${T0},"x, ""y"""\r\n`);
      });
    });

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
        assert.deepEqual(await latest(xid), [{ timestamp: T0, value: 1 }]);
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
