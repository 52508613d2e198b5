// Opening the QuestDB store: a pg pool for PG-wire reads and an ILP Sender for writes, handed to
// initQuestDbStore.
import { Sender } from '@questdb/nodejs-client';
import pg from 'pg';
import { engineLogger } from '../hooks.js';
import { buildSenderConfig, DEFAULT_TABLE, validateTableName, type QuestDbStoreOptions } from './config.js';
import { senderLog } from './ilp.js';
import { initQuestDbStore, type QuestDbStore } from './store.js';

export async function openQuestDbStore(options: QuestDbStoreOptions): Promise<QuestDbStore> {
  const table = validateTableName(options.table ?? DEFAULT_TABLE);
  const senderConfig = buildSenderConfig(options.ilp, options.protocolVersion);
  const pool = new pg.Pool({ connectionString: options.pg, max: options.poolSize ?? 4 });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    const sender = await Sender.fromConfig(senderConfig, { log: senderLog(engineLogger(options.log, 'questdb')) });
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
