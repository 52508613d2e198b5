// PostgreSQL server through a pg pool (DATABASE_URL).
import pg from 'pg';
import { hearClientErrors, pgRead, pgTransaction } from '../pg-clients.js';
import { rethrowUnavailable } from '../unavailable.js';
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
  const pool = hearClientErrors(new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: timeoutMs ?? CONNECT_TIMEOUT_MS,
    application_name: 'device-data-service',
    types,
    // A per-test schema keeps parallel suites apart; production uses the default search_path.
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  }));
  if (schema) await pool.query(`create schema if not exists ${schema}`);
  // A lost server surfaces as the store's 503 (DomainError 'unavailable'); the pool reconnects later.
  const on = (c: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <T extends Row>(text: string, values?: readonly unknown[]) => {
      const statement: TimedQuery = { text, ...(values ? { values: [...values] } : {}), ...(timeoutMs !== undefined ? { query_timeout: timeoutMs } : {}) };
      // A read is safely sent again when its connection was lost (a restart, an administrator).
      const run = c === pool && isRead(text) ? pgRead<T>(pool, statement, poolSize + 1) : c.query<T>(statement);
      return (await run.catch(unavailable)).rows;
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
      await pool.query<Row>({ text: 'select 1', ...(timeoutMs !== undefined ? { query_timeout: timeoutMs } : {}) } satisfies TimedQuery);
    },
    close: () => pool.end(),
  };
}
