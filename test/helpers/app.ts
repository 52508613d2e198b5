// Starts the real service on an ephemeral port with a temporary DATA_DIR, on a chosen engine.
import type { Logger } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { startService, type RunningService } from '../../src/service.js';
import { dropSchema, newSchemaName, removeDir, seedPgliteDataDir, tempDir, testDatabaseUrl, type MetadataEngine } from './engines.js';
import { serviceValueStore } from './value-engines.questdb.js';

export interface TestApp {
  url: string;
  config: Config;
  service: RunningService;
  /** Stops the service and starts it again on the same data (a new port); url and service follow. */
  restart(): Promise<TestApp>;
  stop(): Promise<void>;
}

/**
 * `env` overrides the service's environment variables (e.g. BASIC_AUTH_ENABLED, RATE_LIMIT_*); `log`
 * replaces the service's logger (helpers/log.ts reads its lines; LOG_LEVEL then does not apply).
 * Point values go to DuckDB under DATA_DIR, or with TEST_VALUE_STORE=questdb to a QuestDB table of
 * this app's own, or with TEST_VALUE_STORE=postgres to a schema of its own on TEST_DATABASE_URL (the
 * metadata with them, whatever `engine` says: VALUE_STORE=postgres uses the DATABASE_URL server).
 */
export async function startTestApp(engine: MetadataEngine = 'pglite', env: Record<string, string> = {}, log?: Logger): Promise<TestApp> {
  const dataDir = await tempDir();
  const schema = engine === 'postgresql' ? newSchemaName() : undefined;
  if (engine === 'postgresql' && !testDatabaseUrl) throw new Error('TEST_DATABASE_URL is not set');
  if (engine === 'pglite') await seedPgliteDataDir(dataDir);
  const values = serviceValueStore();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_ENABLED: 'false',
    ...(schema ? { DATABASE_URL: testDatabaseUrl, DATABASE_SCHEMA: schema } : {}),
    ...values?.env,
    ...env,
  });
  const app: TestApp = {
    url: '',
    config,
    service: await startService(config, log),
    async restart() {
      await app.service.stop();
      app.service = await startService(config, log);
      app.url = app.service.url;
      return app;
    },
    async stop() {
      await app.service.stop();
      if (schema) await dropSchema(schema);
      await values?.dispose();
      await removeDir(dataDir);
    },
  };
  app.url = app.service.url;
  return app;
}
