// Single query parameters as Mango clients send them: node-mango-client writes a parameter it has no
// value for as `name=` (empty), which means "not given".
import { DomainError } from '../core/errors.js';
import type { AppContext } from '../http/state.js';

function single(ctx: AppContext, name: string): string | undefined {
  const text = ctx.query[name];
  if (Array.isArray(text)) throw DomainError.badRequest(`Invalid query parameter ${name}: given more than once`);
  return text === '' ? undefined : text;
}

/** `true` or `false`; undefined when absent or empty. */
export function queryFlag(ctx: AppContext, name: string): boolean | undefined {
  const text = single(ctx, name);
  if (text === undefined) return undefined;
  if (text === 'true' || text === 'false') return text === 'true';
  throw DomainError.badRequest(`Invalid query parameter ${name}: must be true or false`);
}

/** A text parameter; undefined when absent or empty. */
export function queryText(ctx: AppContext, name: string): string | undefined {
  return single(ctx, name);
}
