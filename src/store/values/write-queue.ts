// The one write queue of the value store: writers' batches and exclusive tasks (a delete, DuckDB's
// compaction) in one line, in call order. Used by the write buffer in front of the store
// (write-buffer.ts) and by each engine in front of its writes (duckdb/, postgres/, questdb/store.ts),
// which plug in two verbs: `writeGroup` (whole writes joined into one batch, resolved once durable and
// readable) and the tasks they pass to `exclusive` (run while nothing else writes).
//
// - Admission: at most `capacity` values are admitted at once (a single larger batch goes alone into
//   an empty queue); later writers wait for room in arrival order, so a large batch is never starved.
// - Group commit: consecutive admitted writes form a group of at most `maxGroupValues` (whole writes;
//   a larger one goes alone), at most `inFlight` groups under way, started and answered in order.
// - Ordering: an exclusive task starts once every group and task before it has settled, and nothing
//   after it starts before it settles; so a delete after an append of the same series sees it.
// - Time-out (`timeoutMs`, a server store's STORE_TIMEOUT_MS): a writer not answered by then is answered
//   503 (no acknowledgement). Its values leave the queue if not sent yet; if they were, the group goes on
//   (the engine bounds it and frees its connection) and keeps its place and its room until it ends, so a
//   frozen server holds at most `capacity` values and groups never pile up. Such a group may still
//   commit: `onLateOutcome` hears of it.
// - close() answers everything queued, then refuses more.
import { StoreTimeoutError } from '../timeout.js';
import { storeUnavailable } from '../unavailable.js';
import { concatBatches } from './batch.js';
import type { ValueBatch } from './types.js';
import { POINT_VALUE_STORE } from './unavailable-store.js';

export interface WriteQueueOptions {
  /** Writes one group; resolves once its values are durable and visible to every later read. */
  writeGroup(batch: ValueBatch): Promise<void>;
  /** What is refused once closed: '<name> is closed'. */
  name: string;
  /** Most values admitted at once (default: no bound). */
  capacity?: number;
  /** Most values in one group (default 200,000; a larger single write goes alone). */
  maxGroupValues?: number;
  /** Groups under way at once (default 1). */
  inFlight?: number;
  /** Read at each write: answer its writer 503 after this long (absent: never). */
  timeoutMs?: () => number | undefined;
  /** A group ended (committed or failed) after some of its writers were answered by the time-out. */
  onLateOutcome?: (batch: ValueBatch) => void;
  /** Told of each writer's values once durable, in order, before the writer is answered; never throws. */
  onWritten?: (values: number) => void;
}

/** One group under way, and whether a writer of it was answered before it ended. */
interface Flight {
  answeredEarly: boolean;
}

/** A writer: waiting for room, queued, in a group under way, or answered. */
interface Writer {
  kind: 'write';
  batch: ValueBatch;
  state: 'waiting' | 'queued' | 'flushing' | 'answered';
  flight?: Flight;
  timer?: NodeJS.Timeout;
  resolve(): void;
  reject(err: unknown): void;
}

/** An exclusive task, waiting for its turn. */
interface Task {
  kind: 'task';
  run(): Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Entry = Writer | Task;

export class WriteQueue {
  /** Admitted entries in call order: writers whose values are counted, and tasks. */
  private readonly queue: Entry[] = [];
  /** Entries not admitted yet (writers waiting for room, and the tasks behind them), in call order. */
  private readonly waiting: Entry[] = [];
  private admittedValues = 0;
  /** Groups started and not answered yet. */
  private flights = 0;
  /** Settles once the last group started has been answered; never rejects. */
  private answered: Promise<void> = Promise.resolve();
  private taskRunning = false;
  private closed = false;
  private drained: (() => void)[] = [];
  private readonly capacity: number;
  private readonly maxGroupValues: number;
  private readonly inFlight: number;

  constructor(private readonly options: WriteQueueOptions) {
    this.capacity = options.capacity ?? Infinity;
    this.maxGroupValues = options.maxGroupValues ?? 200_000;
    this.inFlight = Math.max(1, options.inFlight ?? 1);
  }

  /** Values admitted and not yet answered (queued or being written). */
  get bufferedValues(): number {
    return this.admittedValues;
  }

  /** Resolves when the batch is durable; rejects with the store's 503 after the time-out, or as its group failed. */
  write(batch: ValueBatch): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    if (batch.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const writer: Writer = { kind: 'write', batch, state: 'waiting', resolve, reject };
      const timeoutMs = this.options.timeoutMs?.();
      if (timeoutMs !== undefined) writer.timer = setTimeout(() => this.expire(writer, timeoutMs), timeoutMs);
      // First come, first served: a writer never overtakes one already waiting, so a batch larger
      // than the room left (or than the capacity: it goes alone into an empty queue) is not
      // starved by a stream of small ones.
      if (this.waiting.length > 0 || !this.fits(batch.length)) this.waiting.push(writer);
      else this.admit(writer);
    });
  }

  /** Runs `run` once everything queued before it has settled, with nothing else writing meanwhile. */
  exclusive<T>(run: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closedError());
    return new Promise<T>((resolve, reject) => {
      const task: Task = { kind: 'task', run, resolve: resolve as (value: unknown) => void, reject };
      if (this.waiting.length > 0) this.waiting.push(task);
      else this.admit(task);
    });
  }

  /** Answers everything queued (waiting writers included); later calls are refused. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idle()) return;
    await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  private closedError(): Error {
    return new Error(`${this.options.name} is closed`);
  }

  private idle(): boolean {
    return this.queue.length === 0 && this.waiting.length === 0 && this.flights === 0 && !this.taskRunning;
  }

  private fits(values: number): boolean {
    return this.admittedValues === 0 || this.admittedValues + values <= this.capacity;
  }

  private admit(entry: Entry): void {
    if (entry.kind === 'write') {
      this.admittedValues += entry.batch.length;
      entry.state = 'queued';
    }
    this.queue.push(entry);
    this.pump();
  }

  /** Admits waiting entries in call order while the writers among them fit, reserving their room at once. */
  private release(): void {
    while (this.waiting.length > 0) {
      const head = this.waiting[0]!;
      if (head.kind === 'write' && !this.fits(head.batch.length)) break;
      this.admit(this.waiting.shift()!);
    }
  }

  /** Starts what the head of the queue allows: groups while fewer than inFlight are under way, or a task alone. */
  private pump(): void {
    while (this.queue.length > 0 && !this.taskRunning) {
      const head = this.queue[0]!;
      if (head.kind === 'task') {
        if (this.flights > 0) return;
        this.queue.shift();
        this.runTask(head);
        return;
      }
      if (this.flights >= this.inFlight) return;
      this.startGroup();
    }
    if (this.closed && this.idle()) for (const resolve of this.drained.splice(0)) resolve();
  }

  private runTask(task: Task): void {
    this.taskRunning = true;
    let running: Promise<unknown>;
    try {
      running = task.run();
    } catch (err) {
      running = Promise.reject(err);
    }
    running.then(task.resolve, task.reject).finally(() => {
      this.taskRunning = false;
      this.pump();
    });
  }

  /** Writes the next group of queued writers (up to maxGroupValues values, whole writes); answers them in group order. */
  private startGroup(): void {
    const group: Writer[] = [];
    const flight: Flight = { answeredEarly: false };
    let values = 0;
    for (let head = this.queue[0]; head?.kind === 'write' && (group.length === 0 || values + head.batch.length <= this.maxGroupValues); head = this.queue[0]) {
      this.queue.shift();
      head.state = 'flushing';
      head.flight = flight;
      group.push(head);
      values += head.batch.length;
    }
    const batch = concatBatches(group.map((w) => w.batch));
    let writing: Promise<void>;
    try {
      writing = this.options.writeGroup(batch);
    } catch (err) {
      writing = Promise.reject(err);
    }
    this.flights++;
    const before = this.answered;
    const outcome = writing.then(
      () => ({ ok: true as const }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    const answering = outcome.then(async (o) => {
      await before;
      try {
        for (const w of group) {
          if (o.ok && w.state !== 'answered') this.options.onWritten?.(w.batch.length);
          this.answer(w, o.ok ? undefined : { err: o.err });
        }
        if (flight.answeredEarly) this.options.onLateOutcome?.(batch);
      } finally {
        this.flights--;
        this.admittedValues -= values;
        this.release();
        this.pump();
      }
    });
    // The next group's answers wait for these, whatever a hook above threw.
    this.answered = answering.catch(() => undefined);
  }

  /** Tells a writer not told yet: resolved without `failure`. */
  private answer(w: Writer, failure?: { err: unknown }): void {
    if (w.state === 'answered') return;
    w.state = 'answered';
    clearTimeout(w.timer);
    if (failure === undefined) w.resolve();
    else w.reject(failure.err);
  }

  /** The writer's time-out: answered 503; values not sent yet leave the queue. */
  private expire(w: Writer, timeoutMs: number): void {
    if (w.state === 'waiting') {
      this.waiting.splice(this.waiting.indexOf(w), 1);
    } else if (w.state === 'queued') {
      this.queue.splice(this.queue.indexOf(w), 1);
      this.admittedValues -= w.batch.length;
    } else if (w.state === 'flushing') {
      w.flight!.answeredEarly = true;
    }
    this.answer(w, { err: storeUnavailable(POINT_VALUE_STORE, new StoreTimeoutError(`${POINT_VALUE_STORE} (append)`, timeoutMs)) });
    // The room (or the place in the queue) it gave up may admit the writers behind it.
    this.release();
    this.pump();
  }
}
