// Paths and query strings hold client text too (core/text.ts): every path segment and every query
// parameter must be UTF-8 percent-encoding of text the stores can hold, or the request is refused
// with 400 before anything reads it. Routers are lenient on their own: @koa/router keeps a
// segment it cannot decode as it is, and Koa's querystring turns bad bytes into U+FFFD.
import type { Context, Next } from 'koa';
import { DomainError } from '../core/errors.js';
import { textProblem } from '../core/text.js';

const MALFORMED = 'malformed percent-encoding (not UTF-8)';
/** Characters of a client's parameter name quoted back in a message. */
const MAX_LABEL = 100;

/** The decoded text, or the problem with it. */
function decode(encoded: string): { text: string } | { problem: string } {
  let text: string;
  try {
    text = decodeURIComponent(encoded);
  } catch {
    return { problem: MALFORMED };
  }
  const problem = textProblem(text);
  return problem === undefined ? { text } : { problem };
}

function checkPath(path: string): void {
  for (const segment of path.split('/')) {
    if (!segment.includes('%')) continue; // a raw request target is Latin-1 without NUL (Node's parser)
    const decoded = decode(segment);
    if ('problem' in decoded) throw DomainError.badRequest(`Invalid path: ${decoded.problem}`);
  }
}

/** A parameter as the client would recognise it: its decoded name, else the name as sent. */
function label(encodedName: string): string {
  const name = decode(encodedName.replace(/\+/g, ' '));
  const text = 'text' in name ? name.text : encodedName;
  return text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL)}…` : text;
}

function checkQuery(query: string): void {
  if (query === '') return;
  for (const parameter of query.split('&')) {
    const decoded = decode(parameter.replace(/\+/g, ' '));
    if (!('problem' in decoded)) continue;
    const eq = parameter.indexOf('=');
    throw DomainError.badRequest(`Invalid query parameter ${label(eq < 0 ? parameter : parameter.slice(0, eq))}: ${decoded.problem}`);
  }
}

/** Whether a request's query string is RQL, which the RQL parser reads (and refuses with 4001 and a position). */
export type IsRqlRequest = (method: string, path: string) => boolean;

/**
 * 400 (4005) for a path or query string that is not UTF-8 text the stores can hold. An RQL query
 * string is left to the RQL parser: the contract answers an RQL string that cannot be parsed with
 * 4001, and the parser applies the same rule to every decoded token.
 */
export function urlText(isRql: IsRqlRequest) {
  return async function checkUrlText(ctx: Context, next: Next): Promise<void> {
    checkPath(ctx.path);
    if (!isRql(ctx.method, ctx.path)) checkQuery(ctx.querystring);
    await next();
  };
}
