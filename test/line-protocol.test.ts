// Line-protocol ingest (POST /write, /api/v2/write) on the real service, written by InfluxDB's own
// clients: npm's @influxdata/influxdb-client (2.x) and Debian's python3-influxdb (1.x, run as a child
// process), then read back through GET /point-values. Refusals: malformed line (400 naming it),
// unknown series (422), type conflicts, permissions, sizes; all or nothing every time.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { InfluxDB, Point, setLogger } from '@influxdata/influxdb-client';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const API = '/rest/latest';
const DS = `${API}/data-sources`;
const DP = `${API}/data-points`;
const PASSWORD = 'secret-password-1';
const T0 = Date.UTC(2024, 2, 1);
const PYTHON = '/usr/bin/python3';

const run = promisify(execFile);

interface RawValue {
  timestamp: number;
  value: unknown;
}

interface InfluxError {
  code: string;
  message: string;
  error: string;
  line?: number;
  serviceStatusCode: number;
  serviceStatusName: string;
}

/** Whether Debian's InfluxDB 1.x client can be imported (it is a system package, not an npm one). */
async function pythonInfluxAvailable(): Promise<boolean> {
  if (!existsSync(PYTHON)) return false;
  try {
    await run(PYTHON, ['-c', 'import influxdb']);
    return true;
  } catch {
    return false;
  }
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`line protocol ingest (${engine})`, function () {
    this.timeout(180_000);
    let app: TestApp;
    let admin: ApiClient;
    let viewer: ApiClient;
    let operator: ApiClient;
    let token: string;

    const write = (path: string, body: string | Buffer, headers: Record<string, string> = {}, as?: ApiClient) =>
      (as ?? new ApiClient(app.url)).request('POST', `${API}${path}`, {
        rawBody: body,
        headers: { 'content-type': 'text/plain; charset=utf-8', ...(as ? {} : { authorization: `Token ${token}` }), ...headers },
      });
    const raw = async (xid: string, from: number, to: number): Promise<RawValue[]> => {
      const res = await admin.get<RawValue[]>(`${API}/point-values/single/${encodeURIComponent(xid)}?from=${from}&to=${to}`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const pointExists = async (xid: string) => (await admin.get(`${DP}/${encodeURIComponent(xid)}`)).status === 200;
    const influxError = (res: { status: number; body: unknown; text: string }, status: number, code: string): InfluxError => {
      assert.equal(res.status, status, res.text);
      const body = res.body as InfluxError;
      assert.equal(body.code, code, res.text);
      assert.equal(typeof body.message, 'string');
      assert.equal(body.error, body.message, 'InfluxDB 1.x clients read `error`');
      assert.equal(typeof body.serviceStatusCode, 'number');
      return body;
    };
    const createSource = async (xid: string, extra: Record<string, unknown>) => {
      const res = await admin.post(DS, { xid, name: xid, modelType: 'LINE_PROTOCOL', enabled: true, ...extra });
      assert.equal(res.status, 201, res.text);
      return res.body as Record<string, unknown>;
    };
    const createPoint = async (xid: string, source: string, locator: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const res = await admin.post(DP, { xid, name: xid, dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', ...locator }, setPermission: ['operators'], ...extra });
      assert.equal(res.status, 201, res.text);
    };

    before(async () => {
      app = await startTestApp(engine, { BASIC_AUTH_ENABLED: 'true' });
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
      const created = await admin.post<{ token: string }>(`${API}/auth-tokens/create`, { expiry: new Date(Date.now() + 3_600_000).toISOString() });
      assert.equal(created.status, 201, created.text);
      token = created.body.token;
      await createSource('lp-auto', { createPoints: true, editPermission: [] });
      await createSource('lp-fixed', { createPoints: false });
      await createSource('lp-off', { createPoints: true, enabled: false });
      await createPoint('fixed-temp-north', 'lp-fixed', { measurement: 'weather', tags: { site: 'north' }, field: 'temp' });
      await createPoint('fixed-temp-any', 'lp-fixed', { measurement: 'weather', field: 'temp' });
      await createPoint('fixed-on', 'lp-fixed', { dataType: 'BINARY', measurement: 'pump', field: 'on' });
      await createPoint('fixed-state', 'lp-fixed', { dataType: 'MULTISTATE', measurement: 'pump', field: 'state' });
      await createPoint('fixed-note', 'lp-fixed', { dataType: 'ALPHANUMERIC', measurement: 'pump', field: 'note' });
    });
    after(() => app?.stop());

    describe('the LINE_PROTOCOL data source', () => {
      it('keeps createPoints (false by default) and runs while enabled', async () => {
        const res = await admin.get<Record<string, unknown>>(`${DS}/lp-auto`);
        assert.equal(res.body.createPoints, true);
        assert.equal(res.body.modelType, 'LINE_PROTOCOL');
        const plain = await admin.post<Record<string, unknown>>(DS, { xid: 'lp-plain', name: 'plain', modelType: 'LINE_PROTOCOL' });
        assert.equal(plain.status, 201, plain.text);
        assert.equal(plain.body.createPoints, false);
        const bad = await admin.post(DS, { xid: 'lp-bad', name: 'bad', modelType: 'LINE_PROTOCOL', createPoints: 'yes' });
        assert.equal(bad.status, 422, bad.text);
      });

      it('checks a point locator: measurement and field are required, tags are strings', async () => {
        const missing = await admin.post(DP, { xid: 'lp-loc-bad', name: 'x', dataSourceXid: 'lp-fixed', pointLocator: { dataType: 'NUMERIC', measurement: 'm' } });
        assert.equal(missing.status, 422, missing.text);
        assert.match(missing.text, /field/);
        const badTag = await admin.post(DP, { xid: 'lp-loc-bad', name: 'x', dataSourceXid: 'lp-fixed', pointLocator: { dataType: 'NUMERIC', measurement: 'm', field: 'f', tags: { a: 1 } } });
        assert.equal(badTag.status, 422, badTag.text);
        const view = await admin.get<{ pointLocator: Record<string, unknown> }>(`${DP}/fixed-temp-any`);
        assert.deepEqual(view.body.pointLocator, { dataType: 'NUMERIC', settable: false, measurement: 'weather', tags: {}, field: 'temp' });
      });
    });

    describe('InfluxDB 2.x client (@influxdata/influxdb-client)', () => {
      it('writes every field type through /api/v2/write; points are created with their XID rule and read back', async () => {
        const influx = new InfluxDB({ url: `${app.url}${API}`, token });
        const writer = influx.getWriteApi('any-org', 'lp-auto', 'ms', { maxRetries: 0, flushInterval: 0 });
        const t = T0;
        writer.writePoint(new Point('weather').tag('site', 'north pole').tag('floor', '1,2').floatField('temp', -12.25).intField('count', 42).timestamp(new Date(t)));
        writer.writePoint(new Point('weather').tag('site', 'north pole').tag('floor', '1,2').floatField('temp', -11.5).intField('count', 43).timestamp(new Date(t + 60_000)));
        writer.writePoint(new Point('valve').tag('id', 'v=1').booleanField('open', true).stringField('note', 'says "hi", back\\slash').timestamp(new Date(t)));
        await writer.close();
        // LP_ + measurement, tag values in key order (floor, site), field; other characters as _.
        assert.deepEqual(await raw('LP_weather_1_2_north_pole_temp', t, t + 120_000), [
          { timestamp: t, value: -12.25 },
          { timestamp: t + 60_000, value: -11.5 },
        ]);
        assert.deepEqual(await raw('LP_weather_1_2_north_pole_count', t, t + 120_000), [
          { timestamp: t, value: 42 },
          { timestamp: t + 60_000, value: 43 },
        ]);
        assert.deepEqual(await raw('LP_valve_v_1_open', t, t + 1), [{ timestamp: t, value: true }]);
        assert.deepEqual(await raw('LP_valve_v_1_note', t, t + 1), [{ timestamp: t, value: 'says "hi", back\\slash' }]);
        const point = await admin.get<{ pointLocator: Record<string, unknown>; setPermission: string[] }>(`${DP}/LP_valve_v_1_open`);
        assert.deepEqual(point.body.pointLocator, { dataType: 'BINARY', settable: false, measurement: 'valve', tags: { id: 'v=1' }, field: 'open' });
        assert.deepEqual(point.body.setPermission, [], "the source's edit permission");
        assert.equal((await admin.get<{ pointLocator: { dataType: string } }>(`${DP}/LP_valve_v_1_note`)).body.pointLocator.dataType, 'ALPHANUMERIC');
      });

      it('sends large batches gzipped (its gzipThreshold) and they arrive whole', async () => {
        const influx = new InfluxDB({ url: `${app.url}${API}`, token });
        const writer = influx.getWriteApi('o', 'lp-auto', 's', { maxRetries: 0, batchSize: 5_000, gzipThreshold: 100 });
        const t = T0 / 1000 + 86_400;
        for (let i = 0; i < 2_000; i++) writer.writePoint(new Point('gz').tag('n', String(i % 4)).floatField('v', i).timestamp(t + i));
        await writer.close();
        const values = await raw('LP_gz_3_v', (t - 1) * 1000, (t + 3_000) * 1000);
        assert.equal(values.length, 500);
        assert.deepEqual(values[0], { timestamp: (t + 3) * 1000, value: 3 });
        assert.deepEqual(values.at(-1), { timestamp: (t + 1999) * 1000, value: 1999 });
      });

      it('reports the refusal to the client (unknown series without createPoints: 422)', async () => {
        const influx = new InfluxDB({ url: `${app.url}${API}`, token });
        const writer = influx.getWriteApi('o', 'lp-fixed', 'ms', { maxRetries: 0 });
        writer.writePoint(new Point('nowhere').floatField('x', 1).timestamp(new Date(T0)));
        // The client logs every failed write; this one is meant to fail.
        const quiet = setLogger({ error: () => undefined, warn: () => undefined });
        try {
          await assert.rejects(writer.close(), (err: Error & { statusCode?: number; code?: string }) => {
            assert.equal(err.statusCode, 422);
            assert.equal(err.code, 'unprocessable entity');
            assert.match(err.message, /Unknown series at line 1/);
            return true;
          });
        } finally {
          setLogger(quiet);
        }
      });
    });

    describe('InfluxDB 1.x client (python3-influxdb)', () => {
      it('writes with every precision it knows, plain and gzipped, through /write', async function () {
        if (!(await pythonInfluxAvailable())) {
          console.log('    SKIPPED LOUDLY: python3-influxdb is not installed (apt-get install -y python3-influxdb)');
          this.skip();
        }
        const port = new URL(app.url).port;
        // One instant written in each precision's units: every one is stored at the same millisecond.
        const tSeconds = T0 / 1000 + 7_200; // a whole hour, so m and h can say it too
        const script = `
import json, sys
from influxdb import InfluxDBClient
a = json.loads(sys.argv[1])
for gz in (False, True):
    c = InfluxDBClient(host='127.0.0.1', port=a['port'], username=None, password=None, database='lp-auto', path='rest/latest', gzip=gz, headers={'Authorization': 'Token ' + a['token']})
    scale = {'n': 10**9, 'u': 10**6, 'ms': 1000, 's': 1, 'm': 1 / 60, 'h': 1 / 3600}
    for p, k in scale.items():
        c.write_points([{'measurement': 'py', 'tags': {'p': p, 'gz': str(gz)}, 'time': int(a['t'] * k), 'fields': {'v': 1.5, 'n': 7, 'ok': True, 's': 'x y'}}], time_precision=p)
print('ok')
`;
        const { stdout } = await run(PYTHON, ['-c', script, JSON.stringify({ port: Number(port), token, t: tSeconds })]);
        assert.equal(stdout.trim(), 'ok');
        const t = tSeconds * 1000;
        for (const gz of ['False', 'True']) {
          for (const p of ['n', 'u', 'ms', 's', 'm', 'h']) {
            assert.deepEqual(await raw(`LP_py_${gz}_${p}_v`, t - 1, t + 1), [{ timestamp: t, value: 1.5 }], `precision ${p} gzip ${gz}`);
            assert.deepEqual(await raw(`LP_py_${gz}_${p}_n`, t - 1, t + 1), [{ timestamp: t, value: 7 }]);
            assert.deepEqual(await raw(`LP_py_${gz}_${p}_ok`, t - 1, t + 1), [{ timestamp: t, value: true }]);
            assert.deepEqual(await raw(`LP_py_${gz}_${p}_s`, t - 1, t + 1), [{ timestamp: t, value: 'x y' }]);
          }
        }
      });
    });

    describe('matching, precision and bodies', () => {
      it('sends a value to every point whose locator matches; further line tags are ignored', async () => {
        const t = T0 + 3_600_000;
        const res = await write('/write?db=lp-fixed&precision=ms', `weather,site=north,extra=1 temp=5 ${t}\nweather,site=south temp=6 ${t + 1}\n`);
        assert.equal(res.status, 204, res.text);
        assert.deepEqual(await raw('fixed-temp-north', t, t + 10), [{ timestamp: t, value: 5 }]);
        assert.deepEqual(await raw('fixed-temp-any', t, t + 10), [
          { timestamp: t, value: 5 },
          { timestamp: t + 1, value: 6 },
        ]);
      });

      it('reads ns (the default), us, ms and s, comments, blank lines and CRLF', async () => {
        const t = T0 + 2 * 3_600_000;
        for (const [precision, ts, offset] of [
          ['', `${t}000000`, 0],
          ['ns', `${t + 1}999999`, 1],
          ['us', `${t + 2}000`, 2],
          ['ms', `${t + 3}`, 3],
        ] as const) {
          const body = `# a comment\r\n\r\n  weather,site=north temp=${offset} ${ts}\r\n`;
          const res = await write(`/api/v2/write?bucket=lp-fixed&org=ignored${precision ? `&precision=${precision}` : ''}`, body);
          assert.equal(res.status, 204, res.text);
        }
        const s = await write('/api/v2/write?bucket=lp-fixed&precision=s', `weather,site=north temp=9 ${t / 1000 + 60}`);
        assert.equal(s.status, 204, s.text);
        assert.deepEqual(await raw('fixed-temp-north', t, t + 61_000), [
          { timestamp: t, value: 0 },
          { timestamp: t + 1, value: 1 },
          { timestamp: t + 2, value: 2 },
          { timestamp: t + 3, value: 3 },
          { timestamp: t + 60_000, value: 9 },
        ]);
        const bad = await write('/api/v2/write?bucket=lp-fixed&precision=fortnights', 'weather temp=1');
        influxError(bad, 400, 'invalid');
      });

      it('stamps a line without timestamp with the server time', async () => {
        const before = Date.now();
        const res = await write('/write?db=lp-fixed', 'pump on=T,state=3i,note="a\\"b"');
        assert.equal(res.status, 204, res.text);
        const after = Date.now();
        const [on] = await raw('fixed-on', before, after + 1);
        assert.equal(on?.value, true);
        assert.deepEqual((await raw('fixed-state', before, after + 1)).map((v) => v.value), [3]);
        assert.deepEqual((await raw('fixed-note', before, after + 1)).map((v) => v.value), ['a"b']);
      });

      it('takes a gzipped body; refuses bad gzip (400) and more than 64 MiB inflated or 16 MiB sent (413)', async () => {
        const t = T0 + 3 * 3_600_000;
        const ok = await write('/write?db=lp-fixed&precision=ms', gzipSync(`weather,site=north temp=77 ${t}`), { 'content-encoding': 'gzip' });
        assert.equal(ok.status, 204, ok.text);
        assert.deepEqual(await raw('fixed-temp-north', t, t + 1), [{ timestamp: t, value: 77 }]);
        influxError(await write('/write?db=lp-fixed', Buffer.from('not gzip'), { 'content-encoding': 'gzip' }), 400, 'invalid');
        const bomb = gzipSync(Buffer.alloc(65 * 1024 * 1024, 0x23 /* # */));
        assert.ok(bomb.length < 1024 * 1024);
        influxError(await write('/write?db=lp-fixed', bomb, { 'content-encoding': 'gzip' }), 413, 'request too large');
        influxError(await write('/write?db=lp-fixed', Buffer.alloc(16 * 1024 * 1024 + 1, 0x23)), 413, 'request too large');
      });
    });

    describe('refusals: all or nothing', () => {
      it('400 names the malformed line; nothing of the request is written, no point is created', async () => {
        const t = T0 + 4 * 3_600_000;
        const body = [`weather,site=north temp=1 ${t}`, `brand_new x=1 ${t}`, '', `weather,site=north temp=1.2.3 ${t + 1}`].join('\n');
        const res = await write('/write?db=lp-auto&precision=ms', body);
        const err = influxError(res, 400, 'invalid');
        assert.equal(err.line, 4);
        assert.match(err.message, /line 4: invalid number/);
        assert.equal(err.serviceStatusName, 'BAD_REQUEST');
        assert.equal(await pointExists('LP_brand_new_x'), false);
        assert.equal(await pointExists('LP_weather_north_temp'), false);
      });

      it('422 for an unknown series without createPoints, naming its line; the matched lines are not written either', async () => {
        const t = T0 + 5 * 3_600_000;
        const res = await write('/write?db=lp-fixed&precision=ms', `weather,site=north temp=1 ${t}\nweather,site=north humidity=50 ${t}`);
        const err = influxError(res, 422, 'unprocessable entity');
        assert.equal(err.line, 2);
        assert.match(err.message, /Unknown series at line 2.*weather,site=north humidity/);
        assert.deepEqual(await raw('fixed-temp-north', t, t + 1), []);
      });

      it('422 for a value of the wrong type, naming its line', async () => {
        const t = T0 + 6 * 3_600_000;
        const res = await write('/write?db=lp-fixed&precision=ms', `pump on=true ${t}\npump on=1 ${t + 1}`);
        const err = influxError(res, 422, 'unprocessable entity');
        assert.equal(err.line, 2);
        assert.match(err.message, /fixed-on is BINARY/);
        const multi = await write('/write?db=lp-fixed&precision=ms', `pump state=1.5 ${t}`);
        assert.equal(influxError(multi, 422, 'unprocessable entity').line, 1);
        assert.deepEqual(await raw('fixed-on', t, t + 2), []);
        // A new series whose values disagree on their type: refused before its point is made.
        const mixed = await write('/write?db=lp-auto&precision=ms', `mixed v=1 ${t}\nmixed v="one" ${t + 1}`);
        assert.equal(influxError(mixed, 422, 'unprocessable entity').line, 2);
        assert.equal(await pointExists('LP_mixed_v'), false);
      });

      it("follows point changes between writes (a source's points are kept across writes until one changes)", async () => {
        const t = T0 + 8 * 3_600_000;
        await createSource('lp-cache', { createPoints: false });
        await createPoint('cache-a', 'lp-cache', { measurement: 'm', field: 'a' });
        assert.equal((await write('/write?db=lp-cache&precision=ms', `m a=1 ${t}`)).status, 204);
        influxError(await write('/write?db=lp-cache&precision=ms', `m b=1 ${t}`), 422, 'unprocessable entity');
        // Created: the next write finds it.
        await createPoint('cache-b', 'lp-cache', { measurement: 'm', field: 'b' });
        assert.equal((await write('/write?db=lp-cache&precision=ms', `m b=2 ${t + 1}`)).status, 204);
        assert.deepEqual(await raw('cache-b', t, t + 10), [{ timestamp: t + 1, value: 2 }]);
        // Its locator edited: the old field no longer reaches it, the new one does.
        const b = (await admin.get<Record<string, unknown>>(`${DP}/cache-b`)).body;
        const edited = await admin.put(`${DP}/cache-b`, { ...b, pointLocator: { ...(b.pointLocator as object), field: 'c' } });
        assert.equal(edited.status, 200, edited.text);
        influxError(await write('/write?db=lp-cache&precision=ms', `m b=3 ${t + 2}`), 422, 'unprocessable entity');
        assert.equal((await write('/write?db=lp-cache&precision=ms', `m c=4 ${t + 3}`)).status, 204);
        // Its set permission taken from operators: their next write is refused.
        assert.equal((await write('/write?db=lp-cache&precision=ms', `m c=5 ${t + 4}`, {}, operator)).status, 204);
        const c = (await admin.get<Record<string, unknown>>(`${DP}/cache-b`)).body;
        assert.equal((await admin.put(`${DP}/cache-b`, { ...c, setPermission: [] })).status, 200);
        influxError(await write('/write?db=lp-cache&precision=ms', `m c=6 ${t + 5}`, {}, operator), 403, 'forbidden');
        // Deleted: unknown again.
        assert.equal((await admin.delete(`${DP}/cache-b`)).status, 200);
        influxError(await write('/write?db=lp-cache&precision=ms', `m c=7 ${t + 6}`), 422, 'unprocessable entity');
        assert.deepEqual((await raw('cache-a', t, t + 10)).map((v) => v.value), [1]);
      });

      it('refuses an unknown, missing or disabled source, and credentials in the query', async () => {
        influxError(await write('/write?db=nope', 'm f=1'), 404, 'not found');
        influxError(await write('/write?db=fixed-temp-north', 'm f=1'), 404, 'not found');
        influxError(await write('/write', 'm f=1'), 400, 'invalid');
        const off = influxError(await write('/write?db=lp-off', 'm f=1'), 422, 'unprocessable entity');
        assert.match(off.message, /disabled/);
        influxError(await write('/write?db=lp-fixed&u=admin&p=admin', 'weather temp=1'), 400, 'invalid');
      });

      it('permissions: 401 without credentials; 403 without set; 403 creating without edit on the source; Basic and Bearer work', async () => {
        const t = T0 + 7 * 3_600_000;
        const anonymous = new ApiClient(app.url);
        influxError(await anonymous.request('POST', `${API}/write?db=lp-fixed`, { rawBody: 'weather temp=1' }), 401, 'unauthorized');
        const line = `weather,site=north temp=3 ${t}`;
        const denied = influxError(await write('/write?db=lp-fixed&precision=ms', line, {}, viewer), 403, 'forbidden');
        assert.match(denied.message, /fixed-temp-north/);
        assert.deepEqual(await raw('fixed-temp-north', t, t + 1), []);
        const noEdit = influxError(await write('/write?db=lp-auto&precision=ms', `opsonly x=1 ${t}`, {}, operator), 403, 'forbidden');
        assert.match(noEdit.message, /edit permission on data source lp-auto/);
        assert.equal(await pointExists('LP_opsonly_x'), false);
        // operator may set the fixed points (setPermission operators); a session client needs the CSRF header, which ApiClient sends.
        assert.equal((await write('/write?db=lp-fixed&precision=ms', line, {}, operator)).status, 204);
        const basic = new ApiClient(app.url).useBasic('operator', PASSWORD);
        assert.equal((await write('/write?db=lp-fixed&precision=ms', `weather,site=north temp=4 ${t + 1}`, {}, basic)).status, 204);
        const bearer = new ApiClient(app.url).useBearer(token);
        assert.equal((await write('/write?db=lp-fixed&precision=ms', `weather,site=north temp=5 ${t + 2}`, {}, bearer)).status, 204);
        assert.deepEqual((await raw('fixed-temp-north', t, t + 3)).map((v) => v.value), [3, 4, 5]);
      });
    });

    describe('size', () => {
      it('500,000 lines of 20 series in one gzipped request: durable and readable on the answer (measured)', async () => {
        const series = 20;
        const lines = 500_000;
        const t = T0 + 30 * 86_400_000;
        const parts: string[] = [];
        for (let i = 0; i < lines; i++) parts.push(`big,dev=d${i % series} v=${i} ${t + Math.floor(i / series) * 1000}`);
        const text = parts.join('\n');
        const body = gzipSync(text);
        const started = performance.now();
        const res = await write('/api/v2/write?bucket=lp-auto&precision=ms', body, { 'content-encoding': 'gzip' });
        const ms = performance.now() - started;
        assert.equal(res.status, 204, res.text);
        console.log(`      500,000 lines (${(text.length / 1024 / 1024).toFixed(1)} MiB, ${(body.length / 1024 / 1024).toFixed(1)} MiB gzipped), 20 new points: ${ms.toFixed(0)} ms, ${((lines / ms) * 1000).toFixed(0)} values/s`);
        const perSeries = lines / series;
        const read = await admin.get<RawValue[]>(`${API}/point-values/single/LP_big_d7_v?from=${t}&to=${t + perSeries * 1000}&limit=${perSeries + 1}`);
        assert.equal(read.body.length, perSeries);
        assert.deepEqual(read.body[0], { timestamp: t, value: 7 });
        assert.deepEqual(read.body.at(-1), { timestamp: t + (perSeries - 1) * 1000, value: lines - series + 7 });
      });
    });
  });
}
