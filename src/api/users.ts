// /users: list, read, create, update and delete users.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import { sendList } from '../http/list.js';
import type { AppContext, AppState } from '../http/state.js';
import type { Services } from '../services/index.js';
import { userView, type Actor } from '../services/users.js';

function actor(ctx: AppContext): Actor {
  const { user, sessionIdHash } = caller(ctx);
  return { id: user.id, username: user.username, permissions: user.permissions, sessionIdHash };
}

export function usersRouter(s: Services): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/users' });

  router.get('/', async (ctx) => {
    const { total, batches } = await s.users.list(actor(ctx), ctx.querystring);
    sendList(ctx, total, batches, userView);
  });

  router.get('/current', (ctx) => {
    ctx.body = userView(caller(ctx).user);
  });

  router.get('/:username', async (ctx) => {
    ctx.body = userView(await s.users.get(actor(ctx), ctx.params.username!));
  });

  router.post('/', async (ctx) => {
    const user = await s.users.create(actor(ctx), await readJson(ctx));
    ctx.status = 201;
    ctx.set('Location', `/rest/latest/users/${encodeURIComponent(user.username)}`);
    ctx.body = userView(user);
  });

  router.put('/:username', async (ctx) => {
    ctx.body = userView(await s.users.update(actor(ctx), ctx.params.username!, await readJson(ctx)));
  });

  router.delete('/:username', async (ctx) => {
    ctx.body = userView(await s.users.delete(actor(ctx), ctx.params.username!));
  });

  return router;
}
