// QuestDB going away under load: the service reaches QuestDB (ILP over HTTP and PG-wire) through relays
// that the test cuts for TEST_QUESTDB_OUTAGE_MS (default 20 s) while a writer and a reader keep going.
// While it is away: writes and reads that need it answer 503 with the error body in bounded time, /health
// says degraded, nothing crashes; afterwards everything recovers without a restart and every value that
// was acknowledged (200) is there. Then the same with the relays frozen (QuestDB there but silent, as
// under SIGSTOP): nothing waits for the freeze, /health answers within 2 s and reads and writes within
// STORE_TIMEOUT_MS. Live server only (TEST_QUESTDB_ILP / TEST_QUESTDB_PG).
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, loggedIn, type Response } from './helpers/client.js';
import { Relay } from './helpers/relay.js';
import { assertAnsweredInTime, assertRefused, degradedAnswers, describeOutcomes, loadPoint, StoreLoad, timedGet } from './helpers/store-load.js';
import { dropQuestDbTable, newQuestDbTableName } from './helpers/value-engines.questdb.js';
import { questdbSettings } from './helpers/value-engines.js';
import { eventually, freePort } from './helpers/wait.js';

const { ilp, pg: pgUrl } = questdbSettings;
const OUTAGE_MS = Number(process.env.TEST_QUESTDB_OUTAGE_MS ?? 20_000);
/** The longest any request may take while QuestDB is away (no hang): the transports' time-outs and a margin. */
const ANSWER_WITHIN_MS = 45_000;
const API = '/rest/latest';
const XID = 'outage-dp';

interface Outcome {
  status: number;
  ms: number;
  body: string;
}

async function timed(request: () => Promise<Response>): Promise<Outcome> {
  const started = Date.now();
  const res = await request();
  return { status: res.status, ms: Date.now() - started, body: res.text };
}

/** host:port of the ILP configuration string's addr. */
function ilpTarget(config: string): { host: string; port: number } {
  const addr = /addr=([^;]+)/.exec(config)![1]!;
  const [host, port] = addr.split(':');
  return { host: host!, port: Number(port ?? 9000) };
}

if (!ilp || !pgUrl) {
  describe('QuestDB outage under load', () => {
    it('is skipped: set TEST_QUESTDB_ILP and TEST_QUESTDB_PG to run it', function () {
      console.log('  (QuestDB outage suite skipped: no QuestDB)');
      this.skip();
    });
  });
} else {
  describe('QuestDB outage under load', function () {
    this.timeout(OUTAGE_MS + 240_000);
    const table = newQuestDbTableName();
    let ilpRelay: Relay;
    let pgRelay: Relay;
    let app: TestApp;
    let admin: ApiClient;

    before(async () => {
      ilpRelay = new Relay(await freePort(), ilpTarget(ilp));
      const pgServer = new URL(pgUrl);
      pgRelay = new Relay(await freePort(), { host: pgServer.hostname, port: Number(pgServer.port || 8812) });
      await Promise.all([ilpRelay.open(), pgRelay.open()]);
      const viaRelay = new URL(pgUrl);
      viaRelay.host = `127.0.0.1:${pgRelay.port}`;
      app = await startTestApp('pglite', {
        QUESTDB_ILP: ilp.replace(/addr=[^;]+/, `addr=127.0.0.1:${ilpRelay.port}`),
        QUESTDB_PG: viaRelay.toString(),
        QUESTDB_TABLE: table,
      });
      admin = await loggedIn(app.url, 'admin', 'admin');
      const ds = await admin.post(`${API}/data-sources`, { xid: 'outage-ds', name: 'Outage', modelType: 'VIRTUAL' });
      assert.equal(ds.status, 201, ds.text);
      const dp = await admin.post(`${API}/data-points`, { xid: XID, name: 'Under load', dataSourceXid: 'outage-ds', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
      assert.equal(dp.status, 201, dp.text);
    });

    after(async () => {
      await ilpRelay?.open().catch(() => undefined);
      await pgRelay?.open().catch(() => undefined);
      await app?.stop();
      await ilpRelay?.cut();
      await pgRelay?.cut();
      await dropQuestDbTable(pgUrl, table);
    });

    it('answers 503 while QuestDB is away, recovers without a restart, and keeps every acknowledged value', async () => {
      const base = Date.UTC(2024, 0, 1);
      const acknowledged = new Map<number, number>();
      const writes: Outcome[] = [];
      const reads: Outcome[] = [];
      let seq = 0;
      let running = true;
      const writer = (async () => {
        while (running) {
          const batch = Array.from({ length: 50 }, () => {
            seq++;
            return { xid: XID, timestamp: base + seq * 1000, value: seq };
          });
          const outcome = await timed(() => admin.post(`${API}/point-values`, batch));
          writes.push(outcome);
          if (outcome.status === 200) for (const v of batch) acknowledged.set(v.timestamp, v.value);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const reader = (async () => {
        while (running) {
          const to = new Date(base + (seq + 1) * 1000).toISOString();
          reads.push(await timed(() => admin.get(`${API}/point-values/single/${XID}?from=2024-01-01T00:00:00Z&to=${to}&rollup=AVERAGE&timePeriodType=HOURS`)));
          reads.push(await timed(() => admin.get(`${API}/point-values/single/${XID}?from=2024-01-01T00:00:00Z&to=${to}&limit=10`)));
          await new Promise((r) => setTimeout(r, 50));
        }
      })();

      await eventually('writes acknowledged before the outage', async () => (acknowledged.size >= 200 ? true : undefined), 60_000);
      const before = { writes: writes.length, reads: reads.length };
      await Promise.all([ilpRelay.cut(), pgRelay.cut()]);
      const outageStarted = Date.now();
      // /health checks the stores at most once a second: within that it may still give the last answer.
      const health = await eventually('/health says degraded', async () => {
        const res = await new ApiClient(app.url).get<{ status: string; values: { ok: boolean } }>('/health');
        return res.status === 503 ? res : undefined;
      }, 3_000);
      assert.equal(health.body.status, 'degraded');
      assert.equal(health.body.values.ok, false);
      await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - outageStarted))));
      const during = { writes: writes.slice(before.writes), reads: reads.slice(before.reads) };
      await Promise.all([ilpRelay.open(), pgRelay.open()]);
      const restored = writes.length;

      // Writes are acknowledged again, and reads answer, without restarting the service.
      await eventually('a write acknowledged after the outage', async () => (writes.slice(restored).some((w) => w.status === 200) ? true : undefined), 90_000);
      const afterCount = acknowledged.size;
      await eventually('more writes after the outage', async () => (acknowledged.size >= afterCount + 100 ? true : undefined), 60_000);
      running = false;
      await Promise.all([writer, reader]);

      const failedWrites = during.writes.filter((w) => w.status !== 200);
      assert.ok(failedWrites.length > 0, 'no write was refused while QuestDB was away');
      for (const outcome of [...during.writes, ...during.reads]) {
        assert.ok(outcome.status === 200 || outcome.status === 503, `answered ${outcome.status} while QuestDB was away: ${outcome.body.slice(0, 200)}`);
        assert.ok(outcome.ms < ANSWER_WITHIN_MS, `a request took ${outcome.ms} ms while QuestDB was away`);
        if (outcome.status === 503) {
          const body = JSON.parse(outcome.body) as { serviceStatusCode: number; message: string };
          assert.equal(body.serviceStatusCode, 5000);
          assert.equal(body.message, 'The point-value store is unavailable; try again shortly');
        }
      }
      assert.ok(during.reads.some((r) => r.status === 503), 'no read was refused while QuestDB was away');
      for (const outcome of [...writes, ...reads]) assert.ok(outcome.status === 200 || outcome.status === 503, `answered ${outcome.status}: ${outcome.body.slice(0, 200)}`);

      // Every acknowledged value is stored, with its value.
      const stored = await admin.get<{ timestamp: number; value: number }[]>(
        `${API}/point-values/single/${XID}?from=2024-01-01T00:00:00Z&to=${new Date(base + (seq + 1) * 1000).toISOString()}&limit=1000000`,
      );
      assert.equal(stored.status, 200, stored.text);
      const byTs = new Map(stored.body.map((v) => [v.timestamp, v.value]));
      const lost = [...acknowledged].filter(([ts, value]) => byTs.get(ts) !== value);
      assert.deepEqual(lost.slice(0, 5), [], `${lost.length} of ${acknowledged.size} acknowledged values missing or wrong`);
      await eventually('/health says ok again', async () => ((await new ApiClient(app.url).get('/health')).status === 200 ? true : undefined), 3_000);
    });
  });

  describe('QuestDB frozen under load', function () {
    const STORE_TIMEOUT_MS = 1_500;
    /** What a request may take beyond STORE_TIMEOUT_MS on this busy machine. */
    const MARGIN_MS = 1_500;
    const HEALTH_WITHIN_MS = 2_000 + 500;
    const FREEZE_MS = Number(process.env.TEST_FREEZE_MS ?? 8_000);
    this.timeout(FREEZE_MS + 180_000);
    const table = newQuestDbTableName();
    let relays: Relay[];
    let app: TestApp;
    let admin: ApiClient;

    before(async () => {
      const ilpRelay = new Relay(await freePort(), ilpTarget(ilp));
      await ilpRelay.open();
      const pg = await Relay.forUrl(pgUrl, 8812);
      relays = [ilpRelay, pg.relay];
      app = await startTestApp('pglite', {
        QUESTDB_ILP: ilp.replace(/addr=[^;]+/, `addr=127.0.0.1:${ilpRelay.port}`),
        QUESTDB_PG: pg.url,
        QUESTDB_TABLE: table,
        STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS),
      });
      admin = await loggedIn(app.url, 'admin', 'admin');
      await loadPoint(admin, XID, 'Through the freeze');
    });

    after(async () => {
      for (const r of relays ?? []) r.thaw();
      await app?.stop();
      for (const r of relays ?? []) await r.cut();
      await dropQuestDbTable(pgUrl, table);
    });

    it('answers 503 within STORE_TIMEOUT_MS while QuestDB is frozen, /health within 2 s, and recovers with nothing acknowledged lost', async () => {
      const load = new StoreLoad(admin, new ApiClient(app.url), XID, Date.UTC(2024, 0, 1));
      load.start();
      try {
        await eventually('writes acknowledged before the freeze', async () => (load.acknowledged.size >= 200 ? true : undefined), 60_000);
        for (const r of relays) r.freeze();
        const frozenAt = Date.now();
        await new Promise((r) => setTimeout(r, FREEZE_MS / 2));
        // Liveness touches no store: the freeze does not reach it.
        const live = await timedGet(app.url, '/health/live');
        assert.equal(live.status, 200);
        assert.ok(live.ms < 1_000, `/health/live took ${live.ms} ms during the freeze`);
        await new Promise((r) => setTimeout(r, FREEZE_MS - (Date.now() - frozenAt)));
        for (const r of relays) r.thaw();
        const thawedAt = Date.now();
        for (const kind of ['write', 'rollup', 'raw', 'health'] as const) {
          await eventually(`a ${kind} answered 200 after the thaw`, async () => (load.since(thawedAt, kind).some((o) => o.status === 200) ? true : undefined), 60_000);
        }
        const acknowledgedAfter = load.acknowledged.size;
        await eventually('more writes acknowledged after the thaw', async () => (load.acknowledged.size >= acknowledgedAfter + 100 ? true : undefined), 60_000);
        await load.stop();
        if (process.env.TEST_FREEZE_LOG) console.log(describeOutcomes(load.during(frozenAt - 1_000, thawedAt + 3_000)));

        const during = load.during(frozenAt, thawedAt);
        assertAnsweredInTime(during, { storeTimeoutMs: STORE_TIMEOUT_MS, marginMs: MARGIN_MS, healthWithinMs: HEALTH_WITHIN_MS });
        assertRefused(during, [['write'], ['rollup'], ['raw']]);
        // The metadata (PGlite) is not frozen: its reads go on.
        assert.ok(during.filter((o) => o.kind === 'metadata').every((o) => o.status === 200), describeOutcomes(during));
        for (const { body } of degradedAnswers(during)) assert.deepEqual([body.status, body.metadata.ok, body.values.ok], ['degraded', true, false]);
        await load.assertAcknowledgedStored();
      } finally {
        for (const r of relays) r.thaw();
        await load.stop();
      }
    });
  });
}
