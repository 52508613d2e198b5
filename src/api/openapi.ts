// GET /rest/latest/openapi.json: the OpenAPI document, built once when the router is made.
// Public (http/auth.ts isPublic): it describes the API, not data, and Swagger UI loads it before login.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Router from '@koa/router';
import { API_PREFIX } from '../http/auth.js';
import type { AppState } from '../http/state.js';
import { projectRoot } from '../paths.js';
import { buildOpenApiDocument } from './openapi-document.js';

export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

export function openApiRouter(): Router<AppState> {
  const text = JSON.stringify(buildOpenApiDocument({ version: packageVersion() }));
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 22)}"`;
  const router = new Router<AppState>();
  router.get(OPENAPI_PATH, (ctx) => {
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
