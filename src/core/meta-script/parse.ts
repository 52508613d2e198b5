// A computed point's script: jsep parses the text into its AST, and check() walks that AST against a
// whitelist into our own small tree (Expr), which evaluate.ts interprets. Nothing is ever run as
// JavaScript: there is no eval, no Function, no property access, no `this`; the only names are the
// context variables and the functions listed here, looked up in Maps (never on an object, so
// `constructor` or `__proto__` are unknown names like any other). The text is bounded in length and the
// tree in depth and size before and while it is walked, so no script can make either recursion deep.
import jsep from 'jsep';

/** The longest script (characters). */
export const MAX_SCRIPT_LENGTH = 2_000;
/** The deepest tree (a parenthesis, an operator or a call is a level). */
export const MAX_DEPTH = 32;
/** The most nodes of a tree. */
export const MAX_NODES = 500;
/** The most history functions one script may call (each is a read of the store). */
export const MAX_HISTORY_CALLS = 16;
/** The longest window of a history function. */
export const MAX_WINDOW_MS = 366 * 86_400_000;

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '**' | '==' | '!=' | '<' | '<=' | '>' | '>=';
export type HistoryFn = 'avg' | 'min' | 'max' | 'last' | 'delta';

/** The checked tree. Every value is a number: comparisons and logic give 1 or 0, true and false are 1 and 0. */
export type Expr =
  | { k: 'num'; v: number }
  | { k: 'var'; name: string }
  | { k: 'unary'; op: '-' | '+' | '!'; arg: Expr }
  | { k: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { k: 'logical'; op: '&&' | '||'; left: Expr; right: Expr }
  | { k: 'cond'; test: Expr; then: Expr; otherwise: Expr }
  | { k: 'math'; fn: string; args: Expr[] }
  /** index: into the script's `history` list, whose values are read before the evaluation. */
  | { k: 'history'; index: number };

/** A history function call: the statistic of a context variable's point over the window ending at the computation. */
export interface HistoryCall {
  fn: HistoryFn;
  variable: string;
  windowMs: number;
}

export interface Script {
  root: Expr;
  /** Distinct history calls, in order of first use. */
  history: HistoryCall[];
  /** The context variables the script names. */
  variables: Set<string>;
}

/** Why a script was refused; `index`: the character where it went wrong, when known. */
export class ScriptSyntaxError extends Error {
  constructor(
    message: string,
    readonly index?: number,
  ) {
    super(index === undefined ? message : `${message} (at character ${index})`);
  }
}

/** Math functions by name: their arity (min and max count) and implementation. */
export const MATH_FUNCTIONS: ReadonlyMap<string, { min: number; max: number; apply: (args: number[]) => number }> = new Map([
  ['abs', fn1(Math.abs)],
  ['sign', fn1(Math.sign)],
  ['round', fn1(Math.round)],
  ['floor', fn1(Math.floor)],
  ['ceil', fn1(Math.ceil)],
  ['trunc', fn1(Math.trunc)],
  ['sqrt', fn1(Math.sqrt)],
  ['cbrt', fn1(Math.cbrt)],
  ['exp', fn1(Math.exp)],
  ['log', fn1(Math.log)],
  ['log10', fn1(Math.log10)],
  ['log2', fn1(Math.log2)],
  ['sin', fn1(Math.sin)],
  ['cos', fn1(Math.cos)],
  ['tan', fn1(Math.tan)],
  ['asin', fn1(Math.asin)],
  ['acos', fn1(Math.acos)],
  ['atan', fn1(Math.atan)],
  ['atan2', { min: 2, max: 2, apply: (a: number[]) => Math.atan2(a[0]!, a[1]!) }],
  ['pow', { min: 2, max: 2, apply: (a: number[]) => Math.pow(a[0]!, a[1]!) }],
  ['hypot', { min: 2, max: 16, apply: (a: number[]) => Math.hypot(...a) }],
  ['min', { min: 2, max: 16, apply: (a: number[]) => Math.min(...a) }],
  ['max', { min: 2, max: 16, apply: (a: number[]) => Math.max(...a) }],
  ['clamp', { min: 3, max: 3, apply: (a: number[]) => Math.min(a[2]!, Math.max(a[1]!, a[0]!)) }],
]);

function fn1(f: (x: number) => number) {
  return { min: 1, max: 1, apply: (a: number[]) => f(a[0]!) };
}

export const HISTORY_FUNCTIONS: ReadonlySet<string> = new Set<HistoryFn>(['avg', 'min', 'max', 'last', 'delta']);

/** Words a context variable may not be called. */
const RESERVED = new Set(['true', 'false', 'null', 'this', 'undefined', 'NaN', 'Infinity']);
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Why a context variable name cannot be used, or undefined when it can. */
export function variableNameProblem(name: string): string | undefined {
  if (!VARIABLE.test(name)) return 'must be a letter or _ followed by letters, digits or _ (at most 64)';
  if (RESERVED.has(name) || MATH_FUNCTIONS.has(name) || HISTORY_FUNCTIONS.has(name)) return `"${name}" is a reserved word or a function name`;
  return undefined;
}

const BINARY_OPS: ReadonlySet<string> = new Set<BinaryOp>(['+', '-', '*', '/', '%', '**', '==', '!=', '<', '<=', '>', '>=']);
const UNARY_OPS: ReadonlySet<string> = new Set(['-', '+', '!']);

const WINDOW = /^\s*(\d{1,9})\s*(ms|s|m|h|d|w)\s*$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A window such as "15m", "1h", "30s", "2d", "1w", "500ms" in ms, or undefined when it is not one. */
export function windowMs(text: string): number | undefined {
  const m = WINDOW.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms > 0 && ms <= MAX_WINDOW_MS ? ms : undefined;
}

/** The deepest nesting of brackets in the text: jsep recurses once per level, so it is bounded before jsep sees it. */
function bracketDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) deepest = Math.max(deepest, ++depth); // ( [ {
    else if (c === 41 || c === 93 || c === 125) depth--;
  }
  return deepest;
}

/** Where a name first stands as a word in the text (for the message), if anywhere. */
function indexOfName(text: string, name: string): number | undefined {
  const m = new RegExp(`(^|[^A-Za-z0-9_$.])${name.replace(/[$]/g, '\\$')}(?![A-Za-z0-9_$])`).exec(text);
  return m ? m.index + m[1]!.length : undefined;
}

/**
 * Parses and checks a script against its context variables. Throws ScriptSyntaxError naming what is
 * wrong (and where, when known).
 */
export function parseScript(text: string, variables: ReadonlySet<string>): Script {
  if (text.length > MAX_SCRIPT_LENGTH) throw new ScriptSyntaxError(`is longer than ${MAX_SCRIPT_LENGTH} characters`);
  if (text.trim() === '') throw new ScriptSyntaxError('is empty');
  if (bracketDepth(text) > MAX_DEPTH) throw new ScriptSyntaxError(`nests deeper than ${MAX_DEPTH} levels`);
  let ast: jsep.Expression;
  try {
    ast = jsep(text);
  } catch (err) {
    if (err instanceof RangeError) throw new ScriptSyntaxError(`nests deeper than ${MAX_DEPTH} levels`);
    const e = err as { description?: unknown; index?: unknown };
    throw new ScriptSyntaxError(typeof e.description === 'string' ? e.description : 'cannot be parsed', typeof e.index === 'number' ? e.index : undefined);
  }
  const checker = new Checker(text, variables);
  const root = checker.check(ast, 1);
  return { root, history: checker.history, variables: checker.named };
}

class Checker {
  readonly history: HistoryCall[] = [];
  readonly named = new Set<string>();
  private nodes = 0;

  constructor(
    private readonly text: string,
    private readonly variables: ReadonlySet<string>,
  ) {}

  check(node: jsep.Expression, depth: number): Expr {
    if (depth > MAX_DEPTH) throw new ScriptSyntaxError(`nests deeper than ${MAX_DEPTH} levels`);
    if (++this.nodes > MAX_NODES) throw new ScriptSyntaxError(`has more than ${MAX_NODES} terms`);
    switch (node.type) {
      case 'Literal':
        return this.literal(node as jsep.Literal);
      case 'Identifier':
        return this.variable((node as jsep.Identifier).name);
      case 'UnaryExpression': {
        const u = node as jsep.UnaryExpression;
        if (!UNARY_OPS.has(u.operator)) throw new ScriptSyntaxError(`operator ${u.operator} is not allowed`);
        return { k: 'unary', op: u.operator as '-' | '+' | '!', arg: this.check(u.argument, depth + 1) };
      }
      case 'BinaryExpression': {
        const b = node as jsep.BinaryExpression;
        const left = this.check(b.left, depth + 1);
        const right = this.check(b.right, depth + 1);
        if (b.operator === '&&' || b.operator === '||') return { k: 'logical', op: b.operator, left, right };
        if (!BINARY_OPS.has(b.operator)) throw new ScriptSyntaxError(`operator ${b.operator} is not allowed`);
        return { k: 'binary', op: b.operator as BinaryOp, left, right };
      }
      case 'ConditionalExpression': {
        const c = node as jsep.ConditionalExpression;
        return { k: 'cond', test: this.check(c.test, depth + 1), then: this.check(c.consequent, depth + 1), otherwise: this.check(c.alternate, depth + 1) };
      }
      case 'CallExpression':
        return this.call(node as jsep.CallExpression, depth);
      case 'MemberExpression':
        throw new ScriptSyntaxError('property access (. or []) is not allowed');
      case 'ThisExpression':
        throw new ScriptSyntaxError('"this" is not allowed');
      case 'Compound':
      case 'SequenceExpression':
        throw new ScriptSyntaxError('must be a single expression (no ; or ,)');
      default:
        throw new ScriptSyntaxError(`${describe(node.type)} is not allowed`);
    }
  }

  private literal(l: jsep.Literal): Expr {
    if (typeof l.value === 'number') return { k: 'num', v: l.value };
    if (typeof l.value === 'boolean') return { k: 'num', v: l.value ? 1 : 0 };
    if (typeof l.value === 'string') throw new ScriptSyntaxError('a string is only allowed as the window of a history function, such as avg(x, "15m")', this.indexOf(l.raw));
    throw new ScriptSyntaxError(`${l.raw} is not allowed`, this.indexOf(l.raw));
  }

  private variable(name: string): Expr {
    if (!this.variables.has(name)) {
      const known = this.variables.size === 0 ? 'there are no context variables' : `the context variables are ${[...this.variables].join(', ')}`;
      const what = MATH_FUNCTIONS.has(name) || HISTORY_FUNCTIONS.has(name) ? `"${name}" is a function: call it` : `unknown name "${name}" (${known})`;
      throw new ScriptSyntaxError(what, indexOfName(this.text, name));
    }
    this.named.add(name);
    return { k: 'var', name };
  }

  private call(c: jsep.CallExpression, depth: number): Expr {
    if (c.callee.type === 'MemberExpression') throw new ScriptSyntaxError('property access (. or []) is not allowed');
    if (c.callee.type !== 'Identifier') throw new ScriptSyntaxError('only the listed functions may be called, by name');
    const name = (c.callee as jsep.Identifier).name;
    const args = c.arguments;
    const second = args[1];
    const windowArg = second?.type === 'Literal' && typeof (second as jsep.Literal).value === 'string' ? ((second as jsep.Literal).value as string) : undefined;
    // min(x, "1h") and max(x, "1h") are history functions; min(a, b) and max(a, b) are Math's.
    if (HISTORY_FUNCTIONS.has(name) && (windowArg !== undefined || name === 'avg' || name === 'delta' || name === 'last')) {
      return this.historyCall(name as HistoryFn, args, windowArg);
    }
    const math = MATH_FUNCTIONS.get(name);
    if (!math) throw new ScriptSyntaxError(`unknown function "${name}"`, indexOfName(this.text, name));
    if (args.length < math.min || args.length > math.max) {
      const arity = math.min === math.max ? `${math.min}` : `${math.min} to ${math.max}`;
      throw new ScriptSyntaxError(`${name} takes ${arity} argument${math.max === 1 ? '' : 's'}`, indexOfName(this.text, name));
    }
    return { k: 'math', fn: name, args: args.map((a) => this.check(a, depth + 1)) };
  }

  private historyCall(fn: HistoryFn, args: jsep.Expression[], windowArg: string | undefined): Expr {
    const usage = fn === 'last' ? 'last(x) or last(x, "1h")' : `${fn}(x, "15m")`;
    const first = args[0];
    const tooMany = args.length > 2 || (args.length === 2 && windowArg === undefined);
    if (first?.type !== 'Identifier' || tooMany || (fn !== 'last' && windowArg === undefined)) {
      throw new ScriptSyntaxError(`${fn} is called as ${usage}: a context variable and a window`, indexOfName(this.text, fn));
    }
    const variable = (first as jsep.Identifier).name;
    this.variable(variable);
    // last(x): the variable's current value, nothing to read.
    if (windowArg === undefined) return { k: 'var', name: variable };
    const ms = windowMs(windowArg);
    if (ms === undefined) throw new ScriptSyntaxError(`"${windowArg}" is not a window: a number and a unit (ms, s, m, h, d, w), at most 366 days, such as "15m"`, this.indexOf(`"${windowArg}"`));
    let index = this.history.findIndex((h) => h.fn === fn && h.variable === variable && h.windowMs === ms);
    if (index < 0) {
      if (this.history.length >= MAX_HISTORY_CALLS) throw new ScriptSyntaxError(`calls more than ${MAX_HISTORY_CALLS} history functions`);
      index = this.history.push({ fn, variable, windowMs: ms }) - 1;
    }
    return { k: 'history', index };
  }

  private indexOf(raw: string): number | undefined {
    const i = this.text.indexOf(raw);
    return i < 0 ? undefined : i;
  }
}

function describe(type: string): string {
  switch (type) {
    case 'ArrayExpression':
      return 'an array';
    default:
      return `${type}`;
  }
}
