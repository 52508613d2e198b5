// The tag keys and values of data points, as Mango's /data-point-tags reads them. Tags live in the
// points' `tags` JSONB column; Mango's implicit tags `name` and `device` are the point's name and
// device name (a stored tag of either name is not listed). Each read answers one JSON array as
// text, built by PostgreSQL: one row to decode (PGlite decodes rows on the event loop's thread),
// however many distinct values there are.
import type { ResourceDef, SqlQueryParts } from '../../core/rql/index.js';
import { MAX_LIMIT } from '../../core/rql/check.js';
import type { Queryable } from './db.js';

/** The implicit tags: Mango writes the point's name and device name into its tag table under these keys. */
export const IMPLICIT_TAGS = ['name', 'device'] as const;

/**
 * RQL over tags, as Mango's `GET /data-point-tags/values/<key>?<rql>`: every property is a tag key
 * (`site=Plant%201`, `match(region,N*)`), `name` and `device` are the point's columns. Without
 * limit() every distinct value is answered, up to RQL's largest limit.
 */
export const dataPointTagResource: ResourceDef = {
  name: 'data point tags',
  properties: {
    name: { column: 't.name', type: 'string' },
    device: { column: 't.device_name', type: 'string' },
  },
  mapColumn: { prefix: '', column: 't.tags' },
  tiebreak: 't.id',
  defaultLimit: MAX_LIMIT,
};

/** A query's WHERE with only the values it binds (its sort keys may bind more). */
function filter(q: SqlQueryParts): { where: string; values: unknown[] } {
  return { where: q.where, values: q.values.slice(0, q.whereValueCount) };
}

export class DataPointTagsRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * The distinct tag keys of the points `q` selects (its WHERE only: the caller's read scope), with
   * `name` on every point and `device` where the point has one, in code-point order, at most `limit`.
   */
  async keys(q: SqlQueryParts, limit: number): Promise<string> {
    const { where, values } = filter(q);
    // The stored keys in one pass over the points; the implicit ones by a look for any such point
    // (a lateral union per point cost twice the pass on PGlite, 100,000 points).
    const rows = await this.db.query<{ json: string }>(
      `select coalesce(json_agg(k order by k), '[]')::text as "json" from (
         (select k collate "C" as k from (select jsonb_object_keys(t.tags) as k from data_points t where ${where}) stored
           where k <> all(${this.at(values, [...IMPLICIT_TAGS])}::text[]) group by k)
         union all
         (select 'name' where exists (select from data_points t where ${where}))
         union all
         (select 'device' where exists (select from data_points t where (${where}) and t.device_name <> ''))
         order by k
         limit ${this.at(values, limit)}
       ) found`,
      values,
    );
    return rows[0]!.json;
  }

  /**
   * The distinct values of tag `key` (an implicit tag: the column) over the points `q` selects, in
   * code-point order, the window of q's limit and offset.
   */
  async values(key: string, q: SqlQueryParts): Promise<string> {
    const { where, values } = filter(q);
    const value = key === 'name' ? 't.name' : key === 'device' ? "nullif(t.device_name, '')" : `(t.tags ->> ${this.at(values, key)}::text)`;
    const rows = await this.db.query<{ json: string }>(
      `select coalesce(json_agg(v order by v), '[]')::text as "json" from (
         select distinct ${value} collate "C" as v from data_points t
         where ${value} is not null and (${where})
         order by v
         limit ${this.at(values, q.limit)} offset ${this.at(values, q.offset)}
       ) found`,
      values,
    );
    return rows[0]!.json;
  }

  /** Binds `value` after the others; returns its placeholder. */
  private at(values: unknown[], value: unknown): string {
    values.push(value);
    return `$${values.length}`;
  }
}
