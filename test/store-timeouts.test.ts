// A PostgreSQL server that is there but silent (frozen, as under SIGSTOP) under a running service whose
// metadata and point values (VALUE_STORE=postgres) live on it: no request waits for the length of the
// freeze. /health answers within 2 s, 503 "degraded"; reads and writes answer 503 within
// STORE_TIMEOUT_MS and a margin; once the server answers again everything works without a restart,
// and every value acknowledged before, during or after the freeze reads back. The freeze is real: the
// service reaches PostgreSQL through a TCP relay that stops moving bytes (connections stay open, new
// ones are accepted) and then moves them again.
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import pino from 'pino';
import { DomainError } from '../src/core/errors.js';
import { postgresWriterLock } from '../src/store/cluster/writer-lock.js';
import { migrate } from '../src/store/metadata/migrate.js';
import { openPostgres } from '../src/store/metadata/postgres.js';
import { isStoreUnreachable } from '../src/store/unavailable.js';
import { openPostgresStore } from '../src/store/values/postgres/index.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, loggedIn } from './helpers/client.js';
import { batchOf } from './helpers/duckdb-temp.js';
import { dropSchema, newSchemaName, testDatabaseUrl } from './helpers/engines.js';
import { Relay } from './helpers/relay.js';
import { assertAnsweredInTime, assertRefused, degradedAnswers, describeOutcomes, loadPoint, StoreLoad, timedGet } from './helpers/store-load.js';
import { eventually } from './helpers/wait.js';

const API = '/rest/latest';
const STORE_TIMEOUT_MS = 1_500;
/** What a request may take beyond STORE_TIMEOUT_MS on this busy machine (a store call and the HTTP round trip). */
const MARGIN_MS = 1_500;
/** /health answers within 2 s; the margin is the test's own HTTP round trip on a loaded machine. */
const HEALTH_WITHIN_MS = 2_000 + 500;
const LIMITS = { storeTimeoutMs: STORE_TIMEOUT_MS, marginMs: MARGIN_MS, healthWithinMs: HEALTH_WITHIN_MS };
const FREEZE_MS = Number(process.env.TEST_FREEZE_MS ?? 8_000);
const XID = 'freeze-dp';

const databaseUrl = testDatabaseUrl;
if (databaseUrl === undefined) {
  describe('store time-outs (PostgreSQL frozen)', () => {
    it('is skipped: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it', function () {
      console.log('  (store time-out suite skipped: it needs TEST_DATABASE_URL)');
      this.skip();
    });
  });
} else {
  describe('store time-outs (PostgreSQL frozen)', function () {
    this.timeout(FREEZE_MS + 120_000);
    let relay: Relay;
    let app: TestApp;
    let admin: ApiClient;

    before(async () => {
      let viaRelay: string;
      ({ relay, url: viaRelay } = await Relay.forUrl(databaseUrl, 5432));
      app = await startTestApp('postgresql', { DATABASE_URL: viaRelay, VALUE_STORE: 'postgres', STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS) });
      admin = await loggedIn(app.url, 'admin', 'admin');
      await loadPoint(admin, XID, 'Through the freeze');
    });

    after(async () => {
      relay?.thaw();
      await app?.stop();
      await relay?.cut();
    });

    it('answers 503 within the time-out while PostgreSQL is frozen, /health within 2 s, and recovers with nothing acknowledged lost', async () => {
      const load = new StoreLoad(admin, new ApiClient(app.url), XID, Date.UTC(2024, 0, 1));
      load.start();
      try {
        await eventually('writes acknowledged before the freeze', async () => (load.acknowledged.size >= 200 ? true : undefined), 60_000);
        relay.freeze();
        const frozenAt = Date.now();
        await new Promise((r) => setTimeout(r, FREEZE_MS / 2));
        // Liveness touches no store: the freeze does not reach it.
        const live = await timedGet(app.url, '/health/live');
        assert.equal(live.status, 200);
        assert.ok(live.ms < 1_000, `/health/live took ${live.ms} ms during the freeze`);
        await new Promise((r) => setTimeout(r, FREEZE_MS - (Date.now() - frozenAt)));
        relay.thaw();
        const thawedAt = Date.now();
        const acknowledgedAtThaw = load.acknowledged.size;
        await eventually('writes acknowledged after the thaw', async () => (load.acknowledged.size >= acknowledgedAtThaw + 200 ? true : undefined), 60_000);
        // After the thaw every kind of request succeeds again, without a restart.
        for (const kind of ['write', 'rollup', 'raw', 'metadata', 'health'] as const) {
          await eventually(`a ${kind} answered 200 after the thaw`, async () => (load.since(thawedAt, kind).some((o) => o.status === 200) ? true : undefined), 15_000);
        }
        await load.stop();
        if (process.env.TEST_FREEZE_LOG) console.log(describeOutcomes(load.during(frozenAt - 1_000, thawedAt + 3_000)));

        const during = load.during(frozenAt, thawedAt);
        assertAnsweredInTime(during, LIMITS);
        // Every kind of request was refused at least once, none waited for the thaw.
        assertRefused(during, [['write'], ['rollup'], ['raw'], ['metadata']]);
        const degraded = degradedAnswers(during);
        for (const { body } of degraded) {
          assert.equal(body.status, 'degraded');
          assert.equal(body.metadata.ok && body.values.ok, false);
        }
        // /health (cached for 1 s) says degraded within the cache age and a ping budget of the freeze.
        const firstDegraded = Math.min(...degraded.map((d) => d.outcome.ended));
        assert.ok(firstDegraded - frozenAt <= 1_000 + HEALTH_WITHIN_MS, `/health said degraded ${firstDegraded - frozenAt} ms into the freeze`);

        await load.assertAcknowledgedStored();
        const kept = await admin.get<{ name: string }>(`${API}/data-points/${XID}`);
        assert.equal(kept.status, 200, kept.text);
        assert.equal(kept.body.name, 'Through the freeze');
      } finally {
        relay.thaw();
        await load.stop();
      }
    });
  });

  describe('a streamed read meets a freeze part-way (PostgreSQL frozen)', function () {
    this.timeout(120_000);
    let relay: Relay;
    let app: TestApp;
    let admin: ApiClient;
    const VALUES = 100_000;

    before(async () => {
      let viaRelay: string;
      ({ relay, url: viaRelay } = await Relay.forUrl(databaseUrl, 5432));
      app = await startTestApp('postgresql', { DATABASE_URL: viaRelay, VALUE_STORE: 'postgres', STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS) });
      admin = await loggedIn(app.url, 'admin', 'admin');
      assert.equal((await admin.post(`${API}/data-sources`, { xid: 'bulk-ds', name: 'Bulk', modelType: 'VIRTUAL' })).status, 201);
      assert.equal((await admin.post(`${API}/data-points`, { xid: 'bulk-dp', name: 'Bulk', dataSourceXid: 'bulk-ds', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } })).status, 201);
      for (let off = 0; off < VALUES; off += 10_000) {
        const batch = Array.from({ length: 10_000 }, (_, i) => ({ xid: 'bulk-dp', timestamp: Date.UTC(2025, 0, 1) + (off + i) * 1000, value: off + i }));
        const res = await admin.post(`${API}/point-values`, batch);
        assert.equal(res.status, 200, res.text);
      }
    });

    after(async () => {
      relay?.thaw();
      await app?.stop();
      await relay?.cut();
    });

    it('ends the answer within the time-out of the batch it waits for, not at the thaw; the next read is whole', async () => {
      const url = `${app.url}${API}/point-values/single/bulk-dp?from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&limit=${VALUES}`;
      const headers = { cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
      const started = Date.now();
      let frozenAt = 0;
      const outcome = await new Promise<{ bytes: number; complete: boolean; endedAt: number }>((resolve) => {
        let bytes = 0;
        const req = httpGet(url, { headers }, (res) => {
          assert.equal(res.statusCode, 200);
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (frozenAt === 0) {
              relay.freeze();
              frozenAt = Date.now();
            }
          });
          res.on('end', () => resolve({ bytes, complete: res.complete, endedAt: Date.now() }));
          res.on('error', () => resolve({ bytes, complete: false, endedAt: Date.now() }));
          res.on('aborted', () => resolve({ bytes, complete: false, endedAt: Date.now() }));
        });
        req.on('error', () => resolve({ bytes, complete: false, endedAt: Date.now() }));
      });
      const waited = outcome.endedAt - frozenAt;
      await new Promise((r) => setTimeout(r, Math.max(0, 2 * STORE_TIMEOUT_MS + MARGIN_MS - waited)));
      relay.thaw();
      assert.ok(frozenAt > started);
      assert.equal(outcome.complete, false, 'the answer is cut, not completed as if whole');
      assert.ok(waited <= STORE_TIMEOUT_MS + MARGIN_MS, `the cut answer ended ${waited} ms into the freeze`);
      const whole = await admin.get<{ value: number }[]>(`${API}/point-values/single/bulk-dp?from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&limit=${VALUES}`);
      assert.equal(whole.status, 200);
      assert.equal(whole.body.length, VALUES);
      assert.equal(whole.body[VALUES - 1]!.value, VALUES - 1);
    });
  });

  describe('a statement that timed out closes its connection (PostgreSQL frozen)', function () {
    this.timeout(60_000);
    const TIMEOUT_MS = 500;
    let relay: Relay;
    let viaRelay: string;
    const schema = newSchemaName();

    before(async () => {
      ({ relay, url: viaRelay } = await Relay.forUrl(databaseUrl, 5432));
    });

    after(async () => {
      relay?.thaw();
      await relay?.cut();
      await dropSchema(schema);
    });

    /** Rejects within the time-out and a margin, with an error that is the store being unavailable. */
    async function timesOut(work: Promise<unknown>): Promise<void> {
      const started = Date.now();
      await assert.rejects(work, (err: unknown) => isStoreUnreachable(err) || (err instanceof DomainError && err.kind === 'unavailable'));
      const ms = Date.now() - started;
      assert.ok(ms <= TIMEOUT_MS + MARGIN_MS, `took ${ms} ms`);
    }

    it('value engine: a write or read that timed out does not hand its connection out again; the store works after the thaw', async () => {
      const store = await openPostgresStore({ url: viaRelay, schema, timeoutMs: TIMEOUT_MS, poolSize: 1 });
      try {
        await store.append(batchOf([{ series: 1, ts: 1_000, value: 1 }]));
        const [first] = relay.upstreamPorts();
        assert.equal(relay.upstreamPorts().length, 1, 'one pooled connection');
        relay.freeze();
        // Its write transaction times out on the one connection, which is closed, not rolled back.
        await timesOut(store.append(batchOf([{ series: 1, ts: 2_000, value: 2 }])));
        // The next call gets a new connection, which cannot be made while the server is frozen.
        await timesOut(store.latest(1, 10));
        relay.thaw();
        await store.append(batchOf([{ series: 1, ts: 3_000, value: 3 }]));
        const latest = await store.latest(1, 10);
        assert.deepEqual(latest.map((v) => v.value).filter((v) => v !== 2), [3, 1]);
        await eventually('the timed-out connection closed', async () => (relay.upstreamPorts().includes(first!) ? undefined : true), 10_000);
      } finally {
        relay.thaw();
        await store.close();
      }
    });

    it('metadata: a transaction whose statement timed out is closed, not committed, and the next request gets a new connection', async () => {
      const db = await openPostgres(viaRelay, 1, schema, TIMEOUT_MS);
      try {
        await db.query('create table if not exists freeze_probe (n integer)');
        const [first] = relay.upstreamPorts();
        await timesOut(
          db.transaction(async (tx) => {
            await tx.query('insert into freeze_probe values (1)');
            relay.freeze();
            await tx.query('insert into freeze_probe values (2)');
          }),
        );
        await timesOut(db.query('select count(*) from freeze_probe'));
        relay.thaw();
        const [row] = await db.query<{ n: number }>('select count(*)::int as n from freeze_probe');
        assert.equal(row!.n, 0, 'nothing of the timed-out transaction was committed');
        await db.transaction(async (tx) => tx.query('insert into freeze_probe values (3)'));
        assert.deepEqual(await db.query('select n from freeze_probe'), [{ n: 3 }]);
        await eventually('the timed-out connection closed', async () => (relay.upstreamPorts().includes(first!) ? undefined : true), 10_000);
      } finally {
        relay.thaw();
        await db.close();
      }
    });

    it('writer lock: a turn not had within the time-out gives up, and its connection never keeps the lock', async () => {
      const db = await openPostgres(databaseUrl, 1, schema);
      await migrate(db);
      await db.close();
      const silent = pino({ level: 'silent' });
      const lock = (instanceId: string) => postgresWriterLock({ url: databaseUrl, schema, installation: 'freeze', instanceId, name: 'questdb:t', log: silent, timeoutMs: TIMEOUT_MS });
      const [a, b] = [lock('a'), lock('b')];
      try {
        const first = await a.acquire();
        await timesOut(b.acquire());
        await first.release();
        // Had b's connection stayed, it would now hold the lock (its wait was granted) and a would wait.
        const again = await a.acquire();
        assert.equal(again.othersWrote, false);
        await again.release();
        const turn = await b.acquire();
        assert.equal(turn.othersWrote, true);
        await turn.release();
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
