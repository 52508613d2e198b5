// Starts the real service on an ephemeral port with a temporary DATA_DIR, on a chosen engine.
import { loadConfig, type Config } from '../../src/config.js';
import { startService, type RunningService } from '../../src/service.js';
import { dropSchema, newSchemaName, removeDir, seedPgliteDataDir, tempDir, testDatabaseUrl, type MetadataEngine } from './engines.js';

export interface TestApp {
  url: string;
  config: Config;
  service: RunningService;
  stop(): Promise<void>;
}

/** `env` overrides the service's environment variables (e.g. BASIC_AUTH_ENABLED, RATE_LIMIT_*). */
export async function startTestApp(engine: MetadataEngine = 'pglite', env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = await tempDir();
  const schema = engine === 'postgresql' ? newSchemaName() : undefined;
  if (engine === 'postgresql' && !testDatabaseUrl) throw new Error('TEST_DATABASE_URL is not set');
  if (engine === 'pglite') await seedPgliteDataDir(dataDir);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_ENABLED: 'false',
    ...(schema ? { DATABASE_URL: testDatabaseUrl, DATABASE_SCHEMA: schema } : {}),
    ...env,
  });
  const service = await startService(config);
  return {
    url: service.url,
    config,
    service,
    async stop() {
      await service.stop();
      if (schema) await dropSchema(schema);
      await removeDir(dataDir);
    },
  };
}
