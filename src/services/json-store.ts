// JSON store: documents kept as the exact JSON text the client sent (so key order, number spelling
// and `\u0000` survive), permissions, create-or-replace, the 1 MiB item limit and dot-path reads.
//
// Decisions where the contract is silent:
// - jsonData nests at most JSON_MAX_DEPTH levels of its own (its outermost object or array is
//   level 1); deeper is a 422 on jsonData. Items stored deeper before the limit existed are still
//   read, exported and deleted: their text is spliced into answers, never parsed and re-serialised.
// - Item size is the UTF-8 length of jsonData as stored: the client's text with the whitespace
//   between tokens removed (strings, escapes and numbers exactly as written). At most 1 MiB
//   (1,048,576 bytes); beyond is 413/4005. A write body may be up to 2 MiB, room for the envelope
//   and for pretty-printing; a larger body is 413 as well.
// - jsonData is any JSON value (object, array, string, number, boolean or null); it is required.
// - Any logged-in user may create. New items default to read ["user"], edit [] (API-DECISIONS,
//   Common), so a non-superadmin who wants to replace or delete their item later names one of
//   their roles in editPermission. Replacing (PUT, or POST of an existing XID) and deleting need
//   read and edit permission; fields left out of a replacement keep their stored permissions.
// - Paths: `a.b.0.c`, segments split on "." in the raw URL and then percent-decoded, so a key
//   containing "." is written with %2E. An array index is a plain decimal (0, 12: no sign, no
//   leading zero); on an object the same segment is a key. Duplicate keys: the last one counts,
//   as in JSON.parse and JSONB. A URL is checked like any client text (http/url-text.ts), so a
//   key holding U+0000 or a lone surrogate has no path: it is read with the whole item.
import { nestsTooDeep, parseJson } from '../core/json.js';
import { DomainError } from '../core/errors.js';
import type { Validator } from '../core/validation.js';
import { jsonStoreResource, type JsonStoreItem, type JsonStoreRecord, type JsonStoreRepository, type JsonStoreValues } from '../store/metadata/json-store.js';
import { assertPermission, normaliseRoles, USER_ROLE, type Principal } from './permissions.js';
import { generateXid, listQuery, translateDuplicateXid, type ListResult } from './resources.js';

export const MAX_ITEM_BYTES = 1024 * 1024;
/** Body limit of JSON store writes: the item plus its envelope and whitespace. */
export const JSON_STORE_BODY_LIMIT = 2 * MAX_ITEM_BYTES;
/** Deeper documents are not given to PostgreSQL's recursive JSON parsers (PGlite's stack is small). */
const MAX_JSONB_DEPTH = 512;
/** Longer number tokens, or larger exponents, may not fit numeric; such documents skip JSONB. */
const MAX_JSONB_NUMBER = 900;
const OBJECT_TYPE = 'JsonDataVO';

export interface JsonStoreInput {
  xid?: string;
  name: string;
  jsonData: unknown;
  readPermission?: string[];
  editPermission?: string[];
}

const notFound = () => DomainError.notFound('JSON store item not found');
const noValue = () => DomainError.notFound('No value at this path');

/** The item without its document, as lists show it. */
export function jsonStoreSummary(r: JsonStoreRecord): Record<string, unknown> {
  return { id: r.id, xid: r.xid, name: r.name, readPermission: r.readPermission, editPermission: r.editPermission };
}

/**
 * The item as JSON text (without the `omit` fields): the stored document is spliced in as it is,
 * never re-serialised, so neither its spelling nor its depth matter.
 */
export function jsonStoreItemJson(item: JsonStoreItem, omit: readonly string[] = []): string {
  const summary = Object.fromEntries(Object.entries(jsonStoreSummary(item)).filter(([k]) => !omit.includes(k)));
  return `${JSON.stringify(summary).slice(0, -1)},"jsonData":${item.doc}}`;
}

export class JsonStoreService {
  constructor(
    private readonly repo: JsonStoreRepository,
    private readonly validator: Validator,
    /** JSON_MAX_DEPTH: levels jsonData may nest. */
    private readonly maxDepth: number,
  ) {}

  async list(user: Principal, rawQuery: string): Promise<ListResult<JsonStoreRecord>> {
    const q = listQuery(user, jsonStoreResource, rawQuery, 't.read_permission');
    return { total: await this.repo.count(q), batches: this.repo.page(q) };
  }

  async get(user: Principal, xid: string): Promise<JsonStoreItem> {
    const item = await this.repo.findItem(xid);
    if (!item) throw notFound();
    assertPermission(user, item.readPermission);
    return item;
  }

  /** The JSON text of the value at a dot path (`rawPath` still percent-encoded). */
  async getPath(user: Principal, xid: string, rawPath: string): Promise<string> {
    const path = parsePath(rawPath);
    // Segments PostgreSQL would read as array indexes that are not ours ("-1", "01", " 1"), or that
    // a text[] cannot carry (NUL), are walked here instead.
    const sqlSafe = path.every((s) => !s.includes('\u0000') && (isIndex(s) || !/^\s*[+-]?\d+$/.test(s)));
    if (sqlSafe) {
      const read = await this.repo.readPath(xid, path);
      if (!read) throw notFound();
      assertPermission(user, read.record.readPermission);
      if (read.kind === 'value') {
        if (read.value === undefined) throw noValue();
        return read.value;
      }
    }
    const item = await this.get(user, xid);
    const value = valueAt(item.doc, path);
    if (value === undefined) throw noValue();
    return value;
  }

  /** POST: creates (created: true) or, when the XID exists, replaces. */
  async save(user: Principal, bodyText: string): Promise<{ item: JsonStoreItem; created: boolean }> {
    const { input, doc } = this.parse(bodyText);
    const xid = input.xid ?? generateXid('JS');
    // A create racing another create of the same XID turns into a replace on the second pass.
    for (let attempt = 0; attempt < 2; attempt++) {
      const existing = await this.repo.findOne('xid', xid);
      if (existing) return { item: await this.replaceExisting(user, existing, input, doc), created: false };
      const created = await this.repo.insertItem({
        xid,
        name: input.name,
        readPermission: normaliseRoles(input.readPermission ?? [USER_ROLE]),
        editPermission: normaliseRoles(input.editPermission ?? []),
        ...doc,
      });
      if (created) return { item: created, created: true };
    }
    throw DomainError.conflict('XID is already in use');
  }

  /** PUT: replaces the item; the body's xid, when given, renames it. */
  async replace(user: Principal, xid: string, bodyText: string): Promise<JsonStoreItem> {
    const existing = await this.repo.findOne('xid', xid);
    if (!existing) throw notFound();
    assertPermission(user, existing.readPermission);
    assertPermission(user, existing.editPermission);
    const { input, doc } = this.parse(bodyText);
    return this.replaceExisting(user, existing, input, doc);
  }

  async delete(user: Principal, xid: string): Promise<JsonStoreItem> {
    const existing = await this.repo.findOne('xid', xid);
    if (!existing) throw notFound();
    assertPermission(user, existing.readPermission);
    assertPermission(user, existing.editPermission);
    const deleted = await this.repo.deleteItem(existing.id);
    if (!deleted) throw notFound();
    return deleted;
  }

  private async replaceExisting(
    user: Principal,
    existing: JsonStoreRecord,
    input: JsonStoreInput,
    doc: Pick<JsonStoreValues, 'doc' | 'jsonb'>,
  ): Promise<JsonStoreItem> {
    assertPermission(user, existing.readPermission);
    assertPermission(user, existing.editPermission);
    const saved = await this.repo
      .replaceItem(existing.id, {
        xid: input.xid ?? existing.xid,
        name: input.name,
        readPermission: normaliseRoles(input.readPermission ?? existing.readPermission),
        editPermission: normaliseRoles(input.editPermission ?? existing.editPermission),
        ...doc,
      })
      .catch((err: unknown) => {
        throw translateDuplicateXid(err);
      });
    if (!saved) throw notFound();
    return saved;
  }

  /** Validates the envelope and takes jsonData from the text itself, not from JSON.parse's result. */
  private parse(bodyText: string): { input: JsonStoreInput; doc: Pick<JsonStoreValues, 'doc' | 'jsonb'> } {
    // Text outside jsonData that PostgreSQL cannot hold was refused where the body was read.
    const input = this.validator.validate<JsonStoreInput>('json-store', parseJson(bodyText));
    const span = jsonDataSpan(bodyText);
    if (!span) throw DomainError.invalid('jsonData', 'is required', OBJECT_TYPE);
    const { depth, ...doc } = compact(bodyText, span.start, span.end);
    if (Buffer.byteLength(doc.doc, 'utf8') > MAX_ITEM_BYTES) {
      throw DomainError.tooLarge(`JSON store item too large: jsonData is limited to ${MAX_ITEM_BYTES} bytes (1 MiB)`);
    }
    if (depth > this.maxDepth) throw DomainError.invalid('jsonData', nestsTooDeep(this.maxDepth), OBJECT_TYPE);
    return { input, doc };
  }
}

// ---- JSON text scanning. Input is JSON that JSON.parse has accepted (the body) or that this module
// wrote (a stored document), so the scanner checks structure only as far as it needs to. Every
// loop is iterative: a 1 MiB document may nest hundreds of thousands of levels deep.

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipWhitespace(s: string, i: number): number {
  while (i < s.length && isWhitespace(s.charCodeAt(i))) i++;
  return i;
}

/** End (exclusive) of the string token starting at the quote at i. */
function stringEnd(s: string, i: number): number {
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
function valueEnd(s: string, i: number): number {
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

/** Where the top-level member "jsonData" sits in the body text (the last one, as JSON.parse). */
function jsonDataSpan(body: string): { start: number; end: number } | undefined {
  let i = skipWhitespace(body, 0);
  if (body.charCodeAt(i) !== 0x7b) return undefined;
  let span: { start: number; end: number } | undefined;
  i = skipWhitespace(body, i + 1);
  while (body.charCodeAt(i) === 0x22) {
    const keyEnd = stringEnd(body, i);
    const key = JSON.parse(body.slice(i, keyEnd)) as string;
    const start = skipWhitespace(body, skipWhitespace(body, keyEnd) + 1);
    const end = valueEnd(body, start);
    if (key === 'jsonData') span = { start, end };
    i = skipWhitespace(body, end);
    if (body.charCodeAt(i) === 0x2c) i = skipWhitespace(body, i + 1);
  }
  return span;
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
function compact(s: string, start: number, end: number): { doc: string; jsonb: boolean; depth: number } {
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

function isIndex(segment: string): boolean {
  return /^(0|[1-9]\d*)$/.test(segment);
}

function parsePath(rawPath: string): string[] {
  try {
    return rawPath.split('.').map((segment) => decodeURIComponent(segment));
  } catch {
    throw DomainError.badRequest('Invalid path: bad percent-encoding');
  }
}

/** The JSON text at `path` in a stored (compact) document, or undefined when there is none. */
export function valueAt(doc: string, path: readonly string[]): string | undefined {
  let i = 0;
  for (const segment of path) {
    const c = doc.charCodeAt(i);
    let found = -1;
    if (c === 0x7b) {
      // Stored documents are compact: a key's colon directly follows it, its value the colon.
      for (i++; doc.charCodeAt(i) === 0x22; ) {
        const keyStart = i;
        const keyEnd = stringEnd(doc, i);
        const valueStart = keyEnd + 1;
        i = valueEnd(doc, valueStart);
        if ((JSON.parse(doc.slice(keyStart, keyEnd)) as string) === segment) found = valueStart;
        if (doc.charCodeAt(i) === 0x2c) i++;
      }
    } else if (c === 0x5b && isIndex(segment)) {
      const wanted = Number(segment);
      for (let n = 0, j = i + 1; doc.charCodeAt(j) !== 0x5d; n++) {
        if (n === wanted) {
          found = j;
          break;
        }
        j = valueEnd(doc, j);
        if (doc.charCodeAt(j) === 0x2c) j++;
      }
    }
    if (found === -1) return undefined;
    i = found;
  }
  return doc.slice(i, valueEnd(doc, i));
}
