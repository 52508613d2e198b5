// Reading a JSON request body: content type, size limit and syntax, each with the contract's error.
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { DomainError } from '../core/errors.js';
import { parseJson } from '../core/json.js';

export const MiB = 1024 * 1024;
export const DEFAULT_BODY_LIMIT = MiB;

function tooLarge(limit: number): DomainError {
  return DomainError.tooLarge(`Request body too large (limit ${limit / MiB} MiB)`);
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return ctx.get('transfer-encoding') !== '' || (length !== '' && length !== '0');
}

/**
 * Reads the body as JSON text: a body is required unless `optional` (then an absent body reads as
 * undefined). Anything but application/json (any charset spelled utf-8) is refused.
 */
export async function readJsonText(ctx: Context, options: { limit?: number; optional?: boolean } = {}): Promise<string | undefined> {
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
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit, encoding: 'utf8', length: Number.isFinite(declared) ? declared : undefined });
  } catch (err) {
    const type = (err as { type?: unknown }).type;
    if (type === 'entity.too.large') throw tooLarge(limit);
    throw DomainError.badRequest('Could not read the request body');
  }
  if (text.trim() === '') {
    if (options.optional) return undefined;
    throw DomainError.badRequest('A JSON request body is required');
  }
  return text;
}


/** Reads and parses a JSON body (see readJsonText). */
export async function readJson(ctx: Context, options: { limit?: number; optional?: boolean } = {}): Promise<unknown> {
  const text = await readJsonText(ctx, options);
  return text === undefined ? undefined : parseJson(text);
}
