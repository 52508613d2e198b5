// Opening the QuestDB store: a pg pool for PG-wire reads and an ILP Sender for writes, handed to
// initQuestDbStore.
import { Sender } from '@questdb/nodejs-client';
import pg from 'pg';
import { engineLogger } from '../hooks.js';
import { ConfigError } from '../../../config.js';
import { buildSenderConfig, DEFAULT_TABLE, validateTableName, type QuestDbStoreOptions } from './config.js';
import { negotiateProtocolVersion } from './negotiate.js';
import { claimTable } from './owner.js';
import { senderLog } from './ilp.js';
import { initQuestDbStore, type QuestDbStore } from './store.js';

/**
 * Opens the store: negotiates the ILP protocol version, checks the PG-wire side answers, claims the
 * table for the installation (owner.ts), then creates or checks the table. A server that cannot be reached or refuses the credentials stops here with a
 * ConfigError naming the setting (QUESTDB_ILP or QUESTDB_PG), like any bad setting.
 */
export async function openQuestDbStore(options: QuestDbStoreOptions): Promise<QuestDbStore> {
  const table = validateTableName(options.table ?? DEFAULT_TABLE);
  const log = engineLogger(options.log, 'questdb');
  const version = await negotiateProtocolVersion(options.ilp, options.protocolVersion, log).catch((err: unknown) => {
    throw new ConfigError(`QUESTDB_ILP: cannot reach the QuestDB server: ${(err as Error).message}`);
  });
  const senderConfig = buildSenderConfig(options.ilp, version);
  // A server that does not answer is unavailable (503) after these, never waited on for ever.
  const pool = new pg.Pool({ connectionString: options.pg, max: options.poolSize ?? 4, connectionTimeoutMillis: 10_000, query_timeout: 60_000 });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    await pool.query('SELECT 1').catch((err: unknown) => {
      throw new ConfigError(`QUESTDB_PG: cannot query the QuestDB server: ${(err as Error).message}`);
    });
    const query = async <T extends object>(text: string) => (await pool.query(text)).rows as T[];
    if (options.installation !== undefined) await claimTable(query, table, options.installation);
    const sender = await Sender.fromConfig(senderConfig, { log: senderLog(log) });
    return await initQuestDbStore(
      {
        query: async <T extends object>(text: string, values?: unknown[]) => (await pool.query(text, values)).rows as T[],
        sender,
        end: () => pool.end(),
      },
      {
        table,
        ...(options.applyTimeoutMs !== undefined ? { applyTimeoutMs: options.applyTimeoutMs } : {}),
        ...(options.log ? { log: options.log } : {}),
        ...(options.onAppended ? { onAppended: options.onAppended } : {}),
      },
    );
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
