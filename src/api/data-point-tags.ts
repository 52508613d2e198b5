// /data-point-tags (Mango's): tag keys, the values of a key, and one point's tags read, replaced
// (POST, node-mango-client's setTags) or merged (PUT, its addTags), as Mango's controller maps them.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import type { AppContext, AppState } from '../http/state.js';
import type { DataPointTagsService } from '../services/data-point-tags.js';

/** Answers JSON text the store built (an array of strings). */
function sendJsonText(ctx: AppContext, text: string): void {
  ctx.type = 'application/json';
  ctx.body = text;
}

export function dataPointTagsRouter(tags: DataPointTagsService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/data-point-tags' });

  router.get('/keys', async (ctx) => {
    sendJsonText(ctx, await tags.keys(caller(ctx).user));
  });

  router.get('/values/:key', async (ctx) => {
    sendJsonText(ctx, await tags.values(caller(ctx).user, ctx.params.key!, ctx.querystring));
  });

  router.get('/point/:xid', async (ctx) => {
    ctx.body = await tags.get(caller(ctx).user, ctx.params.xid!);
  });

  router.post('/point/:xid', async (ctx) => {
    ctx.body = await tags.replace(caller(ctx).user, ctx.params.xid!, await readJson(ctx));
  });

  router.put('/point/:xid', async (ctx) => {
    ctx.body = await tags.merge(caller(ctx).user, ctx.params.xid!, await readJson(ctx));
  });

  return router;
}
