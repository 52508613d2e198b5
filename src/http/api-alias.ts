// Serves the API's alias prefixes (core/api-paths.ts) by rewriting the path before anything looks
// at it: every middleware and router below sees /rest/latest, and `apiPrefix(ctx)` gives the prefix
// the client used, for the paths an answer names (Location headers, the OpenAPI document).
import type { Context, Next } from 'koa';
import { API_PREFIX, canonicalApiPath } from '../core/api-paths.js';
import type { AppState } from './state.js';

type Ctx = Context & { state: AppState };

export async function apiAlias(ctx: Ctx, next: Next): Promise<void> {
  const aliased = canonicalApiPath(ctx.path);
  if (aliased) {
    ctx.state.apiPrefix = aliased.prefix;
    ctx.path = aliased.path; // Koa keeps the query string
  }
  await next();
}

/** The API prefix the request came under: what a path in the answer starts with. */
export function apiPrefix(ctx: { state: AppState }): string {
  return ctx.state.apiPrefix ?? API_PREFIX;
}
