// A repository over one table described by a field → column map. Reads alias every column to
// its field name, so rows come back as records without hand-written mapping.
import type { SqlQueryParts } from '../../core/rql/index.js';
import type { Queryable, Row } from './db.js';
import { countRows, pageRows, type ListSource } from './list.js';

export interface TableDef<T> {
  /** The table written to. */
  table: string;
  /** FROM clause for reads; may join (the table itself must be aliased `t`). */
  from: string;
  /** Read expression of every field. */
  read: { [K in keyof T]: string };
  /** Column of every writable field in `table`. */
  write: Partial<{ [K in keyof T]: string }>;
  /** Fields stored as JSONB (serialised on write). */
  json?: readonly (keyof T)[];
}

/**
 * Rows one read of many asks for. PGlite decodes rows on this thread, a wide one (a data point) in
 * some 0.1 ms, so a read of many is split into statements of this many, between which the event
 * loop runs (store/metadata/pglite.ts); on a server it costs a round trip per page.
 */
export const READ_PAGE = 100;

/**
 * Every row a query reads in id order, `pageSize` at a time: `page(after, limit)` reads the rows
 * with an id above `after` (keyset pages; no OFFSET to scan through).
 */
export async function readInIdPages<T extends { id: number }>(page: (after: number, limit: number) => Promise<T[]>, pageSize = READ_PAGE): Promise<T[]> {
  const all: T[] = [];
  for (let after = 0; ; ) {
    const rows = await page(after, pageSize);
    for (const r of rows) all.push(r);
    if (rows.length < pageSize) return all;
    after = rows[rows.length - 1]!.id;
  }
}

export class CrudRepository<T extends Row & { id: number }> {
  private readonly select: string;
  readonly source: ListSource;

  constructor(
    protected readonly db: Queryable,
    private readonly def: TableDef<T>,
  ) {
    this.select = Object.entries(def.read)
      .map(([field, expr]) => `${expr as string} as "${field}"`)
      .join(', ');
    this.source = { from: def.from, select: this.select };
  }

  async findOne(field: keyof T & string, value: unknown): Promise<T | undefined> {
    const rows = await this.db.query<T>(`select ${this.select} from ${this.def.from} where ${this.def.read[field]} = $1`, [value]);
    return rows[0];
  }

  /** The records whose `field` is one of `values` (in id order). */
  async findMany(field: keyof T & string, values: readonly unknown[]): Promise<T[]> {
    if (values.length === 0) return [];
    return this.db.query<T>(`select ${this.select} from ${this.def.from} where ${this.def.read[field]} = any($1) order by t.id`, [values]);
  }

  /** Every record whose `field` is `value`, in id order, read a page at a time (see READ_PAGE). */
  findAll(field: keyof T & string, value: unknown): Promise<T[]> {
    const text = `select ${this.select} from ${this.def.from} where ${this.def.read[field]} = $1 and t.id > $2 order by t.id limit $3`;
    return readInIdPages((after, limit) => this.db.query<T>(text, [value, after, limit]));
  }

  /** Every record, in id order, a page of `pageSize` at a time (keyset pages, as readInIdPages). */
  async *pages(pageSize = READ_PAGE): AsyncGenerator<T[]> {
    const text = `select ${this.select} from ${this.def.from} where t.id > $1 order by t.id limit $2`;
    for (let after = 0; ; ) {
      const rows = await this.db.query<T>(text, [after, pageSize]);
      if (rows.length > 0) yield rows;
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  count(q: SqlQueryParts): Promise<number> {
    return countRows(this.db, this.source, q);
  }

  page(q: SqlQueryParts): AsyncGenerator<T[]> {
    return pageRows<T>(this.db, this.source, q);
  }

  private writeValues(values: Partial<T>): { columns: string[]; params: unknown[] } {
    const columns: string[] = [];
    const params: unknown[] = [];
    for (const [field, column] of Object.entries(this.def.write) as [keyof T & string, string][]) {
      if (values[field] === undefined) continue;
      columns.push(column);
      params.push(this.def.json?.includes(field) ? JSON.stringify(values[field]) : values[field]);
    }
    return { columns, params };
  }

  async insert(values: Partial<T>): Promise<T> {
    const { columns, params } = this.writeValues(values);
    const placeholders = columns.map((_, i) => `$${i + 1}`);
    const rows = await this.db.query<{ id: number }>(
      `insert into ${this.def.table} (${columns.join(', ')}) values (${placeholders.join(', ')}) returning id`,
      params,
    );
    return (await this.findOne('id', rows[0]!.id))!;
  }

  /**
   * Inserts many rows in one statement (a field left undefined takes the column's default) and
   * answers the records in id order. Keep rows × fields well under PostgreSQL's 65,535 parameters.
   */
  async insertMany(rows: readonly Partial<T>[]): Promise<T[]> {
    if (rows.length === 0) return [];
    const fields = (Object.keys(this.def.write) as (keyof T & string)[]).filter((f) => rows.some((r) => r[f] !== undefined));
    const params: unknown[] = [];
    const tuples = rows.map((row) => {
      const cells = fields.map((f) => {
        if (row[f] === undefined) return 'default';
        params.push(this.def.json?.includes(f) ? JSON.stringify(row[f]) : row[f]);
        return `$${params.length}`;
      });
      return `(${cells.join(', ')})`;
    });
    const ids = await this.db.query<{ id: number }>(
      `insert into ${this.def.table} (${fields.map((f) => this.def.write[f] as string).join(', ')}) values ${tuples.join(', ')} returning id`,
      params,
    );
    return this.findMany('id', ids.map((r) => r.id));
  }

  async update(id: number, values: Partial<T>): Promise<T | undefined> {
    const { columns, params } = this.writeValues(values);
    if (columns.length > 0) {
      const sets = columns.map((c, i) => `${c} = $${i + 1}`);
      await this.db.query(`update ${this.def.table} set ${sets.join(', ')} where id = $${columns.length + 1}`, [...params, id]);
    }
    return this.findOne('id', id);
  }

  async delete(id: number): Promise<boolean> {
    const rows = await this.db.query(`delete from ${this.def.table} where id = $1 returning id`, [id]);
    return rows.length > 0;
  }
}
