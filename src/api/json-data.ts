// /json-data (Mango's): the JSON store's items with the document as the body, the item's name and
// permissions in the query (?name=&readPermission=user,operators&editPermission=), and dot paths
// into the document (services/json-data.ts). Answers are Mango's JsonDataModel: the item as
// /json-store shows it, jsonData being what the request read or wrote.
import Router from '@koa/router';
import { API_PREFIX, caller } from '../http/auth.js';
import { readJsonText } from '../http/body.js';
import type { AppContext, AppState } from '../http/state.js';
import type { JsonDataService } from '../services/json-data.js';
import { JSON_STORE_BODY_LIMIT, jsonStoreItemJson, type JsonStoreFields } from '../services/json-store.js';
import type { JsonStoreItem } from '../store/metadata/json-store.js';
import { singleQuery } from './query-params.js';

const PATH = `${API_PREFIX}/json-data`;

function sendJsonText(ctx: AppContext, text: string): void {
  ctx.type = 'application/json'; // before the body, or Koa would call a string text/plain
  ctx.body = text;
}

function sendItem(ctx: AppContext, item: JsonStoreItem): void {
  sendJsonText(ctx, jsonStoreItemJson(item));
}

/** The whole body is the document: kept exactly as sent, whatever its strings hold (as jsonData). */
async function documentText(ctx: AppContext): Promise<string> {
  return (await readJsonText(ctx, { limit: JSON_STORE_BODY_LIMIT, verbatim: 'all' }))!;
}

/** The raw last segment: a %2E inside a key must not split it (see core/json-text.ts). */
function rawPath(ctx: AppContext): string {
  return ctx.path.slice(ctx.path.lastIndexOf('/') + 1);
}


/** Roles as Mango's query gives them: comma-separated, repeated, or empty (no role: superadmin only). */
function roles(ctx: AppContext, name: string): string[] | undefined {
  const value = ctx.query[name];
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(','))
    .map((r) => r.trim())
    .filter((r) => r !== '');
}

/** The item's fields from the query; those left out are kept (a new item needs a name). */
function fields(ctx: AppContext): JsonStoreFields {
  const out: JsonStoreFields = {};
  const name = singleQuery(ctx, 'name');
  if (name !== undefined) out.name = name;
  const read = roles(ctx, 'readPermission');
  if (read !== undefined) out.readPermission = read;
  const edit = roles(ctx, 'editPermission');
  if (edit !== undefined) out.editPermission = edit;
  return out;
}

export function jsonDataRouter(jsonData: JsonDataService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/json-data' });

  router.get('/', async (ctx) => {
    sendJsonText(ctx, await jsonData.xids(caller(ctx).user));
  });

  router.get('/:xid', async (ctx) => {
    sendItem(ctx, await jsonData.get(caller(ctx).user, ctx.params.xid!));
  });

  router.get('/:xid/:path', async (ctx) => {
    sendItem(ctx, await jsonData.getAt(caller(ctx).user, ctx.params.xid!, rawPath(ctx)));
  });

  // POST answers 201 whether it created the item or not, as Mango does.
  const replace = (withPath: boolean) => async (ctx: AppContext) => {
    const user = caller(ctx).user;
    const { item } = await jsonData.replace(user, ctx.params.xid!, withPath ? rawPath(ctx) : undefined, fields(ctx), await documentText(ctx));
    ctx.status = 201;
    ctx.set('Location', `${PATH}/${encodeURIComponent(item.xid)}`);
    sendItem(ctx, item);
  };
  router.post('/:xid', replace(false));
  router.post('/:xid/:path', replace(true));

  const merge = (withPath: boolean) => async (ctx: AppContext) => {
    const user = caller(ctx).user;
    sendItem(ctx, await jsonData.merge(user, ctx.params.xid!, withPath ? rawPath(ctx) : undefined, fields(ctx), await documentText(ctx)));
  };
  router.put('/:xid', merge(false));
  router.put('/:xid/:path', merge(true));

  router.delete('/:xid', async (ctx) => {
    sendItem(ctx, await jsonData.delete(caller(ctx).user, ctx.params.xid!, undefined));
  });
  router.delete('/:xid/:path', async (ctx) => {
    sendItem(ctx, await jsonData.delete(caller(ctx).user, ctx.params.xid!, rawPath(ctx)));
  });

  return router;
}
