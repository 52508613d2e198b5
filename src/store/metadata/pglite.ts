// Embedded PostgreSQL (PGlite, WASM) under DATA_DIR: the zero-set-up default.
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import type { MetadataDb, Queryable, Row } from './db.js';

export async function openPglite(dir: string): Promise<MetadataDb> {
  await mkdir(dir, { recursive: true });
  const pg = await PGlite.create(dir);
  type Connection = Pick<PGlite, 'query' | 'exec'>;
  const on = (c: Connection): Queryable => ({
    query: async <T extends Row>(text: string, values?: readonly unknown[]) => (await c.query<T>(text, values ? [...values] : undefined)).rows,
    exec: async (script: string) => {
      await c.exec(script);
    },
  });
  return {
    engine: 'pglite',
    ...on(pg),
    transaction: (fn) => pg.transaction((tx) => fn(on(tx))),
    ping: async () => {
      await pg.query('select 1');
    },
    close: () => pg.close(),
  };
}
