// One log line per request. Only method, path, status, time and the user: never headers, cookies,
// query strings (which may carry values) or bodies, so no secret reaches the log.
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from './state.js';

/** A proxy asks these every few seconds: a healthy answer is logged at debug, anything else as usual. */
const HEALTH_CHECKS = new Set(['/health', '/health/live']);

/**
 * Logs once the response is over (written, or destroyed), so that the line says what the client
 * finally got: the status of an error answered after the middleware chain, or of a failure that cut
 * a streamed answer short (`failedStatus`, http/errors.ts), never the 200 the chain had set.
 */
export function requestLog(log: Logger) {
  return async function logRequest(ctx: Context & { state: AppState }, next: Next): Promise<void> {
    const start = process.hrtime.bigint();
    const path = ctx.path; // as the client sent it, before an alias is rewritten (http/api-alias.ts)
    let logged = false;
    const write = (): void => {
      if (logged) return;
      logged = true;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const status = ctx.state.failedStatus ?? ctx.status;
      const routine = HEALTH_CHECKS.has(path) && status >= 200 && status < 300;
      log[routine ? 'debug' : 'info'](
        { method: ctx.method, path, status, ms: Math.round(ms * 10) / 10, user: ctx.state.auth?.user.username, ip: ctx.ip },
        'request',
      );
    };
    ctx.res.once('finish', write);
    ctx.res.once('close', write);
    await next();
  };
}
