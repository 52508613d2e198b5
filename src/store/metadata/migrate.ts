// Plain-SQL migrations, applied in version order at start-up, each exactly once.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { migrationsDir } from '../../paths.js';
import type { MetadataDb } from './db.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function loadMigrations(dir = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+_[\w-]+\.sql$/.test(f));
  const migrations = await Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, file.indexOf('_'))),
      name: file.replace(/\.sql$/, ''),
      sql: await readFile(join(dir, file), 'utf8'),
    })),
  );
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version) {
      throw new Error(`two migrations share version ${migrations[i]!.version}`);
    }
  }
  return migrations;
}

/** Applies pending migrations; returns the names applied. Safe to run from several instances at once. */
export async function migrate(db: MetadataDb, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  return db.transaction(async (tx) => {
    // Serialises concurrent starters on one server; a second starter sees the first one's work. A script
    // (exec), so the store time-out does not apply: another starter's migrations may rightly take long.
    await tx.exec('select pg_advisory_xact_lock(727001)');
    await tx.query(
      'create table if not exists schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())',
    );
    const done = new Set((await tx.query<{ version: number }>('select version from schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const m of all) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('insert into schema_migrations (version, name) values ($1, $2)', [m.version, m.name]);
      applied.push(m.name);
    }
    return applied;
  });
}
