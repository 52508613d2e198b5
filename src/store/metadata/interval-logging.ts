// INTERVAL logging's periods in progress (one row per point), so a restart neither loses nor
// repeats a period. The state is the logging service's own JSON; this table only keeps it.
import type { Queryable } from './db.js';

export class IntervalLoggingRepository {
  constructor(private readonly db: Queryable) {}

  async loadAll<T>(): Promise<Map<number, T>> {
    const rows = await this.db.query<{ data_point_id: number; state: T }>('select data_point_id, state from interval_logging');
    return new Map(rows.map((r) => [r.data_point_id, r.state]));
  }

  /** Upserts every given state in one statement; a point deleted meanwhile is skipped. */
  async saveAll(states: ReadonlyMap<number, unknown>): Promise<void> {
    if (states.size === 0) return;
    await this.db.query(
      `insert into interval_logging (data_point_id, state)
         select s.id, s.state from unnest($1::int[], $2::jsonb[]) as s(id, state)
         join data_points p on p.id = s.id
       on conflict (data_point_id) do update set state = excluded.state`,
      [[...states.keys()], [...states.values()].map((s) => JSON.stringify(s))],
    );
  }

  async remove(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query('delete from interval_logging where data_point_id = any($1::int[])', [ids]);
  }
}
