// Users: the rules of who may create, see and change whom, and the cache that keeps
// authentication off the metadata store on most requests.
import { LRUCache } from 'lru-cache';
import { RefreshingCache } from '../core/refreshing-cache.js';
import { DomainError } from '../core/errors.js';
import type { Validator } from '../core/validation.js';
import { PgErrorCode, pgErrorCode } from '../store/metadata/db.js';
import { compileRql, SqlParams } from '../core/rql/index.js';
import { userResource, type UserChanges, type UserRecord, type UsersRepository } from '../store/metadata/users.js';
import { hashPassword, isSameHash, verifyPassword } from './passwords.js';
import { mergePatch, type ListResult } from './resources.js';
import { assertSuperadmin, isSuperadmin, normaliseRoles, SUPERADMIN, type Principal } from './permissions.js';

/** The user as the API shows it: never the password hash or token version. */
export interface UserView {
  id: number;
  username: string;
  email: string;
  name: string;
  permissions: string[];
  disabled: boolean;
  locale: string;
  timezone: string;
  created: number;
  lastLogin: number | null;
  lastPasswordChange: number;
}

export function userView(u: UserRecord): UserView {
  return {
    id: u.id,
    username: u.username,
    email: u.email,
    name: u.name,
    permissions: u.permissions,
    disabled: u.disabled,
    locale: u.locale,
    timezone: u.timezone,
    created: u.created.getTime(),
    lastLogin: u.lastLogin ? u.lastLogin.getTime() : null,
    lastPasswordChange: u.lastPasswordChange.getTime(),
  };
}

/** Request body of POST /users and PUT /users/<username> after schema validation. */
export interface UserInput {
  username: string;
  email?: string;
  name?: string;
  permissions?: string[];
  disabled?: boolean;
  locale?: string;
  timezone?: string;
  password?: string;
  currentPassword?: string;
}

/** Fields a user may change on itself; everything else needs superadmin. */
const SELF_SERVICE_FIELDS = ['email', 'name', 'locale', 'timezone', 'password'] as const;

/** Something that must forget a user's credentials when they change (sessions, token versions). */
export interface CredentialListener {
  /** The user's permissions or password changed: end its other sessions and tokens. */
  credentialsChanged(user: UserRecord, keepSessionIdHash?: string): Promise<void>;
}

/**
 * What live connections (WebSockets) hear about a user: `changed` when it was deleted, disabled,
 * renamed or its password or permissions changed; `tokensRevoked` when its JWTs were revoked.
 */
export type UserEvent = 'changed' | 'tokensRevoked';
/** `local`: the change was made through this instance (false: relayed from another). */
export type UserEventListener = (userId: number, event: UserEvent, local: boolean) => void;

/** Fields whose change ends what the user had open (Mango's USER_UPDATED). */
const CHANGE_ENDS_CONNECTIONS = ['disabled', 'username', 'passwordHash', 'permissions'] as const;

export interface Actor extends Principal {
  id: number;
  sessionIdHash?: string;
}

// This instance forgets its own entries on every change, and other instances announce theirs (the
// cluster channel), so a change takes effect at once. Entries are still reloaded in the background
// after a while, off the request path, for a change made to the store by other means.
const CACHE_REFRESH_MS = 2_000;

export class UserService {
  private readonly byId: RefreshingCache<number, UserRecord>;
  /** Usernames to ids; checked against the user found, so a stale pair is never believed. */
  private readonly idByUsername = new LRUCache<string, number>({ max: 10_000 });
  private readonly listeners: CredentialListener[] = [];
  private readonly eventListeners = new Set<UserEventListener>();
  private readonly forgottenListeners: ((userId: number) => void)[] = [];

  constructor(
    private readonly repo: UsersRepository,
    private readonly validator: Validator,
  ) {
    this.byId = new RefreshingCache((id) => repo.findById(id), { max: 10_000, refreshAfterMs: CACHE_REFRESH_MS });
  }

  onCredentialsChanged(listener: CredentialListener): void {
    this.listeners.push(listener);
  }

  /** Returns the function that unsubscribes. */
  onUserEvent(listener: UserEventListener): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Told whenever this instance changed a user (the cluster tells the other instances to forget it). */
  onForgotten(listener: (userId: number) => void): void {
    this.forgottenListeners.push(listener);
  }

  /**
   * Another instance changed the user: forget it here, and tell this instance's live connections
   * what they would have heard had the change been made here.
   */
  changedElsewhere(userId: number, event?: UserEvent): void {
    this.byId.forget(userId);
    for (const [username, id] of this.idByUsername.entries()) if (id === userId) this.idByUsername.delete(username);
    if (event) this.emit(userId, event, false);
  }

  /** Changes made elsewhere may have gone unheard (the cluster channel was down): forget every user. */
  forgetAll(): void {
    this.byId.forgetAll();
    this.idByUsername.clear();
  }

  /** Listeners are synchronous and must not stop the change that told them. */
  private emit(userId: number, event: UserEvent, local = true): void {
    for (const l of this.eventListeners) {
      try {
        l(userId, event, local);
      } catch {
        // listeners report their own failures
      }
    }
  }

  /** Creates the default admin when the store holds no user at all. */
  async ensureDefaultAdmin(password: string): Promise<UserRecord | undefined> {
    if ((await this.repo.count()) > 0) return undefined;
    return this.repo.insert({
      username: 'admin',
      email: '',
      name: 'Administrator',
      passwordHash: await hashPassword(password),
      permissions: [SUPERADMIN],
      disabled: false,
      locale: '',
      timezone: '',
    });
  }

  /**
   * Start-up: gives users their username key where the migration could not (non-ASCII names) or
   * another user held it. Returns the names still without one: they differ from another user's
   * only in case (made before usernames were unique ignoring case), and still log in as they are.
   */
  async assignUsernameKeys(): Promise<string[]> {
    const left: string[] = [];
    for (const u of await this.repo.keyless()) {
      if (!(await this.repo.assignKey(u.id, u.username))) left.push(u.username);
    }
    return left;
  }

  /** Usernames are unique ignoring case: 409 naming the user that holds the name in another case. */
  private async assertUsernameFree(username: string, exceptId?: number): Promise<void> {
    const [other] = await this.repo.namesLike(username, exceptId);
    if (other === undefined) return;
    throw DomainError.conflict(other === username ? USERNAME_IN_USE : `${USERNAME_IN_USE}: ${other} differs only in case`);
  }

  async findById(id: number): Promise<UserRecord | undefined> {
    const user = await this.byId.get(id);
    if (user) this.idByUsername.set(user.username, user.id);
    return user;
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    const id = this.idByUsername.get(username);
    const cached = id === undefined ? undefined : await this.byId.get(id);
    if (cached?.username === username) return cached;
    const user = await this.repo.findByUsername(username);
    if (user) this.remember(user);
    else this.idByUsername.delete(username);
    return user;
  }

  async recordLogin(user: UserRecord): Promise<void> {
    await this.repo.recordLogin(user.id);
    this.forget(user);
  }

  /** RQL over users; non-admins see only themselves. */
  async list(actor: Actor, rawQuery: string): Promise<ListResult<UserRecord>> {
    const params = new SqlParams();
    const scope = isSuperadmin(actor) ? 'true' : `t.id = ${params.add(actor.id)}::int`;
    const rql = compileRql(userResource, rawQuery, params);
    const q = { ...rql, where: `(${scope}) and ${rql.where}` };
    return { total: await this.repo.countMatching(q), batches: this.repo.page(q) };
  }

  async get(actor: Actor, username: string): Promise<UserRecord> {
    if (!isSuperadmin(actor) && actor.username !== username) throw DomainError.accessDenied();
    const user = await this.findByUsername(username);
    if (!user) throw DomainError.notFound('User not found');
    return user;
  }

  async create(actor: Actor, body: unknown): Promise<UserRecord> {
    assertSuperadmin(actor);
    const input = this.validator.validate<UserInput>('user', body);
    if (input.password === undefined) throw DomainError.invalid('password', 'is required');
    await this.assertUsernameFree(input.username);
    try {
      return await this.repo.insert({
        username: input.username,
        email: input.email ?? '',
        name: input.name ?? '',
        passwordHash: await hashPassword(input.password),
        permissions: normaliseRoles(input.permissions ?? []),
        disabled: input.disabled ?? false,
        locale: input.locale ?? '',
        timezone: input.timezone ?? '',
      });
    } catch (err) {
      throw translateUniqueViolation(err);
    }
  }

  async update(actor: Actor, username: string, body: unknown): Promise<UserRecord> {
    const input = this.validator.validate<UserInput>('user', withoutBlankPassword(body));
    const existing = await this.repo.findByUsername(username);
    const self = existing !== undefined && existing.id === actor.id;
    if (!isSuperadmin(actor) && !self) throw DomainError.accessDenied();
    if (!existing) throw DomainError.notFound('User not found');

    const changes = await this.changesFrom(existing, input);
    if (self) await this.checkSelfService(actor, existing, input, changes);
    if (changes.username !== undefined) await this.assertUsernameFree(changes.username, existing.id);

    const updated = await this.repo.update(existing.id, changes).catch((err: unknown) => {
      throw translateUniqueViolation(err);
    });
    if (!updated) throw DomainError.notFound('User not found');
    this.forget(existing);
    if (CHANGE_ENDS_CONNECTIONS.some((key) => changes[key] !== undefined)) this.emit(existing.id, 'changed');
    if (changes.passwordHash !== undefined || changes.permissions !== undefined) {
      const keep = self ? actor.sessionIdHash : undefined;
      for (const l of this.listeners) await l.credentialsChanged(updated, keep);
    }
    return updated;
  }

  /**
   * PATCH: the fields given over the stored user's view, then exactly as update (resources.ts
   * mergePatch): the same self-service rules, and a password given is a change as in PUT.
   */
  async patch(actor: Actor, username: string, body: unknown): Promise<UserRecord> {
    return this.update(actor, username, mergePatch({ ...userView(await this.get(actor, username)) }, body));
  }

  /**
   * A user saved by other means (a configuration import): forgotten here and elsewhere; live
   * connections and sessions hear what an update here would have told them.
   */
  async announceImported(saved: UserRecord, before: UserRecord | undefined): Promise<void> {
    if (!before) return;
    this.forget(before);
    const changed = (key: (typeof CHANGE_ENDS_CONNECTIONS)[number]) =>
      key === 'permissions' ? !sameRoles(before.permissions, saved.permissions) : before[key] !== saved[key];
    if (CHANGE_ENDS_CONNECTIONS.some(changed)) this.emit(before.id, 'changed');
    if (changed('passwordHash') || changed('permissions')) {
      for (const l of this.listeners) await l.credentialsChanged(saved);
    }
  }

  async delete(actor: Actor, username: string): Promise<UserRecord> {
    assertSuperadmin(actor);
    const existing = await this.repo.findByUsername(username);
    if (!existing) throw DomainError.notFound('User not found');
    if (existing.id === actor.id) throw DomainError.accessDenied('Access denied: you cannot delete your own account');
    await this.repo.delete(existing.id);
    this.forget(existing);
    this.emit(existing.id, 'changed');
    return existing;
  }

  /** Revokes every JWT of the user by bumping its token version. */
  async revokeTokens(user: UserRecord): Promise<void> {
    await this.repo.incrementTokenVersion(user.id);
    this.forget(user);
    this.emit(user.id, 'tokensRevoked');
  }

  /** Sets a new password for a user whose password expired, after the caller proved the old one. */
  async replaceExpiredPassword(user: UserRecord, newPassword: string): Promise<UserRecord> {
    this.validator.validate('user', { username: user.username, password: newPassword });
    const updated = await this.repo.update(user.id, { passwordHash: await hashPassword(newPassword) });
    this.forget(user);
    if (!updated) throw DomainError.notFound('User not found');
    this.emit(user.id, 'changed');
    for (const l of this.listeners) await l.credentialsChanged(updated);
    return updated;
  }

  /**
   * Fields present in the body that differ from the stored user. PUT keeps an omitted password, and
   * one that is the stored one sent back: Mango's clients send the user object they hold, whose
   * password is the plaintext they created it with, or the stored hash. That is no password change:
   * the user's sessions and tokens stay valid.
   */
  private async changesFrom(existing: UserRecord, input: UserInput): Promise<UserChanges> {
    const changes: UserChanges = {};
    if (input.username !== existing.username) changes.username = input.username;
    for (const key of ['email', 'name', 'locale', 'timezone', 'disabled'] as const) {
      if (input[key] !== undefined && input[key] !== existing[key]) (changes as Record<string, unknown>)[key] = input[key];
    }
    if (input.permissions !== undefined) {
      const roles = normaliseRoles(input.permissions);
      if (!sameRoles(roles, existing.permissions)) changes.permissions = roles;
    }
    if (input.password !== undefined && !(await isStoredPassword(existing, input.password))) changes.passwordHash = await hashPassword(input.password);
    return changes;
  }

  private async checkSelfService(actor: Actor, existing: UserRecord, input: UserInput, changes: UserChanges): Promise<void> {
    const allowed = new Set<string>([...SELF_SERVICE_FIELDS, 'passwordHash']);
    const forbidden = Object.keys(changes).filter((k) => !allowed.has(k));
    // A superadmin may change its own username, not its own permissions or disabled flag.
    const selfGuarded = isSuperadmin(actor) ? forbidden.filter((k) => k === 'permissions' || k === 'disabled') : forbidden;
    if (selfGuarded.length > 0) throw DomainError.accessDenied(`Access denied: you cannot change your own ${selfGuarded.join(', ')}`);
    if (changes.passwordHash !== undefined) {
      const ok = input.currentPassword !== undefined && (await verifyPassword(existing.passwordHash, input.currentPassword));
      // Not a validation failure: the error body carries no result (only 4002 does).
      if (!ok) throw new DomainError('bad-request', 'Current password is missing or wrong', { statusName: 'PASSWORD_CHANGE_FAILED' });
    }
  }

  private remember(user: UserRecord): void {
    this.byId.set(user.id, user);
    this.idByUsername.set(user.username, user.id);
  }

  private forget(user: UserRecord): void {
    this.byId.forget(user.id);
    this.idByUsername.delete(user.username);
    for (const l of this.forgottenListeners) l(user.id);
  }
}

/**
 * Is `password` the user's stored password: the stored hash itself, or the plaintext it verifies.
 * Answers the same question a self-service change asks of currentPassword (checkSelfService), with the
 * same cost, so it tells a caller nothing that one does not.
 */
async function isStoredPassword(user: UserRecord, password: string): Promise<boolean> {
  return isSameHash(user.passwordHash, password) || (await verifyPassword(user.passwordHash, password));
}

/**
 * An update's body with an empty password left out: kept, as Mango keeps it. Mango's user answers
 * carry `"password": ""`, which its clients send back (a null one is "not given" already: the
 * validator's lenient read).
 */
function withoutBlankPassword(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const { password, ...rest } = body as Record<string, unknown>;
  return password === '' ? rest : body;
}

function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
}

const USERNAME_IN_USE = 'Username is already in use';

/** The unique indexes decide a race the check above cannot see (two instances creating at once). */
function translateUniqueViolation(err: unknown): unknown {
  return pgErrorCode(err) === PgErrorCode.UNIQUE_VIOLATION ? DomainError.conflict(USERNAME_IN_USE) : err;
}
