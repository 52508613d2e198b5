// /data-sources: CRUD, by-xid, enable-disable.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import type { AppState } from '../http/state.js';
import { dataSourceView } from '../services/data-sources.js';
import type { Services } from '../services/index.js';
import { addCrudRoutes } from './crud.js';

export function dataSourcesRouter(s: Services): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/data-sources' });

  router.get('/by-xid/:xid', async (ctx) => {
    ctx.body = dataSourceView(await s.dataSources.get(caller(ctx).user, ctx.params.xid!));
  });

  router.put('/enable-disable/:xid', async (ctx) => {
    ctx.body = dataSourceView(await s.dataSources.setEnabled(caller(ctx).user, ctx.params.xid!, await readJson(ctx)));
  });

  addCrudRoutes(router, '/data-sources', s.dataSources, dataSourceView);
  return router;
}
