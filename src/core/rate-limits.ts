// Token-bucket rate limits kept in bounded in-process LRUs: anonymous requests per IP, failed
// logins per IP and per username, authenticated requests per user. The HTTP middleware that
// applies them is http/rate-limit.ts.
import { LRUCache } from 'lru-cache';
import type { Config, TokenBucketConfig } from '../config.js';
import { DomainError } from './errors.js';

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
    if (ipWait > 0) throw DomainError.rateLimited('IP_RATE_LIMITED', ipWait, 'Too many failed logins from this address');
    const userWait = this.loginPerUser.peek(username.toLowerCase());
    if (userWait > 0) throw DomainError.rateLimited('USER_RATE_LIMITED', userWait, 'Too many failed logins for this user');
  }

  recordLoginFailure(ip: string, username: string): void {
    if (!this.enabled) return;
    this.loginPerIp.take(ip);
    this.loginPerUser.take(username.toLowerCase());
  }

  /** Counts one request of an authenticated user. */
  takeUserRequest(username: string): void {
    if (!this.enabled) return;
    const wait = this.user.take(username);
    if (wait > 0) throw DomainError.rateLimited('USER_RATE_LIMITED', wait, 'Too many requests for this user');
  }

  /** Counts one anonymous request from a client address. */
  takeAnonymousRequest(ip: string): void {
    if (!this.enabled) return;
    const wait = this.anonymous.take(ip);
    if (wait > 0) throw DomainError.rateLimited('IP_RATE_LIMITED', wait, 'Too many requests from this address');
  }
}
