// Every statement the QuestDB store runs over PG-wire, and the check of an existing table's layout.
// Values are always bind parameters ($n); only the validated table name is spliced in.
//
// Table: CREATE TABLE IF NOT EXISTS <table> (series_id INT, value DOUBLE, text VARCHAR, annotation
//   VARCHAR, deleted BOOLEAN, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL DEDUP UPSERT KEYS(ts, series_id)
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
import { validateTableName } from './config.js';
import { field, truthy } from './rows.js';

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

export type Statements = ReturnType<typeof statements>;
