// The real thing behind questdb-outage's frozen relays: the QuestDB server itself stopped with SIGSTOP
// for TEST_QUESTDB_FREEZE_MS (default 20 s, at most 30 s) while a writer, readers and /health keep going
// through the service, then SIGCONT. Prints how long each kind of request took during the freeze and
// asserts /health within 2 s and reads and writes within STORE_TIMEOUT_MS (TEST_STORE_TIMEOUT_MS, else
// the service's default) and a margin. It freezes a server others may use: it runs only when
// TEST_QUESTDB_PID_FILE names the file holding the server's pid (with TEST_QUESTDB_ILP / TEST_QUESTDB_PG).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../src/config.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, loggedIn } from './helpers/client.js';
import { assertAnsweredInTime, assertRefused, loadPoint, StoreLoad, took, type Outcome, type RequestKind } from './helpers/store-load.js';
import { dropQuestDbTable, newQuestDbTableName } from './helpers/value-engines.questdb.js';
import { questdbSettings } from './helpers/value-engines.js';
import { eventually } from './helpers/wait.js';

const { ilp, pg: pgUrl } = questdbSettings;
const pidFile = process.env.TEST_QUESTDB_PID_FILE || undefined;
const FREEZE_MS = Math.min(30_000, Number(process.env.TEST_QUESTDB_FREEZE_MS ?? 20_000));
const STORE_TIMEOUT_MS = Number(process.env.TEST_STORE_TIMEOUT_MS ?? loadConfig({}).storeTimeoutMs);
/** What a request may take beyond STORE_TIMEOUT_MS on this busy machine. */
const MARGIN_MS = 1_500;
const HEALTH_WITHIN_MS = 2_000 + 500;
const XID = 'sigstop-dp';

if (!ilp || !pgUrl || !pidFile) {
  describe('QuestDB stopped with SIGSTOP under load', () => {
    it('is skipped: set TEST_QUESTDB_PID_FILE (and TEST_QUESTDB_ILP, TEST_QUESTDB_PG) to freeze the real server', function () {
      this.skip();
    });
  });
} else {
  describe('QuestDB stopped with SIGSTOP under load', function () {
    this.timeout(FREEZE_MS + 240_000);
    const table = newQuestDbTableName();
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    const thaw = () => {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone: nothing to thaw
      }
    };
    let app: TestApp;
    let admin: ApiClient;

    before(async () => {
      assert.ok(Number.isInteger(pid) && pid > 1, `no pid in ${pidFile}`);
      // Whatever happens to this process, the server is not left stopped.
      process.once('exit', thaw);
      app = await startTestApp('pglite', { QUESTDB_ILP: ilp, QUESTDB_PG: pgUrl, QUESTDB_TABLE: table, STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS) });
      admin = await loggedIn(app.url, 'admin', 'admin');
      await loadPoint(admin, XID, 'Through SIGSTOP');
    });

    after(async () => {
      thaw();
      await app?.stop();
      await dropQuestDbTable(pgUrl, table);
    });

    it('answers /health within 2 s and reads and writes within STORE_TIMEOUT_MS while QuestDB is stopped, and recovers with nothing acknowledged lost', async () => {
      const load = new StoreLoad(admin, new ApiClient(app.url), XID, Date.UTC(2024, 0, 1), false);
      load.start();
      let frozenAt: number;
      let thawedAt: number;
      try {
        await eventually('writes acknowledged before the freeze', async () => (load.acknowledged.size >= 200 ? true : undefined), 60_000);
        process.kill(pid, 'SIGSTOP');
        frozenAt = Date.now();
        try {
          await new Promise((r) => setTimeout(r, FREEZE_MS));
        } finally {
          thaw();
          thawedAt = Date.now();
        }
        for (const kind of ['write', 'rollup', 'raw', 'health'] as const) {
          await eventually(`a ${kind} answered 200 after SIGCONT`, async () => (load.since(thawedAt, kind).some((o) => o.status === 200) ? true : undefined), 60_000);
        }
      } finally {
        thaw();
        await load.stop();
      }
      const during = load.during(frozenAt, thawedAt);
      console.log(`    STORE_TIMEOUT_MS ${STORE_TIMEOUT_MS}, SIGSTOP for ${thawedAt - frozenAt} ms:`);
      for (const kind of ['health', 'rollup', 'raw', 'write'] as const) console.log(`      ${summarize(kind, during)}`);
      assertAnsweredInTime(during, { storeTimeoutMs: STORE_TIMEOUT_MS, marginMs: MARGIN_MS, healthWithinMs: HEALTH_WITHIN_MS });
      // With a freeze of two time-outs only a few reads fit in it, and one may be answered just after
      // SIGCONT (in time): some read, not every kind of read, is refused.
      assertRefused(during, [['write'], ['rollup', 'raw'], ['health']]);
      await load.assertAcknowledgedStored();
    });
  });
}

/** "rollup: 4 requests, 3 × 503, longest 10012 ms". */
function summarize(kind: RequestKind, outcomes: readonly Outcome[]): string {
  const mine = outcomes.filter((o) => o.kind === kind);
  const refused = mine.filter((o) => o.status === 503).length;
  const longest = Math.max(0, ...mine.map(took));
  return `${kind}: ${mine.length} requests, ${refused} × 503, longest ${longest} ms (${mine.map((o) => `${o.status} ${took(o)}`).join(', ')})`;
}
