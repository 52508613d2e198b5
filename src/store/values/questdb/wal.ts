// Waiting for a write to become visible. An ILP/HTTP request is one transaction per table, committed to
// the WAL sequencer when the request returns; a WAL apply job makes it visible to readers later. So a
// writer waits until a wal_tables() read that started after its commit shows writerTxn >= the
// sequencerTxn it saw then (the QuestDB cookbook's "check transaction applied" recipe), failing on a
// suspended table or after a timeout. Such a failure leaves the write committed; retrying the append
// is harmless thanks to dedup. One watcher polls for all the waiting writers of a store (one query
// per round, however many appends are waiting), since each wal_tables() read costs the server too.
import { field, truthy } from './rows.js';

export interface WalStatus {
  suspended: boolean;
  writerTxn: number;
  sequencerTxn: number;
}

/** A wal_tables() row → WalStatus (LONG columns arrive as strings through pg). */
export function parseWalRow(row: Record<string, unknown>): WalStatus {
  const num = (name: string): number => {
    const v = field(row, name);
    const n = typeof v === 'number' ? v : Number(v);
    if (v === null || v === undefined || !Number.isFinite(n)) throw new Error(`wal_tables() row has no numeric ${name}: ${JSON.stringify(row)}`);
    return n;
  };
  return { suspended: truthy(field(row, 'suspended')), writerTxn: num('writerTxn'), sequencerTxn: num('sequencerTxn') };
}

export class WalSuspendedError extends Error {
  constructor(readonly table: string, readonly status: WalStatus) {
    super(
      `QuestDB table ${table} is suspended (writerTxn ${status.writerTxn}, sequencerTxn ${status.sequencerTxn}): ` +
        `committed writes will not become visible; check the server log, then ALTER TABLE ${table} RESUME WAL`,
    );
    this.name = 'WalSuspendedError';
  }
}

export class WalApplyTimeoutError extends Error {
  constructor(readonly table: string, readonly targetTxn: number, readonly status: WalStatus, readonly timeoutMs: number) {
    super(
      `QuestDB did not apply transaction ${targetTxn} of table ${table} within ${timeoutMs} ms ` +
        `(writerTxn ${status.writerTxn}, sequencerTxn ${status.sequencerTxn}): the write is committed but not yet visible`,
    );
    this.name = 'WalApplyTimeoutError';
  }
}

/**
 * A write committed but not shown in time (apply timeout, suspended table): the server cannot serve it
 * now, which the service answers like an unreachable server (503); a retry is harmless (dedup).
 */
export function isWalWaitFailure(err: unknown): boolean {
  return err instanceof WalApplyTimeoutError || err instanceof WalSuspendedError;
}

interface Waiter {
  tables: readonly string[];
  /** Poll rounds started before the waiter came: those cannot tell it anything. */
  afterRound: number;
  target: Map<string, number> | undefined;
  deadline: number;
  /** Pause between rounds this waiter asks for. */
  pollMs: number;
  resolve(): void;
  reject(err: unknown): void;
}

export interface WalWatcherOptions {
  /** Reads wal_tables() rows of these tables (by name). */
  read: (tables: readonly string[]) => Promise<Map<string, WalStatus>>;
  timeoutMs: number;
  /** Pause between rounds while writers wait. */
  pollMs: number;
  /** Pause between rounds while only background watches wait (default pollMs). */
  backgroundPollMs?: number;
  now?: () => number;
}

/**
 * Waits, for any number of writers at once, until what each had committed is applied: one
 * wal_tables() read per round serves every waiting writer.
 */
export class WalWatcher {
  private readonly waiters = new Set<Waiter>();
  private round = 0;
  private polling = false;
  private readonly now: () => number;

  constructor(private readonly opts: WalWatcherOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Resolves once everything committed to `tables` before the call is applied. */
  applied(...tables: string[]): Promise<void> {
    return this.wait(tables, this.opts.pollMs);
  }

  /**
   * The same, for a watch nothing waits on (reads take its rows from memory meanwhile): polled at
   * backgroundPollMs while no writer waits, so QuestDB is not asked a hundred times a second during ingest.
   */
  appliedInBackground(...tables: string[]): Promise<void> {
    return this.wait(tables, this.opts.backgroundPollMs ?? this.opts.pollMs);
  }

  private wait(tables: readonly string[], pollMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiters.add({ tables, afterRound: this.round, target: undefined, deadline: this.now() + this.opts.timeoutMs, pollMs, resolve, reject });
      if (!this.polling) void this.poll();
      else if (pollMs < this.pausing) this.wake?.();
    });
  }

  /** The pause under way, and the way to end it early (a writer came that waits more urgently). */
  private pausing = Infinity;
  private wake: (() => void) | undefined;

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      while (this.waiters.size > 0) {
        const round = ++this.round;
        const tables = [...new Set([...this.waiters].flatMap((w) => w.tables))];
        let statuses: Map<string, WalStatus>;
        try {
          statuses = await this.opts.read(tables);
        } catch (err) {
          for (const w of this.waiters) w.reject(err);
          this.waiters.clear();
          return;
        }
        for (const w of this.waiters) this.settle(w, round, statuses);
        if (this.waiters.size > 0) {
          this.pausing = Math.min(...[...this.waiters].map((w) => w.pollMs));
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.pausing);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          this.pausing = Infinity;
          this.wake = undefined;
        }
      }
    } finally {
      this.polling = false;
    }
  }

  private settle(w: Waiter, round: number, statuses: Map<string, WalStatus>): void {
    if (round <= w.afterRound) return; // this read may have started before the writer's commit
    const done = (fail?: unknown) => {
      this.waiters.delete(w);
      if (fail === undefined) w.resolve();
      else w.reject(fail);
    };
    w.target ??= new Map();
    for (const table of w.tables) {
      const status = statuses.get(table);
      if (!status) return done(new Error(`QuestDB table ${table} is not listed by wal_tables(): it must be a WAL table`));
      if (!w.target.has(table)) w.target.set(table, status.sequencerTxn);
    }
    const pending = w.tables.filter((t) => statuses.get(t)!.writerTxn < w.target!.get(t)!);
    if (pending.length === 0) return done();
    const suspended = pending.find((t) => statuses.get(t)!.suspended);
    if (suspended) return done(new WalSuspendedError(suspended, statuses.get(suspended)!));
    if (this.now() >= w.deadline) return done(new WalApplyTimeoutError(pending[0]!, w.target.get(pending[0]!)!, statuses.get(pending[0]!)!, this.opts.timeoutMs));
  }
}
