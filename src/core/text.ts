// The one rule for text from clients: a string the stores can hold. PostgreSQL text cannot contain
// U+0000, and a UTF-16 surrogate without its other half has no UTF-8 form (PostgreSQL refuses it
// in JSON, and encoding it silently turns it into U+FFFD). Such text is refused at the edge.
import { DomainError, validationMessage, type ValidationMessage } from './errors.js';
import { parseJson } from './json.js';
import { propertyName } from './validation.js';

/** What keeps `s` from being stored as text ("the character U+0000", …), or undefined. */
export function badCharacterIn(s: string): string | undefined {
  if (s.includes('\u0000')) return 'the character U+0000';
  if (!s.isWellFormed()) return 'an unpaired surrogate (U+D800 to U+DFFF)';
  return undefined;
}

/** "must not contain …" when `s` cannot be stored as text, else undefined. */
export function textProblem(s: string): string | undefined {
  const bad = badCharacterIn(s);
  return bad === undefined ? undefined : `must not contain ${bad}`;
}

/** `\u` at `at` - 2 escapes U+0000 or a surrogate (D800–DFFF), in either case. */
function isBadEscape(s: string, at: number): boolean {
  const first = s.charCodeAt(at) | 0x20; // lower-cases a hex letter, leaves digits alone
  if (first === 0x64 /* d */) {
    const second = s.charCodeAt(at + 1) | 0x20;
    return second === 0x38 || second === 0x39 || (second >= 0x61 && second <= 0x66); // 8, 9, a–f
  }
  return s.startsWith('0000', at);
}

/**
 * Whether JSON text decoded from valid UTF-8 (which holds no unpaired surrogate) may hold a string
 * that cannot be stored: a raw U+0000 (never valid JSON, but the bulk-ingest reader does not parse)
 * or a `\u0000` or surrogate escape. Two scans of the text with no allocation, so the ingest path
 * pays nothing measurable; only a hit costs a parse and a walk.
 */
export function mayHoldBadText(json: string): boolean {
  if (json.includes('\u0000')) return true;
  for (let i = json.indexOf('\\u'); i !== -1; i = json.indexOf('\\u', i + 2)) {
    if (isBadEscape(json, i + 2)) return true;
  }
  return false;
}

/** At most this many messages for one body (a 16 MiB bulk body could otherwise give millions). */
const MAX_MESSAGES = 100;

interface Frame {
  node: Record<string, unknown> | unknown[];
  /** The object's keys; undefined for an array. */
  keys: string[] | undefined;
  next: number;
}

const NOTHING_VERBATIM: ReadonlySet<string> = new Set();

/**
 * One validation message per string that cannot be stored, named as the contract names properties
 * (`tags.site`, `[3].annotation`, `readPermission[0]`); an object with such a key is named itself.
 * `verbatim`: top-level members kept exactly as sent whatever their strings hold (JSON store data).
 * Iterative: a 1 MiB body may nest hundreds of thousands of levels deep.
 */
export function badTextMessages(root: unknown, verbatim: ReadonlySet<string> = NOTHING_VERBATIM): ValidationMessage[] {
  const messages: ValidationMessage[] = [];
  const path: string[] = []; // path[i]: where stack[i + 1] sits in stack[i]
  const stack: Frame[] = [];
  const enter = (value: unknown, key?: string): void => {
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) messages.push(validationMessage(propertyName(key === undefined ? path : [...path, key]), problem));
    } else if (typeof value === 'object' && value !== null) {
      if (key !== undefined) path.push(key);
      const keys = Array.isArray(value) ? undefined : Object.keys(value);
      stack.push({ node: value as Frame['node'], keys, next: 0 });
      const bad = keys?.map(badCharacterIn).find((b) => b !== undefined);
      if (bad) messages.push(validationMessage(propertyName(path), `must not have a key that contains ${bad}`));
    }
  };
  enter(root);
  while (stack.length > 0 && messages.length < MAX_MESSAGES) {
    const top = stack[stack.length - 1]!;
    const { keys } = top;
    if (top.next >= (keys ?? (top.node as unknown[])).length) {
      stack.pop();
      if (stack.length > 0) path.pop();
    } else if (keys) {
      const key = keys[top.next++]!;
      if (stack.length > 1 || !verbatim.has(key)) enter((top.node as Record<string, unknown>)[key], key);
    } else {
      const index = top.next++;
      enter((top.node as unknown[])[index], String(index));
    }
  }
  return messages.slice(0, MAX_MESSAGES);
}

/**
 * Refuses JSON text holding a string (or key) that cannot be stored: 422 naming each, 400 when the
 * text is not JSON at all. The text is parsed only when a scan finds a suspect character.
 */
export function assertStorableJson(json: string, verbatim?: ReadonlySet<string>): void {
  if (!mayHoldBadText(json)) return;
  const messages = badTextMessages(parseJson(json), verbatim);
  if (messages.length > 0) throw DomainError.validation(messages);
}
