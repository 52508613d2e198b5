// JSON from clients: a syntax error is the client's mistake (400), never a 500; and how deep it
// nests (JSON_MAX_DEPTH), measured without recursion so that no depth can overflow the stack.
//
// Depth counts objects and arrays: `1` and `"a"` nest 0 levels, `[]` and `{"a":1}` 1, `{"a":[1]}` 2.
import { DomainError, validationMessage, type ValidationMessage } from './errors.js';
import { propertyName } from './validation.js';

/** JSON_MAX_DEPTH's default (config.ts), also the bound where no configuration reaches. */
export const DEFAULT_JSON_MAX_DEPTH = 64;

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const detail = err instanceof SyntaxError ? `: ${err.message}` : '';
    throw DomainError.badRequest(`Invalid JSON${detail}`);
  }
}

/** End (exclusive) of the string token whose opening quote is at `i`; the text's length when unterminated. */
function stringEnd(text: string, i: number): number {
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i === -1) return text.length;
    if (text.charCodeAt(i - 1) !== 0x5c) return i + 1;
    let slash = i - 2;
    while (text.charCodeAt(slash) === 0x5c) slash--;
    if ((i - 1 - slash) % 2 === 0) return i + 1; // an even run of backslashes escapes itself, not the quote
  }
}

/**
 * Where JSON text first nests deeper than `maxDepth` levels: the offset of the `{` or `[` that opens
 * level maxDepth + 1, or -1. One pass and no allocation: strings are skipped by indexOf, only the
 * characters between them are looked at (a few ns a character: bench/json-depth.ts). Text
 * that is not JSON gets some answer and no error: the parse that follows says what is wrong.
 */
export function depthExceededAt(text: string, maxDepth: number): number {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i) - 1;
    } else if ((c | 0x20) === 0x7b) {
      // `[` (0x5b) or `{` (0x7b)
      if (++depth > maxDepth) return i;
    } else if ((c | 0x20) === 0x7d) {
      // `]` (0x5d) or `}` (0x7d)
      depth--;
    }
  }
  return -1;
}

interface Level {
  array: boolean;
  /** Elements before the current one (arrays). */
  index: number;
  /** The current member's key token (objects); -1 before the first. */
  keyStart: number;
  keyEnd: number;
  /** The next string in this object is a key. */
  expectKey: boolean;
}

/**
 * The keys and indexes leading to `offset` in JSON text, outermost first, at most `levels` of them
 * (`["dataPoints", "3", "pointLocator"]`): names the field where the text is too deep. Iterative,
 * and looks at nothing past `offset`.
 */
export function pathAt(text: string, offset: number, levels: number): string[] {
  const open: Level[] = [];
  let depth = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = depth <= levels ? open[depth - 1] : undefined;
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (top && !top.array && top.expectKey) Object.assign(top, { keyStart: i, keyEnd: end, expectKey: false });
      i = end - 1;
    } else if (c === 0x2c /* , */) {
      if (top?.array) top.index++;
      else if (top) top.expectKey = true;
    } else if ((c | 0x20) === 0x7b) {
      depth++;
      if (depth <= levels) open.push({ array: c === 0x5b, index: 0, keyStart: -1, keyEnd: -1, expectKey: true });
    } else if ((c | 0x20) === 0x7d) {
      if (depth <= levels) open.pop();
      depth--;
    }
  }
  return open.map((level) => (level.array ? String(level.index) : keyText(text, level)));
}

function keyText(text: string, level: Level): string {
  if (level.keyStart < 0) return '';
  try {
    return String(JSON.parse(text.slice(level.keyStart, level.keyEnd)));
  } catch {
    return text.slice(level.keyStart + 1, level.keyEnd - 1);
  }
}

/** The message of a field that nests deeper than the limit on its own. */
export const nestsTooDeep = (maxDepth: number) => `nests deeper than ${maxDepth} levels (JSON_MAX_DEPTH)`;

/** The message of a field that takes the body (or an import's item) deeper than the limit. */
export const takesTooDeep = (what: 'body' | 'item', maxDepth: number) => `takes the ${what} deeper than ${maxDepth} levels (JSON_MAX_DEPTH)`;

/**
 * Refuses JSON text nesting deeper than `maxDepth` levels plus `envelope` levels around the
 * documents it carries (0 for most bodies; 1 for a JSON store item, whose jsonData may nest
 * `maxDepth` levels of its own; 3 for a configuration import: document, kind, item): 422 naming
 * the top-level member, or the member at the envelope's depth (`jsonData`, `jsonStore[2].jsonData`).
 */
export function assertJsonDepth(text: string, maxDepth: number, envelope = 0): void {
  const at = depthExceededAt(text, maxDepth + envelope);
  if (at === -1) return;
  const path = pathAt(text, at, Math.max(envelope, 1));
  // With an envelope the member named lies below it and nests deeper than maxDepth on its own.
  throw DomainError.invalid(propertyName(path), envelope === 0 ? takesTooDeep('body', maxDepth) : nestsTooDeep(maxDepth));
}

interface Frame {
  node: Record<string, unknown> | unknown[];
  keys: string[] | undefined;
  next: number;
}

/**
 * The keys and indexes leading from `value` to its first object or array below level `maxDepth`
 * (`value` itself being level 1 when it is one), or undefined when it nests no deeper. Iterative.
 */
export function pathBeyondDepth(value: unknown, maxDepth: number): string[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (maxDepth < 1) return [];
  const path: string[] = [];
  const stack: Frame[] = [{ node: value as Frame['node'], keys: Array.isArray(value) ? undefined : Object.keys(value), next: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const size = top.keys ? top.keys.length : (top.node as unknown[]).length;
    if (top.next >= size) {
      stack.pop();
      path.pop();
      continue;
    }
    const key = top.keys ? top.keys[top.next]! : String(top.next);
    top.next++;
    const child = top.keys ? (top.node as Record<string, unknown>)[key] : (top.node as unknown[])[Number(key)];
    if (typeof child !== 'object' || child === null) continue;
    path.push(key);
    if (stack.length >= maxDepth) return path;
    stack.push({ node: child as Frame['node'], keys: Array.isArray(child) ? undefined : Object.keys(child), next: 0 });
  }
  return undefined;
}

/**
 * A configuration import's item that nests deeper than on its own route: the whole item within
 * `maxDepth` levels, except a JSON store item's jsonData, which has `maxDepth` levels of its own.
 * The message names the member (`pointLocator`, `jsonData`), relative to the item.
 */
export function itemDepthProblem(item: Record<string, unknown>, maxDepth: number, ownJsonData: boolean): ValidationMessage | undefined {
  if (ownJsonData && pathBeyondDepth(item.jsonData, maxDepth)) return validationMessage('jsonData', nestsTooDeep(maxDepth));
  const rest = ownJsonData ? { ...item, jsonData: null } : item;
  const path = pathBeyondDepth(rest, maxDepth);
  return path && validationMessage(propertyName(path.slice(0, 1)), takesTooDeep('item', maxDepth));
}
