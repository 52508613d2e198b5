// Connections of a pg pool that the server ends (an administrator's pg_terminate_backend, a restart, a
// network cut). node-postgres emits 'error' on such a client, and an 'error' without a listener ends
// the process; the pool listens only while a client is idle, so one checked out (a transaction between
// statements, a COPY) needs a listener of its own for its whole life. What the error means for the
// work under way reaches that work through its query's rejection; the listener only keeps it heard.
import type pg from 'pg';
import { isStoreTimeout } from './timeout.js';
import { isLostConnection, isStoreUnreachable } from './unavailable.js';

/** Gives every client of `pool`, idle or checked out, an error listener for its life. */
export function hearClientErrors(pool: pg.Pool): pg.Pool {
  // Idle clients: the pool drops one that fails; the next checkout connects anew.
  pool.on('error', () => undefined);
  // Checked-out clients: the pool removes its own listener while they are out. A client that failed is
  // no longer queryable: its queries reject, and the pool discards it when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * A statement without side effects on the pool. An idle connection the server ended fails the first
 * statement sent on it, so one that failed so is sent again, on the next connection (the pool drops
 * broken ones), up to `attempts` times in all.
 */
export async function pgRead<T extends pg.QueryResultRow>(pool: pg.Pool, statement: pg.QueryConfig, attempts: number): Promise<pg.QueryResult<T>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await pool.query<T>(statement);
    } catch (err) {
      if (attempt >= attempts || !isLostConnection(err)) throw err;
    }
  }
}

/** Times a transaction is begun on a fresh connection when its connection was found dead before any work. */
const BEGIN_ATTEMPTS = 3;

export interface TransactionOptions {
  /**
   * `fn` may run again (it only sends statements on its connection): a transaction whose connection
   * was lost before COMMIT was sent did not commit, so it is run once more on a new connection.
   */
  rerunnable?: boolean;
}

/** Failed because the connection went (BEGIN or a statement rejected, or the client reported an error). */
class Lost {
  constructor(
    readonly err: unknown,
    /** Nothing but BEGIN had been sent. */
    readonly beforeWork: boolean,
  ) {}
}

/**
 * Runs `fn` in a transaction on a connection checked out of `pool`. A connection that went away is
 * released with an error, so the pool discards it (never handed to the next caller). When it went
 * before any work (it was dead when checked out: BEGIN failed), the transaction begins again on
 * another connection; with `rerunnable`, also once when it went before COMMIT was sent. Otherwise the
 * error is thrown: a lost connection as it came from the driver (store/unavailable.ts words it as 503),
 * an answer of the server or a failure of `fn` unchanged.
 */
export async function pgTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  let reruns = options.rerunnable ? 1 : 0;
  for (let begins = 1; ; begins++) {
    const outcome = await attempt(pool, fn);
    if (!(outcome instanceof Lost)) return outcome.result;
    if (outcome.beforeWork ? begins < BEGIN_ATTEMPTS : reruns-- > 0) continue;
    throw outcome.err;
  }
}

async function attempt<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<{ result: T } | Lost> {
  const client = await pool.connect();
  let failed = false;
  const onError = () => (failed = true);
  client.on('error', onError);
  let stage: 'begin' | 'work' | 'commit' = 'begin';
  try {
    await client.query('BEGIN');
    stage = 'work';
    const result = await fn(client);
    stage = 'commit';
    await client.query('COMMIT');
    return { result };
  } catch (err) {
    // A statement that timed out may still be running: its connection is closed, not rolled back (the
    // server rolls back when it sees it closed), and the transaction is not run again (its time is up).
    if (isStoreTimeout(err)) {
      failed = true;
      throw err;
    }
    // A statement refused on a live connection leaves it usable once rolled back.
    const rolledBack = !failed && (await client.query('ROLLBACK').then(() => true, () => false));
    if (!rolledBack) failed = true;
    // After COMMIT was sent, nobody knows whether it committed: never run again.
    if (failed && stage !== 'commit' && isStoreUnreachable(err)) return new Lost(err, stage === 'begin');
    throw err;
  } finally {
    client.removeListener('error', onError);
    client.release(failed);
  }
}
