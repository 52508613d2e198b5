// Sockets outlive the credentials they were opened with. This closes them when those end: at once
// for changes made through this instance (user hooks, key reset), and at each heartbeat sweep for
// what only the store knows (a logout, a change made by another instance, a long token's expiry).
import { TimeSlice } from '../core/time-slice.js';
import type { SessionService } from '../services/sessions.js';
import type { TokenService } from '../services/tokens.js';
import type { UserService } from '../services/users.js';
import type { UserRecord } from '../store/metadata/users.js';
import { CloseCode, type CloseCodeValue, type Connection } from './websocket-connection.js';

/** A change of any of these since the handshake ends the user's sockets (Mango's USER_UPDATED). */
function userChanged(then: UserRecord, now: UserRecord | undefined): boolean {
  return (
    now === undefined ||
    now.disabled ||
    now.username !== then.username ||
    now.passwordHash !== then.passwordHash ||
    now.permissions.join('\n') !== then.permissions.join('\n')
  );
}

/** The services that say whether a socket's credentials still hold. */
export interface CredentialDeps {
  users: UserService;
  sessions: SessionService;
  tokens: TokenService;
}

/** Lookups shared by every socket in one sweep: a thousand sockets of one user cost one query. */
class SweepLookups {
  private readonly users = new Map<number, Promise<UserRecord | undefined>>();
  private readonly sessions = new Map<string, Promise<boolean>>();
  private readonly tokens = new Map<string, Promise<boolean>>();

  constructor(private readonly s: CredentialDeps) {}

  user(id: number): Promise<UserRecord | undefined> {
    return memo(this.users, id, () => this.s.users.findById(id));
  }

  sessionAlive(cookie: string): Promise<boolean> {
    return memo(this.sessions, cookie, async () => (await this.s.sessions.resolve(cookie)) !== undefined);
  }

  tokenValid(token: string): Promise<boolean> {
    return memo(this.tokens, token, () =>
      this.s.tokens.verify(token).then(
        () => true,
        () => false,
      ),
    );
  }
}

function memo<K, V>(map: Map<K, Promise<V>>, key: K, load: () => Promise<V>): Promise<V> {
  let found = map.get(key);
  if (!found) map.set(key, (found = load()));
  return found;
}

/** A sweep's checks start in slices of this many ms, so live values' fan-out runs between (websocket.ts's heartbeat). */
const SWEEP_SLICE_MS = 3;

export class CredentialWatch {
  private readonly byUser = new Map<number, Set<Connection>>();
  private readonly unsubscribe: (() => void)[];

  constructor(private readonly s: CredentialDeps) {
    this.unsubscribe = [
      s.users.onUserEvent((userId, event) =>
        this.closeUser(userId, event === 'changed' ? CloseCode.USER_CHANGED : CloseCode.TOKENS_REVOKED, event === 'tokensRevoked'),
      ),
      s.tokens.onKeysReset(() => {
        for (const userId of [...this.byUser.keys()]) this.closeUser(userId, CloseCode.TOKENS_REVOKED, true);
      }),
    ];
  }

  add(conn: Connection): void {
    const id = conn.auth.user.id;
    let set = this.byUser.get(id);
    if (!set) this.byUser.set(id, (set = new Set()));
    set.add(conn);
    conn.onRelease(() => {
      set.delete(conn);
      if (set.size === 0 && this.byUser.get(id) === set) this.byUser.delete(id);
    });
  }

  /** Checks every socket's credentials against the store; closes those that no longer hold. */
  async sweep(connections: Iterable<Connection>): Promise<void> {
    const lookups = new SweepLookups(this.s);
    const check = async (conn: Connection) => {
      const code = await this.verdict(conn, lookups).catch(() => undefined); // a store hiccup is not a reason
      if (code !== undefined) conn.close(code);
    };
    // Started in slices (the lookups are shared and mostly settled: a thousand checks are microtasks
    // that would otherwise run in one go), answered together.
    const slice = new TimeSlice(SWEEP_SLICE_MS);
    const checks: Promise<void>[] = [];
    for (const conn of [...connections]) {
      checks.push(check(conn));
      await slice.yieldIfExpired();
    }
    await Promise.all(checks);
  }

  close(): void {
    for (const off of this.unsubscribe) off();
  }

  private closeUser(userId: number, code: CloseCodeValue, tokensOnly: boolean): void {
    for (const conn of [...(this.byUser.get(userId) ?? [])]) {
      if (!tokensOnly || conn.auth.method === 'token') conn.close(code);
    }
  }

  private async verdict(conn: Connection, lookups: SweepLookups): Promise<CloseCodeValue | undefined> {
    const { auth } = conn;
    const user = await lookups.user(auth.user.id);
    if (userChanged(auth.user, user)) return CloseCode.USER_CHANGED;
    if (auth.method === 'token') {
      if ((auth.tokenExpiry ?? 0) <= Date.now()) return CloseCode.TOKEN_EXPIRED;
      if (user!.tokenVersion !== auth.user.tokenVersion || !(await lookups.tokenValid(auth.token ?? ''))) return CloseCode.TOKENS_REVOKED;
    }
    if (auth.method === 'session' && !(await lookups.sessionAlive(auth.sessionCookie ?? ''))) return CloseCode.SESSION_ENDED;
    return undefined;
  }
}
