// Chooses the point-value engine from the config: QuestDB when QUESTDB_ILP and QUESTDB_PG are
// set, else DuckDB embedded under DATA_DIR/values.
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { openDuckDbStore } from './duckdb.js';
import { openQuestDbStore } from './questdb.js';
import type { PointValueStore } from './types.js';

export function openValueStore(config: Pick<Config, 'dataDir' | 'values'>): Promise<PointValueStore> {
  const { questdbIlp, questdbPg, questdbProtocolVersion } = config.values;
  if (questdbIlp && questdbPg) return openQuestDbStore({ ilp: questdbIlp, pg: questdbPg, protocolVersion: questdbProtocolVersion });
  return openDuckDbStore(join(config.dataDir, 'values'), { memoryLimit: config.values.duckdbMemoryLimit });
}
