// /data-sources: CRUD, by-xid, enable-disable, and Mango's copy.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import type { AppState } from '../http/state.js';
import type { ConfigurationService } from '../services/configuration.js';
import { dataSourceView, type DataSourceService } from '../services/data-sources.js';
import { apiPrefix } from '../http/api-alias.js';
import { addCrudRoutes } from './crud.js';
import { queryFlag, queryText } from './query-params.js';

export function dataSourcesRouter(dataSources: DataSourceService, configuration: Pick<ConfigurationService, 'copySource'>): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/data-sources' });

  router.get('/by-xid/:xid', async (ctx) => {
    ctx.body = dataSourceView(await dataSources.get(caller(ctx).user, ctx.params.xid!));
  });

  router.put('/enable-disable/:xid', async (ctx) => {
    ctx.body = dataSourceView(await dataSources.setEnabled(caller(ctx).user, ctx.params.xid!, await readJson(ctx)));
  });

  // Mango's copy (node-mango-client's DataSource.copy): query parameters only; "null" is Mango's "not given".
  router.put('/copy/:xid', async (ctx) => {
    const text = (name: string) => {
      const value = queryText(ctx, name);
      return value === 'null' ? undefined : value;
    };
    const copy = await configuration.copySource(caller(ctx).user, ctx.params.xid!, {
      xid: text('copyXid'),
      name: text('copyName'),
      deviceName: text('copyDeviceName'),
      enabled: queryFlag(ctx, 'enabled') ?? false,
      points: queryFlag(ctx, 'copyPoints') ?? false,
    });
    ctx.set('Location', `${apiPrefix(ctx)}/data-sources/${encodeURIComponent(copy.xid)}`);
    ctx.body = dataSourceView(copy);
  });

  addCrudRoutes(router, '/data-sources', dataSources, dataSourceView);
  return router;
}
