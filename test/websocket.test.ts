// The WebSocket endpoints on the real service with a real `ws` client: the handshake (401, 403 for
// a foreign Origin with the cookie), subscriptions and their live events, errors, the slow-consumer
// bound, the heartbeat, and the close codes when credentials end.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser, loggedIn } from './helpers/client.js';
import { capturingLogger, flushed } from './helpers/log.js';

const API = '/rest/latest';
const PV_PATH = `${API}/websocket/point-value`;
const PASSWORD = 'secret-password-1';
const SOURCE = 'ws-src';
const ALL_EVENTS = ['UPDATE', 'CHANGE', 'SET', 'REGISTERED', 'TERMINATE'];

interface ValueShape {
  dataType: string;
  value: unknown;
  timestamp: number;
  annotation: string | null;
}

interface Message {
  status: 'OK' | 'ERROR';
  payload: {
    xid?: string;
    event?: string;
    value?: ValueShape | null;
    enabled?: boolean;
    unreliable?: boolean;
    type?: string;
    message?: string;
  };
}

interface Closed {
  code: number;
  reason: string;
}

/** A connected client that keeps every message until a test takes it. */
class Client {
  private readonly inbox: Message[] = [];
  private waiter: (() => void) | undefined;
  readonly closed: Promise<Closed>;
  /** The TCP socket under the WebSocket, to stop reading from it. */
  tcp!: Socket;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.inbox.push(JSON.parse(data.toString()) as Message);
      this.waiter?.();
    });
    ws.on('upgrade', (res: IncomingMessage) => (this.tcp = res.socket as Socket));
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  send(body: unknown): void {
    this.ws.send(typeof body === 'string' ? body : JSON.stringify(body));
  }

  subscribe(xid: string, eventTypes: string[] = ALL_EVENTS): void {
    this.send({ xid, eventTypes });
  }

  /** The first waiting message that matches (removed from the inbox); fails after `ms`. */
  async next(match: (m: Message) => boolean = () => true, ms = 5_000): Promise<Message> {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = this.inbox.findIndex(match);
      if (i >= 0) return this.inbox.splice(i, 1)[0]!;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching message within ${ms} ms; inbox: ${JSON.stringify(this.inbox).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Messages about one point received so far (left in the inbox). */
  about(xid: string): Message[] {
    return this.inbox.filter((m) => m.payload.xid === xid);
  }

  /** Subscribes to `marker` and waits for its REGISTERED: everything sent before it has arrived. */
  async sync(marker: string): Promise<void> {
    this.subscribe(marker, ['REGISTERED']);
    await this.next((m) => m.payload.xid === marker && m.payload.event === 'REGISTERED');
    this.send({ xid: marker, eventTypes: [] });
  }

  close(): void {
    this.ws.terminate();
  }
}

interface EventMessage {
  status: 'OK';
  payload: { action: string; event: { id: number; dataPointXid: string | null; active: boolean; acknowledged: boolean; message: string } };
}

type Upgrade = { client: Client } | { status: number; body: Record<string, unknown> };

function connect(app: TestApp, headers: Record<string, string>, path = PV_PATH, options: WebSocket.ClientOptions = {}): Promise<Upgrade> {
  const ws = new WebSocket(app.url.replace(/^http/, 'ws') + path, { headers, ...options });
  const client = new Client(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ client }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    ws.once('error', reject);
  });
}

async function open(app: TestApp, headers: Record<string, string>, options?: WebSocket.ClientOptions): Promise<Client> {
  const result = await connect(app, headers, PV_PATH, options);
  if (!('client' in result)) throw new Error(`upgrade refused: ${result.status} ${JSON.stringify(result.body)}`);
  return result.client;
}

async function refused(app: TestApp, headers: Record<string, string>, path = PV_PATH): Promise<{ status: number; body: Record<string, unknown> }> {
  const result = await connect(app, headers, path);
  if ('client' in result) {
    result.client.close();
    throw new Error('upgrade was accepted');
  }
  return result;
}

function cookieHeader(c: ApiClient): Record<string, string> {
  return { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
}

async function tokenFor(c: ApiClient, expiry?: number): Promise<string> {
  const res = await c.post<{ token: string }>(`${API}/auth-tokens/create`, expiry === undefined ? {} : { expiry });
  assert.equal(res.status, 201, res.text);
  return res.body.token;
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

describe('WebSocket endpoints', function () {
  this.timeout(30_000);
  let app: TestApp;
  let admin: ApiClient;
  let viewer: ApiClient;
  let seq = 0;
  const clients: Client[] = [];
  const track = (c: Client) => (clients.push(c), c);
  const unique = (prefix: string) => `${prefix}-${++seq}`;

  async function createPoint(extra: Record<string, unknown> = {}, dataType = 'NUMERIC'): Promise<string> {
    const xid = unique('ws-dp');
    const res = await admin.post(`${API}/data-points`, {
      xid,
      name: xid,
      dataSourceXid: SOURCE,
      pointLocator: { dataType, settable: true, changeType: 'NO_CHANGE' },
      ...extra,
    });
    assert.equal(res.status, 201, res.text);
    return xid;
  }

  async function post(values: { xid: string; value: unknown; timestamp: number }[]): Promise<void> {
    const res = await admin.post(`${API}/point-values`, values);
    assert.equal(res.status, 200, res.text);
  }

  const adminSocket = async () => track(await open(app, bearer(await tokenFor(admin))));

  before(async () => {
    app = await startTestApp();
    admin = await loggedIn(app.url, 'admin', 'admin');
    await createUser(admin, 'viewer', PASSWORD);
    viewer = await loggedIn(app.url, 'viewer', PASSWORD);
    const res = await admin.post(`${API}/data-sources`, { xid: SOURCE, name: 'WebSocket device', modelType: 'VIRTUAL', enabled: true });
    assert.equal(res.status, 201, res.text);
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  after(() => app?.stop());

  describe('handshake', () => {
    it('refuses an upgrade without credentials with 401 and the error body', async () => {
      const { status, body } = await refused(app, {});
      assert.equal(status, 401);
      assert.deepEqual(body, {
        serviceStatusCode: 4008,
        serviceStatusName: 'GENERIC_AUTHENTICATION_FAILED',
        message: 'Authentication required',
        localizedMessage: 'Authentication required',
      });
    });

    it('refuses a bad token and a stale session cookie with 401', async () => {
      const bad = await refused(app, bearer('not.a.token'));
      assert.equal(bad.status, 401);
      assert.equal(bad.body.serviceStatusCode, 4008);
      const stale = await refused(app, { cookie: 'DDS_SESSION=abcdefghijklmnopqrstuvwxyz0123456789' });
      assert.equal(stale.status, 401);
    });

    it('refuses other WebSocket paths with 404', async () => {
      const { status, body } = await refused(app, bearer(await tokenFor(admin)), `${API}/websocket/nothing-here`);
      assert.equal(status, 404);
      assert.equal(body.serviceStatusCode, -1);
    });

    it('accepts the session cookie, with no Origin or this host as Origin', async () => {
      track(await open(app, cookieHeader(viewer)));
      track(await open(app, { ...cookieHeader(viewer), origin: app.url }));
    });

    it('refuses the session cookie from a foreign Origin with 403 (cross-site WebSocket hijacking)', async () => {
      const { status, body } = await refused(app, { ...cookieHeader(viewer), origin: 'https://evil.example' });
      assert.equal(status, 403);
      assert.equal(body.serviceStatusCode, 4004);
    });

    it('accepts a Bearer token, from any Origin', async () => {
      track(await open(app, { ...bearer(await tokenFor(viewer)), origin: 'https://elsewhere.example' }));
    });
  });

  describe('point values', () => {
    it('answers a subscription with REGISTERED and the current value', async () => {
      const xid = await createPoint();
      const now = Date.now();
      await post([
        { xid, value: 1.5, timestamp: now - 2000 },
        { xid, value: 2.5, timestamp: now - 1000 },
      ]);
      const c = track(await open(app, cookieHeader(viewer)));
      c.subscribe(xid);
      const m = await c.next();
      assert.deepEqual(m, {
        status: 'OK',
        payload: { xid, event: 'REGISTERED', value: { dataType: 'NUMERIC', value: 2.5, timestamp: now - 1000, annotation: null }, enabled: true, unreliable: false },
      });
    });

    it('REGISTERED carries value null for a point without values, and enabled false for a disabled point', async () => {
      const xid = await createPoint({ enabled: false });
      const c = await adminSocket();
      c.subscribe(xid);
      assert.deepEqual((await c.next()).payload, { xid, event: 'REGISTERED', value: null, enabled: false, unreliable: false });
    });

    it('sends UPDATE for every new value and CHANGE when it differs, to every subscriber', async () => {
      const xid = await createPoint();
      const a = await adminSocket();
      const b = track(await open(app, cookieHeader(viewer)));
      for (const c of [a, b]) {
        c.subscribe(xid, ['UPDATE', 'CHANGE']);
        await c.next((m) => m.payload.event === 'REGISTERED');
      }
      const t = Date.now();
      await post([
        { xid, value: 5, timestamp: t + 1 },
        { xid, value: 5, timestamp: t + 2 },
        { xid, value: 6, timestamp: t + 3 },
      ]);
      await post([{ xid, value: 1, timestamp: t - 60_000 }]); // older than the latest: history only
      for (const c of [a, b]) {
        const got: string[] = [];
        for (let i = 0; i < 5; i++) {
          const m = await c.next();
          got.push(`${m.payload.event}@${m.payload.value!.timestamp - t}=${String(m.payload.value!.value)}`);
        }
        assert.deepEqual(got, ['UPDATE@1=5', 'CHANGE@1=5', 'UPDATE@2=5', 'UPDATE@3=6', 'CHANGE@3=6']);
        await c.sync(await createPoint());
        assert.deepEqual(c.about(xid), []);
      }
    });

    it('sends SET for a value set through PUT', async () => {
      const xid = await createPoint();
      const c = await adminSocket();
      c.subscribe(xid, ['SET']);
      await c.next((m) => m.payload.event === 'REGISTERED');
      const timestamp = Date.now();
      const res = await admin.put(`${API}/point-values/${xid}`, { dataType: 'NUMERIC', value: 42, timestamp, annotation: 'by hand' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual((await c.next()).payload, {
        xid,
        event: 'SET',
        value: { dataType: 'NUMERIC', value: 42, timestamp, annotation: 'by hand' },
        enabled: true,
        unreliable: false,
      });
    });

    it('answers NOT_FOUND and PERMISSION_DENIED errors and keeps the socket open', async () => {
      const hidden = await createPoint({ readPermission: [] });
      const c = track(await open(app, cookieHeader(viewer)));
      c.subscribe('no-such-point');
      const notFound = await c.next();
      assert.equal(notFound.status, 'ERROR');
      assert.equal(notFound.payload.type, 'NOT_FOUND');
      assert.match(notFound.payload.message!, /no-such-point/);
      c.subscribe(hidden);
      const denied = await c.next();
      assert.deepEqual(Object.keys(denied.payload).sort(), ['message', 'type']);
      assert.equal(denied.payload.type, 'PERMISSION_DENIED');
      await c.sync(await createPoint());
    });

    it('answers a malformed message with an ERROR and stays open', async () => {
      const c = await adminSocket();
      for (const bad of ['{not json', '[]', '{"xid": 3, "eventTypes": []}', '{"xid": "x", "eventTypes": ["SOMETIMES"]}']) {
        c.send(bad);
        const m = await c.next();
        assert.equal(m.status, 'ERROR', bad);
        assert.equal(m.payload.type, 'SERVER_ERROR');
      }
      await c.sync(await createPoint());
      assert.equal(c.ws.readyState, WebSocket.OPEN);
    });

    it('stops sending after an unsubscribe (empty eventTypes)', async () => {
      const xid = await createPoint();
      const c = await adminSocket();
      c.subscribe(xid, ['UPDATE']);
      await c.next((m) => m.payload.event === 'REGISTERED');
      c.send({ xid, eventTypes: [] });
      await c.sync(await createPoint()); // the unsubscribe has been handled
      await post([{ xid, value: 1, timestamp: Date.now() }]);
      await c.sync(await createPoint());
      assert.deepEqual(c.about(xid), []);
      assert.equal(app.service.websockets.connectionCount, 1);
    });

    it('sends TERMINATE when the point is disabled (and REGISTERED when enabled again), and ends the subscription when it is deleted', async () => {
      const xid = await createPoint();
      const c = await adminSocket();
      c.subscribe(xid, ['REGISTERED', 'TERMINATE', 'UPDATE']);
      await c.next((m) => m.payload.event === 'REGISTERED');
      const point = (await admin.get<Record<string, unknown>>(`${API}/data-points/${xid}`)).body;
      assert.equal((await admin.put(`${API}/data-points/${xid}`, { ...point, enabled: false })).status, 200);
      assert.deepEqual(await c.next(), { status: 'OK', payload: { xid, event: 'TERMINATE', value: null, enabled: false, unreliable: false } });
      assert.equal((await admin.put(`${API}/data-points/${xid}`, { ...point, enabled: true })).status, 200);
      assert.deepEqual((await c.next()).payload, { xid, event: 'REGISTERED', value: null, enabled: true, unreliable: false });
      assert.equal((await admin.delete(`${API}/data-points/${xid}`)).status, 200);
      assert.deepEqual((await c.next()).payload, { xid, event: 'TERMINATE', value: null, enabled: false, unreliable: false });
    });

    it('drops a slow consumer (1013) instead of buffering for it', async () => {
      const xid = await createPoint({}, 'ALPHANUMERIC');
      const c = await adminSocket();
      c.subscribe(xid, ['UPDATE']);
      await c.next((m) => m.payload.event === 'REGISTERED');
      const before = app.service.websockets.connectionCount;
      c.tcp.pause(); // the client stops reading: the server's send buffer fills
      const text = 'x'.repeat(32 * 1024);
      let t = Date.now();
      for (let round = 0; round < 20 && app.service.websockets.connectionCount === before; round++) {
        await post(Array.from({ length: 100 }, () => ({ xid, value: text, timestamp: ++t })));
      }
      assert.equal(app.service.websockets.connectionCount, before - 1, 'the slow consumer was not dropped');
      c.tcp.resume();
      assert.equal((await c.closed).code, 1013);
    });

    it('cuts a client that does not answer pings', async () => {
      const c = track(await open(app, bearer(await tokenFor(admin)), { autoPong: false }));
      const answering = await adminSocket();
      const pinged = new Promise((resolve) => answering.ws.once('ping', resolve));
      await app.service.websockets.heartbeat();
      await pinged;
      await answering.sync(await createPoint()); // its pong went out before this, on the same stream
      await app.service.websockets.heartbeat();
      assert.equal((await c.closed).code, 1006);
      assert.equal(answering.ws.readyState, WebSocket.OPEN);
    });
  });

  describe('events', () => {
    /** Raises a DATA_POINT event on the point through the event service (as a detector would). */
    async function raise(xid: string, message: string): Promise<number> {
      const services = app.service.services;
      const point = await services.dataPoints.findByXid(xid);
      const event = await services.events.raise({ alarmLevel: 'URGENT', eventType: 'DATA_POINT', message, dataPointId: point!.id, dataPointXid: xid });
      return event.id;
    }

    it('pushes RAISED, ACKNOWLEDGED and RETURN_TO_NORMAL of the events the user may read, and only those', async () => {
      const readable = await createPoint();
      const hidden = await createPoint({ readPermission: [] });
      const asViewer = track(await connectEvents(cookieHeader(viewer)));
      const asAdmin = track(await connectEvents(bearer(await tokenFor(admin))));
      await raise(hidden, 'hidden alarm');
      const id = await raise(readable, 'visible alarm');
      assert.equal((await admin.put(`${API}/events/acknowledge/${id}`)).status, 200);
      await app.service.services.events.returnToNormal(id, 'RETURN_TO_NORMAL');

      const seen = async (c: Client, n: number) => {
        const got: string[] = [];
        for (let i = 0; i < n; i++) {
          const m = (await c.next()) as unknown as EventMessage;
          assert.equal(m.status, 'OK');
          got.push(`${m.payload.action}:${m.payload.event.message}`);
        }
        return got;
      };
      assert.deepEqual(await seen(asViewer, 3), ['RAISED:visible alarm', 'ACKNOWLEDGED:visible alarm', 'RETURN_TO_NORMAL:visible alarm']);
      assert.deepEqual(await seen(asAdmin, 4), ['RAISED:hidden alarm', 'RAISED:visible alarm', 'ACKNOWLEDGED:visible alarm', 'RETURN_TO_NORMAL:visible alarm']);
    });

    it('gives the event as GET /events/<id> shows it', async () => {
      const xid = await createPoint();
      const c = track(await connectEvents(bearer(await tokenFor(admin))));
      const id = await raise(xid, 'shape check');
      const m = (await c.next()) as unknown as EventMessage;
      assert.deepEqual(Object.keys(m.payload).sort(), ['action', 'event']);
      assert.deepEqual(m.payload.event, (await admin.get(`${API}/events/${id}`)).body);
    });

    async function connectEvents(headers: Record<string, string>): Promise<Client> {
      const result = await connect(app, headers, `${API}/websocket/events`);
      if (!('client' in result)) throw new Error(`upgrade refused: ${result.status} ${JSON.stringify(result.body)}`);
      return result.client;
    }
  });

  describe('close codes', () => {
    it('closes with 4102 when the user is disabled', async () => {
      await createUser(admin, 'to-disable', PASSWORD);
      const user = await loggedIn(app.url, 'to-disable', PASSWORD);
      const bySession = await open(app, cookieHeader(user));
      const byToken = await open(app, bearer(await tokenFor(user)));
      const res = await admin.put(`${API}/users/to-disable`, { username: 'to-disable', disabled: true });
      assert.equal(res.status, 200, res.text);
      assert.equal((await bySession.closed).code, 4102);
      assert.equal((await byToken.closed).code, 4102);
    });

    it('closes token sockets with 4103 when the tokens are revoked, and keeps session sockets', async () => {
      await createUser(admin, 'revoker', PASSWORD);
      const user = await loggedIn(app.url, 'revoker', PASSWORD);
      const byToken = await open(app, bearer(await tokenFor(user)));
      const bySession = track(await open(app, cookieHeader(user)));
      assert.equal((await user.post(`${API}/auth-tokens/revoke`)).status, 204);
      assert.equal((await byToken.closed).code, 4103);
      await bySession.sync(await createPoint());
      const again = await open(app, bearer(await tokenFor(user)));
      assert.equal((await admin.post(`${API}/auth-tokens/reset-keys`)).status, 204);
      assert.equal((await again.closed).code, 4103);
    });

    it('closes with 4104 when the handshake token expires', async () => {
      const c = await open(app, bearer(await tokenFor(viewer, Date.now() + 1_500)));
      const started = Date.now();
      assert.equal((await c.closed).code, 4104);
      assert.ok(Date.now() - started < 3_000);
    });

    it('closes session sockets with 4101 at the next heartbeat after logout', async () => {
      const user = await loggedIn(app.url, 'viewer', PASSWORD);
      const c = await open(app, cookieHeader(user));
      assert.equal((await user.post(`${API}/logout`)).status, 204);
      await app.service.websockets.heartbeat();
      assert.equal((await c.closed).code, 4101);
    });
  });

  describe('rate limit', () => {
    let limited: TestApp | undefined;
    after(() => limited?.stop());

    it('refuses an address whose upgrades keep failing with 429 and Retry-After, before checking its credentials', async () => {
      limited = await startTestApp('pglite', { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_ANON_BURST: '3', RATE_LIMIT_ANON_PER_SECOND: '0.01' });
      for (let i = 0; i < 3; i++) assert.equal((await refused(limited, bearer('bad'))).status, 401);
      const ws = new WebSocket(limited.url.replace(/^http/, 'ws') + PV_PATH);
      const [, res] = (await new Promise((resolve) => ws.once('unexpected-response', (...args) => resolve(args)))) as [unknown, IncomingMessage];
      assert.equal(res.statusCode, 429);
      assert.match(String(res.headers['retry-after']), /^\d+$/);
      res.resume();
    });
  });

  describe('client address behind proxies', () => {
    const { log, lines } = capturingLogger('info');
    let proxied: TestApp;
    let direct: TestApp;
    let proxiedAdmin: ApiClient;
    before(async () => {
      // The test client connects from loopback: it plays the nearest proxy of `proxied`, not of `direct`.
      const limits = { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_ANON_BURST: '2', RATE_LIMIT_ANON_PER_SECOND: '0.01' };
      proxied = await startTestApp('pglite', { TRUST_PROXY: '127.0.0.0/8,::1', ...limits }, log);
      direct = await startTestApp('pglite', { TRUST_PROXY: '10.0.0.0/8' });
      proxiedAdmin = await loggedIn(proxied.url, 'admin', 'admin');
    });
    after(async () => {
      await proxied?.stop();
      await direct?.stop();
    });

    const logged = async (msg: string, from: number) => {
      await flushed();
      return lines.slice(from).filter((l) => l.msg === msg);
    };

    it('logs the same client address for an HTTP request and a WebSocket upgrade, accepted or refused', async () => {
      const forwarded = { 'x-forwarded-for': '6.6.6.6, 203.0.113.9' };
      const from = lines.length;
      // An anonymous request logged at info (health checks are logged at debug).
      const anonymous = '/rest/latest/auth-tokens/public-key';
      assert.equal((await new ApiClient(proxied.url).get(anonymous, { headers: forwarded })).status, 200);
      track(await open(proxied, { ...forwarded, ...bearer(await tokenFor(proxiedAdmin)) }));
      assert.equal((await refused(proxied, forwarded)).status, 401);
      const [request] = (await logged('request', from)).filter((l) => l.path === anonymous);
      const upgrades = await logged('websocket upgrade', from);
      assert.equal(request?.ip, '203.0.113.9');
      assert.deepEqual(
        upgrades.map((l) => [l.status, l.user, l.ip, l.path]),
        [
          [101, 'admin', '203.0.113.9', PV_PATH],
          [401, undefined, '203.0.113.9', PV_PATH],
        ],
      );
    });

    it('limits failing upgrades by that address, whatever the client writes to its left', async () => {
      for (const forged of ['1.1.1.1', '2.2.2.2']) {
        assert.equal((await refused(proxied, { 'x-forwarded-for': `${forged}, 203.0.113.20`, ...bearer('bad') })).status, 401);
      }
      assert.equal((await refused(proxied, { 'x-forwarded-for': '3.3.3.3, 203.0.113.20', ...bearer('bad') })).status, 429);
      assert.equal((await refused(proxied, { 'x-forwarded-for': '3.3.3.3, 203.0.113.21', ...bearer('bad') })).status, 401);
    });

    it('believes X-Forwarded-Host for the Origin check only from a trusted proxy', async () => {
      const headers = { ...cookieHeader(proxiedAdmin), origin: 'https://dds.example', 'x-forwarded-host': 'dds.example' };
      track(await open(proxied, headers));
      const directAdmin = await loggedIn(direct.url, 'admin', 'admin');
      const { status } = await refused(direct, { ...cookieHeader(directAdmin), origin: 'https://dds.example', 'x-forwarded-host': 'dds.example' });
      assert.equal(status, 403);
    });
  });

  describe('stop', () => {
    it('closes every socket (1001) when the service stops', async () => {
      const c = await open(app, bearer(await tokenFor(admin)));
      await app.stop();
      assert.equal((await c.closed).code, 1001);
    });
  });
});
