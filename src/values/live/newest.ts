// Each point's newest value: one model, with the views the ingest pipeline and the reads need.
// - newest stored: durable in the store (the latest-value cache, latest-cache.ts). `latest` reads
//   come from it, and it is what the bus compares with before anything was published.
// - newest accepted: from a source or PUT, stored or not. A value logging did not store is still the
//   point's latest: `latest()` answers it while it is newer than the newest stored.
// - newest published: the newest value put on the live bus (bus.ts), what "newer" means there; it is
//   ahead of the store while a write is under way.
// - newest logged: the newest value point logging chose to store (its write may be under way), what
//   ON_CHANGE and ON_TS_CHANGE compare the next value with (ingest/logging.ts asks here).
// What makes a view out of date is written once, below "Invalidation", by what happened.
import { LRUCache } from 'lru-cache';
import type { PointValueStore, StoredValue, ValueBatch } from '../../store/values/types.js';
import { storedAt } from '../batch.js';
import { LatestValueCache } from './latest-cache.js';

/** A logged value as logging compares it: NaN in `value` when it was text. */
export interface LoggedValue {
  ts: number;
  value: number;
  text: string | null;
}

export class NewestValues {
  private readonly stored: LatestValueCache;
  private readonly accepted: LRUCache<number, StoredValue>;
  private readonly published: LRUCache<number, StoredValue>;
  /** Only points that log ON_CHANGE or ON_TS_CHANGE have an entry. */
  private readonly logged = new Map<number, LoggedValue>();

  constructor(store: PointValueStore, maxPoints: number) {
    this.stored = new LatestValueCache(store, maxPoints);
    this.accepted = new LRUCache({ max: maxPoints });
    this.published = new LRUCache({ max: maxPoints });
  }

  // Views

  /** Newest first: the stored values, after the newest accepted value when that one is newer. */
  async latest(id: number, limit: number): Promise<StoredValue[]> {
    const stored = await this.stored.latest(id, limit);
    const accepted = this.accepted.get(id);
    if (accepted === undefined || (stored[0] !== undefined && stored[0].ts >= accepted.ts)) return stored;
    return [accepted, ...stored].slice(0, limit);
  }

  /** The newest value published for a point, or its newest stored value before any was. */
  async loadPublished(id: number): Promise<StoredValue | undefined> {
    if (this.published.has(id)) return this.published.get(id);
    const stored = await this.stored.newest(id);
    return this.published.has(id) ? this.published.get(id) : stored;
  }

  /** The newest published now; `loaded` (from loadPublished) when none was published since. */
  newestPublished(id: number, loaded: StoredValue | undefined): StoredValue | undefined {
    return this.published.has(id) ? this.published.get(id) : loaded;
  }

  /** The newest logged value known for the point (after loadLogged), without waiting. */
  newestLogged(id: number): LoggedValue | undefined {
    return this.logged.get(id);
  }

  /** Makes the newest logged value known: the newest stored one, unless one was logged meanwhile. */
  async loadLogged(id: number): Promise<void> {
    if (this.logged.has(id)) return;
    const newest = await this.stored.newest(id);
    if (newest && !this.logged.has(id)) this.logged.set(id, { ts: newest.ts, value: newest.value ?? NaN, text: newest.text });
  }

  // Updates, in the pipeline's order

  /** Values logging did not store all of: each point's newest accepted one is remembered for latest(). */
  noteAccepted(b: ValueBatch): void {
    for (let i = 0; i < b.length; i++) {
      const id = b.series[i]!;
      const known = this.accepted.get(id);
      if (known === undefined || b.ts[i]! >= known.ts) this.accepted.set(id, storedAt(b, i));
    }
  }

  /** Logging chose to store this value: the next one is compared with it. */
  noteLogged(id: number, value: LoggedValue): void {
    this.logged.set(id, value);
  }

  /** The newest value just put on the bus for the point. */
  notePublished(id: number, value: StoredValue): void {
    this.published.set(id, value);
  }

  /** One point's values are durable now (ascending by ts; their objects exist: the point is followed). */
  noteStoredRows(id: number, rows: readonly StoredValue[]): void {
    this.stored.applyWritten(id, rows);
  }

  /** A batch's values are durable now: only each series' newest are looked at, no object per value. */
  noteStoredBatch(b: ValueBatch): void {
    this.stored.applyBatch(b);
  }

  // Invalidation

  /**
   * The point changed or was deleted, or its stored values changed by means not seen here (another
   * instance wrote them; a write ended after its writers were answered 503): every view that follows
   * the store is dropped and read again. The newest accepted stays: no store holds it.
   */
  forget(id: number): void {
    this.stored.invalidate(id);
    this.published.delete(id);
    this.logged.delete(id);
  }

  /** forget() for every point (another instance may have changed any, unheard). */
  forgetAll(): void {
    this.stored.clear();
    this.published.clear();
    this.logged.clear();
  }

  /** Values of the point were deleted: the newest accepted may have been among them too. */
  deleted(id: number): void {
    this.forget(id);
    this.accepted.delete(id);
  }

  /**
   * Stored values changed without logging choosing them (an import), or what it chose was not
   * stored (the write failed): logging's newest is read from the store again.
   */
  forgetLogged(id: number): void {
    this.logged.delete(id);
  }

  /**
   * What was published is out of date: values were written without going on the bus (nobody follows
   * the point), or the write of published values failed. The next value is judged against the store.
   */
  forgetPublished(id: number): void {
    this.published.delete(id);
  }
}
