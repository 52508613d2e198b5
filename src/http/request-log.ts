// One log line per request. Only method, path, status, time and the user: never headers, cookies,
// query strings (which may carry values) or bodies, so no secret reaches the log.
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from './state.js';

/** A proxy asks these every few seconds: a healthy answer is logged at debug, anything else as usual. */
const HEALTH_CHECKS = new Set(['/health', '/health/live']);

export function requestLog(log: Logger) {
  return async function logRequest(ctx: Context & { state: AppState }, next: Next): Promise<void> {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const routine = HEALTH_CHECKS.has(ctx.path) && ctx.status >= 200 && ctx.status < 300;
      log[routine ? 'debug' : 'info'](
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, user: ctx.state.auth?.user.username, ip: ctx.ip },
        'request',
      );
    }
  };
}
