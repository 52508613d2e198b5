// JSON store table and its RQL properties. The document is stored twice (see migration 005): the
// exact text, which every read returns, and JSONB when it can represent it, for path reads in SQL.
import type { ResourceDef, SqlQueryParts } from '../../core/rql/index.js';
import { CrudRepository } from './crud.js';
import { pgErrorCode, type Queryable } from './db.js';

/** An item without its document: what lists show and permission checks need. */
export interface JsonStoreRecord {
  [key: string]: unknown;
  id: number;
  xid: string;
  name: string;
  readPermission: string[];
  editPermission: string[];
}

/** An item with its document as JSON text. */
export interface JsonStoreItem extends JsonStoreRecord {
  doc: string;
}

export interface JsonStoreValues {
  xid: string;
  name: string;
  readPermission: string[];
  editPermission: string[];
  /** The exact JSON text. */
  doc: string;
  /** Whether JSONB can hold the document; when false doc_jsonb stays null. */
  jsonb: boolean;
}

/** What a path read found: the value's JSON text (absent: undefined), or that the SQL path cannot answer. */
export type PathRead =
  | { record: JsonStoreRecord; kind: 'value'; value: string | undefined }
  | { record: JsonStoreRecord; kind: 'no-jsonb' };

export const jsonStoreResource: ResourceDef = {
  name: 'JSON store items',
  properties: {
    id: { column: 't.id', type: 'integer' },
    xid: { column: 't.xid', type: 'string' },
    name: { column: 't.name', type: 'string' },
  },
  tiebreak: 't.id',
};

const META = 't.id as "id", t.xid as "xid", t.name as "name", t.read_permission as "readPermission", t.edit_permission as "editPermission"';
const RETURNING = 'id as "id", xid as "xid", name as "name", read_permission as "readPermission", edit_permission as "editPermission", doc as "doc"';
// Written once for insert and update: $5 is the text, $6 whether JSONB is attempted.
const JSONB_OF_DOC = 'case when $6::boolean then $5::text::jsonb end';

/**
 * Errors of the JSONB cast that the service's checks should have prevented (data exceptions such
 * as an out-of-range number, or the parser's stack depth): the write is retried without JSONB.
 */
function isJsonbInputError(err: unknown): boolean {
  const code = pgErrorCode(err);
  return code !== undefined && (code.startsWith('22') || code === '54001');
}

export class JsonStoreRepository extends CrudRepository<JsonStoreRecord> {
  constructor(db: Queryable) {
    super(db, {
      table: 'json_store',
      from: 'json_store t',
      read: {
        id: 't.id',
        xid: 't.xid',
        name: 't.name',
        readPermission: 't.read_permission',
        editPermission: 't.edit_permission',
      },
      // Writes go through insertItem/replaceItem: the document columns need more than a map.
      write: {},
    });
  }

  async findItem(xid: string): Promise<JsonStoreItem | undefined> {
    const rows = await this.db.query<JsonStoreItem>(`select ${META}, t.doc as "doc" from json_store t where t.xid = $1`, [xid]);
    return rows[0];
  }

  /** Inserts unless the XID exists (then undefined, so create-or-replace can replace instead). */
  async insertItem(v: JsonStoreValues): Promise<JsonStoreItem | undefined> {
    const rows = await this.withJsonbFallback(v, (values) =>
      this.db.query<JsonStoreItem>(
        `insert into json_store (xid, name, read_permission, edit_permission, doc, doc_jsonb)
         values ($1, $2, $3::text[], $4::text[], $5::text, ${JSONB_OF_DOC})
         on conflict (xid) do nothing returning ${RETURNING}`,
        values,
      ),
    );
    return rows[0];
  }

  /**
   * Replaces every field of the item `id`; undefined when it is gone, or when `expectedDoc` is given
   * and the stored document is no longer that text. A duplicate XID throws (23505).
   */
  async replaceItem(id: number, v: JsonStoreValues, expectedDoc?: string): Promise<JsonStoreItem | undefined> {
    const rows = await this.withJsonbFallback(v, (values) =>
      this.db.query<JsonStoreItem>(
        `update json_store set xid = $1, name = $2, read_permission = $3::text[], edit_permission = $4::text[],
           doc = $5::text, doc_jsonb = ${JSONB_OF_DOC}
         where id = $7 and ($8::text is null or doc = $8::text) returning ${RETURNING}`,
        [...values, id, expectedDoc ?? null],
      ),
    );
    return rows[0];
  }

  /** The XIDs of the items `q` selects (its WHERE: the caller's read scope), in order, as a JSON array. */
  async xids(q: SqlQueryParts, limit: number): Promise<string> {
    const values = q.values.slice(0, q.whereValueCount);
    const rows = await this.db.query<{ json: string }>(
      `select coalesce(json_agg(xid order by xid), '[]')::text as "json" from (
         select t.xid from json_store t where ${q.where} order by t.xid limit $${values.length + 1}
       ) found`,
      [...values, limit],
    );
    return rows[0]!.json;
  }

  async deleteItem(id: number): Promise<JsonStoreItem | undefined> {
    const rows = await this.db.query<JsonStoreItem>(`delete from json_store where id = $1 returning ${RETURNING}`, [id]);
    return rows[0];
  }

  /**
   * The JSON text at `path` (object keys or array indexes, outermost first), found in SQL on the
   * JSONB copy. JSONB decides whether the value exists and answers strings, booleans and null
   * itself; numbers, objects and arrays are cut from the exact text (`json #>` keeps spelling and
   * key order), which PostgreSQL can parse whenever the JSONB copy exists.
   */
  async readPath(xid: string, path: readonly string[]): Promise<PathRead | undefined> {
    const rows = await this.db.query<JsonStoreRecord & { noJsonb: boolean; value: string | null }>(
      `select ${META}, t.doc_jsonb is null as "noJsonb",
         case
           when t.doc_jsonb is null then null
           when jsonb_typeof(t.doc_jsonb #> $2::text[]) in ('object', 'array', 'number') then (t.doc::json #> $2::text[])::text
           else (t.doc_jsonb #> $2::text[])::text
         end as "value"
       from json_store t where t.xid = $1`,
      [xid, path],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { noJsonb, value, ...record } = row;
    if (noJsonb) return { record, kind: 'no-jsonb' };
    return { record, kind: 'value', value: value ?? undefined };
  }

  private async withJsonbFallback<T>(v: JsonStoreValues, write: (values: unknown[]) => Promise<T>): Promise<T> {
    const values = (jsonb: boolean): unknown[] => [v.xid, v.name, v.readPermission, v.editPermission, v.doc, jsonb];
    try {
      return await write(values(v.jsonb));
    } catch (err) {
      if (!v.jsonb || !isJsonbInputError(err)) throw err;
      return write(values(false));
    }
  }
}
