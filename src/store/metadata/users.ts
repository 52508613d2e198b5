// Users repository: the only place that knows the users table.
import type { ResourceDef, SqlQueryParts } from '../../core/rql/index.js';
import { usernameKey } from '../../core/username-key.js';
import { PgErrorCode, pgErrorCode, type Queryable } from './db.js';
import { countRows, pageRows, type ListSource } from './list.js';

export interface UserRecord {
  id: number;
  username: string;
  email: string;
  name: string;
  passwordHash: string;
  permissions: string[];
  disabled: boolean;
  locale: string;
  timezone: string;
  created: Date;
  lastLogin: Date | null;
  lastPasswordChange: Date;
  tokenVersion: number;
}

export type NewUser = Pick<UserRecord, 'username' | 'email' | 'name' | 'passwordHash' | 'permissions' | 'disabled' | 'locale' | 'timezone'>;
export type UserChanges = Partial<NewUser>;

interface UserRow {
  [key: string]: unknown;
  id: number;
  username: string;
  email: string;
  name: string;
  password_hash: string;
  permissions: string[];
  disabled: boolean;
  locale: string;
  timezone: string;
  created: Date;
  last_login: Date | null;
  last_password_change: Date;
  token_version: number;
}

export const userResource: ResourceDef = {
  name: 'users',
  properties: {
    id: { column: 't.id', type: 'integer' },
    username: { column: 't.username', type: 'string' },
    email: { column: 't.email', type: 'string' },
    name: { column: 't.name', type: 'string' },
    disabled: { column: 't.disabled', type: 'boolean' },
  },
  tiebreak: 't.id',
};

const columns =
  'id, username, email, name, password_hash, permissions, disabled, locale, timezone, created, last_login, last_password_change, token_version';

function fromRow(r: UserRow): UserRecord {
  return {
    id: r.id,
    username: r.username,
    email: r.email,
    name: r.name,
    passwordHash: r.password_hash,
    permissions: r.permissions,
    disabled: r.disabled,
    locale: r.locale,
    timezone: r.timezone,
    created: r.created,
    lastLogin: r.last_login,
    lastPasswordChange: r.last_password_change,
    tokenVersion: r.token_version,
  };
}

const changeColumns: Record<keyof UserChanges, string> = {
  username: 'username',
  email: 'email',
  name: 'name',
  passwordHash: 'password_hash',
  permissions: 'permissions',
  disabled: 'disabled',
  locale: 'locale',
  timezone: 'timezone',
};

export class UsersRepository {
  constructor(private readonly db: Queryable) {}

  async findById(id: number): Promise<UserRecord | undefined> {
    const rows = await this.db.query<UserRow>(`select ${columns} from users where id = $1`, [id]);
    return rows[0] && fromRow(rows[0]);
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    const rows = await this.db.query<UserRow>(`select ${columns} from users where username = $1`, [username]);
    return rows[0] && fromRow(rows[0]);
  }

  private readonly source: ListSource = { from: 'users t', select: columns.split(', ').map((c) => `t.${c}`).join(', ') };

  countMatching(q: SqlQueryParts): Promise<number> {
    return countRows(this.db, this.source, q);
  }

  async *page(q: SqlQueryParts): AsyncGenerator<UserRecord[]> {
    for await (const rows of pageRows<UserRow>(this.db, this.source, q)) yield rows.map(fromRow);
  }

  async count(): Promise<number> {
    const rows = await this.db.query<{ n: number }>('select count(*)::int as n from users');
    return rows[0]?.n ?? 0;
  }

  async insert(user: NewUser): Promise<UserRecord> {
    const rows = await this.db.query<UserRow>(
      `insert into users (username, username_key, email, name, password_hash, permissions, disabled, locale, timezone)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning ${columns}`,
      [user.username, usernameKey(user.username), user.email, user.name, user.passwordHash, user.permissions, user.disabled, user.locale, user.timezone],
    );
    return fromRow(rows[0]!);
  }

  /** Applies the given changes; a new password hash also stamps last_password_change. */
  async update(id: number, changes: UserChanges): Promise<UserRecord | undefined> {
    const sets: string[] = [];
    const values: unknown[] = [];
    for (const [key, column] of Object.entries(changeColumns) as [keyof UserChanges, string][]) {
      if (changes[key] === undefined) continue;
      values.push(changes[key]);
      sets.push(`${column} = $${values.length}`);
    }
    if (changes.username !== undefined) {
      values.push(usernameKey(changes.username));
      sets.push(`username_key = $${values.length}`);
    }
    if (changes.passwordHash !== undefined) sets.push('last_password_change = now()');
    if (sets.length === 0) return this.findById(id);
    values.push(id);
    const rows = await this.db.query<UserRow>(
      `update users set ${sets.join(', ')} where id = $${values.length} returning ${columns}`,
      values,
    );
    return rows[0] && fromRow(rows[0]);
  }

  /**
   * Other users whose names equal this one ignoring case: those holding its key, and those without a
   * key (names made before the rule, or not yet keyed), compared here. Returns their usernames.
   */
  async namesLike(username: string, exceptId?: number): Promise<string[]> {
    const key = usernameKey(username);
    const rows = await this.db.query<{ id: number; username: string }>(
      'select id, username from users where username_key = $1 or username_key is null order by id',
      [key],
    );
    return rows.filter((r) => r.id !== exceptId && usernameKey(r.username) === key).map((r) => r.username);
  }

  /** Users without a username key, oldest first. */
  async keyless(): Promise<{ id: number; username: string }[]> {
    return this.db.query<{ id: number; username: string }>('select id, username from users where username_key is null order by id');
  }

  /** Gives the user its key unless another user holds it (then false; also when another instance just took it). */
  async assignKey(id: number, username: string): Promise<boolean> {
    const key = usernameKey(username);
    try {
      const rows = await this.db.query(
        `update users set username_key = $1
          where id = $2 and username = $3 and username_key is null and not exists (select 1 from users where username_key = $1)
          returning id`,
        [key, id, username],
      );
      return rows.length > 0;
    } catch (err) {
      if (pgErrorCode(err) === PgErrorCode.UNIQUE_VIOLATION) return false;
      throw err;
    }
  }

  async recordLogin(id: number): Promise<void> {
    await this.db.query('update users set last_login = now() where id = $1', [id]);
  }

  /** Revokes every token of the user; returns the new version. */
  async incrementTokenVersion(id: number): Promise<number | undefined> {
    const rows = await this.db.query<{ token_version: number }>(
      'update users set token_version = token_version + 1 where id = $1 returning token_version',
      [id],
    );
    return rows[0]?.token_version;
  }

  async delete(id: number): Promise<boolean> {
    const rows = await this.db.query('delete from users where id = $1 returning id', [id]);
    return rows.length > 0;
  }
}
