// RQL, step 2 of 3: the AST checked against one resource's whitelist of properties, with every
// value converted to the type of the property it is compared with. The result is a typed plan.
import { parseInstant } from '../time.js';
import type { ComparisonOp, RqlNode, RqlQuery, RqlValue, ValueType } from './parse.js';

export type PropertyType = 'string' | 'integer' | 'number' | 'boolean' | 'date' | 'enum';

export interface PropertyDef {
  /** SQL expression of the column (trusted: written by us, never from the request). */
  column: string;
  type: PropertyType;
  /** For enums: the allowed values, in order (comparisons follow this order). */
  values?: readonly string[];
}

export interface ResourceDef {
  name: string;
  properties: Record<string, PropertyDef>;
  /**
   * A map column whose keys are properties too: `tags.<key>` (string values). With the prefix '',
   * every name that is not a property is a key of the map (Mango's tag-value queries: `site=x`).
   */
  mapColumn?: { prefix: string; column: string };
  /** Appended to every sort so that pages are stable. */
  tiebreak: string;
  /** Items without limit(): DEFAULT_LIMIT unless the resource says otherwise (at most MAX_LIMIT). */
  defaultLimit?: number;
}

export class RqlCheckError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
    this.name = 'RqlCheckError';
  }
}

/** A property as the plan uses it: a column or a map key (the key is a bound value, never SQL). */
export interface ColumnRef {
  column: string;
  mapKey?: string;
  type: PropertyType;
  values?: readonly string[];
  /** A string: prefix asked for a text comparison on a non-text property. */
  asText?: boolean;
}

export type Scalar = string | number | boolean;

export type PlanNode =
  | { kind: 'and' | 'or'; children: PlanNode[] }
  | { kind: 'not'; child: PlanNode }
  | { kind: 'compare'; op: ComparisonOp; ref: ColumnRef; value: Scalar }
  | { kind: 'isNull'; ref: ColumnRef; negated: boolean }
  | { kind: 'like'; ref: ColumnRef; pattern: string; caseSensitive: boolean }
  | { kind: 'in'; ref: ColumnRef; values: Scalar[]; includesNull: boolean };

export interface Plan {
  filter?: PlanNode;
  sort: { ref: ColumnRef; descending: boolean }[];
  limit: number;
  offset: number;
}

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 100_000;

/** Thrown for limit() above MAX_LIMIT: a 400/4005 by the contract, not an RQL error. */
export class RqlLimitError extends Error {}

export function validProperties(resource: ResourceDef): string[] {
  const names = Object.keys(resource.properties);
  if (resource.mapColumn) names.push(resource.mapColumn.prefix === '' ? '<key>' : `${resource.mapColumn.prefix}.<key>`);
  return names;
}

function resolve(resource: ResourceDef, name: string, position: number): ColumnRef {
  const def = Object.hasOwn(resource.properties, name) ? resource.properties[name] : undefined;
  if (def) return { column: def.column, type: def.type, values: def.values };
  const map = resource.mapColumn;
  if (map && map.prefix === '' && name !== '') return { column: map.column, mapKey: name, type: 'string' };
  if (map && name.startsWith(`${map.prefix}.`) && name.length > map.prefix.length + 1) {
    return { column: map.column, mapKey: name.slice(map.prefix.length + 1), type: 'string' };
  }
  throw new RqlCheckError(`Unknown property "${name}" for ${resource.name}; valid properties: ${validProperties(resource).join(', ')}`, position);
}

function convert(ref: ColumnRef, value: RqlValue, property: string): Scalar {
  const type: PropertyType | ValueType = ref.asText ? 'string' : ref.type;
  const text = value.text;
  const fail = (what: string) => new RqlCheckError(`"${text}" is not ${what} (property ${property})`, value.position);
  switch (type) {
    case 'string':
      return text;
    case 'number': {
      const n = text.trim() === '' ? NaN : Number(text);
      if (!Number.isFinite(n)) throw fail('a number');
      return n;
    }
    case 'integer': {
      const n = /^\s*-?\d+\s*$/.test(text) ? Number(text) : NaN;
      if (!Number.isSafeInteger(n)) throw fail('an integer');
      return n;
    }
    case 'boolean':
      if (text === 'true') return true;
      if (text === 'false') return false;
      throw fail('true or false');
    case 'date': {
      const ms = parseInstant(text);
      if (ms === undefined) throw fail('a date (ISO 8601 with offset, or epoch milliseconds)');
      return ms;
    }
    case 'enum': {
      const match = ref.values?.find((v) => v.toUpperCase() === text.toUpperCase());
      if (match === undefined) throw fail(`one of ${ref.values?.join(', ')}`);
      return match;
    }
  }
}

/** Applies a type prefix: string: on a non-text property compares its text form; others must agree. */
function withForcedType(ref: ColumnRef, value: RqlValue, property: string): ColumnRef {
  if (!value.forced) return ref;
  if (value.forced === 'string') return ref.type === 'string' ? ref : { ...ref, asText: true };
  const compatible = value.forced === ref.type || (value.forced === 'number' && (ref.type === 'date' || ref.type === 'integer'));
  if (!compatible) throw new RqlCheckError(`A ${value.forced} value cannot be compared with ${ref.type} property ${property}`, value.position);
  return ref;
}

function checkNode(resource: ResourceDef, node: RqlNode): PlanNode {
  switch (node.kind) {
    case 'and':
    case 'or':
      return { kind: node.kind, children: node.children.map((c) => checkNode(resource, c)) };
    case 'not':
      return { kind: 'not', child: checkNode(resource, node.child) };
    case 'compare': {
      const base = resolve(resource, node.property, node.position);
      if (node.value.keyword === 'null') {
        if (node.op !== 'eq' && node.op !== 'ne') throw new RqlCheckError(`${node.op}() cannot compare with null`, node.value.position);
        return { kind: 'isNull', ref: base, negated: node.op === 'ne' };
      }
      const ref = withForcedType(base, node.value, node.property);
      const orderedOp = node.op !== 'eq' && node.op !== 'ne';
      if (orderedOp && ref.type === 'boolean' && !ref.asText) throw new RqlCheckError(`${node.op}() does not apply to true/false property ${node.property}`, node.position);
      return { kind: 'compare', op: node.op, ref, value: convert(ref, node.value, node.property) };
    }
    case 'match': {
      const base = resolve(resource, node.property, node.position);
      const ref = base.type === 'string' || base.type === 'enum' ? { ...base, asText: base.type !== 'string' } : undefined;
      if (!ref) throw new RqlCheckError(`match() applies to text properties, not ${node.property}`, node.position);
      return { kind: 'like', ref, pattern: node.pattern.text, caseSensitive: node.caseSensitive };
    }
    case 'in': {
      const base = resolve(resource, node.property, node.position);
      const includesNull = node.values.some((v) => v.keyword === 'null');
      const present = node.values.filter((v) => v.keyword !== 'null');
      // One comparison type for the whole list: text if any value has string:, else the property's.
      const refs = present.map((v) => withForcedType(base, v, node.property));
      const ref = refs.find((r) => r.asText) ?? base;
      return { kind: 'in', ref, values: present.map((v) => convert(ref, v, node.property)), includesNull };
    }
  }
}

export function checkRql(resource: ResourceDef, query: RqlQuery): Plan {
  const sort = query.sort.map((s) => {
    const ref = resolve(resource, s.property, s.position);
    return { ref, descending: s.descending };
  });
  const limit = query.limit?.count ?? resource.defaultLimit ?? DEFAULT_LIMIT;
  if (limit > MAX_LIMIT) throw new RqlLimitError(`limit() must be at most ${MAX_LIMIT}`);
  const plan: Plan = { sort, limit, offset: query.limit?.offset ?? 0 };
  if (query.filter) plan.filter = checkNode(resource, query.filter);
  return plan;
}
