// Registers the QuestDB engine for the point-value contract suite, only when TEST_QUESTDB_ILP and
// TEST_QUESTDB_PG are set. Each open() gets its own table, dropped again on dispose.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openQuestDbStore, validateTableName } from '../../src/store/values/questdb/index.js';
import { servicePostgresValueStore } from './value-engines.postgres.js';
import { questdbSettings, registerValueEngine } from './value-engines.js';

export function newQuestDbTableName(): string {
  return `test_values_${randomBytes(6).toString('hex')}`;
}

/** Drops `table` and its companion tables (`<table>_...`). */
export async function dropQuestDbTable(pgUrl: string, table: string): Promise<void> {
  validateTableName(table);
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>('SELECT table_name FROM tables()');
    for (const { table_name: name } of rows) {
      if (name === table || name.startsWith(`${table}_`)) await client.query(`DROP TABLE IF EXISTS ${validateTableName(name)}`);
    }
  } finally {
    await client.end();
  }
}

/**
 * TEST_VALUE_STORE=questdb runs every suite that starts the service (test/helpers/app.ts) on the
 * QuestDB of TEST_QUESTDB_ILP/TEST_QUESTDB_PG, each service on a table of its own: the service's
 * environment for that, and what drops the table afterwards. Undefined when the suites run on DuckDB.
 * TEST_VALUE_STORE=postgres: see servicePostgresValueStore.
 */
export function serviceValueStore(): { env: Record<string, string>; dispose(): Promise<void> } | undefined {
  const wanted = process.env.TEST_VALUE_STORE;
  if (wanted === undefined || wanted === '' || wanted === 'duckdb') return undefined;
  if (wanted === 'postgres') return servicePostgresValueStore();
  if (wanted !== 'questdb') throw new Error(`TEST_VALUE_STORE must be duckdb, questdb or postgres, got "${wanted}"`);
  if (!ilp || !pgUrl) throw new Error('TEST_VALUE_STORE=questdb needs TEST_QUESTDB_ILP and TEST_QUESTDB_PG');
  const table = newQuestDbTableName();
  const url = pgUrl;
  return {
    env: { QUESTDB_ILP: ilp, QUESTDB_PG: url, QUESTDB_TABLE: table },
    dispose: () => dropQuestDbTable(url, table),
  };
}

const { ilp, pg: pgUrl } = questdbSettings;
if (ilp && pgUrl) {
  registerValueEngine({
    name: 'questdb',
    async open() {
      const table = newQuestDbTableName();
      const store = await openQuestDbStore({ ilp, pg: pgUrl, table });
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
