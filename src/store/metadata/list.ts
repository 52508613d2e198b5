// Paged reads for list endpoints: the total of all matches, and the requested window fetched in
// batches so a large page never sits in memory whole.
import type { SqlQueryParts } from '../../core/rql/index.js';
import type { SortKey } from '../../core/rql/sql.js';
import type { Queryable, Row } from './db.js';

export interface ListSource {
  /** FROM clause (trusted: written by us). */
  from: string;
  /** SELECT list (trusted). */
  select: string;
}


export async function countRows(db: Queryable, source: ListSource, q: SqlQueryParts): Promise<number> {
  // No ORDER BY here, so only the WHERE's values are bound: PostgreSQL refuses unused parameters.
  const rows = await db.query<{ n: number }>(`select count(*)::int as n from ${source.from} where ${q.where}`, q.values.slice(0, q.whereValueCount));
  return rows[0]?.n ?? 0;
}

/**
 * Yields the rows of the window [offset, offset + limit) in batches, in the query's order. The first
 * batch skips `offset` rows; the next ones start after the last row read, by its sort keys (keyset
 * pages): an OFFSET would make each batch scan every row before it, and a window of 100,000 rows
 * cost minutes on PGlite.
 */
export async function* pageRows<T extends Row>(db: Queryable, source: ListSource, q: SqlQueryParts): AsyncGenerator<T[]> {
  if (!q.keys || q.keys.length === 0) return yield* offsetPages<T>(db, source, q);
  const keys = q.keys;
  const select = `select ${source.select}, ${keys.map((k, i) => `(${k.expr})::text as "${KEY}${i}"`).join(', ')} from ${source.from}`;
  let last: (string | null)[] | undefined;
  // A first key descending puts its NULLs last: they are read as a segment of their own once the
  // rows with a value are done, so that the bound on the first key stays usable by an index.
  let nullsSegment = false;
  for (let done = 0; done < q.limit; ) {
    const size = Math.min(LIST_BATCH, q.limit - done);
    const values = [...q.values];
    const at = (v: unknown) => {
      values.push(v);
      return `$${values.length}`;
    };
    let text: string;
    let valuesOnly: boolean;
    if (!last) {
      text = `${select} where ${q.where} order by ${q.orderBy} limit ${at(size)} offset ${at(q.offset)}`;
      valuesOnly = false;
    } else {
      const first = keys[0]!;
      const v0 = last[0]!;
      valuesOnly = first.descending && v0 !== null && !nullsSegment;
      const after = nullsSegment && v0 !== null ? `${first.expr} is null` : keysetAfter(keys, last, at);
      const bound = v0 === null || nullsSegment ? '' : `${first.expr} ${first.descending ? '<=' : '>='} ${at(v0)} and `;
      text = `${select} where (${q.where}) and ${bound}${after} order by ${q.orderBy} limit ${at(size)}`;
    }
    const rows = await db.query<T>(text, values);
    if (rows.length > 0) {
      last = keys.map((_, i) => rows[rows.length - 1]![`${KEY}${i}`] as string | null);
      for (const r of rows) for (let i = 0; i < keys.length; i++) delete (r as Row)[`${KEY}${i}`];
      yield rows;
      done += rows.length;
    }
    if (rows.length < size) {
      if (!valuesOnly) return;
      nullsSegment = true;
    }
  }
}

/** Column aliases of the sort keys read with each row (removed before the rows are yielded). */
const KEY = '__key';

/** Rows per statement of a list: PGlite decodes each row on this thread (see crud.ts READ_PAGE). */
const LIST_BATCH = 100;

/** Rows strictly after `last` in the keys' order (ascending NULLs first, descending NULLs last). */
function keysetAfter(keys: readonly SortKey[], last: readonly (string | null)[], at: (v: unknown) => string): string {
  const alternatives: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const terms: string[] = [];
    for (let j = 0; j < i; j++) terms.push(last[j] === null ? `${keys[j]!.expr} is null` : `${keys[j]!.expr} = ${at(last[j])}`);
    const k = keys[i]!;
    const v = last[i];
    if (v === null) terms.push(k.descending ? 'false' : `${k.expr} is not null`);
    else terms.push(k.descending ? `(${k.expr} < ${at(v)} or ${k.expr} is null)` : `${k.expr} > ${at(v)}`);
    alternatives.push(`(${terms.join(' and ')})`);
  }
  return `(${alternatives.join(' or ')})`;
}

/** The window by LIMIT and OFFSET, for a query without its sort keys. */
async function* offsetPages<T extends Row>(db: Queryable, source: ListSource, q: SqlQueryParts): AsyncGenerator<T[]> {
  const n = q.values.length;
  const text = `select ${source.select} from ${source.from} where ${q.where} order by ${q.orderBy} limit $${n + 1} offset $${n + 2}`;
  for (let done = 0; done < q.limit; ) {
    const size = Math.min(LIST_BATCH, q.limit - done);
    const rows = await db.query<T>(text, [...q.values, size, q.offset + done]);
    if (rows.length > 0) yield rows;
    if (rows.length < size) return;
    done += size;
  }
}
