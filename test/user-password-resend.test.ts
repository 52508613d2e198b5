// A PUT /users/<u> that sends the stored password back is no password change: Mango's clients send the
// user object they hold (node-mango-client keeps the plaintext it created the user with; Mango's own
// answers carry "password": ""), and such a save must not end the user's sessions and tokens. A real
// change still ends them.
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError } from './helpers/assertions.js';
import { ApiClient, createUser, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

interface UserBody {
  username: string;
  email: string;
  name: string;
  lastPasswordChange: number;
  [field: string]: unknown;
}

const USERS = '/rest/latest/users';
const PASSWORD = 'resend-password-1';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`a re-sent password (${engine})`, function () {
    this.timeout(30_000);
    let app: TestApp;
    let admin: ApiClient;
    let seq = 0;

    /** A user with a session and a JWT, both checked to work. */
    async function user(prefix: string): Promise<{ name: string; session: ApiClient; bearer: ApiClient; stored: UserBody }> {
      const name = `${prefix}${++seq}`;
      await createUser(admin, name, PASSWORD, { name: 'Someone' });
      const session = await loggedIn(app.url, name, PASSWORD);
      const token = await session.post<{ token: string }>('/rest/latest/auth-tokens/create', {});
      assert.equal(token.status, 201, token.text);
      const bearer = new ApiClient(app.url).useBearer(token.body.token);
      assert.equal((await bearer.get(`${USERS}/current`)).status, 200);
      return { name, session, bearer, stored: (await admin.get<UserBody>(`${USERS}/${name}`)).body };
    }

    /** The session and the token still work, and the password was not stamped as changed. */
    async function stillValid(u: Awaited<ReturnType<typeof user>>): Promise<void> {
      assert.equal((await u.session.get(`${USERS}/current`)).status, 200, 'the session lives');
      assert.equal((await u.bearer.get(`${USERS}/current`)).status, 200, 'the token lives');
      const now = (await admin.get<UserBody>(`${USERS}/${u.name}`)).body;
      assert.equal(now.lastPasswordChange, u.stored.lastPasswordChange, 'lastPasswordChange unchanged');
      await loggedIn(app.url, u.name, PASSWORD);
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
    });
    after(() => app.stop());

    it("an admin's PUT of node-mango-client's user object (the same plaintext password) keeps sessions and tokens", async () => {
      const u = await user('rs-plain-');
      // node-mango-client: the object it created the user from, updated with our answer, password kept.
      const object = { ...u.stored, password: PASSWORD, name: 'Renamed' };
      const res = await admin.put<UserBody>(`${USERS}/${u.name}`, object);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.name, 'Renamed', 'the other fields are saved');
      await stillValid(u);
    });

    it('the stored hash sent back is the stored password too', async () => {
      const u = await user('rs-hash-');
      const record = await app.service.services.users.findByUsername(u.name);
      assert.match(record!.passwordHash, /^\$argon2id\$/);
      const res = await admin.put(`${USERS}/${u.name}`, { ...u.stored, password: record!.passwordHash });
      assert.equal(res.status, 200, res.text);
      await stillValid(u);
      assert.equal((await app.service.services.users.findByUsername(u.name))!.passwordHash, record!.passwordHash, 'not hashed again');
    });

    it('a blank password ("" as in Mango\'s answers, or null) is kept', async () => {
      const u = await user('rs-blank-');
      for (const password of ['', null]) {
        const res = await admin.put(`${USERS}/${u.name}`, { ...u.stored, password });
        assert.equal(res.status, 200, res.text);
      }
      await stillValid(u);
    });

    it('the user re-sending its own password needs no currentPassword and keeps its other sessions', async () => {
      const u = await user('rs-self-');
      const other = await loggedIn(app.url, u.name, PASSWORD);
      const res = await u.session.put(`${USERS}/${u.name}`, { ...u.stored, password: PASSWORD });
      assert.equal(res.status, 200, res.text);
      const patched = await u.session.patch(`${USERS}/${u.name}`, { password: PASSWORD, locale: 'fr' });
      assert.equal(patched.status, 200, patched.text);
      assert.equal((await other.get(`${USERS}/current`)).status, 200);
      await stillValid(u);
    });

    it('a real change by an admin ends the sessions and tokens and stamps lastPasswordChange', async () => {
      const u = await user('rs-change-');
      await new Promise((r) => setTimeout(r, 5)); // lastPasswordChange is a timestamp
      const res = await admin.put<UserBody>(`${USERS}/${u.name}`, { ...u.stored, password: 'another-password-2' });
      assert.equal(res.status, 200, res.text);
      assertError(await u.session.get(`${USERS}/current`), 401, 4008);
      assertError(await u.bearer.get(`${USERS}/current`), 401, 4008);
      assert.ok(res.body.lastPasswordChange > u.stored.lastPasswordChange);
      await loggedIn(app.url, u.name, 'another-password-2');
      const stale = new ApiClient(app.url);
      stale.seedCsrf();
      assertError(await stale.post('/rest/latest/login', { username: u.name, password: PASSWORD }), 401, 4011);
    });

    it('a real change of one\'s own still needs currentPassword (400 4012), and nothing changes without it', async () => {
      const u = await user('rs-self-change-');
      assertError(await u.session.put(`${USERS}/${u.name}`, { ...u.stored, password: 'another-password-3' }), 400, 4012);
      await stillValid(u);
    });
  });
}
