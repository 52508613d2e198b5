// Which point-value engines the contract suite runs on: DuckDB always, QuestDB when
// TEST_QUESTDB_ILP and TEST_QUESTDB_PG are set, PostgreSQL when TEST_DATABASE_URL is set.
import type { PointValueStore } from '../../src/store/values/types.js';

export interface ValueEngine {
  name: 'duckdb' | 'duckdb+cache' | 'questdb' | 'postgres';
  /** Opens a fresh, empty store; dispose() closes it and removes what it created. */
  open(): Promise<{ store: PointValueStore; dispose(): Promise<void> }>;
}

export const questdbSettings = {
  ilp: process.env.TEST_QUESTDB_ILP || undefined,
  pg: process.env.TEST_QUESTDB_PG || undefined,
};

const registry: ValueEngine[] = [];

/** Engines register themselves here (see test/helpers/value-engines.*.ts). */
export function registerValueEngine(engine: ValueEngine): void {
  registry.push(engine);
}

export function valueEngines(): ValueEngine[] {
  return registry;
}

let announced = false;
export function announceValueEngines(): void {
  if (announced) return;
  announced = true;
  if (!questdbSettings.ilp || !questdbSettings.pg) {
    console.log('  skipped: no QuestDB (set TEST_QUESTDB_ILP=http::addr=host:9000 and TEST_QUESTDB_PG=postgres://admin:quest@host:8812/qdb to run the QuestDB suites)');
  }
  if (!process.env.TEST_DATABASE_URL) {
    console.log('  skipped: no PostgreSQL value store (set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run the PostgreSQL value-store suites)');
  }
}
