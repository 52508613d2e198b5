// Instances of one installation in this process, for the cluster tests: each on the PostgreSQL schema
// given (metadata and values), with a DATA_DIR of its own and a logger the test can read.
import type pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { startService, type RunningService } from '../../src/service.js';
import { removeDir, tempDir, testDatabaseUrl } from './engines.js';
import { capturingLogger, type LogLine } from './log.js';

export interface Instance {
  name: string;
  service: RunningService;
  dataDir: string;
  /** What it logged at the level asked for and above. */
  lines: LogLine[];
}

export interface InstanceOptions {
  /** Settings over the defaults (e.g. VALUE_STORE: 'duckdb', the handlers' poll periods). */
  env?: Record<string, string>;
  /** 'warn' unless a test reads lower lines (or wants none). */
  logLevel?: pino.LevelWithSilent;
}

/** Starts instance `name` on `schema`; callers skip themselves when TEST_DATABASE_URL is not set. */
export async function startInstance(schema: string, name: string, options: InstanceOptions = {}): Promise<Instance> {
  const dataDir = await tempDir(`dds-${name}-`);
  const { log, lines } = capturingLogger(options.logLevel ?? 'warn');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    RATE_LIMIT_ENABLED: 'false',
    DATABASE_URL: testDatabaseUrl!,
    DATABASE_SCHEMA: schema,
    INSTANCE_NAME: name,
    VALUE_STORE: 'postgres',
    ...options.env,
  });
  try {
    return { name, service: await startService(config, log), dataDir, lines };
  } catch (err) {
    // A refused start (tests expect some) leaves no directory behind.
    await removeDir(dataDir);
    throw err;
  }
}

export async function stopInstance(instance: Instance): Promise<void> {
  await instance.service.stop();
  await removeDir(instance.dataDir);
}
