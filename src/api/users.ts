// /users: list, read, create, update (PUT, and PATCH: the fields given) and delete users.
import Router from '@koa/router';
import { apiPrefix } from '../http/api-alias.js';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import { sendList } from '../http/list.js';
import type { AppContext, AppState } from '../http/state.js';
import { userView, type Actor, type UserService } from '../services/users.js';

function actor(ctx: AppContext): Actor {
  const { user, sessionIdHash } = caller(ctx);
  return { id: user.id, username: user.username, permissions: user.permissions, sessionIdHash };
}

export function usersRouter(users: UserService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/users' });

  router.get('/', async (ctx) => {
    const { total, batches } = await users.list(actor(ctx), ctx.querystring);
    await sendList(ctx, total, batches, userView);
  });

  router.get('/current', (ctx) => {
    ctx.body = userView(caller(ctx).user);
  });

  router.get('/:username', async (ctx) => {
    ctx.body = userView(await users.get(actor(ctx), ctx.params.username!));
  });

  router.post('/', async (ctx) => {
    const user = await users.create(actor(ctx), await readJson(ctx));
    ctx.status = 201;
    ctx.set('Location', `${apiPrefix(ctx)}/users/${encodeURIComponent(user.username)}`);
    ctx.body = userView(user);
  });

  router.put('/:username', async (ctx) => {
    ctx.body = userView(await users.update(actor(ctx), ctx.params.username!, await readJson(ctx)));
  });

  router.patch('/:username', async (ctx) => {
    ctx.body = userView(await users.patch(actor(ctx), ctx.params.username!, await readJson(ctx)));
  });

  router.delete('/:username', async (ctx) => {
    ctx.body = userView(await users.delete(actor(ctx), ctx.params.username!));
  });

  return router;
}
