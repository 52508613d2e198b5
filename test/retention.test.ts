// Retention on the real service, on DuckDB and (with TEST_DATABASE_URL) on the PostgreSQL value engine:
// five months of hourly history, points with their own purge period and points on HISTORY_RETENTION,
// POST /point-values/purge both ways, the caches and rollups agreeing with what is left, whole month
// partitions dropped on PostgreSQL, and a purge racing ingest losing no acknowledged value.
import assert from 'node:assert/strict';
import pg from 'pg';
import { assertError, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createUser, loggedIn, type ApiClient } from './helpers/client.js';
import { testDatabaseUrl } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';

const PV = '/rest/latest/point-values';
const DP = '/rest/latest/data-points';
const DS = '/rest/latest/data-sources';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HISTORY_DAYS = 150;

interface RawValue {
  timestamp: number;
  value: number;
}

// The first runs on the engine the suites run on (DuckDB, or TEST_VALUE_STORE's: QuestDB too).
const engines: { name: string; metadata: 'pglite' | 'postgresql'; env: Record<string, string> }[] = [
  { name: process.env.TEST_VALUE_STORE ?? 'DuckDB', metadata: 'pglite', env: {} },
];
if (testDatabaseUrl) engines.push({ name: 'PostgreSQL', metadata: 'postgresql', env: { VALUE_STORE: 'postgres' } });
else console.log('  (retention on the PostgreSQL value engine skipped: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it)');

for (const engine of engines) {
  describe(`retention (${engine.name} values)`, function () {
    this.timeout(180_000);
    let app: TestApp;
    let admin: ApiClient;
    let seq = 0;
    /** Values sit half an hour off now's minute, so no cutoff (now − whole days) falls near one. */
    const now = Date.now();
    const stamps = Array.from({ length: HISTORY_DAYS * 24 }, (_, i) => Math.floor(now / HOUR) * HOUR - i * HOUR + ((now % HOUR) + HOUR / 2) % HOUR - HOUR).reverse();

    before(async () => {
      app = await startTestApp(engine.metadata, { ...engine.env, HISTORY_RETENTION: '60 DAYS' });
      admin = await loggedIn(app.url, 'admin', 'admin');
      const res = await admin.post(DS, { xid: 'ret-src', name: 'History', modelType: 'VIRTUAL', enabled: false });
      assert.equal(res.status, 201, res.text);
    });
    after(() => app?.stop());

    async function point(extra: Record<string, unknown> = {}): Promise<string> {
      const xid = `ret-${++seq}`;
      const res = await admin.post(DP, { xid, name: xid, dataSourceXid: 'ret-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' }, ...extra });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    async function fill(xid: string): Promise<void> {
      for (let i = 0; i < stamps.length; i += 2000) {
        const res = await admin.post(PV, stamps.slice(i, i + 2000).map((timestamp, k) => ({ xid, timestamp, value: i + k })));
        assert.equal(res.status, 200, res.text);
      }
    }

    async function raw(xid: string, from = now - 400 * DAY, to = now + DAY): Promise<RawValue[]> {
      const res = await admin.get<RawValue[]>(`${PV}/single/${xid}?from=${from}&to=${to}`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    }

    async function rollup(xid: string, statistic: string, from: number, to: number): Promise<{ timestamp: number; value: number | null }[]> {
      const res = await admin.get<{ timestamp: number; value: number | null }[]>(`${PV}/single/${xid}?from=${from}&to=${to}&rollup=${statistic}&timePeriodType=DAYS&timePeriods=1&timezone=UTC`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    }

    async function purge(body: unknown, as = admin): Promise<number> {
      const res = await as.post<{ deleted: number }>(`${PV}/purge`, body);
      assert.equal(res.status, 200, res.text);
      return res.body.deleted;
    }

    const olderThan = (days: number) => stamps.filter((t) => t < now - days * DAY).length;

    it('applies each point\'s purge period, else HISTORY_RETENTION; rollups, latest values and /metrics agree afterwards', async () => {
      const own30 = await point({ purgeOverride: true, purgePeriod: { periods: 30, type: 'DAYS' } });
      const byDefault = await point();
      const ownYear = await point({ purgeOverride: true, purgePeriod: { periods: 1, type: 'YEARS' } });
      for (const xid of [own30, byDefault, ownYear]) await fill(xid);
      // A day that straddles the 30-day cutoff, rolled up before (cached) and after the purge: the 24 hours
      // around it (the UTC day of the cutoff holds no kept value when the cutoff falls in its last half hour).
      const dayFrom = Math.floor((now - 30 * DAY) / HOUR) * HOUR - 12 * HOUR;
      const before = await rollup(own30, 'COUNT', dayFrom, dayFrom + DAY);
      assert.equal(before[0]!.value, 24);
      assert.equal((await raw(own30, 0, now + DAY)).length, stamps.length);

      const deleted = await purge({});
      assert.equal(deleted, olderThan(30) + olderThan(60));
      const kept30 = await raw(own30);
      assert.deepEqual(kept30.map((v) => v.timestamp), stamps.filter((t) => t >= now - 30 * DAY));
      assert.equal((await raw(byDefault)).length, stamps.length - olderThan(60));
      assert.equal((await raw(ownYear)).length, stamps.length);

      // Hourly buckets and rollups hold only what is left: the straddling day counts its kept hours.
      const keptThatDay = kept30.filter((v) => v.timestamp >= dayFrom && v.timestamp < dayFrom + DAY);
      const after = await rollup(own30, 'COUNT', dayFrom, dayFrom + DAY);
      assert.equal(after[0]!.value, keptThatDay.length);
      assert.ok(keptThatDay.length < 24);
      const minimum = await rollup(own30, 'MINIMUM', dayFrom, dayFrom + DAY);
      assert.equal(minimum[0]!.value, Math.min(...keptThatDay.map((v) => v.value)));
      const whole = await admin.get<{ value: number }[]>(`${PV}/single/${own30}?from=${now - 400 * DAY}&to=${now + DAY}&rollup=COUNT`);
      assert.equal(whole.body[0]!.value, kept30.length);

      // A purge of everything before a moment after the newest value leaves nothing, also in the latest cache.
      const latest = await admin.get<RawValue[]>(`${PV}/latest/${own30}?limit=1`);
      assert.equal(latest.body[0]!.timestamp, stamps[stamps.length - 1]);
      assert.equal(await purge({ xids: [own30], before: new Date(now + DAY).toISOString() }), kept30.length);
      assert.deepEqual((await admin.get<RawValue[]>(`${PV}/latest/${own30}`)).body, []);
      assert.equal((await raw(byDefault)).length, stamps.length - olderThan(60), 'other points untouched');

      const metrics = await admin.get('/metrics');
      const purged = Number(/^dds_point_values_purged_total (\d+)/m.exec(metrics.text)?.[1]);
      assert.equal(purged, deleted + kept30.length);
      const last = Number(/^dds_history_last_purge_timestamp_seconds (\S+)/m.exec(metrics.text)?.[1]);
      assert.ok(last * 1000 >= now && last * 1000 <= Date.now(), `last purge ${last}`);
    });

    it('refuses others than the superadmin (403) and bad bodies (422 naming the field)', async () => {
      await createUser(admin, `ret-user-${engine.name}`, 'secret-password-1', { permissions: ['user'] });
      const user = await loggedIn(app.url, `ret-user-${engine.name}`, 'secret-password-1');
      assertError(await user.post(`${PV}/purge`, {}), 403, 4004);
      const cases: [unknown, string][] = [
        [{ before: 'yesterday' }, 'before'],
        [{ xids: 'ret-1', before: 0 }, 'xids'],
        [{ xids: ['no-such-point'], before: 0 }, 'xids[0]'],
        [{ xids: [7], before: 0 }, 'xids[0]'],
        [{ after: 0 }, 'after'],
        [{ xids: ['ret-1', 'no-such-point'] }, 'xids[1]'],
      ];
      for (const [body, property] of cases) {
        const messages = assertValidation(await admin.post(`${PV}/purge`, body));
        assert.ok(messages.some((m) => m.property === property), `${JSON.stringify(body)}: ${JSON.stringify(messages)}`);
      }
    });

    it('a purge racing ingest loses no acknowledged value of the kept window', async () => {
      const xid = await point({ loggingProperties: { loggingType: 'ALL' } });
      await fill(xid);
      const cutoff = now - 100 * DAY;
      let writing = true;
      const written: number[] = [];
      let longest = 0;
      const writer = (async () => {
        // New values in the kept window, some just after the cutoff, between the existing ones.
        for (let k = 0; writing || k < 10; k++) {
          const ts = k % 2 === 0 ? cutoff + 1000 + k : now - 10 * DAY + 7 * k + 1;
          const started = Date.now();
          const res = await admin.post(PV, [{ xid, timestamp: ts, value: -k }]);
          longest = Math.max(longest, Date.now() - started);
          assert.equal(res.status, 200, res.text);
          written.push(ts);
        }
      })();
      const deleted = await purge({ before: cutoff });
      writing = false;
      await writer;
      console.log(`      ${engine.name}: purged ${deleted} values while ${written.length} single-value writes ran; longest write ${longest} ms`);
      assert.ok(deleted >= olderThan(100));
      const kept = new Set((await raw(xid, cutoff, now + DAY)).map((v) => v.timestamp));
      for (const ts of written) assert.ok(kept.has(ts), `acknowledged value at ${ts} lost`);
      assert.equal((await raw(xid, 0, cutoff)).length, 0);
      assert.ok(longest < 2_000, `a write waited ${longest} ms`);
    });

    if (engine.name === 'PostgreSQL') {
      it('drops whole month partitions when every point\'s values before them go', async () => {
        const db = new pg.Client({ connectionString: testDatabaseUrl });
        await db.connect();
        const partitions = async () =>
          (
            await db.query<{ name: string }>(
              `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
               join pg_namespace n on n.oid = p.relnamespace where p.relname = 'point_values' and n.nspname = $1 order by 1`,
              [app.config.databaseSchema],
            )
          ).rows.map((r) => r.name);
        try {
          const xid = await point();
          await fill(xid);
          const beforeDrop = await partitions();
          const before = now - 60 * DAY;
          const lastWholeMonth = new Date(before);
          const firstKept = `point_values_p${lastWholeMonth.getUTCFullYear()}${String(lastWholeMonth.getUTCMonth() + 1).padStart(2, '0')}`;
          const expectedGone = beforeDrop.filter((n) => n < firstKept);
          assert.ok(expectedGone.length >= 2, `months before ${firstKept}: ${beforeDrop.join(', ')}`);
          const deleted = await purge({ before });
          const afterDrop = await partitions();
          assert.deepEqual(afterDrop, beforeDrop.filter((n) => n >= firstKept), 'the months wholly before the cutoff are dropped');
          assert.ok(deleted >= olderThan(60));
          assert.equal((await raw(xid, 0, before)).length, 0);
          assert.equal((await raw(xid, before, now + DAY)).length, stamps.length - olderThan(60));
          const count = await admin.get<{ value: number }[]>(`${PV}/single/${xid}?from=${now - 400 * DAY}&to=${now + DAY}&rollup=COUNT`);
          assert.equal(count.body[0]!.value, stamps.length - olderThan(60), 'hourly rows of dropped months are gone too');
          // A late value into a dropped month makes the partition again.
          const late = await admin.post(PV, [{ xid, timestamp: now - 140 * DAY, value: 1 }]);
          assert.equal(late.status, 200, late.text);
          assert.equal((await raw(xid, now - 141 * DAY, now - 139 * DAY)).length, 1);
        } finally {
          await db.end();
        }
      });
    }
  });
}

describe('POST /point-values/purge {"xids"} without before', function () {
  this.timeout(60_000);
  let app: TestApp;
  after(() => app?.stop());

  it('applies the listed points\' retention settings now, counting the points that keep everything', async () => {
    // No HISTORY_RETENTION: a point without purgeOverride keeps every value.
    app = await startTestApp('pglite');
    const admin = await loggedIn(app.url, 'admin', 'admin');
    assert.equal((await admin.post(DS, { xid: 'own-src', name: 'Own', modelType: 'VIRTUAL', enabled: false })).status, 201);
    const own = (periods: number, type: string) => ({ purgeOverride: true, purgePeriod: { periods, type } });
    const points: Record<string, Record<string, unknown>> = { 'own-30d': own(30, 'DAYS'), 'own-1y': own(1, 'YEARS'), forever: {}, unlisted: own(30, 'DAYS') };
    const now = Date.now();
    const ages = [400, 40, 10]; // days ago: values 0, 1, 2
    for (const [xid, extra] of Object.entries(points)) {
      const res = await admin.post(DP, { xid, name: xid, dataSourceXid: 'own-src', pointLocator: { dataType: 'NUMERIC' }, ...extra });
      assert.equal(res.status, 201, res.text);
      assert.equal((await admin.post(PV, ages.map((d, i) => ({ xid, timestamp: now - d * DAY, value: i })))).status, 200);
    }
    const left = async (xid: string) => (await admin.get<RawValue[]>(`${PV}/single/${xid}?from=0&to=${now + DAY}`)).body.map((v) => v.value);

    const res = await admin.post<{ deleted: number; points: number; keptForever: number }>(`${PV}/purge`, { xids: ['own-30d', 'own-1y', 'forever'] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { deleted: 3, points: 2, keptForever: 1 });
    assert.deepEqual(await left('own-30d'), [2]);
    assert.deepEqual(await left('own-1y'), [1, 2]);
    assert.deepEqual(await left('forever'), [0, 1, 2]);
    assert.deepEqual(await left('unlisted'), [0, 1, 2], 'a point not listed keeps its values');
    // Only a purge of every point is the daily one.
    assert.equal(app.service.services.retention.lastPurge, undefined);

    // An unknown XID refuses the whole request, naming its place; nothing is purged.
    const refused = assertValidation(await admin.post(`${PV}/purge`, { xids: ['unlisted', 'nope'] }));
    assert.deepEqual(refused.map((m) => [m.property, m.message]), [['xids[1]', 'Data point not found']]);
    assert.deepEqual(await left('unlisted'), [0, 1, 2]);

    const all = await admin.post<{ deleted: number; points: number; keptForever: number }>(`${PV}/purge`, {});
    assert.deepEqual(all.body, { deleted: 2, points: 3, keptForever: 1 });
    assert.deepEqual(await left('unlisted'), [2]);
    const before = await admin.post<{ deleted: number; points: number; keptForever: number }>(`${PV}/purge`, { xids: ['forever'], before: now - DAY });
    assert.deepEqual(before.body, { deleted: 3, points: 1, keptForever: 0 });
  });
});

describe('retention on its schedule', function () {
  this.timeout(60_000);
  let app: TestApp;
  after(() => app?.stop());

  it('purges by itself shortly after start-up when no purge ran for a day, then not again within the day', async () => {
    app = await startTestApp('pglite', { HISTORY_RETENTION: '30 DAYS' });
    const admin = await loggedIn(app.url, 'admin', 'admin');
    assert.equal((await admin.post(DS, { xid: 'sched-src', name: 'Old', modelType: 'VIRTUAL', enabled: false })).status, 201);
    assert.equal((await admin.post(DP, { xid: 'sched-p', name: 'Old', dataSourceXid: 'sched-src', pointLocator: { dataType: 'NUMERIC' } })).status, 201);
    const old = Date.now() - 40 * DAY;
    const values = (from: number) => Array.from({ length: 48 }, (_, i) => ({ xid: 'sched-p', timestamp: from + i * HOUR, value: i }));
    assert.equal((await admin.post(PV, [...values(old), ...values(Date.now() - 2 * DAY)])).status, 200);
    const count = async () => (await admin.get<unknown[]>(`${PV}/single/sched-p?from=0&to=${Date.now()}`)).body.length;
    await eventually('the purge after start-up', async () => ((await count()) === 48 ? true : undefined), 20_000, 200);
    const retention = app.service.services.retention;
    assert.ok(retention.lastPurge !== undefined && retention.lastPurge > Date.now() - 60_000);
    // Within the day nothing runs again, also not after a restart (the time is kept in the settings).
    assert.equal((await admin.post(PV, values(old))).status, 200);
    await app.restart();
    assert.equal(await app.service.services.retention.purgeIfDue(), 0);
    const again = await loggedIn(app.url, 'admin', 'admin');
    assert.equal((await again.get<unknown[]>(`${PV}/single/sched-p?from=0&to=${Date.now()}`)).body.length, 96);
    // A day later it does.
    assert.equal(await app.service.services.retention.purgeIfDue(Date.now() + DAY + 1000), 48);
  });
});
