// One log line per request. Only method, path, status, time and the user: never headers, cookies,
// query strings (which may carry values) or bodies, so no secret reaches the log.
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from './state.js';

export function requestLog(log: Logger) {
  return async function logRequest(ctx: Context & { state: AppState }, next: Next): Promise<void> {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, user: ctx.state.auth?.user.username, ip: ctx.ip },
        'request',
      );
    }
  };
}
