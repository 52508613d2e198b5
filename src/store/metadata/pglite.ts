// Embedded PostgreSQL (PGlite, WASM) under DATA_DIR: the zero-set-up default.
//
// PGlite runs each statement synchronously on this thread and settles its promise without any I/O
// wait, so a chain of awaited statements (an import of thousands of items, a restart per point)
// never lets a timer or a socket run: it held the event loop for seconds. Every statement therefore
// first yields to the event loop once the current time slice has run out (core/time-slice.ts).
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { TimeSlice } from '../../core/time-slice.js';
import type { MetadataDb, Queryable, Row } from './db.js';

export async function openPglite(dir: string): Promise<MetadataDb> {
  await mkdir(dir, { recursive: true });
  const pg = await PGlite.create(dir);
  const slice = new TimeSlice();
  type Connection = Pick<PGlite, 'query' | 'exec'>;
  const on = (c: Connection): Queryable => ({
    query: async <T extends Row>(text: string, values?: readonly unknown[]) => {
      await slice.yieldIfExpired();
      return (await c.query<T>(text, values ? [...values] : undefined)).rows;
    },
    exec: async (script: string) => {
      await slice.yieldIfExpired();
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
