// Which metadata engines the suites run on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate } from '../../src/store/metadata/migrate.js';
import { openPglite } from '../../src/store/metadata/pglite.js';

export type MetadataEngine = 'pglite' | 'postgresql';

export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;

export function metadataEngines(): MetadataEngine[] {
  return testDatabaseUrl ? ['pglite', 'postgresql'] : ['pglite'];
}

let announced = false;
export function announceEngines(): void {
  if (announced) return;
  announced = true;
  if (!testDatabaseUrl) console.log('  (PostgreSQL suites skipped: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run them)');
}

export async function tempDir(prefix = 'dds-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

// PGlite's initdb costs seconds; do it once per test process and copy the migrated directory.
let template: Promise<string> | undefined;
function pgliteTemplate(): Promise<string> {
  template ??= (async () => {
    const root = await tempDir('dds-template-');
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'metadata');
    const db = await openPglite(dir);
    await migrate(db);
    await db.close();
    return dir;
  })();
  return template;
}

/** Prepares DATA_DIR/metadata from the migrated template so a new app opens in well under a second. */
export async function seedPgliteDataDir(dataDir: string): Promise<void> {
  await cp(await pgliteTemplate(), join(dataDir, 'metadata'), { recursive: true });
}

/** A fresh, uniquely named schema on the test PostgreSQL server. */
export function newSchemaName(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  if (!testDatabaseUrl) return;
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
