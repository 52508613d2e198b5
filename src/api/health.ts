// GET /health: liveness plus a round trip to each store.
import Router from '@koa/router';
import type { AppState } from '../http/state.js';

/** A store as /health sees it: which engine, and a cheap round trip. */
export interface PingableStore {
  readonly engine: string;
  ping(): Promise<void>;
}

async function check(store: PingableStore): Promise<{ engine: string; ok: boolean }> {
  try {
    await store.ping();
    return { engine: store.engine, ok: true };
  } catch {
    return { engine: store.engine, ok: false };
  }
}

export function healthRouter(stores: { metadata: PingableStore; values: PingableStore }): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/health', async (ctx) => {
    const metadata = await check(stores.metadata);
    const values = await check(stores.values);
    const ok = metadata.ok && values.ok;
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'degraded', metadata, values };
  });
  return router;
}
