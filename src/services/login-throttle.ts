// Failed-login limits that a guesser cannot turn against the account's owner. A guesser at one
// address meets the per-address and per-(username, address) limits; one who rotates addresses meets
// the per-username limit, which addresses the user logged in from lately are exempt from: they are not
// held by it, and their failures are not charged to it. Known addresses live in the metadata store, so
// a restart does not lock the owner out again.
import { addressKey } from '../core/client-address.js';
import { type RateLimiter, usernameLoginLimited } from '../core/rate-limits.js';
import type { LoginAddressesRepository } from '../store/metadata/login-addresses.js';

const DAY_MS = 86_400_000;
/** Addresses kept per user: enough for home, office, phone and travel, few enough to bound the table. */
export const KNOWN_ADDRESSES_PER_USER = 20;

export class LoginThrottle {
  private readonly windowMs: number;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly known: LoginAddressesRepository,
    knownAddressDays: number,
    private readonly now: () => number = Date.now,
  ) {
    this.windowMs = knownAddressDays * DAY_MS;
  }

  /** Before the password is checked: the address (4006), the pair and then, unless known, the username (4007). */
  async assertAllowed(ip: string, username: string): Promise<void> {
    this.limiter.assertLoginAllowedFrom(ip, username);
    const wait = this.limiter.usernameLoginWait(username);
    // The store is asked only when the username's budget is spent, not on every login.
    if (wait > 0 && !(await this.isKnown(ip, username))) throw usernameLoginLimited(wait);
  }

  async failed(ip: string, username: string): Promise<void> {
    if (!this.limiter.enabled) return;
    this.limiter.recordLoginFailure(ip, username, !(await this.isKnown(ip, username)));
  }

  /** A right password (login or Basic): the address becomes known for the user. */
  async succeeded(ip: string, userId: number): Promise<void> {
    if (this.windowMs === 0 || ip === '') return;
    const now = this.now();
    await this.known.remember(userId, addressKey(ip), new Date(now), new Date(now - this.windowMs), KNOWN_ADDRESSES_PER_USER);
  }

  /** Forgets addresses older than the window (all of them when the exemption is off). */
  async purge(): Promise<number> {
    return this.known.deleteOlderThan(new Date(this.now() - this.windowMs));
  }

  private async isKnown(ip: string, username: string): Promise<boolean> {
    if (this.windowMs === 0 || ip === '') return false;
    return this.known.isKnown(username, addressKey(ip), new Date(this.now() - this.windowMs));
  }
}
