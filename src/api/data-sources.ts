// /data-sources: CRUD, by-xid, enable-disable.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import type { AppState } from '../http/state.js';
import { dataSourceView, type DataSourceService } from '../services/data-sources.js';
import { addCrudRoutes } from './crud.js';

export function dataSourcesRouter(dataSources: DataSourceService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/data-sources' });

  router.get('/by-xid/:xid', async (ctx) => {
    ctx.body = dataSourceView(await dataSources.get(caller(ctx).user, ctx.params.xid!));
  });

  router.put('/enable-disable/:xid', async (ctx) => {
    ctx.body = dataSourceView(await dataSources.setEnabled(caller(ctx).user, ctx.params.xid!, await readJson(ctx)));
  });

  addCrudRoutes(router, '/data-sources', dataSources, dataSourceView);
  return router;
}
