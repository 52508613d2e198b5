// GET /health: liveness plus a round trip to each store.
import Router from '@koa/router';
import type { AppState } from '../http/state.js';
import type { Services } from '../services/index.js';

export function healthRouter(s: Services): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/health', async (ctx) => {
    let metadata: { engine: string; ok: boolean };
    try {
      await s.db.ping();
      metadata = { engine: s.db.engine, ok: true };
    } catch {
      metadata = { engine: s.db.engine, ok: false };
    }
    let values: { engine: string; ok: boolean };
    try {
      await s.pointValues.store.ping();
      values = { engine: s.pointValues.store.engine, ok: true };
    } catch {
      values = { engine: s.pointValues.store.engine, ok: false };
    }
    const ok = metadata.ok && values.ok;
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'degraded', metadata, values };
  });
  return router;
}
