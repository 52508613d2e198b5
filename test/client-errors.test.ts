// Requests Node's HTTP parser or the URL limit refuse before the app runs: each is answered with the
// contract's error body (414 / 431 / 400, code 4005), on a bare server through raw sockets (what the
// bytes on the wire are) and on the real service through fetch (what a client sees).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from '../src/config.js';
import { answerClientErrors, type ClientLimits } from '../src/http/client-errors.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError } from './helpers/assertions.js';
import { ApiClient, loggedIn } from './helpers/client.js';

const DEFAULTS: ClientLimits = loadConfig({}).http;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Every byte the server sent before it closed. */
  raw: string;
}

/**
 * Sends `requests` on one connection and reads until the server closes it. The client ends its side
 * after sending unless `lingering` (then only the server's linger timer closes the connection).
 */
function rawExchange(port: number, requests: string[], lingering = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(raw));
    socket.write(requests.join(''));
    if (!lingering) socket.end();
  });
}

/** The first response in `raw` (Content-Length framed). */
function parseAnswer(raw: string): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no complete response head in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length']);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: raw.slice(end + 4, end + 4 + length), raw };
}

function assertEnvelope(answer: RawAnswer, status: number, message: RegExp): void {
  assert.equal(answer.status, status, answer.raw.slice(0, 300));
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(answer.headers.connection, 'close');
  assert.equal(answer.headers['x-content-type-options'], 'nosniff');
  assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.body));
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['localizedMessage', 'message', 'serviceStatusCode', 'serviceStatusName']);
  assert.equal(body.serviceStatusCode, 4005);
  assert.equal(body.serviceStatusName, 'BAD_REQUEST');
  assert.match(String(body.message), message);
  assert.equal(body.localizedMessage, body.message);
}

const get = (target: string, headers = '') => `GET ${target} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`;

describe('client errors (bare server)', () => {
  let server: Server;
  let port: number;

  before(async () => {
    server = createServer({ maxHeaderSize: DEFAULTS.maxHeaderBytes }, (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.end(`url ${req.url?.length ?? 0}`);
    });
    answerClientErrors(server, DEFAULTS);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('has the documented defaults: 64 KiB of request line and headers, 16 KiB of URL', () => {
    assert.deepEqual(DEFAULTS, { maxHeaderBytes: 65_536, maxUrlBytes: 16_384 });
  });

  it('serves a 12 kB URL, within the URL limit', async () => {
    const target = `/points?${'a'.repeat(12_000)}`;
    const answer = parseAnswer(await rawExchange(port, [get(target)]));
    assert.equal(answer.status, 200);
    assert.equal(answer.body, `url ${target.length}`);
  });

  it('serves a URL of exactly MAX_URL_BYTES and refuses one byte more with 414', async () => {
    const at = `/${'a'.repeat(DEFAULTS.maxUrlBytes - 1)}`;
    assert.equal(parseAnswer(await rawExchange(port, [get(at)])).status, 200);
    assertEnvelope(parseAnswer(await rawExchange(port, [get(`${at}a`)])), 414, /URL exceeds 16384 bytes/);
  });

  it('answers a 20 kB URL with 414 and the error body, then closes the connection', async () => {
    // Keep-alive asked for, and a second request queued behind: the connection still closes after the 414.
    const raw = await rawExchange(port, [get(`/points?${'a'.repeat(20_000)}`), get('/next')]);
    assertEnvelope(parseAnswer(raw), 414, /URL exceeds/);
    assert.equal(raw.split('HTTP/1.1 ').length - 1, 1, 'exactly one response');
  });

  it('answers headers over the header limit with 431 and the error body, once, however much more the client sends', async () => {
    const raw = await rawExchange(port, [get('/', `X-Padding: ${'p'.repeat(200_000)}\r\n`)], true);
    assertEnvelope(parseAnswer(raw), 431, /headers exceed 65536 bytes/);
    assert.equal(raw.split('HTTP/1.1 ').length - 1, 1, 'exactly one response');
  });

  it('answers a URL beyond the header limit itself with 431 (the parser counts the request line with the headers)', async () => {
    assertEnvelope(parseAnswer(await rawExchange(port, [get(`/${'a'.repeat(70_000)}`)])), 431, /headers exceed/);
  });

  it('answers an oversized request that follows a served one on a kept-alive connection', async () => {
    const raw = await rawExchange(port, [get('/first'), get('/', `X-Padding: ${'p'.repeat(70_000)}\r\n`)]);
    const first = parseAnswer(raw);
    assert.equal(first.status, 200);
    assert.equal(first.body, 'url 6');
    assertEnvelope(parseAnswer(raw.slice(raw.indexOf('HTTP/1.1 ', 1))), 431, /headers exceed/);
  });

  it('answers a malformed request with 400 and the error body', async () => {
    assertEnvelope(parseAnswer(await rawExchange(port, ['GET / HTTP/1.1\r\nHost: localhost\r\nNot a header\r\n\r\n'])), 400, /Malformed/);
    assertEnvelope(parseAnswer(await rawExchange(port, ['NOT-HTTP\r\n\r\n'])), 400, /Malformed/);
  });
});

describe('client errors (service)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;

  before(async () => {
    app = await startTestApp();
    admin = await loggedIn(app.url, 'admin', 'admin');
  });

  after(async () => {
    await app?.stop();
  });

  /** An RQL query string of about `bytes` bytes that matches no point. */
  function longRql(bytes: number): string {
    const terms: string[] = [];
    for (let i = 0; terms.join(',').length < bytes; i++) terms.push(`eq(xid,DP_missing_${i})`);
    return `or(${terms.join(',')})`;
  }

  it('answers an ordinary 12 kB RQL query', async () => {
    const res = await admin.get<{ items: unknown[]; total: number }>(`/rest/latest/data-points?${longRql(12_000)}`);
    assert.equal(res.status, 200, res.text.slice(0, 300));
    assert.deepEqual(res.body, { items: [], total: 0 });
  });

  it('answers a 20 kB RQL query with 414 and the error body', async () => {
    assertError(await admin.get(`/rest/latest/data-points?${longRql(20_000)}`), 414, 4005, 'BAD_REQUEST');
  });

  it('answers a huge header with 431 and the error body', async () => {
    const res = await admin.get('/rest/latest/data-points', { headers: { 'x-padding': 'p'.repeat(100_000) } });
    assertError(res, 431, 4005, 'BAD_REQUEST');
  });

  it('keeps serving after refusing', async () => {
    assert.equal((await admin.get('/rest/latest/users/current')).status, 200);
  });
});

describe('client limits config', () => {
  it('takes MAX_HEADER_BYTES and MAX_URL_BYTES', () => {
    assert.deepEqual(loadConfig({ MAX_HEADER_BYTES: '131072', MAX_URL_BYTES: '65536' }).http, { maxHeaderBytes: 131_072, maxUrlBytes: 65_536 });
  });

  it('refuses values out of range, non-integers, and a URL limit above the header limit, naming the variable', () => {
    const refused: [Record<string, string>, string][] = [
      [{ MAX_HEADER_BYTES: '4096' }, 'MAX_HEADER_BYTES'],
      [{ MAX_HEADER_BYTES: '2000000' }, 'MAX_HEADER_BYTES'],
      [{ MAX_HEADER_BYTES: '64k' }, 'MAX_HEADER_BYTES'],
      [{ MAX_URL_BYTES: '100' }, 'MAX_URL_BYTES'],
      [{ MAX_URL_BYTES: '70000' }, 'MAX_URL_BYTES'],
      [{ MAX_HEADER_BYTES: '16384', MAX_URL_BYTES: '20000' }, 'MAX_URL_BYTES'],
    ];
    for (const [env, variable] of refused) {
      assert.throws(() => loadConfig(env), (err: unknown) => err instanceof ConfigError && err.message.includes(variable), JSON.stringify(env));
    }
  });
});
