// Key/value service settings (e.g. the JWT signing key), stored as JSONB.
import type { Queryable } from './db.js';

export class SettingsRepository {
  constructor(private readonly db: Queryable) {}

  async get<T>(key: string): Promise<T | undefined> {
    const rows = await this.db.query<{ value: T }>('select value from settings where key = $1', [key]);
    return rows[0]?.value;
  }

  async put(key: string, value: unknown): Promise<void> {
    await this.db.query(
      'insert into settings (key, value) values ($1, $2::jsonb) on conflict (key) do update set value = excluded.value',
      [key, JSON.stringify(value)],
    );
  }

  /** Inserts only when absent; returns the stored value (ours or a concurrent starter's). */
  async putIfAbsent<T>(key: string, value: T): Promise<T> {
    await this.db.query('insert into settings (key, value) values ($1, $2::jsonb) on conflict (key) do nothing', [key, JSON.stringify(value)]);
    return (await this.get<T>(key)) as T;
  }
}
