// One FIFO lock for every "one at a time, in call order" in the service (a store's writes, a lease's
// queries, a device's requests, a source's starts and stops): a task starts once every task locked
// before it has settled, whatever their outcome, and its own outcome goes back to its caller only.

export class FifoLock {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;

  /** Runs `task` after every task locked before it has settled; settles as `task` does. */
  run<T>(task: () => Promise<T> | T): Promise<T> {
    this.queued++;
    const result = this.tail.then(task);
    this.tail = result.then(
      () => this.queued--,
      () => this.queued--,
    );
    return result;
  }

  /** Tasks locked and not settled yet (the one running included). */
  get pending(): number {
    return this.queued;
  }

  /** Resolves once every task locked so far has settled (never rejects). */
  async idle(): Promise<void> {
    await this.tail;
  }
}

/** FIFO locks by key (one per source, say), each dropped once its last task settled. */
export class KeyedFifoLock<K> {
  private readonly locks = new Map<K, FifoLock>();

  run<T>(key: K, task: () => Promise<T> | T): Promise<T> {
    let lock = this.locks.get(key);
    if (!lock) this.locks.set(key, (lock = new FifoLock()));
    const result = lock.run(task);
    const drop = () => {
      if (lock.pending === 0 && this.locks.get(key) === lock) this.locks.delete(key);
    };
    void lock.idle().then(drop);
    return result;
  }

  /** Keys with tasks locked and not settled yet. */
  get size(): number {
    return this.locks.size;
  }

  /** Whether tasks locked under `key` have not all settled yet. */
  has(key: K): boolean {
    return this.locks.has(key);
  }

  keys(): IterableIterator<K> {
    return this.locks.keys();
  }

  /** Resolves once every task locked so far under `key` (no key: under every key) has settled. */
  async idle(key?: K): Promise<void> {
    if (key !== undefined) return this.locks.get(key)?.idle();
    await Promise.all([...this.locks.values()].map((l) => l.idle()));
  }
}
