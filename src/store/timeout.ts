// Store calls have a time-out of their own (STORE_TIMEOUT_MS): a server that stopped answering (frozen,
// a network path that drops packets) holds a request no longer than that, then it is answered 503.
// Killed or refused connections fail at once anyway; this is for the server that is there but silent.

/** A store call that did not finish in time; `code` makes store/unavailable.ts read it as unreachable. */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
  readonly code = 'ETIMEDOUT';

  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
  }
}

/**
 * `work`'s outcome, or a StoreTimeoutError once `ms` have passed. The work itself goes on (what it
 * holds, a connection or a lock, is the engine's to bound and free); its late outcome is ignored.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(what, ms)), ms);
  });
  work.catch(() => undefined); // a failure after the time-out has no one to tell
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/**
 * Whether `err` (or what caused it) is a store time-out: ours, or node-postgres's `query_timeout` ("Query
 * read timeout"), after which the connection is in an unknown state (its statement may still run) and
 * must be closed.
 */
export function isStoreTimeout(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 4) return false;
  return err instanceof StoreTimeoutError || err.message === 'Query read timeout' || isStoreTimeout(err.cause, depth + 1);
}
