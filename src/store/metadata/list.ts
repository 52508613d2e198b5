// Paged reads for list endpoints: the total of all matches, and the requested window fetched in
// batches so a large page never sits in memory whole.
import type { SqlQueryParts } from '../../core/rql/index.js';
import type { Queryable, Row } from './db.js';

export interface ListSource {
  /** FROM clause (trusted: written by us). */
  from: string;
  /** SELECT list (trusted). */
  select: string;
}

const BATCH = 1000;

export async function countRows(db: Queryable, source: ListSource, q: SqlQueryParts): Promise<number> {
  // No ORDER BY here, so only the WHERE's values are bound: PostgreSQL refuses unused parameters.
  const rows = await db.query<{ n: number }>(`select count(*)::int as n from ${source.from} where ${q.where}`, q.values.slice(0, q.whereValueCount));
  return rows[0]?.n ?? 0;
}

/** Yields the rows of the window [offset, offset + limit) in batches, in the query's order. */
export async function* pageRows<T extends Row>(db: Queryable, source: ListSource, q: SqlQueryParts): AsyncGenerator<T[]> {
  const n = q.values.length;
  const text = `select ${source.select} from ${source.from} where ${q.where} order by ${q.orderBy} limit $${n + 1} offset $${n + 2}`;
  for (let done = 0; done < q.limit; ) {
    const size = Math.min(BATCH, q.limit - done);
    const rows = await db.query<T>(text, [...q.values, size, q.offset + done]);
    if (rows.length > 0) yield rows;
    if (rows.length < size) return;
    done += size;
  }
}
