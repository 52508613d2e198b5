// Registers the PostgreSQL engine for the point-value contract suite, only when TEST_DATABASE_URL is
// set (as for the PostgreSQL metadata suites). Each open() gets a schema of its own, dropped on dispose.
import { openPostgresStore, type OpenPostgresOptions } from '../../src/store/values/postgres/index.js';
import { dropSchema, newSchemaName, testDatabaseUrl } from './engines.js';
import { registerValueEngine } from './value-engines.js';

/** A store in a fresh schema of the test server, and what removes it again. */
export async function openTestPostgresStore(options: Partial<OpenPostgresOptions> = {}) {
  if (!testDatabaseUrl) throw new Error('TEST_DATABASE_URL is not set');
  const schema = options.schema ?? newSchemaName();
  const store = await openPostgresStore({ ...options, url: testDatabaseUrl, schema });
  return {
    store,
    schema,
    async dispose() {
      try {
        await store.close();
      } finally {
        await dropSchema(schema);
      }
    },
  };
}

/**
 * TEST_VALUE_STORE=postgres runs every suite that starts the service (test/helpers/app.ts) with its
 * values on the server of TEST_DATABASE_URL: VALUE_STORE=postgres needs DATABASE_URL, so the
 * service's metadata moves there too, both in one schema of the app's own, dropped afterwards.
 */
export function servicePostgresValueStore(): { env: Record<string, string>; dispose(): Promise<void> } {
  if (!testDatabaseUrl) throw new Error('TEST_VALUE_STORE=postgres needs TEST_DATABASE_URL');
  const schema = newSchemaName();
  return {
    env: { VALUE_STORE: 'postgres', DATABASE_URL: testDatabaseUrl, DATABASE_SCHEMA: schema },
    dispose: () => dropSchema(schema),
  };
}

if (testDatabaseUrl) {
  registerValueEngine({ name: 'postgres', open: () => openTestPostgresStore() });
}
