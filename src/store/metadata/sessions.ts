// Sessions repository. Rows are keyed by the SHA-256 of the cookie value, never the value itself.
import type { Queryable } from './db.js';

export interface SessionRecord {
  idHash: string;
  userId: number;
  created: Date;
  lastSeen: Date;
}

interface SessionRow {
  [key: string]: unknown;
  id_hash: string;
  user_id: number;
  created: Date;
  last_seen: Date;
}

export class SessionsRepository {
  constructor(private readonly db: Queryable) {}

  async insert(idHash: string, userId: number, now: Date): Promise<void> {
    await this.db.query('insert into sessions (id_hash, user_id, created, last_seen) values ($1, $2, $3, $3)', [idHash, userId, now]);
  }

  async find(idHash: string): Promise<SessionRecord | undefined> {
    const rows = await this.db.query<SessionRow>('select id_hash, user_id, created, last_seen from sessions where id_hash = $1', [idHash]);
    const r = rows[0];
    return r && { idHash: r.id_hash, userId: r.user_id, created: r.created, lastSeen: r.last_seen };
  }

  async touch(idHash: string, now: Date): Promise<void> {
    await this.db.query('update sessions set last_seen = $2 where id_hash = $1', [idHash, now]);
  }

  async delete(idHash: string): Promise<void> {
    await this.db.query('delete from sessions where id_hash = $1', [idHash]);
  }

  /** Deletes the user's sessions except one (the caller's own, when it changes its own password). */
  async deleteForUser(userId: number, exceptIdHash?: string): Promise<string[]> {
    const rows = await this.db.query<{ id_hash: string }>(
      'delete from sessions where user_id = $1 and id_hash is distinct from $2 returning id_hash',
      [userId, exceptIdHash ?? null],
    );
    return rows.map((r) => r.id_hash);
  }

  async deleteExpired(idleBefore: Date, createdBefore: Date): Promise<number> {
    const rows = await this.db.query('delete from sessions where last_seen < $1 or created < $2 returning id_hash', [idleBefore, createdBefore]);
    return rows.length;
  }
}
