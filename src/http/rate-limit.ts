// Applies the rate limits to every request: per user when authenticated, else per client IP.
import type { Context, Next } from 'koa';
import type { RateLimiter } from '../core/rate-limits.js';
import type { AppState } from './state.js';

export function rateLimit(limiter: RateLimiter) {
  return async function limitRequests(ctx: Context & { state: AppState }, next: Next): Promise<void> {
    const auth = ctx.state.auth;
    if (auth) limiter.takeUserRequest(auth.user.username);
    else limiter.takeAnonymousRequest(ctx.ip);
    await next();
  };
}
