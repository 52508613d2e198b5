// The bounded write buffer in front of the value store: the write queue (write-queue.ts) whose groups
// are the store's appends. Concurrent writers' values are grouped into one append (group commit), each
// writer is answered once its values are durable, and a full buffer holds writers back instead of
// growing memory. A server store's time-out (its `timeoutMs`, STORE_TIMEOUT_MS) answers writers 503 as
// the queue describes; an append already sent keeps its place and its room until it ends.
import type { PointValueStore, ValueBatch } from './types.js';
import { WriteQueue } from './write-queue.js';

export { concatBatches } from './batch.js';

export class WriteBuffer {
  private readonly queue: WriteQueue;

  constructor(
    store: PointValueStore,
    /** Most values buffered at once; a single larger batch is let through alone. */
    capacity: number,
    /** Most values handed to one append. */
    maxAppend = 200_000,
    /**
     * An append ended (committed or failed) after some of its writers were answered by the time-out:
     * its values may be stored though their writers heard 503, so what is cached of them is out of date.
     */
    onLateOutcome?: (batch: ValueBatch) => void,
  ) {
    this.queue = new WriteQueue({
      name: 'write buffer',
      writeGroup: (batch) => store.append(batch),
      capacity,
      maxGroupValues: maxAppend,
      // A store that commits appends in call order and then waits for each to become visible
      // (QuestDB) takes several at once, so the waits overlap; the others take one at a time.
      inFlight: store.appendConcurrency ?? 1,
      timeoutMs: () => store.timeoutMs,
      ...(onLateOutcome ? { onLateOutcome } : {}),
    });
  }

  get bufferedValues(): number {
    return this.queue.bufferedValues;
  }

  /** Resolves when the batch is durable in the store; rejects with the store's 503 after its time-out. */
  write(batch: ValueBatch): Promise<void> {
    return this.queue.write(batch);
  }

  /** Drains what is buffered; later writes are refused. */
  close(): Promise<void> {
    return this.queue.close();
  }
}
