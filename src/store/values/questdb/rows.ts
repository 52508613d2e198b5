// PG-wire rows turned into stored values, and the field lookup QuestDB's labels need. (Hourly rows:
// hourly.ts.)
import type { StoredValue } from '../types.js';
import { microsToMs } from './time.js';

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
