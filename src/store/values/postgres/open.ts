// Opening the PostgreSQL store: a pg pool on the server (in the schema, when given), the tables made
// or checked under the partition lock, the partitions that exist, the current and next months.
import pg from 'pg';
import { hearClientErrors, pgTransaction } from '../../pg-clients.js';
import { appendedHook, engineLogger, type ValueStoreHooks } from '../hooks.js';
import { SCHEMA, SQL } from './sql.js';
import { PostgresStore, type PostgresStoreOptions } from './store.js';

export interface OpenPostgresOptions extends PostgresStoreOptions, ValueStoreHooks {
  /** The server (DATABASE_URL). */
  url: string;
  /** The schema to keep the tables in (DATABASE_SCHEMA); the connection's default when absent. */
  schema?: string;
  /** Connections in the pool (default 8): reads run on several at once, writes on one at a time. */
  poolSize?: number;
  /**
   * STORE_TIMEOUT_MS: each statement (COPY included) and each connection attempt; a statement that
   * times out closes its connection (pg's query_timeout). Unset: statements are not bounded.
   */
  timeoutMs?: number;
}

/** int8 (ts, bucket) as JS numbers: every stored instant is within ±8.64e15 < 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A server that does not answer a connection attempt within this is unavailable (503), not awaited forever. */
const CONNECT_TIMEOUT_MS = 10_000;

/** FNV-1a of a string as a signed 32-bit integer: an advisory-lock namespace per schema. */
export function lockKey(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

export async function openPostgresStore(options: OpenPostgresOptions): Promise<PostgresStore> {
  const { schema } = options;
  // The schema goes into a connection option and DDL, not a bind parameter: it must be a plain name.
  if (schema !== undefined && !IDENTIFIER.test(schema)) throw new RangeError(`not a plain schema name: "${schema}"`);
  const pool = hearClientErrors(new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 8,
    connectionTimeoutMillis: options.timeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(options.timeoutMs !== undefined ? { query_timeout: options.timeoutMs } : {}),
    application_name: 'device-data-service values',
    types,
    // JIT compiles any statement the planner costs high, and a bucket recompute over many hours is
    // costed so (a lateral scan per hour) while it runs in milliseconds: compiling one over 167 hours
    // took ~300 ms where running it took 4 ms. Nothing here is an analytic scan JIT would speed up.
    options: `-c jit=off${schema ? ` -c search_path=${schema}` : ''}`,
  }));
  try {
    if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch(async (err: unknown) => {
      // Two instances creating it at once: one wins, the other finds it there.
      if ((await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 0) throw err;
    });
    const { rows } = await pool.query<{ schema: string | null }>(SQL.currentSchema);
    const current = rows[0]?.schema;
    if (!current) throw new Error('the PostgreSQL connection has no current schema to keep point values in');
    const seriesLockKey = lockKey(`${current}.point_values`);
    const partitionLockKey = lockKey(`${current}.point_values#partitions`);
    // Under the partition lock: instances starting together must not race on CREATE TABLE either.
    await pgTransaction(pool, async (client) => {
      await client.query(SQL.lockPartitions, [partitionLockKey]);
      for (const sql of SCHEMA) await client.query(sql);
    });
    const partitions = new Set((await pool.query<{ name: string }>(SQL.partitions)).rows.map((r) => r.name));
    const log = engineLogger(options.log, 'postgres');
    const store = new PostgresStore({ pool, seriesLockKey, partitionLockKey, partitions, options, log, appended: appendedHook(options.onAppended, log) });
    await store.ensureCurrentMonths().catch(async (err: unknown) => {
      await store.close().catch(() => undefined);
      throw err;
    });
    return store;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
