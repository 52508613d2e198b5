// Token-bucket rate limits kept in bounded in-process LRUs: anonymous requests per IP, failed
// logins per IP and per username, authenticated requests per user.
import type { Context, Next } from 'koa';
import { LRUCache } from 'lru-cache';
import type { Config, TokenBucketConfig } from '../config.js';
import { ApiError } from './errors.js';
import type { AppState } from './state.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** A family of token buckets with one configuration, keyed by IP or username. */
export class TokenBuckets {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    private readonly config: TokenBucketConfig,
    private readonly now: () => number = Date.now,
  ) {
    // A bucket untouched long enough to refill completely is the same as no bucket: let it go.
    const refillMs = Math.ceil((config.burst / config.refillPerSecond) * 1000);
    this.buckets = new LRUCache({ max: 100_000, ttl: Math.max(refillMs, 1000) });
  }

  private current(key: string): Bucket {
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.config.burst, updatedAt: now };
    b.tokens = Math.min(this.config.burst, b.tokens + ((now - b.updatedAt) / 1000) * this.config.refillPerSecond);
    b.updatedAt = now;
    return b;
  }

  private waitSeconds(b: Bucket): number {
    return Math.max(1, Math.ceil((1 - b.tokens) / this.config.refillPerSecond));
  }

  /** Takes one token; returns 0 when allowed, else the seconds until one is available. */
  take(key: string): number {
    const b = this.current(key);
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      return this.waitSeconds(b);
    }
    b.tokens -= 1;
    this.buckets.set(key, b);
    return 0;
  }

  /** Seconds until a token is available, without taking one (0 when one is). */
  peek(key: string): number {
    const b = this.current(key);
    return b.tokens >= 1 ? 0 : this.waitSeconds(b);
  }
}

function tooMany(statusName: 'IP_RATE_LIMITED' | 'USER_RATE_LIMITED', seconds: number, what: string): ApiError {
  return new ApiError(429, statusName, `${what}; retry in ${seconds} seconds`, undefined, { 'Retry-After': String(seconds) });
}

export class RateLimiter {
  private readonly anonymous: TokenBuckets;
  private readonly loginPerIp: TokenBuckets;
  private readonly loginPerUser: TokenBuckets;
  private readonly user: TokenBuckets;
  readonly enabled: boolean;

  constructor(config: Config['rateLimit'], now: () => number = Date.now) {
    this.enabled = config.enabled;
    this.anonymous = new TokenBuckets(config.anonymous, now);
    this.loginPerIp = new TokenBuckets(config.loginPerIp, now);
    this.loginPerUser = new TokenBuckets(config.loginPerUser, now);
    this.user = new TokenBuckets(config.user, now);
  }

  /** Refuses a client that failed too often, before its password is checked (IP first). */
  assertLoginAllowed(ip: string, username: string): void {
    if (!this.enabled) return;
    const ipWait = this.loginPerIp.peek(ip);
    if (ipWait > 0) throw tooMany('IP_RATE_LIMITED', ipWait, 'Too many failed logins from this address');
    const userWait = this.loginPerUser.peek(username.toLowerCase());
    if (userWait > 0) throw tooMany('USER_RATE_LIMITED', userWait, 'Too many failed logins for this user');
  }

  recordLoginFailure(ip: string, username: string): void {
    if (!this.enabled) return;
    this.loginPerIp.take(ip);
    this.loginPerUser.take(username.toLowerCase());
  }

  /** Middleware: authenticated requests count per user, all others per client IP. */
  middleware() {
    return async (ctx: Context & { state: AppState }, next: Next): Promise<void> => {
      if (this.enabled) {
        const auth = ctx.state.auth;
        if (auth) {
          const wait = this.user.take(auth.user.username);
          if (wait > 0) throw tooMany('USER_RATE_LIMITED', wait, 'Too many requests for this user');
        } else {
          const wait = this.anonymous.take(ctx.ip);
          if (wait > 0) throw tooMany('IP_RATE_LIMITED', wait, 'Too many requests from this address');
        }
      }
      await next();
    };
  }
}
