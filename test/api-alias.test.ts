// /rest/v3 (Mango 4/5's version segment, node-mango-client's) answers exactly as /rest/latest:
// routes, login and CSRF, RQL lists, Location headers and the OpenAPI document in the prefix the
// request used, the WebSocket endpoints; /rest/v1 and /rest/v2 are not served.
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient } from './helpers/client.js';
import { capturingLogger, flushed } from './helpers/log.js';

const V3 = '/rest/v3';
const LATEST = '/rest/latest';

describe('/rest/v3 alias', function () {
  this.timeout(30_000);
  let app: TestApp;
  let admin: ApiClient;
  const capture = capturingLogger('info');

  before(async () => {
    app = await startTestApp('pglite', { LOG_LEVEL: 'info' }, capture.log);
    admin = new ApiClient(app.url);
    admin.seedCsrf();
    const login = await admin.post(`${V3}/login`, { username: 'admin', password: 'admin' });
    assert.equal(login.status, 200, login.text);
  });
  after(() => app?.stop());

  it('logs in under /rest/v3 and answers the same bodies as /rest/latest', async () => {
    const v3 = await admin.get(`${V3}/users/current`);
    const latest = await admin.get(`${LATEST}/users/current`);
    assert.equal(v3.status, 200, v3.text);
    assert.equal(v3.text, latest.text);
  });

  it('creates under /rest/v3 with a Location in /rest/v3, read back under both prefixes', async () => {
    const source = await admin.post(`${V3}/data-sources`, { xid: 'v3-src', name: 'v3 source', modelType: 'VIRTUAL' });
    assert.equal(source.status, 201, source.text);
    assert.equal(source.headers.get('location'), `${V3}/data-sources/v3-src`);
    const point = await admin.post(`${V3}/data-points`, {
      xid: 'v3-dp',
      name: 'v3 point',
      dataSourceXid: 'v3-src',
      pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', settable: true },
    });
    assert.equal(point.status, 201, point.text);
    assert.equal(point.headers.get('location'), `${V3}/data-points/v3-dp`);
    const user = await admin.post(`${V3}/users`, { username: 'v3user', password: 'v3-password-1', email: 'v3@example.com', permissions: ['user'] });
    assert.equal(user.status, 201, user.text);
    assert.equal(user.headers.get('location'), `${V3}/users/v3user`);
    const item = await admin.post(`${V3}/json-store`, { xid: 'v3-item', name: 'v3 item', jsonData: { a: 1 } });
    assert.equal(item.status, 201, item.text);
    assert.equal(item.headers.get('location'), `${V3}/json-store/v3-item`);
    // Created under /rest/latest: the Location stays in /rest/latest.
    const other = await admin.post(`${LATEST}/data-sources`, { xid: 'latest-src', name: 'latest source', modelType: 'VIRTUAL' });
    assert.equal(other.headers.get('location'), `${LATEST}/data-sources/latest-src`);
    assert.equal((await admin.get(`${LATEST}/data-points/v3-dp`)).text, (await admin.get(`${V3}/data-points/v3-dp`)).text);
  });

  it('takes RQL, values and their reads under /rest/v3', async () => {
    const list = await admin.get<{ total: number; items: { xid: string }[] }>(`${V3}/data-points?eq(xid,v3-dp)&limit(5)`);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.items.map((p) => p.xid),
      ['v3-dp'],
    );
    const written = await admin.post(`${V3}/point-values`, [{ xid: 'v3-dp', value: 4.5, timestamp: 1_700_000_000_000 }]);
    assert.equal(written.status, 200, written.text);
    const read = await admin.get<{ value: number }[]>(`${V3}/point-values/single/v3-dp?from=1699999999000&to=1700000001000`);
    assert.deepEqual(
      read.body.map((v) => v.value),
      [4.5],
    );
  });

  it('keeps the CSRF check: a session write under /rest/v3 without the header is refused', async () => {
    const res = await admin.post(`${V3}/data-sources`, { xid: 'no-csrf', name: 'x', modelType: 'VIRTUAL' }, { csrf: false });
    assert.equal(res.status, 403, res.text);
  });

  it('is case-insensitive like the routes, and refuses anonymous callers as /rest/latest does', async () => {
    assert.equal((await admin.get('/REST/V3/users/current')).status, 200);
    const anonymous = await new ApiClient(app.url).get(`${V3}/data-points`);
    assert.equal(anonymous.status, 401, anonymous.text);
    assert.equal(anonymous.text, (await new ApiClient(app.url).get(`${LATEST}/data-points`)).text);
  });

  it('serves the OpenAPI document with /rest/v3 paths at /rest/v3/openapi.json (public)', async () => {
    const anonymous = new ApiClient(app.url);
    const v3 = await anonymous.get<{ paths: Record<string, unknown> }>(`${V3}/openapi.json`);
    const latest = await anonymous.get<{ paths: Record<string, unknown> }>(`${LATEST}/openapi.json`);
    assert.equal(v3.status, 200, v3.text);
    const v3Paths = Object.keys(v3.body.paths);
    assert.ok(v3Paths.filter((p) => p.startsWith(`${V3}/`)).length > 20);
    // Paths outside the API (/health, /metrics) stay as they are.
    assert.deepEqual(
      v3Paths,
      Object.keys(latest.body.paths).map((p) => (p.startsWith(`${LATEST}/`) ? V3 + p.slice(LATEST.length) : p)),
    );
    assert.ok(!v3.text.includes(LATEST));
    assert.notEqual(v3.headers.get('etag'), latest.headers.get('etag'));
  });

  it('opens the point-value WebSocket under /rest/v3', async () => {
    const auth = { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` };
    const basic = await startTestApp('pglite', { BASIC_AUTH_ENABLED: 'true' });
    try {
      const ws = new WebSocket(`${basic.url.replace(/^http/, 'ws')}${V3}/websocket/point-value`, { headers: auth });
      const first = await new Promise<string>((resolve, reject) => {
        ws.once('open', () => ws.send(JSON.stringify({ xid: 'nope', eventTypes: ['REGISTERED'] })));
        ws.once('message', (data) => resolve(data.toString()));
        ws.once('error', reject);
      });
      ws.terminate();
      // An unknown point: the channel itself answered (a path it did not know would have been a 404).
      assert.match(first, /"status":"ERROR"/);
    } finally {
      await basic.stop();
    }
  });

  it('does not serve /rest/v1 or /rest/v2', async () => {
    for (const prefix of ['/rest/v1', '/rest/v2', '/rest/v30']) {
      const res = await admin.get(`${prefix}/users/current`);
      assert.equal(res.status, 404, `${prefix}: ${res.text}`);
    }
  });

  it('logs the path the client used', async () => {
    await admin.get(`${V3}/users/current`);
    await flushed();
    const line = capture.lines.filter((l) => l.msg === 'request').at(-1);
    assert.equal(line?.path, `${V3}/users/current`);
  });
});
