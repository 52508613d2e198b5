// Registers the QuestDB engine for the point-value contract suite, only when TEST_QUESTDB_ILP and
// TEST_QUESTDB_PG are set. Each open() gets its own table, dropped again on dispose.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openQuestDbStore, validateTableName } from '../../src/store/values/questdb/index.js';
import { questdbSettings, registerValueEngine } from './value-engines.js';

/** TEST_QUESTDB_PROTOCOL_VERSION=1|2 forces the ILP protocol version (default: the config string's, else negotiated). */
const protocolVersion = ((): 1 | 2 | undefined => {
  const raw = process.env.TEST_QUESTDB_PROTOCOL_VERSION;
  if (raw === '1' || raw === '2') return Number(raw) as 1 | 2;
  return undefined;
})();

export function newQuestDbTableName(): string {
  return `test_values_${randomBytes(6).toString('hex')}`;
}

export async function dropQuestDbTable(pgUrl: string, table: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(`DROP TABLE IF EXISTS ${validateTableName(table)}`);
  } finally {
    await client.end();
  }
}

const { ilp, pg: pgUrl } = questdbSettings;
if (ilp && pgUrl) {
  registerValueEngine({
    name: 'questdb',
    async open() {
      const table = newQuestDbTableName();
      const store = await openQuestDbStore({ ilp, pg: pgUrl, table, ...(protocolVersion ? { protocolVersion } : {}) });
      return {
        store,
        async dispose() {
          try {
            await store.close();
          } finally {
            await dropQuestDbTable(pgUrl, table);
          }
        },
      };
    },
  });
}
