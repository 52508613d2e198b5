// Opening the QuestDB store: a pg pool for PG-wire reads and the ILP transport for writes, checked
// against the server, the table claimed for the installation, then handed to initQuestDbStore.
import pg from 'pg';
import { ConfigError } from '../../../config.js';
import { hearClientErrors } from '../../pg-clients.js';
import { engineLogger } from '../hooks.js';
import { DEFAULT_TABLE, validateTableName, type QuestDbStoreOptions } from './config.js';
import { ilpTransport } from './ilp.js';
import { checkIlpServer } from './negotiate.js';
import { claimTable } from './owner.js';
import { initQuestDbStore, type QuestDbStore } from './store.js';

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Opens the store: checks the ILP side (the server's /settings) and the PG-wire side answer, claims
 * the table for the installation (owner.ts), then creates or checks the tables. A server that cannot
 * be reached or refuses the credentials stops here with a ConfigError naming the setting
 * (QUESTDB_ILP or QUESTDB_PG), like any bad setting.
 */
export async function openQuestDbStore(options: QuestDbStoreOptions): Promise<QuestDbStore> {
  const table = validateTableName(options.table ?? DEFAULT_TABLE);
  const log = engineLogger(options.log, 'questdb');
  await checkIlpServer(options.ilp, log).catch((err: unknown) => {
    throw err instanceof ConfigError ? err : new ConfigError(`QUESTDB_ILP: cannot reach the QuestDB server: ${(err as Error).message}`);
  });
  // A server that does not answer is unavailable (503) after these, never waited on for ever; a query
  // that timed out closes its connection (its answer may still come).
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const pool = hearClientErrors(new pg.Pool({ connectionString: options.pg, max: options.poolSize ?? 4, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs }));
  const query = async <T extends object>(text: string) => (await pool.query(text)).rows as T[];
  const ilp = ilpTransport(options.ilp, timeoutMs);
  try {
    await query('SELECT 1').catch((err: unknown) => {
      throw new ConfigError(`QUESTDB_PG: cannot query the QuestDB server: ${(err as Error).message}`);
    });
    if (options.installation !== undefined) await claimTable(query, table, options.installation);
    return await initQuestDbStore(
      { query, ilp, end: () => pool.end() },
      {
        table,
        ...(options.applyTimeoutMs !== undefined ? { applyTimeoutMs: options.applyTimeoutMs } : {}),
        ...(options.log ? { log: options.log } : {}),
        ...(options.onAppended ? { onAppended: options.onAppended } : {}),
        ...(options.writerTurn ? { writerTurn: options.writerTurn } : {}),
      },
    );
  } catch (err) {
    await ilp.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw err;
  }
}
