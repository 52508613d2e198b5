// The RQL compiler used by every list endpoint: parse → check → toSql, with the contract's errors.
import { DomainError } from '../errors.js';
import { checkRql, RqlCheckError, RqlLimitError, type ResourceDef } from './check.js';
import { parseRql, RqlSyntaxError, UnknownOperatorError } from './parse.js';
import { SqlParams, toSql, type SqlQueryParts } from './sql.js';

export type { ResourceDef } from './check.js';
export { SqlParams, type SqlQueryParts } from './sql.js';

/**
 * Compiles the raw (percent-encoded) query string for one resource. `params` may already hold
 * values of conditions the caller adds (permission filters); RQL values are appended after them.
 */
export function compileRql(resource: ResourceDef, rawQuery: string, params?: SqlParams): SqlQueryParts {
  try {
    return toSql(resource, checkRql(resource, parseRql(rawQuery)), params);
  } catch (err) {
    if (err instanceof RqlSyntaxError) throw new DomainError('bad-request', `Invalid RQL: ${err.message}`, { statusName: 'RQL_PARSE_FAILURE' });
    if (err instanceof RqlCheckError || err instanceof UnknownOperatorError) throw new DomainError('bad-request', err.message, { statusName: 'RQL_VISIT_ERROR' });
    if (err instanceof RqlLimitError) throw DomainError.badRequest(err.message);
    throw err;
  }
}
