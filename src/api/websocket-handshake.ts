// The WebSocket handshake: who is connecting (the HTTP rules: session cookie, Bearer JWT, Basic),
// whether a cookie-authenticated browser page may connect from where it runs, and how a refused
// upgrade is answered (an HTTP response with the service's error body, never a crash).
import type { IncomingMessage } from 'node:http';
import { authenticate, SESSION_COOKIE } from '../http/auth.js';
import { addressKey, type TrustedProxies } from '../core/client-address.js';
import { DomainError } from '../core/errors.js';
import { TokenBuckets } from '../core/rate-limits.js';
import type { AuthMethod } from '../http/state.js';
import type { Config } from '../config.js';
import type { AuthService } from '../services/auth.js';
import type { TokenService } from '../services/tokens.js';
import type { UserRecord } from '../store/metadata/users.js';

/** Who a socket belongs to, and what must be checked again while it stays open. */
export interface SocketAuth {
  user: UserRecord;
  method: AuthMethod;
  /** method 'session': the cookie value, to notice when the session ends. */
  sessionCookie?: string;
  /** method 'token': the JWT and its expiry (epoch ms). */
  token?: string;
  tokenExpiry?: number;
}

function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of header(req, 'cookie').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Cross-site WebSocket hijacking: browsers attach cookies to a WebSocket handshake whatever page
 * opens it, and the same-origin policy does not apply to WebSockets. A cookie-authenticated
 * handshake is therefore accepted only when its Origin names this host (or is absent: only
 * browsers send cookies on their own, and they always send Origin). Bearer and Basic credentials
 * are never attached by a browser on its own, so they need no such check.
 */
function assertSameOrigin(req: IncomingMessage, proxies: TrustedProxies): void {
  const origin = header(req, 'origin');
  if (origin === '') return;
  const forwardedHost = proxies.forwardedHost(req.socket.remoteAddress, header(req, 'x-forwarded-host'));
  const host = (forwardedHost ?? header(req, 'host')).toLowerCase();
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    originHost = '';
  }
  if (originHost === '' || originHost !== host) throw DomainError.accessDenied('Access denied: cross-origin WebSocket requests cannot use the session cookie');
}

function tooManyAttempts(seconds: number): DomainError {
  return DomainError.rateLimited('IP_RATE_LIMITED', seconds, 'Too many requests from this address');
}

export interface HandshakeDeps {
  auth: AuthService;
  tokens: TokenService;
  proxies: TrustedProxies;
  config: Pick<Config, 'basicAuthEnabled' | 'rateLimit'>;
}

export class Handshake {
  // Upgrades that end without a user count like anonymous HTTP requests (same limits, own buckets).
  private readonly refused: TokenBuckets | undefined;

  constructor(private readonly s: HandshakeDeps) {
    this.refused = s.config.rateLimit.enabled ? new TokenBuckets(s.config.rateLimit.anonymous) : undefined;
  }

  /** The client's address by the TRUST_PROXY rule, as ctx.ip is for HTTP requests. */
  clientAddress(req: IncomingMessage): string {
    return this.s.proxies.clientAddress(req.socket.remoteAddress, header(req, 'x-forwarded-for'));
  }

  /** The socket's owner; throws a DomainError (401, 403, 429) when the upgrade must be refused. */
  async authenticate(req: IncomingMessage, ip: string): Promise<SocketAuth> {
    const { basicAuthEnabled } = this.s.config;
    const key = addressKey(ip);
    // A client that keeps failing is refused before its credentials cost a signature check.
    const wait = this.refused?.peek(key) ?? 0;
    if (wait > 0) throw tooManyAttempts(wait);
    const credentials = { authorization: header(req, 'authorization'), sessionCookie: cookie(req, SESSION_COOKIE), ip };
    try {
      if (credentials.authorization === '' && credentials.sessionCookie) assertSameOrigin(req, this.s.proxies);
      const found = await authenticate(this.s.auth, basicAuthEnabled, credentials);
      if (!found) throw DomainError.unauthenticated();
      const auth: SocketAuth = { user: found.user, method: found.method };
      if (found.method === 'session') auth.sessionCookie = credentials.sessionCookie;
      if (found.method === 'token') {
        auth.token = credentials.authorization.slice(credentials.authorization.indexOf(' ') + 1).trim();
        auth.tokenExpiry = (await this.s.tokens.verify(auth.token)).expiry;
      }
      return auth;
    } catch (err) {
      if (err instanceof DomainError && err.kind !== 'rate-limited' && this.refused) {
        const limited = this.refused.take(key);
        if (limited > 0) throw tooManyAttempts(limited);
      }
      throw err;
    }
  }
}

