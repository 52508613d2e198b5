// Known login addresses: where each user last logged in successfully, and when.
import type { Queryable } from './db.js';

export class LoginAddressesRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Whether the user of that name logged in from the address since the given instant. Asked by name,
   * so an unknown username costs the same query as a known one.
   */
  async isKnown(username: string, address: string, since: Date): Promise<boolean> {
    const rows = await this.db.query(
      `select 1 from login_addresses a join users u on u.id = a.user_id
        where u.username = $1 and a.address = $2 and a.last_success >= $3`,
      [username, address, since],
    );
    return rows.length > 0;
  }

  /** Records a successful login; keeps the user's `keep` most recent addresses seen since `since`. */
  async remember(userId: number, address: string, now: Date, since: Date, keep: number): Promise<void> {
    await this.db.query(
      `insert into login_addresses (user_id, address, last_success) values ($1, $2, $3)
       on conflict (user_id, address) do update set last_success = greatest(login_addresses.last_success, excluded.last_success)`,
      [userId, address, now],
    );
    await this.db.query(
      `delete from login_addresses where user_id = $1 and (last_success < $2 or address not in (
         select address from login_addresses where user_id = $1 order by last_success desc, address limit $3))`,
      [userId, since, keep],
    );
  }

  /** Forgets every address not used since the given instant; returns how many. */
  async deleteOlderThan(since: Date): Promise<number> {
    const rows = await this.db.query('delete from login_addresses where last_success < $1 returning user_id', [since]);
    return rows.length;
  }

  /** The user's known addresses, most recent first (for tests and operators). */
  async forUser(userId: number): Promise<{ address: string; lastSuccess: Date }[]> {
    const rows = await this.db.query<{ address: string; last_success: Date }>(
      'select address, last_success from login_addresses where user_id = $1 order by last_success desc, address',
      [userId],
    );
    return rows.map((r) => ({ address: r.address, lastSuccess: r.last_success }));
  }
}
