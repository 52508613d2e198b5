// Text the stores cannot hold (U+0000, unpaired surrogates), malformed percent-encoding, bodies that
// are not UTF-8 and the XIDs . and .., against the real service: a sweep over every route of the
// route catalogue (a new route is swept as soon as it is catalogued, and one with a body fails here
// until it has a valid body below), then the cases the attack on the service found.
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { ROUTES, type ParamName, type RouteDoc } from '../src/api/openapi-routes.js';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser, type Response } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const API = '/rest/latest';
const PASSWORD = 'secret-password-1';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** Where a value sits in a body: keys and array indexes. */
type Path = (string | number)[];

const BAD_STRINGS = [
  { label: 'U+0000', text: 'x\u0000y', message: /^must not contain the character U\+0000$/ },
  { label: 'a lone surrogate', text: 'x\udc00y', message: /^must not contain an unpaired surrogate/ },
] as const;

const BAD_SEGMENTS = [
  { label: '%00', encoded: 'x%00y', message: /U\+0000/ },
  { label: 'an encoded lone surrogate', encoded: 'x%ED%B0%80', message: /malformed percent-encoding/ },
  { label: 'a truncated sequence', encoded: 'x%E0%A4%A', message: /malformed percent-encoding/ },
] as const;

/** The contract's property names: ["tags", "site"] → tags.site, [3, "annotation"] → [3].annotation. */
function propertyName(path: Path): string {
  let name = '';
  for (const part of path) name += typeof part === 'number' ? `[${part}]` : name === '' ? part : `.${part}`;
  return name;
}

function children(value: Json): [string | number, Json][] {
  if (Array.isArray(value)) return value.map((v, i) => [i, v]);
  if (value !== null && typeof value === 'object') return Object.entries(value);
  return [];
}

/** Paths of every string value, and of every object (whose keys are text too). */
function stringsAndObjects(value: Json, at: Path = []): { strings: Path[]; objects: Path[] } {
  const found = { strings: [] as Path[], objects: [] as Path[] };
  if (typeof value === 'string') found.strings.push(at);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) found.objects.push(at);
  for (const [key, child] of children(value)) {
    const inner = stringsAndObjects(child, [...at, key]);
    found.strings.push(...inner.strings);
    found.objects.push(...inner.objects);
  }
  return found;
}

function parentOf(body: Json, path: Path): Record<string | number, Json> {
  let node = body;
  for (const part of path.slice(0, -1)) node = (node as Record<string | number, Json>)[part]!;
  return node as Record<string | number, Json>;
}

function withStringAt(body: Json, path: Path, text: string): Json {
  const copy = structuredClone(body);
  parentOf(copy, path)[path[path.length - 1]!] = text;
  return copy;
}

function withKeyAt(body: Json, path: Path, key: string): Json {
  const copy = structuredClone(body);
  const target = path.length === 0 ? copy : parentOf(copy, path)[path[path.length - 1]!]!;
  (target as Record<string, Json>)[key] = 'value';
  return copy;
}

function valueAt(body: Json, path: Path): Json {
  let node = body;
  for (const part of path) node = (node as Record<string | number, Json>)[part]!;
  return node;
}

/** A valid request for a route that takes a body: the concrete path, and who sends it. */
interface BodyCase {
  path: string;
  body: Json;
  anonymous?: boolean;
  /** Members whose strings are data kept exactly (JSON store jsonData): accepted, not refused. */
  verbatim?: string;
  /** The whole body is such data (Mango's /json-data): accepted, and the answer carries it as sent. */
  document?: true;
}

const HOUR_AGO = new Date(Date.now() - 3_600_000).toISOString();

/** One valid body per catalogued route that takes one, keyed "METHOD /path/{param}". */
const VALID_BODIES: Record<string, BodyCase> = {
  [`post ${API}/login`]: { path: `${API}/login`, body: { username: 'admin', password: 'admin' }, anonymous: true },
  [`post ${API}/auth-tokens/create`]: { path: `${API}/auth-tokens/create`, body: { username: 'admin', expiry: new Date(Date.now() + 600_000).toISOString() } },
  [`post ${API}/users`]: {
    path: `${API}/users`,
    body: { username: 'sweep-new', password: 'long-enough-pw', email: 'new@example.com', name: 'New', permissions: ['user'], locale: 'en', timezone: 'Europe/Berlin' },
  },
  [`put ${API}/users/{username}`]: {
    path: `${API}/users/sweep-user`,
    body: { username: 'sweep-user', email: 'sweep@example.com', name: 'Sweep', permissions: ['user', 'operators'], locale: 'de', timezone: 'UTC' },
  },
  [`put ${API}/data-sources/enable-disable/{xid}`]: { path: `${API}/data-sources/enable-disable/sweep-ds`, body: { enabled: true } },
  [`post ${API}/data-sources`]: {
    path: `${API}/data-sources`,
    body: { xid: 'sweep-mqtt-new', name: 'MQTT', enabled: false, modelType: 'MQTT_CLIENT', brokerUrl: 'mqtt://127.0.0.1:1', clientId: 'client', username: 'mqtt-user', password: 'mqtt-pass', qos: 1, readPermission: ['user'], editPermission: ['operators'] },
  },
  [`put ${API}/data-sources/{xid}`]: {
    path: `${API}/data-sources/sweep-ds`,
    body: { xid: 'sweep-ds', name: 'Sweep source', enabled: true, modelType: 'VIRTUAL', updatePeriods: 1, updatePeriodType: 'HOURS', readPermission: ['user'], editPermission: ['operators'] },
  },
  [`post ${API}/data-points`]: {
    path: `${API}/data-points`,
    body: {
      xid: 'sweep-mqtt-point',
      name: 'MQTT point',
      deviceName: 'Device',
      dataSourceXid: 'sweep-mqtt',
      pointLocator: { dataType: 'ALPHANUMERIC', topic: 'site/+/temperature', jsonPath: '$.value' },
      unit: '°C',
      tags: { site: 'north' },
      rollup: 'NONE',
      readPermission: ['user'],
      editPermission: ['operators'],
      setPermission: ['operators'],
    },
  },
  [`put ${API}/data-points/{xid}`]: {
    path: `${API}/data-points/sweep-dp`,
    body: {
      xid: 'sweep-dp',
      name: 'Sweep point',
      enabled: true,
      deviceName: 'Device',
      dataSourceXid: 'sweep-ds',
      pointLocator: { dataType: 'ALPHANUMERIC', settable: true, changeType: 'NO_CHANGE' },
      unit: 'text',
      tags: { site: 'south' },
      rollup: 'FIRST',
      readPermission: ['user'],
      editPermission: ['operators'],
      setPermission: ['operators'],
    },
  },
  [`post ${API}/event-detectors`]: {
    path: `${API}/event-detectors`,
    body: { xid: 'sweep-ed-new', name: 'High', dataPointXid: 'sweep-num', detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 90, readPermission: ['user'], editPermission: ['operators'] },
  },
  [`put ${API}/event-detectors/{xid}`]: {
    path: `${API}/event-detectors/sweep-ed`,
    body: { xid: 'sweep-ed', name: 'Low', dataPointXid: 'sweep-num', detectorType: 'LOW_LIMIT', alarmLevel: 'WARNING', limit: 10, readPermission: ['user'], editPermission: ['operators'] },
  },
  [`post ${API}/event-handlers`]: {
    path: `${API}/event-handlers`,
    body: { xid: 'sweep-eh-new', name: 'Hook', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:1/hook', headers: { 'X-Site': 'north' }, secret: 'hook-secret', eventTypes: [{ eventType: 'DATA_POINT', referenceXid: 'sweep-ed', minAlarmLevel: 'URGENT' }] },
  },
  [`put ${API}/event-handlers/{xid}`]: {
    path: `${API}/event-handlers/sweep-eh`,
    body: { xid: 'sweep-eh', name: 'Hook again', disabled: true, handlerType: 'WEBHOOK', url: 'https://127.0.0.1:2/hook', headers: { 'X-Site': 'south' }, secret: 'other-secret', eventTypes: [{ eventType: 'DATA_SOURCE', referenceXid: 'sweep-ds' }] },
  },
  [`put ${API}/point-values/{xid}`]: { path: `${API}/point-values/sweep-dp`, body: { dataType: 'ALPHANUMERIC', value: 'hello', timestamp: HOUR_AGO, annotation: 'set by hand' } },
  [`post ${API}/point-values`]: {
    path: `${API}/point-values`,
    body: [
      { xid: 'sweep-dp', value: 'first', timestamp: '2024-01-01T00:00:00.000Z', dataType: 'ALPHANUMERIC', annotation: 'imported' },
      { xid: 'sweep-dp', value: 'second', timestamp: '2024-01-01T00:01:00.000Z', annotation: 'imported too' },
    ],
  },
  [`post ${API}/point-values/purge`]: { path: `${API}/point-values/purge`, body: { xids: ['sweep-dp'], before: '2000-01-01T00:00:00.000Z' } },
  [`post ${API}/configuration/import`]: {
    path: `${API}/configuration/import`,
    body: { dataSources: [{ xid: 'sweep-cfg-ds', name: 'Imported', enabled: false, modelType: 'VIRTUAL', updatePeriods: 1, updatePeriodType: 'HOURS', readPermission: ['user'], editPermission: ['operators'] }] },
  },
  [`post ${API}/json-store`]: {
    path: `${API}/json-store`,
    body: { xid: 'sweep-js-new', name: 'Layout', jsonData: { title: 'text', list: ['a', { k: 'v' }] }, readPermission: ['user'], editPermission: ['operators'] },
    verbatim: 'jsonData',
  },
  [`put ${API}/json-store/{xid}`]: {
    path: `${API}/json-store/sweep-js`,
    body: { xid: 'sweep-js', name: 'Settings', jsonData: { theme: 'dark' }, readPermission: ['user'], editPermission: ['operators'] },
    verbatim: 'jsonData',
  },
  [`post ${API}/json-data/{xid}`]: { path: `${API}/json-data/sweep-jd-new?name=Layout`, body: { title: 'text', list: ['a', { k: 'v' }] }, document: true },
  [`post ${API}/json-data/{xid}/{path}`]: { path: `${API}/json-data/sweep-jd/set-here`, body: { mode: 'text' }, document: true },
  [`put ${API}/json-data/{xid}`]: { path: `${API}/json-data/sweep-jd`, body: { extra: 'text' }, document: true },
  [`put ${API}/json-data/{xid}/{path}`]: { path: `${API}/json-data/sweep-jd/obj`, body: { inner: 'text' }, document: true },
  [`post ${API}/data-point-tags/point/{xid}`]: { path: `${API}/data-point-tags/point/sweep-dp`, body: { site: 'north', line: 'L1' } },
  [`put ${API}/data-point-tags/point/{xid}`]: { path: `${API}/data-point-tags/point/sweep-dp`, body: { site: 'south', region: 'r' } },
  [`patch ${API}/users/{username}`]: { path: `${API}/users/sweep-user`, body: { name: 'Patched', locale: 'fr' } },
  [`patch ${API}/data-sources/{xid}`]: { path: `${API}/data-sources/sweep-ds`, body: { name: 'Patched source', editPermission: ['operators'] } },
  [`patch ${API}/data-points/{xid}`]: { path: `${API}/data-points/sweep-dp`, body: { name: 'Patched point', tags: { site: 'east' } } },
  [`put ${API}/data-points/enable-disable/{xid}`]: { path: `${API}/data-points/enable-disable/sweep-dp`, body: { enabled: true } },
  // Event 1 is raised in before().
  [`put ${API}/events/acknowledge/{id}`]: { path: `${API}/events/acknowledge/1`, body: { comment: 'checked on site' } },
  [`post ${API}/events/{id}/comments`]: { path: `${API}/events/1/comments`, body: { text: 'valve replaced' } },
  ...mangoQueryBodies(),
  ...grafanaBodies(),
};

/** Grafana's JSON datasource: one valid body per route, as the plugin sends them. */
function grafanaBodies(): Record<string, BodyCase> {
  const range = { from: '2024-01-01T00:00:00.000Z', to: '2024-01-02T00:00:00.000Z', raw: { from: 'now-1d', to: 'now' } };
  const bodies: Record<string, Json> = {
    metrics: { metric: 'sweep-num', payload: { rollup: 'AVERAGE' } },
    'metric-payload-options': { metric: 'sweep-num', payload: {}, name: 'rollup' },
    query: {
      range,
      maxDataPoints: 100,
      timezone: 'Europe/Berlin',
      targets: [{ target: 'sweep-num', refId: 'A', payload: { rollup: 'MAXIMUM', timePeriod: '1 HOURS' } }],
      filters: [{ key: 'site', operator: '!=', value: 'south' }],
    },
    variable: { payload: { target: 'dataType=NUMERIC' }, range },
    'tag-keys': { filters: [] },
    'tag-values': { key: 'site' },
  };
  return Object.fromEntries(Object.entries(bodies).map(([route, body]) => [`post ${API}/grafana/${route}`, { path: `${API}/grafana/${route}`, body }]));
}

/** Mango's POST point-value queries: one valid body each. */
function mangoQueryBodies(): Record<string, BodyCase> {
  const body = { xids: ['sweep-dp', 'sweep-num'], from: '2024-01-01T00:00:00.000Z', to: '2024-01-02T00:00:00.000Z', timezone: 'Europe/Berlin', dateTimeFormat: 'ISO', fields: ['TIMESTAMP', 'VALUE'] };
  const latest = { xids: ['sweep-dp'], limit: 2, timezone: 'UTC' };
  const routes: Record<string, BodyCase> = {};
  for (const shape of ['multiple-arrays', 'single-array']) {
    routes[`post ${API}/point-values/${shape}/latest`] = { path: `${API}/point-values/${shape}/latest`, body: latest };
    routes[`post ${API}/point-values/${shape}/time-period`] = { path: `${API}/point-values/${shape}/time-period`, body };
    routes[`post ${API}/point-values/${shape}/time-period/{rollup}`] = {
      path: `${API}/point-values/${shape}/time-period/FIRST`,
      body: { ...body, timePeriod: { periods: 1, type: 'HOURS' } },
    };
  }
  return routes;
}

/** Valid values for the path parameters the sweep does not spoil. */
function pathValue(route: RouteDoc, param: string): string {
  if (param === 'xid') {
    for (const [base, xid] of [['json-store', 'sweep-js'], ['json-data', 'sweep-jd'], ['data-sources', 'sweep-ds'], ['event-detectors', 'sweep-ed'], ['event-handlers', 'sweep-eh']]) {
      if (route.path.includes(`/${base}/`)) return xid!;
    }
    return 'sweep-dp';
  }
  const onJsonData = route.path.includes('/json-data/');
  const values: Record<string, string> = { xids: 'sweep-dp,sweep-num', username: 'sweep-user', id: '1', rollup: 'AVERAGE', file: 'index.html', path: onJsonData ? 'obj' : 'theme', key: 'site' };
  assert.ok(values[param], `no value for the path parameter {${param}} of ${route.path}`);
  return values[param];
}

function placeholders(route: RouteDoc): string[] {
  return [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

function concretePath(route: RouteDoc, spoil?: { param: string; encoded: string }): string {
  return route.path.replace(/\{(\w+)\}/g, (_, p: string) => (p === spoil?.param ? spoil.encoded : encodeURIComponent(pathValue(route, p))));
}

/** A query parameter the route reads, else any name: the check runs before the route. */
const QUERY_NAMES: Partial<Record<ParamName, string>> = { from: 'from', to: 'to', limit: 'limit', latestLimit: 'limit', deleteFrom: 'from', rollup: 'rollup', timezone: 'timezone' };
function queryName(route: RouteDoc): string {
  for (const p of route.params ?? []) if (QUERY_NAMES[p]) return QUERY_NAMES[p];
  return 'q';
}

/** The line-protocol write routes add InfluxDB's fields to the error body (checked here, then set aside). */
function withoutInfluxFields(route: RouteDoc, res: Response): Response {
  if (!/\/write$/.test(route.path)) return res;
  const { code, error, ...ours } = res.body as Record<string, unknown>;
  assert.equal(code, 'invalid', `${routeKey(route)}: InfluxDB's code`);
  assert.equal(error, ours.message, `${routeKey(route)}: InfluxDB's error`);
  return { ...res, body: ours };
}

function routeKey(route: RouteDoc): string {
  return `${route.method} ${route.path}`;
}

function succeeded(route: RouteDoc, res: Response): boolean {
  return route.success.some((s) => s.status === res.status);
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`text the stores cannot hold, at every edge (${engine})`, function () {
    this.timeout(120_000);
    let app: TestApp;
    let admin: ApiClient;
    let anonymous: ApiClient;

    const post = async (path: string, body: Json) => {
      const res = await admin.post(API + path, body);
      assert.equal(res.status, 201, `${path}: ${res.text}`);
    };

    before(async () => {
      app = await startTestApp(engine);
      admin = new ApiClient(app.url);
      await admin.login('admin', 'admin');
      anonymous = new ApiClient(app.url);
      anonymous.seedCsrf();
      await post('/data-sources', { xid: 'sweep-ds', name: 'Sweep source', enabled: true, modelType: 'VIRTUAL', updatePeriods: 1, updatePeriodType: 'HOURS' });
      await post('/data-sources', { xid: 'sweep-mqtt', name: 'MQTT', enabled: false, modelType: 'MQTT_CLIENT', brokerUrl: 'mqtt://127.0.0.1:1' });
      await post('/data-points', { xid: 'sweep-dp', name: 'Sweep point', dataSourceXid: 'sweep-ds', pointLocator: { dataType: 'ALPHANUMERIC', settable: true, changeType: 'NO_CHANGE' } });
      await post('/data-points', { xid: 'sweep-num', name: 'Number', dataSourceXid: 'sweep-ds', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
      await post('/event-detectors', { xid: 'sweep-ed', name: 'High', dataPointXid: 'sweep-num', detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 50 });
      await post('/event-handlers', { xid: 'sweep-eh', name: 'Hook', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:1/hook', secret: 'hook-secret', eventTypes: [{ eventType: 'SYSTEM' }] });
      await post('/json-store', { xid: 'sweep-js', name: 'Settings', jsonData: { theme: 'light' } });
      await post('/json-store', { xid: 'sweep-jd', name: 'Document', jsonData: { obj: {} } });
      await createUser(admin, 'sweep-user', PASSWORD);
      const event = await app.service.services.events.raise({ alarmLevel: 'URGENT', eventType: 'SYSTEM', subType: 'SWEEP', message: 'sweep alarm' });
      assert.equal(event.id, 1, 'the event the comment routes name');
    });
    after(() => app.stop());

    /** Everything a refused request could have changed, as text. */
    async function snapshot(): Promise<string> {
      const reads = ['/users', '/data-sources', '/data-points', '/event-detectors', '/event-handlers', '/json-store', '/events', '/point-values/latest/sweep-dp?limit=100', '/point-values/latest/sweep-num?limit=100'];
      const items = (await admin.get<{ items: { xid: string }[] }>(`${API}/json-store`)).body.items.map((i) => `/json-store/${encodeURIComponent(i.xid)}`);
      const texts: string[] = [];
      for (const path of [...reads, ...items]) {
        const res = await admin.get(API + path);
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        texts.push(res.text);
      }
      return texts.join('\n');
    }

    /** A snapshot once the runtime has settled (a source restarted by a write reports its state later). */
    async function settled(): Promise<string> {
      let previous = await snapshot();
      for (let i = 0; i < 40; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const now = await snapshot();
        if (now === previous) return now;
        previous = now;
      }
      throw new Error('the service kept changing');
    }

    function send(route: RouteDoc, path: string, body: Json | undefined, client = admin): Promise<Response> {
      return client.request(route.method.toUpperCase(), path, body === undefined ? {} : { body });
    }

    describe('a sweep over every catalogued route', () => {
      it('refuses a bad path parameter with 400 (4005) naming the path, and changes nothing', async () => {
        const before = await settled();
        let swept = 0;
        for (const route of ROUTES) {
          const body = route.body ? VALID_BODIES[routeKey(route)]?.body : undefined;
          for (const param of placeholders(route)) {
            for (const bad of BAD_SEGMENTS) {
              const res = await send(route, concretePath(route, { param, encoded: bad.encoded }), body);
              const error = assertError(res, 400, 4005, 'BAD_REQUEST');
              assert.match(error.message, /^Invalid path: /, `${routeKey(route)} {${param}} ${bad.label}`);
              assert.match(error.message, bad.message);
              swept++;
            }
          }
        }
        assert.ok(swept >= 3 * 20, `only ${swept} path cases`);
        assert.equal(await snapshot(), before);
      });

      it('refuses a bad query parameter with 400 (4005) naming the parameter, and changes nothing', async () => {
        const before = await settled();
        for (const route of ROUTES) {
          const body = route.body ? VALID_BODIES[routeKey(route)]?.body : undefined;
          const name = queryName(route);
          for (const bad of BAD_SEGMENTS) {
            const client = route.access === 'login' ? anonymous : admin;
            const res = await send(route, `${concretePath(route)}?${name}=${bad.encoded}`, body, client);
            if (route.params?.includes('rql')) {
              // An RQL query string is the RQL parser's: the contract's 4001, with the position.
              const error = assertError(res, 400, 4001, 'RQL_PARSE_FAILURE');
              assert.match(error.message, /position \d+/, `${routeKey(route)} ${bad.label}: ${error.message}`);
              continue;
            }
            const error = assertError(withoutInfluxFields(route, res), 400, 4005, 'BAD_REQUEST');
            assert.equal(error.message.startsWith(`Invalid query parameter ${name}: `), true, `${routeKey(route)} ${bad.label}: ${error.message}`);
            assert.match(error.message, bad.message);
          }
        }
        assert.equal(await snapshot(), before);
      });

      it('has a valid body for every catalogued route that takes one', () => {
        const missing = ROUTES.filter((r) => r.body && !VALID_BODIES[routeKey(r)]).map(routeKey);
        assert.deepEqual(missing, []);
        const unknown = Object.keys(VALID_BODIES).filter((key) => !ROUTES.some((r) => r.body && routeKey(r) === key));
        assert.deepEqual(unknown, []);
      });

      for (const route of ROUTES.filter((r) => r.body)) {
        it(`${route.method.toUpperCase()} ${route.path}: each string and key with bad text is a 422 naming it, nothing stored`, async () => {
          const valid = VALID_BODIES[routeKey(route)];
          assert.ok(valid, `no valid body for ${routeKey(route)}`);
          const client = valid.anonymous ? anonymous : admin;
          const { strings, objects } = stringsAndObjects(valid.body);
          assert.ok(strings.length + objects.length > 0);
          let state = await settled();
          const expect = async (res: Response, where: Path, message: RegExp, what: string, sent?: string) => {
            if (valid.document) {
              // The document is kept exactly, bad text included: the answer carries it as it was sent.
              assert.ok(succeeded(route, res), `${what}: ${res.status} ${res.text}`);
              assert.ok(sent !== undefined && res.text.includes(sent), `${what}: ${sent} not in ${res.text}`);
              state = await settled();
              return undefined;
            }
            if (valid.verbatim !== undefined && where[0] === valid.verbatim) {
              // jsonData is kept exactly, bad text included.
              assert.ok(succeeded(route, res), `${what}: ${res.status} ${res.text}`);
              const stored = await admin.get<{ jsonData: Json }>(`${API}/json-store/${encodeURIComponent(String(valueAt(valid.body, ['xid'])))}`);
              state = await settled();
              return stored.body.jsonData;
            }
            const messages = assertValidation(res);
            assert.equal(messages.length, 1, `${what}: ${JSON.stringify(messages)}`);
            assertHasMessage(messages, propertyName(where), message);
            assert.equal(await snapshot(), state, `${what} changed something`);
            return undefined;
          };
          for (const bad of BAD_STRINGS) {
            for (const where of strings) {
              const body = withStringAt(valid.body, where, bad.text);
              const stored = await expect(await send(route, valid.path, body, client), where, bad.message, `${propertyName(where)} with ${bad.label}`, JSON.stringify(bad.text));
              if (stored !== undefined) assert.deepEqual(stored, (body as Record<string, Json>).jsonData);
            }
            for (const where of objects) {
              const body = withKeyAt(valid.body, where, bad.text);
              const keyMessage = new RegExp(`^must not have a key that contains ${bad.message.source.replace(/^\^must not contain /, '')}`);
              const stored = await expect(await send(route, valid.path, body, client), where, keyMessage, `a key of ${propertyName(where) || 'the body'} with ${bad.label}`, JSON.stringify(bad.text));
              if (stored !== undefined) assert.deepEqual(stored, (body as Record<string, Json>).jsonData);
            }
          }
          // The same body without bad text succeeds: the refusals were about the text alone.
          const res = await send(route, valid.path, valid.body, client);
          assert.ok(succeeded(route, res), `valid body: ${res.status} ${res.text}`);
        });
      }
    });

    describe('the attack\'s cases', () => {
      it('anonymous login with U+0000 in the username: 422 naming username, not 500', async () => {
        const client = new ApiClient(app.url);
        client.seedCsrf();
        const res = await client.request('POST', `${API}/login`, { rawBody: '{"username":"x\\u0000y","password":"whatever"}' });
        assertHasMessage(assertValidation(res), 'username', 'must not contain the character U+0000');
      });

      it('GET /data-points/%00: 400 naming the path, not 500', async () => {
        const body = assertError(await admin.get(`${API}/data-points/%00`), 400, 4005, 'BAD_REQUEST');
        assert.equal(body.message, 'Invalid path: must not contain the character U+0000');
      });

      it('tags with a lone surrogate: 422 naming tags.site; a tag key with U+0000: 422 naming tags', async () => {
        const point = (tags: string) =>
          `{"xid":"tagged","name":"Tagged","dataSourceXid":"sweep-ds","pointLocator":{"dataType":"NUMERIC","changeType":"NO_CHANGE"},"tags":${tags}}`;
        const lone = assertValidation(await admin.post(`${API}/data-points`, undefined, { rawBody: point('{"site":"\\udc00"}') }));
        assertHasMessage(lone, 'tags.site', 'must not contain an unpaired surrogate (U+D800 to U+DFFF)');
        const key = assertValidation(await admin.post(`${API}/data-points`, undefined, { rawBody: point('{"si\\u0000te":"north"}') }));
        assertHasMessage(key, 'tags', 'must not have a key that contains the character U+0000');
        assertError(await admin.get(`${API}/data-points/tagged`), 404, -1);
      });

      it('a name with a lone surrogate is refused, never stored as U+FFFD', async () => {
        for (const escape of ['\\udc00', '\\uD800', '\\ud83d']) {
          const res = await admin.post(`${API}/data-points`, undefined, {
            rawBody: `{"xid":"lone-name","name":"P${escape}","dataSourceXid":"sweep-ds","pointLocator":{"dataType":"NUMERIC","changeType":"NO_CHANGE"}}`,
          });
          assertHasMessage(assertValidation(res), 'name', /unpaired surrogate/);
        }
        assertError(await admin.get(`${API}/data-points/lone-name`), 404, -1);
        const points = await admin.get<{ items: { name: string }[] }>(`${API}/data-points`);
        assert.ok(points.body.items.every((p) => !p.name.includes('\ufffd')));
        // A surrogate pair is a character like any other.
        const pair = await admin.post(`${API}/data-points`, undefined, {
          rawBody: '{"xid":"pair-name","name":"P\\ud83d\\ude00","dataSourceXid":"sweep-ds","pointLocator":{"dataType":"NUMERIC","changeType":"NO_CHANGE"}}',
        });
        assert.equal(pair.status, 201, pair.text);
        assert.equal((pair.body as { name: string }).name, 'P😀');
      });

      it('bulk ingest: bad text in row 3 is a 422 naming [3].annotation; a raw U+0000 byte is a 400; nothing written', async () => {
        const rows = Array.from({ length: 5 }, (_, i) => ({ xid: 'sweep-dp', value: `v${i}`, timestamp: Date.UTC(2023, 0, 1, 0, i), annotation: i === 3 ? 'a\u0000b' : 'ok' }));
        assertHasMessage(assertValidation(await admin.post(`${API}/point-values`, rows)), '[3].annotation', 'must not contain the character U+0000');
        // The usual shape is read into columns without JSON.parse: a raw NUL there must not slip through.
        const raw = await admin.post(`${API}/point-values`, undefined, { rawBody: '[{"xid":"sweep-dp\u0000","value":1,"timestamp":1700000000000}]' });
        assertError(raw, 400, 4005);
        const escaped = await admin.post(`${API}/point-values`, undefined, { rawBody: '[{"xid":"sweep-dp\\u0000","value":1,"timestamp":1700000000000}]' });
        assertHasMessage(assertValidation(escaped), '[0].xid', 'must not contain the character U+0000');
        const stored = await admin.get<unknown[]>(`${API}/point-values/single/sweep-dp?from=2022-12-31T00:00:00.000Z&to=2023-11-15T00:00:00.000Z`);
        assert.deepEqual(stored.body, []);
      });

      it('a body that is not UTF-8 is a 400 (4005), never read as U+FFFD', async () => {
        const bodies = [
          Buffer.from([...Buffer.from('{"xid":"bad-utf8","name":"'), 0xff, ...Buffer.from('","modelType":"VIRTUAL"}')]),
          Buffer.from([...Buffer.from('{"xid":"bad-utf8","name":"'), 0xed, 0xb0, 0x80, ...Buffer.from('","modelType":"VIRTUAL"}')]), // an encoded surrogate
          Buffer.from([...Buffer.from('{"xid":"bad-utf8","name":"'), 0xc0, 0x80, ...Buffer.from('","modelType":"VIRTUAL"}')]), // an overlong U+0000
          Buffer.from([...Buffer.from('{"xid":"bad-utf8","name":"'), 0xe2, 0x82]), // cut short
        ];
        for (const rawBody of bodies) {
          const body = assertError(await admin.post(`${API}/data-sources`, undefined, { rawBody }), 400, 4005, 'BAD_REQUEST');
          assert.equal(body.message, 'Request body is not valid UTF-8');
        }
        assertError(await admin.get(`${API}/data-sources/bad-utf8`), 404, -1);
        // A byte order mark is no content; raw UTF-8 beyond ASCII is of course fine.
        const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"xid":"bom-utf8","name":"Grüße ✓ 😀","modelType":"VIRTUAL"}')]);
        const ok = await admin.post(`${API}/data-sources`, undefined, { rawBody: bom });
        assert.equal(ok.status, 201, ok.text);
        assert.equal((ok.body as { name: string }).name, 'Grüße ✓ 😀');
      });

      it('an RQL query with %00 or bad percent-encoding is the RQL parser\'s 400 (4001) with the position', async () => {
        const nul = assertError(await admin.get(`${API}/data-points?eq(name,%00)`), 400, 4001, 'RQL_PARSE_FAILURE');
        assert.match(nul.message, /"%00" must not contain the character U\+0000.*position 8/);
        assertError(await admin.get(`${API}/users?eq(username,%ED%B0%80)`), 400, 4001);
        assertError(await admin.get(`${API}/json-store?match(name,50%)`), 400, 4001);
        assertError(await admin.post(`${API}/events/acknowledge?eq(dataPointXid,%00)`), 400, 4001);
      });

      it('WebSocket subscribe with an XID holding U+0000 or a lone surrogate: NOT_FOUND, not SERVER_ERROR', async () => {
        const session = admin.cookies.get('DDS_SESSION')!;
        const ws = new WebSocket(`${app.url.replace(/^http/, 'ws')}${API}/websocket/point-value`, { headers: { cookie: `DDS_SESSION=${session}` } });
        const inbox: { status: string; payload: { type?: string; message?: string; xid?: string; event?: string } }[] = [];
        let wake: (() => void) | undefined;
        ws.on('message', (data) => {
          inbox.push(JSON.parse(data.toString()) as (typeof inbox)[number]);
          wake?.();
        });
        await new Promise<void>((resolve, reject) => ws.once('open', resolve).once('error', reject));
        const next = async () => {
          const deadline = Date.now() + 5_000;
          while (inbox.length === 0) {
            assert.ok(Date.now() < deadline, 'no message within 5 s');
            await new Promise<void>((resolve) => {
              wake = resolve;
              setTimeout(resolve, 100);
            });
          }
          return inbox.shift()!;
        };
        try {
          for (const text of ['{"xid":"x\\u0000y","eventTypes":["UPDATE"]}', '{"xid":"x\\udc00","eventTypes":["UPDATE"]}', '{"xid":"x\\u0000","eventTypes":[]}']) {
            ws.send(text);
            const m = await next();
            assert.equal(m.status, 'ERROR');
            assert.equal(m.payload.type, 'NOT_FOUND', JSON.stringify(m));
            assert.match(m.payload.message ?? '', /^Data point not found/);
          }
          ws.send('{"xid":"sweep-dp","eventTypes":["UP\\u0000DATE"]}');
          const field = await next();
          assert.deepEqual(field.payload, { type: 'NOT_FOUND', message: 'Malformed request: eventTypes[0] must not contain the character U+0000' });
          ws.send('{"xid":"sweep-dp","eventTypes":["UPDATE"],"ext\\udc00ra":1}');
          assert.equal((await next()).payload.message, 'Malformed request: the message must not have a key that contains an unpaired surrogate (U+D800 to U+DFFF)');
          // The socket still serves a good subscription.
          ws.send('{"xid":"sweep-dp","eventTypes":["UPDATE"]}');
          const registered = await next();
          assert.equal(registered.status, 'OK');
          assert.equal(registered.payload.event, 'REGISTERED');
        } finally {
          ws.terminate();
        }
      });
    });

    describe('XIDs and usernames that a URL path cannot name', () => {
      const resources: [string, string, Record<string, Json>][] = [
        ['data-sources', 'sweep-ds', { name: 'S', modelType: 'VIRTUAL', updatePeriods: 1, updatePeriodType: 'HOURS', enabled: true }],
        ['data-points', 'sweep-num', { name: 'Number', dataSourceXid: 'sweep-ds', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } }],
        ['event-detectors', 'sweep-ed', { name: 'High', dataPointXid: 'sweep-num', detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 50 }],
        ['event-handlers', 'sweep-eh', { name: 'Hook', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:1/hook', secret: 'hook-secret', eventTypes: [{ eventType: 'SYSTEM' }] }],
        ['json-store', 'sweep-js', { name: 'Settings', jsonData: { theme: 'light' } }],
      ];
      for (const [base, existing, body] of resources) {
        it(`refuses . and .. as the XID of ${base}, on create and on update (422 naming xid)`, async () => {
          const before = await admin.get(`${API}/${base}/${existing}`);
          assert.equal(before.status, 200);
          for (const xid of ['.', '..']) {
            assertHasMessage(assertValidation(await admin.post(`${API}/${base}`, { ...body, xid })), 'xid', 'must not be . or .. (a URL path cannot name them)');
            assertHasMessage(assertValidation(await admin.put(`${API}/${base}/${existing}`, { ...body, xid })), 'xid', /must not be \. or \.\./);
          }
          assert.equal((await admin.get(`${API}/${base}/${existing}`)).text, before.text);
          const list = await admin.get<{ items: { xid: string }[] }>(`${API}/${base}`);
          assert.ok(list.body.items.every((i) => i.xid !== '.' && i.xid !== '..'));
          // Dots inside an XID are fine.
          const dotted = await admin.post(`${API}/${base}`, { ...body, xid: `...${base}.v1` });
          assert.equal(dotted.status, 201, dotted.text);
        });
      }

      it('refuses . and .. as usernames, on create and on rename (422 naming username)', async () => {
        for (const username of ['.', '..']) {
          assertHasMessage(assertValidation(await admin.post(`${API}/users`, { username, password: PASSWORD })), 'username', /\.\./);
          assertHasMessage(assertValidation(await admin.put(`${API}/users/sweep-user`, { username })), 'username', /\.\./);
        }
        assert.equal((await admin.get(`${API}/users/sweep-user`)).status, 200);
      });
    });

    describe('afterwards', () => {
      it('answered none of it with a 5xx (the request counter has no 5xx status)', async () => {
        const res = await admin.get('/metrics');
        assert.equal(res.status, 200);
        const counted = res.text.split('\n').filter((line) => line.startsWith('http_requests_total{'));
        assert.ok(counted.some((line) => line.includes('status="422"')) && counted.some((line) => line.includes('status="400"')));
        assert.deepEqual(counted.filter((line) => /status="5\d\d"/.test(line)), []);
      });
    });
  });
}
