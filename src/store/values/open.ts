// Chooses the point-value engine from the config (VALUE_STORE; unset: QuestDB when QUESTDB_ILP and
// QUESTDB_PG are set, else DuckDB embedded under DATA_DIR/values), PostgreSQL on DATABASE_URL when
// asked for; any of them behind the hourly-aggregate cache.
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { withBucketCache } from './bucket-cache.js';
import { openDuckDbStore } from './duckdb/index.js';
import type { ValueStoreHooks } from './hooks.js';
import { openPostgresStore } from './postgres/index.js';
import { isWalWaitFailure, openQuestDbStore } from './questdb/index.js';
import { isStoreUnreachable } from '../unavailable.js';
import type { PointValueStore } from './types.js';
import { withUnavailableAsDomainError } from './unavailable-store.js';

/**
 * `hooks`: the engine's logger and the durable-append hook (see ValueStoreHooks). `installation`: the
 * metadata store's id; a shared store (QuestDB) refuses to open a table another installation owns.
 */
export async function openValueStore(
  config: Pick<Config, 'dataDir' | 'values' | 'databaseUrl' | 'databaseSchema'>,
  hooks: ValueStoreHooks = {},
  installation?: string,
): Promise<PointValueStore> {
  const { engine, questdbIlp, questdbPg, questdbTable } = config.values;
  if (engine === 'postgres') {
    // loadConfig refuses VALUE_STORE=postgres without DATABASE_URL; a config built otherwise is a bug.
    if (!config.databaseUrl) throw new Error('VALUE_STORE=postgres needs DATABASE_URL');
    const store = await openPostgresStore({ ...hooks, url: config.databaseUrl, ...(config.databaseSchema ? { schema: config.databaseSchema } : {}) });
    // As for QuestDB, the cache stays exact from this instance's writes only (docs/ARCHITECTURE.md);
    // a server gone away answers 503.
    return withUnavailableAsDomainError(withBucketCache(store), isStoreUnreachable);
  }
  if (engine === 'questdb' && questdbIlp && questdbPg) {
    const store = await openQuestDbStore({
      ...hooks,
      ilp: questdbIlp,
      pg: questdbPg,
      table: questdbTable,
      ...(installation !== undefined ? { installation } : {}),
    });
    // The cache stays exact from this instance's writes; another instance's writes to the same table
    // are not seen by it until the cluster announces them (docs/ARCHITECTURE.md). A server can go away:
    // its failures become the store's 503 (unavailable-store.ts).
    return withUnavailableAsDomainError(withBucketCache(store), (err) => isStoreUnreachable(err) || isWalWaitFailure(err));
  }
  // The DuckDB file is this process's alone: every write passes the cache, which stays exact.
  return withBucketCache(await openDuckDbStore(join(config.dataDir, 'values'), { ...hooks, memoryLimit: config.values.duckdbMemoryLimit }));
}
