// The bounded write buffer in front of the value store: concurrent writers' values are grouped
// into one append (group commit), each writer is answered once its values are durable, and a
// full buffer holds writers back instead of growing memory.
import type { PointValueStore, ValueBatch } from './types.js';

interface Pending {
  batch: ValueBatch;
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
  private pending: Pending[] = [];
  private pendingValues = 0;
  /** Writers waiting for room, in arrival order; admitted strictly in that order. */
  private waiting: { size: number; admit(): void }[] = [];
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
  ) {
    this.concurrency = Math.max(1, store.appendConcurrency ?? 1);
  }

  get bufferedValues(): number {
    return this.pendingValues;
  }

  /** Resolves when the batch is durable in the store. */
  async write(batch: ValueBatch): Promise<void> {
    if (this.closed) throw new Error('write buffer is closed');
    if (batch.length === 0) return;
    // First come, first served: a writer never overtakes one already waiting, so a batch larger
    // than the room left (or than the capacity: it goes alone into an empty buffer) is not
    // starved by a stream of small ones. release() counts an admitted writer's values.
    if (this.waiting.length > 0 || !this.fits(batch.length)) {
      await new Promise<void>((admit) => this.waiting.push({ size: batch.length, admit }));
    } else {
      this.pendingValues += batch.length;
    }
    const done = new Promise<void>((resolve, reject) => this.pending.push({ batch, resolve, reject }));
    this.kick();
    return done;
  }

  /** Drains what is buffered; later writes are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing.size > 0 || this.pending.length > 0) {
      this.kick();
      await Promise.all(this.flushing);
    }
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
    const group: Pending[] = [];
    let values = 0;
    while (this.pending.length > 0 && (group.length === 0 || values + this.pending[0]!.batch.length <= this.maxAppend)) {
      const p = this.pending.shift()!;
      group.push(p);
      values += p.batch.length;
    }
    try {
      await this.store.append(concatBatches(group.map((p) => p.batch)));
      for (const p of group) p.resolve();
    } catch (err) {
      for (const p of group) p.reject(err);
    } finally {
      this.pendingValues -= values;
      this.release();
    }
  }

  private fits(values: number): boolean {
    return this.pendingValues === 0 || this.pendingValues + values <= this.capacity;
  }

  /** Admits waiting writers in arrival order while they fit, reserving their room at once. */
  private release(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.size)) {
      const w = this.waiting.shift()!;
      this.pendingValues += w.size;
      w.admit();
    }
  }
}
