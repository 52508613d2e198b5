// Token-bucket rate limits kept in bounded in-process LRUs: anonymous requests per IP, failed
// logins per IP, per (username, IP) and per username, authenticated requests per user. The HTTP middleware that
// applies them is http/rate-limit.ts.
import { LRUCache } from 'lru-cache';
import type { Config, TokenBucketConfig } from '../config.js';
import { addressKey } from './client-address.js';
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


/** 429 / 4007 for a username whose failed-login budget is spent. */
export function usernameLoginLimited(seconds: number): DomainError {
  return DomainError.rateLimited('USER_RATE_LIMITED', seconds, 'Too many failed logins for this user');
}

/**
 * The service's limits. Client addresses are counted by addressKey (IPv6 by its /64). Failed logins
 * are counted per address, per (username, address) and per username; the per-username limit is the
 * caller's to apply (services/login-throttle.ts), because addresses the user logged in from lately are
 * exempt from it.
 */
export class RateLimiter {
  private readonly anonymous: TokenBuckets;
  private readonly loginPerIp: TokenBuckets;
  private readonly loginPerUser: TokenBuckets;
  private readonly loginPerUserIp: TokenBuckets;
  private readonly user: TokenBuckets;
  readonly enabled: boolean;

  constructor(config: Config['rateLimit'], now: () => number = Date.now) {
    this.enabled = config.enabled;
    this.anonymous = new TokenBuckets(config.anonymous, now);
    this.loginPerIp = new TokenBuckets(config.loginPerIp, now);
    this.loginPerUser = new TokenBuckets(config.loginPerUser, now);
    this.loginPerUserIp = new TokenBuckets(config.loginPerUserIp, now);
    this.user = new TokenBuckets(config.user, now);
  }

  /** Refuses an address that failed too often (4006), then a (username, address) pair (4007), before the password is checked. */
  assertLoginAllowedFrom(ip: string, username: string): void {
    if (!this.enabled) return;
    const ipWait = this.loginPerIp.peek(addressKey(ip));
    if (ipWait > 0) throw DomainError.rateLimited('IP_RATE_LIMITED', ipWait, 'Too many failed logins from this address');
    const pairWait = this.loginPerUserIp.peek(pairKey(ip, username));
    if (pairWait > 0) throw DomainError.rateLimited('USER_RATE_LIMITED', pairWait, 'Too many failed logins for this user from this address');
  }

  /** Seconds until the username's failed-login bucket has a token (0: it has one, or limits are off). */
  usernameLoginWait(username: string): number {
    return this.enabled ? this.loginPerUser.peek(username.toLowerCase()) : 0;
  }

  /** Counts a failed login against the address and the pair, and against the username unless told not to. */
  recordLoginFailure(ip: string, username: string, chargeUsername: boolean): void {
    if (!this.enabled) return;
    this.loginPerIp.take(addressKey(ip));
    this.loginPerUserIp.take(pairKey(ip, username));
    if (chargeUsername) this.loginPerUser.take(username.toLowerCase());
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
    const wait = this.anonymous.take(addressKey(ip));
    if (wait > 0) throw anonymousLimited(wait);
  }

  /**
   * Refuses an address whose anonymous budget is spent, without taking from it: called before a
   * costly credential check (a signature, a password hash), which a refused client must not get.
   */
  assertAnonymousAllowed(ip: string): void {
    if (!this.enabled) return;
    const wait = this.anonymous.peek(addressKey(ip));
    if (wait > 0) throw anonymousLimited(wait);
  }
}

function anonymousLimited(seconds: number): DomainError {
  return DomainError.rateLimited('IP_RATE_LIMITED', seconds, 'Too many requests from this address');
}

function pairKey(ip: string, username: string): string {
  // An address key holds no NUL, so the last NUL tells the two parts apart whatever the username.
  return `${username.toLowerCase()}\u0000${addressKey(ip)}`;
}
