// PostgreSQL server through a pg pool (DATABASE_URL).
import pg from 'pg';
import { isStoreTimeout } from '../timeout.js';
import { isLostConnection, rethrowUnavailable } from '../unavailable.js';
import type { MetadataDb, Queryable, Row } from './db.js';

/** int8 (counts, sums) as JS numbers, like PGlite does; our values stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** A server that does not answer a connection attempt within this is unavailable (503), not awaited forever. */
const CONNECT_TIMEOUT_MS = 10_000;

const unavailable = rethrowUnavailable('The metadata store');

const isRead = (sql: string) => /^\s*select\b/i.test(sql);

/** pg honours a statement's own query_timeout (its types do not list it). */
type TimedQuery = pg.QueryConfig & { query_timeout?: number };

/**
 * `timeoutMs` (STORE_TIMEOUT_MS) bounds each statement and each wait for a connection: a statement
 * that times out closes its connection (it may still be running) and answers 503. Scripts (`exec`:
 * the migrations at start) are not bounded: a migration may rightly take long.
 */
export async function openPostgres(url: string, poolSize: number, schema?: string, timeoutMs?: number): Promise<MetadataDb> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: timeoutMs ?? CONNECT_TIMEOUT_MS,
    application_name: 'device-data-service',
    types,
    // A per-test schema keeps parallel suites apart; production uses the default search_path.
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  if (schema) await pool.query(`create schema if not exists ${schema}`);
  // A lost server surfaces as the store's 503 (DomainError 'unavailable'); the pool reconnects later.
  const on = (c: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <T extends Row>(text: string, values?: readonly unknown[]) => {
      const statement: TimedQuery = { text, ...(values ? { values: [...values] } : {}), ...(timeoutMs !== undefined ? { query_timeout: timeoutMs } : {}) };
      const run = () => c.query<T>(statement);
      // An idle pooled connection the server ended (a restart, an administrator) fails the first
      // query sent on it; a read is safely sent again, on the next connection (broken ones are dropped).
      const retries = c === pool && isRead(text) ? poolSize : 0;
      for (let attempt = 0; ; attempt++) {
        try {
          return (await run()).rows;
        } catch (err) {
          if (attempt >= retries || !isLostConnection(err)) unavailable(err);
        }
      }
    },
    exec: async (script: string) => {
      await c.query(script).catch(unavailable);
    },
  });
  return {
    engine: 'postgresql',
    ...on(pool),
    async transaction(fn) {
      const client = await pool.connect().catch(unavailable);
      // A connection whose rollback fails is discarded rather than handed to the next request.
      let broken = false;
      try {
        const tx = on(client);
        await tx.query('begin');
        const result = await fn(tx);
        await tx.query('commit');
        return result;
      } catch (err) {
        // A statement that timed out may still be running: the connection is closed, not rolled back
        // (the server rolls back when it sees it closed).
        if (isStoreTimeout(err)) broken = true;
        else await client.query('rollback').catch(() => {
          broken = true;
        });
        throw err;
      } finally {
        client.release(broken);
      }
    },
    ping: async () => {
      await pool.query<Row>({ text: 'select 1', ...(timeoutMs !== undefined ? { query_timeout: timeoutMs } : {}) } satisfies TimedQuery);
    },
    close: () => pool.end(),
  };
}
