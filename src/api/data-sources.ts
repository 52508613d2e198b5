// /data-sources: CRUD, by-xid, enable-disable, Mango's copy, and an OPC_UA source's browse.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import type { AppState } from '../http/state.js';
import type { ConfigurationService } from '../services/configuration.js';
import { DomainError } from '../core/errors.js';
import { dataSourceView, DISCOVER_WAIT_MS, type DataSourceService } from '../services/data-sources.js';
import { apiPrefix } from '../http/api-alias.js';
import { addCrudRoutes } from './crud.js';
import { queryFlag, queryText } from './query-params.js';

/** Where a browse starts: the Objects folder (ns=0;i=85). */
const OBJECTS_FOLDER = 'ns=0;i=85';

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

  // OPC_UA: a node's children for picking points' nodes (the Objects folder when no nodeId is given).
  router.get('/:xid/browse', async (ctx) => {
    ctx.body = await dataSources.browse(caller(ctx).user, ctx.params.xid!, queryText(ctx, 'nodeId') ?? OBJECTS_FOLDER);
  });

  // BACNET_IP: Who-Is on the source's network, then each answering device's objects.
  router.get('/:xid/discover', async (ctx) => {
    const text = queryText(ctx, 'waitMs');
    const waitMs = text === undefined ? DISCOVER_WAIT_MS.default : Number(text);
    if (!Number.isInteger(waitMs) || waitMs < DISCOVER_WAIT_MS.min || waitMs > DISCOVER_WAIT_MS.max) {
      throw DomainError.badRequest(`waitMs must be an integer from ${DISCOVER_WAIT_MS.min} to ${DISCOVER_WAIT_MS.max}`);
    }
    ctx.body = await dataSources.discover(caller(ctx).user, ctx.params.xid!, waitMs);
  });

  addCrudRoutes(router, '/data-sources', dataSources, dataSourceView);
  return router;
}
