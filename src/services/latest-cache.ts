// The latest-value cache: each point's newest values, kept in an LRU so that "latest" reads and
// the live-value decision ("is this newer than the point's latest?") stay off the value store.
import { LRUCache } from 'lru-cache';
import type { PointValueStore, StoredValue } from '../store/values/types.js';

/** Newest values kept per point; deeper "latest" reads go to the store. */
export const CACHE_DEPTH = 16;

interface Entry {
  /** Newest first, at most CACHE_DEPTH. */
  values: StoredValue[];
  /** The store holds no values beyond these. */
  complete: boolean;
}

export class LatestValueCache {
  private readonly entries: LRUCache<number, Entry>;

  constructor(
    private readonly store: PointValueStore,
    maxPoints: number,
  ) {
    this.entries = new LRUCache({ max: maxPoints });
  }

  private async entry(series: number): Promise<Entry> {
    let e = this.entries.get(series);
    if (!e) {
      const values = await this.store.latest(series, CACHE_DEPTH);
      e = { values, complete: values.length < CACHE_DEPTH };
      this.entries.set(series, e);
    }
    return e;
  }

  /** Newest first, at most `limit`. */
  async latest(series: number, limit: number): Promise<StoredValue[]> {
    const e = await this.entry(series);
    if (limit <= e.values.length || e.complete) return e.values.slice(0, limit);
    return this.store.latest(series, limit);
  }

  async newest(series: number): Promise<StoredValue | undefined> {
    return (await this.entry(series)).values[0];
  }

  /**
   * Records values that are now durable (ascending by ts, one series). Returns those that became
   * the point's newest, in order: they are live values.
   */
  applyWritten(series: number, written: readonly StoredValue[]): StoredValue[] {
    const e = this.entries.get(series);
    if (!e) return [];
    const head = e.values[0];
    const live: StoredValue[] = [];
    let stale = false;
    for (const v of written) {
      if (head === undefined || v.ts > head.ts) live.push(v);
      // A late value inside the window we hold (or one we would have to hold): reload on the next
      // read. Keep going: values after it (ascending) may still be newer than the head, hence live.
      else if (v.ts >= e.values[e.values.length - 1]!.ts || e.complete) stale = true;
    }
    if (stale) {
      this.entries.delete(series);
      return live;
    }
    if (live.length > 0) {
      const newest = live.slice(-CACHE_DEPTH).reverse();
      e.values = [...newest, ...e.values].slice(0, CACHE_DEPTH);
      e.complete = e.complete && e.values.length < CACHE_DEPTH;
    }
    return live;
  }

  invalidate(series: number): void {
    this.entries.delete(series);
  }
}
