// Opening the DuckDB store: the database file, its tables, the writer and reader connections, and
// the per-series timestamp bounds the store keeps in memory.
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { appendedHook, engineLogger } from '../hooks.js';
import { Pool, Session } from './sessions.js';
import { SCHEMA, SQL, TEMP_TABLES } from './sql.js';
import { DuckDbStore, type DuckDbStoreOptions, type DuckDbValueStore } from './store.js';

export const VALUES_FILE = 'values.duckdb';

/** Files open in this process: DuckDB would let a second instance open one and both write it. */
const openFiles = new Set<string>();

/** Opens (creating when absent) `values.duckdb` under dir. One store per file per process. */
export async function openDuckDbStore(dir: string, options: DuckDbStoreOptions = {}): Promise<DuckDbValueStore> {
  const file = resolve(dir, VALUES_FILE);
  if (openFiles.has(file)) throw new Error(`${file} is already open in this process`);
  openFiles.add(file);
  try {
    return await open(dir, file, options, () => openFiles.delete(file));
  } catch (err) {
    openFiles.delete(file);
    throw err;
  }
}

async function open(dir: string, file: string, options: DuckDbStoreOptions, onClose: () => void): Promise<DuckDbValueStore> {
  await mkdir(dir, { recursive: true });
  const config: Record<string, string> = {};
  if (options.threads !== undefined) config.threads = String(options.threads);
  if (options.memoryLimit !== undefined) config.memory_limit = options.memoryLimit;
  if (options.checkpointThreshold !== undefined) config.checkpoint_threshold = options.checkpointThreshold;
  const instance = await DuckDBInstance.create(file, config);
  const sessions: Session[] = [];
  const connect = async () => {
    const s = new Session(await instance.connect());
    sessions.push(s);
    return s;
  };
  try {
    const primary = await connect();
    for (const sql of SCHEMA) await primary.exec(sql);
    for (const sql of TEMP_TABLES) await primary.exec(sql);
    const minTs = new Map<number, number>();
    const maxTs = new Map<number, number>();
    for (const [s, min, max] of (await primary.query(SQL.tsBounds)).getRows() as [number, number, number][]) {
      minTs.set(s, min);
      maxTs.set(s, max);
    }
    const readers: Session[] = [];
    while (readers.length < Math.max(1, options.readers ?? 4)) {
      const reader = await connect();
      // DuckDB 1.5 answers a small top-n by scanning twice ("late materialization"); on a window of
      // one series one scan is several times faster.
      await reader.exec('SET late_materialization_max_rows = 0').catch(() => undefined);
      readers.push(reader);
    }
    const log = engineLogger(options.log, 'duckdb');
    const appended = appendedHook(options.onAppended, log);
    return new DuckDbStore({ instance, primary, readers: new Pool(readers), maxTs, minTs, options, log, appended, onClose });
  } catch (err) {
    for (const s of sessions) s.close();
    instance.closeSync();
    throw err;
  }
}
