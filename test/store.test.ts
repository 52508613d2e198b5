// Metadata store contract: the same tests on every engine (PGlite always, PostgreSQL when
// TEST_DATABASE_URL is set), each on a fresh database (a new PGlite directory or a new schema).
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pgErrorCode, PgErrorCode, type MetadataDb } from '../src/store/metadata/db.js';
import { loadMigrations, migrate, type Migration } from '../src/store/metadata/migrate.js';
import { openPglite } from '../src/store/metadata/pglite.js';
import { openPostgres } from '../src/store/metadata/postgres.js';
import { SessionsRepository } from '../src/store/metadata/sessions.js';
import { SettingsRepository } from '../src/store/metadata/settings.js';
import { compileRql } from '../src/core/rql/index.js';
import { dataPointResource, DataPointsRepository } from '../src/store/metadata/data-points.js';
import { userResource, UsersRepository, type NewUser, type UserRecord } from '../src/store/metadata/users.js';
import { announceEngines, dropSchema, metadataEngines, newSchemaName, removeDir, tempDir, testDatabaseUrl, type MetadataEngine } from './helpers/engines.js';

/** Every user, sorted by username, through the repository's RQL page reader. */
async function listAll(users: UsersRepository): Promise<UserRecord[]> {
  const all: UserRecord[] = [];
  for await (const batch of users.page(compileRql(userResource, 'sort(username)'))) all.push(...batch);
  return all;
}


interface OpenedDb {
  db: MetadataDb;
  dispose(): Promise<void>;
}

async function openFresh(engine: MetadataEngine): Promise<OpenedDb> {
  if (engine === 'pglite') {
    const dir = await tempDir('dds-store-');
    const db = await openPglite(join(dir, 'metadata'));
    return {
      db,
      async dispose() {
        await db.close();
        await removeDir(dir);
      },
    };
  }
  const schema = newSchemaName();
  const db = await openPostgres(testDatabaseUrl!, 2, schema);
  return {
    db,
    async dispose() {
      await db.close();
      await dropSchema(schema);
    },
  };
}

const hasCode = (code: string) => (err: unknown) => pgErrorCode(err) === code;

async function tableExists(db: MetadataDb, name: string): Promise<boolean> {
  const rows = await db.query<{ t: string | null }>('select to_regclass($1)::text as t', [name]);
  return rows[0]?.t !== null;
}

let userSeq = 0;
function newUser(overrides: Partial<NewUser> = {}): NewUser {
  return {
    username: `user${++userSeq}`,
    email: '',
    name: '',
    passwordHash: '$argon2id$fake',
    permissions: ['user'],
    disabled: false,
    locale: '',
    timezone: '',
    ...overrides,
  };
}

describe('loadMigrations', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('dds-migrations-');
  });
  afterEach(() => removeDir(dir));

  it('orders migrations by numeric version and ignores other files', async () => {
    await writeFile(join(dir, '10_later.sql'), 'select 10');
    await writeFile(join(dir, '2_earlier.sql'), 'select 2');
    await writeFile(join(dir, 'notes.md'), '# not a migration');
    await writeFile(join(dir, 'draft.sql'), 'select 0');
    const migrations = await loadMigrations(dir);
    assert.deepEqual(
      migrations.map((m) => [m.version, m.name, m.sql]),
      [
        [2, '2_earlier', 'select 2'],
        [10, '10_later', 'select 10'],
      ],
    );
  });

  it('refuses two migrations with the same version', async () => {
    await writeFile(join(dir, '003_a.sql'), 'select 1');
    await writeFile(join(dir, '3_b.sql'), 'select 2');
    await assert.rejects(loadMigrations(dir), /two migrations share version 3/);
  });

  it('finds the project\'s migrations, starting at version 1', async () => {
    const migrations = await loadMigrations();
    assert.ok(migrations.length >= 1);
    assert.equal(migrations[0]!.name, '001_users_and_auth');
  });
});

announceEngines();
for (const engine of metadataEngines()) {
  describe(`metadata store (${engine})`, () => {
    let opened: OpenedDb;
    let db: MetadataDb;
    let firstRun: string[];
    let projectMigrations: Migration[];

    before(async () => {
      opened = await openFresh(engine);
      db = opened.db;
      projectMigrations = await loadMigrations();
      firstRun = await migrate(db);
    });
    after(() => opened?.dispose());

    it(`reports its engine as ${engine} and answers ping`, async () => {
      assert.equal(db.engine, engine);
      await db.ping();
    });

    describe('migrate', () => {
      it('applies every migration to a fresh database, in order', async () => {
        assert.deepEqual(
          firstRun,
          projectMigrations.map((m) => m.name),
        );
        for (const table of ['users', 'sessions', 'settings']) assert.ok(await tableExists(db, table), `table ${table} missing`);
      });

      it('records each applied version in schema_migrations', async () => {
        const rows = await db.query<{ version: number; name: string; applied_at: Date }>(
          'select version, name, applied_at from schema_migrations order by version',
        );
        assert.deepEqual(
          rows.map((r) => [r.version, r.name]),
          projectMigrations.map((m) => [m.version, m.name]),
        );
        for (const r of rows) assert.ok(r.applied_at instanceof Date);
      });

      it('applies nothing the second time (idempotent)', async () => {
        assert.deepEqual(await migrate(db), []);
        const rows = await db.query<{ n: number }>('select count(*) as n from schema_migrations');
        assert.equal(rows[0]!.n, projectMigrations.length);
      });

      it('applies only a migration added later', async () => {
        const extra: Migration = { version: 9001, name: '9001_extra', sql: 'create table extra_table (x integer);' };
        assert.deepEqual(await migrate(db, [...projectMigrations, extra]), ['9001_extra']);
        assert.ok(await tableExists(db, 'extra_table'));
        assert.deepEqual(await migrate(db, [...projectMigrations, extra]), []);
      });

      it('rolls back a failing migration completely and does not record it', async () => {
        const broken: Migration = {
          version: 9002,
          name: '9002_broken',
          sql: 'create table half_done (x integer);\ninsert into no_such_table values (1);',
        };
        await assert.rejects(migrate(db, [...projectMigrations, broken]));
        assert.equal(await tableExists(db, 'half_done'), false);
        const rows = await db.query('select 1 from schema_migrations where version = 9002');
        assert.equal(rows.length, 0);
      });

      if (engine === 'postgresql') {
        it('lets several instances migrate one fresh schema at once: each migration applied exactly once', async () => {
          const schema = newSchemaName();
          const instances = [
            await openPostgres(testDatabaseUrl!, 2, schema),
            await openPostgres(testDatabaseUrl!, 2, schema),
            await openPostgres(testDatabaseUrl!, 2, schema),
          ];
          try {
            const results = await Promise.all(instances.map((i) => migrate(i)));
            assert.deepEqual(
              results.flat().sort(),
              projectMigrations.map((m) => m.name).sort(),
            );
            const rows = await instances[0]!.query<{ n: number }>('select count(*) as n from schema_migrations');
            assert.equal(rows[0]!.n, projectMigrations.length);
          } finally {
            await Promise.all(instances.map((i) => i.close()));
            await dropSchema(schema);
          }
        });
      }
    });

    describe('transaction', () => {
      const settings = () => new SettingsRepository(db);

      it('commits and returns the function\'s value', async () => {
        const result = await db.transaction(async (tx) => {
          await new SettingsRepository(tx).put('tx.commit', { ok: true });
          return 42;
        });
        assert.equal(result, 42);
        assert.deepEqual(await settings().get('tx.commit'), { ok: true });
      });

      it('rolls back every statement when the function throws', async () => {
        await assert.rejects(
          db.transaction(async (tx) => {
            await new SettingsRepository(tx).put('tx.rollback', 1);
            await new UsersRepository(tx).insert(newUser({ username: 'tx-rollback-user' }));
            throw new Error('boom');
          }),
          /boom/,
        );
        assert.equal(await settings().get('tx.rollback'), undefined);
        assert.equal(await new UsersRepository(db).findByUsername('tx-rollback-user'), undefined);
      });

      it('rolls back earlier statements when a later one fails in SQL', async () => {
        const users = new UsersRepository(db);
        await users.insert(newUser({ username: 'tx-existing' }));
        await assert.rejects(
          db.transaction(async (tx) => {
            await new SettingsRepository(tx).put('tx.sqlfail', 1);
            await new UsersRepository(tx).insert(newUser({ username: 'tx-existing' }));
          }),
          hasCode(PgErrorCode.UNIQUE_VIOLATION),
        );
        assert.equal(await settings().get('tx.sqlfail'), undefined);
        // The connection is usable afterwards.
        await db.ping();
      });
    });

    describe('UsersRepository', () => {
      let users: UsersRepository;
      before(() => {
        users = new UsersRepository(db);
      });

      it('inserts a user and returns the stored record with defaults', async () => {
        const input = newUser({ email: 'a@example.com', name: 'A', permissions: ['user', 'ops'], locale: 'de', timezone: 'Europe/Berlin' });
        const before = Date.now();
        const u = await users.insert(input);
        assert.equal(typeof u.id, 'number');
        assert.equal(u.username, input.username);
        assert.equal(u.email, 'a@example.com');
        assert.equal(u.name, 'A');
        assert.equal(u.passwordHash, input.passwordHash);
        assert.deepEqual(u.permissions, ['user', 'ops']);
        assert.equal(u.disabled, false);
        assert.equal(u.locale, 'de');
        assert.equal(u.timezone, 'Europe/Berlin');
        assert.ok(u.created instanceof Date);
        assert.ok(Math.abs(u.created.getTime() - before) < 60_000);
        assert.ok(u.lastPasswordChange instanceof Date);
        assert.equal(u.lastLogin, null);
        assert.equal(u.tokenVersion, 0);
      });

      it('finds by id and by exact username', async () => {
        const u = await users.insert(newUser({ username: 'CaseSensitive' }));
        assert.deepEqual(await users.findById(u.id), u);
        assert.deepEqual(await users.findByUsername('CaseSensitive'), u);
        assert.equal(await users.findByUsername('casesensitive'), undefined);
        assert.equal(await users.findById(987_654_321), undefined);
      });

      it('refuses a duplicate username with SQLSTATE 23505', async () => {
        const u = await users.insert(newUser());
        await assert.rejects(users.insert(newUser({ username: u.username })), hasCode(PgErrorCode.UNIQUE_VIOLATION));
      });

      it('updates only the given fields and leaves last_password_change alone', async () => {
        const u = await users.insert(newUser());
        const updated = await users.update(u.id, { email: 'new@example.com', permissions: ['user', 'x'], disabled: true });
        assert.ok(updated);
        assert.equal(updated.email, 'new@example.com');
        assert.deepEqual(updated.permissions, ['user', 'x']);
        assert.equal(updated.disabled, true);
        assert.equal(updated.name, u.name);
        assert.equal(updated.passwordHash, u.passwordHash);
        assert.equal(updated.lastPasswordChange.getTime(), u.lastPasswordChange.getTime());
        assert.deepEqual(await users.findById(u.id), updated);
      });

      it('stamps last_password_change when the password hash changes', async () => {
        const u = await users.insert(newUser());
        await sleep(15);
        const updated = await users.update(u.id, { passwordHash: '$argon2id$other' });
        assert.ok(updated);
        assert.equal(updated.passwordHash, '$argon2id$other');
        assert.ok(updated.lastPasswordChange.getTime() > u.lastPasswordChange.getTime(), 'last_password_change moved');
        assert.ok(Math.abs(updated.lastPasswordChange.getTime() - Date.now()) < 60_000);
      });

      it('returns the unchanged record for an empty change and undefined for an unknown id', async () => {
        const u = await users.insert(newUser());
        assert.deepEqual(await users.update(u.id, {}), u);
        assert.equal(await users.update(987_654_321, { name: 'x' }), undefined);
      });

      it('refuses renaming onto an existing username with 23505', async () => {
        const a = await users.insert(newUser());
        const b = await users.insert(newUser());
        await assert.rejects(users.update(b.id, { username: a.username }), hasCode(PgErrorCode.UNIQUE_VIOLATION));
      });

      it('records a login', async () => {
        const u = await users.insert(newUser());
        await users.recordLogin(u.id);
        const after = await users.findById(u.id);
        assert.ok(after?.lastLogin instanceof Date);
      });

      it('increments the token version and returns the new one', async () => {
        const u = await users.insert(newUser());
        assert.equal(await users.incrementTokenVersion(u.id), 1);
        assert.equal(await users.incrementTokenVersion(u.id), 2);
        assert.equal((await users.findById(u.id))?.tokenVersion, 2);
        assert.equal(await users.incrementTokenVersion(987_654_321), undefined);
      });

      it('lists users sorted by username in code-point order (upper case before lower case)', async () => {
        await users.insert(newUser({ username: 'zz-order-b' }));
        await users.insert(newUser({ username: 'ZZ-order-a' }));
        const names = (await listAll(users)).map((u) => u.username);
        assert.ok(names.indexOf('ZZ-order-a') < names.indexOf('zz-order-b'));
        assert.deepEqual(names, [...names].sort());
      });

      it('counts users as a JS number', async () => {
        const n = await users.count();
        assert.equal(typeof n, 'number');
        assert.equal(n, (await listAll(users)).length);
      });

      it('deletes a user once', async () => {
        const u = await users.insert(newUser());
        assert.equal(await users.delete(u.id), true);
        assert.equal(await users.findById(u.id), undefined);
        assert.equal(await users.delete(u.id), false);
      });
    });

    describe('SessionsRepository', () => {
      let sessions: SessionsRepository;
      let users: UsersRepository;
      let seq = 0;
      const hash = () => `hash-${engine}-${++seq}`;
      const t = (iso: string) => new Date(iso);

      before(() => {
        sessions = new SessionsRepository(db);
        users = new UsersRepository(db);
      });

      it('inserts a session with created = last_seen and finds it by hash', async () => {
        const u = await users.insert(newUser());
        const h = hash();
        const now = t('2024-05-01T10:00:00.123Z');
        await sessions.insert(h, u.id, now);
        assert.deepEqual(await sessions.find(h), { idHash: h, userId: u.id, created: now, lastSeen: now });
        assert.equal(await sessions.find('no-such-hash'), undefined);
      });

      it('refuses a session of an unknown user (foreign key, 23503) and a duplicate hash (23505)', async () => {
        await assert.rejects(sessions.insert(hash(), 987_654_321, new Date()), hasCode(PgErrorCode.FOREIGN_KEY_VIOLATION));
        const u = await users.insert(newUser());
        const h = hash();
        await sessions.insert(h, u.id, new Date());
        await assert.rejects(sessions.insert(h, u.id, new Date()), hasCode(PgErrorCode.UNIQUE_VIOLATION));
      });

      it('touch moves last_seen and keeps created', async () => {
        const u = await users.insert(newUser());
        const h = hash();
        await sessions.insert(h, u.id, t('2024-05-01T10:00:00Z'));
        await sessions.touch(h, t('2024-05-01T11:30:00.456Z'));
        const s = await sessions.find(h);
        assert.equal(s?.created.toISOString(), '2024-05-01T10:00:00.000Z');
        assert.equal(s?.lastSeen.toISOString(), '2024-05-01T11:30:00.456Z');
      });

      it('deleteForUser ends every session of the user except the one kept, and returns the ended hashes', async () => {
        const u = await users.insert(newUser());
        const other = await users.insert(newUser());
        const [keep, a, b, foreign] = [hash(), hash(), hash(), hash()];
        for (const h of [keep, a, b]) await sessions.insert(h, u.id, new Date());
        await sessions.insert(foreign, other.id, new Date());

        assert.deepEqual((await sessions.deleteForUser(u.id, keep)).sort(), [a, b].sort());
        assert.ok(await sessions.find(keep));
        assert.equal(await sessions.find(a), undefined);
        assert.equal(await sessions.find(b), undefined);
        assert.ok(await sessions.find(foreign), 'another user\'s session is untouched');

        assert.deepEqual(await sessions.deleteForUser(u.id), [keep]);
        assert.equal(await sessions.find(keep), undefined);
        assert.deepEqual(await sessions.deleteForUser(u.id), []);
      });

      it('deleteExpired removes idle and too-old sessions and counts them', async () => {
        const u = await users.insert(newUser());
        const [idle, old, fresh] = [hash(), hash(), hash()];
        // Far in the past, so that no other test's session is old enough to go too.
        await sessions.insert(idle, u.id, t('1990-01-01T00:00:00Z'));
        await sessions.insert(old, u.id, t('1989-12-01T00:00:00Z'));
        await sessions.touch(old, t('1990-01-10T00:00:00Z'));
        await sessions.insert(fresh, u.id, t('1990-01-09T00:00:00Z'));
        await sessions.touch(fresh, t('1990-01-10T00:00:00Z'));

        // Idle before Jan 5, created before Dec 15.
        assert.equal(await sessions.deleteExpired(t('1990-01-05T00:00:00Z'), t('1989-12-15T00:00:00Z')), 2);
        assert.equal(await sessions.find(idle), undefined);
        assert.equal(await sessions.find(old), undefined);
        assert.ok(await sessions.find(fresh));
      });

      it('delete ends one session; deleting its user ends all of them', async () => {
        const u = await users.insert(newUser());
        const [a, b] = [hash(), hash()];
        await sessions.insert(a, u.id, new Date());
        await sessions.insert(b, u.id, new Date());
        await sessions.delete(a);
        assert.equal(await sessions.find(a), undefined);
        assert.ok(await sessions.find(b));
        await users.delete(u.id);
        assert.equal(await sessions.find(b), undefined);
      });
    });

    describe('SettingsRepository', () => {
      let settings: SettingsRepository;
      before(() => {
        settings = new SettingsRepository(db);
      });

      it('returns undefined for an absent key', async () => {
        assert.equal(await settings.get('absent.key'), undefined);
      });

      it('round-trips JSON values and put overwrites', async () => {
        const value = { kty: 'EC', crv: 'P-521', n: [1, 2.5, -3], nested: { s: 'ünïcödé ✓', t: true, z: null } };
        await settings.put('json.value', value);
        assert.deepEqual(await settings.get('json.value'), value);
        await settings.put('json.value', 'replaced');
        assert.equal(await settings.get('json.value'), 'replaced');
      });

      it('putIfAbsent stores the first value and keeps it', async () => {
        assert.deepEqual(await settings.putIfAbsent('first.wins', { v: 1 }), { v: 1 });
        assert.deepEqual(await settings.putIfAbsent('first.wins', { v: 2 }), { v: 1 });
        assert.deepEqual(await settings.get('first.wins'), { v: 1 });
      });

      it('putIfAbsent from concurrent callers agrees on one value', async () => {
        const results = await Promise.all([1, 2, 3, 4].map((v) => settings.putIfAbsent('race.key', { v })));
        const stored = await settings.get<{ v: number }>('race.key');
        assert.ok(stored);
        for (const r of results) assert.deepEqual(r, stored);
      });
    });

    describe('int8', () => {
      it('comes back as a JS number for counts and bigint columns', async () => {
        const rows = await db.query<{ n: unknown; big: unknown }>('select count(*) as n, 9007199254740991::int8 as big from users');
        assert.equal(typeof rows[0]!.n, 'number');
        assert.ok((rows[0]!.n as number) > 0);
        assert.equal(rows[0]!.big, 9007199254740991);
      });
    });
  });
}

// Long list windows go in keyset pages (store/metadata/list.ts): each batch after the first starts
// after the last row read, by every sort key, NULLs and descending keys included.
for (const engine of metadataEngines()) {
  describe(`list pages by keyset (${engine})`, function () {
    this.timeout(120_000);
    let opened: OpenedDb;
    let statements: string[];
    let repo: DataPointsRepository;

    before(async () => {
      opened = await openFresh(engine);
      await migrate(opened.db);
      await opened.db.query(`insert into data_sources (xid, name, model_type) values ('S1', 'S1', 'VIRTUAL'), ('S2', 'S2', 'VIRTUAL')`);
      // Ties on every key, a tag missing on a quarter of the points (NULL), two data types and units.
      await opened.db.query(
        `insert into data_points (xid, name, device_name, data_source_id, data_type, point_locator, tags, unit)
         select 'P' || g, 'N' || (g % 37), 'd' || (g % 5), (select min(id) from data_sources) + g % 2,
                case when g % 3 = 0 then 'BINARY' else 'NUMERIC' end, '{}'::jsonb,
                case when g % 4 = 0 then '{}'::jsonb else jsonb_build_object('site', 's' || (g % 7)) end,
                case when g % 2 = 0 then 'x' else '' end
         from generate_series(1, 1500) g`,
      );
      statements = [];
      const db = opened.db;
      repo = new DataPointsRepository({
        query: (text, values) => {
          statements.push(text);
          return db.query(text, values);
        },
        exec: (script) => db.exec(script),
      });
    });
    after(() => opened?.dispose());

    const queries = [
      'sort(-tags.site,name)&limit(1400,7)',
      'sort(tags.site,-name)&limit(1500)',
      'sort(-dataType,-xid)&limit(100000)',
      'sort(name)&limit(700,100)',
      'limit(1499,1)',
      'sort(-dataSourceXid,tags.site)&eq(unit,x)&limit(10000)',
      'sort(-tags.site)&limit(1500)',
      'sort(-enabled,-deviceName,tags.site)&limit(1500)',
    ];
    for (const rql of queries) {
      it(`reads ${rql} as one ordered query would, with OFFSET in the first statement only`, async () => {
        const q = compileRql(dataPointResource, rql);
        statements.length = 0;
        const got: number[] = [];
        for await (const batch of repo.page(q)) for (const r of batch) got.push(r.id);
        assert.ok(statements.length > 3, `${statements.length} statements`);
        assert.ok(/offset/i.test(statements[0]!), 'the first batch skips the offset');
        for (const text of statements.slice(1)) assert.doesNotMatch(text, /offset/i);
        const n = q.values.length;
        const want = await opened.db.query<{ id: number }>(
          `select t.id from ${repo.source.from} where ${q.where} order by ${q.orderBy} limit $${n + 1} offset $${n + 2}`,
          [...q.values, q.limit, q.offset],
        );
        assert.ok(want.length > 300, `${want.length} rows`);
        assert.deepEqual(got, want.map((r) => r.id));
        const [first] = await (async () => {
          for await (const batch of repo.page(q)) return batch;
          return [];
        })();
        assert.equal(Object.keys(first!).filter((k) => k.startsWith('__')).length, 0, 'no sort key columns in the records');
      });
    }
  });
}
