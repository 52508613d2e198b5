// GET /metrics: Prometheus text. Superadmin only, or anyone with METRICS_PUBLIC=true; mounted
// before requireAuthentication (app.ts) because whether it is public is configuration.
import Router from '@koa/router';
import { DomainError } from '../core/errors.js';
import type { ServiceMetrics } from '../http/metrics.js';
import type { AppState } from '../http/state.js';
import { assertSuperadmin } from '../services/permissions.js';

export function metricsRouter(metrics: ServiceMetrics, publicAccess: boolean): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/metrics', async (ctx) => {
    if (!publicAccess) {
      const auth = ctx.state.auth;
      if (!auth) throw ctx.state.authError ?? DomainError.unauthenticated();
      assertSuperadmin(auth.user);
    }
    const text = await metrics.registry.metrics();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.registry.contentType;
    ctx.body = text;
  });
  return router;
}
