// The writer lock of a shared value store: QuestDB keeps no locks, and an instance keeps each
// series' newest hourly aggregate in memory to extend it on the next append
// (store/values/questdb/hourly.ts). So instances writing one table take turns under a PostgreSQL
// advisory lock, and the one taking its turn learns whether another instance wrote since its own last
// turn: then it waits until QuestDB has applied everything committed and reads the tails again.
import pg from 'pg';
import type { Logger } from 'pino';
import { isStoreTimeout } from '../timeout.js';

export interface WriterTurn {
  /** Another instance wrote the store since this instance's last turn. */
  othersWrote: boolean;
  release(): Promise<void>;
}

export interface WriterLock {
  acquire(): Promise<WriterTurn>;
  close(): Promise<void>;
}

export interface WriterLockOptions {
  url: string;
  schema?: string;
  installation: string;
  instanceId: string;
  /** The store's name among the installation's (e.g. questdb:point_values). */
  name: string;
  log: Logger;
  /**
   * STORE_TIMEOUT_MS: each statement (the wait for the lock included) and the connection attempt. A
   * connection whose statement timed out is closed, so the server frees any lock it holds or would get.
   */
  timeoutMs?: number;
}

export function postgresWriterLock(o: WriterLockOptions): WriterLock {
  let client: pg.Client | undefined;
  let closed = false;
  const space = `${o.installation}:writer:${o.name}`;

  const connection = async (): Promise<pg.Client> => {
    if (client) return client;
    const c = new pg.Client({
      connectionString: o.url,
      application_name: `device-data-service writer ${process.pid}`,
      keepAlive: true,
      ...(o.timeoutMs !== undefined ? { query_timeout: o.timeoutMs, connectionTimeoutMillis: o.timeoutMs } : {}),
      ...(o.schema ? { options: `-c search_path=${o.schema}` } : {}),
    });
    // A lost connection frees the lock; the next turn connects again.
    c.on('error', (err) => {
      o.log.warn({ err }, 'writer lock: connection lost');
      if (client === c) client = undefined;
    });
    c.on('end', () => {
      if (client === c) client = undefined;
    });
    await c.connect();
    client = c;
    return c;
  };

  /** Ends a connection left in an unknown state by a time-out; the next turn connects again. */
  const dropIfTimedOut = (c: pg.Client, err: unknown): void => {
    if (!isStoreTimeout(err)) return;
    if (client === c) client = undefined;
    void c.end().catch(() => undefined);
  };

  const turn = async (): Promise<WriterTurn> => {
    if (closed) throw new Error('writer lock closed');
    const c = await connection();
    await c.query('SELECT pg_advisory_lock(hashtext($1), 0)', [space]).catch((err: unknown) => {
      dropIfTimedOut(c, err);
      throw err;
    });
    try {
      const { rows } = await c.query<{ previous: string | null }>(
        `INSERT INTO value_store_writers AS w (name, instance) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET instance = excluded.instance
         RETURNING (SELECT instance FROM value_store_writers WHERE name = $1) AS previous`,
        [o.name, o.instanceId],
      );
      const previous = rows[0]?.previous ?? null;
      return {
        othersWrote: previous !== null && previous !== o.instanceId,
        release: async () => {
          await c.query('SELECT pg_advisory_unlock(hashtext($1), 0)', [space]).catch((err: unknown) => {
            dropIfTimedOut(c, err);
            o.log.warn({ err }, 'writer lock: release failed');
          });
        },
      };
    } catch (err) {
      if (isStoreTimeout(err)) dropIfTimedOut(c, err);
      else await c.query('SELECT pg_advisory_unlock(hashtext($1), 0)', [space]).catch((e: unknown) => dropIfTimedOut(c, e));
      throw err;
    }
  };

  return {
    // One turn at a time per instance (the store's own lock): the advisory lock is re-entrant
    // within its connection, so it only keeps other instances out.
    acquire: turn,
    async close() {
      closed = true;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
