// The bounded write buffer in front of the value store: concurrent writers' values are grouped
// into one append (group commit), each writer is answered once its values are durable, and a
// full buffer holds writers back instead of growing memory.
//
// A server store has a time-out (its `timeoutMs`, STORE_TIMEOUT_MS): a writer not answered by then is
// answered 503 (a 503 is no acknowledgement). Its values leave the buffer if they were not sent yet; if
// they were, the append goes on (the engine bounds it and frees its connection) and keeps its place
// and its room until it ends, so a frozen server holds at most the buffer's capacity and appends
// never pile up. Such an append may still commit: `onLateOutcome` hears of it.
import { StoreTimeoutError } from '../timeout.js';
import { storeUnavailable } from '../unavailable.js';
import type { PointValueStore, ValueBatch } from './types.js';
import { POINT_VALUE_STORE } from './unavailable-store.js';

/** One append under way, and whether a writer of it was answered before it ended. */
interface Flight {
  answeredEarly: boolean;
}

/** A writer: waiting for room, buffered, in an append under way, or answered. */
interface Writer {
  batch: ValueBatch;
  state: 'waiting' | 'pending' | 'flushing' | 'answered';
  flight?: Flight;
  timer?: NodeJS.Timeout;
  resolve(): void;
  reject(err: unknown): void;
}

/** Concatenates batches column by column. */
export function concatBatches(batches: readonly ValueBatch[]): ValueBatch {
  if (batches.length === 1) return batches[0]!;
  const length = batches.reduce((n, b) => n + b.length, 0);
  const out: ValueBatch = {
    length,
    series: new Int32Array(length),
    ts: new Float64Array(length),
    value: new Float64Array(length),
    text: batches.some((b) => b.text) ? new Array<string | null>(length).fill(null) : null,
    annotation: batches.some((b) => b.annotation) ? new Array<string | null>(length).fill(null) : null,
  };
  let at = 0;
  for (const b of batches) {
    out.series.set(b.series.subarray(0, b.length), at);
    out.ts.set(b.ts.subarray(0, b.length), at);
    out.value.set(b.value.subarray(0, b.length), at);
    for (let i = 0; i < b.length; i++) {
      if (b.text && out.text) out.text[at + i] = b.text[i] ?? null;
      if (b.annotation && out.annotation) out.annotation[at + i] = b.annotation[i] ?? null;
    }
    at += b.length;
  }
  return out;
}

export class WriteBuffer {
  private pending: Writer[] = [];
  private pendingValues = 0;
  /** Writers waiting for room, in arrival order; admitted strictly in that order. */
  private waiting: Writer[] = [];
  /** Appends under way (at most the store's appendConcurrency). */
  private readonly flushing = new Set<Promise<void>>();
  private closed = false;
  private readonly concurrency: number;

  constructor(
    private readonly store: PointValueStore,
    /** Most values buffered at once; a single larger batch is let through alone. */
    private readonly capacity: number,
    /** Most values handed to one append. */
    private readonly maxAppend = 200_000,
    /**
     * An append ended (committed or failed) after some of its writers were answered by the time-out:
     * its values may be stored though their writers heard 503, so what is cached of them is out of date.
     */
    private readonly onLateOutcome?: (batch: ValueBatch) => void,
  ) {
    this.concurrency = Math.max(1, store.appendConcurrency ?? 1);
  }

  get bufferedValues(): number {
    return this.pendingValues;
  }

  /** Resolves when the batch is durable in the store; rejects with the store's 503 after its time-out. */
  async write(batch: ValueBatch): Promise<void> {
    if (this.closed) throw new Error('write buffer is closed');
    if (batch.length === 0) return;
    return new Promise<void>((resolve, reject) => {
      const writer: Writer = { batch, state: 'waiting', resolve, reject };
      if (this.store.timeoutMs !== undefined) writer.timer = setTimeout(() => this.expire(writer), this.store.timeoutMs);
      // First come, first served: a writer never overtakes one already waiting, so a batch larger
      // than the room left (or than the capacity: it goes alone into an empty buffer) is not
      // starved by a stream of small ones.
      if (this.waiting.length > 0 || !this.fits(batch.length)) this.waiting.push(writer);
      else this.admit(writer);
    });
  }

  /** Drains what is buffered; later writes are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing.size > 0 || this.pending.length > 0) {
      this.kick();
      await Promise.all(this.flushing);
    }
  }

  /** Counts the writer's values and queues them for an append. */
  private admit(writer: Writer): void {
    this.pendingValues += writer.batch.length;
    writer.state = 'pending';
    this.pending.push(writer);
    this.kick();
  }

  /**
   * Starts appends of what is pending while fewer than the store's appendConcurrency are under way. A
   * store that takes several at once (QuestDB: sent in order, then each waits to become visible) keeps
   * sending while earlier groups wait; the others get one group at a time.
   */
  private kick(): void {
    while (this.pending.length > 0 && this.flushing.size < this.concurrency) {
      const flush: Promise<void> = this.flushGroup().finally(() => {
        this.flushing.delete(flush);
        this.kick();
      });
      this.flushing.add(flush);
    }
  }

  /** Appends the next group of pending writes (up to maxAppend values, whole writes). */
  private async flushGroup(): Promise<void> {
    const group: Writer[] = [];
    const flight: Flight = { answeredEarly: false };
    let values = 0;
    while (this.pending.length > 0 && (group.length === 0 || values + this.pending[0]!.batch.length <= this.maxAppend)) {
      const w = this.pending.shift()!;
      w.state = 'flushing';
      w.flight = flight;
      group.push(w);
      values += w.batch.length;
    }
    const batch = concatBatches(group.map((w) => w.batch));
    try {
      await this.store.append(batch);
      for (const w of group) this.answer(w);
    } catch (err) {
      for (const w of group) this.answer(w, err);
    } finally {
      this.pendingValues -= values;
      if (flight.answeredEarly) this.onLateOutcome?.(batch);
      this.release();
    }
  }

  /** Tells a writer not told yet: resolved without `err`. */
  private answer(w: Writer, err?: unknown): void {
    if (w.state === 'answered') return;
    w.state = 'answered';
    clearTimeout(w.timer);
    if (err === undefined) w.resolve();
    else w.reject(err);
  }

  /** The writer's time-out: answered 503; values not sent yet leave the buffer. */
  private expire(w: Writer): void {
    if (w.state === 'waiting') {
      this.waiting.splice(this.waiting.indexOf(w), 1);
    } else if (w.state === 'pending') {
      this.pending.splice(this.pending.indexOf(w), 1);
      this.pendingValues -= w.batch.length;
    } else if (w.state === 'flushing') {
      w.flight!.answeredEarly = true;
    }
    this.answer(w, storeUnavailable(POINT_VALUE_STORE, new StoreTimeoutError(`${POINT_VALUE_STORE} (append)`, this.store.timeoutMs!)));
    // The room (or the place in the queue) it gave up may admit the writers behind it.
    this.release();
  }

  private fits(values: number): boolean {
    return this.pendingValues === 0 || this.pendingValues + values <= this.capacity;
  }

  /** Admits waiting writers in arrival order while they fit, reserving their room at once. */
  private release(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.batch.length)) this.admit(this.waiting.shift()!);
  }
}
