// Chooses the metadata engine from the config and brings its schema up to date.
import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { MetadataDb } from './db.js';
import { migrate } from './migrate.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

export async function openMetadataDb(config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'databaseSchema' | 'dataDir' | 'storeTimeoutMs'>): Promise<MetadataDb> {
  const db = config.databaseUrl
    ? await openPostgres(config.databaseUrl, config.databasePoolSize, config.databaseSchema, config.storeTimeoutMs)
    : await openPglite(join(config.dataDir, 'metadata'));
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}
