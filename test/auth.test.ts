// Authentication end to end against the real service: login and the double-submit CSRF rule,
// sessions and logout, JWTs (create, verify, revoke, key reset), Basic, disabled users, password
// expiry, and credential changes that end sessions and tokens.
import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser, type Response } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const API = '/rest/latest';
const PASSWORD = 'correct-horse-1';

interface ErrorBody {
  serviceStatusCode: number;
  serviceStatusName: string;
  message: string;
  localizedMessage: string;
  result?: { messages: { property: string; level: string; message: string }[] };
}

interface TokenBody {
  token: string;
  expiry: number;
}

function assertError(res: Response, status: number, code: number, message?: string | RegExp): ErrorBody {
  const body = res.body as ErrorBody;
  assert.equal(res.status, status, res.text);
  assert.equal(body.serviceStatusCode, code, res.text);
  if (typeof message === 'string') assert.equal(body.message, message);
  else if (message) assert.match(body.message, message);
  return body;
}

/** The Set-Cookie header for one cookie: its value and its lower-cased attributes. */
function setCookie(res: Response, name: string): { value: string; attrs: string[] } | undefined {
  const raw = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (raw === undefined) return undefined;
  const [pair, ...attrs] = raw.split(';').map((s) => s.trim());
  return { value: pair!.slice(name.length + 1), attrs: attrs.map((a) => a.toLowerCase()) };
}

/** A client that presents only the given session cookie (no XSRF-TOKEN cookie). */
function withSessionCookie(url: string, session: string): ApiClient {
  const c = new ApiClient(url);
  c.cookies.set('DDS_SESSION', session);
  return c;
}

function bearer(url: string, token: string): ApiClient {
  return new ApiClient(url).useBearer(token);
}

function basic(url: string, username: string, password: string): ApiClient {
  return new ApiClient(url).useBasic(username, password);
}

/** Re-encodes the payload of a signed token after changing its claims (the signature no longer fits). */
function withClaims(token: string, change: (claims: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  change(claims);
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

/** Replaces one character in the middle of a token segment (0 header, 1 payload, 2 signature). */
function flipChar(token: string, segmentIndex: number): string {
  const segments = token.split('.');
  const segment = segments[segmentIndex]!;
  const i = Math.floor(segment.length / 2);
  segments[segmentIndex] = segment.slice(0, i) + (segment[i] === 'A' ? 'B' : 'A') + segment.slice(i + 1);
  return segments.join('.');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let userCounter = 0;
function uniqueName(prefix: string): string {
  userCounter += 1;
  return `${prefix}${userCounter}`;
}

/** Creates a user through the admin client and logs it in with its own client. */
async function newUser(app: TestApp, admin: ApiClient, prefix: string, extra: Record<string, unknown> = {}) {
  const username = uniqueName(prefix);
  await createUser(admin, username, PASSWORD, extra);
  const client = new ApiClient(app.url);
  await client.login(username, PASSWORD);
  return { username, client };
}

async function createToken(client: ApiClient, body: Record<string, unknown> = {}): Promise<string> {
  const res = await client.post<TokenBody>(`${API}/auth-tokens/create`, body);
  assert.equal(res.status, 201, res.text);
  return res.body.token;
}

async function currentUsername(client: ApiClient): Promise<string> {
  const res = await client.get<{ username: string }>(`${API}/users/current`);
  assert.equal(res.status, 200, res.text);
  return res.body.username;
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`auth (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    before(async () => {
      app = await startTestApp(engine, { JWT_MAX_EXPIRY_DAYS: '2' });
      admin = new ApiClient(app.url);
      await admin.login('admin', 'admin');
    });
    after(() => app.stop());

    describe('login', () => {
      it('answers 200 with the user object and never its password', async () => {
        const c = new ApiClient(app.url);
        const res = await c.login('admin', 'admin');
        const body = res.body as Record<string, unknown>;
        assert.equal(body.username, 'admin');
        assert.deepEqual(body.permissions, ['superadmin']);
        assert.equal(typeof body.email, 'string');
        for (const secret of ['password', 'passwordHash', 'tokenVersion']) assert.ok(!(secret in body), `${secret} must not be returned`);
        assert.doesNotMatch(res.text, /argon2/);
      });

      it('sets the session cookie DDS_SESSION as HttpOnly, SameSite=Lax, Path=/', async () => {
        const c = new ApiClient(app.url);
        const res = await c.login('admin', 'admin');
        const session = setCookie(res, 'DDS_SESSION');
        assert.ok(session, 'DDS_SESSION is set');
        assert.ok(session.value.length >= 20);
        assert.ok(session.attrs.includes('httponly'));
        assert.ok(session.attrs.includes('samesite=lax'));
        assert.ok(session.attrs.includes('path=/'));
      });

      it('sets a new XSRF-TOKEN cookie, readable by scripts, that differs from the client-generated one', async () => {
        const c = new ApiClient(app.url);
        const seeded = c.seedCsrf();
        const res = await c.post(`${API}/login`, { username: 'admin', password: 'admin' });
        assert.equal(res.status, 200, res.text);
        const csrf = setCookie(res, 'XSRF-TOKEN');
        assert.ok(csrf, 'XSRF-TOKEN is set');
        assert.notEqual(csrf.value, '');
        assert.notEqual(csrf.value, seeded);
        assert.ok(!csrf.attrs.includes('httponly'));
        assert.ok(csrf.attrs.includes('path=/'));
        // The new token is the one that works from now on.
        const created = await c.post(`${API}/auth-tokens/create`, {});
        assert.equal(created.status, 201, created.text);
      });

      it('refuses a login without the XSRF-TOKEN cookie with 403 4004 "Invalid CSRF token"', async () => {
        const c = new ApiClient(app.url);
        const res = await c.post(`${API}/login`, { username: 'admin', password: 'admin' }, { headers: { 'x-xsrf-token': 'abcdefgh' } });
        assertError(res, 403, 4004, 'Invalid CSRF token');
        assert.equal(setCookie(res, 'DDS_SESSION'), undefined);
      });

      it('refuses a login without the X-XSRF-TOKEN header with 403 4004', async () => {
        const c = new ApiClient(app.url);
        c.seedCsrf();
        const res = await c.post(`${API}/login`, { username: 'admin', password: 'admin' }, { csrf: false });
        assertError(res, 403, 4004, 'Invalid CSRF token');
        assert.equal(setCookie(res, 'DDS_SESSION'), undefined);
      });

      it('refuses a login whose X-XSRF-TOKEN header differs from the cookie with 403 4004', async () => {
        const c = new ApiClient(app.url);
        const token = c.seedCsrf();
        const res = await c.post(`${API}/login`, { username: 'admin', password: 'admin' }, { headers: { 'x-xsrf-token': `${token}x` } });
        assertError(res, 403, 4004, 'Invalid CSRF token');
        assert.equal(setCookie(res, 'DDS_SESSION'), undefined);
      });

      it('answers a wrong password and an unknown user alike: 401 4011 with one message', async () => {
        const c = new ApiClient(app.url);
        c.seedCsrf();
        const wrong = await c.post(`${API}/login`, { username: 'admin', password: 'not-the-password' });
        const unknown = await c.post(`${API}/login`, { username: 'nobody-at-all', password: 'not-the-password' });
        const a = assertError(wrong, 401, 4011);
        const b = assertError(unknown, 401, 4011);
        assert.equal(a.serviceStatusName, 'BAD_CREDENTIALS');
        assert.equal(a.message, b.message);
        assert.equal(setCookie(wrong, 'DDS_SESSION'), undefined);
      });

      it('refuses missing username or password with 422 4002 "is required" on the property', async () => {
        const c = new ApiClient(app.url);
        c.seedCsrf();
        const noPassword = assertError(await c.post(`${API}/login`, { username: 'admin' }), 422, 4002);
        assert.deepEqual(
          noPassword.result?.messages.map((m) => [m.property, m.message]),
          [['password', 'is required']],
        );
        const empty = assertError(await c.post(`${API}/login`, {}), 422, 4002);
        const properties = empty.result?.messages.filter((m) => m.message === 'is required').map((m) => m.property).sort();
        assert.deepEqual(properties, ['password', 'username']);
      });

      it('rotates the session: the cookie held before login stops working', async () => {
        const c = new ApiClient(app.url);
        await c.login('admin', 'admin');
        const first = c.cookies.get('DDS_SESSION')!;
        await c.login('admin', 'admin');
        const second = c.cookies.get('DDS_SESSION')!;
        assert.notEqual(second, first);
        assert.equal(await currentUsername(c), 'admin');
        assertError(await withSessionCookie(app.url, first).get(`${API}/users/current`), 401, 4008);
      });

      it('ignores a forged session cookie sent with the login and issues a fresh one', async () => {
        const c = new ApiClient(app.url);
        const forged = 'attacker-chosen-session-id-0123456789';
        c.cookies.set('DDS_SESSION', forged);
        await c.login('admin', 'admin');
        assert.notEqual(c.cookies.get('DDS_SESSION'), forged);
        assertError(await withSessionCookie(app.url, forged).get(`${API}/users/current`), 401, 4008);
      });
    });

    describe('CSRF on session-authenticated requests', () => {
      let user: { username: string; client: ApiClient };
      before(async () => {
        user = await newUser(app, admin, 'csrf');
      });

      const writes = (username: string) =>
        [
          ['POST', `${API}/auth-tokens/create`, {}],
          ['PUT', `${API}/users/${username}`, { username, name: 'changed' }],
          ['DELETE', `${API}/users/${username}`, undefined],
        ] as const;

      it('refuses POST, PUT and DELETE without X-XSRF-TOKEN with 403 4004', async () => {
        for (const [method, path, body] of writes(user.username)) {
          const res = await user.client.request(method, path, { body, csrf: false });
          assertError(res, 403, 4004, 'Invalid CSRF token');
        }
        const me = await user.client.get<{ name: string }>(`${API}/users/current`);
        assert.notEqual(me.body.name, 'changed');
      });

      it('refuses POST, PUT and DELETE whose X-XSRF-TOKEN differs from the cookie with 403 4004', async () => {
        for (const [method, path, body] of writes(user.username)) {
          const res = await user.client.request(method, path, { body, headers: { 'x-xsrf-token': 'not-the-cookie-value' } });
          assertError(res, 403, 4004, 'Invalid CSRF token');
        }
      });

      it('refuses a write that sends the header but no XSRF-TOKEN cookie', async () => {
        const c = withSessionCookie(app.url, user.client.cookies.get('DDS_SESSION')!);
        const res = await c.post(`${API}/auth-tokens/create`, {}, { headers: { 'x-xsrf-token': user.client.cookies.get('XSRF-TOKEN')! } });
        assertError(res, 403, 4004, 'Invalid CSRF token');
      });

      it('accepts a write whose header matches the cookie', async () => {
        const res = await user.client.put<{ name: string }>(`${API}/users/${user.username}`, { username: user.username, name: 'Csrf User' });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.name, 'Csrf User');
      });

      it('needs no CSRF token on GET', async () => {
        const c = withSessionCookie(app.url, user.client.cookies.get('DDS_SESSION')!);
        assert.equal(await currentUsername(c), user.username);
      });

      it('needs no CSRF token with an Authorization header, and creates no session', async () => {
        const token = await createToken(user.client);
        // Even with a session cookie in the jar: the Authorization header decides.
        const c = withSessionCookie(app.url, user.client.cookies.get('DDS_SESSION')!).useBearer(token);
        const res = await c.put<{ email: string }>(`${API}/users/${user.username}`, { username: user.username, email: 'bearer@example.com' });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.email, 'bearer@example.com');
        const anon = bearer(app.url, token);
        const res2 = await anon.put(`${API}/users/${user.username}`, { username: user.username, email: 'bearer2@example.com' });
        assert.equal(res2.status, 200, res2.text);
        assert.deepEqual(res2.headers.getSetCookie(), []);
      });
    });

    describe('logout and anonymous access', () => {
      it('logs out with 204, clears the cookies, and the old session cookie then gets 401 4008', async () => {
        const c = new ApiClient(app.url);
        await c.login('admin', 'admin');
        const old = c.cookies.get('DDS_SESSION')!;
        const res = await c.post(`${API}/logout`);
        assert.equal(res.status, 204, res.text);
        const cleared = setCookie(res, 'DDS_SESSION');
        assert.ok(cleared, 'DDS_SESSION is cleared');
        assert.equal(cleared.value, '');
        assert.ok(cleared.attrs.some((a) => a.startsWith('expires=thu, 01 jan 1970')));
        assert.equal(setCookie(res, 'XSRF-TOKEN')?.value, '');
        assertError(await withSessionCookie(app.url, old).get(`${API}/users/current`), 401, 4008);
      });

      it('refuses a logout without the CSRF header and keeps the session', async () => {
        const c = new ApiClient(app.url);
        await c.login('admin', 'admin');
        assertError(await c.post(`${API}/logout`, undefined, { csrf: false }), 403, 4004, 'Invalid CSRF token');
        assert.equal(await currentUsername(c), 'admin');
      });

      it('answers a request without credentials with 401 4008 "Authentication required"', async () => {
        const body = assertError(await new ApiClient(app.url).get(`${API}/users/current`), 401, 4008, 'Authentication required');
        assert.equal(body.serviceStatusName, 'GENERIC_AUTHENTICATION_FAILED');
        assert.equal(body.localizedMessage, 'Authentication required');
      });

      it('answers an unknown API path with 401 when anonymous, 404 when authenticated', async () => {
        assertError(await new ApiClient(app.url).get(`${API}/no-such-thing`), 401, 4008, 'Authentication required');
        assertError(await new ApiClient(app.url).post(`${API}/no-such-thing`, {}), 401, 4008);
        assertError(await admin.get(`${API}/no-such-thing`), 404, -1);
      });

      it('refuses anonymous callers on letter-case variants of protected paths', async () => {
        for (const path of ['/REST/LATEST/users/current', '/Rest/Latest/users', '/rest/latest/USERS/admin']) {
          assertError(await new ApiClient(app.url).get(path), 401, 4008);
        }
      });

      it('serves GET /health and GET /auth-tokens/public-key anonymously', async () => {
        const anon = new ApiClient(app.url);
        const health = await anon.get<{ status: string }>('/health');
        assert.equal(health.status, 200, health.text);
        assert.equal(health.body.status, 'ok');
        const key = await anon.get<JWK>(`${API}/auth-tokens/public-key`);
        assert.equal(key.status, 200, key.text);
        assert.equal(key.body.kty, 'EC');
      });

      it('refuses anonymous token creation with 401 4008', async () => {
        const anon = new ApiClient(app.url);
        anon.seedCsrf();
        assertError(await anon.post(`${API}/auth-tokens/create`, {}), 401, 4008);
      });

      it('refuses Basic credentials while Basic authentication is disabled (the default)', async () => {
        const res = await basic(app.url, 'admin', 'admin').get(`${API}/users/current`);
        assertError(res, 401, 4008, 'Basic authentication is disabled');
      });
    });

    describe('JWT', () => {
      let user: { username: string; client: ApiClient };
      before(async () => {
        user = await newUser(app, admin, 'jwt');
      });

      it('creates a token through a session: 201 with token and expiry, an ES512 JWT of the caller', async () => {
        const res = await user.client.post<TokenBody>(`${API}/auth-tokens/create`, {});
        assert.equal(res.status, 201, res.text);
        assert.equal(typeof res.body.token, 'string');
        assert.equal(typeof res.body.expiry, 'number');
        const header = decodeProtectedHeader(res.body.token);
        assert.equal(header.alg, 'ES512');
        assert.equal(typeof header.kid, 'string');
        const claims = decodeJwt(res.body.token);
        assert.equal(claims.sub, user.username);
        assert.equal(claims.typ, 'auth');
        assert.equal(typeof claims.v, 'number');
        assert.equal(typeof claims.uid, 'number');
        assert.equal(claims.exp! * 1000, res.body.expiry);
      });

      it('defaults the expiry to 5 minutes from now', async () => {
        const before = Date.now();
        const res = await user.client.post<TokenBody>(`${API}/auth-tokens/create`, {});
        const after = Date.now();
        assert.equal(res.status, 201, res.text);
        assert.ok(res.body.expiry >= before + 5 * 60_000 - 1000, `expiry ${res.body.expiry}`);
        assert.ok(res.body.expiry <= after + 5 * 60_000, `expiry ${res.body.expiry}`);
      });

      it('accepts an explicit expiry as ISO 8601 or epoch milliseconds', async () => {
        const inOneHour = Date.now() + 3_600_000;
        const iso = await user.client.post<TokenBody>(`${API}/auth-tokens/create`, { expiry: new Date(inOneHour).toISOString() });
        assert.equal(iso.status, 201, iso.text);
        assert.equal(iso.body.expiry, Math.floor(inOneHour / 1000) * 1000);
        const ms = await user.client.post<TokenBody>(`${API}/auth-tokens/create`, { expiry: inOneHour });
        assert.equal(ms.status, 201, ms.text);
        assert.equal(ms.body.expiry, Math.floor(inOneHour / 1000) * 1000);
      });

      it('refuses an expiry in the past with 422 on expiry', async () => {
        for (const expiry of [Date.now() - 60_000, new Date(Date.now() - 60_000).toISOString()]) {
          const body = assertError(await user.client.post(`${API}/auth-tokens/create`, { expiry }), 422, 4002);
          assert.deepEqual(body.result?.messages.map((m) => m.property), ['expiry']);
        }
      });

      it('refuses an expiry beyond JWT_MAX_EXPIRY_DAYS with 422 on expiry, and accepts one within', async () => {
        const day = 86_400_000;
        const body = assertError(await user.client.post(`${API}/auth-tokens/create`, { expiry: Date.now() + 3 * day }), 422, 4002);
        assert.deepEqual(body.result?.messages.map((m) => m.property), ['expiry']);
        const ok = await user.client.post(`${API}/auth-tokens/create`, { expiry: Date.now() + day });
        assert.equal(ok.status, 201, ok.text);
      });

      it('refuses an unparsable expiry with 422 on expiry', async () => {
        const body = assertError(await user.client.post(`${API}/auth-tokens/create`, { expiry: 'tomorrow' }), 422, 4002);
        assert.deepEqual(body.result?.messages.map((m) => m.property), ['expiry']);
      });

      it('authenticates a Bearer token as its user', async () => {
        const token = await createToken(user.client);
        assert.equal(await currentUsername(bearer(app.url, token)), user.username);
      });

      it('refuses to let a token create tokens (403)', async () => {
        const token = await createToken(user.client);
        assertError(await bearer(app.url, token).post(`${API}/auth-tokens/create`, {}), 403, 4004);
      });

      it('refuses a non-admin creating a token for another user (403)', async () => {
        assertError(await user.client.post(`${API}/auth-tokens/create`, { username: 'admin' }), 403, 4004);
      });

      it('lets a superadmin create a token for another user', async () => {
        const token = await createToken(admin, { username: user.username });
        assert.equal(decodeJwt(token).sub, user.username);
        assert.equal(await currentUsername(bearer(app.url, token)), user.username);
      });

      it('refuses a superadmin creating a token for an unknown user with 422 on username', async () => {
        const body = assertError(await admin.post(`${API}/auth-tokens/create`, { username: 'no-such-user' }), 422, 4002);
        assert.deepEqual(body.result?.messages.map((m) => m.property), ['username']);
      });

      it('refuses a token whose payload was altered with 401 4008', async () => {
        const token = await createToken(user.client);
        assertError(await bearer(app.url, flipChar(token, 1)).get(`${API}/users/current`), 401, 4008);
        const escalated = withClaims(token, (claims) => {
          claims.sub = 'admin';
        });
        assertError(await bearer(app.url, escalated).get(`${API}/users/current`), 401, 4008);
        const extended = withClaims(token, (claims) => {
          claims.exp = Math.floor(Date.now() / 1000) + 86_400;
        });
        assertError(await bearer(app.url, extended).get(`${API}/users/current`), 401, 4008);
      });

      it('refuses a token whose signature was altered with 401 4008', async () => {
        const token = await createToken(user.client);
        assertError(await bearer(app.url, flipChar(token, 2)).get(`${API}/users/current`), 401, 4008);
        const [header, payload] = token.split('.');
        assertError(await bearer(app.url, `${header}.${payload}.`).get(`${API}/users/current`), 401, 4008);
      });

      it('refuses an unsigned token (alg none) with 401 4008', async () => {
        const token = await createToken(user.client);
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
        const payload = token.split('.')[1];
        assertError(await bearer(app.url, `${header}.${payload}.`).get(`${API}/users/current`), 401, 4008);
      });

      it('refuses tokens of the wrong size, shape, algorithm, key, signature length or claims, and expired ones, with 401 4008 before verifying a signature', async () => {
        const token = await createToken(user.client);
        const [header, payload, signature] = token.split('.') as [string, string, string];
        const { kid } = decodeProtectedHeader(token);
        const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
        const claims = decodeJwt(token);
        const withHeader = (h: Record<string, unknown>) => `${part(h)}.${payload}.${signature}`;
        const withPayload = (change: Record<string, unknown>) => `${header}.${part({ ...claims, ...change })}.${signature}`;
        const refused: Record<string, string> = {
          'too big': `${header}.${part({ ...claims, pad: 'x'.repeat(4096) })}.${signature}`,
          'two parts': `${header}.${payload}`,
          'four parts': `${token}.${signature}`,
          'not base64url': `${header}.${payload}.${signature.slice(0, -1)}+`,
          'header not JSON': `${Buffer.from('{alg').toString('base64url')}.${payload}.${signature}`,
          'header an array': `${part(['ES512'])}.${payload}.${signature}`,
          'payload an array': `${header}.${part([1])}.${signature}`,
          'alg HS512': withHeader({ alg: 'HS512', kid }),
          'alg ES256': withHeader({ alg: 'ES256', kid }),
          'alg none': withHeader({ alg: 'none', kid }),
          'no kid': withHeader({ alg: 'ES512' }),
          'another kid': withHeader({ alg: 'ES512', kid: 'not-our-key' }),
          'signature 131 bytes': `${header}.${payload}.${Buffer.from(signature, 'base64url').subarray(1).toString('base64url')}`,
          'signature 133 bytes': `${header}.${payload}.${Buffer.concat([Buffer.from(signature, 'base64url'), Buffer.from([0])]).toString('base64url')}`,
          'typ refresh': withPayload({ typ: 'refresh' }),
          'sub a number': withPayload({ sub: 1 }),
          'uid a string': withPayload({ uid: String(claims.uid) }),
          'v missing': withPayload({ v: undefined }),
          'exp a string': withPayload({ exp: String(claims.exp) }),
          expired: withPayload({ exp: Math.floor(Date.now() / 1000) - 60 }),
        };
        const before = app.service.services.tokens.signatureVerifications;
        for (const [what, bad] of Object.entries(refused)) {
          const res = await bearer(app.url, bad).get(`${API}/users/current`);
          assert.equal(res.status, 401, `${what}: ${res.text}`);
          assert.equal((res.body as ErrorBody).serviceStatusCode, 4008, what);
        }
        assertError(await bearer(app.url, withPayload({ exp: Math.floor(Date.now() / 1000) - 60 })).get(`${API}/users/current`), 401, 4008, 'Token expired');
        assert.equal(app.service.services.tokens.signatureVerifications, before, 'no signature was verified');
      });

      it('verifies a token\'s signature once, then answers it from memory', async () => {
        const token = await createToken(user.client);
        const before = app.service.services.tokens.signatureVerifications;
        for (let i = 0; i < 3; i++) assert.equal(await currentUsername(bearer(app.url, token)), user.username);
        assert.equal(app.service.services.tokens.signatureVerifications, before + 1);
      });

      it('refuses a malformed Bearer value with 401 4008', async () => {
        assertError(await bearer(app.url, 'not-a-jwt').get(`${API}/users/current`), 401, 4008);
      });

      it('refuses an expired token with 401 4008', async () => {
        const res = await user.client.post<TokenBody>(`${API}/auth-tokens/create`, { expiry: Date.now() + 1500 });
        assert.equal(res.status, 201, res.text);
        const c = bearer(app.url, res.body.token);
        assert.equal(await currentUsername(c), user.username);
        await sleep(Math.max(0, res.body.expiry - Date.now()) + 100);
        assertError(await c.get(`${API}/users/current`), 401, 4008);
      });

      it('revokes the caller\'s own tokens with POST /auth-tokens/revoke; new tokens work', async () => {
        const u = await newUser(app, admin, 'revoke');
        const old1 = await createToken(u.client);
        const old2 = await createToken(u.client, { expiry: Date.now() + 3_600_000 });
        const res = await u.client.post(`${API}/auth-tokens/revoke`);
        assert.equal(res.status, 204, res.text);
        for (const t of [old1, old2]) assertError(await bearer(app.url, t).get(`${API}/users/current`), 401, 4008);
        const fresh = await createToken(u.client);
        assert.equal(await currentUsername(bearer(app.url, fresh)), u.username);
        // The session that revoked is not a token: it keeps working.
        assert.equal(await currentUsername(u.client), u.username);
      });

      it('lets a token revoke itself', async () => {
        const u = await newUser(app, admin, 'selfrevoke');
        const token = await createToken(u.client);
        assert.equal((await bearer(app.url, token).post(`${API}/auth-tokens/revoke`)).status, 204);
        assertError(await bearer(app.url, token).get(`${API}/users/current`), 401, 4008);
      });

      it('refuses POST /auth-tokens/revoke/<username> by a non-superadmin (403), and the target keeps its tokens', async () => {
        const other = await newUser(app, admin, 'victim');
        const token = await createToken(other.client);
        assertError(await user.client.post(`${API}/auth-tokens/revoke/${other.username}`), 403, 4004);
        assert.equal(await currentUsername(bearer(app.url, token)), other.username);
      });

      it('answers POST /auth-tokens/revoke/<username> for an unknown user with 404', async () => {
        assertError(await admin.post(`${API}/auth-tokens/revoke/no-such-user`), 404, -1);
      });

      it('lets a superadmin revoke another user\'s tokens without touching its own', async () => {
        const other = await newUser(app, admin, 'revoked');
        const theirs = await createToken(other.client);
        const mine = await createToken(admin);
        assert.equal((await admin.post(`${API}/auth-tokens/revoke/${other.username}`)).status, 204);
        assertError(await bearer(app.url, theirs).get(`${API}/users/current`), 401, 4008);
        assert.equal(await currentUsername(bearer(app.url, mine)), 'admin');
        assert.equal(await currentUsername(other.client), other.username);
      });

      it('does not let the token of a deleted user authenticate a new user of the same name', async () => {
        const u = await newUser(app, admin, 'reused');
        const token = await createToken(u.client, { expiry: Date.now() + 3_600_000 });
        assert.equal((await admin.delete(`${API}/users/${u.username}`)).status, 200);
        assertError(await bearer(app.url, token).get(`${API}/users/current`), 401, 4008);
        await createUser(admin, u.username, PASSWORD);
        assertError(await bearer(app.url, token).get(`${API}/users/current`), 401, 4008);
      });

      it('does not let the token of a renamed user authenticate a new user that takes the old name', async () => {
        const u = await newUser(app, admin, 'renamed');
        const token = await createToken(u.client, { expiry: Date.now() + 3_600_000 });
        const res = await admin.put(`${API}/users/${u.username}`, { username: `${u.username}x` });
        assert.equal(res.status, 200, res.text);
        await createUser(admin, u.username, PASSWORD);
        assertError(await bearer(app.url, token).get(`${API}/users/current`), 401, 4008);
      });

      it('publishes the public key as an EC P-521 JWK without private parts, which verifies tokens', async () => {
        const token = await createToken(user.client);
        const res = await new ApiClient(app.url).get<JWK>(`${API}/auth-tokens/public-key`);
        assert.equal(res.status, 200, res.text);
        const jwk = res.body;
        assert.equal(jwk.kty, 'EC');
        assert.equal(jwk.crv, 'P-521');
        assert.equal(typeof jwk.x, 'string');
        assert.equal(typeof jwk.y, 'string');
        for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) assert.ok(!(secret in jwk), `JWK must not hold ${secret}`);
        assert.equal(jwk.kid, decodeProtectedHeader(token).kid);
        const { payload } = await jwtVerify(token, await importJWK(jwk, 'ES512'), { algorithms: ['ES512'] });
        assert.equal(payload.sub, user.username);
        await assert.rejects(jwtVerify(flipChar(token, 2), await importJWK(jwk, 'ES512')));
      });

      it('refuses POST /auth-tokens/reset-keys by a non-superadmin (403)', async () => {
        const token = await createToken(user.client);
        assertError(await user.client.post(`${API}/auth-tokens/reset-keys`), 403, 4004);
        assert.equal(await currentUsername(bearer(app.url, token)), user.username);
      });

      it('invalidates every token with POST /auth-tokens/reset-keys and publishes the new key', async () => {
        const theirs = await createToken(user.client);
        const mine = await createToken(admin);
        const oldKey = (await admin.get<JWK>(`${API}/auth-tokens/public-key`)).body;
        assert.equal((await admin.post(`${API}/auth-tokens/reset-keys`)).status, 204);
        for (const t of [theirs, mine]) assertError(await bearer(app.url, t).get(`${API}/users/current`), 401, 4008);
        const newKey = (await admin.get<JWK>(`${API}/auth-tokens/public-key`)).body;
        assert.notEqual(newKey.kid, oldKey.kid);
        assert.notEqual(newKey.x, oldKey.x);
        const fresh = await createToken(user.client);
        assert.equal(await currentUsername(bearer(app.url, fresh)), user.username);
        await jwtVerify(fresh, await importJWK(newKey, 'ES512'));
        // Sessions are not tokens: they survive a key reset.
        assert.equal(await currentUsername(user.client), user.username);
      });
    });
  });

  describe(`auth with Basic enabled and password expiry (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    before(async () => {
      app = await startTestApp(engine, { BASIC_AUTH_ENABLED: 'true', PASSWORD_MAX_AGE_DAYS: '90' });
      admin = new ApiClient(app.url);
      await admin.login('admin', 'admin');
    });
    after(() => app.stop());

    /** Moves the user's last password change far enough back to expire it. */
    async function agePassword(username: string): Promise<void> {
      await app.service.services.db.query("update users set last_password_change = now() - interval '400 days' where username = $1", [
        username,
      ]);
    }

    async function disable(username: string): Promise<void> {
      const res = await admin.put<{ disabled: boolean }>(`${API}/users/${username}`, { username, disabled: true });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.disabled, true);
    }

    describe('Basic', () => {
      it('authenticates with Basic credentials and creates no session cookie', async () => {
        const res = await basic(app.url, 'admin', 'admin').get<{ username: string }>(`${API}/users/current`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.username, 'admin');
        assert.deepEqual(res.headers.getSetCookie(), []);
      });

      it('refuses a wrong Basic password or unknown user with 401 4011', async () => {
        assertError(await basic(app.url, 'admin', 'wrong-password').get(`${API}/users/current`), 401, 4011);
        assertError(await basic(app.url, 'nobody-here', 'wrong-password').get(`${API}/users/current`), 401, 4011);
      });

      it('refuses a wrong password after the right one was accepted (no stale cache hit)', async () => {
        const u = await newUser(app, admin, 'basiccache');
        assert.equal(await currentUsername(basic(app.url, u.username, PASSWORD)), u.username);
        assertError(await basic(app.url, u.username, `${PASSWORD}x`).get(`${API}/users/current`), 401, 4011);
      });

      it('refuses malformed Basic credentials with 401 4008', async () => {
        const c = new ApiClient(app.url);
        c.authorization = `Basic ${Buffer.from('no-colon-here').toString('base64')}`;
        assertError(await c.get(`${API}/users/current`), 401, 4008);
      });

      it('refuses Basic credentials with NUL, invalid UTF-8, a lone surrogate or bad base64 with 401 4008, before the store', async () => {
        const raw = (bytes: Buffer | string) => {
          const c = new ApiClient(app.url);
          c.authorization = `Basic ${typeof bytes === 'string' ? bytes : bytes.toString('base64')}`;
          return c;
        };
        const malformed: Record<string, Buffer | string> = {
          'NUL in the username': Buffer.from('ad\u0000min:admin'),
          'NUL in the password': Buffer.from('admin:ad\u0000min'),
          'invalid UTF-8': Buffer.concat([Buffer.from('admin:'), Buffer.from([0xc3, 0x28])]),
          'a lone surrogate (CESU-8 bytes)': Buffer.concat([Buffer.from('admin:'), Buffer.from([0xed, 0xb0, 0x80])]),
          'an overlong encoding': Buffer.concat([Buffer.from('admin:'), Buffer.from([0xc0, 0xaf])]),
          'not base64': 'YWRtaW46YWRtaW4*',
          'base64 with a space inside': 'YWRt aW46YWRtaW4=',
        };
        for (const [what, value] of Object.entries(malformed)) {
          const res = await raw(value).get<ErrorBody>(`${API}/users/current`);
          assert.equal(res.status, 401, `${what}: ${res.text}`);
          assert.equal(res.body.message, 'Malformed Basic credentials', what);
        }
        assert.equal(await currentUsername(raw(Buffer.from('admin:admin'))), 'admin', 'well-formed credentials still work');
        assert.equal(await currentUsername(raw(Buffer.from('admin:admin').toString('base64').replace(/=+$/, ''))), 'admin', 'padding may be left out');
      });

      it('lets a Basic caller create a token without a CSRF token', async () => {
        const res = await basic(app.url, 'admin', 'admin').post<TokenBody>(`${API}/auth-tokens/create`, {});
        assert.equal(res.status, 201, res.text);
        assert.equal(await currentUsername(bearer(app.url, res.body.token)), 'admin');
      });

      it('stops accepting the old Basic password once the password changed', async () => {
        const u = await newUser(app, admin, 'basicpw');
        assert.equal(await currentUsername(basic(app.url, u.username, PASSWORD)), u.username);
        const res = await admin.put(`${API}/users/${u.username}`, { username: u.username, password: 'another-password-2' });
        assert.equal(res.status, 200, res.text);
        assertError(await basic(app.url, u.username, PASSWORD).get(`${API}/users/current`), 401, 4011);
        assert.equal(await currentUsername(basic(app.url, u.username, 'another-password-2')), u.username);
      });
    });

    describe('disabled user', () => {
      it('refuses an existing session, a token and Basic of a user disabled by an admin at once: 401 4009', async () => {
        const u = await newUser(app, admin, 'disabled');
        const token = await createToken(u.client);
        const basicClient = basic(app.url, u.username, PASSWORD);
        assert.equal(await currentUsername(u.client), u.username);
        assert.equal(await currentUsername(bearer(app.url, token)), u.username);
        assert.equal(await currentUsername(basicClient), u.username);

        await disable(u.username);

        for (const c of [u.client, bearer(app.url, token), basicClient]) {
          const body = assertError(await c.get(`${API}/users/current`), 401, 4009, 'User is disabled');
          assert.equal(body.serviceStatusName, 'ACCOUNT_DISABLED');
        }
      });

      it('refuses the login of a disabled user with 401 4009, and no session cookie', async () => {
        const u = await newUser(app, admin, 'disabledlogin');
        await disable(u.username);
        const c = new ApiClient(app.url);
        c.seedCsrf();
        const res = await c.post(`${API}/login`, { username: u.username, password: PASSWORD });
        assertError(res, 401, 4009, 'User is disabled');
        assert.equal(setCookie(res, 'DDS_SESSION'), undefined);
      });

      it('accepts the user again once re-enabled', async () => {
        const u = await newUser(app, admin, 'reenabled');
        await disable(u.username);
        const res = await admin.put(`${API}/users/${u.username}`, { username: u.username, disabled: false });
        assert.equal(res.status, 200, res.text);
        const c = new ApiClient(app.url);
        await c.login(u.username, PASSWORD);
        assert.equal(await currentUsername(c), u.username);
      });
    });

    describe('password expiry', () => {
      it('refuses the login of a user whose password is older than PASSWORD_MAX_AGE_DAYS with 401 4010', async () => {
        const username = uniqueName('expired');
        await createUser(admin, username, PASSWORD);
        await agePassword(username);
        const c = new ApiClient(app.url);
        c.seedCsrf();
        const res = await c.post(`${API}/login`, { username, password: PASSWORD });
        const body = assertError(res, 401, 4010);
        assert.equal(body.serviceStatusName, 'CREDENTIALS_EXPIRED');
        assert.equal(setCookie(res, 'DDS_SESSION'), undefined);
        assertError(await basic(app.url, username, PASSWORD).get(`${API}/users/current`), 401, 4010);
      });

      it('accepts a login with newPassword, after which the new password works alone and the old one does not', async () => {
        const username = uniqueName('renew');
        await createUser(admin, username, PASSWORD);
        await agePassword(username);
        const c = new ApiClient(app.url);
        c.seedCsrf();
        const res = await c.post<{ username: string; lastPasswordChange: number }>(`${API}/login`, {
          username,
          password: PASSWORD,
          newPassword: 'brand-new-password-3',
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.username, username);
        assert.ok(Date.now() - res.body.lastPasswordChange < 60_000);
        assert.equal(await currentUsername(c), username);

        const again = new ApiClient(app.url);
        await again.login(username, 'brand-new-password-3');
        again.seedCsrf();
        assertError(await again.post(`${API}/login`, { username, password: PASSWORD }), 401, 4011);
      });

      it('refuses a too short newPassword with 422 on newPassword and keeps the password expired', async () => {
        const username = uniqueName('shortnew');
        await createUser(admin, username, PASSWORD);
        await agePassword(username);
        const c = new ApiClient(app.url);
        c.seedCsrf();
        const body = assertError(await c.post(`${API}/login`, { username, password: PASSWORD, newPassword: 'short' }), 422, 4002);
        assert.deepEqual(body.result?.messages.map((m) => m.property), ['newPassword']);
        assertError(await c.post(`${API}/login`, { username, password: PASSWORD }), 401, 4010);
      });

      it('refuses newPassword with a wrong current password (401 4011) and keeps the password', async () => {
        const username = uniqueName('wrongrenew');
        await createUser(admin, username, PASSWORD);
        await agePassword(username);
        const c = new ApiClient(app.url);
        c.seedCsrf();
        assertError(await c.post(`${API}/login`, { username, password: 'wrong-password', newPassword: 'brand-new-password-4' }), 401, 4011);
        assertError(await c.post(`${API}/login`, { username, password: 'brand-new-password-4' }), 401, 4011);
      });
    });

    describe('credential changes by an admin', () => {
      it('ends the sessions and revokes the tokens of a user whose password an admin changes', async () => {
        const u = await newUser(app, admin, 'pwchange');
        const token = await createToken(u.client);
        const res = await admin.put(`${API}/users/${u.username}`, { username: u.username, password: 'set-by-admin-5' });
        assert.equal(res.status, 200, res.text);
        assertError(await u.client.get(`${API}/users/current`), 401, 4008);
        assertError(await bearer(app.url, token).get(`${API}/users/current`), 401, 4008);
        const c = new ApiClient(app.url);
        await c.login(u.username, 'set-by-admin-5');
        assert.equal(await currentUsername(c), u.username);
      });

      it('ends the sessions and revokes the tokens of a user whose permissions an admin changes', async () => {
        const u = await newUser(app, admin, 'permchange');
        const token = await createToken(u.client);
        const res = await admin.put<{ permissions: string[] }>(`${API}/users/${u.username}`, {
          username: u.username,
          permissions: ['user', 'operator'],
        });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.permissions, ['user', 'operator']);
        assertError(await u.client.get(`${API}/users/current`), 401, 4008);
        assertError(await bearer(app.url, token).get(`${API}/users/current`), 401, 4008);
      });

      it('keeps the sessions and tokens of a user whose other fields an admin changes', async () => {
        const u = await newUser(app, admin, 'namechange');
        const token = await createToken(u.client);
        const res = await admin.put(`${API}/users/${u.username}`, { username: u.username, name: 'Renamed', email: 'renamed@example.com' });
        assert.equal(res.status, 200, res.text);
        assert.equal(await currentUsername(u.client), u.username);
        assert.equal(await currentUsername(bearer(app.url, token)), u.username);
      });

      it('keeps the current session but ends the others when users change their own password', async () => {
        const u = await newUser(app, admin, 'selfpw');
        const otherSession = new ApiClient(app.url);
        await otherSession.login(u.username, PASSWORD);
        const token = await createToken(u.client);
        const res = await u.client.put(`${API}/users/${u.username}`, {
          username: u.username,
          password: 'my-own-new-password-6',
          currentPassword: PASSWORD,
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(await currentUsername(u.client), u.username);
        assertError(await otherSession.get(`${API}/users/current`), 401, 4008);
        assertError(await bearer(app.url, token).get(`${API}/users/current`), 401, 4008);
      });
    });
  });
}
