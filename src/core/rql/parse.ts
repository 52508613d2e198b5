// RQL, step 1 of 3: the raw query string → an AST. No knowledge of resources here.
//
// Grammar (RQL as used by Mango clients; values percent-encoded, operators literal):
//   query   := or?
//   or      := and ('|' and)*
//   and     := term ('&' term)*
//   term    := '(' or ')' | name '(' args? ')' | name '=' value | name '=' op '=' value
//   args    := arg (',' arg)*
//   arg     := term-call | '(' value (',' value)* ')' | value
// Positions in errors are offsets into the raw (still percent-encoded) string.

import { textProblem } from '../text.js';

export class RqlSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
    this.name = 'RqlSyntaxError';
  }
}

export type ValueType = 'string' | 'number' | 'date' | 'boolean';

/** A literal as written: the decoded text, and the type a prefix (string:, number:...) forced. */
export interface RqlValue {
  text: string;
  forced?: ValueType;
  /** true/false/null written bare, without a prefix. */
  keyword?: 'true' | 'false' | 'null';
  position: number;
}

export const COMPARISONS = ['eq', 'ne', 'gt', 'lt', 'ge', 'le'] as const;
export type ComparisonOp = (typeof COMPARISONS)[number];

export type RqlNode =
  | { kind: 'and' | 'or'; children: RqlNode[]; position: number }
  | { kind: 'not'; child: RqlNode; position: number }
  | { kind: 'compare'; op: ComparisonOp; property: string; value: RqlValue; position: number }
  | { kind: 'match'; property: string; pattern: RqlValue; caseSensitive: boolean; position: number }
  | { kind: 'in'; property: string; values: RqlValue[]; position: number };

export interface SortKey {
  property: string;
  descending: boolean;
  position: number;
}

export interface RqlQuery {
  filter?: RqlNode;
  sort: SortKey[];
  limit?: { count: number; offset: number; position: number };
}

/** Operators this parser knows; an unknown name is reported by the checker with the valid ones. */
export const OPERATORS = ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'match', 'like', 'in', 'and', 'or', 'not', 'sort', 'limit'] as const;

// ---- tokens ----------------------------------------------------------------------------------

type TokenKind = '(' | ')' | ',' | '&' | '|' | '=' | 'word' | 'end';

interface Token {
  kind: TokenKind;
  /** Raw text for words (still percent-encoded). */
  raw: string;
  position: number;
}

const PUNCTUATION = new Set(['(', ')', ',', '&', '|', '=']);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (PUNCTUATION.has(c)) {
      tokens.push({ kind: c as TokenKind, raw: c, position: i });
      i++;
      continue;
    }
    const start = i;
    while (i < input.length && !PUNCTUATION.has(input[i]!)) i++;
    tokens.push({ kind: 'word', raw: input.slice(start, i), position: start });
  }
  tokens.push({ kind: 'end', raw: '', position: input.length });
  return tokens;
}

function decode(token: Token): string {
  let text: string;
  try {
    text = decodeURIComponent(token.raw);
  } catch {
    throw new RqlSyntaxError(`Invalid percent-encoding in "${token.raw}"`, token.position);
  }
  // The one rule for client text (core/text.ts): the stores cannot hold it; refused here, with a position.
  const problem = textProblem(text);
  if (problem !== undefined) throw new RqlSyntaxError(`"${token.raw}" ${problem}`, token.position);
  return text;
}

const PREFIXES: Record<string, ValueType> = { 'string:': 'string', 'number:': 'number', 'date:': 'date', 'boolean:': 'boolean' };

function toValue(token: Token): RqlValue {
  const text = decode(token);
  for (const [prefix, type] of Object.entries(PREFIXES)) {
    if (text.startsWith(prefix)) return { text: text.slice(prefix.length), forced: type, position: token.position };
  }
  if (text === 'true' || text === 'false' || text === 'null') return { text, keyword: text, position: token.position };
  return { text, position: token.position };
}

// ---- generic call tree, then typed nodes -------------------------------------------------------

type Arg =
  | { kind: 'call'; name: string; args: Arg[]; position: number }
  | { kind: 'group'; items: Arg[]; position: number }
  | { kind: 'value'; token: Token }
  | { kind: 'expr'; node: RqlNode; position: number };

/** Deepest nesting of groups and calls; deeper input would overflow the stack (a 500, not a 400). */
export const MAX_DEPTH = 100;

class Parser {
  private pos = 0;
  private depth = 0;
  private readonly query: RqlQuery = { sort: [] };

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.pos]!;
  }

  private next(): Token {
    return this.tokens[this.pos++]!;
  }

  private expect(kind: TokenKind): Token {
    const t = this.next();
    if (t.kind !== kind) throw new RqlSyntaxError(`Expected "${kind === 'end' ? 'end of query' : kind}" but found ${describe(t)}`, t.position);
    return t;
  }

  parse(): RqlQuery {
    if (this.peek().kind === 'end') return this.query;
    const filter = this.parseOr();
    this.expect('end');
    if (filter) this.query.filter = filter;
    return this.query;
  }

  /** Returns undefined when every term was a directive (sort, limit). */
  private parseOr(): RqlNode | undefined {
    const position = this.peek().position;
    const parts: RqlNode[] = [];
    for (;;) {
      const n = this.parseAnd();
      if (n) parts.push(n);
      if (this.peek().kind !== '|') break;
      this.next();
    }
    if (parts.length === 0) return undefined;
    return parts.length === 1 ? parts[0] : { kind: 'or', children: parts, position };
  }

  private parseAnd(): RqlNode | undefined {
    const position = this.peek().position;
    if (++this.depth > MAX_DEPTH) throw new RqlSyntaxError(`Nesting deeper than ${MAX_DEPTH} levels`, position);
    try {
      return this.parseAndTerms(position);
    } finally {
      this.depth--;
    }
  }

  private parseAndTerms(position: number): RqlNode | undefined {
    const parts: RqlNode[] = [];
    for (;;) {
      const n = this.parseTerm();
      if (n) parts.push(n);
      if (this.peek().kind !== '&') break;
      this.next();
    }
    if (parts.length === 0) return undefined;
    return parts.length === 1 ? parts[0] : { kind: 'and', children: parts, position };
  }

  private parseTerm(): RqlNode | undefined {
    const t = this.peek();
    if (t.kind === '(') {
      this.next();
      const inner = this.parseOr();
      this.expect(')');
      if (!inner) throw new RqlSyntaxError('Empty group', t.position);
      return inner;
    }
    if (t.kind !== 'word') throw new RqlSyntaxError(`Expected a term but found ${describe(t)}`, t.position);
    this.next();
    const after = this.peek();
    if (after.kind === '(') {
      this.next();
      const args = this.parseArgs();
      this.expect(')');
      return this.callToNode(decode(t), args, t.position);
    }
    if (after.kind === '=') {
      this.next();
      const v = this.expectWord('a value');
      // name=op=value (FIQL style)
      if (this.peek().kind === '=') {
        this.next();
        const value = this.expectWord('a value');
        const op = decode(v);
        return this.callToNode(op, [{ kind: 'value', token: t }, { kind: 'value', token: value }], t.position);
      }
      return { kind: 'compare', op: 'eq', property: decode(t), value: toValue(v), position: t.position };
    }
    throw new RqlSyntaxError(`Expected "(" or "=" after "${decode(t)}" but found ${describe(after)}`, after.position);
  }

  private expectWord(what: string): Token {
    const t = this.next();
    if (t.kind !== 'word') throw new RqlSyntaxError(`Expected ${what} but found ${describe(t)}`, t.position);
    return t;
  }

  private parseArgs(): Arg[] {
    const args: Arg[] = [];
    if (this.peek().kind === ')') return args;
    for (;;) {
      args.push(this.parseArg());
      if (this.peek().kind !== ',') return args;
      this.next();
    }
  }

  private parseArg(): Arg {
    const t = this.peek();
    if (t.kind === '(') {
      // Either a value list in(p,(a,b)) or a grouped sub-expression and((a=1|b=2),c=3).
      if (this.isValueList()) {
        this.next();
        const items: Arg[] = [];
        while (this.peek().kind === 'word') {
          items.push({ kind: 'value', token: this.next() });
          if (this.peek().kind === ',') this.next();
        }
        this.expect(')');
        return { kind: 'group', items, position: t.position };
      }
      this.next();
      const node = this.parseOr();
      this.expect(')');
      if (!node) throw new RqlSyntaxError('Empty group', t.position);
      return { kind: 'expr', node, position: t.position };
    }
    // eq(name,) compares with the empty string.
    if (t.kind === ',' || t.kind === ')') return { kind: 'value', token: { kind: 'word', raw: '', position: t.position } };
    if (t.kind !== 'word') throw new RqlSyntaxError(`Expected an argument but found ${describe(t)}`, t.position);
    const after = this.tokens[this.pos + 1]!;
    if (after.kind === '(' || after.kind === '=') return this.parseTermInArg();
    this.next();
    return { kind: 'value', token: t };
  }

  /** At "(": is what follows `word (, word)* )` with no word starting a term? */
  private isValueList(): boolean {
    let i = this.pos + 1;
    for (;;) {
      if (this.tokens[i]?.kind !== 'word') return false;
      i++;
      const after = this.tokens[i]?.kind;
      if (after === ')') return true;
      if (after !== ',') return false;
      i++;
    }
  }

  /** A nested term inside and(...)/or(...)/not(...); also allows & and | chains inside. */
  private parseTermInArg(): Arg {
    const position = this.peek().position;
    const node = this.parseAnd();
    if (!node) return { kind: 'call', name: '', args: [], position };
    if (this.peek().kind === '|') {
      const parts = [node];
      while (this.peek().kind === '|') {
        this.next();
        const n = this.parseAnd();
        if (n) parts.push(n);
      }
      return { kind: 'expr', node: { kind: 'or', children: parts, position }, position };
    }
    return { kind: 'expr', node, position };
  }

  private callToNode(name: string, args: Arg[], position: number): RqlNode | undefined {
    switch (name) {
      case 'and':
      case 'or': {
        const children = args.map((a) => this.argToNode(a, name));
        if (children.length === 0) throw new RqlSyntaxError(`${name}() needs at least one term`, position);
        return children.length === 1 ? children[0] : { kind: name, children, position };
      }
      case 'not': {
        if (args.length !== 1) throw new RqlSyntaxError('not() takes exactly one term', position);
        return { kind: 'not', child: this.argToNode(args[0]!, name), position };
      }
      case 'eq':
      case 'ne':
      case 'gt':
      case 'lt':
      case 'ge':
      case 'le': {
        if (args.length !== 2) throw new RqlSyntaxError(`${name}() takes a property and a value`, position);
        return { kind: 'compare', op: name, property: this.argToProperty(args[0]!, name), value: this.argToValue(args[1]!, name), position };
      }
      case 'match':
      case 'like': {
        if (args.length !== 2 && args.length !== 3) throw new RqlSyntaxError(`${name}() takes a property, a pattern and an optional true for case-sensitive`, position);
        let caseSensitive = false;
        if (args.length === 3) {
          const flag = this.argToValue(args[2]!, name);
          if (flag.text !== 'true' && flag.text !== 'false') throw new RqlSyntaxError(`${name}() third argument must be true or false`, flag.position);
          caseSensitive = flag.text === 'true';
        }
        return { kind: 'match', property: this.argToProperty(args[0]!, name), pattern: this.argToValue(args[1]!, name), caseSensitive, position };
      }
      case 'in': {
        if (args.length < 2) throw new RqlSyntaxError('in() takes a property and at least one value', position);
        const property = this.argToProperty(args[0]!, name);
        const rest = args.slice(1);
        const values =
          rest.length === 1 && rest[0]!.kind === 'group'
            ? rest[0]!.items.map((a) => this.argToValue(a, name))
            : rest.map((a) => this.argToValue(a, name));
        return { kind: 'in', property, values, position };
      }
      case 'sort': {
        if (args.length === 0) throw new RqlSyntaxError('sort() needs at least one property', position);
        for (const a of args) {
          if (a.kind !== 'value') throw new RqlSyntaxError('sort() takes property names', argPosition(a));
          let text = decode(a.token);
          let descending = false;
          if (text.startsWith('-')) {
            descending = true;
            text = text.slice(1);
          } else if (text.startsWith('+') || text.startsWith(' ')) {
            text = text.slice(1);
          }
          if (text === '') throw new RqlSyntaxError('sort() property name is empty', a.token.position);
          this.query.sort.push({ property: text, descending, position: a.token.position });
        }
        return undefined;
      }
      case 'limit': {
        if (args.length < 1 || args.length > 2) throw new RqlSyntaxError('limit() takes a count and an optional offset', position);
        const [count, offset] = args.map((a) => this.argToInteger(a));
        if (this.query.limit) throw new RqlSyntaxError('limit() given twice', position);
        this.query.limit = { count: count!, offset: offset ?? 0, position };
        return undefined;
      }
      default:
        throw new UnknownOperatorError(name, position);
    }
  }

  private argToNode(arg: Arg, parent: string): RqlNode {
    if (arg.kind === 'expr') return arg.node;
    throw new RqlSyntaxError(`${parent}() takes terms such as eq(name,value)`, argPosition(arg));
  }

  private argToProperty(arg: Arg, parent: string): string {
    if (arg.kind !== 'value') throw new RqlSyntaxError(`${parent}() expects a property name first`, argPosition(arg));
    const name = decode(arg.token);
    if (name === '') throw new RqlSyntaxError('Empty property name', arg.token.position);
    return name;
  }

  private argToValue(arg: Arg, parent: string): RqlValue {
    if (arg.kind !== 'value') throw new RqlSyntaxError(`${parent}() expects a value`, argPosition(arg));
    return toValue(arg.token);
  }

  private argToInteger(arg: Arg): number {
    if (arg.kind !== 'value') throw new RqlSyntaxError('limit() takes numbers', argPosition(arg));
    const text = decode(arg.token);
    if (!/^\d{1,15}$/.test(text)) throw new RqlSyntaxError(`limit() takes non-negative integers, not "${text}"`, arg.token.position);
    return Number(text);
  }
}

/** A call to a name that is no operator: reported as 4013 with the valid operators. */
export class UnknownOperatorError extends Error {
  constructor(
    readonly operator: string,
    readonly position: number,
  ) {
    super(`Unknown operator "${operator}" at position ${position}; valid operators: ${OPERATORS.join(', ')}`);
    this.name = 'UnknownOperatorError';
  }
}

function argPosition(arg: Arg): number {
  return arg.kind === 'value' ? arg.token.position : arg.position;
}

function describe(t: Token): string {
  return t.kind === 'end' ? 'end of query' : t.kind === 'word' ? `"${t.raw}"` : `"${t.kind}"`;
}

/** Parses a raw query string (as received, percent-encoded). */
export function parseRql(input: string): RqlQuery {
  return new Parser(tokenize(input)).parse();
}
