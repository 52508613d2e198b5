// The QuestDB store's settings: its options, the table name rule and the ILP configuration string.
import type { ValueStoreHooks } from '../hooks.js';
import type { QuestDbStoreInit } from './store.js';

export interface QuestDbStoreOptions extends ValueStoreHooks {
  /** ILP client configuration (QUESTDB_ILP), e.g. `http::addr=host:9000`; http or https only. */
  ilp: string;
  /** PostgreSQL-wire URL (QUESTDB_PG), e.g. `postgres://admin:quest@host:8812/qdb`. */
  pg: string;
  /** Table name (lower-case identifier); default `point_values`. */
  table?: string;
  /** How long append/delete wait for the WAL to be applied; default 30 s. */
  applyTimeoutMs?: number;
  /** PG-wire pool size; default 4. */
  poolSize?: number;
  /**
   * STORE_TIMEOUT_MS: each PG-wire query and connection attempt (the connection closed when it fires),
   * and an ILP request's time-out unless the ILP configuration sets request_timeout. Default 10 s.
   */
  timeoutMs?: number;
  /** The installation (metadata store) id that must own the table (owner.ts); unset: no ownership check. */
  installation?: string;
  /** Instances sharing the table take turns at writing it (store.ts, WriterTurn); unset: alone. */
  writerTurn?: QuestDbStoreInit['writerTurn'];
}

export const DEFAULT_TABLE = 'point_values';

/** Table names become directory names and cannot be bind parameters: allow plain lower-case identifiers. */
export function validateTableName(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,126}$/.test(name)) {
    throw new Error(`QuestDB table name must be a lower-case identifier ([a-z_][a-z0-9_]*), got "${name}"`);
  }
  return name;
}

/** An ILP configuration string taken apart: `http` or `https`, and its settings in order. */
export interface IlpConfig {
  schema: 'http' | 'https';
  settings: Map<string, string>;
}

export function parseIlpConfig(ilp: string): IlpConfig {
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
  return { schema, settings };
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
