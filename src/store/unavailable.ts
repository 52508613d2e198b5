// A store server that cannot be reached (stopped, restarting, network down) is not a bug of ours:
// requests that need it are answered 503 with the error body, and succeed again once it is back.
import { DomainError } from '../core/errors.js';
import { isStoreTimeout } from './timeout.js';

/** Node's socket errors that mean the server is not there (or went away mid-conversation). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * SQLSTATEs of an unavailable PostgreSQL-protocol server: class 08 (connection exception), 57P01–57P03
 * (administrator or crash shutdown, cannot connect now) and 53300 (too many connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** node-postgres words a lost or never-made connection in its messages, without a code. */
const LOST_CONNECTION = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection closed)/;

/** Whether `err` (or what caused it) says the server could not be reached. */
export function isStoreUnreachable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const { code, message, cause, errors } = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || isUnavailableSqlState(code))) return true;
  if (typeof message === 'string' && LOST_CONNECTION.test(message)) return true;
  if (isStoreTimeout(err)) return true; // a server that does not answer in time is as good as gone
  // Connecting to a name with several addresses fails with one error per address.
  if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => isStoreUnreachable(e, depth + 1))) return true;
  return isStoreUnreachable(cause, depth + 1);
}

/**
 * An established connection that broke (the server ended it, or it reset), as opposed to one that could
 * not be made: a statement that failed this way may be sent again on a new connection if it is safe to.
 */
export function isLostConnection(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' || code === 'EPIPE' || code === '57P01' || code === '57P02' || (typeof message === 'string' && /^Connection terminated unexpectedly/.test(message));
}

/** Seconds a client is told to wait before trying again. */
const RETRY_AFTER_SECONDS = 5;

/** The 503 for `store` ("The metadata store"): the same wording whatever the driver said (kept as the cause, for the log). */
export function storeUnavailable(store: string, cause?: unknown): DomainError {
  return new DomainError('unavailable', `${store} is unavailable; try again shortly`, { retryAfterSeconds: RETRY_AFTER_SECONDS, cause });
}

/** Rethrows `err` as the store's 503 when it says the server is unreachable, else (and a DomainError) as it is. */
export function rethrowUnavailable(store: string): (err: unknown) => never {
  return (err: unknown) => {
    throw !(err instanceof DomainError) && isStoreUnreachable(err) ? storeUnavailable(store, err) : err;
  };
}
