// The line-protocol write routes answer errors in InfluxDB's shape as well as ours, so its clients
// and Telegraf show the reason: `code` (2.x's word for the status), `error` (1.x's field) and, for a
// refusal about one line, `line`. Our `message` is also InfluxDB's.
import type { DomainError } from '../core/errors.js';
import { canonicalApiPath, API_PREFIX } from '../core/api-paths.js';

const WRITE_PATHS = new Set([`${API_PREFIX}/write`, `${API_PREFIX}/api/v2/write`]);

const INFLUX_CODES: Record<number, string> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not found',
  405: 'method not allowed',
  409: 'conflict',
  413: 'request too large',
  422: 'unprocessable entity',
  429: 'too many requests',
  503: 'unavailable',
};

export interface InfluxErrorFields {
  code: string;
  error: string;
  line?: number;
}

/** Whether the request path (as sent: before the alias is rewritten) is one of the write routes. */
export function isInfluxWritePath(path: string): boolean {
  const canonical = (canonicalApiPath(path)?.path ?? path).toLowerCase().replace(/\/$/, '');
  return WRITE_PATHS.has(canonical);
}

export function influxErrorFields(err: DomainError, status: number): InfluxErrorFields {
  const fields: InfluxErrorFields = { code: INFLUX_CODES[status] ?? 'internal error', error: err.message };
  const line = (err as { line?: unknown }).line;
  if (typeof line === 'number') fields.line = line;
  return fields;
}
