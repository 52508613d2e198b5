// Who is calling: password checks (login and Basic), session and token resolution, and the rules
// every method shares (a disabled user is refused, an expired password must be changed).
import { createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.js';
import { DomainError } from '../core/errors.js';
import type { UserRecord } from '../store/metadata/users.js';
import type { LoginThrottle } from './login-throttle.js';
import { decoyPasswordHash, verifyPassword } from './passwords.js';
import type { SessionService } from './sessions.js';
import type { TokenService } from './tokens.js';
import type { UserService } from './users.js';

const DAY_MS = 86_400_000;

export const userDisabled = () => DomainError.unauthenticated('User is disabled', 'ACCOUNT_DISABLED');
const badCredentials = () => DomainError.unauthenticated('Bad username or password', 'BAD_CREDENTIALS');
const passwordExpired = () => DomainError.unauthenticated('Password expired: log in with newPassword to change it', 'CREDENTIALS_EXPIRED');

// Basic authentication sends the password on every request; argon2 on each would cost ~50 ms of CPU.
// A verified (username, password) pair is remembered briefly, keyed by an HMAC with a per-process
// secret, and honoured only while the stored hash is unchanged.
const BASIC_CACHE_TTL_MS = 60_000;

export class AuthService {
  private readonly basicSecret = randomBytes(32);
  private readonly basicVerified = new LRUCache<string, string>({ max: 10_000, ttl: BASIC_CACHE_TTL_MS });

  constructor(
    private readonly config: Pick<Config, 'passwordMaxAgeDays'>,
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly tokens: TokenService,
    private readonly throttle: LoginThrottle,
  ) {}

  /**
   * Checks a username and password as a login does: rate limits first, then the password (against a
   * decoy hash for unknown users, so timing does not reveal them), then the account state. A right
   * password makes the address known for the user (login-throttle.ts).
   */
  async checkPassword(ip: string, username: string, password: string, newPassword?: string): Promise<UserRecord> {
    await this.throttle.assertAllowed(ip, username);
    const user = await this.users.findByUsername(username);
    const ok = await verifyPassword(user?.passwordHash ?? (await decoyPasswordHash()), password);
    if (!user || !ok) {
      await this.throttle.failed(ip, username);
      throw badCredentials();
    }
    if (user.disabled) throw userDisabled();
    await this.throttle.succeeded(ip, user.id);
    if (this.isPasswordExpired(user)) {
      if (newPassword === undefined) throw passwordExpired();
      return this.users.replaceExpiredPassword(user, newPassword);
    }
    return user;
  }

  /**
   * Basic credentials: a pair verified lately costs a lookup; any other calls `beforeCostlyCheck`
   * first (the caller's chance to refuse a client before it costs a password hash).
   */
  async basic(ip: string, username: string, password: string, beforeCostlyCheck?: () => void): Promise<UserRecord> {
    const key = createHmac('sha256', this.basicSecret).update(username).update('\u0000').update(password).digest('base64');
    const cachedHash = this.basicVerified.get(key);
    if (cachedHash !== undefined) {
      const user = await this.users.findByUsername(username);
      if (user && user.passwordHash === cachedHash) return this.assertUsable(user);
      this.basicVerified.delete(key);
    }
    beforeCostlyCheck?.();
    const user = await this.checkPassword(ip, username, password);
    this.basicVerified.set(key, user.passwordHash);
    return user;
  }

  async session(cookieValue: string): Promise<{ user: UserRecord; idHash: string } | undefined> {
    const session = await this.sessions.resolve(cookieValue);
    if (!session) return undefined;
    const user = await this.users.findById(session.userId);
    if (!user) return undefined;
    return { user: this.assertUsable(user), idHash: session.idHash };
  }

  /** A bearer token; `beforeCostlyCheck` is called before a signature is verified (not for a token verified lately). */
  async token(token: string, beforeCostlyCheck?: () => void): Promise<UserRecord> {
    const claims = await this.tokens.verify(token, beforeCostlyCheck);
    const user = await this.users.findByUsername(claims.username);
    // Token versions start at 0 for every account: the id tells a deleted or renamed user's token
    // from one of a new account that took the name.
    if (!user || user.id !== claims.userId || user.tokenVersion !== claims.version) throw DomainError.unauthenticated('Token revoked');
    return this.assertUsable(user, false);
  }

  /**
   * Mango's GET /auth-tokens/verify: the checks of a bearer token (token()), any refusal a 400 with
   * its reason, since the token is a parameter here and not the caller's credential; then the
   * token's header and claims.
   */
  async verifyToken(token: string, beforeCostlyCheck?: () => void): Promise<{ header: Record<string, unknown>; body: Record<string, unknown> }> {
    try {
      await this.token(token, beforeCostlyCheck);
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'unauthenticated') throw DomainError.badRequest(err.message);
      throw err;
    }
    return this.tokens.contents(token);
  }

  private isPasswordExpired(user: UserRecord): boolean {
    const maxAge = this.config.passwordMaxAgeDays;
    return maxAge > 0 && Date.now() - user.lastPasswordChange.getTime() > maxAge * DAY_MS;
  }

  /**
   * A disabled user is refused by every method. An expired password ends sessions and Basic access
   * too; tokens, made for unattended clients, live out their own expiry.
   */
  private assertUsable(user: UserRecord, checkPasswordAge = true): UserRecord {
    if (user.disabled) throw userDisabled();
    if (checkPasswordAge && this.isPasswordExpired(user)) throw passwordExpired();
    return user;
  }
}
