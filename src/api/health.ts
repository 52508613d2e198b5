// GET /health/live: the process answers (liveness, touches nothing). GET /health: readiness, a round
// trip to each store, made at most once a second whatever the request rate (a proxy or orchestrator
// polling many times a second must not load the stores). It answers within 2 s whatever a store does:
// a store that has not answered within PING_BUDGET_MS is not ok (503 "degraded"), and a ping still
// under way is waited for again rather than joined by another (a frozen server collects no pings).
import Router from '@koa/router';
import type { AppState } from '../http/state.js';

/** A store as /health sees it: which engine, and a cheap round trip. */
export interface PingableStore {
  readonly engine: string;
  ping(): Promise<void>;
}

interface StoreHealth {
  engine: string;
  ok: boolean;
}

interface Readiness {
  metadata: StoreHealth;
  values: StoreHealth;
}

/** How long one round of store checks answers /health. */
export const READINESS_MAX_AGE_MS = 1_000;
/** How long /health waits for a store's ping: the answer comes within 2 s with the time to send it. */
export const PING_BUDGET_MS = 1_500;

/** A store's health check: its ping, given at most `budgetMs`; a ping not answered yet is not repeated. */
function checker(store: PingableStore, budgetMs: number): () => Promise<StoreHealth> {
  let pinging: Promise<boolean> | undefined;
  return async () => {
    pinging ??= store.ping().then(
      () => true,
      () => false,
    ).finally(() => (pinging = undefined));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), budgetMs)));
    const ok = await Promise.race([pinging, late]).finally(() => clearTimeout(timer));
    return { engine: store.engine, ok };
  };
}

/** The stores' state, checked at most once per `maxAgeMs`; concurrent callers share one check. */
export function readinessCheck(
  stores: { metadata: PingableStore; values: PingableStore },
  maxAgeMs = READINESS_MAX_AGE_MS,
  budgetMs = PING_BUDGET_MS,
): () => Promise<Readiness> {
  let last: { at: number; result: Readiness } | undefined;
  let running: Promise<Readiness> | undefined;
  const checkMetadata = checker(stores.metadata, budgetMs);
  const checkValues = checker(stores.values, budgetMs);
  const run = async (): Promise<Readiness> => {
    const [metadata, values] = await Promise.all([checkMetadata(), checkValues()]);
    const result = { metadata, values };
    last = { at: performance.now(), result };
    return result;
  };
  return () => {
    if (last && performance.now() - last.at < maxAgeMs) return Promise.resolve(last.result);
    running ??= run().finally(() => (running = undefined));
    return running;
  };
}

export function healthRouter(stores: { metadata: PingableStore; values: PingableStore }): Router<AppState> {
  const router = new Router<AppState>();
  const readiness = readinessCheck(stores);
  router.get('/health/live', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/health', async (ctx) => {
    const { metadata, values } = await readiness();
    const ok = metadata.ok && values.ok;
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'degraded', metadata, values };
  });
  return router;
}
