// PostgreSQL server through a pg pool (DATABASE_URL).
import pg from 'pg';
import { hearClientErrors, pgTransaction } from '../pg-clients.js';
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

export async function openPostgres(url: string, poolSize: number, schema?: string): Promise<MetadataDb> {
  const pool = hearClientErrors(new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'device-data-service',
    types,
    // A per-test schema keeps parallel suites apart; production uses the default search_path.
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  }));
  if (schema) await pool.query(`create schema if not exists ${schema}`);
  // A lost server surfaces as the store's 503 (DomainError 'unavailable'); the pool reconnects later.
  const on = (c: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <T extends Row>(text: string, values?: readonly unknown[]) => {
      const run = () => c.query<T>(text, values ? [...values] : undefined);
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
    // A connection lost mid-transaction is discarded and the transaction fails with the 503; one found
    // dead at BEGIN is replaced. fn is not run twice: it may do more than send statements.
    transaction: (fn) => pgTransaction(pool, (client) => fn(on(client))).catch(unavailable),
    ping: async () => {
      await pool.query('select 1');
    },
    close: () => pool.end(),
  };
}
