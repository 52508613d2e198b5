// A read-through cache whose entries are refreshed in the background once older than `refreshAfterMs`:
// a warm entry is always answered from memory, so no request waits on the store for it. Changes made
// through this service (or announced by another instance) forget the entry, and the next read loads it.
import { LRUCache } from 'lru-cache';

/** The loader's own failure, told apart from lru-cache aborting a load because the key was forgotten. */
class LoadFailure {
  constructor(readonly cause: unknown) {}
}

export interface RefreshingCacheOptions<K, V> {
  max: number;
  /** 0: entries are never refreshed (nothing but forget() changes what they hold). */
  refreshAfterMs: number;
  /**
   * Loads many keys in one go (a key missing from the answer: the store has none). Given, the
   * refreshes that fall due in one turn of the event loop are made together: a bulk write of a
   * thousand points would otherwise refresh them with a thousand statements every `refreshAfterMs`
   * (on PGlite, each runs on this thread: the WebSocket bench measured some 0.5 s of every second).
   */
  loadMany?: (keys: K[]) => Promise<ReadonlyMap<K, V>>;
}

/** Refreshes waiting for the next turn of the event loop, and the load they will share. */
interface DueRefreshes<K, V> {
  keys: K[];
  loaded: Promise<ReadonlyMap<K, V>>;
}

export class RefreshingCache<K extends string | number, V extends object> {
  private readonly cache: LRUCache<K, V>;
  private due: DueRefreshes<K, V> | undefined;

  constructor(
    private readonly load: (key: K) => Promise<V | undefined>,
    private readonly options: RefreshingCacheOptions<K, V>,
  ) {
    this.cache = new LRUCache<K, V>({
      max: options.max,
      ttl: options.refreshAfterMs,
      allowStale: true, // a stale entry is answered while its refresh runs
      noDeleteOnFetchRejection: true, // a failed refresh keeps the old entry; the next read tries again
      fetchMethod: async (key, stale) => {
        try {
          // A first load is awaited by its reader: it does not wait for others to join it.
          return stale !== undefined && options.loadMany ? await this.refreshWithOthers(key) : await load(key);
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

  /** Caches `value` unless the key is cached already (a warm-up must not replace a fresher entry). */
  prime(key: K, value: V): void {
    if (!this.cache.has(key)) this.cache.set(key, value);
  }

  /** How many entries are cached. */
  get size(): number {
    return this.cache.size;
  }

  forget(key: K): void {
    this.cache.delete(key);
  }

  forgetAll(): void {
    this.cache.clear();
  }

  /** Joins the refreshes due in this turn of the event loop: one loadMany for all of them. */
  private async refreshWithOthers(key: K): Promise<V | undefined> {
    if (!this.due) {
      const keys: K[] = [];
      const loaded = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.due = undefined; // refreshes asked for from now on make the next batch
        return this.options.loadMany!(keys);
      });
      this.due = { keys, loaded };
    }
    this.due.keys.push(key);
    return (await this.due.loaded).get(key);
  }
}
