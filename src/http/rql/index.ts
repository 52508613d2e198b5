// The RQL compiler used by every list endpoint: parse → check → toSql, with the contract's errors.
import { ApiError } from '../errors.js';
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
    if (err instanceof RqlSyntaxError) throw new ApiError(400, 'RQL_PARSE_FAILURE', `Invalid RQL: ${err.message}`);
    if (err instanceof RqlCheckError || err instanceof UnknownOperatorError) throw new ApiError(400, 'RQL_VISIT_ERROR', err.message);
    if (err instanceof RqlLimitError) throw ApiError.badRequest(err.message);
    throw err;
  }
}
