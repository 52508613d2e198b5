// GET /rest/latest/openapi.json: the OpenAPI document, built once when the router is made (and at
// /rest/v3/openapi.json naming /rest/v3 paths).
// Public (http/auth.ts isPublic): it describes the API, not data, and Swagger UI loads it before login.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Router from '@koa/router';
import { API_ALIASES, API_PREFIX } from '../core/api-paths.js';
import { apiPrefix } from '../http/api-alias.js';
import type { AppState } from '../http/state.js';
import { projectRoot } from '../paths.js';
import { buildOpenApiDocument } from './openapi-document.js';

export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

interface Document {
  text: string;
  etag: string;
}

/** The document's text for each prefix: an alias's names its own paths (/rest/v3/...). */
function documentsByPrefix(): Map<string, Document> {
  const text = JSON.stringify(buildOpenApiDocument({ version: packageVersion() }));
  const documents = new Map<string, Document>();
  for (const prefix of [API_PREFIX, ...API_ALIASES]) {
    const own = text.split(API_PREFIX).join(prefix);
    documents.set(prefix, { text: own, etag: `"${createHash('sha256').update(own).digest('base64url').slice(0, 22)}"` });
  }
  return documents;
}

export function openApiRouter(): Router<AppState> {
  const documents = documentsByPrefix();
  const router = new Router<AppState>();
  router.get(OPENAPI_PATH, (ctx) => {
    const { text, etag } = documents.get(apiPrefix(ctx))!;
    // Changes only with a new release: clients revalidate with the ETag and usually get a 304.
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', etag);
    ctx.status = 200; // ctx.fresh looks only at 2xx responses
    ctx.type = 'application/json';
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = text;
  });
  return router;
}
