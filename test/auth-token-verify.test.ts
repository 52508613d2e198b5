// GET /auth-tokens/verify?token=<jwt> (Mango's): anyone may call it; a valid token answers its
// header and claims, and every check of Bearer authentication (signature, expiry, revocation, key
// reset, a deleted or disabled user) refuses it with a 400 that says which.
import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { assertError } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const API = '/rest/latest';
const VERIFY = `${API}/auth-tokens/verify`;
const PASSWORD = 'correct-horse-1';

interface Verified {
  header: Record<string, unknown>;
  body: Record<string, unknown>;
}

/** Replaces one character in the middle of a token segment (0 header, 1 payload, 2 signature). */
function flipChar(token: string, segmentIndex: number): string {
  const segments = token.split('.');
  const segment = segments[segmentIndex]!;
  const i = Math.floor(segment.length / 2);
  segments[segmentIndex] = segment.slice(0, i) + (segment[i] === 'A' ? 'B' : 'A') + segment.slice(i + 1);
  return segments.join('.');
}

const verifyUrl = (token: string) => `${VERIFY}?token=${encodeURIComponent(token)}`;

/** 400 (4005) with exactly this message. */
function assertRefused(res: Awaited<ReturnType<ApiClient['get']>>, message: string): void {
  assert.equal(assertError(res, 400, 4005, 'BAD_REQUEST').message, message);
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`GET /auth-tokens/verify (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    let seq = 0;
    const anonymous = () => new ApiClient(app.url);

    /** A new user and a token of theirs (a session-made one, as node-mango-client makes them). */
    async function userWithToken(): Promise<{ username: string; client: ApiClient; token: string }> {
      const username = `verify${++seq}`;
      await createUser(admin, username, PASSWORD);
      const client = await loggedIn(app.url, username, PASSWORD);
      const res = await client.post<{ token: string }>(`${API}/auth-tokens/create`, {});
      assert.equal(res.status, 201, res.text);
      return { username, client, token: res.body.token };
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
    });
    after(() => app.stop());

    it('answers a valid token\'s header and claims to anyone, as Mango\'s HeaderClaimsModel', async () => {
      const { username, token } = await userWithToken();
      const res = await anonymous().get<Verified>(verifyUrl(token));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['body', 'header']);
      assert.deepEqual(res.body.header, { ...decodeProtectedHeader(token) });
      assert.deepEqual(res.body.body, { ...decodeJwt(token) });
      assert.equal(res.body.header.alg, 'ES512');
      assert.equal(res.body.header.kid, (await anonymous().get<{ kid: string }>(`${API}/auth-tokens/public-key`)).body.kid);
      assert.equal(res.body.body.sub, username);
      assert.equal(res.body.body.typ, 'auth');
      assert.equal(typeof res.body.body.exp, 'number');
      // A session, a token (even the one asked about) and a superadmin may ask too.
      const { client } = await userWithToken();
      assert.equal((await client.get(verifyUrl(token))).status, 200);
      assert.equal((await new ApiClient(app.url).useBearer(token).get(verifyUrl(token))).status, 200);
      assert.equal((await admin.get(verifyUrl(token))).status, 200);
    });

    it('a malformed or tampered token is a 400 "Invalid token"', async () => {
      const { token } = await userWithToken();
      for (const bad of ['abc', 'a.b.c', `${token}x`, flipChar(token, 0), flipChar(token, 1), flipChar(token, 2), 'x'.repeat(5000)]) {
        assertRefused(await anonymous().get(verifyUrl(bad)), 'Invalid token');
      }
    });

    it('an expired token is a 400 "Token expired"', async () => {
      const { username } = await userWithToken();
      const user = (await app.service.services.users.findByUsername(username))!;
      const expired = await app.service.services.tokens.create(user.username, user.id, user.tokenVersion, Date.now() - 1000);
      assertRefused(await anonymous().get(verifyUrl(expired)), 'Token expired');
    });

    it('a revoked token (the user\'s revoke, or the user deleted) is a 400 "Token revoked"', async () => {
      const revoked = await userWithToken();
      assert.equal((await anonymous().get(verifyUrl(revoked.token))).status, 200);
      assert.equal((await revoked.client.post(`${API}/auth-tokens/revoke`)).status, 204);
      assertRefused(await anonymous().get(verifyUrl(revoked.token)), 'Token revoked');
      const deleted = await userWithToken();
      assert.equal((await admin.delete(`${API}/users/${deleted.username}`)).status, 200);
      assertRefused(await anonymous().get(verifyUrl(deleted.token)), 'Token revoked');
    });

    it('a disabled user\'s token is a 400 saying so', async () => {
      const { username, token } = await userWithToken();
      const user = (await admin.get<Record<string, unknown>>(`${API}/users/${username}`)).body;
      const res = await admin.put(`${API}/users/${username}`, { ...user, disabled: true });
      assert.equal(res.status, 200, res.text);
      assertRefused(await anonymous().get(verifyUrl(token)), 'User is disabled');
    });

    it('after a key reset every earlier token is a 400 "Invalid token"', async () => {
      const { token } = await userWithToken();
      assert.equal((await admin.post(`${API}/auth-tokens/reset-keys`)).status, 204);
      assertRefused(await anonymous().get(verifyUrl(token)), 'Invalid token');
    });

    it('no token, an empty one or two: 400', async () => {
      assertError(await anonymous().get(VERIFY), 400, 4005);
      assertError(await anonymous().get(`${VERIFY}?token=`), 400, 4005);
      assertError(await anonymous().get(`${VERIFY}?token=a&token=b`), 400, 4005);
    });

    it('is public for GET only: other methods are refused without credentials', async () => {
      assertError(await anonymous().post(VERIFY, {}), 401, 4008);
    });
  });
}

describe('GET /auth-tokens/verify: anonymous callers are rate limited', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp('pglite', { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_ANON_BURST: '4', RATE_LIMIT_ANON_PER_SECOND: '0.01' });
  });
  after(() => app.stop());

  it('per IP, like any anonymous request: 429 once the budget is spent, before a signature is checked', async () => {
    const { users, tokens } = app.service.services;
    const admin = (await users.findByUsername('admin'))!;
    // Well formed, our key's id, a wrong signature: each costs a signature check. A budget of 4: the
    // request that takes the last one is refused before its check, as a Bearer header would be.
    const forged = flipChar(await tokens.create(admin.username, admin.id, admin.tokenVersion, Date.now() + 60_000), 2);
    const client = new ApiClient(app.url);
    const start = tokens.signatureVerifications;
    for (let i = 0; i < 3; i++) assertRefused(await client.get(verifyUrl(forged)), 'Invalid token');
    assert.equal(tokens.signatureVerifications, start + 3);
    assertError(await client.get(verifyUrl(forged)), 429, 4006);
    assert.equal(tokens.signatureVerifications, start + 3, 'no signature checked for a client over its budget');
  });
});
