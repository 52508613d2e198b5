// PostgreSQL going away under a running service: requests that need it are answered 503 with the error
// body and Retry-After (never a 500), /health says degraded, and once the server is back the next request
// succeeds with nothing lost. The outage is real: the service reaches PostgreSQL through a TCP relay that
// the test cuts (every connection reset, new ones refused) and restores on the same port.
import assert from 'node:assert/strict';
import pg from 'pg';
import { isStoreUnreachable } from '../src/store/unavailable.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError } from './helpers/assertions.js';
import { ApiClient, loggedIn } from './helpers/client.js';
import { testDatabaseUrl } from './helpers/engines.js';
import { Relay } from './helpers/relay.js';
import { eventually, freePort } from './helpers/wait.js';

const API = '/rest/latest';

const databaseUrl = testDatabaseUrl;
if (databaseUrl === undefined) {
  describe('store outage (PostgreSQL)', () => {
    it('is skipped: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it', function () {
      console.log('  (store outage suite skipped: it needs TEST_DATABASE_URL)');
      this.skip();
    });
  });
} else {
  describe('store outage (PostgreSQL)', function () {
    this.timeout(60_000);
    let relay: Relay;
    let app: TestApp;
    let admin: ApiClient;
    let bearer: ApiClient;

    before(async () => {
      const server = new URL(databaseUrl);
      relay = new Relay(await freePort(), { host: server.hostname, port: Number(server.port || 5432) });
      await relay.open();
      const viaRelay = new URL(databaseUrl);
      viaRelay.host = `127.0.0.1:${relay.port}`;
      app = await startTestApp('postgresql', { DATABASE_URL: viaRelay.toString() });
      admin = await loggedIn(app.url, 'admin', 'admin');
      const token = await admin.post<{ token: string }>(`${API}/auth-tokens/create`, {});
      assert.equal(token.status, 201, token.text);
      bearer = new ApiClient(app.url);
      bearer.authorization = `Bearer ${token.body.token}`;
      const created = await admin.post(`${API}/data-sources`, { xid: 'outage-kept', name: 'Kept through the outage', modelType: 'VIRTUAL' });
      assert.equal(created.status, 201, created.text);
    });

    after(async () => {
      await relay?.cut();
      await relay?.open().catch(() => undefined);
      await app?.stop();
      await relay?.cut();
    });

    /** 503, the error body, Retry-After, and the same wording whatever the driver said. */
    function assertUnavailable(res: Awaited<ReturnType<ApiClient['get']>>): void {
      const body = assertError(res, 503, 5000, 'GENERIC_500');
      assert.equal(body.message, 'The metadata store is unavailable; try again shortly');
      assert.equal(res.headers.get('retry-after'), '5');
      assert.doesNotMatch(res.text, /ECONN|127\.0\.0\.1|select|postgres/i);
    }

    it('answers 503 with the error body while PostgreSQL is unreachable, then recovers with nothing lost', async () => {
      await relay.cut();
      assertUnavailable(await admin.get(`${API}/data-sources/outage-kept`));
      assertUnavailable(await bearer.get(`${API}/data-points`));
      assertUnavailable(await admin.post(`${API}/data-sources`, { xid: 'outage-refused', name: 'Written during the outage', modelType: 'VIRTUAL' }));
      const login = new ApiClient(app.url);
      login.seedCsrf();
      assertUnavailable(await login.post(`${API}/login`, { username: 'admin', password: 'admin' }));
      // /health checks the stores at most once a second: within that it may still give the last answer.
      const health = await eventually('/health says degraded', async () => {
        const res = await new ApiClient(app.url).get<{ status: string; metadata: { ok: boolean }; values: { ok: boolean } }>('/health');
        return res.status === 503 ? res : undefined;
      }, 3_000);
      assert.equal(health.body.status, 'degraded');
      assert.equal(health.body.metadata.ok, false);
      assert.equal(health.body.values.ok, true, 'the value store is still there');

      await relay.open();
      // The first request after the server is back succeeds: the pool reconnects.
      const kept = await admin.get<{ name: string }>(`${API}/data-sources/outage-kept`);
      assert.equal(kept.status, 200, kept.text);
      assert.equal(kept.body.name, 'Kept through the outage');
      assert.equal((await bearer.get(`${API}/data-points`)).status, 200);
      assertError(await admin.get(`${API}/data-sources/outage-refused`), 404, -1);
      const after = await admin.post(`${API}/data-sources`, { xid: 'outage-after', name: 'Written after', modelType: 'VIRTUAL' });
      assert.equal(after.status, 201, after.text);
      await eventually('/health says ok again', async () => ((await new ApiClient(app.url).get('/health')).status === 200 ? true : undefined), 3_000);
    });

    it('recovers when the server ends the service\'s connections (an administrator or a restart)', async () => {
      const control = new pg.Client({ connectionString: databaseUrl });
      await control.connect();
      try {
        const ended = await control.query<{ n: number }>(
          "select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = 'device-data-service' and client_port = any($1::int[])",
          [relay.upstreamPorts()],
        );
        assert.ok(ended.rows[0]!.n >= 1, 'the service held connections to end');
      } finally {
        await control.end();
      }
      // Whatever connections were ended, the next requests are answered normally.
      for (let i = 0; i < 3; i++) assert.equal((await admin.get(`${API}/data-sources/outage-kept`)).status, 200);
    });
  });
}

describe('isStoreUnreachable', () => {
  it('recognises socket errors, connection SQLSTATEs and lost connections, through causes', () => {
    const coded = (code: string) => Object.assign(new Error('x'), { code });
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', '08006', '08001', '57P01', '57P03', '53300']) {
      assert.ok(isStoreUnreachable(coded(code)), code);
    }
    assert.ok(isStoreUnreachable(new Error('Connection terminated unexpectedly')));
    assert.ok(isStoreUnreachable(new Error('timeout exceeded when trying to connect')));
    assert.ok(isStoreUnreachable(new TypeError('fetch failed', { cause: coded('ECONNREFUSED') })));
    assert.ok(isStoreUnreachable(Object.assign(new AggregateError([coded('ECONNREFUSED'), coded('EHOSTUNREACH')]), {})));
  });

  it('leaves every other failure alone: constraint violations, syntax errors, bugs', () => {
    const coded = (code: string) => Object.assign(new Error('x'), { code });
    for (const err of [coded('23505'), coded('42601'), coded('22021'), new TypeError('undefined is not a function'), 'text', null, undefined]) {
      assert.equal(isStoreUnreachable(err), false, String(err));
    }
    assert.equal(isStoreUnreachable(new AggregateError([coded('ECONNREFUSED'), coded('23505')])), false);
  });
});
