// Compact JSON text, read and edited without a parse: JSON store documents are kept as the client
// wrote them (key order, number spelling, `\u0000`), so reads and edits work on the text. Compact
// means no whitespace between tokens; compact() makes it, and everything else expects it.
// Paths: `a.b.0.c`, segments split on "." in the raw URL and then percent-decoded (%2E is a "." in
// a key); an array index is a plain decimal (0, 12: no sign, no leading zero); on an object the same
// segment is a key. Duplicate keys: the last one counts, as in JSON.parse and JSONB.
import { DomainError } from './errors.js';

/** Deeper documents are not given to PostgreSQL's recursive JSON parsers (PGlite's stack is small). */
const MAX_JSONB_DEPTH = 512;
/** Longer number tokens, or larger exponents, may not fit numeric; such documents skip JSONB. */
const MAX_JSONB_NUMBER = 900;

// ---- Scanning. Input is JSON that JSON.parse has accepted (a body) or that this module
// wrote (a stored document), so the scanner checks structure only as far as it needs to. Every
// loop is iterative: a 1 MiB document may nest hundreds of thousands of levels deep.

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function skipWhitespace(s: string, i: number): number {
  while (i < s.length && isWhitespace(s.charCodeAt(i))) i++;
  return i;
}

/** End (exclusive) of the string token starting at the quote at i. */
export function stringEnd(s: string, i: number): number {
  for (i++; ; ) {
    const c = s.charCodeAt(i);
    if (c === 0x22) return i + 1;
    i += c === 0x5c ? 2 : 1;
  }
}

function isDelimiter(c: number): boolean {
  return c === 0x2c || c === 0x7d || c === 0x5d || c === 0x3a || isWhitespace(c);
}

/** End (exclusive) of the value starting at i (no whitespace before it). */
export function valueEnd(s: string, i: number): number {
  let depth = 0;
  do {
    i = skipWhitespace(s, i);
    const c = s.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(s, i);
    } else if (c === 0x7b || c === 0x5b || c === 0x7d || c === 0x5d) {
      depth += c === 0x7b || c === 0x5b ? 1 : -1;
      i++;
    } else if (c === 0x2c || c === 0x3a) {
      i++;
    } else {
      while (i < s.length && !isDelimiter(s.charCodeAt(i))) i++;
    }
  } while (depth > 0);
  return i;
}

const HEX4 = /^[0-9a-fA-F]{4}$/;

/** `\uXXXX` at i (the backslash), as a code unit; undefined for any other escape. */
function escapedUnit(s: string, i: number): number | undefined {
  if (s.charCodeAt(i + 1) !== 0x75) return undefined;
  const hex = s.slice(i + 2, i + 6);
  return HEX4.test(hex) ? parseInt(hex, 16) : undefined;
}

/**
 * The value's text without the whitespace between tokens, how deep it nests, and whether JSONB can
 * hold it: no `\u0000`, no unpaired surrogate escape, nesting within MAX_JSONB_DEPTH, numbers of
 * modest size.
 */
export function compact(s: string, start: number, end: number): { doc: string; jsonb: boolean; depth: number } {
  const parts: string[] = [];
  let jsonb = true;
  let depth = 0;
  let deepest = 0;
  let run = start;
  let i = start;
  while (i < end) {
    const c = s.charCodeAt(i);
    if (isWhitespace(c)) {
      parts.push(s.slice(run, i));
      i = skipWhitespace(s, i);
      run = i;
    } else if (c === 0x22) {
      const close = stringEnd(s, i);
      if (jsonb) jsonb = jsonbSafeString(s, i + 1, close - 1);
      i = close;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSONB_DEPTH) jsonb = false;
      if (depth > deepest) deepest = depth;
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const tokenStart = i;
      while (i < end && !isDelimiter(s.charCodeAt(i))) i++;
      if (jsonb) jsonb = jsonbSafeNumber(s.slice(tokenStart, i));
    } else {
      i++;
    }
  }
  parts.push(s.slice(run, end));
  return { doc: parts.join(''), jsonb, depth: deepest };
}

function jsonbSafeString(s: string, from: number, to: number): boolean {
  for (let i = s.indexOf('\\', from); i !== -1 && i < to; i = s.indexOf('\\', i)) {
    const unit = escapedUnit(s, i);
    if (unit === undefined) {
      i += 2;
      continue;
    }
    if (unit === 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return false;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = s.charCodeAt(i + 6) === 0x5c ? escapedUnit(s, i + 6) : undefined;
      if (low === undefined || low < 0xdc00 || low > 0xdfff) return false;
      i += 12;
    } else {
      i += 6;
    }
  }
  return true;
}

function jsonbSafeNumber(token: string): boolean {
  if (token.length > MAX_JSONB_NUMBER) return false;
  const e = token.search(/[eE]/);
  return e === -1 || Math.abs(Number(token.slice(e + 1))) <= MAX_JSONB_NUMBER;
}

// ---- Paths

export function isIndex(segment: string): boolean {
  return /^(0|[1-9]\d*)$/.test(segment);
}

export function parsePath(rawPath: string): string[] {
  try {
    return rawPath.split('.').map((segment) => decodeURIComponent(segment));
  } catch {
    throw DomainError.badRequest('Invalid path: bad percent-encoding');
  }
}

/** Where a value sits in a document: [start, end). */
export interface Span {
  start: number;
  end: number;
}

/** A member of a compact object: its key, where its key token starts, where its value starts, its end. */
interface Member {
  key: string;
  start: number;
  valueStart: number;
  end: number;
}

/** The members of the compact object whose `{` is at `start`, in order (duplicates included). */
function objectMembers(doc: string, start: number): Member[] {
  const members: Member[] = [];
  // Compact: a key's colon directly follows it, its value the colon.
  for (let i = start + 1; doc.charCodeAt(i) === 0x22; ) {
    const keyEnd = stringEnd(doc, i);
    const end = valueEnd(doc, keyEnd + 1);
    members.push({ key: JSON.parse(doc.slice(i, keyEnd)) as string, start: i, valueStart: keyEnd + 1, end });
    i = doc.charCodeAt(end) === 0x2c ? end + 1 : end;
  }
  return members;
}

/** The elements of the compact array whose `[` is at `start`, at most `upTo + 1` of them. */
function arrayElements(doc: string, start: number, upTo = Infinity): Span[] {
  const elements: Span[] = [];
  for (let i = start + 1; doc.charCodeAt(i) !== 0x5d && elements.length <= upTo; ) {
    const end = valueEnd(doc, i);
    elements.push({ start: i, end });
    i = doc.charCodeAt(end) === 0x2c ? end + 1 : end;
  }
  return elements;
}

/** Where the value at `path` sits in a compact document, or undefined when there is none. */
export function spanAt(doc: string, path: readonly string[]): Span | undefined {
  let span: Span = { start: 0, end: -1 };
  for (const segment of path) {
    const c = doc.charCodeAt(span.start);
    let found: Span | undefined;
    if (c === 0x7b) {
      const member = objectMembers(doc, span.start).findLast((m) => m.key === segment);
      if (member) found = { start: member.valueStart, end: member.end };
    } else if (c === 0x5b && isIndex(segment)) {
      const wanted = Number(segment);
      found = arrayElements(doc, span.start, wanted)[wanted];
    }
    if (!found) return undefined;
    span = found;
  }
  return span.end === -1 ? { start: 0, end: valueEnd(doc, 0) } : span;
}

/** The JSON text at `path` in a compact document, or undefined when there is none. */
export function valueAt(doc: string, path: readonly string[]): string | undefined {
  const span = spanAt(doc, path);
  return span && doc.slice(span.start, span.end);
}

// ---- Edits (Mango's /json-data): each takes a compact document and compact value text and answers
// the new document, or throws the contract's error for a path it cannot apply to.

const noValue = () => DomainError.notFound('No value at this path');

/** What a value is, for messages. */
function kindAt(doc: string, i: number): string {
  const c = doc[i];
  if (c === '{') return 'an object';
  if (c === '[') return 'an array';
  if (c === '"') return 'a string';
  if (c === 't' || c === 'f') return 'a boolean';
  if (c === 'n') return 'null';
  return 'a number';
}

function splice(doc: string, span: Span, text: string): string {
  return doc.slice(0, span.start) + text + doc.slice(span.end);
}

const memberText = (doc: string, m: Member): string => doc.slice(m.start, m.end);
const elementText = (doc: string, e: Span): string => doc.slice(e.start, e.end);

/** The index a segment names in an array, or a 400: an array has no other members. */
function arrayIndex(segment: string): number {
  if (!isIndex(segment)) throw DomainError.badRequest(`Invalid path: "${segment}" is not an array index`);
  return Number(segment);
}

/** The parent of the path's last segment (a 404 when there is none), and that segment. */
function parentOf(doc: string, path: readonly string[]): { parent: Span; last: string } {
  const parent = spanAt(doc, path.slice(0, -1));
  if (!parent) throw noValue();
  return { parent, last: path[path.length - 1]! };
}

/**
 * `value` at `path`: a member replaced (every one of its key) or added at the object's end, an
 * existing array element replaced; the whole document for the empty path. The parent must exist.
 */
export function setAt(doc: string, path: readonly string[], value: string): string {
  if (path.length === 0) return value;
  const { parent, last } = parentOf(doc, path);
  const c = doc.charCodeAt(parent.start);
  if (c === 0x7b) {
    const members = objectMembers(doc, parent.start);
    const parts = members.map((m) => (m.key === last ? doc.slice(m.start, m.valueStart) + value : memberText(doc, m)));
    if (!members.some((m) => m.key === last)) parts.push(`${JSON.stringify(last)}:${value}`);
    return splice(doc, parent, `{${parts.join(',')}}`);
  }
  if (c === 0x5b) {
    const index = arrayIndex(last);
    const element = arrayElements(doc, parent.start, index)[index];
    if (!element) throw DomainError.badRequest(`Invalid path: the array has no index ${index}`);
    return splice(doc, element, value);
  }
  throw DomainError.badRequest(`Cannot set a member of ${kindAt(doc, parent.start)}`);
}

/**
 * Mango's merge at `path`: into an object, each member of `value` (an object) set; onto an array,
 * `value` appended. Answers the document and the merged value's text.
 */
export function mergeAt(doc: string, path: readonly string[], value: string): { doc: string; merged: string } {
  const target = spanAt(doc, path);
  if (!target) throw noValue();
  const c = doc.charCodeAt(target.start);
  let merged: string;
  if (c === 0x7b) {
    if (value.charCodeAt(0) !== 0x7b) throw DomainError.badRequest(`Cannot merge ${kindAt(value, 0)} into an object`);
    const added = new Map<string, Member>();
    for (const m of objectMembers(value, 0)) {
      added.delete(m.key); // a repeated key counts where it last appears
      added.set(m.key, m);
    }
    const members = objectMembers(doc, target.start);
    const parts = members.map((m) => {
      const update = added.get(m.key);
      return update ? doc.slice(m.start, m.valueStart) + value.slice(update.valueStart, update.end) : memberText(doc, m);
    });
    const present = new Set(members.map((m) => m.key));
    for (const [key, m] of added) if (!present.has(key)) parts.push(memberText(value, m));
    merged = `{${parts.join(',')}}`;
  } else if (c === 0x5b) {
    const inner = doc.slice(target.start + 1, target.end - 1);
    merged = `[${inner}${inner === '' ? '' : ','}${value}]`;
  } else {
    throw DomainError.badRequest(`Cannot merge into ${kindAt(doc, target.start)}`);
  }
  return { doc: splice(doc, target, merged), merged };
}

/** The value at `path` (not empty) removed: every member of its key, or the array element. */
export function deleteAt(doc: string, path: readonly string[]): string {
  const { parent, last } = parentOf(doc, path);
  const c = doc.charCodeAt(parent.start);
  if (c === 0x7b) {
    const members = objectMembers(doc, parent.start);
    const kept = members.filter((m) => m.key !== last);
    if (kept.length === members.length) throw noValue();
    return splice(doc, parent, `{${kept.map((m) => memberText(doc, m)).join(',')}}`);
  }
  if (c === 0x5b) {
    const index = arrayIndex(last);
    const elements = arrayElements(doc, parent.start);
    if (index >= elements.length) throw noValue();
    return splice(doc, parent, `[${elements.filter((_, i) => i !== index).map((e) => elementText(doc, e)).join(',')}]`);
  }
  throw noValue();
}
