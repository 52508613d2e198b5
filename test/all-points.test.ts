// Paths over every point, with 200,000 of them (issue 24): retention (POST /point-values/purge {}
// threw a RangeError past some 120,000 points), the configuration export (a 100,000 list limit cut
// it), deep pages of the points list, and a source restarting with all of them. On DuckDB values
// (PGlite metadata) and, with TEST_DATABASE_URL, on PostgreSQL values. The points are inserted by
// SQL as copies of one point created through the API, so they are stored exactly as the service
// stores points; the service reads them as it reads any.
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { testDatabaseUrl } from './helpers/engines.js';

const PV = '/rest/latest/point-values';
const DP = '/rest/latest/data-points';
const DS = '/rest/latest/data-sources';
const DAY = 86_400_000;
const POINTS = 200_000;

const engines: { name: string; metadata: 'pglite' | 'postgresql'; env: Record<string, string> }[] = [{ name: 'DuckDB', metadata: 'pglite', env: {} }];
if (testDatabaseUrl) engines.push({ name: 'PostgreSQL', metadata: 'postgresql', env: { VALUE_STORE: 'postgres' } });
else console.log('  (200,000 points on the PostgreSQL value engine skipped: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it)');

for (const engine of engines) {
  describe(`${POINTS.toLocaleString('en-US')} points (${engine.name} values)`, function () {
    this.timeout(600_000);
    let app: TestApp;
    let admin: ApiClient;
    const now = Date.now();
    /** Points with values: some among the first, some past the first 150,000. */
    const withValues = [...Array.from({ length: 20 }, (_, i) => `all-${i}`), ...Array.from({ length: 20 }, (_, i) => `all-${POINTS - 20 + i}`)];
    /** Of those, the ones keeping 7 days rather than HISTORY_RETENTION's 30. */
    const shortLived = withValues.filter((_, i) => i % 4 === 0);
    const ages = [90, 45, 20, 3, 1];

    before(async () => {
      app = await startTestApp(engine.metadata, { ...engine.env, HISTORY_RETENTION: '30 DAYS' });
      admin = await loggedIn(app.url, 'admin', 'admin');
      let res = await admin.post(DS, { xid: 'all-src', name: 'Everything', modelType: 'VIRTUAL', enabled: false, updatePeriods: 1, updatePeriodType: 'HOURS' });
      assert.equal(res.status, 201, res.text);
      res = await admin.post(DP, { xid: 'all-0', name: 'Point 0', dataSourceXid: 'all-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', startValue: '1' } });
      assert.equal(res.status, 201, res.text);
      const db = app.service.services.db;
      const columns = (
        await db.query<{ column_name: string }>(
          `select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'data_points' and column_name not in ('id', 'xid', 'name')`,
        )
      ).map((c) => c.column_name);
      for (let from = 1; from < POINTS; from += 50_000) {
        await db.query(
          `insert into data_points (xid, name, ${columns.join(', ')})
           select 'all-' || g, 'Point ' || g, ${columns.map((c) => `t.${c}`).join(', ')}
           from data_points t, generate_series($1::int, $2::int) g where t.xid = 'all-0'`,
          [from, Math.min(POINTS, from + 50_000) - 1],
        );
      }
      for (const xid of shortLived) {
        const point = await admin.get<Record<string, unknown>>(`${DP}/${xid}`);
        res = await admin.put(`${DP}/${xid}`, { ...point.body, purgeOverride: true, purgePeriod: { periods: 7, type: 'DAYS' } });
        assert.equal(res.status, 200, res.text);
      }
      const values = withValues.flatMap((xid) => ages.map((age) => ({ xid, value: age, timestamp: now - age * DAY })));
      res = await admin.post(PV, values);
      assert.equal(res.status, 200, res.text);
    });
    after(() => app?.stop());

    it('POST /point-values/purge {} applies every point\'s retention', async () => {
      const res = await admin.post<{ deleted: number }>(`${PV}/purge`, {});
      assert.equal(res.status, 200, res.text);
      // The purge the service runs by itself after start may have deleted some first: what is left counts.
      for (const xid of withValues) {
        const left = await admin.get<{ value: number }[]>(`${PV}/single/${xid}?from=${now - 400 * DAY}&to=${now + DAY}`);
        assert.equal(left.status, 200, left.text);
        const keep = shortLived.includes(xid) ? 7 : 30;
        assert.deepEqual(left.body.map((v) => v.value), ages.filter((a) => a < keep), xid);
      }
    });

    it('the export holds every point, in XID order', async () => {
      const res = await fetch(`${app.url}/rest/latest/configuration/export?include=dataSources,dataPoints`, { headers: { cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      assert.equal(res.status, 200);
      const doc = JSON.parse(await res.text()) as { dataSources: unknown[]; dataPoints: { xid: string }[] };
      assert.equal(doc.dataSources.length, 1);
      assert.equal(doc.dataPoints.length, POINTS);
      const xids = doc.dataPoints.map((p) => p.xid);
      assert.deepEqual(xids, [...xids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      assert.equal(new Set(xids).size, POINTS);
    });

    it('answers a deep page of the points list', async () => {
      const res = await admin.get<{ total: number; items: { xid: string }[] }>(`${DP}?sort(-xid)&limit(50,190000)`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.total, POINTS);
      assert.equal(res.body.items.length, 50);
      const expected = Array.from({ length: POINTS }, (_, i) => `all-${i}`).sort().reverse().slice(190_000, 190_050);
      assert.deepEqual(res.body.items.map((p) => p.xid), expected);
    });

    it('starts the source with all its points', async () => {
      const source = await admin.get<Record<string, unknown>>(`${DS}/all-src`);
      const res = await admin.put(`${DS}/all-src`, { ...source.body, enabled: true });
      assert.equal(res.status, 200, res.text);
      const state = await admin.get<{ state: string }>(`${DS}/all-src`);
      assert.equal(state.body.state, 'RUNNING');
      const metrics = await admin.get<string>('/metrics');
      assert.match(metrics.text, /^dds_data_source_starts_total\{[^}]*source="all-src"[^}]*\} 1$/m);
    });
  });
}
