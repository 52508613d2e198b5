// Every statement the QuestDB store runs over PG-wire, and the check of existing tables' layout.
//
// No bind parameters. QuestDB caches compiled SELECTs by their text, and a cached plan could keep a
// time bound from an earlier execution's bind values (seen on 8.0.3: valueAt and range reads answering
// rows of a previous call). Every value in these statements is a number this store computed itself (a
// data point id, an epoch instant, a row count), checked and written as a literal, so each distinct
// query is its own plan; no client text ever reaches QuestDB SQL. Only validated identifiers (the
// table names) are spliced besides.
//
// Tables, for QUESTDB_TABLE = t (see docs/ARCHITECTURE.md "QuestDB layout" for why):
// - t: raw values. series SYMBOL INDEX (a data point id as text), value DOUBLE, text and annotation
//   VARCHAR, deleted BOOLEAN (soft delete: QuestDB has no DELETE), ts the designated timestamp,
//   PARTITION BY MONTH, WAL, DEDUP UPSERT KEYS(ts, series): a row written again for (series, ts) replaces
//   the old one, also inside one request (the later wins).
// - t_hourly: one row per (series, hour): the hourly partial aggregate every rollup is built from,
//   maintained on write (hourly.ts). PARTITION BY YEAR, DEDUP UPSERT KEYS(bucket, series): writing an
//   hour again replaces its row; a row with n = 0 is an hour whose values were all deleted.
// - t_pending: intents, one row per series an append or delete touches (its time span), written before
//   the values and rewritten with done = true once the hourly rows are durable; open() recomputes the
//   hours of any left undone (a crash in between).
// - t_owner: which installation owns the tables (owner.ts).
import { validateTableName } from './config.js';
import { field, truthy } from './rows.js';
import { MAX_TS_MS } from './time.js';

/** Companion table names of `table`. */
export function tableNames(table: string): { raw: string; hourly: string; pending: string } {
  validateTableName(table);
  return { raw: table, hourly: validateTableName(`${table}_hourly`), pending: validateTableName(`${table}_pending`) };
}

/** Symbol capacity: the number of data points one installation is expected to hold (a hint; it grows). */
const SERIES_CAPACITY = 131_072;

export function createTableStatements(table: string): string[] {
  const { raw, hourly, pending } = tableNames(table);
  const series = `series SYMBOL CAPACITY ${SERIES_CAPACITY} CACHE INDEX`;
  return [
    `CREATE TABLE IF NOT EXISTS ${raw} (${series}, value DOUBLE, text VARCHAR, annotation VARCHAR, deleted BOOLEAN, ts TIMESTAMP) ` +
      'TIMESTAMP(ts) PARTITION BY MONTH WAL DEDUP UPSERT KEYS(ts, series)',
    `CREATE TABLE IF NOT EXISTS ${hourly} (${series}, n LONG, sum DOUBLE, min DOUBLE, max DOUBLE, first_ms LONG, first_value DOUBLE, ` +
      'last_ms LONG, last_value DOUBLE, inner_integral DOUBLE, bucket TIMESTAMP) TIMESTAMP(bucket) PARTITION BY YEAR WAL DEDUP UPSERT KEYS(bucket, series)',
    `CREATE TABLE IF NOT EXISTS ${pending} (id LONG, series INT, ms_from LONG, ms_to LONG, done BOOLEAN, ts TIMESTAMP) ` +
      'TIMESTAMP(ts) PARTITION BY MONTH WAL DEDUP UPSERT KEYS(ts, id, series)',
  ];
}

/** What each table must look like: column → type, the designated timestamp and the dedup keys. */
const LAYOUTS: Record<'raw' | 'hourly' | 'pending', { columns: Record<string, RegExp>; designated: string; keys: string[] }> = {
  raw: {
    columns: { series: /^SYMBOL$/i, value: /^DOUBLE$/i, text: /^VARCHAR$/i, annotation: /^VARCHAR$/i, deleted: /^BOOLEAN$/i, ts: /^TIMESTAMP$/i },
    designated: 'ts',
    keys: ['ts', 'series'],
  },
  hourly: {
    columns: {
      series: /^SYMBOL$/i,
      n: /^LONG$/i,
      sum: /^DOUBLE$/i,
      min: /^DOUBLE$/i,
      max: /^DOUBLE$/i,
      first_ms: /^LONG$/i,
      first_value: /^DOUBLE$/i,
      last_ms: /^LONG$/i,
      last_value: /^DOUBLE$/i,
      inner_integral: /^DOUBLE$/i,
      bucket: /^TIMESTAMP$/i,
    },
    designated: 'bucket',
    keys: ['bucket', 'series'],
  },
  pending: {
    columns: { id: /^LONG$/i, series: /^INT$/i, ms_from: /^LONG$/i, ms_to: /^LONG$/i, done: /^BOOLEAN$/i, ts: /^TIMESTAMP$/i },
    designated: 'ts',
    keys: ['ts', 'id', 'series'],
  },
};

/** table_columns() rows of an existing table → what is wrong with its layout, if anything. */
export function checkSchema(kind: keyof typeof LAYOUTS, rows: readonly Record<string, unknown>[]): string[] {
  const layout = LAYOUTS[kind];
  const byName = new Map<string, Record<string, unknown>>();
  for (const r of rows) byName.set(String(field(r, 'column') ?? '').toLowerCase(), r);
  const problems: string[] = [];
  for (const [name, type] of Object.entries(layout.columns)) {
    const r = byName.get(name);
    if (!r) problems.push(`column ${name} is missing`);
    else if (!type.test(String(field(r, 'type') ?? ''))) problems.push(`column ${name} has type ${String(field(r, 'type'))}`);
  }
  const designated = byName.get(layout.designated);
  if (designated && !truthy(field(designated, 'designated'))) problems.push(`${layout.designated} is not the designated timestamp`);
  for (const key of layout.keys) {
    const r = byName.get(key);
    if (r && !truthy(field(r, 'upsertKey'))) problems.push(`${key} is not a DEDUP UPSERT KEY`);
  }
  return problems;
}

// ---- literals ---------------------------------------------------------------------------------

/** A series id (data point id) as the symbol literal it is stored as. */
export function seriesLiteral(series: number): string {
  if (!Number.isSafeInteger(series)) throw new RangeError(`series id ${series} is not an integer`);
  return `'${series}'`;
}

/** A row count or id as an integer literal. */
function intLiteral(n: number): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${n} is not an integer`);
  return String(n);
}

/**
 * A timestamp bound (epoch ms) as a timestamp literal QuestDB uses for interval pruning:
 * '2024-01-01T00:00:00.000000Z'. Stored timestamps are whole ms, so a fractional bound rounds up
 * (ts >= 1.5 ⇔ ts >= 2); bounds are clamped into the designated-timestamp range (1970 to the end of 9999).
 */
export function tsLiteral(ms: number): string {
  if (Number.isNaN(ms)) throw new RangeError('timestamp bound is NaN');
  const whole = Math.max(0, Math.ceil(ms));
  // Past the last storable ms: the last µs of 9999, which still lies after every stored (whole-ms) timestamp.
  if (whole > MAX_TS_MS) return "'9999-12-31T23:59:59.999999Z'";
  return `'${new Date(whole).toISOString().slice(0, -1)}000Z'`;
}

// ---- statements -------------------------------------------------------------------------------

const VALUE_COLUMNS = 'cast(ts AS LONG) AS ts_us, value, text, annotation';
const BUCKET_COLUMNS = 'cast(bucket AS LONG) AS bucket_us, n, sum, min, max, first_ms, first_value, last_ms, last_value, inner_integral';

/** The statements of one table set; every argument is a number the store computed. */
export function statements(table: string) {
  const { raw, hourly, pending } = tableNames(table);
  const live = (series: number) => `series = ${seriesLiteral(series)} AND NOT deleted`;
  return {
    latest: (series: number, limit: number) => `SELECT ${VALUE_COLUMNS} FROM ${raw} WHERE ${live(series)} ORDER BY ts DESC LIMIT ${intLiteral(limit)}`,
    /** Values with from <= ts < to (or from < ts when `exclusiveFrom`), oldest first. */
    range: (series: number, from: number, to: number, limit: number, exclusiveFrom = false) =>
      `SELECT ${VALUE_COLUMNS} FROM ${raw} WHERE ${live(series)} AND ts ${exclusiveFrom ? '>' : '>='} ${tsLiteral(from)} AND ts < ${tsLiteral(to)} ` +
      `ORDER BY ts LIMIT ${intLiteral(limit)}`,
    /** The newest value with ts <= t. */
    valueAt: (series: number, t: number) => `SELECT ${VALUE_COLUMNS} FROM ${raw} WHERE ${live(series)} AND ts <= ${tsLiteral(Math.floor(t))} ORDER BY ts DESC LIMIT 1`,
    /** Numeric rows of the hours [from, to) of several series, by series and time: what hourly rows are recomputed from. */
    numericRows: (seriesList: readonly number[], from: number, to: number) =>
      `SELECT cast(series AS INT) AS series, cast(ts AS LONG) AS ts_us, value FROM ${raw} WHERE series IN (${seriesList.map(seriesLiteral).join(', ')}) ` +
      `AND ts >= ${tsLiteral(from)} AND ts < ${tsLiteral(to)} AND value IS NOT NULL AND NOT deleted ORDER BY series, ts`,
    /** Non-empty hourly rows starting in [from, to), ascending. */
    buckets: (series: number, from: number, to: number) =>
      `SELECT ${BUCKET_COLUMNS} FROM ${hourly} WHERE series = ${seriesLiteral(series)} AND bucket >= ${tsLiteral(from)} AND bucket < ${tsLiteral(to)} AND n > 0 ORDER BY bucket`,
    countLive: (series: number, from: number, to: number) =>
      `SELECT count() AS n FROM ${raw} WHERE ${live(series)} AND ts >= ${tsLiteral(from)} AND ts < ${tsLiteral(to)}`,
    softDelete: (series: number, from: number, to: number) =>
      `UPDATE ${raw} SET deleted = true WHERE ${live(series)} AND ts >= ${tsLiteral(from)} AND ts < ${tsLiteral(to)}`,
    /** Intents not marked done (marking rewrites the row with done = true). */
    undoneIntents: () => `SELECT id, series, ms_from, ms_to, cast(ts AS LONG) AS ts_us FROM ${pending} WHERE NOT done`,
    /** Intent partitions older than a month: every intent in them was replayed or done by now. */
    dropOldIntents: () => `ALTER TABLE ${pending} DROP PARTITION WHERE ts < dateadd('M', -1, now())`,
    walStatus: (names: readonly string[]) => `SELECT * FROM wal_tables() WHERE name IN (${names.map((n) => `'${validateTableName(n)}'`).join(', ')})`,
    /** The newest non-empty hour of each listed series: where their appends continue. */
    tails: (seriesList: readonly number[]) =>
      `SELECT cast(series AS INT) AS series, ${BUCKET_COLUMNS} FROM ${hourly} WHERE series IN (${seriesList.map(seriesLiteral).join(', ')}) AND n > 0 ` +
      'LATEST ON bucket PARTITION BY series',
    /** Starts (µs) of the non-empty hours of a series in [from, to). */
    hourStarts: (series: number, from: number, to: number) =>
      `SELECT cast(bucket AS LONG) AS bucket_us FROM ${hourly} WHERE series = ${seriesLiteral(series)} AND bucket >= ${tsLiteral(from)} AND bucket < ${tsLiteral(to)} AND n > 0`,
    /** table_columns() takes a constant name: the validated identifier as a string literal. */
    columns: (name: string) => `SELECT * FROM table_columns('${validateTableName(name)}')`,
  };
}

export type Statements = ReturnType<typeof statements>;
