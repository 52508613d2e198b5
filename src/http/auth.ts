// Authentication middleware: resolves the caller from the Authorization header (Bearer or Token JWT,
// or Basic) or the session cookie, and refuses anonymous callers outside the public paths.
import type { Context, Next } from 'koa';
import type { AuthService } from '../services/auth.js';
import { API_PREFIX } from '../core/api-paths.js';
import { DomainError } from '../core/errors.js';
import type { RateLimiter } from '../core/rate-limits.js';
import type { AppState, Authentication } from './state.js';

export const SESSION_COOKIE = 'DDS_SESSION';
export { API_PREFIX } from '../core/api-paths.js';

type Ctx = Context & { state: AppState };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * `user:password` from a Basic header's value, or undefined when it is not base64 of UTF-8 text
 * without NUL (which no store takes) and with a non-empty username.
 */
export function parseBasic(value: string): { username: string; password: string } | undefined {
  if (!BASE64.test(value)) return undefined;
  let decoded: string;
  try {
    decoded = strictUtf8.decode(Buffer.from(value, 'base64'));
  } catch {
    return undefined; // invalid UTF-8, surrogate halves included
  }
  if (decoded.includes('\u0000')) return undefined;
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** What a request presents to prove who it is: the Authorization header and the session cookie. */
export interface PresentedCredentials {
  /** The Authorization header, '' when absent. */
  authorization: string;
  sessionCookie: string | undefined;
  /** The client address, for the rate limits of password checks. */
  ip: string;
  /** Called before a costly check (a token signature, a password hash): throws to refuse the client first. */
  beforeCostlyCheck?: () => void;
}

async function fromAuthorizationHeader(auth: AuthService, c: PresentedCredentials, basicEnabled: boolean): Promise<Authentication> {
  const header = c.authorization;
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const value = space < 0 ? '' : header.slice(space + 1).trim();
  // `Token` is InfluxDB's word for the same thing (its clients and Telegraf send it).
  if (scheme === 'bearer' || scheme === 'token') return { user: await auth.token(value, c.beforeCostlyCheck), method: 'token' };
  if (scheme === 'basic') {
    if (!basicEnabled) throw DomainError.unauthenticated('Basic authentication is disabled');
    const credentials = parseBasic(value);
    if (!credentials) throw DomainError.unauthenticated('Malformed Basic credentials');
    return { user: await auth.basic(c.ip, credentials.username, credentials.password, c.beforeCostlyCheck), method: 'basic' };
  }
  throw DomainError.unauthenticated('Unsupported authorization scheme');
}

/**
 * The caller the credentials prove, or undefined when none were presented. The Authorization header
 * wins over the cookie. Refused credentials throw a DomainError. Shared by the HTTP middleware and the
 * WebSocket handshake.
 */
export async function authenticate(auth: AuthService, basicEnabled: boolean, c: PresentedCredentials): Promise<Authentication | undefined> {
  if (c.authorization !== '') return fromAuthorizationHeader(auth, c, basicEnabled);
  if (!c.sessionCookie) return undefined;
  const session = await auth.session(c.sessionCookie);
  if (!session) throw DomainError.unauthenticated('Session expired or invalid');
  return { user: session.user, method: 'session', sessionIdHash: session.idHash };
}

/**
 * Sets ctx.state.auth for a valid caller. Refused credentials are kept in ctx.state.authError and
 * reported where authentication is required (a stale cookie must not stop a new login); a rate
 * limit hit is reported at once. Cheap refusal first: an address whose anonymous budget is spent
 * gets 429 before a token signature or a password hash is checked for it (credentials that fail
 * leave the request anonymous, so such a client is spending that budget).
 */
export function identify(auth: AuthService, basicEnabled: boolean, limiter: RateLimiter) {
  return async function identifyCaller(ctx: Ctx, next: Next): Promise<void> {
    try {
      const ip = ctx.ip;
      const credentials: PresentedCredentials = {
        authorization: ctx.get('authorization'),
        sessionCookie: ctx.cookies.get(SESSION_COOKIE),
        ip,
        beforeCostlyCheck: () => limiter.assertAnonymousAllowed(ip),
      };
      const found = await authenticate(auth, basicEnabled, credentials);
      if (found) ctx.state.auth = found;
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind === 'rate-limited') throw err;
      ctx.state.authError = err;
    }
    await next();
  };
}

/** Paths that anonymous callers may use; everything else under the service needs a user. */
export function isPublic(method: string, rawPath: string): boolean {
  // The router matches paths case-insensitively, so this check must too.
  const path = rawPath.toLowerCase();
  if (!path.startsWith(API_PREFIX + '/') && path !== API_PREFIX && path !== '/metrics') return true;
  const rest = path.slice(API_PREFIX.length);
  return (
    (method === 'POST' && (rest === '/login' || rest === '/logout')) ||
    (method === 'GET' && (rest === '/auth-tokens/public-key' || rest === '/auth-tokens/verify' || rest === '/openapi.json'))
  );
}

export async function requireAuthentication(ctx: Ctx, next: Next): Promise<void> {
  if (!ctx.state.auth && !isPublic(ctx.method, ctx.path)) {
    throw ctx.state.authError ?? DomainError.unauthenticated();
  }
  await next();
}

/** The authenticated caller, for routes behind requireAuthentication. */
export function caller(ctx: Ctx) {
  const auth = ctx.state.auth;
  if (!auth) throw DomainError.unauthenticated();
  return auth;
}
