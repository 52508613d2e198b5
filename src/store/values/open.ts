// Chooses the point-value engine from the config (VALUE_STORE; unset: QuestDB when QUESTDB_ILP and
// QUESTDB_PG are set, else DuckDB embedded under DATA_DIR/values), PostgreSQL on DATABASE_URL when
// asked for; any of them behind the hourly-aggregate cache.
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { withBucketCache } from './bucket-cache.js';
import { openDuckDbStore } from './duckdb/index.js';
import type { ValueStoreHooks } from './hooks.js';
import { openPostgresStore } from './postgres/index.js';
import { isWalWaitFailure, openQuestDbStore, type QuestDbStoreOptions } from './questdb/index.js';
import { isStoreUnreachable } from '../unavailable.js';
import type { PointValueStore } from './types.js';
import { withUnavailableAsDomainError } from './unavailable-store.js';

/** How an instance shares a server value store with the other instances of its installation. */
export interface ValueStoreSharing {
  /** The metadata store's id; a shared store (QuestDB) refuses to open a table another installation owns. */
  installation: string;
  /** Several instances write QuestDB's tables in turns (store/cluster/writer-lock.ts); absent when alone. */
  writerTurn?: QuestDbStoreOptions['writerTurn'];
}

/** `hooks`: the engine's logger and the durable-append hook (see ValueStoreHooks). */
export async function openValueStore(
  config: Pick<Config, 'dataDir' | 'values' | 'databaseUrl' | 'databaseSchema' | 'storeTimeoutMs'>,
  hooks: ValueStoreHooks = {},
  sharing?: ValueStoreSharing,
): Promise<PointValueStore> {
  const { engine, questdbIlp, questdbPg, questdbTable } = config.values;
  // A server's every statement and request is bounded by the engine (its connection closed when the
  // time-out fires); the wrapper bounds each call as the caller sees it (queues and locks included).
  const timeoutMs = config.storeTimeoutMs;
  if (engine === 'postgres') {
    // loadConfig refuses VALUE_STORE=postgres without DATABASE_URL; a config built otherwise is a bug.
    if (!config.databaseUrl) throw new Error('VALUE_STORE=postgres needs DATABASE_URL');
    const store = await openPostgresStore({ ...hooks, url: config.databaseUrl, timeoutMs, ...(config.databaseSchema ? { schema: config.databaseSchema } : {}) });
    // As for QuestDB, the cache stays exact from this instance's writes and the other instances'
    // announcements (services/cluster.ts); a server gone away answers 503.
    return withUnavailableAsDomainError(withBucketCache(store), isStoreUnreachable, timeoutMs);
  }
  if (engine === 'questdb' && questdbIlp && questdbPg) {
    const store = await openQuestDbStore({
      ...hooks,
      ilp: questdbIlp,
      pg: questdbPg,
      table: questdbTable,
      timeoutMs,
      ...(sharing ? { installation: sharing.installation } : {}),
      ...(sharing?.writerTurn ? { writerTurn: sharing.writerTurn } : {}),
    });
    // The cache stays exact from this instance's writes and the other instances' announcements
    // (services/cluster.ts). A server can go away: its failures become the store's 503.
    return withUnavailableAsDomainError(withBucketCache(store), (err) => isStoreUnreachable(err) || isWalWaitFailure(err), timeoutMs);
  }
  // The DuckDB file is this process's alone: every write passes the cache, which stays exact.
  return withBucketCache(await openDuckDbStore(join(config.dataDir, 'values'), { ...hooks, memoryLimit: config.values.duckdbMemoryLimit }));
}
