// Stateless double-submit CSRF check: the XSRF-TOKEN cookie must equal the X-XSRF-TOKEN header.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { DomainError } from '../core/errors.js';
import type { AppState } from './state.js';

export const CSRF_COOKIE = 'XSRF-TOKEN';
export const CSRF_HEADER = 'x-xsrf-token';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Compares two secrets in time independent of where they differ (hashing equalises lengths). */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

export function assertCsrf(ctx: Context): void {
  const cookie = ctx.cookies.get(CSRF_COOKIE) ?? '';
  const header = ctx.get(CSRF_HEADER);
  if (cookie === '' || header === '' || !constantTimeEqual(cookie, header)) {
    throw DomainError.accessDenied('Invalid CSRF token');
  }
}

/** State-changing requests authenticated by the session cookie must pass the double-submit check. */
export async function csrfMiddleware(ctx: Context & { state: AppState }, next: Next): Promise<void> {
  if (ctx.state.auth?.method === 'session' && UNSAFE_METHODS.has(ctx.method)) assertCsrf(ctx);
  await next();
}
