// GET /health/live: the process answers (liveness, touches nothing). GET /health: readiness, a round
// trip to each store, made at most once a second whatever the request rate (a proxy or orchestrator
// polling many times a second must not load the stores).
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

async function check(store: PingableStore): Promise<StoreHealth> {
  try {
    await store.ping();
    return { engine: store.engine, ok: true };
  } catch {
    return { engine: store.engine, ok: false };
  }
}

/** The stores' state, checked at most once per `maxAgeMs`; concurrent callers share one check. */
export function readinessCheck(stores: { metadata: PingableStore; values: PingableStore }, maxAgeMs = READINESS_MAX_AGE_MS): () => Promise<Readiness> {
  let last: { at: number; result: Readiness } | undefined;
  let running: Promise<Readiness> | undefined;
  const run = async (): Promise<Readiness> => {
    const [metadata, values] = await Promise.all([check(stores.metadata), check(stores.values)]);
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
