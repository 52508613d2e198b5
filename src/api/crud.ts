// The five routes every XID-named resource has: list (RQL), read, create, update, delete; and PATCH
// (Mango's partial update) where the service has it.
import type Router from '@koa/router';
import { apiPrefix } from '../http/api-alias.js';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import { sendList } from '../http/list.js';
import type { AppState } from '../http/state.js';
import type { Principal } from '../services/permissions.js';
import type { ListResult } from '../services/resources.js';

export interface CrudService<R> {
  list(user: Principal, rawQuery: string): Promise<ListResult<R>>;
  get(user: Principal, xid: string): Promise<R>;
  create(user: Principal, body: unknown): Promise<R>;
  update(user: Principal, xid: string, body: unknown): Promise<R>;
  /** The fields given replace, the rest kept; then as update. */
  patch?(user: Principal, xid: string, body: unknown): Promise<R>;
  delete(user: Principal, xid: string): Promise<R>;
}

/** Adds the routes to a router whose prefix is `/<resource>`; `path` is that prefix. */
export function addCrudRoutes<R extends { xid: string }>(
  router: Router<AppState>,
  path: string,
  service: CrudService<R>,
  view: (record: R) => unknown,
): void {
  router.get('/', async (ctx) => {
    const { total, batches } = await service.list(caller(ctx).user, ctx.querystring);
    await sendList(ctx, total, batches, view);
  });

  router.get('/:xid', async (ctx) => {
    ctx.body = view(await service.get(caller(ctx).user, ctx.params.xid!));
  });

  router.post('/', async (ctx) => {
    const created = await service.create(caller(ctx).user, await readJson(ctx));
    ctx.status = 201;
    ctx.set('Location', `${apiPrefix(ctx)}${path}/${encodeURIComponent(created.xid)}`);
    ctx.body = view(created);
  });

  router.put('/:xid', async (ctx) => {
    ctx.body = view(await service.update(caller(ctx).user, ctx.params.xid!, await readJson(ctx)));
  });

  if (service.patch) {
    const patch = service.patch.bind(service);
    router.patch('/:xid', async (ctx) => {
      ctx.body = view(await patch(caller(ctx).user, ctx.params.xid!, await readJson(ctx)));
    });
  }

  router.delete('/:xid', async (ctx) => {
    ctx.body = view(await service.delete(caller(ctx).user, ctx.params.xid!));
  });
}
