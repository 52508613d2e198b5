// The RQL compiler (src/http/rql): parser, checker and SQL translation, table-driven, plus an
// injection suite and property-based tests (fast-check). Pure unit tests: no database.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DomainError } from '../src/core/errors.js';
import { httpStatus } from '../src/http/errors.js';
import { checkRql, DEFAULT_LIMIT, MAX_LIMIT, RqlCheckError, RqlLimitError, type ResourceDef } from '../src/core/rql/check.js';
import { compileRql, SqlParams, type SqlQueryParts } from '../src/core/rql/index.js';
import { MAX_DEPTH, parseRql, RqlSyntaxError, UnknownOperatorError, type ValueType } from '../src/core/rql/parse.js';
import { likePattern, toSql } from '../src/core/rql/sql.js';
import { DATA_TYPES, dataPointResource } from '../src/store/metadata/data-points.js';
import { DATA_SOURCE_STATES, dataSourceResource } from '../src/store/metadata/data-sources.js';
import { ALARM_LEVELS, eventDetectorResource } from '../src/store/metadata/event-detectors.js';

const RESOURCES: readonly ResourceDef[] = [dataPointResource, dataSourceResource, eventDetectorResource];

// ---- helpers: expected ASTs (positions left out unless a case asks for them) -------------------

type V = string | { text: string; forced?: ValueType; keyword?: 'true' | 'false' | 'null' };
const val = (x: V) => (typeof x === 'string' ? { text: x } : x);
const kw = (k: 'true' | 'false' | 'null') => ({ text: k, keyword: k });
const typed = (forced: ValueType, text: string) => ({ text, forced });
const cmp = (op: string, property: string, value: V) => ({ kind: 'compare', op, property, value: val(value) });
const eq = (p: string, x: V) => cmp('eq', p, x);
const match = (property: string, pattern: V, caseSensitive = false) => ({ kind: 'match', property, pattern: val(pattern), caseSensitive });
const inList = (property: string, ...values: V[]) => ({ kind: 'in', property, values: values.map(val) });
const and = (...children: unknown[]) => ({ kind: 'and', children });
const or = (...children: unknown[]) => ({ kind: 'or', children });
const not = (child: unknown) => ({ kind: 'not', child });
const asc = (property: string) => ({ property, descending: false });
const desc = (property: string) => ({ property, descending: true });
const q = (filter?: unknown, extra: { sort?: unknown[]; limit?: { count: number; offset: number } } = {}) => ({
  ...(filter === undefined ? {} : { filter }),
  sort: extra.sort ?? [],
  ...(extra.limit ? { limit: extra.limit } : {}),
});

/** The AST without positions (JSON round trip; the AST holds only plain data). */
function withoutPositions(x: unknown): unknown {
  return JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'position' ? undefined : v)));
}

type ErrorClass = abstract new (...args: never[]) => Error;

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected an error');
}

function flatten(values: readonly unknown[]): unknown[] {
  return values.flatMap((v) => (Array.isArray(v) ? flatten(v) : [v]));
}

// ---- SQL residue checker: what is left once trusted text is removed must be empty --------------

const COLUMNS = [
  ...new Set(
    RESOURCES.flatMap((r) => [...Object.values(r.properties).map((p) => p.column), r.tiebreak, ...(r.mapColumn ? [r.mapColumn.column] : [])]),
  ),
].sort((a, b) => b.length - a.length);

const SQL_WORDS = new Set([
  'and', 'or', 'not', 'coalesce', 'true', 'false', 'is', 'distinct', 'from', 'null', 'any', 'array_position', 'collate', '"C"', '"default"',
  'escape', "'\\'", 'like', 'ilike', 'asc', 'desc', 'nulls', 'first', 'last', '=', '<>', '<', '>', '<=', '>=', '->>',
]);

/** Tokens of `sql` that are neither a known column, a placeholder, a cast nor a fixed keyword. */
function residue(sql: string): string[] {
  let s = sql;
  for (const c of COLUMNS) s = s.split(c).join(' ');
  s = s.replace(/\$\d+(::(text|bigint|boolean|float8|int)(\[\])?)?/g, ' ').replace(/::text\b/g, ' ');
  return s.split(/[\s(),]+/).filter((w) => w !== '' && !SQL_WORDS.has(w));
}

function assertTrustedSql(out: SqlQueryParts, label: string): void {
  assert.deepEqual(residue(out.where), [], `${label}: untrusted text in WHERE ${out.where}`);
  assert.deepEqual(residue(out.orderBy), [], `${label}: untrusted text in ORDER BY ${out.orderBy}`);
}

/** compileRql either returns trusted SQL or throws a 400 DomainError; anything else fails the test. */
function compileOr400(resource: ResourceDef, input: string): SqlQueryParts | DomainError {
  let out: SqlQueryParts;
  try {
    out = compileRql(resource, input);
  } catch (err) {
    if (err instanceof DomainError && httpStatus(err) === 400) return err;
    throw err;
  }
  assertTrustedSql(out, JSON.stringify(input));
  return out;
}

/** Percent-encodes a value for RQL: encodeURIComponent leaves ( and ), which RQL needs encoded. */
const enc = (s: string) => encodeURIComponent(s).replace(/\(/g, '%28').replace(/\)/g, '%29');

// =================================================================================================

describe('RQL', function () {
  describe('1. parser', function () {
    interface ParseCase {
      input: string;
      ast?: unknown;
      /** Compare positions too (ast is then the full AST). */
      exact?: boolean;
      error?: ErrorClass;
      position?: number;
      message?: RegExp;
    }

    const nested = (n: number) => '('.repeat(n) + 'eq(name,a)' + ')'.repeat(n);
    const nots = (n: number) => 'not('.repeat(n) + 'eq(name,a)' + ')'.repeat(n);
    const notsAst = (n: number): unknown => (n === 0 ? eq('name', 'a') : not(notsAst(n - 1)));

    const cases: ParseCase[] = [
      // comparisons
      { input: 'eq(name,foo)', ast: q(eq('name', 'foo')) },
      { input: 'ne(name,foo)', ast: q(cmp('ne', 'name', 'foo')) },
      { input: 'gt(id,5)', ast: q(cmp('gt', 'id', '5')) },
      { input: 'lt(id,5)', ast: q(cmp('lt', 'id', '5')) },
      { input: 'ge(id,-5)', ast: q(cmp('ge', 'id', '-5')) },
      { input: 'le(id,5)', ast: q(cmp('le', 'id', '5')) },
      // match / like
      { input: 'match(name,ab*c?)', ast: q(match('name', 'ab*c?')) },
      { input: 'like(name,*x*)', ast: q(match('name', '*x*')) },
      { input: 'match(name,A*,true)', ast: q(match('name', 'A*', true)) },
      { input: 'match(name,A*,false)', ast: q(match('name', 'A*', false)) },
      { input: 'match(name,A*,yes)', error: RqlSyntaxError, position: 14, message: /true or false/ },
      { input: 'match(name)', error: RqlSyntaxError, position: 0 },
      { input: 'match(name,a,true,x)', error: RqlSyntaxError, position: 0 },
      // in
      { input: 'in(name,a,b)', ast: q(inList('name', 'a', 'b')) },
      { input: 'in(name,(a,b))', ast: q(inList('name', 'a', 'b')) },
      { input: 'in(name,(a))', ast: q(inList('name', 'a')) },
      { input: 'in(name,a,null)', ast: q(inList('name', 'a', kw('null'))) },
      { input: 'in(name)', error: RqlSyntaxError, position: 0 },
      { input: 'in(name,(a,b),c)', error: RqlSyntaxError, position: 8, message: /expects a value/ },
      // and / or / not as calls
      { input: 'and(eq(a,1),eq(b,2))', ast: q(and(eq('a', '1'), eq('b', '2'))) },
      { input: 'or(eq(a,1),eq(b,2),eq(c,3))', ast: q(or(eq('a', '1'), eq('b', '2'), eq('c', '3'))) },
      { input: 'not(eq(a,1))', ast: q(not(eq('a', '1'))) },
      { input: 'and(eq(a,1))', ast: q(eq('a', '1')) },
      { input: 'and()', error: RqlSyntaxError, position: 0 },
      { input: 'not(eq(a,1),eq(b,2))', error: RqlSyntaxError, position: 0 },
      { input: 'or(a,b)', error: RqlSyntaxError, position: 3, message: /takes terms/ },
      // & and | with precedence and parentheses
      { input: 'eq(a,1)&eq(b,2)', ast: q(and(eq('a', '1'), eq('b', '2'))) },
      { input: 'eq(a,1)|eq(b,2)', ast: q(or(eq('a', '1'), eq('b', '2'))) },
      { input: 'eq(a,1)|eq(b,2)&eq(c,3)', ast: q(or(eq('a', '1'), and(eq('b', '2'), eq('c', '3')))) },
      { input: 'eq(a,1)&eq(b,2)|eq(c,3)', ast: q(or(and(eq('a', '1'), eq('b', '2')), eq('c', '3'))) },
      { input: '(eq(a,1)|eq(b,2))&eq(c,3)', ast: q(and(or(eq('a', '1'), eq('b', '2')), eq('c', '3'))) },
      { input: 'eq(a,1)&(eq(b,2)|eq(c,3))', ast: q(and(eq('a', '1'), or(eq('b', '2'), eq('c', '3')))) },
      { input: 'and((a=1|b=2),c=3)', ast: q(and(or(eq('a', '1'), eq('b', '2')), eq('c', '3'))) },
      { input: 'or(a=1&b=2,c=3)', ast: q(or(and(eq('a', '1'), eq('b', '2')), eq('c', '3'))) },
      { input: 'not(a=1|b=2)', ast: q(not(or(eq('a', '1'), eq('b', '2')))) },
      {
        input: 'a=1&b=2|c=3',
        exact: true,
        ast: {
          sort: [],
          filter: {
            kind: 'or',
            position: 0,
            children: [
              {
                kind: 'and',
                position: 0,
                children: [
                  { kind: 'compare', op: 'eq', property: 'a', value: { text: '1', position: 2 }, position: 0 },
                  { kind: 'compare', op: 'eq', property: 'b', value: { text: '2', position: 6 }, position: 4 },
                ],
              },
              { kind: 'compare', op: 'eq', property: 'c', value: { text: '3', position: 10 }, position: 8 },
            ],
          },
        },
      },
      // p=value and p=op=value (FIQL)
      { input: 'name=foo', ast: q(eq('name', 'foo')) },
      { input: 'a=1&b=2', ast: q(and(eq('a', '1'), eq('b', '2'))) },
      { input: 'id=gt=5', ast: q(cmp('gt', 'id', '5')) },
      { input: 'name=ne=foo', ast: q(cmp('ne', 'name', 'foo')) },
      { input: 'name=match=ab*', ast: q(match('name', 'ab*')) },
      { input: 'name=in=a', ast: q(inList('name', 'a')) },
      { input: 'name=foo=x', error: UnknownOperatorError, position: 0 },
      // sort and limit
      { input: 'sort(name)', ast: q(undefined, { sort: [asc('name')] }) },
      { input: 'sort(-name,+xid,id)', ast: q(undefined, { sort: [desc('name'), asc('xid'), asc('id')] }) },
      { input: 'sort(%2Bname)', ast: q(undefined, { sort: [asc('name')] }) },
      { input: 'sort(%20name)', ast: q(undefined, { sort: [asc('name')] }) },
      { input: 'sort(a)&sort(-b)', ast: q(undefined, { sort: [asc('a'), desc('b')] }) },
      { input: 'limit(10)', ast: q(undefined, { limit: { count: 10, offset: 0 } }) },
      { input: 'limit(10,20)', ast: q(undefined, { limit: { count: 10, offset: 20 } }) },
      { input: 'limit(0)', ast: q(undefined, { limit: { count: 0, offset: 0 } }) },
      {
        input: 'eq(name,a)&sort(-id,name)&limit(5,10)',
        exact: true,
        ast: {
          filter: { kind: 'compare', op: 'eq', property: 'name', value: { text: 'a', position: 8 }, position: 0 },
          sort: [
            { property: 'id', descending: true, position: 16 },
            { property: 'name', descending: false, position: 20 },
          ],
          limit: { count: 5, offset: 10, position: 26 },
        },
      },
      { input: '', ast: q() },
      // typed values
      { input: 'eq(enabled,true)', ast: q(eq('enabled', kw('true'))) },
      { input: 'eq(enabled,false)', ast: q(eq('enabled', kw('false'))) },
      { input: 'eq(name,null)', ast: q(eq('name', kw('null'))) },
      { input: 'eq(name,TRUE)', ast: q(eq('name', 'TRUE')) },
      { input: 'eq(name,string:null)', ast: q(eq('name', typed('string', 'null'))) },
      { input: 'eq(id,number:5)', ast: q(eq('id', typed('number', '5'))) },
      { input: 'eq(ts,date:2024-01-01T00:00:00Z)', ast: q(eq('ts', typed('date', '2024-01-01T00:00:00Z'))) },
      { input: 'eq(enabled,boolean:true)', ast: q(eq('enabled', typed('boolean', 'true'))) },
      { input: 'eq(name,string%3Ax)', ast: q(eq('name', typed('string', 'x'))) },
      // percent-decoding
      { input: 'eq(name,a%20b)', ast: q(eq('name', 'a b')) },
      { input: 'eq(name,a%2Cb)', ast: q(eq('name', 'a,b')) },
      { input: 'eq(name,%28x%29)', ast: q(eq('name', '(x)')) },
      { input: 'eq(name,%C3%A4)', ast: q(eq('name', 'ä')) },
      { input: 'eq(name,%F0%9F%98%80)', ast: q(eq('name', '😀')) },
      { input: 'eq(name,a%26b%7Cc%3Dd)', ast: q(eq('name', 'a&b|c=d')) },
      { input: 'eq(name,100%25)', ast: q(eq('name', '100%')) },
      { input: 'eq(na%6De,x)', ast: q(eq('name', 'x')) },
      { input: 'eq(name,a+b)', ast: q(eq('name', 'a+b')) },
      { input: 'in(name,%28a%2Cb%29)', ast: q(inList('name', '(a,b)')) },
      // empty values
      { input: 'eq(name,)', ast: q(eq('name', '')) },
      { input: 'in(name,a,)', ast: q(inList('name', 'a', '')) },
      // malformed
      { input: 'eq(name,foo', error: RqlSyntaxError, position: 11 },
      { input: 'eq(name,foo))', error: RqlSyntaxError, position: 12 },
      { input: '(eq(name,foo)', error: RqlSyntaxError, position: 13 },
      { input: '()', error: RqlSyntaxError, position: 1 },
      { input: 'eq(name,foo)&', error: RqlSyntaxError, position: 13 },
      { input: '&eq(name,foo)', error: RqlSyntaxError, position: 0 },
      { input: 'eq(name,foo)|', error: RqlSyntaxError, position: 13 },
      { input: 'eq(a,1)&&eq(b,2)', error: RqlSyntaxError, position: 8 },
      { input: 'eq(name,foo),eq(name,bar)', error: RqlSyntaxError, position: 12 },
      { input: ',eq(name,foo)', error: RqlSyntaxError, position: 0 },
      { input: 'eq(name,foo,bar)', error: RqlSyntaxError, position: 0, message: /property and a value/ },
      { input: 'eq(,foo)', error: RqlSyntaxError, position: 3, message: /Empty property/ },
      { input: 'eq(name,a=b)', error: RqlSyntaxError, position: 8 },
      { input: 'name', error: RqlSyntaxError, position: 4 },
      { input: 'name=', error: RqlSyntaxError, position: 5 },
      { input: 'eq(name,%ZZ)', error: RqlSyntaxError, position: 8, message: /percent-encoding/ },
      { input: 'eq(name,abc%)', error: RqlSyntaxError, position: 8, message: /percent-encoding/ },
      { input: 'eq(name,%E4)', error: RqlSyntaxError, position: 8, message: /percent-encoding/ },
      { input: 'eq(name,%ED%A0%80)', error: RqlSyntaxError, position: 8, message: /percent-encoding/ },
      { input: 'eq(name,%00)', error: RqlSyntaxError, position: 8, message: /U\+0000/ },
      { input: 'eq(name,%ED%B0%80)', error: RqlSyntaxError, position: 8, message: /percent-encoding/ },
      { input: 'limit(-1)', error: RqlSyntaxError, position: 6, message: /non-negative integers/ },
      { input: 'limit(1.5)', error: RqlSyntaxError, position: 6 },
      { input: 'limit(1e3)', error: RqlSyntaxError, position: 6 },
      { input: 'limit(10,-5)', error: RqlSyntaxError, position: 9 },
      { input: 'limit(abc)', error: RqlSyntaxError, position: 6 },
      { input: 'limit()', error: RqlSyntaxError, position: 0 },
      { input: 'limit(1,2,3)', error: RqlSyntaxError, position: 0 },
      { input: 'limit(5)&limit(6)', error: RqlSyntaxError, position: 9, message: /twice/ },
      { input: 'sort()', error: RqlSyntaxError, position: 0 },
      { input: 'sort(-)', error: RqlSyntaxError, position: 5, message: /empty/ },
      { input: 'sort(eq(a,1))', error: RqlSyntaxError, position: 5 },
      { input: 'foo(a,b)', error: UnknownOperatorError, position: 0, message: /valid operators: eq, ne/ },
      { input: 'eq(name,a)&bar(x)', error: UnknownOperatorError, position: 11 },
      { input: 'eq(name,foo(bar))', error: UnknownOperatorError, position: 8 },
      // nesting: deep enough to be useful, bounded so that no input can overflow the stack
      { input: nested(MAX_DEPTH - 1), ast: q(eq('name', 'a')) },
      { input: nested(MAX_DEPTH), error: RqlSyntaxError, position: MAX_DEPTH, message: /Nesting/ },
      { input: nested(20_000), error: RqlSyntaxError, position: MAX_DEPTH, message: /Nesting/ },
      { input: nots(50), ast: q(notsAst(50)) },
      { input: nots(5_000), error: RqlSyntaxError, message: /Nesting/ },
    ];

    for (const c of cases) {
      const label = c.input.length > 60 ? `${c.input.slice(0, 40)}… (${c.input.length} chars)` : c.input || '(empty)';
      it(`${label} → ${c.error ? `${c.error.name}${c.position === undefined ? '' : ` at ${c.position}`}` : 'AST'}`, function () {
        if (c.error) {
          const err = caught(() => parseRql(c.input));
          assert.ok(err instanceof c.error, `expected ${c.error.name}, got ${String(err)}`);
          if (c.position !== undefined) assert.equal((err as RqlSyntaxError | UnknownOperatorError).position, c.position, String(err));
          if (c.message) assert.match((err as Error).message, c.message);
          return;
        }
        const ast = parseRql(c.input);
        assert.deepEqual(c.exact ? ast : withoutPositions(ast), c.ast);
      });
    }

    it('an unknown operator keeps its (decoded) name', function () {
      const err = caught(() => parseRql('f%6Fo(a,b)'));
      assert.ok(err instanceof UnknownOperatorError);
      assert.equal(err.operator, 'foo');
    });
  });

  // ===============================================================================================

  describe('2. check + SQL translation', function () {
    interface SqlCase {
      resource?: ResourceDef;
      query: string;
      where?: string;
      orderBy?: string;
      values?: unknown[];
      limit?: number;
      offset?: number;
      error?: ErrorClass;
      message?: RegExp;
    }
    const dp = dataPointResource;
    const ds = dataSourceResource;
    const ed = eventDetectorResource;
    const ESC = "escape '\\'";
    const DP_PROPS = /valid properties: id, xid, name, enabled, deviceName, dataSourceXid, dataType, settable, unit, tags\.<key>/;

    const cases: SqlCase[] = [
      // value typed by the property
      { query: 'eq(name,foo)', where: '(t.name = $1::text)', values: ['foo'], orderBy: 't.id', limit: DEFAULT_LIMIT, offset: 0 },
      { query: 'eq(name,123)', where: '(t.name = $1::text)', values: ['123'] },
      { query: 'eq(name,true)', where: '(t.name = $1::text)', values: ['true'] },
      { query: 'eq(name,)', where: '(t.name = $1::text)', values: [''] },
      { query: 'eq(id,5)', where: '(t.id = $1::bigint)', values: [5] },
      { query: 'eq(id,-12)', where: '(t.id = $1::bigint)', values: [-12] },
      { query: 'id=5', where: '(t.id = $1::bigint)', values: [5] },
      { query: 'eq(enabled,true)', where: '(t.enabled = $1::boolean)', values: [true] },
      { query: 'eq(settable,false)', where: '(t.settable = $1::boolean)', values: [false] },
      { query: 'eq(enabled,boolean:true)', where: '(t.enabled = $1::boolean)', values: [true] },
      { query: 'eq(dataType,numeric)', where: '(t.data_type = $1::text)', values: ['NUMERIC'] },
      { query: 'eq(dataSourceXid,DS_1)', where: '(s.xid = $1::text)', values: ['DS_1'] },
      { query: 'eq(deviceName,dev%20A)', where: '(t.device_name = $1::text)', values: ['dev A'] },
      // operators
      { query: 'ne(name,foo)', where: '(t.name is distinct from $1::text)', values: ['foo'] },
      { query: 'ne(id,5)', where: '(t.id is distinct from $1::bigint)', values: [5] },
      { query: 'ne(enabled,true)', where: '(t.enabled is distinct from $1::boolean)', values: [true] },
      { query: 'gt(id,5)', where: '(t.id > $1::bigint)', values: [5] },
      { query: 'lt(id,5)', where: '(t.id < $1::bigint)', values: [5] },
      { query: 'ge(id,5)', where: '(t.id >= $1::bigint)', values: [5] },
      { query: 'le(id,5)', where: '(t.id <= $1::bigint)', values: [5] },
      { query: 'gt(name,m)', where: '(t.name > $1::text)', values: ['m'] },
      { query: 'id=le=7', where: '(t.id <= $1::bigint)', values: [7] },
      // null
      { query: 'eq(name,null)', where: '(t.name is null)', values: [] },
      { query: 'ne(unit,null)', where: '(t.unit is not null)', values: [] },
      { query: 'eq(name,string:null)', where: '(t.name = $1::text)', values: ['null'] },
      // type prefixes
      { query: 'eq(id,string:5)', where: '(((t.id)::text collate "C") = $1::text)', values: ['5'] },
      { query: 'eq(id,number:5)', where: '(t.id = $1::bigint)', values: [5] },
      { query: 'gt(dataType,string:M)', where: '(((t.data_type)::text collate "C") > $1::text)', values: ['M'] },
      // in
      { query: 'in(name,a,b)', where: '(t.name = any($1::text[]))', values: [['a', 'b']] },
      { query: 'in(id,(1,2,3))', where: '(t.id = any($1::bigint[]))', values: [[1, 2, 3]] },
      { query: 'in(name,a,null)', where: '(t.name = any($1::text[]) or t.name is null)', values: [['a']] },
      { query: 'in(name,null)', where: '(t.name is null)', values: [] },
      { query: 'in(enabled,true)', where: '(t.enabled = any($1::boolean[]))', values: [[true]] },
      { query: 'in(dataType,numeric,BINARY)', where: '(t.data_type = any($1::text[]))', values: [['NUMERIC', 'BINARY']] },
      // a string: value makes the whole list textual (regression: was bigint[] holding 'abc' → database error)
      { query: 'in(id,5,string:abc)', where: '(((t.id)::text collate "C") = any($1::text[]))', values: [['5', 'abc']] },
      { query: 'in(id,string:5,6)', where: '(((t.id)::text collate "C") = any($1::text[]))', values: [['5', '6']] },
      // tags.<key>: the key is a bound value
      { query: 'eq(tags.site,north)', where: '(((t.tags ->> $1) collate "C") = $2::text)', values: ['site', 'north'] },
      { query: 'eq(tags.a.b,1)', where: '(((t.tags ->> $1) collate "C") = $2::text)', values: ['a.b', '1'] },
      { query: 'eq(tags.site,null)', where: '(((t.tags ->> $1) collate "C") is null)', values: ['site'] },
      { query: 'ne(tags.site,x)', where: '(((t.tags ->> $1) collate "C") is distinct from $2::text)', values: ['site', 'x'] },
      { query: 'in(tags.site,a,b)', where: '(((t.tags ->> $1) collate "C") = any($2::text[]))', values: ['site', ['a', 'b']] },
      // match
      { query: 'match(name,ab*c?)', where: `(t.name ilike $1::text ${ESC})`, values: ['ab%c_'] },
      { query: 'match(name,50%25_*)', where: `(t.name ilike $1::text ${ESC})`, values: ['50\\%\\_%'] },
      { query: 'match(name,a%5Cb)', where: `(t.name ilike $1::text ${ESC})`, values: ['a\\\\b'] },
      { query: 'match(name,Ab*,true)', where: `(t.name like $1::text ${ESC})`, values: ['Ab%'] },
      { query: 'like(name,x*)', where: `(t.name ilike $1::text ${ESC})`, values: ['x%'] },
      { query: 'match(name,*k%C3%BCche*)', where: `(t.name collate "default" ilike $1::text ${ESC})`, values: ['%küche%'] },
      { query: 'match(name,*k%C3%BCche*,true)', where: `(t.name like $1::text ${ESC})`, values: ['%küche%'] },
      { query: 'match(dataType,NUM*)', where: `(((t.data_type)::text collate "C") ilike $1::text ${ESC})`, values: ['NUM%'] },
      { query: 'match(tags.site,n*)', where: `(((t.tags ->> $1) collate "C") ilike $2::text ${ESC})`, values: ['site', 'n%'] },
      // logic
      { query: 'not(eq(name,a))', where: '(not coalesce((t.name = $1::text), false))', values: ['a'] },
      { query: 'eq(name,a)&eq(id,1)', where: '((t.name = $1::text) and (t.id = $2::bigint))', values: ['a', 1] },
      {
        query: 'eq(name,a)|eq(name,b)&eq(id,1)',
        where: '((t.name = $1::text) or ((t.name = $2::text) and (t.id = $3::bigint)))',
        values: ['a', 'b', 1],
      },
      // sort and limit
      { query: 'sort(-name)', where: 'true', orderBy: 't.name desc nulls last, t.id', values: [] },
      { query: 'sort(name,-id)', orderBy: 't.name asc nulls first, t.id desc nulls last, t.id', values: [] },
      { query: 'sort(dataType)', orderBy: 'array_position($1::text[], t.data_type) asc nulls first, t.id', values: [[...DATA_TYPES]] },
      {
        query: 'eq(name,a)&sort(tags.site)',
        where: '(t.name = $1::text)',
        orderBy: '((t.tags ->> $2) collate "C") asc nulls first, t.id',
        values: ['a', 'site'],
      },
      { query: '', where: 'true', orderBy: 't.id', values: [], limit: DEFAULT_LIMIT, offset: 0 },
      { query: 'limit(10)', limit: 10, offset: 0 },
      { query: 'limit(10,20)', limit: 10, offset: 20 },
      { query: `limit(${MAX_LIMIT})`, limit: MAX_LIMIT },
      // errors
      { query: `limit(${MAX_LIMIT + 1})`, error: RqlLimitError, message: /at most 100000/ },
      { query: 'eq(foo,1)', error: RqlCheckError, message: DP_PROPS },
      { query: 'sort(foo)', error: RqlCheckError, message: DP_PROPS },
      { query: 'eq(t.name,1)', error: RqlCheckError, message: DP_PROPS },
      { query: 'eq(tags.,x)', error: RqlCheckError },
      { query: 'eq(constructor,x)', error: RqlCheckError },
      { query: 'eq(__proto__,x)', error: RqlCheckError },
      { query: 'eq(id,abc)', error: RqlCheckError, message: /not an integer/ },
      { query: 'eq(id,1.5)', error: RqlCheckError },
      { query: 'eq(id,99999999999999999999)', error: RqlCheckError },
      { query: 'in(id,1,abc)', error: RqlCheckError },
      { query: 'eq(enabled,yes)', error: RqlCheckError, message: /true or false/ },
      { query: 'gt(enabled,true)', error: RqlCheckError },
      { query: 'gt(name,null)', error: RqlCheckError, message: /null/ },
      { query: 'eq(dataType,FOO)', error: RqlCheckError, message: /NUMERIC, BINARY, MULTISTATE, ALPHANUMERIC/ },
      { query: 'match(id,1*)', error: RqlCheckError },
      { query: 'match(enabled,t*)', error: RqlCheckError },
      { query: 'eq(name,number:5)', error: RqlCheckError },
      { query: 'eq(id,date:2024-01-01T00:00:00Z)', error: RqlCheckError },
      // event detectors: alarmLevel is an ordered enum
      {
        resource: ed,
        query: 'gt(alarmLevel,WARNING)',
        where: '(array_position($1::text[], t.alarm_level) > $2::int)',
        values: [[...ALARM_LEVELS], 4],
      },
      {
        resource: ed,
        query: 'le(alarmLevel,information)',
        where: '(array_position($1::text[], t.alarm_level) <= $2::int)',
        values: [[...ALARM_LEVELS], 2],
      },
      { resource: ed, query: 'eq(alarmLevel,urgent)', where: '(t.alarm_level = $1::text)', values: ['URGENT'] },
      { resource: ed, query: 'ne(alarmLevel,NONE)', where: '(t.alarm_level is distinct from $1::text)', values: ['NONE'] },
      { resource: ed, query: 'ge(alarmLevel,string:W)', where: '(((t.alarm_level)::text collate "C") >= $1::text)', values: ['W'] },
      { resource: ed, query: 'in(alarmLevel,URGENT,critical)', where: '(t.alarm_level = any($1::text[]))', values: [['URGENT', 'CRITICAL']] },
      {
        resource: ed,
        query: 'sort(-alarmLevel)',
        orderBy: 'array_position($1::text[], t.alarm_level) desc nulls last, t.id',
        values: [[...ALARM_LEVELS]],
      },
      { resource: ed, query: 'eq(dataPointXid,DP_1)', where: '(p.xid = $1::text)', values: ['DP_1'] },
      { resource: ed, query: 'gt(alarmLevel,SEVERE)', error: RqlCheckError, message: /LIFE_SAFETY/ },
      { resource: ed, query: 'eq(tags.site,x)', error: RqlCheckError, message: /valid properties: id, xid, name, dataPointXid, detectorType, alarmLevel at/ },
      // data sources
      { resource: ds, query: 'eq(modelType,virtual)', where: '(t.model_type = $1::text)', values: ['VIRTUAL'] },
      { resource: ds, query: 'gt(state,RUNNING)', where: '(array_position($1::text[], t.state) > $2::int)', values: [[...DATA_SOURCE_STATES], 1] },
      {
        resource: ds,
        query: 'eq(enabled,false)&sort(-name)&limit(5,5)',
        where: '(t.enabled = $1::boolean)',
        orderBy: 't.name desc nulls last, t.id',
        values: [false],
        limit: 5,
        offset: 5,
      },
      { resource: ds, query: 'eq(unit,x)', error: RqlCheckError, message: /valid properties: id, xid, name, enabled, modelType, state, runningOn at/ },
    ];

    for (const c of cases) {
      const resource = c.resource ?? dp;
      it(`${resource.name}: ${c.query || '(empty)'} → ${c.error ? c.error.name : (c.where ?? c.orderBy ?? `limit ${c.limit}`)}`, function () {
        const run = () => toSql(resource, checkRql(resource, parseRql(c.query)));
        if (c.error) {
          const err = caught(run);
          assert.ok(err instanceof c.error, `expected ${c.error.name}, got ${String(err)}`);
          if (c.message) assert.match((err as Error).message, c.message);
          return;
        }
        const out = run();
        if (c.where !== undefined) assert.equal(out.where, c.where);
        if (c.orderBy !== undefined) assert.equal(out.orderBy, c.orderBy);
        if (c.values !== undefined) assert.deepEqual(out.values, c.values);
        if (c.limit !== undefined) assert.equal(out.limit, c.limit);
        if (c.offset !== undefined) assert.equal(out.offset, c.offset);
        assertTrustedSql(out, c.query);
      });
    }

    it('appends RQL values after the values a caller already bound', function () {
      const out = compileRql(dp, 'eq(name,a)&sort(tags.k)', new SqlParams(['role-a', 'role-b']));
      assert.equal(out.where, '(t.name = $3::text)');
      assert.equal(out.orderBy, '((t.tags ->> $4) collate "C") asc nulls first, t.id');
      assert.deepEqual(out.values, ['role-a', 'role-b', 'a', 'k']);
    });

    it('likePattern: only * and ? are wildcards; %, _ and \\ are escaped', function () {
      assert.equal(likePattern('a*b?c'), 'a%b_c');
      assert.equal(likePattern('%_\\'), '\\%\\_\\\\');
      assert.equal(likePattern('ä😀*'), 'ä😀%');
    });

    describe('compileRql maps errors to the contract', function () {
      const errorCases: { query: string; resource?: ResourceDef; status: number; code: number; name: string; message?: RegExp }[] = [
        { query: 'eq(name,foo', status: 400, code: 4001, name: 'RQL_PARSE_FAILURE', message: /at position 11/ },
        { query: 'eq(name,%ZZ)', status: 400, code: 4001, name: 'RQL_PARSE_FAILURE' },
        { query: 'eq(nope,1)', status: 400, code: 4013, name: 'RQL_VISIT_ERROR', message: DP_PROPS },
        { query: 'foo(a,b)', status: 400, code: 4013, name: 'RQL_VISIT_ERROR', message: /Unknown operator "foo"/ },
        { query: 'eq(id,abc)', status: 400, code: 4013, name: 'RQL_VISIT_ERROR' },
        { query: 'gt(enabled,true)', status: 400, code: 4013, name: 'RQL_VISIT_ERROR' },
        { query: 'limit(100001)', status: 400, code: 4005, name: 'BAD_REQUEST' },
        { query: 'eq(nope,1)', resource: ed, status: 400, code: 4013, name: 'RQL_VISIT_ERROR', message: /alarmLevel/ },
      ];
      for (const c of errorCases) {
        it(`${c.query} → ${c.status}/${c.code}`, function () {
          const err = caught(() => compileRql(c.resource ?? dp, c.query));
          assert.ok(err instanceof DomainError, String(err));
          assert.equal(httpStatus(err), c.status);
          assert.equal(err.serviceStatusCode, c.code);
          assert.equal(err.statusName, c.name);
          if (c.message) assert.match(err.message, c.message);
        });
      }
    });
  });

  // ===============================================================================================

  describe('3. injection', function () {
    interface InjectionCase {
      input: string;
      /** Expected outcome on data points. */
      outcome: 'accepted' | 'rejected';
      /** Text that must reach the query only as a bound value (checked when accepted). */
      hostile?: string[];
    }
    const cases: InjectionCase[] = [
      { input: "eq(name,'; drop table users; --)", outcome: 'accepted', hostile: ["'; drop table users; --"] },
      { input: 'eq(name%3B%20drop,1)', outcome: 'rejected' },
      { input: 'sort(name;drop)', outcome: 'rejected' },
      { input: "eq(tags.x'||pg_sleep(1)||',1)", outcome: 'rejected' },
      { input: `eq(tags.${enc("x'||pg_sleep(1)||'")},1)`, outcome: 'accepted', hostile: ["x'||pg_sleep(1)||'"] },
      { input: `eq(tags.${enc("site') or true --")},x)`, outcome: 'accepted', hostile: ["site') or true --"] },
      { input: `sort(tags.${enc("';drop table x;--")})`, outcome: 'accepted', hostile: ["';drop table x;--"] },
      { input: `eq(name,${enc("' OR 1=1 --")})`, outcome: 'accepted', hostile: ["' OR 1=1 --"] },
      { input: `eq(name,${enc("a'b\\c\"d")})`, outcome: 'accepted', hostile: ["a'b\\c\"d"] },
      { input: 'eq(name,$1)', outcome: 'accepted', hostile: [] },
      { input: `eq(name,${enc('$$;drop table x;$$')})`, outcome: 'accepted', hostile: ['$$;drop table x;$$'] },
      { input: `eq(name,${enc("E'\\x27 or 1=1")})`, outcome: 'accepted', hostile: ["E'\\x27 or 1=1"] },
      { input: `eq(name,${enc('\u202e\u02bc; drop')})`, outcome: 'accepted', hostile: ['\u202e\u02bc; drop'] },
      { input: `eq(name,${enc('\uff07 or \uff071\uff07=\uff071')})`, outcome: 'accepted', hostile: ['\uff07 or \uff071\uff07=\uff071'] },
      { input: `eq(name,${enc('*/ select 1 /*')})`, outcome: 'accepted', hostile: ['*/ select 1 /*'] },
      { input: `eq(name,${enc('\ndrop\r')})`, outcome: 'accepted', hostile: ['\ndrop\r'] },
      { input: `eq(name,string:${enc("'||chr(65)||'")})`, outcome: 'accepted', hostile: ["'||chr(65)||'"] },
      { input: `eq(id,string:${enc("1'--")})`, outcome: 'accepted', hostile: ["1'--"] },
      { input: `in(name,${["'", '"', '\\', '`', "');--"].map(enc).join(',')})`, outcome: 'accepted', hostile: ["');--"] },
      { input: `match(name,${enc("%' or ''='*")},true)`, outcome: 'accepted', hostile: ["' or ''='"] },
      { input: 'eq(id,1;drop table x)', outcome: 'rejected' },
      { input: 'eq(id,1 or 1=1)', outcome: 'rejected' },
      { input: 'eq(id,1%20or%201%3D1)', outcome: 'rejected' },
      { input: 'eq(enabled,true)or(1=1)', outcome: 'rejected' },
      { input: 'sort(-name%20desc%3B%20drop%20table%20x)', outcome: 'rejected' },
      { input: 'sort(t.name)', outcome: 'rejected' },
      { input: 'eq(t.tags,x)', outcome: 'rejected' },
      { input: 'eq((select%201),x)', outcome: 'rejected' },
      { input: "eq(dataType,NUMERIC'--)", outcome: 'rejected' },
      { input: 'limit(1;drop)', outcome: 'rejected' },
      { input: 'limit(10)%3Bdrop', outcome: 'rejected' },
      { input: 'eq(name,%00)', outcome: 'rejected' },
      { input: 'eq(pg_sleep(10),1)', outcome: 'rejected' },
      { input: 'sort(-id)&limit(10,0);select', outcome: 'rejected' },
    ];

    for (const c of cases) {
      it(`${c.input} → ${c.outcome}`, function () {
        for (const resource of RESOURCES) {
          const out = compileOr400(resource, c.input);
          if (resource !== dataPointResource) continue;
          assert.equal(out instanceof DomainError ? 'rejected' : 'accepted', c.outcome, out instanceof DomainError ? out.message : out.where);
          if (out instanceof DomainError) continue;
          const bound = flatten(out.values).filter((v): v is string => typeof v === 'string');
          for (const h of c.hostile ?? []) {
            assert.ok(!out.where.includes(h) && !out.orderBy.includes(h), `hostile text reached the SQL: ${out.where} / ${out.orderBy}`);
            assert.ok(
              bound.some((v) => v.includes(h) || v.includes(likePattern(h))),
              `hostile text not bound: ${JSON.stringify(out.values)}`,
            );
          }
        }
      });
    }

    it('the residue checker itself flags text that is not trusted', function () {
      assert.deepEqual(residue('(t.name = $1::text)'), []);
      assert.deepEqual(residue("(t.name = 'x'); drop table users"), ["'x'", ';', 'drop', 'table', 'users']);
      assert.deepEqual(residue('(t.nam = $1::text)'), ['t.nam']);
    });
  });

  // ===============================================================================================

  describe('4. properties (fast-check)', function () {
    this.timeout(20_000);

    it('(a) arbitrary strings: compiles or a 400 DomainError, never another error', function () {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
          compileOr400(dataPointResource, s);
        }),
        { numRuns: 2000 },
      );
      fc.assert(
        fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (s) => {
          compileOr400(dataPointResource, s);
        }),
        { numRuns: 1000 },
      );
    });

    const PIECES = [
      'eq', 'ne', 'gt', 'lt', 'ge', 'le', 'match', 'like', 'in', 'and', 'or', 'not', 'sort', 'limit', 'foo',
      'name', 'id', 'enabled', 'dataType', 'tags.site', 'tags.', 'xid', 'constructor',
      '(', '(', ')', ')', ',', ',', '&', '|', '=', '=', '%', '%2', '%20', '%28', '%29', '%2C', '%00', '%C3%A4', '%E4', '%ZZ',
      '-', '+', '0', '1', '5', '-1', '1.5', '100001', '99999999999999999', 'true', 'false', 'null', 'TRUE', 'numeric', 'WARNING',
      'string:', 'number:', 'date:', 'boolean:', '*', '?', 'a', "'", ';', '\\', '$1', ' ', '2024-01-01T00:00:00Z',
    ];

    it('(b) strings from an RQL-ish alphabet: compiles or a 400 DomainError (every resource)', function () {
      const rqlish = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((a) => a.join(''));
      fc.assert(
        fc.property(rqlish, fc.constantFrom(...RESOURCES), (s, resource) => {
          compileOr400(resource, s);
        }),
        { numRuns: 4000 },
      );
    });

    it('(b) call-shaped queries with random names and arguments: compiles or a 400 DomainError', function () {
      const word = fc.constantFrom(...PIECES.filter((p) => !'(),&|='.includes(p)), '');
      /** Mostly real names, sometimes any word, so that most queries get past the whitelist. */
      const mostly = (...names: string[]) => fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: word });
      const anyOp = mostly('eq', 'ne', 'gt', 'lt', 'ge', 'le', 'match', 'like', 'in');
      const anyProp = mostly('name', 'id', 'enabled', 'dataType', 'alarmLevel', 'state', 'tags.site');
      const plain = mostly('a', '1', '-5', 'true', 'false', 'null', 'numeric', 'WARNING', 'running', 'x*?', '%C3%A4', '%2C', '');
      const anyValue = fc.tuple(fc.constantFrom('', '', '', 'string:', 'number:', 'boolean:', 'date:'), plain).map(([a, b]) => a + b);
      const { term } = fc.letrec<{ term: string }>((tie) => ({
        term: fc.oneof(
          { maxDepth: 4, depthSize: 'small' },
          fc.tuple(anyOp, anyProp, anyValue).map(([o, p, v]) => `${o}(${p},${v})`),
          fc.tuple(anyProp, anyValue).map(([p, v]) => `${p}=${v}`),
          fc.tuple(anyProp, anyOp, anyValue).map(([p, o, v]) => `${p}=${o}=${v}`),
          fc.tuple(mostly('and', 'or', 'not', 'sort', 'limit', 'in', 'match'), fc.array(fc.oneof(anyProp, anyValue, tie('term')), { maxLength: 4 })).map(
            ([o, args]) => `${o}(${args.join(',')})`,
          ),
          fc.tuple(anyProp, fc.array(anyValue, { minLength: 1, maxLength: 3 })).map(([p, vs]) => `in(${p},(${vs.join(',')}))`),
          fc.tuple(tie('term'), fc.constantFrom('&', '|'), tie('term')).map(([a, op, b]) => `(${a}${op}${b})`),
        ),
      }));
      const query = fc.array(term, { minLength: 1, maxLength: 3 }).chain((ts) => fc.constantFrom(ts.join('&'), ts.join('|')));
      fc.assert(
        fc.property(query, fc.constantFrom(...RESOURCES), (s, resource) => {
          compileOr400(resource, s);
        }),
        { numRuns: 4000 },
      );
    });

    // (c) generated valid queries over data points: each carries its RQL text, the same query with
    // every string replaced by a neutral one (its SQL must be identical: values never shape the
    // SQL text), and the values it must bind, in order.
    interface Gen {
      rql: string;
      skel: string;
      values: unknown[];
    }
    const SPECIAL = /^(true|false|null)$|^(string|number|date|boolean):/;
    const text = fc.string({ unit: 'grapheme', maxLength: 16 }).filter((s) => !s.includes('\u0000'));
    /** A value as written: string: when the bare text would be a keyword or look like a prefix. */
    const written = (s: string, prefix: boolean) => (prefix || SPECIAL.test(s) ? 'string:' : '') + enc(s);
    const OPS = ['eq', 'ne', 'gt', 'lt', 'ge', 'le'] as const;
    const ORDERED = new Set(['gt', 'lt', 'ge', 'le']);
    const STRING_PROPS = ['name', 'xid', 'deviceName', 'dataSourceXid', 'unit'] as const;

    interface Prop {
      rql: string;
      skel: string;
      keys: string[];
    }
    const prop: fc.Arbitrary<Prop> = fc.oneof(
      fc.constantFrom(...STRING_PROPS).map((p) => ({ rql: p, skel: p, keys: [] as string[] })),
      text.filter((k) => k !== '').map((k) => ({ rql: `tags.${enc(k)}`, skel: 'tags.k', keys: [k] })),
    );
    /** eq(p,v), p=v or p=op=v. */
    const form = fc.constantFrom('call', 'short', 'fiql');
    const render = (f: string, op: string, p: string, v: string) =>
      f === 'short' && op === 'eq' && v !== '' ? `${p}=${v}` : f === 'fiql' && v !== '' ? `${p}=${op}=${v}` : `${op}(${p},${v})`;

    const stringCompare = fc
      .record({ p: prop, op: fc.constantFrom(...OPS), s: text, prefix: fc.boolean(), f: form })
      .map(({ p, op, s, prefix, f }): Gen => ({
        rql: render(f, op, p.rql, written(s, prefix)),
        skel: render(f, op, p.skel, written('x', prefix)),
        values: [...p.keys, s],
      }));
    const nullCompare = fc.record({ p: prop, op: fc.constantFrom('eq', 'ne') }).map(({ p, op }): Gen => ({
      rql: `${op}(${p.rql},null)`,
      skel: `${op}(${p.skel},null)`,
      values: p.keys,
    }));
    const inTerm = fc
      .record({ p: prop, vs: fc.array(fc.tuple(text, fc.boolean()), { minLength: 1, maxLength: 4 }), withNull: fc.boolean() })
      .map(({ p, vs, withNull }): Gen => {
        const list = (f: (s: string, prefix: boolean) => string) => [...vs.map(([s, pre]) => f(s, pre)), ...(withNull ? ['null'] : [])].join(',');
        return {
          rql: `in(${p.rql},${list(written)})`,
          skel: `in(${p.skel},${list((_, pre) => written('x', pre))})`,
          values: [...p.keys, vs.map(([s]) => s)],
        };
      });
    const matchTerm = fc
      .record({ p: prop, s: text, op: fc.constantFrom('match', 'like'), flag: fc.constantFrom('', ',true', ',false') })
      .map(({ p, s, op, flag }): Gen => ({
        rql: `${op}(${p.rql},${written(s, false)}${flag})`,
        skel: `${op}(${p.skel},x${flag})`,
        values: [...p.keys, likePattern(s)],
      }));
    const integerCompare = fc
      .record({ op: fc.constantFrom(...OPS), n: fc.integer({ min: -1e12, max: 1e12 }), f: form })
      .map(({ op, n, f }): Gen => ({ rql: render(f, op, 'id', String(n)), skel: render(f, op, 'id', '0'), values: [n] }));
    const booleanCompare = fc
      .record({ p: fc.constantFrom('enabled', 'settable'), op: fc.constantFrom('eq', 'ne'), b: fc.boolean(), f: form })
      .map(({ p, op, b, f }): Gen => ({ rql: render(f, op, p, String(b)), skel: render(f, op, p, String(b)), values: [b] }));
    const enumCompare = fc
      .record({ op: fc.constantFrom(...OPS), i: fc.nat({ max: DATA_TYPES.length - 1 }), lower: fc.boolean(), f: form })
      .map(({ op, i, lower, f }): Gen => {
        const v = lower ? DATA_TYPES[i]!.toLowerCase() : DATA_TYPES[i]!;
        const r = render(f, op, 'dataType', v);
        return { rql: r, skel: r, values: ORDERED.has(op) ? [[...DATA_TYPES], i + 1] : [DATA_TYPES[i]] };
      });

    const join = (parts: Gen[], f: (xs: string[]) => string): Gen => ({
      rql: f(parts.map((g) => g.rql)),
      skel: f(parts.map((g) => g.skel)),
      values: parts.flatMap((g) => g.values),
    });
    const { node } = fc.letrec<{ node: Gen }>((tie) => ({
      node: fc.oneof(
        { maxDepth: 4, depthSize: 'small', withCrossShrink: true },
        stringCompare,
        nullCompare,
        inTerm,
        matchTerm,
        integerCompare,
        booleanCompare,
        enumCompare,
        fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((cs) => join(cs, (xs) => `and(${xs.join(',')})`)),
        fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((cs) => join(cs, (xs) => `or(${xs.join(',')})`)),
        tie('node').map((c) => join([c], ([x]) => `not(${x})`)),
        fc.tuple(tie('node'), tie('node')).map(([a, b]) => join([a, b], ([x, y]) => `(${x}&${y})`)),
        fc.tuple(tie('node'), tie('node')).map(([a, b]) => join([a, b], ([x, y]) => `(${x}|${y})`)),
      ),
    }));
    const sortKey = fc.oneof(
      prop.map((p): Gen => ({ rql: p.rql, skel: p.skel, values: p.keys })),
      fc.constantFrom('id', 'enabled', 'name').map((p): Gen => ({ rql: p, skel: p, values: [] })),
      fc.constant<Gen>({ rql: 'dataType', skel: 'dataType', values: [[...DATA_TYPES]] }),
    );
    const sort = fc
      .array(fc.tuple(fc.constantFrom('', '-', '+'), sortKey), { minLength: 1, maxLength: 3 })
      .map((keys) => join(keys.map(([dir, k]) => ({ ...k, rql: dir + k.rql, skel: dir + k.skel })), (xs) => `sort(${xs.join(',')})`));
    const query = fc.record({
      filter: node,
      sort: fc.option(sort, { nil: undefined }),
      sortFirst: fc.boolean(),
      limit: fc.option(fc.tuple(fc.nat({ max: MAX_LIMIT }), fc.nat({ max: 1e9 })), { nil: undefined }),
    });

    it('(c) generated valid queries: compile, bind every value, and values never shape the SQL text', function () {
      fc.assert(
        fc.property(query, ({ filter, sort, sortFirst, limit }) => {
          const assemble = (pick: (g: Gen) => string) => {
            const parts = [pick(filter)];
            if (sort) {
              if (sortFirst) parts.unshift(pick(sort));
              else parts.push(pick(sort));
            }
            if (limit) parts.push(`limit(${limit[0]},${limit[1]})`);
            return parts.join('&');
          };
          const out = compileRql(dataPointResource, assemble((g) => g.rql));
          const skel = compileRql(dataPointResource, assemble((g) => g.skel));
          assert.deepEqual(out.values, [...filter.values, ...(sort?.values ?? [])]);
          // The one way a value may choose the SQL: a non-ASCII match pattern compares under the
          // database's collation (a fixed wrapper, never the value's text).
          const unwrapped = out.where.replaceAll(' collate "default"', '');
          assert.equal(unwrapped, skel.where);
          assert.equal(out.orderBy, skel.orderBy);
          assertTrustedSql(out, 'generated');
          for (const v of flatten(out.values)) {
            if (typeof v === 'string' && v !== '') {
              assert.ok(!(out.where + out.orderBy).includes(v) || (skel.where + skel.orderBy).includes(v), `value ${JSON.stringify(v)} in SQL text`);
            }
          }
          assert.equal(out.limit, limit ? limit[0] : DEFAULT_LIMIT);
          assert.equal(out.offset, limit ? limit[1] : 0);
        }),
        { numRuns: 3000 },
      );
    });
  });
});
