// The authenticated request path never waits on the metadata store once its caches are warm (user,
// session, token, point): shown by stalling every metadata query and reading on, past the caches'
// background refresh. /health/live touches no store; /health checks the stores at most once a second.
import assert from 'node:assert/strict';
import type { MetadataDb } from '../src/store/metadata/db.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient } from './helpers/client.js';

const API = '/rest/latest';

/** Holds every metadata query (and ping) until released; counts them. */
function stall(db: MetadataDb): { held: () => number; release: () => void } {
  const query = db.query.bind(db);
  const ping = db.ping.bind(db);
  const waiting: (() => void)[] = [];
  let stalled = true;
  let held = 0;
  const gate = () =>
    stalled
      ? new Promise<void>((resolve) => {
          held++;
          waiting.push(resolve);
        })
      : Promise.resolve();
  db.query = (async (text: string, values?: readonly unknown[]) => {
    await gate();
    return query(text, values);
  }) as MetadataDb['query'];
  db.ping = async () => {
    await gate();
    return ping();
  };
  return {
    held: () => held,
    release() {
      stalled = false;
      db.query = query;
      db.ping = ping;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

describe('the request path', () => {
  let app: TestApp;
  let session: ApiClient;
  let bearer: ApiClient;

  before(async () => {
    app = await startTestApp('pglite');
    session = new ApiClient(app.url);
    await session.login('admin', 'admin');
    await session.post(`${API}/data-sources`, { xid: 'path-src', name: 'Path', modelType: 'VIRTUAL', enabled: true });
    const point = await session.post(`${API}/data-points`, {
      xid: 'path-point',
      name: 'Path point',
      dataSourceXid: 'path-src',
      enabled: true,
      pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', settable: true },
    });
    assert.equal(point.status, 201, point.text);
    const put = await session.put(`${API}/point-values/path-point`, { dataType: 'NUMERIC', value: 42, timestamp: Date.now() });
    assert.equal(put.status, 200, put.text);
    const token = await session.post<{ token: string }>(`${API}/auth-tokens/create`, { expiry: Date.now() + 3_600_000 });
    assert.equal(token.status, 201, token.text);
    bearer = new ApiClient(app.url);
    bearer.authorization = `Bearer ${token.body.token}`;
  });
  after(() => app.stop());

  const reads = () => [
    session.get<{ value: number }[]>(`${API}/point-values/latest/path-point`),
    bearer.get<{ value: number }[]>(`${API}/point-values/latest/path-point`),
    session.get<{ username: string }>(`${API}/users/current`),
    bearer.get<{ username: string }>(`${API}/users/current`),
  ];

  it('answers warm authenticated reads with every metadata query held, also once the caches refresh', async () => {
    for (const res of await Promise.all(reads())) assert.equal(res.status, 200, res.text); // warm
    const db = app.service.services.db;
    const stalled = stall(db);
    try {
      // Past the caches' 2 s refresh age: stale entries are answered while their refresh waits.
      const until = Date.now() + 2_500;
      let rounds = 0;
      while (Date.now() < until) {
        const answers = await Promise.race([
          Promise.all(reads()),
          new Promise<'stalled'>((resolve) => setTimeout(() => resolve('stalled'), 1_000)),
        ]);
        assert.notEqual(answers, 'stalled', `round ${rounds}: a read waited on the metadata store`);
        const [latestS, latestB, meS, meB] = answers as Awaited<ReturnType<typeof reads>[number]>[];
        assert.equal((latestS!.body as { value: number }[])[0]!.value, 42);
        assert.equal((latestB!.body as { value: number }[])[0]!.value, 42);
        assert.equal((meS!.body as { username: string }).username, 'admin');
        assert.equal((meB!.body as { username: string }).username, 'admin');
        rounds++;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(rounds >= 10, `${rounds} rounds`);
      assert.ok(stalled.held() > 0, 'the caches did try to refresh in the background');
      const live = await new ApiClient(app.url).get<{ status: string }>('/health/live');
      assert.equal(live.status, 200);
      assert.deepEqual(live.body, { status: 'ok' });
    } finally {
      stalled.release();
    }
  });

  it('still refuses a session that was ended, at once, while its cache entry was warm', async () => {
    const other = new ApiClient(app.url);
    await other.login('admin', 'admin');
    assert.equal((await other.get(`${API}/users/current`)).status, 200);
    assert.equal((await other.post(`${API}/logout`)).status, 204);
    assert.equal((await other.get(`${API}/users/current`)).status, 401);
  });

  it('checks the stores for /health at most once a second, however often it is asked', async () => {
    const db = app.service.services.db;
    const ping = db.ping.bind(db);
    let pings = 0;
    db.ping = () => {
      pings++;
      return ping();
    };
    try {
      await new Promise((r) => setTimeout(r, 1_100)); // an earlier answer has aged out
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 50 }, () => new ApiClient(app.url).get<{ status: string }>('/health')));
      for (const a of answers) assert.equal(a.body.status, 'ok');
      const elapsed = Date.now() - started;
      assert.ok(pings <= Math.ceil(elapsed / 1000), `${pings} pings in ${elapsed} ms`);
      assert.ok(pings >= 1);
      await new Promise((r) => setTimeout(r, 1_100));
      await new ApiClient(app.url).get('/health');
      assert.equal(pings, 2, 'a second later /health checks again');
    } finally {
      db.ping = ping;
    }
  });
});
