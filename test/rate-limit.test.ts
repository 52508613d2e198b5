// Rate limits: the token buckets with an injected clock, the login rules of RateLimiter, and the
// limits as the running service applies them (anonymous per IP, failed logins per IP and per
// username, authenticated per user, and the switch that turns them all off).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Config } from '../src/config.js';
import { DomainError } from '../src/core/errors.js';
import { RateLimiter, TokenBuckets } from '../src/core/rate-limits.js';
import { LoginAddressesRepository } from '../src/store/metadata/login-addresses.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, type Response } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const API = '/rest/latest';
const PASSWORD = 'correct-horse-1';

interface ErrorBody {
  serviceStatusCode: number;
  serviceStatusName: string;
  message: string;
}

/** A clock the test moves by hand. */
function manualClock(start = 1_700_000_000_000) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

/** Asserts a 429 with the given code and a Retry-After header equal to the seconds in the message; returns them. */
function assertTooMany(res: Response, code: 4006 | 4007): number {
  const body = res.body as ErrorBody;
  assert.equal(res.status, 429, res.text);
  assert.equal(body.serviceStatusCode, code, res.text);
  assert.equal(body.serviceStatusName, code === 4006 ? 'IP_RATE_LIMITED' : 'USER_RATE_LIMITED');
  const header = res.headers.get('retry-after');
  assert.ok(header !== null, 'Retry-After header present');
  assert.match(header, /^\d+$/);
  const inMessage = /(\d+) seconds?/.exec(body.message);
  assert.ok(inMessage, `message states the wait: ${body.message}`);
  assert.equal(header, inMessage[1]);
  const seconds = Number(header);
  assert.ok(seconds >= 1, 'Retry-After is never 0');
  return seconds;
}

/** POST /login from a simulated client address (TRUST_PROXY=true), with a fresh CSRF token. */
async function loginFrom(url: string, ip: string, username: string, password: string): Promise<Response> {
  const c = new ApiClient(url);
  c.seedCsrf();
  return c.post(`${API}/login`, { username, password }, { headers: { 'x-forwarded-for': ip } });
}

function assertRateLimited(fn: () => void, code: 4006 | 4007): number {
  let seconds = 0;
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DomainError);
    assert.equal(err.kind, 'rate-limited');
    assert.equal(err.serviceStatusCode, code);
    seconds = Number(err.retryAfterSeconds);
    assert.ok(err.message.includes(`${seconds} seconds`), err.message);
    return true;
  });
  return seconds;
}

describe('TokenBuckets', () => {
  it('allows a full burst at once, then refuses', () => {
    const clock = manualClock();
    const buckets = new TokenBuckets({ burst: 3, refillPerSecond: 1 }, clock.now);
    assert.deepEqual([buckets.take('a'), buckets.take('a'), buckets.take('a')], [0, 0, 0]);
    assert.ok(buckets.take('a') > 0);
  });

  it('keeps one bucket per key', () => {
    const clock = manualClock();
    const buckets = new TokenBuckets({ burst: 1, refillPerSecond: 1 }, clock.now);
    assert.equal(buckets.take('a'), 0);
    assert.ok(buckets.take('a') > 0);
    assert.equal(buckets.take('b'), 0);
  });

  it('refills at the configured rate', () => {
    const clock = manualClock();
    const buckets = new TokenBuckets({ burst: 2, refillPerSecond: 2 }, clock.now);
    buckets.take('a');
    buckets.take('a');
    assert.ok(buckets.take('a') > 0);
    clock.advance(499);
    assert.ok(buckets.take('a') > 0, 'less than one token after 499 ms at 2/s');
    clock.advance(1);
    assert.equal(buckets.take('a'), 0, 'one token after 500 ms at 2/s');
    assert.ok(buckets.take('a') > 0);
  });

  it('never refills beyond the burst', () => {
    const clock = manualClock();
    const buckets = new TokenBuckets({ burst: 2, refillPerSecond: 1 }, clock.now);
    buckets.take('a');
    clock.advance(3_600_000);
    assert.equal(buckets.take('a'), 0);
    assert.equal(buckets.take('a'), 0);
    assert.ok(buckets.take('a') > 0);
  });

  it('does not let refused requests consume tokens', () => {
    const clock = manualClock();
    const buckets = new TokenBuckets({ burst: 1, refillPerSecond: 1 }, clock.now);
    buckets.take('a');
    for (let i = 0; i < 10; i++) assert.ok(buckets.take('a') > 0);
    clock.advance(1000);
    assert.equal(buckets.take('a'), 0);
  });

  it('answers the wait in whole seconds, rounded up', () => {
    const clock = manualClock();
    // One token per minute: empty → 60 s; 30.5 s later half a token is missing → 29.5 s → 30.
    const perMinute = new TokenBuckets({ burst: 1, refillPerSecond: 1 / 60 }, clock.now);
    perMinute.take('a');
    assert.equal(perMinute.take('a'), 60);
    clock.advance(30_500);
    assert.equal(perMinute.take('a'), 30);
    // 0.3 tokens per second: 1 / 0.3 = 3.33 s → 4.
    const slow = new TokenBuckets({ burst: 1, refillPerSecond: 0.3 }, manualClock().now);
    slow.take('a');
    assert.equal(slow.take('a'), 4);
  });

  it('never answers a wait of 0 seconds when refusing, however fast the refill', () => {
    const clock = manualClock();
    const fast = new TokenBuckets({ burst: 1, refillPerSecond: 1000 }, clock.now);
    assert.equal(fast.take('a'), 0);
    assert.equal(fast.take('a'), 1);
    clock.advance(0.9);
    assert.equal(fast.take('a'), 1, 'a fraction of a token missing still waits 1 s');
  });

  it('peeks at the wait without taking a token', () => {
    const clock = manualClock();
    const buckets = new TokenBuckets({ burst: 1, refillPerSecond: 0.5 }, clock.now);
    assert.equal(buckets.peek('a'), 0);
    assert.equal(buckets.peek('a'), 0);
    assert.equal(buckets.take('a'), 0);
    assert.equal(buckets.peek('a'), 2);
    clock.advance(1000);
    assert.equal(buckets.peek('a'), 1);
    clock.advance(1000);
    assert.equal(buckets.peek('a'), 0);
  });
});

describe('RateLimiter login rules', () => {
  const bucket = (burst: number) => ({ burst, refillPerSecond: 1 / 60 });
  const config = (enabled: boolean): Config['rateLimit'] => ({
    enabled,
    anonymous: bucket(2),
    loginPerIp: bucket(4),
    loginPerUser: bucket(3),
    loginPerUserIp: bucket(2),
    user: bucket(100),
  });

  it('refuses an IP after its failed-login burst with 4006, before looking at the username', () => {
    const limiter = new RateLimiter(config(true), manualClock().now);
    for (const name of ['a', 'b', 'c', 'd']) limiter.recordLoginFailure('10.0.0.1', name, true);
    const seconds = assertRateLimited(() => limiter.assertLoginAllowedFrom('10.0.0.1', 'e'), 4006);
    assert.equal(seconds, 60);
    limiter.assertLoginAllowedFrom('10.0.0.2', 'e');
  });

  it('refuses a (username, IP) pair after its burst with 4007, leaving the username free elsewhere', () => {
    const limiter = new RateLimiter(config(true), manualClock().now);
    limiter.recordLoginFailure('10.0.0.1', 'Alice', true);
    limiter.recordLoginFailure('10.0.0.1', 'alice', true);
    const seconds = assertRateLimited(() => limiter.assertLoginAllowedFrom('10.0.0.1', 'ALICE'), 4007);
    assert.equal(seconds, 60);
    limiter.assertLoginAllowedFrom('10.0.0.1', 'bob');
    limiter.assertLoginAllowedFrom('10.0.0.2', 'alice');
    assert.equal(limiter.usernameLoginWait('alice'), 0, 'two of three username tokens spent');
  });

  it('spends the username bucket over different IPs, whatever the letter case', () => {
    const limiter = new RateLimiter(config(true), manualClock().now);
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) limiter.recordLoginFailure(ip, 'Alice', true);
    assert.equal(limiter.usernameLoginWait('alice'), 60);
    assert.equal(limiter.usernameLoginWait('bob'), 0);
  });

  it('does not charge the username bucket for failures it is told are from a known address', () => {
    const limiter = new RateLimiter(config(true), manualClock().now);
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) limiter.recordLoginFailure(ip, 'alice', false);
    assert.equal(limiter.usernameLoginWait('alice'), 0);
  });

  it('checks the IP limit first when both are exhausted', () => {
    const limiter = new RateLimiter(config(true), manualClock().now);
    for (let i = 0; i < 4; i++) limiter.recordLoginFailure('10.0.0.1', 'alice', true);
    assertRateLimited(() => limiter.assertLoginAllowedFrom('10.0.0.1', 'alice'), 4006);
  });

  it('counts an IPv6 /64 as one address and IPv4-mapped IPv6 as its IPv4 address', () => {
    const limiter = new RateLimiter(config(true), manualClock().now);
    for (const [i, ip] of ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:db8:1:2:a:b:c:d', '2001:db8:1:2::7'].entries()) {
      limiter.recordLoginFailure(ip, `user${i}`, true);
    }
    assertRateLimited(() => limiter.assertLoginAllowedFrom('2001:db8:1:2::42', 'other'), 4006);
    limiter.assertLoginAllowedFrom('2001:db8:1:3::1', 'other');
    limiter.recordLoginFailure('::ffff:192.0.2.7', 'carol', true);
    limiter.recordLoginFailure('192.0.2.7', 'carol', true);
    assertRateLimited(() => limiter.assertLoginAllowedFrom('::ffff:c000:207', 'carol'), 4007);
  });

  it('allows the login again once the bucket refilled', () => {
    const clock = manualClock();
    const limiter = new RateLimiter(config(true), clock.now);
    for (const name of ['a', 'b', 'c', 'd']) limiter.recordLoginFailure('10.0.0.1', name, true);
    assertRateLimited(() => limiter.assertLoginAllowedFrom('10.0.0.1', 'e'), 4006);
    clock.advance(60_000);
    limiter.assertLoginAllowedFrom('10.0.0.1', 'e');
  });

  it('peeks at the anonymous budget without spending it', () => {
    const limiter = new RateLimiter(config(true), manualClock().now);
    for (let i = 0; i < 5; i++) limiter.assertAnonymousAllowed('10.0.0.1');
    limiter.takeAnonymousRequest('10.0.0.1');
    limiter.takeAnonymousRequest('10.0.0.1');
    assertRateLimited(() => limiter.assertAnonymousAllowed('10.0.0.1'), 4006);
    limiter.assertAnonymousAllowed('10.0.0.2');
  });

  it('never refuses when disabled', () => {
    const limiter = new RateLimiter(config(false), manualClock().now);
    for (let i = 0; i < 10; i++) {
      limiter.recordLoginFailure('10.0.0.1', 'alice', true);
      limiter.takeAnonymousRequest('10.0.0.1');
    }
    limiter.assertLoginAllowedFrom('10.0.0.1', 'alice');
    limiter.assertAnonymousAllowed('10.0.0.1');
    assert.equal(limiter.usernameLoginWait('alice'), 0);
  });
});

announceEngines();
for (const engine of metadataEngines()) {
  describe(`rate limits over HTTP (${engine})`, () => {
    // One app with small limits; every test uses its own client addresses and users.
    describe('with limits on', () => {
      let app: TestApp;
      before(async () => {
        app = await startTestApp(engine, {
          RATE_LIMIT_ENABLED: 'true',
          TRUST_PROXY: 'true',
          RATE_LIMIT_ANON_BURST: '6',
          RATE_LIMIT_ANON_PER_SECOND: '0.25',
          RATE_LIMIT_LOGIN_IP_BURST: '3',
          RATE_LIMIT_LOGIN_USER_BURST: '3',
          RATE_LIMIT_USER_BURST: '5',
          RATE_LIMIT_USER_PER_SECOND: '0.1',
        });
        // Created through the service so that setting up spends no request budget.
        const actor = { id: 0, username: 'setup', permissions: ['superadmin'] };
        for (const username of ['iplimited', 'userlimited', 'succeeds', 'busy', 'mixed']) {
          await app.service.services.users.create(actor, { username, password: PASSWORD, permissions: ['user'] });
        }
      });
      after(() => app.stop());

      /** Logs in from the given address and returns a client holding the session. */
      async function sessionFrom(ip: string, username: string): Promise<ApiClient> {
        const res = await loginFrom(app.url, ip, username, PASSWORD);
        assert.equal(res.status, 200, res.text);
        const c = new ApiClient(app.url);
        c.cookies.set('DDS_SESSION', /DDS_SESSION=([^;]*)/.exec(res.headers.getSetCookie().join('\n'))![1]!);
        return c;
      }

      const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

      it('answers anonymous requests beyond the burst with 429 4006 and Retry-After equal to the seconds in the message', async () => {
        const c = new ApiClient(app.url);
        for (let i = 0; i < 6; i++) assert.equal((await c.get('/health', from('10.10.0.1'))).status, 200);
        const seconds = assertTooMany(await c.get('/health', from('10.10.0.1')), 4006);
        assert.ok(seconds <= 4, `at 0.25 tokens/s the wait is at most 4 s, got ${seconds}`);
        // Anonymous requests to protected paths count against the same budget.
        assertTooMany(await c.get(`${API}/users/current`, from('10.10.0.1')), 4006);
      });

      it('counts anonymous requests per client IP', async () => {
        const c = new ApiClient(app.url);
        for (let i = 0; i < 6; i++) await c.get('/health', from('10.10.0.2'));
        assertTooMany(await c.get('/health', from('10.10.0.2')), 4006);
        assert.equal((await c.get('/health', from('10.10.0.3'))).status, 200);
      });

      it('does not count authenticated requests against the anonymous budget of their IP', async () => {
        const ip = '10.10.0.4';
        const c = await sessionFrom(ip, 'mixed'); // anonymous: 1 of 6
        const anon = new ApiClient(app.url);
        for (let i = 0; i < 5; i++) assert.equal((await anon.get('/health', from(ip))).status, 200);
        assertTooMany(await anon.get('/health', from(ip)), 4006);
        for (let i = 0; i < 5; i++) {
          const me = await c.get(`${API}/users/current`, from(ip));
          assert.equal(me.status, 200, me.text);
        }
      });

      it('refuses an IP after too many failed logins with 429 4006, even with the right password', async () => {
        const ip = '10.20.0.1';
        for (const name of ['nobody1', 'nobody2', 'nobody3']) {
          const res = await loginFrom(app.url, ip, name, 'wrong-password');
          assert.equal(res.status, 401, res.text);
          assert.equal((res.body as ErrorBody).serviceStatusCode, 4011);
        }
        const refused = await loginFrom(app.url, ip, 'iplimited', PASSWORD);
        const seconds = assertTooMany(refused, 4006);
        assert.match((refused.body as ErrorBody).message, /failed logins/);
        assert.ok(seconds > 50 && seconds <= 60, `one token per minute: about 60 s, got ${seconds}`);
        assert.equal(refused.headers.getSetCookie().length, 0);
        // Refused before the password is checked: a wrong one gets the same 429, not a 401.
        assertTooMany(await loginFrom(app.url, ip, 'iplimited', 'wrong-password'), 4006);
        // Another address is not affected, and the username itself is not limited.
        assert.equal((await loginFrom(app.url, '10.20.0.2', 'iplimited', PASSWORD)).status, 200);
      });

      it('refuses a username after too many failed logins from different IPs with 429 4007, even with the right password', async () => {
        for (const ip of ['10.30.0.1', '10.30.0.2', '10.30.0.3']) {
          const res = await loginFrom(app.url, ip, 'userlimited', 'wrong-password');
          assert.equal(res.status, 401, res.text);
        }
        const refused = await loginFrom(app.url, '10.30.0.4', 'userlimited', PASSWORD);
        assertTooMany(refused, 4007);
        assert.equal(refused.headers.getSetCookie().length, 0);
        // The address is not limited: another user logs in from it.
        assert.equal((await loginFrom(app.url, '10.30.0.4', 'succeeds', PASSWORD)).status, 200);
      });

      it('does not count successful logins as failures', async () => {
        for (let i = 0; i < 5; i++) {
          const res = await loginFrom(app.url, '10.40.0.1', 'succeeds', PASSWORD);
          assert.equal(res.status, 200, res.text);
        }
      });

      it('counts anonymous requests by the address the proxy appended (TRUST_PROXY=true is one hop), however the client rotates X-Forwarded-For', async () => {
        const c = new ApiClient(app.url);
        const via = (i: number) => ({ headers: { 'x-forwarded-for': `198.18.${i}.1, 10.60.0.1` } });
        for (let i = 0; i < 6; i++) assert.equal((await c.get('/health', via(i))).status, 200);
        assertTooMany(await c.get('/health', via(6)), 4006);
        for (let i = 7; i < 20; i++) assertTooMany(await c.get(`${API}/users/current`, via(i)), 4006);
      });

      it('limits failed logins over many usernames from one address, however the client rotates X-Forwarded-For', async () => {
        for (let i = 0; i < 3; i++) {
          const res = await loginFrom(app.url, `198.18.${i}.1, 10.61.0.1`, `rotating${i}`, 'wrong-password');
          assert.equal(res.status, 401, res.text);
        }
        for (let i = 3; i < 30; i++) assertTooMany(await loginFrom(app.url, `198.18.${i}.1, 10.61.0.1`, `rotating${i}`, 'wrong-password'), 4006);
      });

      it('counts the IPv6 addresses of one /64 as one client', async () => {
        const c = new ApiClient(app.url);
        for (let i = 0; i < 6; i++) assert.equal((await c.get('/health', from(`2001:db8:60:1::${i + 1}`))).status, 200);
        assertTooMany(await c.get('/health', from('2001:db8:60:1:ffff::1')), 4006);
        assert.equal((await c.get('/health', from('2001:db8:60:2::1'))).status, 200);
      });

      it('answers 429 4007 once a user spent its burst, from whichever IP it comes', async () => {
        const c = await sessionFrom('10.50.0.1', 'busy');
        for (let i = 0; i < 5; i++) {
          const res = await c.get(`${API}/users/current`, from('10.50.0.1'));
          assert.equal(res.status, 200, res.text);
        }
        const seconds = assertTooMany(await c.get(`${API}/users/current`, from('10.50.0.1')), 4007);
        assert.ok(seconds <= 10, `at 0.1 tokens/s the wait is at most 10 s, got ${seconds}`);
        assertTooMany(await c.get(`${API}/users/current`, from('10.50.0.2')), 4007);
        // Anonymous requests from the same address are counted apart.
        assert.equal((await new ApiClient(app.url).get('/health', from('10.50.0.1'))).status, 200);
      });
    });

    describe('cheap refusal first', () => {
      // Anonymous budget 5 per address, refilled once in 100 s: nothing refills during the test.
      let app: TestApp;
      let kid: string;
      let scrapes = 0;
      before(async () => {
        app = await startTestApp(engine, {
          RATE_LIMIT_ENABLED: 'true',
          TRUST_PROXY: '1',
          RATE_LIMIT_ANON_BURST: '5',
          RATE_LIMIT_ANON_PER_SECOND: '0.01',
          METRICS_PUBLIC: 'true',
          BASIC_AUTH_ENABLED: 'true',
        });
        const key = await new ApiClient(app.url).get<{ kid: string }>(`${API}/auth-tokens/public-key`, from('10.90.0.1'));
        kid = key.body.kid;
      });
      after(() => app.stop());

      const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

      /** The signature verifications /metrics reports (scraped from an address of its own each time). */
      async function verifications(): Promise<number> {
        scrapes += 1;
        const res = await new ApiClient(app.url).get('/metrics', from(`10.90.${scrapes}.2`));
        assert.equal(res.status, 200, res.text);
        const m = /^dds_token_signature_verifications_total (\d+)$/m.exec(res.text);
        assert.ok(m, 'dds_token_signature_verifications_total is exported');
        return Number(m[1]);
      }

      /** A token of the right shape naming the server's key, with a random signature the curve's range check lets through. */
      function forgedToken(): string {
        const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
        const claims = { typ: 'auth', sub: 'admin', uid: 1, v: 0, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 3600 };
        const half = () => Buffer.concat([Buffer.from([0]), randomBytes(65)]);
        return `${part({ alg: 'ES512', kid })}.${part(claims)}.${Buffer.concat([half(), half()]).toString('base64url')}`;
      }

      async function spendAnonymousBudget(ip: string): Promise<void> {
        const c = new ApiClient(app.url);
        for (let i = 0; i < 5; i++) assert.equal((await c.get('/health', from(ip))).status, 200);
        assertTooMany(await c.get('/health', from(ip)), 4006);
      }

      async function realToken(): Promise<string> {
        const admin = (await app.service.services.users.findByUsername('admin'))!;
        return app.service.services.tokens.create('admin', admin.id, admin.tokenVersion, Date.now() + 3_600_000);
      }

      it('answers forged tokens naming the server\'s key with 429 and no signature check once the address spent its budget', async () => {
        const before = await verifications();
        const ip = '10.91.0.1';
        for (let i = 0; i < 5; i++) {
          const res = await new ApiClient(app.url).useBearer(forgedToken()).get(`${API}/users/current`, from(ip));
          assert.equal(res.status, 401, res.text);
        }
        assert.equal(await verifications(), before + 5, 'within the budget each forged token costs one verification');
        for (let i = 0; i < 50; i++) {
          assertTooMany(await new ApiClient(app.url).useBearer(forgedToken()).get(`${API}/users/current`, from(ip)), 4006);
        }
        assert.equal(await verifications(), before + 5, 'refused requests cost no verification');
      });

      it('still honours a token verified lately from an address whose budget is spent, but verifies no new one for it', async () => {
        const known = await realToken();
        assert.equal((await new ApiClient(app.url).useBearer(known).get(`${API}/users/current`, from('10.92.0.2'))).status, 200);
        await spendAnonymousBudget('10.92.0.1');
        const before = await verifications();
        const res = await new ApiClient(app.url).useBearer(known).get(`${API}/users/current`, from('10.92.0.1'));
        assert.equal(res.status, 200, res.text);
        assertTooMany(await new ApiClient(app.url).useBearer(await realToken()).get(`${API}/users/current`, from('10.92.0.1')), 4006);
        assert.equal(await verifications(), before);
      });

      it('answers Basic credentials with 429 before checking the password once the address spent its budget', async () => {
        const admin = (await app.service.services.users.findByUsername('admin'))!;
        const knownAddresses = async () => (await new LoginAddressesRepository(app.service.services.db).forUser(admin.id)).map((a) => a.address);
        await spendAnonymousBudget('10.93.0.1');
        assertTooMany(await new ApiClient(app.url).useBasic('admin', 'admin').get(`${API}/users/current`, from('10.93.0.1')), 4006);
        assertTooMany(await new ApiClient(app.url).useBasic('admin', 'wrong-password').get(`${API}/users/current`, from('10.93.0.1')), 4006);
        assert.ok(!(await knownAddresses()).includes('10.93.0.1'), 'the right password was never checked: the address did not become known');
        const fresh = await new ApiClient(app.url).useBasic('admin', 'admin').get(`${API}/users/current`, from('10.93.0.2'));
        assert.equal(fresh.status, 200, fresh.text);
        assert.ok((await knownAddresses()).includes('10.93.0.2'), 'a checked Basic password makes the address known');
      });
    });

    describe('RATE_LIMIT_ENABLED=false', () => {
      let app: TestApp;
      before(async () => {
        app = await startTestApp(engine, {
          RATE_LIMIT_ENABLED: 'false',
          RATE_LIMIT_ANON_BURST: '1',
          RATE_LIMIT_LOGIN_IP_BURST: '1',
          RATE_LIMIT_LOGIN_USER_BURST: '1',
          RATE_LIMIT_USER_BURST: '1',
        });
      });
      after(() => app.stop());

      it('limits neither anonymous requests, failed logins nor authenticated requests', async () => {
        const anon = new ApiClient(app.url);
        for (let i = 0; i < 5; i++) assert.equal((await anon.get('/health')).status, 200);
        for (let i = 0; i < 3; i++) {
          const res = await loginFrom(app.url, '127.0.0.1', 'admin', 'wrong-password');
          assert.equal(res.status, 401, res.text);
        }
        const c = new ApiClient(app.url);
        await c.login('admin', 'admin');
        for (let i = 0; i < 5; i++) assert.equal((await c.get(`${API}/users/current`)).status, 200);
      });
    });
  });
}
