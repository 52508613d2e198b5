// Single query parameters: one value each (a repeated one is a 400). Mango clients write a parameter
// they have no value for as `name=` (empty): the flag and text readers take that as "not given".
import { DomainError } from '../core/errors.js';
import type { AppContext } from '../http/state.js';

/** The parameter as given (empty included); undefined when absent. */
export function singleQuery(ctx: AppContext, name: string): string | undefined {
  const text = ctx.query[name];
  if (Array.isArray(text)) throw DomainError.badRequest(`Invalid query parameter ${name}: given more than once`);
  return text;
}

function single(ctx: AppContext, name: string): string | undefined {
  return singleQuery(ctx, name) || undefined;
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
