// RQL, step 3 of 3: a checked plan → parameterised SQL. Every value from the request becomes a
// bound parameter; the SQL text holds only column expressions from the resource definition.
import type { ColumnRef, Plan, PlanNode, ResourceDef, Scalar } from './check.js';

/** Collects bound values and hands out their placeholders ($1, $2, ...). */
export class SqlParams {
  readonly values: unknown[] = [];

  constructor(initial: readonly unknown[] = []) {
    for (const v of initial) this.values.push(v);
  }

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export interface SqlQueryParts {
  /** A boolean SQL expression ("true" when there is no filter). */
  where: string;
  /** How many leading `values` the WHERE binds (sort keys may bind more after them). */
  whereValueCount: number;
  orderBy: string;
  /**
   * The ORDER BY's keys one by one (ascending with NULLs first, or descending with NULLs last; the
   * tiebreak last), so that a long window can be read in keyset pages rather than by OFFSET.
   */
  keys?: SortKey[];
  limit: number;
  offset: number;
  values: unknown[];
}

export interface SortKey {
  /** The SQL expression (its parameters among the query's values). */
  expr: string;
  descending: boolean;
}

const OPS = { eq: '=', ne: '<>', gt: '>', lt: '<', ge: '>=', le: '<=' } as const;

/** The column as text for comparisons (code-point order), or as stored. */
function expr(ref: ColumnRef, params: SqlParams): string {
  if (ref.mapKey !== undefined) return `((${ref.column} ->> ${params.add(ref.mapKey)}) collate "C")`;
  if (ref.asText) return `((${ref.column})::text collate "C")`;
  return ref.column;
}

/** Ordered enums stored as text compare by their position in the declared order. */
function rank(ref: ColumnRef, params: SqlParams, column: string): string {
  return `array_position(${params.add(ref.values)}::text[], ${column})`;
}

function bind(ref: ColumnRef, value: Scalar, params: SqlParams): string {
  if ((ref.type === 'date' || ref.type === 'integer') && !ref.asText) return `${params.add(value)}::bigint`;
  if (typeof value === 'number') return `${params.add(value)}::float8`;
  if (typeof value === 'boolean') return `${params.add(value)}::boolean`;
  return `${params.add(value)}::text`;
}

/** RQL wildcards * and ? → LIKE's % and _; the LIKE metacharacters themselves are literal. */
export function likePattern(pattern: string): string {
  let out = '';
  for (const c of pattern) {
    if (c === '*') out += '%';
    else if (c === '?') out += '_';
    else if (c === '%' || c === '_' || c === '\\') out += `\\${c}`;
    else out += c;
  }
  return out;
}

function nodeSql(node: PlanNode, params: SqlParams): string {
  switch (node.kind) {
    case 'and':
    case 'or':
      return `(${node.children.map((c) => nodeSql(c, params)).join(node.kind === 'and' ? ' and ' : ' or ')})`;
    case 'not':
      // coalesce: NOT over an unknown (null) comparison must still exclude nothing by accident.
      return `(not coalesce(${nodeSql(node.child, params)}, false))`;
    case 'isNull':
      return `(${expr(node.ref, params)} is ${node.negated ? 'not ' : ''}null)`;
    case 'compare': {
      const column = expr(node.ref, params);
      const ordered = node.op !== 'eq' && node.op !== 'ne';
      if (node.ref.type === 'enum' && ordered && !node.ref.asText) {
        const position = node.ref.values!.indexOf(String(node.value)) + 1;
        return `(${rank(node.ref, params, column)} ${OPS[node.op]} ${params.add(position)}::int)`;
      }
      // ne keeps rows where the property is null: "not equal to x" is true of an absent value.
      if (node.op === 'ne') return `(${column} is distinct from ${bind(node.ref, node.value, params)})`;
      return `(${column} ${OPS[node.op]} ${bind(node.ref, node.value, params)})`;
    }
    case 'like': {
      let column = expr(node.ref, params);
      // Columns are collate "C", whose ILIKE folds ASCII letters only. A pattern with other letters
      // (küche) is compared under the database's own collation, which folds them too (C.UTF-8 on
      // PGlite and on a default Debian PostgreSQL); ASCII patterns keep the faster "C" comparison.
      if (!node.caseSensitive && /[^\p{ASCII}]/u.test(node.pattern)) column = `${column} collate "default"`;
      const op = node.caseSensitive ? 'like' : 'ilike';
      return `(${column} ${op} ${params.add(likePattern(node.pattern))}::text escape '\\')`;
    }
    case 'in': {
      const column = expr(node.ref, params);
      const type = node.ref.asText || node.ref.mapKey !== undefined ? 'text' : sqlArrayType(node.ref);
      const parts: string[] = [];
      if (node.values.length > 0) parts.push(`${column} = any(${params.add(node.values)}::${type}[])`);
      if (node.includesNull) parts.push(`${column} is null`);
      return parts.length === 0 ? 'false' : `(${parts.join(' or ')})`;
    }
  }
}

function sqlArrayType(ref: ColumnRef): string {
  switch (ref.type) {
    case 'number':
      return 'float8';
    case 'date':
    case 'integer':
      return 'bigint';
    case 'boolean':
      return 'boolean';
    default:
      return 'text';
  }
}

export function toSql(resource: ResourceDef, plan: Plan, params: SqlParams = new SqlParams()): SqlQueryParts {
  const where = plan.filter ? nodeSql(plan.filter, params) : 'true';
  const whereValueCount = params.values.length;
  const keys: SortKey[] = plan.sort.map(({ ref, descending }) => {
    const column = expr(ref, params);
    return { expr: ref.type === 'enum' && !ref.asText ? rank(ref, params, column) : column, descending };
  });
  const orderBy = keys.map((k) => `${k.expr} ${k.descending ? 'desc nulls last' : 'asc nulls first'}`);
  orderBy.push(resource.tiebreak);
  keys.push({ expr: resource.tiebreak, descending: false });
  return { where, whereValueCount, orderBy: orderBy.join(', '), keys, limit: plan.limit, offset: plan.offset, values: params.values };
}
