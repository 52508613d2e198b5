// The QuestDB store over its two connections: writes over ILP, one at a time through the shared
// Sender, each waiting for the WAL to be applied; reads over PG-wire.
//
// Deletes: QuestDB has no DELETE statement (its PG-wire docs list DELETE as unsupported). A range
// delete must keep every other series' rows in the same partitions, so dropping or rewriting
// partitions is out. We soft-delete instead: `UPDATE t SET deleted = true WHERE series_id = $1 AND
// ts >= $2 AND ts < $3 AND NOT deleted`, and every read filters `NOT deleted`. A later write of the same
// (series, ts) replaces the whole row through dedup and writes deleted = false explicitly, so the value
// is back. UPDATE on a WAL table returns no row count, so delete() counts first, then updates, then
// waits for the WAL to be applied like append does. Deleted rows keep their disk space.
//
// Durability is QuestDB's commit mode (`cairo.commit.mode`): every mode survives a crash of the
// QuestDB process; only `sync` (or `adaptive`, 10.2+) survives an OS crash or power loss.
//
// Buckets: pushed down as one query per call (see statements().buckets). Window functions with
// lead/lag are recent, so opening probes the query once and, on a server that rejects it, buckets()
// folds the ordered numeric rows in JS instead (foldNumericRows).
import type { Logger } from 'pino';
import { appendedHook, engineLogger, type ValueStoreHooks } from '../hooks.js';
import type { BucketAggregate, PointValueStore, StoredValue, ValueBatch } from '../types.js';
import { validateTableName } from './config.js';
import { validateBatch, writeRows, type IlpSender } from './ilp.js';
import { bucketRowToAggregate, foldNumericRows, rowToStoredValue, type BucketRow, type NumericRow, type ValueRow } from './rows.js';
import { checkSchema, createTableSql, statements, type Statements } from './sql.js';
import { ceilToBucket, microsParam, msParam, QUESTDB_TIME_RANGE } from './time.js';
import { parseWalRow, waitForWalApply, type WalStatus } from './wal.js';

/** The store, plus what the QuestDB-specific tests look at. */
export interface QuestDbStore extends PointValueStore {
  readonly engine: 'questdb';
  readonly table: string;
  /** True when buckets() runs in SQL (window functions lead/lag available); false: folded in JS. */
  readonly bucketsInSql: boolean;
  /** buckets() computed from raw rows in JS (the fallback path), for comparison in tests. */
  bucketsFromRows(series: number, from: number, to: number): Promise<BucketAggregate[]>;
}

/** The two connections the store works through: PG-wire queries and the ILP sender. */
export interface QuestDbConnections {
  query<T extends object>(text: string, values?: unknown[]): Promise<T[]>;
  sender: IlpSender;
  /** Closes the PG-wire side (the pool). */
  end(): Promise<void>;
}

export interface QuestDbStoreInit extends ValueStoreHooks {
  table: string;
  applyTimeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const DEFAULT_APPLY_TIMEOUT_MS = 30_000;
/** Rows per range() batch. */
export const RANGE_BATCH = 10_000;
/** An append is flushed (one HTTP request, one transaction) whenever its buffer grows past this. */
const FLUSH_BYTES = 8 * 1024 * 1024;
/** Rows handed to the Sender between checks of the buffer size. */
const ROWS_PER_WRITE = 1_000;

/** A FIFO lock: the Sender's buffer is shared, so appends build and flush one at a time. */
function mutex(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>) => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * Creates (or checks) the table, probes for window functions and returns the store over the given
 * connections; closes them when it fails. openQuestDbStore's second half, separate for tests.
 */
export async function initQuestDbStore(conn: QuestDbConnections, opts: QuestDbStoreInit): Promise<QuestDbStore> {
  const table = validateTableName(opts.table);
  const sql = statements(table);
  const log = engineLogger(opts.log, 'questdb');
  let bucketsInSql = false;
  try {
    await createTable(conn.query, table);
    const problems = checkSchema(await conn.query<Record<string, unknown>>(sql.columns));
    if (problems.length) throw new Error(`QuestDB table ${table} exists with another layout: ${problems.join('; ')}`);
    // Window functions (lead/lag) are recent; probe once on an empty range and fall back to JS folding.
    try {
      await conn.query(sql.buckets, [-1, msParam(0), msParam(1)]);
      bucketsInSql = true;
    } catch {
      log.info('the server has no window functions: buckets() folds raw rows in JS');
    }
  } catch (err) {
    await conn.sender.close().catch(() => undefined);
    await conn.end().catch(() => undefined);
    throw err;
  }
  return new QuestDbValueStore(conn, sql, bucketsInSql, { ...opts, table }, log);
}

/** CREATE TABLE with VARCHAR columns; a server older than 8.0 does not know VARCHAR, so retry with STRING. */
async function createTable(query: (text: string) => Promise<unknown>, table: string): Promise<void> {
  try {
    await query(createTableSql(table, 'VARCHAR'));
  } catch (err) {
    try {
      await query(createTableSql(table, 'STRING'));
    } catch {
      throw err;
    }
  }
}

class QuestDbValueStore implements QuestDbStore {
  readonly engine = 'questdb' as const;
  readonly timeRange = QUESTDB_TIME_RANGE;
  readonly table: string;
  private readonly query: QuestDbConnections['query'];
  private readonly ilp: IlpSender;
  private readonly exclusive = mutex();
  private readonly appended: (values: number) => void;
  private closed = false;

  constructor(
    private readonly conn: QuestDbConnections,
    private readonly sql: Statements,
    readonly bucketsInSql: boolean,
    private readonly opts: QuestDbStoreInit,
    log: Logger,
  ) {
    this.table = opts.table;
    this.query = conn.query;
    this.ilp = conn.sender;
    this.appended = appendedHook(opts.onAppended, log);
  }

  async append(batch: ValueBatch): Promise<void> {
    this.checkOpen();
    if (batch.length === 0) return;
    validateBatch(batch);
    await this.exclusive(() => this.send(batch));
    await this.waitApplied();
    this.appended(batch.length);
  }

  async latest(series: number, limit: number): Promise<StoredValue[]> {
    this.checkOpen();
    if (!(limit >= 1)) return [];
    const rows = await this.query<ValueRow>(this.sql.latest, [series, Math.floor(limit)]);
    return rows.map(rowToStoredValue);
  }

  async *range(series: number, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]> {
    this.checkOpen();
    let remaining = limit === undefined ? Infinity : Math.floor(limit);
    if (!(remaining > 0) || !(to > from) || to <= 0) return;
    const upper = msParam(to);
    let lower = msParam(from);
    let first = true;
    while (remaining > 0) {
      const n = Math.min(RANGE_BATCH, remaining);
      const rows = await this.query<ValueRow>(first ? this.sql.rangeFirst : this.sql.rangeNext, [series, lower, upper, n]);
      if (rows.length === 0) return;
      yield rows.map(rowToStoredValue);
      remaining -= rows.length;
      if (rows.length < n) return;
      lower = microsParam(BigInt(rows[rows.length - 1]!.ts_us));
      first = false;
    }
  }

  async valueAt(series: number, t: number): Promise<StoredValue | undefined> {
    this.checkOpen();
    if (!(t >= 0)) return undefined;
    const rows = await this.query<ValueRow>(this.sql.valueAt, [series, msParam(Math.floor(t) + 1)]);
    return rows[0] ? rowToStoredValue(rows[0]) : undefined;
  }

  async buckets(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    this.checkOpen();
    if (!this.bucketsInSql) return this.foldRows(series, from, to);
    const lo = ceilToBucket(from);
    const hi = ceilToBucket(to);
    if (!(hi > lo)) return [];
    const rows = await this.query<BucketRow>(this.sql.buckets, [series, msParam(lo), msParam(hi)]);
    return rows.map(bucketRowToAggregate);
  }

  bucketsFromRows(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    this.checkOpen();
    return this.foldRows(series, from, to);
  }

  async delete(series: number, from: number, to: number): Promise<number> {
    this.checkOpen();
    if (!(to > from) || to <= 0) return 0;
    const params = [series, msParam(from), msParam(to)];
    // Under the append lock, so a concurrent append of this range is ordered before or after it.
    return this.exclusive(async () => {
      const [row] = await this.query<{ n: string | number }>(this.sql.countLive, params);
      const n = Number(row?.n ?? 0);
      if (n === 0) return 0;
      await this.query(this.sql.softDelete, params);
      await this.waitApplied();
      return n;
    });
  }

  async ping(): Promise<void> {
    this.checkOpen();
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.exclusive(async () => undefined); // let a running append or delete finish
    try {
      await this.ilp.close();
    } finally {
      await this.conn.end();
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('QuestDB store is closed');
  }

  /** The batch through the Sender, flushed every FLUSH_BYTES (each flush one HTTP request: one transaction, committed when it returns). */
  private async send(batch: ValueBatch): Promise<void> {
    try {
      let start = 0;
      while (start < batch.length) {
        let end = start;
        let bytes = 0;
        while (end < batch.length && bytes < FLUSH_BYTES) {
          const next = Math.min(batch.length, end + ROWS_PER_WRITE);
          bytes += await writeRows(this.ilp, this.table, batch, end, next);
          end = next;
        }
        await this.ilp.flush();
        start = end;
      }
    } catch (err) {
      this.ilp.reset(); // drop a half-built row or an unsent chunk; the next append starts clean
      throw err;
    }
  }

  private waitApplied(): Promise<WalStatus> {
    const { sleep, now } = this.opts;
    return waitForWalApply({
      table: this.table,
      read: () => this.readWal(),
      timeoutMs: this.opts.applyTimeoutMs ?? DEFAULT_APPLY_TIMEOUT_MS,
      ...(sleep ? { sleep } : {}),
      ...(now ? { now } : {}),
    });
  }

  private async readWal(): Promise<WalStatus | undefined> {
    const rows = await this.query<Record<string, unknown>>(this.sql.walStatus, [this.table]);
    return rows[0] ? parseWalRow(rows[0]) : undefined;
  }

  private async foldRows(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    const lo = ceilToBucket(from);
    const hi = ceilToBucket(to);
    if (!(hi > lo)) return [];
    return foldNumericRows(await this.query<NumericRow>(this.sql.numericRows, [series, msParam(lo), msParam(hi)]));
  }
}
