// Server-side sessions: random cookie values, stored hashed, with idle and absolute time-outs.
import { createHash, randomBytes } from 'node:crypto';
import { RefreshingCache } from '../core/refreshing-cache.js';
import type { Config } from '../config.js';
import type { SessionRecord, SessionsRepository } from '../store/metadata/sessions.js';

export function hashSessionId(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

export interface ResolvedSession {
  userId: number;
  idHash: string;
}

// last_seen is written at most once a minute per session, and never awaited by the request.
const TOUCH_INTERVAL_MS = 60_000;
// Sessions this instance or another (the cluster channel) ends are forgotten at once; entries are also
// reloaded in the background after a while, off the request path.
const CACHE_REFRESH_MS = 2_000;

export class SessionService {
  private readonly cache: RefreshingCache<string, SessionRecord>;
  private readonly endedListeners: ((idHashes: readonly string[]) => void)[] = [];
  private readonly idleMs: number;
  private readonly maxMs: number;

  constructor(
    private readonly repo: SessionsRepository,
    config: Config['session'],
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new RefreshingCache((idHash) => repo.find(idHash), { max: 50_000, refreshAfterMs: CACHE_REFRESH_MS });
    this.idleMs = config.idleMinutes * 60_000;
    this.maxMs = config.maxDays * 86_400_000;
  }

  /** Starts a session; returns the cookie value (only its hash is stored). */
  async create(userId: number): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    await this.repo.insert(hashSessionId(id), userId, new Date(this.now()));
    return id;
  }

  async resolve(cookieValue: string): Promise<ResolvedSession | undefined> {
    if (!/^[\w-]{20,100}$/.test(cookieValue)) return undefined;
    const idHash = hashSessionId(cookieValue);
    const session = await this.cache.get(idHash);
    if (!session) return undefined;
    const now = this.now();
    if (now - session.lastSeen.getTime() > this.idleMs || now - session.created.getTime() > this.maxMs) {
      await this.endByHash(idHash);
      return undefined;
    }
    if (now - session.lastSeen.getTime() > TOUCH_INTERVAL_MS) {
      session.lastSeen = new Date(now);
      // A touch that fails costs the session at most a minute of idle time; the request goes on.
      this.repo.touch(idHash, session.lastSeen).catch(() => undefined);
    }
    return { userId: session.userId, idHash };
  }

  async endByHash(idHash: string): Promise<void> {
    this.cache.forget(idHash);
    await this.repo.delete(idHash);
    this.tellEnded([idHash]);
  }

  async endForUser(userId: number, exceptIdHash?: string): Promise<void> {
    const ended = await this.repo.deleteForUser(userId, exceptIdHash);
    for (const idHash of ended) this.cache.forget(idHash);
    this.tellEnded(ended);
  }

  /** Told of sessions this instance ended (the cluster tells the other instances to forget them). */
  onEnded(listener: (idHashes: readonly string[]) => void): void {
    this.endedListeners.push(listener);
  }

  /** Another instance ended these sessions. */
  endedElsewhere(idHashes: readonly string[]): void {
    for (const idHash of idHashes) this.cache.forget(idHash);
  }

  /** Sessions ended elsewhere may have gone unheard (the cluster channel was down): forget them all. */
  forgetAll(): void {
    this.cache.forgetAll();
  }

  private tellEnded(idHashes: readonly string[]): void {
    if (idHashes.length > 0) for (const l of this.endedListeners) l(idHashes);
  }

  async purgeExpired(): Promise<number> {
    const now = this.now();
    return this.repo.deleteExpired(new Date(now - this.idleMs), new Date(now - this.maxMs));
  }
}
