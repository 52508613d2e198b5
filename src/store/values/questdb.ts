// QuestDB point-value store: writes over ILP/HTTP (@questdb/nodejs-client), reads over the PostgreSQL
// wire protocol (pg). Written from the QuestDB documentation; see the notes below for each fact relied on.
//
// Table (created here, over PG-wire, before the first write):
//   CREATE TABLE IF NOT EXISTS <table> (series_id INT, value DOUBLE, text VARCHAR, annotation VARCHAR,
//     deleted BOOLEAN, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL DEDUP UPSERT KEYS(ts, series_id)
// - DEDUP UPSERT KEYS(ts, series_id) is exactly our upsert on (series, ts): a row whose keys match an
//   existing row replaces it, also within one batch, the later row winning. Dedup needs a WAL table and
//   the designated timestamp among the keys; key columns must be fixed-size (INT and SYMBOL are, VARCHAR
//   and STRING are not).
// - series_id is INT, not SYMBOL: series are already integers (data point ids), INT is 4 bytes, needs no
//   symbol table to size (CAPACITY) or grow with every new point, keeps integer comparison semantics and
//   is a valid dedup key. ILP sends integers as 64-bit `i` values; the server casts them into an INT
//   column. The price: no symbol index, so a series filter scans the rows of the time interval (QuestDB
//   still prunes partitions and binary-searches the designated timestamp, and filters with its JIT).
// - VARCHAR appeared in QuestDB 8.0; on an older server the table is created with STRING instead.
// - DOUBLE has no NULL distinct from NaN, so a NaN written as a numeric value reads back as null.
// - Designated timestamps cannot precede 1970-01-01; append rejects negative timestamps.
//
// Deletes: QuestDB has no DELETE statement (its PG-wire docs list DELETE as unsupported). A range
// delete must keep every other series' rows in the same partitions, so dropping or rewriting
// partitions is out. We soft-delete instead: `UPDATE t SET deleted = true WHERE series_id = $1 AND
// ts >= $2 AND ts < $3 AND NOT deleted`, and every read filters `NOT deleted`. A later write of the same
// (series, ts) replaces the whole row through dedup and writes deleted = false explicitly, so the value
// is back. UPDATE on a WAL table returns no row count, so delete() counts first, then updates, then
// waits for the WAL to be applied like append does. Deleted rows keep their disk space.
//
// Visibility: an ILP/HTTP request is one transaction, committed to the WAL sequencer when the
// request returns; a WAL apply job makes it visible to readers later. append() therefore reads
// wal_tables() after the flush and polls until writerTxn >= the sequencerTxn it saw (the QuestDB
// cookbook's "check transaction applied" recipe), failing on a suspended table or after a timeout.
// Such a failure leaves the write committed; retrying the append is harmless thanks to dedup.
// Durability is QuestDB's commit mode (`cairo.commit.mode`): every mode survives a crash of the
// QuestDB process; only `sync` (or `adaptive`, 10.2+) survives an OS crash or power loss.
//
// Buckets: pushed down as one query per call. lag()/lead() over the series' numeric rows ordered by
// ts mark the first and last row of each hour and give each row the time until the next one; a
// GROUP BY on date_trunc('hour', ts) then needs only count/sum/min/max, which do not depend on row
// order. Window functions with lead/lag are recent, so open() probes the query once and, on a server
// that rejects it, buckets() folds the ordered numeric rows in JS instead (BucketFolder).
//
// Timestamps: QuestDB stores TIMESTAMP as microseconds since the epoch, UTC, and sends it over PG-wire
// as TIMESTAMP WITHOUT TIME ZONE, which pg would read in the local zone. So reads select
// cast(ts AS LONG) (epoch micros, an int8 that pg returns as a string) and convert with BigInt; bind
// parameters are ISO strings with microseconds and 'Z' ('2024-01-01T00:00:00.000000Z'), a format
// QuestDB parses as a timestamp.
import { Sender } from '@questdb/nodejs-client';
import pg from 'pg';
import { BUCKET_MS, type BucketAggregate, type PointValueStore, type StoredValue, type ValueBatch } from './types.js';

export interface QuestDbStoreOptions {
  /** ILP client configuration (QUESTDB_ILP), e.g. `http::addr=host:9000`; http or https only. */
  ilp: string;
  /** PostgreSQL-wire URL (QUESTDB_PG), e.g. `postgres://admin:quest@host:8812/qdb`. */
  pg: string;
  /**
   * ILP protocol version: 1 sends doubles as text (every server), 2 sends them binary (newer servers).
   * Unset: the config string's `protocol_version`, else the client negotiates with the server.
   */
  protocolVersion?: 1 | 2;
  /** Table name (lower-case identifier); default `point_values`. */
  table?: string;
  /** How long append/delete wait for the WAL to be applied; default 30 s. */
  applyTimeoutMs?: number;
  /** PG-wire pool size; default 4. */
  poolSize?: number;
}

/** The store, plus what the QuestDB-specific tests look at. */
export interface QuestDbStore extends PointValueStore {
  readonly engine: 'questdb';
  readonly table: string;
  /** True when buckets() runs in SQL (window functions lead/lag available); false: folded in JS. */
  readonly bucketsInSql: boolean;
  /** buckets() computed from raw rows in JS (the fallback path), for comparison in tests. */
  bucketsFromRows(series: number, from: number, to: number): Promise<BucketAggregate[]>;
}

export const DEFAULT_TABLE = 'point_values';
const DEFAULT_APPLY_TIMEOUT_MS = 30_000;
/** Rows per range() batch. */
export const RANGE_BATCH = 10_000;
/** An append is flushed (one HTTP request, one transaction) whenever its buffer grows past this. */
const FLUSH_BYTES = 8 * 1024 * 1024;
/** Largest timestamp a bound is clamped to: 9999-12-31T23:59:59.999Z. */
export const MAX_TS_MS = 253_402_300_799_999;

// ---------------------------------------------------------------------------------------------
// Pure helpers (unit-tested without a server)

/** Table names become directory names and cannot be bind parameters: allow plain lower-case identifiers. */
export function validateTableName(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,126}$/.test(name)) {
    throw new Error(`QuestDB table name must be a lower-case identifier ([a-z_][a-z0-9_]*), got "${name}"`);
  }
  return name;
}

/**
 * The Sender configuration: the caller's string with `auto_flush=off` (we choose the transaction
 * boundaries: one flush is one HTTP request is one transaction) and, when given, `protocol_version`.
 * Values may contain ';' escaped as ';;' (the client's config string syntax); a later key overrides.
 */
export function buildSenderConfig(ilp: string, protocolVersion?: 1 | 2): string {
  const sep = ilp.indexOf('::');
  if (sep < 0) throw new Error('QuestDB ILP configuration must look like http::addr=host:9000');
  const schema = ilp.slice(0, sep).trim();
  if (schema !== 'http' && schema !== 'https') {
    throw new Error(`QuestDB ILP transport must be http or https (got "${schema}"): only HTTP reports errors and commits one transaction per request`);
  }
  const settings = new Map<string, string>();
  for (const part of splitSettings(ilp.slice(sep + 2))) {
    const eq = part.indexOf('=');
    if (eq < 0) throw new Error(`QuestDB ILP configuration: missing '=' in "${part}"`);
    settings.set(part.slice(0, eq), part.slice(eq + 1));
  }
  if (!settings.get('addr')) throw new Error("QuestDB ILP configuration needs 'addr'");
  settings.set('auto_flush', 'off');
  settings.delete('auto_flush_rows');
  settings.delete('auto_flush_interval');
  if (protocolVersion !== undefined) settings.set('protocol_version', String(protocolVersion));
  const body = [...settings].map(([k, v]) => `${k}=${v.replaceAll(';', ';;')}`).join(';');
  return `${schema}::${body};`;
}

/** Splits `k=v;k=v;` on single semicolons, turning ';;' back into ';'. */
function splitSettings(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === ';') {
      if (s[i + 1] === ';') {
        cur += ';';
        i++;
        continue;
      }
      if (cur.trim() !== '') out.push(cur);
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur.trim() !== '') out.push(cur);
  return out;
}

export type TextType = 'VARCHAR' | 'STRING';

export function createTableSql(table: string, textType: TextType = 'VARCHAR'): string {
  validateTableName(table);
  return (
    `CREATE TABLE IF NOT EXISTS ${table} (` +
    `series_id INT, value DOUBLE, text ${textType}, annotation ${textType}, deleted BOOLEAN, ts TIMESTAMP` +
    `) TIMESTAMP(ts) PARTITION BY DAY WAL DEDUP UPSERT KEYS(ts, series_id)`
  );
}

/** table_columns() rows → what is wrong with an existing table, if anything. */
export function checkSchema(rows: readonly Record<string, unknown>[]): string[] {
  const byName = new Map<string, Record<string, unknown>>();
  for (const r of rows) byName.set(String(field(r, 'column') ?? '').toLowerCase(), r);
  const problems: string[] = [];
  const expect: [string, RegExp][] = [
    ['series_id', /^INT$/i],
    ['value', /^DOUBLE$/i],
    ['text', /^(VARCHAR|STRING)$/i],
    ['annotation', /^(VARCHAR|STRING)$/i],
    ['deleted', /^BOOLEAN$/i],
    ['ts', /^TIMESTAMP$/i],
  ];
  for (const [name, type] of expect) {
    const r = byName.get(name);
    if (!r) problems.push(`column ${name} is missing`);
    else if (!type.test(String(field(r, 'type') ?? ''))) problems.push(`column ${name} has type ${String(field(r, 'type'))}`);
  }
  const ts = byName.get('ts');
  if (ts && !truthy(field(ts, 'designated'))) problems.push('ts is not the designated timestamp');
  for (const key of ['ts', 'series_id']) {
    const r = byName.get(key);
    if (r && !truthy(field(r, 'upsertKey'))) problems.push(`${key} is not a DEDUP UPSERT KEY`);
  }
  return problems;
}

/** A row value by column name, ignoring case (QuestDB's camelCase labels may come back either way). */
function field(row: Record<string, unknown>, name: string): unknown {
  if (name in row) return row[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(row)) if (k.toLowerCase() === lower) return row[k];
  return undefined;
}

function truthy(v: unknown): boolean {
  return v === true || v === 't' || v === 'true' || v === 1 || v === '1';
}

/** Epoch micros (int8 text from pg, or bigint) → epoch ms, exactly (floor). */
export function microsToMs(us: string | number | bigint): number {
  const b = typeof us === 'bigint' ? us : BigInt(us);
  const q = b / 1000n;
  return Number(b < 0n && q * 1000n !== b ? q - 1n : q);
}

/** Epoch micros → the bind-parameter text QuestDB parses as a timestamp: 'YYYY-MM-DDTHH:mm:ss.ffffffZ'. */
export function microsParam(us: string | bigint): string {
  let b = typeof us === 'bigint' ? us : BigInt(us);
  if (b < 0n) b = 0n;
  const max = BigInt(MAX_TS_MS) * 1000n + 999n;
  if (b > max) b = max;
  const ms = b / 1000n;
  const rem = b - ms * 1000n;
  const iso = new Date(Number(ms)).toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ
  return `${iso.slice(0, -1)}${rem.toString().padStart(3, '0')}Z`;
}

/**
 * Epoch ms → a bound for `ts >= $n` / `ts < $n`. Stored timestamps are whole ms, so a fractional bound
 * rounds up (ts >= 1.5 ⇔ ts >= 2); bounds are clamped into QuestDB's designated-timestamp range.
 */
export function msParam(ms: number): string {
  if (Number.isNaN(ms)) throw new RangeError('timestamp bound is NaN');
  const whole = Math.min(MAX_TS_MS, Math.max(0, Math.ceil(ms)));
  return microsParam(BigInt(whole) * 1000n);
}

/** The start of the first bucket starting at or after ms. */
export function ceilToBucket(ms: number): number {
  return Math.ceil(ms / BUCKET_MS) * BUCKET_MS;
}

export function floorToBucket(ms: number): number {
  return Math.floor(ms / BUCKET_MS) * BUCKET_MS;
}

// -- WAL apply wait -----------------------------------------------------------------------------

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

export interface WaitForWalOptions {
  table: string;
  /** Reads the table's wal_tables() row; undefined when the table is not listed. */
  read: () => Promise<WalStatus | undefined>;
  timeoutMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  minPollMs?: number;
  maxPollMs?: number;
}

/**
 * Waits until everything committed to the table's WAL sequencer when called is applied: reads
 * sequencerTxn once (after our commit returned, so it covers our transaction) and polls until
 * writerTxn reaches it. Throws WalSuspendedError when the table is suspended before that, and
 * WalApplyTimeoutError after timeoutMs.
 */
export async function waitForWalApply(opts: WaitForWalOptions): Promise<WalStatus> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const maxPoll = opts.maxPollMs ?? 100;
  let delay = opts.minPollMs ?? 2;
  const started = now();
  const read = async (): Promise<WalStatus> => {
    const s = await opts.read();
    if (!s) throw new Error(`QuestDB table ${opts.table} is not listed by wal_tables(): it must be a WAL table`);
    return s;
  };
  let status = await read();
  const target = status.sequencerTxn;
  for (;;) {
    if (status.writerTxn >= target) return status;
    if (status.suspended) throw new WalSuspendedError(opts.table, status);
    const elapsed = now() - started;
    if (elapsed >= opts.timeoutMs) throw new WalApplyTimeoutError(opts.table, target, status, opts.timeoutMs);
    await sleep(Math.min(delay, Math.max(1, opts.timeoutMs - elapsed)));
    delay = Math.min(maxPoll, delay * 2);
    status = await read();
  }
}

// -- ILP rows -------------------------------------------------------------------------------------

/** What writeRows needs of a Sender (or a SenderBuffer, in tests). */
export interface IlpRowSink {
  table(name: string): unknown;
  intColumn(name: string, value: number): unknown;
  floatColumn(name: string, value: number): unknown;
  stringColumn(name: string, value: string): unknown;
  booleanColumn(name: string, value: boolean): unknown;
  at(timestamp: number, unit: 'ms'): void | Promise<void>;
}

/**
 * Rejects a batch, before anything of it is sent, when a row cannot be stored as given: timestamps
 * must be whole ms between 1970 (QuestDB's designated timestamp cannot be earlier) and 9999, values
 * finite or NaN (NaN = no numeric value). The same RangeErrors as the DuckDB engine.
 */
export function validateBatch(batch: ValueBatch): void {
  const { length } = batch;
  if (batch.series.length < length || batch.ts.length < length || batch.value.length < length) {
    throw new RangeError('ValueBatch columns are shorter than its length');
  }
  for (let i = 0; i < length; i++) {
    const ts = batch.ts[i]!;
    if (!Number.isInteger(ts)) throw new RangeError(`row ${i}: timestamp ${ts} is not a whole number of ms`);
    if (ts < 0) throw new RangeError(`row ${i}: timestamp ${ts} is before 1970, which QuestDB cannot store`);
    if (ts > MAX_TS_MS) throw new RangeError(`row ${i}: timestamp ${ts} is after year 9999`);
    const v = batch.value[i]!;
    if (v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY) throw new RangeError(`row ${i}: value ${v} is not finite`);
  }
}

/**
 * Writes rows [start, end) of the batch; returns an estimate of the bytes written. Numeric rows put
 * `value`, ALPHANUMERIC rows (value NaN) `text`; a column left out is NULL. `deleted=false` is written
 * on every row so that rewriting a soft-deleted (series, ts) brings it back.
 */
export async function writeRows(sink: IlpRowSink, table: string, batch: ValueBatch, start: number, end: number): Promise<number> {
  let bytes = 0;
  for (let i = start; i < end; i++) {
    sink.table(table);
    sink.intColumn('series_id', batch.series[i]!);
    const v = batch.value[i]!;
    if (!Number.isNaN(v)) sink.floatColumn('value', v);
    const text = batch.text?.[i];
    if (text !== null && text !== undefined) {
      sink.stringColumn('text', text);
      bytes += text.length * 3;
    }
    const annotation = batch.annotation?.[i];
    if (annotation !== null && annotation !== undefined) {
      sink.stringColumn('annotation', annotation);
      bytes += annotation.length * 3;
    }
    sink.booleanColumn('deleted', false);
    await sink.at(batch.ts[i]!, 'ms');
    bytes += 64 + table.length;
  }
  return bytes;
}

// -- Reads ------------------------------------------------------------------------------------------

export interface ValueRow {
  ts_us: string | number | bigint;
  value: number | string | null;
  text: string | null;
  annotation: string | null;
}

export function rowToStoredValue(row: ValueRow): StoredValue {
  const v = row.value === null || row.value === undefined ? null : Number(row.value);
  return {
    ts: microsToMs(row.ts_us),
    value: v === null || Number.isNaN(v) ? null : v,
    text: row.text ?? null,
    annotation: row.annotation ?? null,
  };
}

export interface BucketRow {
  first_us: string | number | bigint;
  last_us: string | number | bigint;
  n: string | number;
  s: number | string;
  mn: number | string;
  mx: number | string;
  first_v: number | string;
  last_v: number | string;
  integral: number | string;
}

export function bucketRowToAggregate(row: BucketRow): BucketAggregate {
  const firstTs = microsToMs(row.first_us);
  return {
    start: floorToBucket(firstTs),
    count: Number(row.n),
    sum: Number(row.s),
    min: Number(row.mn),
    max: Number(row.mx),
    firstTs,
    firstValue: Number(row.first_v),
    lastTs: microsToMs(row.last_us),
    lastValue: Number(row.last_v),
    innerIntegral: Number(row.integral),
  };
}

/** Folds ascending (ts, value) pairs into hourly partial aggregates: the JS path and the reference. */
export class BucketFolder {
  private readonly done: BucketAggregate[] = [];
  private cur: BucketAggregate | undefined;

  add(ts: number, value: number): void {
    const start = floorToBucket(ts);
    const cur = this.cur;
    if (!cur || cur.start !== start) {
      if (cur) this.done.push(cur);
      this.cur = { start, count: 1, sum: value, min: value, max: value, firstTs: ts, firstValue: value, lastTs: ts, lastValue: value, innerIntegral: 0 };
      return;
    }
    cur.count++;
    cur.sum += value;
    if (value < cur.min) cur.min = value;
    if (value > cur.max) cur.max = value;
    cur.innerIntegral += cur.lastValue * (ts - cur.lastTs);
    cur.lastTs = ts;
    cur.lastValue = value;
  }

  finish(): BucketAggregate[] {
    if (this.cur) this.done.push(this.cur);
    this.cur = undefined;
    return this.done;
  }
}

/** Every statement the store runs; values are always bind parameters ($n), only the validated table name is spliced. */
export function statements(table: string) {
  validateTableName(table);
  const cols = 'cast(ts AS LONG) AS ts_us, value, text, annotation';
  return {
    latest: `SELECT ${cols} FROM ${table} WHERE series_id = $1 AND NOT deleted ORDER BY ts DESC LIMIT $2`,
    rangeFirst: `SELECT ${cols} FROM ${table} WHERE series_id = $1 AND ts >= $2 AND ts < $3 AND NOT deleted ORDER BY ts LIMIT $4`,
    rangeNext: `SELECT ${cols} FROM ${table} WHERE series_id = $1 AND ts > $2 AND ts < $3 AND NOT deleted ORDER BY ts LIMIT $4`,
    /** $2 is t + 1 ms: the newest value with ts <= t. */
    valueAt: `SELECT ${cols} FROM ${table} WHERE series_id = $1 AND ts < $2 AND NOT deleted ORDER BY ts DESC LIMIT 1`,
    numericRows: `SELECT cast(ts AS LONG) AS ts_us, value FROM ${table} WHERE series_id = $1 AND ts >= $2 AND ts < $3 AND value IS NOT NULL AND NOT deleted ORDER BY ts`,
    /**
     * Hourly partial aggregates in one pass: lag/lead over the series' numeric rows (ordered by ts)
     * tell each row whether it is the first or last of its hour and how long it stays in force
     * inside it; the GROUP BY then needs only order-independent aggregates (count, sum, min, max).
     * bucket is a grouping key only; the bucket start is computed from first_us in JS.
     */
    buckets:
      `WITH r AS (` +
      `SELECT ts, cast(ts AS LONG) AS ts_us, cast(date_trunc('hour', ts) AS LONG) AS bucket, value FROM ${table} ` +
      `WHERE series_id = $1 AND ts >= $2 AND ts < $3 AND value IS NOT NULL AND NOT deleted` +
      `), w AS (` +
      `SELECT ts_us, bucket, value, ` +
      `lag(bucket) OVER (ORDER BY ts) AS prev_bucket, ` +
      `lead(bucket) OVER (ORDER BY ts) AS next_bucket, ` +
      `lead(ts_us) OVER (ORDER BY ts) AS next_us FROM r` +
      `) SELECT bucket, count(*) AS n, sum(value) AS s, min(value) AS mn, max(value) AS mx, ` +
      `min(ts_us) AS first_us, max(ts_us) AS last_us, ` +
      `sum(CASE WHEN prev_bucket = bucket THEN 0.0 ELSE value END) AS first_v, ` +
      `sum(CASE WHEN next_bucket = bucket THEN 0.0 ELSE value END) AS last_v, ` +
      `sum(CASE WHEN next_bucket = bucket THEN value * ((next_us - ts_us) / 1000.0) ELSE 0.0 END) AS integral ` +
      `FROM w GROUP BY bucket ORDER BY bucket`,
    countLive: `SELECT count(*) AS n FROM ${table} WHERE series_id = $1 AND ts >= $2 AND ts < $3 AND NOT deleted`,
    softDelete: `UPDATE ${table} SET deleted = true WHERE series_id = $1 AND ts >= $2 AND ts < $3 AND NOT deleted`,
    walStatus: `SELECT * FROM wal_tables() WHERE name = $1`,
    /** table_columns() takes a constant name: the validated identifier as a string literal. */
    columns: `SELECT * FROM table_columns('${table}')`,
  };
}

// -- The store --------------------------------------------------------------------------------------

type Statements = ReturnType<typeof statements>;

/** A FIFO lock: the Sender's buffer is shared, so appends build and flush one at a time. */
function mutex(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>) => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

function senderLog(level: 'error' | 'warn' | 'info' | 'debug', message: string | Error): void {
  if (level === 'error' || level === 'warn') console.warn(`[questdb ilp] ${level}: ${message instanceof Error ? message.message : message}`);
}

/** What the store needs of the ILP Sender. */
export interface IlpSender extends IlpRowSink {
  flush(): Promise<unknown>;
  reset(): unknown;
  close(): Promise<void>;
}

/** The two connections the store works through: PG-wire queries and the ILP sender. */
export interface QuestDbConnections {
  query<T extends object>(text: string, values?: unknown[]): Promise<T[]>;
  sender: IlpSender;
  /** Closes the PG-wire side (the pool). */
  end(): Promise<void>;
}

export async function openQuestDbStore(options: QuestDbStoreOptions): Promise<QuestDbStore> {
  const table = validateTableName(options.table ?? DEFAULT_TABLE);
  const senderConfig = buildSenderConfig(options.ilp, options.protocolVersion);
  const pool = new pg.Pool({ connectionString: options.pg, max: options.poolSize ?? 4 });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    const sender = await Sender.fromConfig(senderConfig, { log: senderLog });
    return await initQuestDbStore(
      {
        query: async <T extends object>(text: string, values?: unknown[]) => (await pool.query(text, values)).rows as T[],
        sender,
        end: () => pool.end(),
      },
      { table, ...(options.applyTimeoutMs !== undefined ? { applyTimeoutMs: options.applyTimeoutMs } : {}) },
    );
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}

/**
 * Creates (or checks) the table, probes for window functions and returns the store over the given
 * connections; closes them when it fails. openQuestDbStore's second half, separate for tests.
 */
export async function initQuestDbStore(
  conn: QuestDbConnections,
  opts: { table: string; applyTimeoutMs?: number; sleep?: (ms: number) => Promise<void>; now?: () => number },
): Promise<QuestDbStore> {
  const table = validateTableName(opts.table);
  const applyTimeoutMs = opts.applyTimeoutMs ?? DEFAULT_APPLY_TIMEOUT_MS;
  const sql: Statements = statements(table);
  const { query, sender: ilp } = conn;

  let bucketsInSql = false;
  try {
    await createTable(query, table);
    const problems = checkSchema(await query<Record<string, unknown>>(sql.columns));
    if (problems.length) throw new Error(`QuestDB table ${table} exists with another layout: ${problems.join('; ')}`);
    // Window functions (lead/lag) are recent; probe once on an empty range and fall back to JS folding.
    try {
      await query(sql.buckets, [-1, msParam(0), msParam(1)]);
      bucketsInSql = true;
    } catch {
      bucketsInSql = false;
    }
  } catch (err) {
    await ilp.close().catch(() => undefined);
    await conn.end().catch(() => undefined);
    throw err;
  }

  const readWal = async (): Promise<WalStatus | undefined> => {
    const rows = await query<Record<string, unknown>>(sql.walStatus, [table]);
    return rows[0] ? parseWalRow(rows[0]) : undefined;
  };
  const waitApplied = () =>
    waitForWalApply({
      table,
      read: readWal,
      timeoutMs: applyTimeoutMs,
      ...(opts.sleep ? { sleep: opts.sleep } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    });
  const exclusive = mutex();
  let closed = false;
  const open = () => {
    if (closed) throw new Error('QuestDB store is closed');
  };

  async function bucketsFromRows(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    const lo = ceilToBucket(from);
    const hi = ceilToBucket(to);
    if (!(hi > lo)) return [];
    const folder = new BucketFolder();
    const rows = await query<{ ts_us: string; value: number | null }>(sql.numericRows, [series, msParam(lo), msParam(hi)]);
    for (const r of rows) {
      if (r.value === null || Number.isNaN(r.value)) continue;
      folder.add(microsToMs(r.ts_us), Number(r.value));
    }
    return folder.finish();
  }

  const store: QuestDbStore = {
    engine: 'questdb',
    table,
    get bucketsInSql() {
      return bucketsInSql;
    },

    async append(batch) {
      open();
      if (batch.length === 0) return;
      validateBatch(batch);
      await exclusive(async () => {
        try {
          let start = 0;
          while (start < batch.length) {
            let end = start;
            let bytes = 0;
            while (end < batch.length && bytes < FLUSH_BYTES) {
              const next = Math.min(batch.length, end + 1_000);
              bytes += await writeRows(ilp, table, batch, end, next);
              end = next;
            }
            await ilp.flush(); // one HTTP request: one transaction, committed when it returns
            start = end;
          }
        } catch (err) {
          ilp.reset(); // drop a half-built row or an unsent chunk; the next append starts clean
          throw err;
        }
      });
      await waitApplied();
    },

    async latest(series, limit) {
      open();
      if (!(limit >= 1)) return [];
      const rows = await query<ValueRow>(sql.latest, [series, Math.floor(limit)]);
      return rows.map(rowToStoredValue);
    },

    async *range(series, from, to, limit) {
      open();
      let remaining = limit === undefined ? Infinity : Math.floor(limit);
      if (!(remaining > 0) || !(to > from) || to <= 0) return;
      const upper = msParam(to);
      let lower = msParam(from);
      let first = true;
      while (remaining > 0) {
        const n = Math.min(RANGE_BATCH, remaining);
        const rows = await query<ValueRow>(first ? sql.rangeFirst : sql.rangeNext, [series, lower, upper, n]);
        if (rows.length === 0) return;
        yield rows.map(rowToStoredValue);
        remaining -= rows.length;
        if (rows.length < n) return;
        lower = microsParam(BigInt(rows[rows.length - 1]!.ts_us));
        first = false;
      }
    },

    async valueAt(series, t) {
      open();
      if (!(t >= 0)) return undefined;
      const rows = await query<ValueRow>(sql.valueAt, [series, msParam(Math.floor(t) + 1)]);
      return rows[0] ? rowToStoredValue(rows[0]) : undefined;
    },

    async buckets(series, from, to) {
      open();
      if (!bucketsInSql) return bucketsFromRows(series, from, to);
      const lo = ceilToBucket(from);
      const hi = ceilToBucket(to);
      if (!(hi > lo)) return [];
      const rows = await query<BucketRow>(sql.buckets, [series, msParam(lo), msParam(hi)]);
      return rows.map(bucketRowToAggregate);
    },

    async delete(series, from, to) {
      open();
      if (!(to > from) || to <= 0) return 0;
      const params = [series, msParam(from), msParam(to)];
      // Under the append lock, so a concurrent append of this range is ordered before or after it.
      return exclusive(async () => {
        const [row] = await query<{ n: string | number }>(sql.countLive, params);
        const n = Number(row?.n ?? 0);
        if (n === 0) return 0;
        await query(sql.softDelete, params);
        await waitApplied();
        return n;
      });
    },

    async ping() {
      open();
      await query('SELECT 1');
    },

    async close() {
      if (closed) return;
      closed = true;
      await exclusive(async () => undefined); // let a running append or delete finish
      try {
        await ilp.close();
      } finally {
        await conn.end();
      }
    },

    bucketsFromRows: (series, from, to) => {
      open();
      return bucketsFromRows(series, from, to);
    },
  };
  return store;
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
