// A value store whose server cannot be reached answers as the metadata store does (store/unavailable.ts):
// every verb that fails because the server is gone rejects with the store's 503 instead of whatever
// its driver threw, so a request meets "try again shortly", never a 500, and the service keeps running.
// open.ts wraps the server engines (PostgreSQL, QuestDB) in it; the embedded DuckDB is not wrapped (it
// has no server to lose, and no time-out).
//
// With `timeoutMs` (STORE_TIMEOUT_MS) a server that is there but silent (frozen) counts as gone after
// that long: each read, each batch of a streamed read, a delete and a ping wait at most that, then 503.
// Appends are bounded by the write buffer instead (write-buffer.ts, on the write queue: write-queue.ts),
// which answers its writers at the time-out but keeps its place until the engine's append has ended, so
// a frozen server never piles appends up.
import { withTimeout } from '../timeout.js';
import { isStoreUnreachable, storeUnavailable } from '../unavailable.js';
import type { PointValueStore } from './types.js';

/** The store's name in its 503 message. */
export const POINT_VALUE_STORE = 'The point-value store';

/** `isUnavailable`: what counts as the server being unavailable (an engine may add its own failures). */
export function withUnavailableAsDomainError(
  store: PointValueStore,
  isUnavailable: (err: unknown) => boolean = isStoreUnreachable,
  timeoutMs?: number,
): PointValueStore {
  const unavailable = (err: unknown): never => {
    throw isUnavailable(err) ? storeUnavailable(POINT_VALUE_STORE, err) : err;
  };
  const bounded = <T>(work: Promise<T>, what: string): Promise<T> => (timeoutMs === undefined ? work : withTimeout(work, timeoutMs, `${POINT_VALUE_STORE} (${what})`));
  const wrapped: PointValueStore = {
    engine: store.engine,
    ...(store.timeRange ? { timeRange: store.timeRange } : {}),
    ...(store.appendConcurrency ? { appendConcurrency: store.appendConcurrency } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    append: (batch) => store.append(batch).catch(unavailable),
    latest: (series, limit) => bounded(store.latest(series, limit), 'latest').catch(unavailable),
    async *range(series, from, to, limit) {
      const batches = store.range(series, from, to, limit)[Symbol.asyncIterator]();
      try {
        for (;;) {
          // The time to the next batch: the time the caller spends on one is not the store's.
          const next = await bounded(batches.next(), 'range');
          if (next.done) return;
          yield next.value;
        }
      } catch (err) {
        unavailable(err);
      } finally {
        // Ends the engine's read (after its batch in progress, if one timed out).
        void batches.return?.()?.catch(() => undefined);
      }
    },
    valueAt: (series, t) => bounded(store.valueAt(series, t), 'valueAt').catch(unavailable),
    buckets: (series, from, to) => bounded(store.buckets(series, from, to), 'buckets').catch(unavailable),
    delete: (series, from, to) => bounded(store.delete(series, from, to), 'delete').catch(unavailable),
    ping: () => bounded(store.ping(), 'ping').catch(unavailable),
    close: () => store.close(),
  };
  if (store.bucketColumns) {
    const columns = store.bucketColumns.bind(store);
    wrapped.bucketColumns = (series, from, to) => bounded(columns(series, from, to), 'buckets').catch(unavailable);
  }
  if (store.changedElsewhere) wrapped.changedElsewhere = (earliest) => store.changedElsewhere!(earliest);
  if (store.compact) wrapped.compact = () => store.compact!().catch(unavailable);
  // Maintenance of many statements (each bounded by the engine) may rightly take longer than one call.
  if (store.dropBefore) wrapped.dropBefore = (before) => store.dropBefore!(before).catch(unavailable);
  if (store.seriesBefore) wrapped.seriesBefore = (before) => store.seriesBefore!(before).catch(unavailable);
  return wrapped;
}
