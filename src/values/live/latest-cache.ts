// The latest-value cache: each point's newest stored values, kept in an LRU so that "latest" reads and
// the live-value decision ("is this newer than the point's latest?") stay off the value store. It is
// the stored view of the newest-value model (newest.ts), which alone updates and invalidates it.
import { LRUCache } from 'lru-cache';
import type { PointValueStore, StoredValue, ValueBatch } from '../../store/values/types.js';
import { storedAt } from '../batch.js';

/** Newest values kept per point; deeper "latest" reads go to the store. */
export const CACHE_DEPTH = 16;

interface Entry {
  /** Newest first, at most CACHE_DEPTH. */
  values: StoredValue[];
  /** The store holds no values beyond these. */
  complete: boolean;
}

/**
 * A point's values being read from the store. A write of the point that ends meanwhile makes the read
 * out of date: it is not cached (else the cache would hold it until the point's next write), and later
 * readers start a read of their own.
 */
interface Load {
  entry: Promise<Entry>;
  outdated: boolean;
}

export class LatestValueCache {
  private readonly entries: LRUCache<number, Entry>;
  private readonly loads = new Map<number, Load>();

  constructor(
    private readonly store: PointValueStore,
    maxPoints: number,
  ) {
    this.entries = new LRUCache({ max: maxPoints });
  }

  private async entry(series: number): Promise<Entry> {
    const cached = this.entries.get(series);
    if (cached) return cached;
    const running = this.loads.get(series);
    if (running) return running.entry;
    const load: Load = { entry: this.store.latest(series, CACHE_DEPTH).then((values) => ({ values, complete: values.length < CACHE_DEPTH })), outdated: false };
    this.loads.set(series, load);
    try {
      const e = await load.entry;
      if (!load.outdated) this.entries.set(series, e);
      return e;
    } finally {
      if (this.loads.get(series) === load) this.loads.delete(series);
    }
  }

  /** A write of the series ended (or another instance's may have): a read under way is out of date. */
  private outdate(series: number): void {
    const load = this.loads.get(series);
    if (!load) return;
    load.outdated = true;
    this.loads.delete(series);
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
   * Records values that are now durable (ascending by ts, one series): those newer than the head
   * become the newest; a late one inside the window held makes the next read reload.
   */
  applyWritten(series: number, written: readonly StoredValue[]): void {
    this.outdate(series);
    const e = this.entries.get(series);
    if (!e) return;
    const head = e.values[0];
    const newer: StoredValue[] = [];
    let stale = false;
    for (const v of written) {
      if (head === undefined || v.ts > head.ts) newer.push(v);
      // A late value inside the window we hold (or one we would have to hold): reload on the next
      // read. Keep going: values after it (ascending) may still be newer than the head.
      else if (v.ts >= e.values[e.values.length - 1]!.ts || e.complete) stale = true;
    }
    if (stale) {
      this.entries.delete(series);
      return;
    }
    if (newer.length > 0) {
      const newest = newer.slice(-CACHE_DEPTH).reverse();
      e.values = [...newest, ...e.values].slice(0, CACHE_DEPTH);
      e.complete = e.complete && e.values.length < CACHE_DEPTH;
    }
  }

  /**
   * The same as applyWritten for a whole batch when nobody listens for live values: only each
   * series' newest values are looked at, without an object per value.
   */
  applyBatch(b: ValueBatch): void {
    const newest = new Map<number, number[]>(); // indices, ascending by ts, at most CACHE_DEPTH
    const stale = new Set<number>();
    let series = -1;
    let entry: Entry | undefined;
    let top: number[] | undefined;
    for (let i = 0; i < b.length; i++) {
      const s = b.series[i]!;
      if (s !== series) {
        series = s;
        if (this.loads.size > 0) this.outdate(s);
        entry = this.entries.peek(s);
        top = newest.get(s);
        if (entry && !top) newest.set(s, (top = []));
      }
      if (!entry || !top) continue;
      const t = b.ts[i]!;
      const head = entry.values[0];
      if (head !== undefined && t <= head.ts) {
        if (t >= entry.values[entry.values.length - 1]!.ts || entry.complete) stale.add(s);
        continue;
      }
      insertNewest(top, b.ts, i);
    }
    for (const [s, indices] of newest) {
      const e = this.entries.peek(s);
      if (!e) continue;
      if (stale.has(s)) {
        this.entries.delete(s);
        continue;
      }
      if (indices.length === 0) continue;
      const added = indices.map((i) => storedAt(b, i)).reverse();
      e.values = [...added, ...e.values].slice(0, CACHE_DEPTH);
      e.complete = e.complete && e.values.length < CACHE_DEPTH;
    }
  }

  /** Forgets every point (another instance may have written any of them). */
  clear(): void {
    for (const load of this.loads.values()) load.outdated = true;
    this.loads.clear();
    this.entries.clear();
  }

  invalidate(series: number): void {
    this.outdate(series);
    this.entries.delete(series);
  }
}

/** Keeps `top` the indices of the CACHE_DEPTH newest timestamps seen, ascending; a repeated ts keeps the later row. */
function insertNewest(top: number[], ts: Float64Array, i: number): void {
  const t = ts[i]!;
  let at = top.length;
  while (at > 0 && ts[top[at - 1]!]! > t) at--;
  if (at > 0 && ts[top[at - 1]!]! === t) {
    top[at - 1] = i;
    return;
  }
  if (at === 0 && top.length >= CACHE_DEPTH) return;
  top.splice(at, 0, i);
  if (top.length > CACHE_DEPTH) top.shift();
}
