// The OpenAPI document (valid 3.1, every registered route documented, request bodies from
// schemas/, live responses matching the documented schemas), Swagger UI, and /metrics.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type Router from '@koa/router';
import { Validator as OpenApiValidator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import pino from 'pino';
import WebSocket from 'ws';
import { WEBSOCKET_CHANNELS } from '../src/api/websocket.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { schemasDir } from '../src/paths.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser, loggedIn } from './helpers/client.js';

const API = '/rest/latest';
const PASSWORD = 'correct-horse-1';
const silent = pino({ level: 'silent' });

type JsonObject = Record<string, unknown>;

/** Bodies the services check in code (no ajv schema): documented from schemas/responses/. */
const CHECKED_IN_CODE = new Set(['point-value-set', 'point-values-bulk']);

/** "GET /rest/latest/users/{username}", trailing slash dropped: both sides are written this way. */
function routeKey(method: string, path: string): string {
  const p = path.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');
  return `${method.toUpperCase()} ${p}`;
}

/** Every route the Koa app registers, read from its routers' layers. */
function registeredRoutes(app: TestApp): Set<string> {
  const koa = createApp(app.service.services, silent);
  const routes = new Set<string>();
  for (const fn of koa.middleware) {
    const router = (fn as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') throw new Error(`route ${String(layer.path)} is a RegExp: document it by hand`);
      for (const method of layer.methods) if (method !== 'HEAD') routes.add(routeKey(method, layer.path));
    }
  }
  return routes;
}

function documentedRoutes(doc: JsonObject): Set<string> {
  const routes = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, JsonObject>)) {
    for (const method of Object.keys(item)) routes.add(routeKey(method, path));
  }
  return routes;
}

function operations(doc: JsonObject): { key: string; op: JsonObject }[] {
  return Object.entries(doc.paths as Record<string, Record<string, JsonObject>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ key: routeKey(method, path), op })),
  );
}

function allRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => allRefs(n, out));
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else allRefs(v, out);
    }
  }
  return out;
}

/** The value of a sample line `name{labels} value` in Prometheus text; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',');
    if (want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return 0;
}

describe('OpenAPI, Swagger UI and metrics', function () {
  let app: TestApp;
  let admin: ApiClient;
  let doc: JsonObject;

  before(async () => {
    app = await startTestApp();
    admin = await loggedIn(app.url, 'admin', 'admin');
    const res = await new ApiClient(app.url).get<JsonObject>(`${API}/openapi.json`);
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    doc = res.body;
  });

  after(async () => {
    await app?.stop();
  });

  describe('GET /rest/latest/openapi.json', () => {
    it('is a valid OpenAPI 3.1 document, served without authentication', async () => {
      assert.equal(doc.openapi, '3.1.0');
      const result = await new OpenApiValidator().validate(doc);
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    });

    it('documents every route the app registers, and no route it does not serve', () => {
      const registered = registeredRoutes(app);
      const documented = documentedRoutes(doc);
      const undocumented = [...registered].filter((r) => !documented.has(r));
      assert.deepEqual(undocumented, [], 'routes missing from src/api/openapi-routes.ts');
      const websockets = new Set(Object.keys(WEBSOCKET_CHANNELS).map((name) => routeKey('get', `${API}/websocket/${name}`)));
      const stale = [...documented].filter((r) => !registered.has(r) && !websockets.has(r));
      assert.deepEqual(stale, [], 'documented routes the app does not serve');
      for (const ws of websockets) assert.ok(documented.has(ws), `${ws} is not documented`);
    });

    it('takes every request body schema from a file in schemas/', () => {
      let bodies = 0;
      for (const { key, op } of operations(doc)) {
        const body = op.requestBody as { content: Record<string, { schema: { $ref?: string } }> } | undefined;
        if (!body) continue;
        bodies++;
        const ref = body.content['application/json']?.schema.$ref ?? '';
        const id = ref.replace('#/components/schemas/', '');
        assert.ok(ref.startsWith('#/components/schemas/') && id !== '', `${key}: body is not a schema reference`);
        const file = CHECKED_IN_CODE.has(id) ? join(schemasDir, 'responses', `${id}.json`) : join(schemasDir, `${id}.json`);
        assert.ok(existsSync(file), `${key}: body schema ${id} is not ${file}`);
      }
      assert.ok(bodies >= 15, `only ${bodies} request bodies documented`);
    });

    it('rewrites schema references to components and keeps ajv-only keywords as extensions', () => {
      const components = doc.components as Record<string, Record<string, unknown>>;
      for (const ref of allRefs(doc)) {
        const [, kind, name] = /^#\/components\/(\w+)\/([^/]+)/.exec(ref) ?? [];
        assert.ok(kind && name && components[kind]?.[name], `unresolved $ref ${ref}`);
      }
      const dataSource = components.schemas!['data-source'] as JsonObject;
      assert.equal(dataSource.objectType, undefined);
      assert.equal(dataSource['x-objectType'], 'DataSourceVO');
      assert.equal(dataSource.$id, undefined);
      const point = components.schemas!['data-point'] as { properties: Record<string, JsonObject> };
      assert.deepEqual(point.properties.readPermission, { $ref: '#/components/schemas/roles' });
    });

    it('answers with the shapes it documents', async () => {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats.default(ajv);
      ajv.addFormat('timezone', true);
      ajv.addFormat('email', /^$|^[^\s@]+@[^\s@]+\.[^\s@]+$/); // as src/core/validation.ts: empty means none
      ajv.addSchema({ $id: 'doc', components: doc.components });
      const check = (name: string, body: unknown) => {
        const validate = ajv.getSchema(`doc#/components/schemas/${name}`);
        assert.ok(validate, name);
        assert.ok(validate(body), `${name}: ${JSON.stringify(validate.errors)} for ${JSON.stringify(body)}`);
      };
      check('user-view', (await admin.get(`${API}/users/current`)).body);
      check('health', (await admin.get('/health')).body);
      check('public-jwk', (await admin.get(`${API}/auth-tokens/public-key`)).body);
      const missing = await admin.get(`${API}/data-points/nope`);
      assert.equal(missing.status, 404);
      check('error', missing.body);
      const invalid = await admin.post(`${API}/data-sources`, { name: 'x', modelType: 'VIRTUAL', updatePeriods: 0 });
      assert.equal(invalid.status, 422);
      check('validation-error', invalid.body);
      const ds = await admin.post(`${API}/data-sources`, { xid: 'DS_doc', name: 'Doc', modelType: 'VIRTUAL', enabled: false });
      assert.equal(ds.status, 201, ds.text);
      check('data-source-view', ds.body);
      const dp = await admin.post(`${API}/data-points`, { xid: 'DP_doc', name: 'Doc', dataSourceXid: 'DS_doc', pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
      assert.equal(dp.status, 201, dp.text);
      check('data-point-view', dp.body);
      const written = await admin.post(`${API}/point-values`, [{ xid: 'DP_doc', value: 1.5, timestamp: 1_700_000_000_000 }]);
      check('point-values-written', written.body);
      const latest = (await admin.get(`${API}/point-values/latest/DP_doc`)).body as { unreliable?: boolean }[];
      check('point-value', latest[0]);
      assert.equal(latest[0]!.unreliable, false, 'the current value says whether it is reliable');
      // Mango's POST queries: rows of a single array (ALL, every field) and XID → arrays.
      const query = { xids: ['DP_doc'], from: 1_700_000_000_000, to: 1_700_000_060_000, fields: ['TIMESTAMP', 'VALUE', 'RENDERED', 'RAW', 'XID', 'CACHED', 'BOOKEND'] };
      const rows = (await admin.post(`${API}/point-values/single-array/time-period/ALL`, { ...query, dateTimeFormat: 'ISO' })).body as unknown[];
      assert.equal(rows.length, 1);
      check('mango-point-value-row', rows[0]);
      const arrays = (await admin.post(`${API}/point-values/multiple-arrays/time-period`, { ...query, from: 1_699_999_990_000, bookend: true })).body as Record<string, unknown[]>;
      assert.equal(arrays.DP_doc!.length, 3, 'the value and its two bookends');
      for (const value of arrays.DP_doc!) check('mango-point-value', value);
    });
  });

  describe('Swagger UI', () => {
    const anonymous = () => new ApiClient(app.url);

    it('redirects /swagger-ui to /swagger-ui/', async () => {
      const res = await fetch(`${app.url}/swagger-ui`, { redirect: 'manual' });
      assert.equal(res.status, 301);
      assert.equal(res.headers.get('location'), '/swagger-ui/');
    });

    it('serves its page and our initializer, which loads this document', async () => {
      const page = await anonymous().get('/swagger-ui/');
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(page.text, /swagger-initializer\.js/);
      const init = await anonymous().get('/swagger-ui/swagger-initializer.js');
      assert.equal(init.status, 200);
      assert.match(init.headers.get('content-type') ?? '', /^application\/javascript/);
      assert.ok(init.text.includes(`"${API}/openapi.json"`));
    });

    it('serves the swagger-ui-dist assets with cache headers and revalidation', async () => {
      const js = await fetch(`${app.url}/swagger-ui/swagger-ui-bundle.js`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /^application\/javascript/);
      assert.match(js.headers.get('cache-control') ?? '', /max-age=\d+/);
      assert.ok((await js.text()).length > 100_000);
      const css = await fetch(`${app.url}/swagger-ui/swagger-ui.css`);
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
      await css.arrayBuffer();
      const again = await fetch(`${app.url}/swagger-ui/swagger-ui-bundle.js`, {
        // A browser's revalidation; without cache-control, fetch would add no-cache, which forbids a 304.
        headers: { 'if-none-match': js.headers.get('etag')!, 'cache-control': 'max-age=0' },
      });
      assert.equal(again.status, 304);
    });

    it('serves nothing else from the package', async () => {
      for (const path of ['/swagger-ui/package.json', '/swagger-ui/..%2Fpackage.json', '/swagger-ui/swagger-ui.js.map']) {
        const res = await anonymous().get(path);
        assert.equal(res.status, 404, path);
        assert.equal((res.body as { serviceStatusCode: number }).serviceStatusCode, -1);
      }
    });
  });

  describe('GET /metrics', () => {
    it('needs credentials (401) and superadmin (403)', async () => {
      const anon = await new ApiClient(app.url).get('/metrics');
      assert.equal(anon.status, 401);
      assert.equal((anon.body as { serviceStatusCode: number }).serviceStatusCode, 4008);
      await createUser(admin, 'metrics-viewer', PASSWORD);
      const viewer = await loggedIn(app.url, 'metrics-viewer', PASSWORD);
      const denied = await viewer.get('/metrics');
      assert.equal(denied.status, 403);
      assert.equal((denied.body as { serviceStatusCode: number }).serviceStatusCode, 4004);
    });

    it('gives a superadmin Prometheus text with process and service metrics', async () => {
      const res = await admin.get('/metrics');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      for (const name of ['process_cpu_user_seconds_total', 'nodejs_heap_size_used_bytes', 'http_requests_total', 'http_request_duration_seconds_bucket', 'dds_point_values_written_total', 'dds_write_buffer_values', 'dds_write_buffer_capacity_values', 'dds_data_sources', 'dds_active_events', 'dds_websocket_connections', 'dds_token_signature_verifications_total']) {
        assert.ok(res.text.includes(`\n${name}`), `${name} missing`);
      }
    });

    it('counts requests by route pattern, not raw path', async () => {
      const labels = { method: 'GET', route: `${API}/users/:username`, status: '200' };
      const before = sample((await admin.get('/metrics')).text, 'http_requests_total', labels);
      assert.equal((await admin.get(`${API}/users/admin`)).status, 200);
      const text = (await admin.get('/metrics')).text;
      assert.equal(sample(text, 'http_requests_total', labels), before + 1);
      assert.ok(!text.includes(`route="${API}/users/admin"`));
      assert.equal((await admin.get(`${API}/no-such-thing`)).status, 404);
      const after = (await admin.get('/metrics')).text;
      assert.ok(sample(after, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) >= 1);
      assert.ok(!after.includes('no-such-thing'));
    });

    it('counts point values written and data sources by state', async () => {
      await admin.post(`${API}/data-sources`, { xid: 'DS_m', name: 'M', modelType: 'VIRTUAL', enabled: false });
      await admin.post(`${API}/data-points`, { xid: 'DP_m', name: 'M', dataSourceXid: 'DS_m', pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
      const before = sample((await admin.get('/metrics')).text, 'dds_point_values_written_total', {});
      const res = await admin.post(`${API}/point-values`, [1, 2, 3].map((i) => ({ xid: 'DP_m', value: i, timestamp: 1_700_000_000_000 + i })));
      assert.equal(res.status, 200, res.text);
      const text = (await admin.get('/metrics')).text;
      assert.equal(sample(text, 'dds_point_values_written_total', {}), before + 3);
      assert.ok(sample(text, 'dds_data_sources', { state: 'STOPPED' }) >= 1);
      assert.equal(sample(text, 'dds_active_events', { alarm_level: 'CRITICAL' }), 0);
    });

    it('reports open WebSocket connections (the service observes its hub)', async () => {
      const token = (await admin.post<{ token: string }>(`${API}/auth-tokens/create`, {})).body.token;
      const ws = new WebSocket(`${app.url.replace(/^http/, 'ws')}${API}/websocket/events`, { headers: { authorization: `Bearer ${token}` } });
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      try {
        assert.equal(sample((await admin.get('/metrics')).text, 'dds_websocket_connections', {}), 1);
      } finally {
        ws.close();
      }
    });

    it('is open to anyone with METRICS_PUBLIC=true', async () => {
      assert.equal(loadConfig({ METRICS_PUBLIC: 'true' }).metricsPublic, true);
      assert.equal(loadConfig({}).metricsPublic, false);
      assert.throws(() => loadConfig({ METRICS_PUBLIC: 'maybe' }), /METRICS_PUBLIC/);
      const open = await startTestApp('pglite', { METRICS_PUBLIC: 'true' });
      try {
        const res = await new ApiClient(open.url).get('/metrics');
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
        assert.ok(res.text.includes('http_requests_total'));
      } finally {
        await open.stop();
      }
    });
  });
});
