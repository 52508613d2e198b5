// Cooperative scheduling for long loops on the one event loop: a loop that may run for long checks
// its slice now and then and, once the slice has run past its budget, lets everything else that is
// waiting (other requests, I/O, timers) run before it goes on.

/** Budget of one slice: well under the ~50 ms any request may hold the event loop. */
export const SLICE_BUDGET_MS = 10;

/**
 * One turn of the event loop: a macrotask (setImmediate), so waiting I/O and timers run first.
 * Awaiting a settled promise would not do: it continues as a microtask, before any I/O.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class TimeSlice {
  private started: number;

  constructor(
    readonly budgetMs = SLICE_BUDGET_MS,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.started = now();
  }

  /** The slice has run for its budget or longer. */
  get expired(): boolean {
    return this.now() - this.started >= this.budgetMs;
  }

  /** Yields to the event loop once the slice has run past its budget; a new slice starts after. */
  async yieldIfExpired(): Promise<void> {
    if (this.expired) await this.yield();
  }

  /** Yields to the event loop now; a new slice starts after. */
  async yield(): Promise<void> {
    await yieldToEventLoop();
    this.started = this.now();
  }
}
