// /json-store: list (RQL, without documents), read, dot-path read, create-or-replace, replace, delete.
// Item bodies are written as text: the stored document is spliced in, never parsed and re-serialised.
import Router from '@koa/router';
import { apiPrefix } from '../http/api-alias.js';
import { caller } from '../http/auth.js';
import { readJsonText } from '../http/body.js';
import { sendList } from '../http/list.js';
import type { AppContext, AppState } from '../http/state.js';
import { JSON_STORE_BODY_LIMIT, jsonStoreItemJson, jsonStoreSummary, type JsonStoreService } from '../services/json-store.js';


function sendJsonText(ctx: AppContext, text: string): void {
  ctx.type = 'application/json'; // before the body, or Koa would call a string text/plain
  ctx.body = text;
}

// The contract keeps jsonData exactly, `\u0000` and lone surrogates included (it is stored as JSON
// text, never as PostgreSQL text); every other string of the item is checked like any other.
const VERBATIM: ReadonlySet<string> = new Set(['jsonData']);

async function bodyText(ctx: AppContext): Promise<string> {
  // envelope 1: jsonData itself may nest JSON_MAX_DEPTH levels (the service checks it exactly).
  return (await readJsonText(ctx, { limit: JSON_STORE_BODY_LIMIT, verbatim: VERBATIM, envelope: 1 }))!;
}

export function jsonStoreRouter(jsonStore: JsonStoreService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/json-store' });

  router.get('/', async (ctx) => {
    const { total, batches } = await jsonStore.list(caller(ctx).user, ctx.querystring);
    await sendList(ctx, total, batches, jsonStoreSummary);
  });

  router.get('/:xid', async (ctx) => {
    sendJsonText(ctx, jsonStoreItemJson(await jsonStore.get(caller(ctx).user, ctx.params.xid!)));
  });

  router.get('/:xid/:path', async (ctx) => {
    // The raw segment, not the decoded parameter: a %2E inside a key must not split it.
    const rawPath = ctx.path.slice(ctx.path.lastIndexOf('/') + 1);
    sendJsonText(ctx, await jsonStore.getPath(caller(ctx).user, ctx.params.xid!, rawPath));
  });

  router.post('/', async (ctx) => {
    const { item, created } = await jsonStore.save(caller(ctx).user, await bodyText(ctx));
    if (created) {
      ctx.status = 201;
      ctx.set('Location', `${apiPrefix(ctx)}/json-store/${encodeURIComponent(item.xid)}`);
    }
    sendJsonText(ctx, jsonStoreItemJson(item));
  });

  router.put('/:xid', async (ctx) => {
    sendJsonText(ctx, jsonStoreItemJson(await jsonStore.replace(caller(ctx).user, ctx.params.xid!, await bodyText(ctx))));
  });

  router.delete('/:xid', async (ctx) => {
    sendJsonText(ctx, jsonStoreItemJson(await jsonStore.delete(caller(ctx).user, ctx.params.xid!)));
  });

  return router;
}
