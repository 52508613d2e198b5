// Counts every HTTP request by method, route pattern and status, with its latency. The route is the
// router's pattern (/rest/latest/data-points/:xid), never the raw path, so series stay few.
import type { Context, Next } from 'koa';
import type { Counter, Histogram } from 'prom-client';

export type HttpLabels = 'method' | 'route' | 'status';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * The pattern @koa/router matched (full, with prefixes); else "static" for the console's files and
 * "unmatched" for failures before or without routing (404s, scanners, 401s).
 */
function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  if (typeof matched === 'string') return matched;
  return ctx.status < 400 ? 'static' : 'unmatched';
}

/**
 * Place it outside the error middleware, so it records the status the client gets. Latency ends
 * when the response starts: a streamed body keeps flowing after it.
 */
export function httpMetrics(requests: Counter<HttpLabels>, duration: Histogram<HttpLabels>) {
  return async function recordRequest(ctx: Context, next: Next): Promise<void> {
    const end = duration.startTimer();
    try {
      await next();
    } finally {
      const labels = { method: METHODS.has(ctx.method) ? ctx.method : 'OTHER', route: routeOf(ctx), status: String(ctx.status) };
      requests.inc(labels);
      end(labels);
    }
  };
}
