// PostgreSQL server through a pg pool (DATABASE_URL).
import pg from 'pg';
import type { MetadataDb, Queryable, Row } from './db.js';

/** int8 (counts, sums) as JS numbers, like PGlite does; our values stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export async function openPostgres(url: string, poolSize: number, schema?: string): Promise<MetadataDb> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types,
    // A per-test schema keeps parallel suites apart; production uses the default search_path.
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  if (schema) await pool.query(`create schema if not exists ${schema}`);
  const on = (c: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <T extends Row>(text: string, values?: readonly unknown[]) => (await c.query<T>(text, values ? [...values] : undefined)).rows,
    exec: async (script: string) => {
      await c.query(script);
    },
  });
  return {
    engine: 'postgresql',
    ...on(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await fn(on(client));
        await client.query('commit');
        return result;
      } catch (err) {
        await client.query('rollback').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    ping: async () => {
      await pool.query('select 1');
    },
    close: () => pool.end(),
  };
}
