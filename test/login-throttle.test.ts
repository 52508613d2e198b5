// Login throttling that cannot lock the owner out: the known-address store (bounded, kept across
// restarts), the throttle over the real store with a moved clock, and the scheme over HTTP — per
// address, per (username, address), and per username except from addresses the user logged in from.
import assert from 'node:assert/strict';
import type { Config } from '../src/config.js';
import { RateLimiter } from '../src/core/rate-limits.js';
import { DomainError } from '../src/core/errors.js';
import { KNOWN_ADDRESSES_PER_USER, LoginThrottle } from '../src/services/login-throttle.js';
import { LoginAddressesRepository } from '../src/store/metadata/login-addresses.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, type Response } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const API = '/rest/latest';
const PASSWORD = 'correct-horse-1';
const DAY_MS = 86_400_000;

interface ErrorBody {
  serviceStatusCode: number;
  message: string;
}

function manualClock(start = Date.now()) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

/** POST /login as if through one proxy (TRUST_PROXY=1) from `ip`, with a fresh CSRF token. */
async function loginFrom(app: TestApp, ip: string, username: string, password: string): Promise<Response> {
  const c = new ApiClient(app.url);
  c.seedCsrf();
  return c.post(`${API}/login`, { username, password }, { headers: { 'x-forwarded-for': ip } });
}

function assertLimited(res: Response, code: 4006 | 4007, message: RegExp): void {
  assert.equal(res.status, 429, res.text);
  const body = res.body as ErrorBody;
  assert.equal(body.serviceStatusCode, code, res.text);
  assert.match(body.message, message);
  assert.equal(res.headers.getSetCookie().length, 0, 'no session for a refused login');
}

async function assertRejectsLimited(p: Promise<unknown>, code: 4006 | 4007): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof DomainError && err.kind === 'rate-limited' && err.serviceStatusCode === code);
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`known login addresses and the throttle over the store (${engine})`, () => {
    let app: TestApp;
    let repo: LoginAddressesRepository;
    let seq = 0;
    before(async () => {
      app = await startTestApp(engine);
      repo = new LoginAddressesRepository(app.service.services.db);
    });
    after(() => app.stop());

    async function newUser(): Promise<{ id: number; username: string }> {
      seq += 1;
      const actor = { id: 0, username: 'setup', permissions: ['superadmin'] };
      const user = await app.service.services.users.create(actor, { username: `known${seq}`, password: PASSWORD, permissions: ['user'] });
      return { id: user.id, username: user.username };
    }

    it('knows an address from its last success until the window ends', async () => {
      const u = await newUser();
      const t0 = new Date('2030-01-01T00:00:00Z');
      await repo.remember(u.id, '192.0.2.1', t0, new Date(t0.getTime() - 30 * DAY_MS), 20);
      assert.equal(await repo.isKnown(u.username, '192.0.2.1', new Date(t0.getTime() - 30 * DAY_MS)), true);
      assert.equal(await repo.isKnown(u.username, '192.0.2.1', new Date(t0.getTime() + 1)), false, 'not since a later instant');
      assert.equal(await repo.isKnown(u.username, '192.0.2.2', new Date(0)), false, 'another address');
      assert.equal(await repo.isKnown('no-such-user', '192.0.2.1', new Date(0)), false, 'another username');
    });

    it('keeps the most recent addresses of each user, up to the cap, and drops those older than the window', async () => {
      const u = await newUser();
      const start = Date.UTC(2030, 0, 1);
      for (let i = 0; i < 25; i++) {
        const now = new Date(start + i * 60_000);
        await repo.remember(u.id, `198.51.100.${i}`, now, new Date(now.getTime() - DAY_MS), KNOWN_ADDRESSES_PER_USER);
      }
      const kept = await repo.forUser(u.id);
      assert.equal(kept.length, KNOWN_ADDRESSES_PER_USER);
      assert.deepEqual(kept.map((k) => k.address).slice(0, 2), ['198.51.100.24', '198.51.100.23']);
      assert.equal(kept.at(-1)!.address, '198.51.100.5');
      const later = new Date(start + 2 * DAY_MS);
      await repo.remember(u.id, '198.51.100.200', later, new Date(later.getTime() - DAY_MS), KNOWN_ADDRESSES_PER_USER);
      assert.deepEqual((await repo.forUser(u.id)).map((k) => k.address), ['198.51.100.200']);
    });

    it('refreshes a known address instead of adding it again', async () => {
      const u = await newUser();
      const t0 = Date.UTC(2030, 0, 1);
      await repo.remember(u.id, '192.0.2.9', new Date(t0), new Date(t0 - DAY_MS), 20);
      await repo.remember(u.id, '192.0.2.9', new Date(t0 + 60_000), new Date(t0 - DAY_MS), 20);
      assert.deepEqual(
        (await repo.forUser(u.id)).map((k) => [k.address, k.lastSuccess.getTime()]),
        [['192.0.2.9', t0 + 60_000]],
      );
    });

    it('forgets addresses older than a date for every user, and those of a deleted user', async () => {
      const a = await newUser();
      const b = await newUser();
      const t0 = Date.UTC(2030, 0, 1);
      await repo.remember(a.id, '192.0.2.10', new Date(t0), new Date(0), 20);
      await repo.remember(a.id, '192.0.2.11', new Date(t0 + 10 * DAY_MS), new Date(0), 20);
      await repo.remember(b.id, '192.0.2.12', new Date(t0), new Date(0), 20);
      assert.ok((await repo.deleteOlderThan(new Date(t0 + DAY_MS))) >= 2);
      assert.deepEqual((await repo.forUser(a.id)).map((k) => k.address), ['192.0.2.11']);
      assert.deepEqual(await repo.forUser(b.id), []);
      await app.service.services.users.delete({ id: 0, username: 'setup', permissions: ['superadmin'] }, a.username);
      assert.deepEqual(await repo.forUser(a.id), []);
    });

    it('exempts a known address from the spent username budget, until the window ends', async () => {
      const u = await newUser();
      const clock = manualClock();
      const bucket = { burst: 3, refillPerSecond: 1 / 60 };
      const config: Config['rateLimit'] = { enabled: true, anonymous: bucket, loginPerIp: bucket, loginPerUser: bucket, loginPerUserIp: bucket, user: bucket };
      // The limiter's clock stands still, so its buckets never refill while the window passes.
      const frozen = Date.now();
      const throttle = new LoginThrottle(new RateLimiter(config, () => frozen), repo, 30, clock.now);
      await throttle.succeeded('2001:db8:7:7::1', u.id);
      assert.deepEqual((await repo.forUser(u.id)).map((k) => k.address), ['2001:db8:7:7::/64'], 'IPv6 kept by its /64');
      for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) await throttle.failed(ip, u.username);
      await assertRejectsLimited(throttle.assertAllowed('192.0.2.4', u.username), 4007);
      await throttle.assertAllowed('2001:db8:7:7:abcd::5', u.username);
      // A failure from the known address is not charged to the username, nor held by its limit.
      await throttle.failed('2001:db8:7:7::1', u.username);
      await throttle.assertAllowed('2001:db8:7:7::1', u.username);
      clock.advance(31 * DAY_MS);
      await assertRejectsLimited(throttle.assertAllowed('2001:db8:7:7::1', u.username), 4007);
      assert.equal(await throttle.purge(), 1);
      assert.deepEqual(await repo.forUser(u.id), []);
    });

    it('knows no address and records none when the window is 0 days', async () => {
      const u = await newUser();
      const bucket = { burst: 1, refillPerSecond: 1 / 60 };
      const config: Config['rateLimit'] = { enabled: true, anonymous: bucket, loginPerIp: bucket, loginPerUser: bucket, loginPerUserIp: bucket, user: bucket };
      const throttle = new LoginThrottle(new RateLimiter(config), repo, 0);
      await throttle.succeeded('192.0.2.50', u.id);
      assert.deepEqual(await repo.forUser(u.id), []);
      await throttle.failed('192.0.2.51', u.username);
      await assertRejectsLimited(throttle.assertAllowed('192.0.2.50', u.username), 4007);
    });
  });

  describe(`login throttling over HTTP (${engine})`, () => {
    // Per address 20 (so the per-username and per-pair limits act first), per pair and per username 5.
    const env = {
      RATE_LIMIT_ENABLED: 'true',
      TRUST_PROXY: '1',
      RATE_LIMIT_ANON_BURST: '1000',
      RATE_LIMIT_LOGIN_IP_BURST: '20',
      RATE_LIMIT_LOGIN_USER_BURST: '5',
      RATE_LIMIT_LOGIN_USER_IP_BURST: '5',
    };
    let app: TestApp;
    before(async () => {
      app = await startTestApp(engine, env);
      const actor = { id: 0, username: 'setup', permissions: ['superadmin'] };
      for (const username of ['pairuser', 'restarter']) {
        await app.service.services.users.create(actor, { username, password: PASSWORD, permissions: ['user'] });
      }
    });
    after(() => app.stop());

    it('lets the admin log in from an address it used before while someone guesses from elsewhere; a fresh address is limited', async () => {
      assert.equal((await loginFrom(app, '203.0.113.2', 'admin', 'admin')).status, 200, 'B becomes known');
      for (let i = 0; i < 5; i++) {
        const res = await loginFrom(app, '198.51.100.1', 'admin', 'wrong-password');
        assert.equal(res.status, 401, res.text);
      }
      assertLimited(await loginFrom(app, '198.51.100.1', 'admin', 'admin'), 4007, /from this address/);
      assertLimited(await loginFrom(app, '203.0.113.3', 'admin', 'admin'), 4007, /^Too many failed logins for this user;/);
      const owner = await loginFrom(app, '203.0.113.2', 'admin', 'admin');
      assert.equal(owner.status, 200, owner.text);
      // A guesser rotating addresses keeps the username spent: the owner still gets in from B.
      for (let i = 10; i < 15; i++) assertLimited(await loginFrom(app, `198.51.100.${i}`, 'admin', 'wrong-password'), 4007, /for this user;/);
      assert.equal((await loginFrom(app, '203.0.113.2', 'admin', 'admin')).status, 200);
    });

    it('limits failures per (username, address) without spending the username from a known address', async () => {
      const ip = '203.0.113.40';
      assert.equal((await loginFrom(app, ip, 'pairuser', PASSWORD)).status, 200);
      for (let i = 0; i < 5; i++) assert.equal((await loginFrom(app, ip, 'pairuser', 'wrong-password')).status, 401);
      assertLimited(await loginFrom(app, ip, 'pairuser', PASSWORD), 4007, /for this user from this address/);
      assert.equal((await loginFrom(app, ip, 'restarter', PASSWORD)).status, 200, 'the address itself is not limited');
      assert.equal((await loginFrom(app, '203.0.113.41', 'pairuser', PASSWORD)).status, 200, 'nor the username elsewhere');
    });

    it('still knows the owner\'s address after a restart (same DATA_DIR or database)', async () => {
      assert.equal((await loginFrom(app, '203.0.113.60', 'restarter', PASSWORD)).status, 200);
      await app.restart();
      for (let i = 0; i < 5; i++) assert.equal((await loginFrom(app, `198.51.100.${60 + i}`, 'restarter', 'wrong-password')).status, 401);
      assertLimited(await loginFrom(app, '203.0.113.61', 'restarter', PASSWORD), 4007, /for this user;/);
      assert.equal((await loginFrom(app, '203.0.113.60', 'restarter', PASSWORD)).status, 200);
    });
  });

  describe(`login throttling with LOGIN_KNOWN_ADDRESS_DAYS=0 (${engine})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp(engine, { RATE_LIMIT_ENABLED: 'true', TRUST_PROXY: '1', LOGIN_KNOWN_ADDRESS_DAYS: '0', RATE_LIMIT_LOGIN_USER_BURST: '3' });
    });
    after(() => app.stop());

    it('limits the username from every address, known or not', async () => {
      assert.equal((await loginFrom(app, '203.0.113.80', 'admin', 'admin')).status, 200);
      for (const ip of ['198.51.100.80', '198.51.100.81', '198.51.100.82']) assert.equal((await loginFrom(app, ip, 'admin', 'nope-nope')).status, 401);
      assertLimited(await loginFrom(app, '203.0.113.80', 'admin', 'admin'), 4007, /for this user;/);
    });
  });
}
