// Leases: which instance runs what (a data source, the event detectors). On PostgreSQL a lease is a
// session-level advisory lock held by one dedicated connection: when its instance dies, the server
// ends the connection and so frees every lease at once, and another instance takes them over on its
// next sweep. Locks are keyed by (hash of the installation id and lease kind, numeric id), so
// installations sharing a server never collide.
//
// When the connection is lost, its leases are gone (the server may already have given them to
// another instance): `onLost` tells the owner to stop everything it ran under them.
import pg from 'pg';
import type { Logger } from 'pino';
import { FifoLock } from '../../core/fifo-lock.js';
import { rethrowUnavailable } from '../unavailable.js';

export type LeaseKind = 'source' | 'detectors';

export interface Leases {
  /** Whether other instances can exist; false (PGlite): every lease is granted. */
  readonly shared: boolean;
  /** Takes the lease unless another instance holds it; true when this instance holds it now. */
  tryAcquire(kind: LeaseKind, id: number): Promise<boolean>;
  release(kind: LeaseKind, id: number): Promise<void>;
  /** Called when every lease was lost at once (the connection to the server). */
  onLost(listener: () => void): void;
  close(): Promise<void>;
}

export function localLeases(): Leases {
  return {
    shared: false,
    tryAcquire: async () => true,
    release: async () => undefined,
    onLost: () => undefined,
    close: async () => undefined,
  };
}

const RECONNECT_MS = 1_000;

/** The leases live on the metadata server: a lost connection there is its 503, as for any query. */
const unavailable = rethrowUnavailable('The metadata store');

export async function postgresLeases(o: { url: string; installation: string; log: Logger }): Promise<Leases> {
  const held = new Set<string>();
  const lostListeners: (() => void)[] = [];
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  // One statement at a time on the one connection: acquire and release never interleave.
  const lock = new FifoLock();

  const key = (kind: LeaseKind, id: number) => `${kind}:${id}`;
  const space = (kind: LeaseKind) => `${o.installation}:${kind}`;

  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = undefined;
    if (held.size === 0) return;
    held.clear();
    o.log.warn('leases: connection to PostgreSQL lost, every lease released');
    for (const l of lostListeners) l();
  };

  const connect = (): Promise<pg.Client> => {
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: o.url, application_name: `device-data-service leases ${process.pid}`, keepAlive: true });
      c.on('error', (err) => {
        o.log.warn({ err }, 'leases: connection error');
        lost(c);
      });
      c.on('end', () => lost(c));
      try {
        await c.connect();
      } catch (err) {
        await new Promise((r) => setTimeout(r, RECONNECT_MS));
        throw err;
      }
      client = c;
      return c;
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  return {
    shared: true,
    tryAcquire(kind, id) {
      return lock.run(async () => {
        if (closed) return false;
        if (held.has(key(kind, id))) return true;
        const c = client ?? (await connect());
        const { rows } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok', [space(kind), id]);
        if (rows[0]?.ok && client === c) held.add(key(kind, id));
        return held.has(key(kind, id));
      }).catch(unavailable);
    },
    release(kind, id) {
      return lock.run(async () => {
        if (!held.delete(key(kind, id)) || !client) return;
        await client.query('SELECT pg_advisory_unlock(hashtext($1), $2)', [space(kind), id]).catch((err: unknown) => {
          o.log.warn({ err, kind, id }, 'leases: release failed');
        });
      });
    },
    onLost: (listener) => void lostListeners.push(listener),
    async close() {
      closed = true;
      await lock.idle();
      held.clear();
      const c = client;
      client = undefined;
      // Ending the connection frees every lease it held.
      await c?.end().catch(() => undefined);
    },
  };
}
