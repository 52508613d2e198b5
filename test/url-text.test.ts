// The path and query check (http/url-text.ts) alone, in front of a handler that echoes what Koa
// decoded: good percent-encoding passes untouched, anything else is a 400 naming where.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import { errorMiddleware } from '../src/http/errors.js';
import { urlText } from '../src/http/url-text.js';

describe('urlText middleware', () => {
  let server: Server;
  let base: string;

  before(async () => {
    const app = new Koa();
    app.silent = true;
    app.use(errorMiddleware(pino({ level: 'silent' })));
    // /rql stands for an RQL list route: its query string is the RQL parser's to refuse.
    app.use(urlText((method, path) => method === 'GET' && path === '/rql'));
    app.use((ctx) => {
      ctx.body = { path: decodeURIComponent(ctx.path), query: ctx.query };
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  async function get(pathAndQuery: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(base + pathAndQuery);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it("leaves an RQL route's query string to the RQL parser, but still checks its path", async () => {
    assert.equal((await get('/rql?eq(name,%00)&match(name,50%)')).status, 200);
    assert.equal((await get('/rql/%00?eq(name,a)')).status, 400);
    assert.equal((await get('/other?eq(name,%00)')).status, 400);
  });

  it('passes good UTF-8 percent-encoding, +, empty values and RQL terms through unchanged', async () => {
    const res = await get('/a/%C3%A9%F0%9F%98%80%2F%2E?x=%C3%A9&y=a+b&z=&eq(name,abc)&limit(10)&sort(-name)');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { path: '/a/é😀/.', query: { x: 'é', y: 'a b', z: '', 'eq(name,abc)': '', 'limit(10)': '', 'sort(-name)': '' } });
    assert.equal((await get('/?')).status, 200);
    assert.equal((await get('/plain/path')).status, 200);
  });

  const refusals: [string, string][] = [
    ['/a/%00', 'Invalid path: must not contain the character U+0000'],
    ['/a/b%00c/d', 'Invalid path: must not contain the character U+0000'],
    ['/a/%ED%B0%80', 'Invalid path: malformed percent-encoding (not UTF-8)'],
    ['/a/%ED%A0%BD%ED%B8%80', 'Invalid path: malformed percent-encoding (not UTF-8)'], // a pair, each encoded alone (CESU-8)
    ['/a/%E0%A4%A', 'Invalid path: malformed percent-encoding (not UTF-8)'],
    ['/a/%FF', 'Invalid path: malformed percent-encoding (not UTF-8)'],
    ['/a/%C0%80', 'Invalid path: malformed percent-encoding (not UTF-8)'], // an overlong U+0000
    ['/a/100%', 'Invalid path: malformed percent-encoding (not UTF-8)'],
    ['/a?from=%00', 'Invalid query parameter from: must not contain the character U+0000'],
    ['/a?ok=1&to=x%ED%B0%80', 'Invalid query parameter to: malformed percent-encoding (not UTF-8)'],
    ['/a?na%C3%A9me=%00', 'Invalid query parameter naéme: must not contain the character U+0000'],
    ['/a?na+me=%00', 'Invalid query parameter na me: must not contain the character U+0000'],
    ['/a?x%00=1', 'Invalid query parameter x%00: must not contain the character U+0000'],
    ['/a?eq(name,%00)', 'Invalid query parameter eq(name,%00): must not contain the character U+0000'],
    ['/a?match(name,50%)', 'Invalid query parameter match(name,50%): malformed percent-encoding (not UTF-8)'],
  ];
  for (const [url, message] of refusals) {
    it(`refuses ${url} with 400 (4005): "${message}"`, async () => {
      const res = await get(url);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { serviceStatusCode: 4005, serviceStatusName: 'BAD_REQUEST', message, localizedMessage: message });
    });
  }

  it('quotes at most 100 characters of a parameter name', async () => {
    const name = 'n'.repeat(500);
    const res = await get(`/a?${name}=%00`);
    assert.equal(res.body.message, `Invalid query parameter ${'n'.repeat(100)}…: must not contain the character U+0000`);
  });
});
