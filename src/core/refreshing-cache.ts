// A read-through cache whose entries are refreshed in the background once older than `refreshAfterMs`:
// a warm entry is always answered from memory, so no request waits on the store for it. Changes made
// through this service (or announced by another instance) forget the entry, and the next read loads it.
import { LRUCache } from 'lru-cache';

/** The loader's own failure, told apart from lru-cache aborting a load because the key was forgotten. */
class LoadFailure {
  constructor(readonly cause: unknown) {}
}

export class RefreshingCache<K extends string | number, V extends object> {
  private readonly cache: LRUCache<K, V>;

  constructor(
    private readonly load: (key: K) => Promise<V | undefined>,
    options: { max: number; refreshAfterMs: number },
  ) {
    this.cache = new LRUCache<K, V>({
      max: options.max,
      ttl: options.refreshAfterMs,
      allowStale: true, // a stale entry is answered while its refresh runs
      noDeleteOnFetchRejection: true, // a failed refresh keeps the old entry; the next read tries again
      fetchMethod: async (key) => {
        try {
          return await load(key);
        } catch (err) {
          throw new LoadFailure(err);
        }
      },
    });
  }

  /** The cached value (refreshed in the background when old), else loaded; undefined when the store has none. */
  async get(key: K): Promise<V | undefined> {
    // A load the cache aborted (the key was forgotten meanwhile) may hold what was just changed: load again.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        return await this.cache.fetch(key);
      } catch (err) {
        if (err instanceof LoadFailure) throw err.cause;
      }
    }
    return this.load(key);
  }

  set(key: K, value: V): void {
    this.cache.set(key, value);
  }

  forget(key: K): void {
    this.cache.delete(key);
  }

  forgetAll(): void {
    this.cache.clear();
  }
}
