// A value store whose server cannot be reached answers as the metadata store does (store/unavailable.ts):
// every verb that fails because the server is gone rejects with the store's 503 instead of whatever
// its driver threw, so a request meets "try again shortly", never a 500, and the service keeps running.
// Wraps any engine; an embedded one (DuckDB) never throws such errors and passes through unchanged.
import { isStoreUnreachable, storeUnavailable } from '../unavailable.js';
import type { PointValueStore } from './types.js';

const STORE_NAME = 'The point-value store';

/** `isUnavailable`: what counts as the server being unavailable (an engine may add its own failures). */
export function withUnavailableAsDomainError(store: PointValueStore, isUnavailable: (err: unknown) => boolean = isStoreUnreachable): PointValueStore {
  const unavailable = (err: unknown): never => {
    throw isUnavailable(err) ? storeUnavailable(STORE_NAME, err) : err;
  };
  const wrapped: PointValueStore = {
    engine: store.engine,
    ...(store.timeRange ? { timeRange: store.timeRange } : {}),
    ...(store.appendConcurrency ? { appendConcurrency: store.appendConcurrency } : {}),
    append: (batch) => store.append(batch).catch(unavailable),
    latest: (series, limit) => store.latest(series, limit).catch(unavailable),
    async *range(series, from, to, limit) {
      try {
        yield* store.range(series, from, to, limit);
      } catch (err) {
        unavailable(err);
      }
    },
    valueAt: (series, t) => store.valueAt(series, t).catch(unavailable),
    buckets: (series, from, to) => store.buckets(series, from, to).catch(unavailable),
    delete: (series, from, to) => store.delete(series, from, to).catch(unavailable),
    ping: () => store.ping().catch(unavailable),
    close: () => store.close(),
  };
  if (store.changedElsewhere) wrapped.changedElsewhere = (earliest) => store.changedElsewhere!(earliest);
  if (store.compact) wrapped.compact = () => store.compact!().catch(unavailable);
  if (store.dropBefore) wrapped.dropBefore = (before) => store.dropBefore!(before).catch(unavailable);
  if (store.seriesBefore) wrapped.seriesBefore = (before) => store.seriesBefore!(before).catch(unavailable);
  return wrapped;
}
