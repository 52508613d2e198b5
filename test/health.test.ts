// The readiness check behind GET /health (src/api/health.ts) over a real store whose ping can be held
// (a frozen server's): it answers within its budget whatever a store does, a store that did not answer
// in time is not ok, and a ping still under way is waited for again, never joined by another.
import assert from 'node:assert/strict';
import { readinessCheck, type PingableStore } from '../src/api/health.js';
import { gate, openTempDuckDb, type TempStore } from './helpers/duckdb-temp.js';

/** A real store whose pings are counted and, while `held` is set, wait for it first. */
function heldPings(temp: TempStore): PingableStore & { pings: number; held: Promise<void> | undefined } {
  const store = {
    engine: temp.store.engine,
    pings: 0,
    held: undefined as Promise<void> | undefined,
    async ping() {
      store.pings++;
      if (store.held) await store.held;
      await temp.store.ping();
    },
  };
  return store;
}

describe('readiness check (/health)', function () {
  this.timeout(30_000);
  const BUDGET_MS = 200;
  const MAX_AGE_MS = 50;
  let temp: TempStore;

  before(async () => {
    temp = await openTempDuckDb();
  });
  after(() => temp.dispose());

  async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
    const started = performance.now();
    const result = await work();
    return { result, ms: performance.now() - started };
  }

  it('answers within the budget with the store that did not answer as not ok, and pings it no more while its ping is under way', async () => {
    const metadata = heldPings(temp);
    const values = heldPings(temp);
    const frozen = gate();
    values.held = frozen.opened;
    const check = readinessCheck({ metadata, values }, MAX_AGE_MS, BUDGET_MS);

    const first = await timed(check);
    assert.deepEqual(first.result, { metadata: { engine: 'duckdb', ok: true }, values: { engine: 'duckdb', ok: false } });
    assert.ok(first.ms >= BUDGET_MS - 5 && first.ms < BUDGET_MS + 500, `answered in ${first.ms} ms`);

    // Later checks (the answer is older than MAX_AGE_MS) wait for the same ping, again at most the budget.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, MAX_AGE_MS + 10)); // a timer may fire a little early by performance.now()
      const again = await timed(check);
      assert.equal(again.result.values.ok, false);
      assert.ok(again.ms < BUDGET_MS + 500, `answered in ${again.ms} ms`);
    }
    assert.equal(values.pings, 1, 'a ping still under way is not repeated');
    assert.equal(metadata.pings, 4, 'the store that answers is asked every round');

    // The store answers again: the next round says ok.
    values.held = undefined;
    frozen.open();
    await new Promise((r) => setTimeout(r, MAX_AGE_MS + 10)); // a timer may fire a little early by performance.now()
    const thawed = await timed(check);
    assert.deepEqual(thawed.result.values, { engine: 'duckdb', ok: true });
    assert.ok(thawed.ms < BUDGET_MS, `answered in ${thawed.ms} ms`);
  });

  it('shares one round among concurrent callers and answers from it for its max age', async () => {
    const metadata = heldPings(temp);
    const values = heldPings(temp);
    const check = readinessCheck({ metadata, values }, 60_000, BUDGET_MS);
    const answers = await Promise.all([check(), check(), check()]);
    assert.ok(answers.every((a) => a.metadata.ok && a.values.ok));
    await check();
    assert.deepEqual([metadata.pings, values.pings], [1, 1]);
  });

  it('says not ok for a store whose ping fails', async () => {
    const closed = await openTempDuckDb();
    await closed.store.close();
    const check = readinessCheck({ metadata: heldPings(temp), values: closed.store }, MAX_AGE_MS, BUDGET_MS);
    const { result, ms } = await timed(check);
    assert.deepEqual(result, { metadata: { engine: 'duckdb', ok: true }, values: { engine: 'duckdb', ok: false } });
    assert.ok(ms < BUDGET_MS, `a failed ping is not waited out: ${ms} ms`);
    await closed.dispose();
  });
});
