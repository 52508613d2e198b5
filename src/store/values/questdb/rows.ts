// PG-wire rows turned into the store's values: stored values, hourly aggregates (from the SQL
// push-down, or folded here from raw numeric rows where the server lacks window functions), and
// the field lookup QuestDB's labels need.
import { BucketColumns, foldBuckets, mergeColumns } from '../aggregates.js';
import type { BucketAggregate, StoredValue } from '../types.js';
import { floorToBucket, microsToMs } from './time.js';

/** A row value by column name, ignoring case (QuestDB's camelCase labels may come back either way). */
export function field(row: Record<string, unknown>, name: string): unknown {
  if (name in row) return row[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(row)) if (k.toLowerCase() === lower) return row[k];
  return undefined;
}

export function truthy(v: unknown): boolean {
  return v === true || v === 't' || v === 'true' || v === 1 || v === '1';
}

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

/** A row of the numericRows statement. */
export interface NumericRow {
  ts_us: string | number | bigint;
  value: number | null;
}

/** Ascending numeric rows of one series folded into hourly aggregates: the JS path of buckets(). Null and NaN values are skipped. */
export function foldNumericRows(rows: readonly NumericRow[]): BucketAggregate[] {
  const n = rows.length;
  const ts = new Float64Array(n);
  const value = new Float64Array(n);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    ts[i] = microsToMs(r.ts_us);
    value[i] = r.value === null ? NaN : Number(r.value);
    order[i] = i;
  }
  const folded = new BucketColumns();
  foldBuckets(folded, 0, ts, value, order, 0, n);
  return mergeColumns(folded);
}
