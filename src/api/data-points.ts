// /data-points: CRUD with RQL lists, PATCH, and Mango's enable-disable.
import Router from '@koa/router';
import { DomainError } from '../core/errors.js';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import type { AppContext, AppState } from '../http/state.js';
import { dataPointView, type DataPointService } from '../services/data-points.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { PointReliability } from '../values/live/reliability.js';
import { addCrudRoutes } from './crud.js';
import { queryFlag } from './query-params.js';

export function dataPointsRouter(dataPoints: DataPointService, reliability: Pick<PointReliability, 'get'>): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/data-points' });
  const view = (p: DataPointRecord) => dataPointView(p, reliability.get(p.id));

  router.put('/enable-disable/:xid', async (ctx) => {
    ctx.body = view(await dataPoints.setEnabled(caller(ctx).user, ctx.params.xid!, await enableDisableInput(ctx)));
  });

  addCrudRoutes(router, '/data-points', dataPoints, view);
  return router;
}

/**
 * The body `{"enabled", "restart"}` and Mango's query parameters of the same names (node-mango-client
 * sends only those, `restart=` when it has none) as one object, for the service's schema to check.
 */
async function enableDisableInput(ctx: AppContext): Promise<unknown> {
  const body = await readJson(ctx, { optional: true });
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) return body; // the schema refuses it
  const input: Record<string, unknown> = { ...(body as Record<string, unknown> | undefined) };
  for (const name of ['enabled', 'restart']) {
    const value = queryFlag(ctx, name);
    if (value === undefined) continue;
    if (input[name] !== undefined && input[name] !== value) throw DomainError.badRequest(`${name} is given twice with different values: in the query and in the body`);
    input[name] = value;
  }
  return input;
}
