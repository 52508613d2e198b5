// Reading a JSON request body: content type, size limit, UTF-8, nesting depth (JSON_MAX_DEPTH),
// syntax and text the stores can hold (core/text.ts), each with the contract's error.
import { isUtf8 } from 'node:buffer';
import getRawBody from 'raw-body';
import type { Context, Next } from 'koa';
import { DomainError } from '../core/errors.js';
import { assertJsonDepth, DEFAULT_JSON_MAX_DEPTH, parseJson } from '../core/json.js';
import { assertStorableJson, mayHoldBadText } from '../core/text.js';
import type { AppState } from './state.js';

export const MiB = 1024 * 1024;
export const DEFAULT_BODY_LIMIT = MiB;

/** Middleware: the nesting every JSON body below it is held to (JSON_MAX_DEPTH). */
export function jsonDepth(maxDepth: number) {
  return function setJsonDepth(ctx: Context & { state: AppState }, next: Next): Promise<void> {
    ctx.state.jsonMaxDepth = maxDepth;
    return next();
  };
}

/** JSON_MAX_DEPTH for this request (its default where no `jsonDepth` middleware ran). */
export function jsonMaxDepth(ctx: Context): number {
  return (ctx.state as AppState).jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH;
}

/** 422 naming the member when the body nests deeper than JSON_MAX_DEPTH (plus its envelope). */
export function assertBodyDepth(ctx: Context, text: string, envelope = 0): void {
  assertJsonDepth(text, jsonMaxDepth(ctx), envelope);
}

function tooLarge(limit: number): DomainError {
  return DomainError.tooLarge(`Request body too large (limit ${limit / MiB} MiB)`);
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return ctx.get('transfer-encoding') !== '' || (length !== '' && length !== '0');
}

export interface BodyOptions {
  /** Bytes; DEFAULT_BODY_LIMIT when not given. */
  limit?: number;
  /** An absent or blank body reads as undefined instead of a 400. */
  optional?: boolean;
  /**
   * Top-level members kept exactly as sent, whatever their strings hold (JSON store jsonData), or
   * 'all': the whole body is such a document (Mango's /json-data).
   */
  verbatim?: ReadonlySet<string> | 'all';
  /**
   * Levels of envelope around the documents the body carries, allowed beyond JSON_MAX_DEPTH: 1 for
   * a JSON store item (jsonData nests JSON_MAX_DEPTH levels of its own), 3 for a configuration
   * import (document, kind, item). 0 when not given: the body's outermost value is level 1.
   */
  envelope?: number;
  /**
   * The caller first gives the text to a reader of a fixed shape that does not recurse (the bulk
   * reader: 2 levels), and calls assertBodyDepth itself before anything else parses it; a text the
   * text rule must parse is still measured here. Spares the usual 16 MiB bulk body the scan.
   */
  depthLater?: boolean;
}

/** Checks UTF-8 strictly: bytes that are not UTF-8 are the client's mistake, never U+FFFD. Drops a byte order mark. */
function utf8Bytes(bytes: Buffer): Buffer {
  if (!isUtf8(bytes)) throw DomainError.badRequest('Request body is not valid UTF-8');
  // A byte order mark is allowed, not content.
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}

/**
 * Reads the body as JSON text: a body is required unless `optional` (then an absent body reads as
 * undefined). Anything but application/json (any charset spelled utf-8) is refused, and so is text
 * nesting deeper than JSON_MAX_DEPTH (422 naming the member, before anything parses it) or a string
 * (or key) with U+0000 or an unpaired surrogate outside the `verbatim` members (422). The syntax is
 * checked here only where a suspect string made the text rule parse it: the caller parses.
 */
export async function readJsonText(ctx: Context, options: BodyOptions = {}): Promise<string | undefined> {
  const bytes = await readJsonBytes(ctx, options);
  return bytes === undefined ? undefined : jsonText(ctx, bytes, options);
}

/**
 * The first half of readJsonText: the body's bytes once its content type, size and UTF-8 are
 * checked (no byte order mark). For a reader of bytes in a fixed shape (the bulk reader); whatever
 * it declines goes through jsonText, the other half, before anything else reads it.
 */
export async function readJsonBytes(ctx: Context, options: BodyOptions = {}): Promise<Buffer | undefined> {
  const limit = options.limit ?? DEFAULT_BODY_LIMIT;
  if (!hasBody(ctx)) {
    if (options.optional) return undefined;
    throw DomainError.badRequest('A JSON request body is required');
  }
  if (!ctx.is('application/json')) {
    throw DomainError.badRequest('Unsupported content type: send Content-Type: application/json');
  }
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(ctx.get('content-type'))?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw DomainError.badRequest(`Unsupported charset ${charset}: send UTF-8`);
  }
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > limit) throw tooLarge(limit);
  let bytes: Buffer;
  try {
    bytes = await getRawBody(ctx.req, { limit, length: Number.isFinite(declared) ? declared : undefined });
  } catch (err) {
    const type = (err as { type?: unknown }).type;
    if (type === 'entity.too.large') throw tooLarge(limit);
    throw DomainError.badRequest('Could not read the request body');
  }
  return utf8Bytes(bytes);
}

/** The second half of readJsonText: the bytes as text, blank (undefined when `optional`), depth and text rule checked. */
export function jsonText(ctx: Context, bytes: Buffer, options: BodyOptions = {}): string | undefined {
  const text = bytes.toString('utf8');
  if (text.trim() === '') {
    if (options.optional) return undefined;
    throw DomainError.badRequest('A JSON request body is required');
  }
  // Before anything parses the text: JSON.parse is iterative, but a deep body costs memory and the
  // code after the parse recurses.
  if (!options.depthLater || mayHoldBadText(text)) assertBodyDepth(ctx, text, options.envelope);
  if (options.verbatim !== 'all') assertStorableJson(text, options.verbatim);
  return text;
}

/** Read at most this much of a body that should not be there: more is content whatever it says. */
const NO_BODY_READ_LIMIT = 1024;
/** What a client that always sends a body sends when it means none. */
const SAYS_NOTHING = /^\s*(null|\{\s*\})?\s*$/;

/**
 * For requests whose selection is the query alone: a body is refused (400 with `message`) so that
 * a client never believes its body narrowed what the request does. No body, zero bytes, blank text,
 * JSON `null` and `{}` count as none, whatever the content type; anything else is a body.
 */
export async function refuseBody(ctx: Context, message: string): Promise<void> {
  if (!hasBody(ctx)) return;
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > NO_BODY_READ_LIMIT) throw DomainError.badRequest(message);
  let bytes: Buffer;
  try {
    bytes = await getRawBody(ctx.req, { limit: NO_BODY_READ_LIMIT, length: Number.isFinite(declared) ? declared : undefined });
  } catch {
    throw DomainError.badRequest(message); // longer than any way of saying nothing, or cut off
  }
  if (!SAYS_NOTHING.test(bytes.toString('latin1'))) throw DomainError.badRequest(message);
}

/** Reads and parses a JSON body (see readJsonText). */
export async function readJson(ctx: Context, options: BodyOptions = {}): Promise<unknown> {
  const text = await readJsonText(ctx, options);
  return text === undefined ? undefined : parseJson(text);
}
