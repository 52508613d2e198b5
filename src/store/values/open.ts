// Chooses the point-value engine from the config: QuestDB when QUESTDB_ILP and QUESTDB_PG are
// set, else DuckDB embedded under DATA_DIR/values; either behind the hourly-aggregate cache.
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { withBucketCache } from './bucket-cache.js';
import { openDuckDbStore } from './duckdb.js';
import { openQuestDbStore } from './questdb.js';
import type { PointValueStore } from './types.js';

export async function openValueStore(config: Pick<Config, 'dataDir' | 'values'>): Promise<PointValueStore> {
  const { questdbIlp, questdbPg, questdbProtocolVersion } = config.values;
  const store =
    questdbIlp && questdbPg
      ? await openQuestDbStore({ ilp: questdbIlp, pg: questdbPg, protocolVersion: questdbProtocolVersion })
      : await openDuckDbStore(join(config.dataDir, 'values'), { memoryLimit: config.values.duckdbMemoryLimit });
  return withBucketCache(store);
}
