import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { join } from 'node:path';
import { loadConfig, type Config } from '../src/config.js';
import { startService, type RunningService } from '../src/service.js';
import { hashPassword } from '../src/services/passwords.js';
import { loadMigrations, migrate } from '../src/store/metadata/migrate.js';
import { openPglite } from '../src/store/metadata/pglite.js';
import { openPostgres } from '../src/store/metadata/postgres.js';
import { ApiClient, createUser, loggedIn as loggedInAt } from './helpers/client.js';
import { announceEngines, dropSchema, metadataEngines, newSchemaName, removeDir, tempDir, testDatabaseUrl } from './helpers/engines.js';
import { capturingLogger, flushed } from './helpers/log.js';

const describeOnPostgres = testDatabaseUrl ? describe : describe.skip;

interface UserBody {
  id: number;
  username: string;
  email: string;
  name: string;
  permissions: string[];
  disabled: boolean;
  locale: string;
  timezone: string;
  created: number;
  lastLogin: number | null;
  lastPasswordChange: number;
}

const USERS = '/rest/latest/users';
const PASSWORD = 'secret-password-1';
const USER_KEYS = ['created', 'disabled', 'email', 'id', 'lastLogin', 'lastPasswordChange', 'locale', 'name', 'permissions', 'timezone', 'username'];

/** A user as the API shows it: the documented fields, nothing secret. */
function assertUserBody(body: unknown): asserts body is UserBody {
  assert.equal(typeof body, 'object');
  const keys = Object.keys(body as object);
  for (const secret of ['password', 'password_hash', 'passwordHash', 'tokenVersion', 'token_version', 'currentPassword']) {
    assert.ok(!keys.includes(secret), `user body exposes ${secret}`);
  }
  assert.deepEqual(keys.sort(), USER_KEYS);
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`users API (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    let seq = 0;
    const uniqueName = (prefix: string) => `${prefix}${++seq}`;

    async function loggedIn(username: string, password = PASSWORD): Promise<ApiClient> {
      const c = new ApiClient(app.url);
      await c.login(username, password);
      return c;
    }

    /** Creates a normal user and returns a client logged in as it. */
    async function newUser(prefix: string, extra: Record<string, unknown> = {}): Promise<{ name: string; client: ApiClient }> {
      const name = uniqueName(prefix);
      await createUser(admin, name, PASSWORD, extra);
      return { name, client: await loggedIn(name) };
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn('admin', 'admin');
    });
    after(() => app.stop());

    describe('POST /users', () => {
      it('creates a user: 201, Location naming the username, the stored user without secrets', async () => {
        const name = uniqueName('alice');
        const before = Date.now();
        const res = await admin.post<UserBody>(USERS, {
          username: name,
          password: PASSWORD,
          email: `${name}@example.com`,
          name: 'Alice Example',
          permissions: ['user', 'operators'],
          locale: 'de-DE',
          timezone: 'Europe/Berlin',
        });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('location'), `/rest/latest/users/${name}`);
        assertUserBody(res.body);
        assert.ok(!res.text.includes(PASSWORD), 'response echoes the password');
        assert.ok(!res.text.includes('$argon2'), 'response carries a password hash');
        assert.equal(res.body.username, name);
        assert.equal(res.body.email, `${name}@example.com`);
        assert.equal(res.body.name, 'Alice Example');
        assert.deepEqual(res.body.permissions, ['user', 'operators']);
        assert.equal(res.body.disabled, false);
        assert.equal(res.body.locale, 'de-DE');
        assert.equal(res.body.timezone, 'Europe/Berlin');
        assert.equal(typeof res.body.id, 'number');
        assert.ok(res.body.created >= before - 1000 && res.body.created <= Date.now() + 1000, 'created is epoch ms of now');
        assert.equal(res.body.lastLogin, null);
        assert.equal(typeof res.body.lastPasswordChange, 'number');

        const fetched = await admin.get<UserBody>(res.headers.get('location')!);
        assert.equal(fetched.status, 200);
        assert.deepEqual(fetched.body, res.body);
        await loggedIn(name); // the password was stored
      });

      it('percent-encodes the username in Location, and GET, PUT and DELETE find the user there', async () => {
        for (const prefix of ['mail@example.com', 'slash/', 'odd%?#', 'ünï']) {
          const name = uniqueName(prefix);
          const res = await admin.post(USERS, { username: name, password: PASSWORD });
          assert.equal(res.status, 201, res.text);
          const location = res.headers.get('location')!;
          assert.equal(location, `/rest/latest/users/${encodeURIComponent(name)}`);
          const fetched = await admin.get<UserBody>(location);
          assert.equal(fetched.status, 200, `GET ${location}`);
          assert.equal(fetched.body.username, name);
          const updated = await admin.put<UserBody>(location, { username: name, name: 'Odd Name' });
          assert.equal(updated.status, 200, `PUT ${location}`);
          assert.equal(updated.body.name, 'Odd Name');
          const deleted = await admin.delete<UserBody>(location);
          assert.equal(deleted.status, 200, `DELETE ${location}`);
          assert.equal(deleted.body.username, name);
        }
      });

      it('applies defaults to the optional fields', async () => {
        const name = uniqueName('minimal');
        const res = await admin.post<UserBody>(USERS, { username: name, password: PASSWORD });
        assert.equal(res.status, 201, res.text);
        assert.deepEqual(
          { email: res.body.email, name: res.body.name, permissions: res.body.permissions, disabled: res.body.disabled },
          { email: '', name: '', permissions: [], disabled: false },
        );
      });

      it('refuses a duplicate username with 409 4003', async () => {
        const name = uniqueName('dup');
        await createUser(admin, name, PASSWORD);
        const res = await admin.post(USERS, { username: name, password: PASSWORD });
        assertError(res, 409, 4003, 'ALREADY_EXISTS');
      });

      it('refuses a username that differs from another only in case with 409 4003 naming it; login matches exactly', async () => {
        for (const twin of ['Admin', 'ADMIN', 'aDmIn']) {
          const res = await admin.post<{ message: string }>(USERS, { username: twin, password: PASSWORD });
          assertError(res, 409, 4003, 'ALREADY_EXISTS');
          assert.equal(res.body.message, 'Username is already in use: admin differs only in case');
        }
        // Beyond ASCII alike, on PGlite and PostgreSQL: É/é, ß/SS.
        await createUser(admin, 'Émile', PASSWORD);
        assertError(await admin.post(USERS, { username: 'émile', password: PASSWORD }), 409, 4003);
        await createUser(admin, 'straße', PASSWORD);
        assertError(await admin.post(USERS, { username: 'STRASSE', password: PASSWORD }), 409, 4003);
        assert.equal((await admin.get<{ total: number }>(`${USERS}?match(username,admin)`)).body.total, 1);
        // Login matches the stored name exactly.
        const login = (username: string, password: string) => {
          const c = new ApiClient(app.url);
          c.seedCsrf();
          return c.post('/rest/latest/login', { username, password });
        };
        assertError(await login('ADMIN', 'admin'), 401, 4011);
        assertError(await login('émile', PASSWORD), 401, 4011);
        await loggedIn('Émile');
      });

      it('refuses a non-superadmin with 403 4004 and creates nothing', async () => {
        const { client } = await newUser('creator');
        const name = uniqueName('notcreated');
        const res = await client.post(USERS, { username: name, password: PASSWORD });
        assertError(res, 403, 4004, 'ACCESS_DENIED');
        assert.equal((await admin.get(`${USERS}/${name}`)).status, 404);
      });

      it('reports a missing username as "is required"', async () => {
        const messages = assertValidation(await admin.post(USERS, { password: PASSWORD }));
        assertHasMessage(messages, 'username', 'is required');
      });

      it('reports a short password as "must be at least 8 characters"', async () => {
        const messages = assertValidation(await admin.post(USERS, { username: uniqueName('short'), password: 'seven77' }));
        assertHasMessage(messages, 'password', 'must be at least 8 characters');
      });

      it('reports a malformed email', async () => {
        const messages = assertValidation(await admin.post(USERS, { username: uniqueName('mail'), password: PASSWORD, email: 'not-an-email' }));
        assertHasMessage(messages, 'email', 'must be a valid email address');
      });

      it('reports an unknown time zone', async () => {
        const messages = assertValidation(await admin.post(USERS, { username: uniqueName('tz'), password: PASSWORD, timezone: 'Mars/Olympus' }));
        assertHasMessage(messages, 'timezone', /IANA time zone/);
      });

      it('requires a password on create', async () => {
        const name = uniqueName('nopass');
        const messages = assertValidation(await admin.post(USERS, { username: name }));
        assertHasMessage(messages, 'password', 'is required');
        assert.equal((await admin.get(`${USERS}/${name}`)).status, 404);
      });

      it('reports every failing field at once', async () => {
        const messages = assertValidation(await admin.post(USERS, { password: 'short', email: 'x', timezone: 'Nowhere/Town' }));
        assert.deepEqual(new Set(messages.map((m) => m.property)), new Set(['username', 'password', 'email', 'timezone']));
      });
    });

    describe('GET /users', () => {
      it('lists every user to a superadmin as {items, total}', async () => {
        const { name } = await newUser('listed');
        const res = await admin.get<{ items: UserBody[]; total: number }>(USERS);
        assert.equal(res.status, 200);
        assert.deepEqual(Object.keys(res.body).sort(), ['items', 'total']);
        assert.equal(res.body.total, res.body.items.length);
        const names = res.body.items.map((u) => u.username);
        assert.ok(names.includes('admin'));
        assert.ok(names.includes(name));
        assert.ok(res.body.items.length >= 2);
        for (const u of res.body.items) assertUserBody(u);
      });

      it('lists only the caller to a normal user', async () => {
        await newUser('other');
        const { name, client } = await newUser('lonely');
        const res = await client.get<{ items: UserBody[]; total: number }>(USERS);
        assert.equal(res.status, 200);
        assert.equal(res.body.total, 1);
        assert.deepEqual(
          res.body.items.map((u) => u.username),
          [name],
        );
      });

      it('shows a user itself', async () => {
        const { name, client } = await newUser('self');
        const res = await client.get<UserBody>(`${USERS}/${name}`);
        assert.equal(res.status, 200);
        assertUserBody(res.body);
        assert.equal(res.body.username, name);
        assert.equal(typeof res.body.lastLogin, 'number', 'login was recorded');
      });

      it('refuses another user to a normal user with 403 4004 "Access denied"', async () => {
        const { client } = await newUser('nosy');
        const body = assertError(await client.get(`${USERS}/admin`), 403, 4004, 'ACCESS_DENIED');
        assert.equal(body.message, 'Access denied');
      });

      it('answers an unknown username with 404, code -1, NOT_FOUND', async () => {
        assertError(await admin.get(`${USERS}/no-such-user`), 404, -1, 'NOT_FOUND');
      });

      it('shows the caller at /users/current', async () => {
        const { name, client } = await newUser('current');
        const res = await client.get<UserBody>(`${USERS}/current`);
        assert.equal(res.status, 200);
        assertUserBody(res.body);
        assert.equal(res.body.username, name);
      });
    });

    describe('PUT /users/<username>', () => {
      it('lets a superadmin change permissions, disabled and email', async () => {
        const { name } = await newUser('managed');
        const current = (await admin.get<UserBody>(`${USERS}/${name}`)).body;
        const res = await admin.put<UserBody>(`${USERS}/${name}`, {
          ...current,
          email: 'new@example.com',
          permissions: ['user', 'operators'],
          disabled: true,
        });
        assert.equal(res.status, 200, res.text);
        assertUserBody(res.body);
        assert.equal(res.body.email, 'new@example.com');
        assert.deepEqual(res.body.permissions, ['user', 'operators']);
        assert.equal(res.body.disabled, true);
        assert.equal(res.body.id, current.id);
        assert.deepEqual((await admin.get(`${USERS}/${name}`)).body, res.body);
        // Disabled is enforced at once.
        const c = new ApiClient(app.url);
        c.seedCsrf();
        assertError(await c.post('/rest/latest/login', { username: name, password: PASSWORD }), 401, 4009);
      });

      it('keeps the old password when the body omits it', async () => {
        const { name } = await newUser('keep');
        const before = (await admin.get<UserBody>(`${USERS}/${name}`)).body;
        const res = await admin.put<UserBody>(`${USERS}/${name}`, { username: name, name: 'Renamed Person' });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.name, 'Renamed Person');
        assert.equal(res.body.lastPasswordChange, before.lastPasswordChange);
        await loggedIn(name, PASSWORD);
      });

      it('lets a superadmin set another user\'s password without the current one', async () => {
        const { name } = await newUser('reset');
        const res = await admin.put(`${USERS}/${name}`, { username: name, password: 'brand-new-password' });
        assert.equal(res.status, 200, res.text);
        await loggedIn(name, 'brand-new-password');
        const c = new ApiClient(app.url);
        c.seedCsrf();
        assertError(await c.post('/rest/latest/login', { username: name, password: PASSWORD }), 401, 4011);
      });

      it('lets a user change its own email, name, locale and timezone, round-tripping its GET body', async () => {
        const { name, client } = await newUser('selfedit');
        const current = (await client.get<UserBody>(`${USERS}/current`)).body;
        const res = await client.put<UserBody>(`${USERS}/${name}`, {
          ...current,
          email: 'me@example.org',
          name: 'Me Myself',
          locale: 'fr-FR',
          timezone: 'America/New_York',
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.email, 'me@example.org');
        assert.equal(res.body.name, 'Me Myself');
        assert.equal(res.body.locale, 'fr-FR');
        assert.equal(res.body.timezone, 'America/New_York');
        assert.deepEqual(res.body.permissions, current.permissions);
      });

      it('validates an update like a create', async () => {
        const { name, client } = await newUser('badedit');
        const messages = assertValidation(await client.put(`${USERS}/${name}`, { username: name, email: 'nope', password: 'short' }));
        assertHasMessage(messages, 'email', 'must be a valid email address');
        assertHasMessage(messages, 'password', 'must be at least 8 characters');
      });

      it('changes the own password only with the right currentPassword, else 400 4012', async () => {
        const { name, client } = await newUser('pwchange');
        const wrong = await client.put(`${USERS}/${name}`, { username: name, password: 'another-password', currentPassword: 'wrong-password' });
        assertError(wrong, 400, 4012, 'PASSWORD_CHANGE_FAILED');
        const missing = await client.put(`${USERS}/${name}`, { username: name, password: 'another-password' });
        assertError(missing, 400, 4012, 'PASSWORD_CHANGE_FAILED');
        await loggedIn(name, PASSWORD); // still the old password

        const before = (await client.get<UserBody>(`${USERS}/current`)).body;
        const ok = await client.put<UserBody>(`${USERS}/${name}`, { username: name, password: 'another-password', currentPassword: PASSWORD });
        assert.equal(ok.status, 200, ok.text);
        assert.ok(ok.body.lastPasswordChange > before.lastPasswordChange, 'lastPasswordChange moves forward');
        await loggedIn(name, 'another-password');
      });

      it('refuses a user changing its own permissions with 403', async () => {
        const { name, client } = await newUser('climber');
        const res = await client.put(`${USERS}/${name}`, { username: name, permissions: ['user', 'superadmin'] });
        assertError(res, 403, 4004);
        assert.deepEqual((await admin.get<UserBody>(`${USERS}/${name}`)).body.permissions, ['user']);
      });

      it('refuses a user disabling or enabling itself with 403', async () => {
        const { name, client } = await newUser('selfdisable');
        assertError(await client.put(`${USERS}/${name}`, { username: name, disabled: true }), 403, 4004);
        assert.equal((await admin.get<UserBody>(`${USERS}/${name}`)).body.disabled, false);
      });

      it('refuses a superadmin changing its own permissions or disabled flag with 403', async () => {
        assertError(await admin.put(`${USERS}/admin`, { username: 'admin', permissions: ['user'] }), 403, 4004);
        assertError(await admin.put(`${USERS}/admin`, { username: 'admin', disabled: true }), 403, 4004);
        assert.deepEqual((await admin.get<UserBody>(`${USERS}/admin`)).body.permissions, ['superadmin']);
      });

      it('refuses a normal user editing another user with 403 and changes nothing', async () => {
        const { name: victim } = await newUser('victim');
        const { client } = await newUser('editor');
        const res = await client.put(`${USERS}/${victim}`, { username: victim, email: 'hijacked@example.com' });
        assertError(res, 403, 4004);
        assert.equal((await admin.get<UserBody>(`${USERS}/${victim}`)).body.email, `${victim}@example.com`);
      });

      it('answers an update of an unknown user with 404', async () => {
        assertError(await admin.put(`${USERS}/ghost-user`, { username: 'ghost-user', email: 'g@example.com' }), 404, -1, 'NOT_FOUND');
      });

      it('refuses renaming onto an existing username with 409 4003', async () => {
        const { name: a } = await newUser('renameA');
        const { name: b } = await newUser('renameB');
        assertError(await admin.put(`${USERS}/${a}`, { username: b }), 409, 4003);
      });

      it('refuses renaming onto another user\'s name in another case with 409; a user may change the case of its own', async () => {
        const { name: a } = await newUser('caseA');
        const { name: b } = await newUser('caseB');
        const res = await admin.put<{ message: string }>(`${USERS}/${a}`, { username: b.toUpperCase() });
        assertError(res, 409, 4003);
        assert.equal(res.body.message, `Username is already in use: ${b} differs only in case`);
        const renamed = await admin.put<UserBody>(`${USERS}/${a}`, { username: a.toUpperCase() });
        assert.equal(renamed.status, 200, renamed.text);
        assert.equal(renamed.body.username, a.toUpperCase());
        assertError(await admin.post(USERS, { username: a, password: PASSWORD }), 409, 4003);
        await loggedIn(a.toUpperCase());
      });

      it('keeps the caller\'s session but ends its other sessions when it changes its own password', async () => {
        const { name, client: here } = await newUser('sessions');
        const elsewhere = await loggedIn(name);
        assert.equal((await elsewhere.get(`${USERS}/current`)).status, 200);

        const res = await here.put(`${USERS}/${name}`, { username: name, password: 'rotated-password', currentPassword: PASSWORD });
        assert.equal(res.status, 200, res.text);
        assert.equal((await here.get(`${USERS}/current`)).status, 200, 'own session survives');
        assertError(await elsewhere.get(`${USERS}/current`), 401, 4008);
      });

      it('ends every session of a user whose permissions a superadmin changes', async () => {
        const { name, client } = await newUser('demoted');
        assert.equal((await client.get(`${USERS}/current`)).status, 200);
        const res = await admin.put(`${USERS}/${name}`, { username: name, permissions: ['user', 'viewers'] });
        assert.equal(res.status, 200, res.text);
        assertError(await client.get(`${USERS}/current`), 401, 4008);
        assert.equal((await admin.get(`${USERS}/current`)).status, 200, 'the admin keeps its own session');
      });

      it('revokes the user\'s tokens when its password changes', async () => {
        const { name, client } = await newUser('tokens');
        const created = await client.post<{ token: string }>('/rest/latest/auth-tokens/create', {});
        assert.equal(created.status, 201, created.text);
        const bearer = new ApiClient(app.url).useBearer(created.body.token);
        assert.equal((await bearer.get(`${USERS}/current`)).status, 200);
        const res = await client.put(`${USERS}/${name}`, { username: name, password: 'rotated-password', currentPassword: PASSWORD });
        assert.equal(res.status, 200, res.text);
        assertError(await bearer.get(`${USERS}/current`), 401, 4008);
      });
    });

    describe('DELETE /users/<username>', () => {
      it('deletes a user for a superadmin and answers 200 with the deleted user', async () => {
        const { name, client } = await newUser('doomed');
        const stored = (await admin.get<UserBody>(`${USERS}/${name}`)).body;
        const res = await admin.delete<UserBody>(`${USERS}/${name}`);
        assert.equal(res.status, 200, res.text);
        assertUserBody(res.body);
        assert.deepEqual(res.body, stored);
        assertError(await admin.get(`${USERS}/${name}`), 404, -1, 'NOT_FOUND');
        assertError(await client.get(`${USERS}/current`), 401, 4008);
        assertError(await admin.delete(`${USERS}/${name}`), 404, -1, 'NOT_FOUND');
      });

      it('refuses a superadmin deleting itself with 403', async () => {
        assertError(await admin.delete(`${USERS}/admin`), 403, 4004);
        assert.equal((await admin.get(`${USERS}/admin`)).status, 200);
      });

      it('refuses a normal user with 403, for others and for itself', async () => {
        const { name: target } = await newUser('target');
        const { name, client } = await newUser('deleter');
        assertError(await client.delete(`${USERS}/${target}`), 403, 4004);
        assertError(await client.delete(`${USERS}/${name}`), 403, 4004);
        assert.equal((await admin.get(`${USERS}/${target}`)).status, 200);
        assert.equal((await admin.get(`${USERS}/${name}`)).status, 200);
      });
    });
  });
}

// Usernames unique ignoring case, on databases that held such pairs before the rule, and between instances.
for (const engine of metadataEngines()) {
  describe(`usernames that differ only in case, made before the rule (${engine})`, function () {
    this.timeout(180_000);
    let config: Config;
    let service: RunningService | undefined;
    const schema = engine === 'postgresql' ? newSchemaName() : undefined;

    before(async () => {
      config = loadConfig({
        PORT: '0', HOST: '127.0.0.1', DATA_DIR: await tempDir(), LOG_LEVEL: 'silent', RATE_LIMIT_ENABLED: 'false',
        ...(schema ? { DATABASE_URL: testDatabaseUrl!, DATABASE_SCHEMA: schema, VALUE_STORE: 'postgres' } : {}),
      });
      // The database as the version before this rule left it.
      const old = schema ? await openPostgres(testDatabaseUrl!, 2, schema) : await openPglite(join(config.dataDir, 'metadata'));
      await migrate(old, (await loadMigrations()).filter((m) => m.version < 11));
      const hash = await hashPassword(PASSWORD);
      for (const name of ['admin', 'ops', 'Ops', 'OPS', 'Émile', 'ÉMILE']) {
        await old.query('insert into users (username, password_hash, permissions) values ($1, $2, $3)', [name, hash, name === 'admin' ? ['superadmin'] : ['user']]);
      }
      await old.close();
    });
    after(async () => {
      await service?.stop();
      if (schema) await dropSchema(schema);
      await removeDir(config.dataDir);
    });

    it('migrates and starts; every user logs in by its exact name; no new user or rename takes a name they hold', async () => {
      const { log, lines } = capturingLogger('warn');
      service = await startService(config, log);
      await flushed();
      const warned = () => lines.find((l) => String(l.msg).includes('differ from another user\'s only in case'))?.usernames;
      // The oldest of each group keeps the name's key (Émile's is given at start-up: not ASCII).
      assert.deepEqual(warned(), ['Ops', 'OPS', 'ÉMILE']);
      const url = service.url;
      const root = await loggedInAt(url, 'admin', PASSWORD);
      for (const name of ['ops', 'Ops', 'OPS', 'Émile', 'ÉMILE']) {
        const c = await loggedInAt(url, name, PASSWORD);
        assert.equal((await c.get<UserBody>(`${USERS}/current`)).body.username, name);
      }
      assertError(await root.post(USERS, { username: 'oPs', password: PASSWORD }), 409, 4003);
      assertError(await root.post(USERS, { username: 'émile', password: PASSWORD }), 409, 4003);
      // With the holder of the key gone, its keyless twins still hold the name.
      assert.equal((await root.delete(`${USERS}/ops`)).status, 200);
      const res = await root.post<{ message: string }>(USERS, { username: 'ops', password: PASSWORD });
      assertError(res, 409, 4003);
      assert.equal(res.body.message, 'Username is already in use: Ops differs only in case');
      await createUser(root, 'fresh', PASSWORD);
      assertError(await root.put(`${USERS}/fresh`, { username: 'OPS' }), 409, 4003);

      // A restart gives the key to the oldest twin left.
      await service.stop();
      lines.length = 0;
      service = await startService(config, log);
      await flushed();
      assert.deepEqual(warned(), ['OPS', 'ÉMILE']);
    });
  });
}

describeOnPostgres('usernames unique ignoring case between two instances (PostgreSQL)', function () {
  this.timeout(180_000);
  const schema = newSchemaName();
  const instances: RunningService[] = [];
  const dirs: string[] = [];

  before(async () => {
    for (let i = 0; i < 2; i++) {
      dirs.push(await tempDir());
      const config = loadConfig({
        PORT: '0', HOST: '127.0.0.1', DATA_DIR: dirs[i]!, LOG_LEVEL: 'silent', RATE_LIMIT_ENABLED: 'false',
        DATABASE_URL: testDatabaseUrl!, DATABASE_SCHEMA: schema, VALUE_STORE: 'postgres', INSTANCE_NAME: `users-${i}`,
      });
      instances.push(await startService(config)); // one after the other: the first makes the admin
    }
  });
  after(async () => {
    for (const s of instances) await s.stop();
    await dropSchema(schema);
    for (const d of dirs) await removeDir(d);
  });

  it('two creates racing for one name in two cases end in one 201 and one 409, every time', async () => {
    const [a, b] = await Promise.all(instances.map((s) => loggedInAt(s.url, 'admin', 'admin')));
    for (let round = 0; round < 10; round++) {
      const [ra, rb] = await Promise.all([
        a!.post(USERS, { username: `race-${round}`, password: PASSWORD }),
        b!.post(USERS, { username: `RACE-${round}`, password: PASSWORD }),
      ]);
      assert.deepEqual([ra.status, rb.status].sort(), [201, 409], `round ${round}: ${ra.text} ${rb.text}`);
      const loser = ra.status === 409 ? ra : rb;
      assertError(loser, 409, 4003, 'ALREADY_EXISTS');
    }
    const listed = await a!.get<{ items: UserBody[] }>(`${USERS}?match(username,race-*)&limit(100)`);
    assert.equal(listed.body.items.length, 10);
  });
});
