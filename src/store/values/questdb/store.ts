// The QuestDB store: raw values and their hourly aggregates in QuestDB tables (sql.ts), written over
// ILP/HTTP (ilp.ts), read over PG-wire with literal SQL.
//
// An append, through the write queue (../write-queue.ts), after every earlier append of its series (two
// appends of disjoint series go at once), so the hourly rows of a series are built on its previous append:
// 1. unless nothing is to be recomputed (the usual case: QuestDB parses a whole request before it commits
//    any of its tables, and each hour's raw and hourly rows travel in one request, requests.ts, so they
//    stand or fall together), the intent: one t_pending row per series with the span it touches,
//    committed first;
// 2. the raw rows, and the hourly rows of values that continue their series (hourly.ts), in requests of
//    at most MAX_REQUEST_BYTES;
// 3. for late or rewritten values, once the raw rows are applied, their hours recomputed from them;
// 4. answered once committed (durable in the tables' WAL). QuestDB applies committed WAL transactions in
//    the background; until it has, this store's reads merge the append's rows and hours from memory
//    (unapplied.ts), so a read after append() returns sees them, and a watcher drops them once applied;
// 5. the intent marked done with the next write (or at close).
// A crash between 1 and 5 leaves the intent undone, and opening the store recomputes its hours; a failed
// append leaves its spans to be recomputed before the next write. So t_hourly never stays wrong.
//
// Deletes: QuestDB has no DELETE statement; rows are soft-deleted (deleted = true; every read filters
// NOT deleted, and writing the (series, ts) again brings a value back), then their hours are recomputed.
//
// Durability is QuestDB's commit mode (`cairo.commit.mode`): every mode survives a crash of the QuestDB
// process; only `sync` survives an OS crash or power loss.
import type { Logger } from 'pino';
import { ConfigError } from '../../../config.js';
import { maxOf, minOf } from '../../../core/extremes.js';
import { appendedHook, engineLogger, type ValueStoreHooks } from '../hooks.js';
import { sortRows } from '../sort.js';
import type { BucketAggregate, PointValueStore, StoredValue, ValueBatch } from '../types.js';
import { foldRecomputed, hourlyRowToAggregate, planHourly, SeriesTails, type HourlyRow, type HourSpan, type NumericRow } from './hourly.js';
import { IlpLines, splitLines, validateTimestamp, type IlpTransport } from './ilp.js';
import { appendLines, requestsAtHours } from './requests.js';
import { field, rowToStoredValue, type ValueRow } from './rows.js';
import { checkSchema, createTableStatements, statements, tableNames, type Statements } from './sql.js';
import { ceilToBucket, floorToBucket, microsToMs, QUESTDB_TIME_RANGE } from './time.js';
import { layerOf, mergeHours, mergeValues, Unapplied, type Layer } from './unapplied.js';
import { parseWalRow, WalWatcher } from './wal.js';
import { WriteQueue } from '../write-queue.js';

/** The store, plus what the QuestDB-specific tests look at. */
export interface QuestDbStore extends PointValueStore {
  readonly engine: 'questdb';
  readonly table: string;
}

/** The two connections the store works through: PG-wire queries and ILP over HTTP. */
export interface QuestDbConnections {
  query<T extends object>(text: string): Promise<T[]>;
  ilp: IlpTransport;
  /** Closes the PG-wire side (the pool). */
  end(): Promise<void>;
}

/** A turn at writing a table other instances write too (store/cluster/writer-lock.ts). */
export interface WriterTurn {
  /** Another instance wrote the table since this one's last turn. */
  othersWrote: boolean;
  release(): Promise<void>;
}

export interface QuestDbStoreInit extends ValueStoreHooks {
  table: string;
  applyTimeoutMs?: number;
  /**
   * Several instances writing one table take turns (each keeps the hourly tails of the series it
   * wrote in memory); alone, no turn is needed.
   */
  writerTurn?: () => Promise<WriterTurn>;
}

const DEFAULT_APPLY_TIMEOUT_MS = 30_000;
/** Rows per range() batch. */
export const RANGE_BATCH = 10_000;
/** Appends the write buffer may have under way: those of disjoint series are built and sent at once. */
const APPEND_CONCURRENCY = 2;
/** Values answered but not yet applied by QuestDB, at most: then writers wait for the apply. */
const MAX_UNAPPLIED_VALUES = 2_000_000;
/** How long close() waits for answered writes to be applied. */
const CLOSE_WAIT_MS = 5_000;
/** Between tries to see an answered write applied while QuestDB cannot tell (down, or lagging). */
const RETRY_APPLIED_MS = 1_000;
/** How often wal_tables() is read while answered appends wait to be applied (one read serves all). */
const WAL_POLL_MS = 10;
/** The same while only answered appends are watched (reads merge them from memory meanwhile). */
const WAL_BACKGROUND_POLL_MS = 100;
/** An append is sent in requests of at most about this size (each a commit per table). */
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
/**
 * Requests of one append under way at once: QuestDB parses each on a worker of its own, as a bare ILP
 * client's concurrent requests are, instead of one request at a time.
 */
const REQUESTS_PER_APPEND = 2;


/**
 * Creates (or checks) the tables, recomputes the hours of intents a crash left undone, and returns
 * the store over the given connections; closes them when it fails.
 */
export async function initQuestDbStore(conn: QuestDbConnections, opts: QuestDbStoreInit): Promise<QuestDbStore> {
  const names = tableNames(opts.table);
  const sql = statements(opts.table);
  const log = engineLogger(opts.log, 'questdb');
  try {
    for (const statement of createTableStatements(opts.table)) await conn.query(statement);
    for (const kind of ['raw', 'hourly', 'pending'] as const) {
      const problems = checkSchema(kind, await conn.query<Record<string, unknown>>(sql.columns(names[kind])));
      if (problems.length) {
        throw new ConfigError(
          `QUESTDB_TABLE: QuestDB table ${names[kind]} exists with another layout (${problems.join('; ')}): ` +
            'it was made by another program or an older version of this one; choose another QUESTDB_TABLE',
        );
      }
    }
    const store = new QuestDbValueStore(conn, sql, opts, log);
    await store.recoverIntents();
    return store;
  } catch (err) {
    await conn.ilp.close().catch(() => undefined);
    await conn.end().catch(() => undefined);
    throw err;
  }
}

class QuestDbValueStore implements QuestDbStore {
  readonly engine = 'questdb' as const;
  readonly timeRange = QUESTDB_TIME_RANGE;
  /** Appends of disjoint series are sent at once; one of a series being written waits for it (seriesTurn). */
  readonly appendConcurrency = APPEND_CONCURRENCY;
  readonly table: string;
  private readonly names: ReturnType<typeof tableNames>;
  /**
   * Appends and deletes in call order; appends of disjoint series at once, a delete alone. Each append
   * is a group of its own: the write buffer in front has grouped them already.
   */
  private readonly writes: WriteQueue;
  private readonly appended: (values: number) => void;
  private readonly tails = new SeriesTails();
  /** Intent rows to mark done with the next write (their hourly rows are durable). */
  private doneLines: Buffer[] = [];
  /** Spans of failed writes, recomputed before the next one. */
  private repair: HourSpan[] = [];
  private nextIntent = Date.now() * 1000;
  private closed = false;
  private readonly wal: WalWatcher;
  /** Appends answered (committed) whose rows QuestDB has not applied yet: reads merge them. */
  private readonly unapplied = new Unapplied();
  /** Watches of those appends until applied. */
  private readonly applying = new Set<Promise<void>>();
  /** Series of the appends under way → the end of the one writing it. */
  private readonly writing = new Map<number, Promise<void>>();

  constructor(
    private readonly conn: QuestDbConnections,
    private readonly sql: Statements,
    private readonly opts: QuestDbStoreInit,
    private readonly log: Logger,
  ) {
    this.table = opts.table;
    this.names = tableNames(opts.table);
    this.appended = appendedHook(opts.onAppended, log);
    this.writes = new WriteQueue({
      name: 'QuestDB store',
      writeGroup: (batch) => this.writeGroup(batch),
      maxGroupValues: 0,
      // Appends of disjoint series go at once (seriesTurn); instances taking turns at a table, one at a time.
      inFlight: opts.writerTurn ? 1 : APPEND_CONCURRENCY,
      onWritten: this.appended,
    });
    this.wal = new WalWatcher({
      read: async (tables) => {
        const rows = await this.conn.query<Record<string, unknown>>(this.sql.walStatus(tables));
        return new Map(rows.map((row) => [String(field(row, 'name')), parseWalRow(row)]));
      },
      timeoutMs: opts.applyTimeoutMs ?? DEFAULT_APPLY_TIMEOUT_MS,
      pollMs: WAL_POLL_MS,
      backgroundPollMs: WAL_BACKGROUND_POLL_MS,
    });
  }

  async append(batch: ValueBatch): Promise<void> {
    this.checkOpen();
    if (batch.length === 0) return;
    validateBatch(batch);
    await this.roomForUnapplied();
    await this.writes.write(batch);
  }

  /**
   * Built and sent in call order (the write queue); answered once committed (durable in the WAL): until
   * QuestDB applies the rows, this store's reads take them from `unapplied`.
   */
  private async writeGroup(batch: ValueBatch): Promise<void> {
    const release = await this.seriesTurn(batch);
    try {
      const { intent, layer } = await this.inTurn(() => this.write(batch));
      if (intent) this.doneLines.push(intent);
      if (layer) this.watch(layer);
    } finally {
      release();
    }
  }

  /**
   * Waits until no append under way writes a series of `batch`, and until the repair of a failed write
   * is not due (that one goes alone); returns the release of the batch's series. Appends of disjoint
   * series touch disjoint (series, ts) and (series, hour) keys and disjoint tails, so they are built and
   * sent at once, as a bare ILP client's concurrent requests are; the same series stays in call order.
   */
  private async seriesTurn(batch: ValueBatch): Promise<() => void> {
    const series = new Set<number>();
    for (let i = 0; i < batch.length; i++) series.add(batch.series[i]!);
    for (;;) {
      const alone = this.repair.length > 0;
      const blockers = new Set<Promise<void>>();
      for (const [s, done] of this.writing) if (alone || series.has(s)) blockers.add(done);
      if (blockers.size === 0) break;
      await Promise.all(blockers);
    }
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    for (const s of series) this.writing.set(s, done);
    return () => {
      for (const s of series) if (this.writing.get(s) === done) this.writing.delete(s);
      release();
    };
  }

  async latest(series: number, limit: number): Promise<StoredValue[]> {
    this.checkOpen();
    if (!(limit >= 1)) return [];
    const n = Math.floor(limit);
    const stored = (await this.conn.query<ValueRow>(this.sql.latest(series, n))).map(rowToStoredValue);
    if (!this.unapplied.has(series)) return stored;
    const merged = mergeValues(stored.reverse(), this.unapplied.range(series, 0, QUESTDB_TIME_RANGE.max + 1));
    return merged.slice(-n).reverse();
  }

  async *range(series: number, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]> {
    this.checkOpen();
    let remaining = limit === undefined ? Infinity : Math.floor(limit);
    if (!(remaining > 0) || !(to > from) || to <= 0) return;
    // Values not applied yet are merged in as the table's pages go by.
    let pending = this.unapplied.has(series) ? this.unapplied.range(series, from, to) : [];
    let lower = from;
    let exclusive = false;
    while (remaining > 0) {
      const n = Math.min(RANGE_BATCH, remaining);
      const rows = await this.conn.query<ValueRow>(this.sql.range(series, lower, to, n, exclusive));
      const values = rows.map(rowToStoredValue);
      const last = rows.length < n ? Infinity : values[values.length - 1]!.ts;
      const cut = pending.findIndex((v) => v.ts > last);
      const mine = cut < 0 ? pending : pending.slice(0, cut);
      pending = cut < 0 ? [] : pending.slice(cut);
      const merged = mergeValues(values, mine, remaining);
      // Unapplied values can make a page longer than a batch: still yielded a batch at a time.
      for (let i = 0; i < merged.length; i += RANGE_BATCH) yield merged.slice(i, i + RANGE_BATCH);
      remaining -= merged.length;
      if (last === Infinity) return;
      lower = last;
      exclusive = true;
    }
  }

  async valueAt(series: number, t: number): Promise<StoredValue | undefined> {
    this.checkOpen();
    if (!(t >= 0)) return undefined;
    const [row] = await this.conn.query<ValueRow>(this.sql.valueAt(series, Math.min(t, QUESTDB_TIME_RANGE.max)));
    const stored = row ? rowToStoredValue(row) : undefined;
    if (!this.unapplied.has(series)) return stored;
    const mine = this.unapplied.range(series, 0, Math.floor(t) + 1).pop();
    return mine && (!stored || mine.ts >= stored.ts) ? mine : stored;
  }

  async buckets(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    this.checkOpen();
    const lo = ceilToBucket(from);
    const hi = ceilToBucket(to);
    if (!(hi > lo)) return [];
    const rows = (await this.conn.query<HourlyRow>(this.sql.buckets(series, lo, hi))).map(hourlyRowToAggregate);
    return this.unapplied.has(series) ? mergeHours(rows, this.unapplied.hours(series, lo, hi)) : rows;
  }

  async delete(series: number, from: number, to: number): Promise<number> {
    this.checkOpen();
    if (!(to > from) || to <= 0) return 0;
    // Exclusive, so a concurrent append of this range is ordered before or after it.
    return this.writes.exclusive(() => this.inTurn(async () => {
      await this.repairFailed();
      await this.settleUnapplied();
      const [row] = await this.conn.query<{ n: string | number }>(this.sql.countLive(series, from, to));
      const n = Number(row?.n ?? 0);
      if (n === 0) return 0;
      const span: HourSpan = { series, from: floorToBucket(Math.max(0, from)), to: ceilToBucket(Math.min(to, QUESTDB_TIME_RANGE.max + 1)) };
      const intent = await this.beginIntent([span]);
      try {
        await this.conn.query(this.sql.softDelete(series, from, to));
        await this.waitApplied(this.names.raw);
        await this.recompute([span]);
      } catch (err) {
        this.failed([span]);
        throw err;
      }
      this.tails.forget(series);
      this.doneLines.push(intent);
      return n;
    }));
  }

  /**
   * Runs a write in this instance's turn at the table when other instances write it too; when one of
   * them wrote since our last turn, what we hold of the table is read again once QuestDB applied it.
   */
  private async inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const turn = await this.opts.writerTurn?.();
    try {
      if (turn?.othersWrote) {
        await this.waitApplied(this.names.raw, this.names.hourly);
        this.tails.clear();
      }
      return await fn();
    } finally {
      await turn?.release();
    }
  }

  async ping(): Promise<void> {
    this.checkOpen();
    await this.conn.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Answered writes are committed; their applying goes on in QuestDB without us. Wait briefly, for a
    // clean shutdown's next start to read them.
    await Promise.race([Promise.all(this.applying), new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref())]);
    await this.writes.close();
    // Mark the last intents done, so the next open has nothing to recompute.
    if (this.doneLines.length > 0 && this.repair.length === 0) await this.conn.ilp.send(this.takeDone()).catch(() => undefined);
    try {
      await this.conn.ilp.close();
    } finally {
      await this.conn.end();
    }
  }

  /** At open: the hours of intents a crash left undone are recomputed, then marked done. */
  async recoverIntents(): Promise<void> {
    await this.inTurn(() => this.replayIntents());
    // Intents older than a month are all done or replayed by now; their partitions can go.
    await this.conn.query(this.sql.dropOldIntents()).catch((err: unknown) => this.log.debug({ err }, 'no old intent partition dropped'));
  }

  private async replayIntents(): Promise<void> {
    const undone = await this.conn.query<IntentRow>(this.sql.undoneIntents());
    if (undone.length > 0) {
      this.log.warn({ intents: undone.length }, 'recomputing the hourly rows of writes a stop left unfinished');
      const spans = undone.map((r) => ({ series: Number(r.series), from: Number(r.ms_from), to: Number(r.ms_to) }));
      await this.waitApplied(this.names.raw);
      await this.recompute(spans);
      const done = new IlpLines();
      for (const r of undone) done.intent(this.names.pending, Number(r.id), Number(r.series), Number(r.ms_from), Number(r.ms_to), true, Number(r.ts_us));
      await this.conn.ilp.send(done.take());
      await this.waitApplied(this.names.pending);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('QuestDB store is closed');
  }

  /**
   * Steps 1–3 of the header comment, alone (the write queue); returns the done lines of the intent (step 5, once
   * the caller has seen the rows applied).
   */
  private async write(batch: ValueBatch): Promise<{ intent?: Buffer; layer?: Layer }> {
    await this.repairFailed();
    const sorted = sortRows(batch);
    await this.loadTails(sorted.segSeries);
    const plan = planHourly(batch, sorted, this.tails);
    const lines = appendLines(this.names, batch, sorted, plan.rows);
    const spans: HourSpan[] = [];
    for (let g = 0; g < sorted.segSeries.length; g++) {
      const first = batch.ts[sorted.perm[sorted.segStart[g]!]!]!;
      const last = batch.ts[sorted.perm[sorted.segEnd[g]! - 1]!]!;
      spans.push({ series: sorted.segSeries[g]!, from: floorToBucket(first), to: ceilToBucket(last + 1) });
    }
    // One request commits its raw and hourly rows together (QuestDB parses the whole request before it
    // commits any table), and every hour's raw rows are in the request of its hourly row: an append that
    // needs no recompute writes no intent, whatever the number of its requests. Those requests touch
    // disjoint (series, ts) and (series, hour) keys, so they go at once, in no particular commit order.
    const requests = plan.recompute.length === 0 ? requestsAtHours(lines, MAX_REQUEST_BYTES, REQUESTS_PER_APPEND) : undefined;
    const intent = requests ? undefined : await this.beginIntent(spans);
    // A late value's hours are recomputed from the table: what was answered before must be applied first.
    if (plan.recompute.length > 0) await this.settleUnapplied();
    try {
      if (requests) await this.sendAtOnce(requests);
      else for (const request of splitLines(lines.bytes, MAX_REQUEST_BYTES)) await this.conn.ilp.send(request);
      if (plan.recompute.length > 0) {
        await this.waitApplied(this.names.raw);
        await this.recompute(plan.recompute);
      }
    } catch (err) {
      this.failed(spans);
      throw err;
    }
    for (const [series, tail] of plan.tails) this.tails.set(series, tail);
    if (plan.recompute.length > 0) return intent ? { intent } : {}; // applied already: the recompute read it
    // Readable from here on, before QuestDB has applied it (unapplied.ts).
    const layer = layerOf(batch, sorted, plan.rows);
    this.unapplied.add(layer);
    return intent ? { intent, layer } : { layer };
  }

  /**
   * Writers wait while QuestDB's apply is too far behind, so the values held in memory stay bounded; a
   * server that does not catch up within the apply time-out fails the write (503 at the HTTP edge).
   */
  private async roomForUnapplied(): Promise<void> {
    const deadline = Date.now() + (this.opts.applyTimeoutMs ?? DEFAULT_APPLY_TIMEOUT_MS);
    while (this.unapplied.size >= MAX_UNAPPLIED_VALUES && this.applying.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw Object.assign(new Error(`QuestDB has not applied ${this.unapplied.size} committed values within the apply time-out`), { code: 'ETIMEDOUT' });
      }
      await Promise.race([...this.applying, new Promise((r) => setTimeout(r, Math.min(left, RETRY_APPLIED_MS)))]);
    }
  }

  /** Drops `layer` once QuestDB shows its rows applied; tries again while it cannot tell (an outage). */
  private watch(layer: Layer): void {
    const watching = (async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          await this.wal.appliedInBackground(this.names.raw, this.names.hourly);
          this.unapplied.remove(layer);
          return;
        } catch (err) {
          if (this.closed) return;
          if (attempt === 0) this.log.warn({ err }, 'could not see committed rows applied yet; reads keep them from memory meanwhile');
          await new Promise((r) => setTimeout(r, RETRY_APPLIED_MS));
        }
      }
    })();
    this.applying.add(watching);
    void watching.finally(() => this.applying.delete(watching));
  }

  /** Waits until every answered append is applied, and drops their layers (before a delete). */
  private async settleUnapplied(): Promise<void> {
    if (this.unapplied.size === 0) return;
    const layers = this.unapplied.snapshot();
    await this.waitApplied(this.names.raw, this.names.hourly);
    for (const layer of layers) this.unapplied.remove(layer);
  }

  /** Writes the intent rows of `spans` (with the done marks of earlier writes); returns their done lines. */
  private async beginIntent(spans: readonly HourSpan[]): Promise<Buffer> {
    const id = this.nextIntent++;
    const lines = new IlpLines();
    const done = new IlpLines();
    for (const span of spans) {
      lines.intent(this.names.pending, id, span.series, span.from, span.to, false, id);
      done.intent(this.names.pending, id, span.series, span.from, span.to, true, id);
    }
    await this.conn.ilp.send(Buffer.concat([this.takeDone(), lines.take()]));
    return done.take();
  }

  private takeDone(): Buffer {
    const lines = Buffer.concat(this.doneLines);
    this.doneLines = [];
    return lines;
  }

  /** Sends the requests of one append, at most REQUESTS_PER_APPEND at a time; the intents' done marks go with the first. */
  private async sendAtOnce(requests: Buffer[]): Promise<void> {
    if (this.doneLines.length > 0) requests[0] = Buffer.concat([this.takeDone(), requests[0]!]);
    let next = 0;
    const sender = async () => {
      while (next < requests.length) await this.conn.ilp.send(requests[next++]!);
    };
    const results = await Promise.allSettled(Array.from({ length: Math.min(REQUESTS_PER_APPEND, requests.length) }, sender));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /** Recomputes the hours of `spans` from the (applied) raw rows and writes them, then waits for them. */
  private async recompute(spans: readonly HourSpan[]): Promise<void> {
    const bySeries = new Map<number, HourSpan[]>();
    for (const span of spans) {
      let list = bySeries.get(span.series);
      if (!list) bySeries.set(span.series, (list = []));
      list.push(span);
    }
    const lines = new IlpLines();
    for (const [series, list] of bySeries) {
      const from = minOf(list.map((s) => s.from));
      const to = maxOf(list.map((s) => s.to));
      const existing = new Set(
        (await this.conn.query<{ bucket_us: string | number }>(this.sql.hourStarts(series, from, to))).map((r) => microsToMs(r.bucket_us)),
      );
      const rows = await this.conn.query<NumericRow>(this.sql.numericRows([series], from, to));
      const recomputed = foldRecomputed(rows, list, new Map([[series, existing]]));
      for (const { aggregate } of recomputed.rows) lines.hourly(this.names.hourly, series, aggregate);
      for (const { start } of recomputed.emptyHours) lines.emptyHour(this.names.hourly, series, start);
      if (lines.size >= MAX_REQUEST_BYTES) await this.conn.ilp.send(lines.take());
      this.tails.forget(series);
    }
    if (lines.length > 0) await this.conn.ilp.send(lines.take());
    await this.waitApplied(this.names.hourly);
  }

  /** A write failed part-way: what it may have committed is made consistent before the next write. */
  private failed(spans: readonly HourSpan[]): void {
    for (const span of spans) this.repair.push(span);
    for (const span of spans) this.tails.forget(span.series);
  }

  private async repairFailed(): Promise<void> {
    if (this.repair.length === 0) return;
    const spans = this.repair;
    await this.waitApplied(this.names.raw);
    await this.recompute(spans);
    this.repair = this.repair.slice(spans.length);
    this.log.info({ spans: spans.length }, 'recomputed the hourly rows of a failed write');
  }

  /** Loads the tails of the series not known yet (one query for all of them). */
  private async loadTails(series: readonly number[]): Promise<void> {
    const unknown = this.tails.unknown(series);
    if (unknown.length === 0) return;
    const newest = new Map<number, BucketAggregate>();
    for (let i = 0; i < unknown.length; i += 1000) {
      const chunk = unknown.slice(i, i + 1000);
      for (const row of await this.conn.query<HourlyRow & { series: number | string }>(this.sql.tails(chunk))) {
        newest.set(Number(row.series), hourlyRowToAggregate(row));
      }
    }
    this.tails.load(unknown, newest);
  }

  /** Waits until everything committed to these tables so far is applied (visible to reads). */
  private waitApplied(...tables: string[]): Promise<void> {
    return this.wal.applied(...tables);
  }
}

interface IntentRow {
  id: string | number;
  series: number;
  ms_from: string | number;
  ms_to: string | number;
  ts_us: string | number;
}

/** Rejects a batch QuestDB cannot store as given, before anything is sent; turns -0 into 0. */
export function validateBatch(batch: ValueBatch): void {
  const { length } = batch;
  if (batch.series.length < length || batch.ts.length < length || batch.value.length < length) {
    throw new RangeError('ValueBatch columns are shorter than its length');
  }
  for (let i = 0; i < length; i++) {
    validateTimestamp(batch.ts[i]!, i);
    const v = batch.value[i]!;
    if (v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY) throw new RangeError(`row ${i}: value ${v} is not finite`);
    // The line protocol's text writes -0 as 0: the hourly rows and the reads from memory must say 0 too.
    if (v === 0) batch.value[i] = 0;
  }
}
