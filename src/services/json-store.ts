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
import { compact, isIndex, parsePath, skipWhitespace, stringEnd, valueAt, valueEnd } from '../core/json-text.js';
import { DomainError } from '../core/errors.js';
import { MAX_LIMIT } from '../core/rql/check.js';
import type { Validator } from '../core/validation.js';
import { jsonStoreResource, type JsonStoreItem, type JsonStoreRecord, type JsonStoreRepository, type JsonStoreValues } from '../store/metadata/json-store.js';
import { assertPermission, normaliseRoles, USER_ROLE, type Principal } from './permissions.js';
import { generateXid, listQuery, translateDuplicateXid, type ListResult } from './resources.js';

export const MAX_ITEM_BYTES = 1024 * 1024;
/** Body limit of JSON store writes: the item plus its envelope and whitespace. */
export const JSON_STORE_BODY_LIMIT = 2 * MAX_ITEM_BYTES;
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

/** An item's fields besides its document, as a write gives them: left out, they are kept (see put()). */
export interface JsonStoreFields {
  xid?: string;
  name?: string;
  readPermission?: string[];
  editPermission?: string[];
}

/** A document ready to store: its compact text and whether JSONB can hold it. */
export type StoredDocument = Pick<JsonStoreValues, 'doc' | 'jsonb'>;

/** Rounds of read, edit and compare-and-set before an edit that keeps meeting other writes gives up. */
const MAX_EDIT_ATTEMPTS = 10;

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

  /** The XIDs of every item the user may read, in code-point order, as a JSON array (at most MAX_LIMIT). */
  xids(user: Principal): Promise<string> {
    return this.repo.xids(listQuery(user, jsonStoreResource, '', 't.read_permission'), MAX_LIMIT);
  }

  async get(user: Principal, xid: string): Promise<JsonStoreItem> {
    const item = await this.repo.findItem(xid);
    if (!item) throw notFound();
    assertPermission(user, item.readPermission);
    return item;
  }

  /** The JSON text of the value at a dot path (`rawPath` still percent-encoded). */
  async getPath(user: Principal, xid: string, rawPath: string): Promise<string> {
    return (await this.getAt(user, xid, rawPath)).value;
  }

  /** The item (without its document) and the JSON text of the value at a dot path. */
  async getAt(user: Principal, xid: string, rawPath: string): Promise<{ record: JsonStoreRecord; value: string }> {
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
        return { record: read.record, value: read.value };
      }
    }
    const { doc, ...record } = await this.get(user, xid);
    const value = valueAt(doc, path);
    if (value === undefined) throw noValue();
    return { record, value };
  }

  /** POST: creates (created: true) or, when the XID exists, replaces. */
  async save(user: Principal, bodyText: string): Promise<{ item: JsonStoreItem; created: boolean }> {
    const { input, doc } = this.parse(bodyText);
    return this.createOrReplace(user, input.xid ?? generateXid('JS'), input, doc);
  }

  /**
   * Creates item `xid` with `doc`, or replaces the document of the existing one (Mango's POST
   * /json-data/<xid>). Fields left out keep their stored values; a new item needs a name and gets
   * the default permissions for those left out.
   */
  async put(user: Principal, xid: string, fields: JsonStoreFields, doc: StoredDocument): Promise<{ item: JsonStoreItem; created: boolean }> {
    this.validator.validate('xid', xid, 'xid');
    return this.createOrReplace(user, xid, fields, doc);
  }

  /**
   * Replaces the document of item `xid` by `edit` of its current text, and the fields given
   * (Mango's path writes and merges). Needs read and edit permission. Compare and set: an edit that
   * met another write is made again on the new text, so none is lost.
   */
  async edit<T>(user: Principal, xid: string, fields: JsonStoreFields, edit: (doc: string) => { doc: string; answer: T }): Promise<{ item: JsonStoreItem; answer: T }> {
    for (let attempt = 0; attempt < MAX_EDIT_ATTEMPTS; attempt++) {
      const existing = await this.repo.findItem(xid);
      if (!existing) throw notFound();
      assertPermission(user, existing.readPermission);
      assertPermission(user, existing.editPermission);
      const { doc, answer } = edit(existing.doc);
      const item = await this.replaceExisting(user, existing, fields, this.checked(compact(doc, 0, doc.length)), existing.doc);
      if (item) return { item, answer };
    }
    throw DomainError.conflict('The item kept changing during the update: try again');
  }

  /** A whole request body as a document (Mango's /json-data bodies), held to the item limits. */
  document(bodyText: string): StoredDocument {
    parseJson(bodyText); // the scanners below expect JSON: a syntax error is the client's 400
    return this.checked(compact(bodyText, 0, bodyText.length));
  }

  /** PUT: replaces the item; the body's xid, when given, renames it. */
  async replace(user: Principal, xid: string, bodyText: string): Promise<JsonStoreItem> {
    const existing = await this.repo.findOne('xid', xid);
    if (!existing) throw notFound();
    assertPermission(user, existing.readPermission);
    assertPermission(user, existing.editPermission);
    const { input, doc } = this.parse(bodyText);
    return (await this.replaceExisting(user, existing, input, doc))!;
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

  private async createOrReplace(user: Principal, xid: string, fields: JsonStoreFields, doc: StoredDocument): Promise<{ item: JsonStoreItem; created: boolean }> {
    // A create racing another create of the same XID turns into a replace on the second pass.
    for (let attempt = 0; attempt < 2; attempt++) {
      const existing = await this.repo.findOne('xid', xid);
      if (existing) return { item: (await this.replaceExisting(user, existing, fields, doc))!, created: false };
      this.checkFields(fields);
      const created = await this.repo.insertItem({
        xid,
        name: fields.name!,
        readPermission: normaliseRoles(fields.readPermission ?? [USER_ROLE]),
        editPermission: normaliseRoles(fields.editPermission ?? []),
        ...doc,
      });
      if (created) return { item: created, created: true };
    }
    throw DomainError.conflict('XID is already in use');
  }

  /**
   * Stores `fields` (left out: kept) and `doc` over `existing`. With `expectedDoc`, only if the
   * stored document is still that text (else undefined); without it a vanished item is a 404.
   */
  private async replaceExisting(
    user: Principal,
    existing: JsonStoreRecord,
    fields: JsonStoreFields,
    doc: StoredDocument,
    expectedDoc?: string,
  ): Promise<JsonStoreItem | undefined> {
    assertPermission(user, existing.readPermission);
    assertPermission(user, existing.editPermission);
    this.checkFields(fields, existing.name);
    const saved = await this.repo
      .replaceItem(
        existing.id,
        {
          xid: fields.xid ?? existing.xid,
          name: fields.name ?? existing.name,
          readPermission: normaliseRoles(fields.readPermission ?? existing.readPermission),
          editPermission: normaliseRoles(fields.editPermission ?? existing.editPermission),
          ...doc,
        },
        expectedDoc,
      )
      .catch((err: unknown) => {
        throw translateDuplicateXid(err);
      });
    if (!saved && expectedDoc === undefined) throw notFound();
    return saved;
  }

  /** Fields given apart from a body (Mango's query parameters), held to the item schema; `name` is needed unless one is stored. */
  private checkFields(fields: JsonStoreFields, storedName?: string): void {
    const { xid, name = storedName, readPermission, editPermission } = fields;
    const item: Record<string, unknown> = { jsonData: null };
    for (const [k, v] of Object.entries({ xid, name, readPermission, editPermission })) if (v !== undefined) item[k] = v;
    this.validator.validate('json-store', item);
  }

  /** A compact document held to the item limits: 413 beyond 1 MiB, 422 nesting deeper than JSON_MAX_DEPTH. */
  private checked({ depth, ...doc }: ReturnType<typeof compact>): StoredDocument {
    if (Buffer.byteLength(doc.doc, 'utf8') > MAX_ITEM_BYTES) {
      throw DomainError.tooLarge(`JSON store item too large: jsonData is limited to ${MAX_ITEM_BYTES} bytes (1 MiB)`);
    }
    if (depth > this.maxDepth) throw DomainError.invalid('jsonData', nestsTooDeep(this.maxDepth), OBJECT_TYPE);
    return doc;
  }

  /** Validates the envelope and takes jsonData from the text itself, not from JSON.parse's result. */
  private parse(bodyText: string): { input: JsonStoreInput; doc: StoredDocument } {
    // Text outside jsonData that PostgreSQL cannot hold was refused where the body was read.
    const input = this.validator.validate<JsonStoreInput>('json-store', parseJson(bodyText));
    const span = jsonDataSpan(bodyText);
    if (!span) throw DomainError.invalid('jsonData', 'is required', OBJECT_TYPE);
    return { input, doc: this.checked(compact(bodyText, span.start, span.end)) };
  }
}

// ---- The envelope of a /json-store body

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

