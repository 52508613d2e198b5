// Mango's own Node.js client, node-mango-client, unchanged against the service: a migrating site's
// scripts. Runs when TEST_MANGO_CLIENT names a checkout of github.com/MangoAutomation/node-mango-client
// with its dependencies installed (`npm install --omit=dev` in it); skipped, saying so, otherwise.
// The client speaks /rest/v3 and sends its own default objects; every step is the client's own call.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { startTestApp, type TestApp } from './helpers/app.js';

const checkout = process.env.TEST_MANGO_CLIENT;

type Body = Record<string, unknown>;

/** The parts of node-mango-client this suite calls (it is plain JavaScript). */
interface MangoObject extends Body {
  xid: string;
  id: number;
  save(): Promise<MangoObject>;
  patch(values: Body): Promise<MangoObject>;
  getValue(): Promise<Body>;
  setEnabled(enabled: boolean, restart?: boolean): Promise<MangoObject>;
  getTags(): Promise<MangoObject>;
  setTags(tags: Record<string, string>): Promise<MangoObject>;
  addTags(tags: Record<string, string>): Promise<MangoObject>;
}
interface MangoClass {
  new (options?: Body): MangoObject;
  get(id: string): Promise<MangoObject>;
  query(rql?: string): Promise<MangoObject[] & { total?: number }>;
  getValue(xid: string): Promise<Body>;
  getValues(xid: string, limit: number): Promise<Body[]>;
}
interface UserClass extends MangoClass {
  login(username: string, password: string): Promise<MangoObject>;
  logout(): Promise<unknown>;
  current(): Promise<MangoObject>;
}
interface DetectorClass extends MangoClass {
  createEventDetector(pointId: number, type: string): MangoObject;
}
interface PointValues {
  latest(options: Body): Promise<unknown>;
  latestAsSingleArray(options: Body): Promise<unknown>;
  forTimePeriod(options: Body): Promise<unknown>;
  forTimePeriodAsSingleArray(options: Body): Promise<unknown>;
  insert(values: Body[]): Promise<unknown>;
  set(options: Body): Promise<unknown>;
  purge(options: Body): Promise<unknown>;
}
interface WebSocketHelper {
  open(options: Body): Promise<unknown>;
  send(message: unknown): Promise<void>;
  matchMessage(matches: (msg: Body) => boolean): Promise<Body>;
  close(): Promise<unknown>;
}
interface MangoClient {
  User: UserClass;
  DataSource: MangoClass;
  DataPoint: MangoClass & { setEnabled(xid: string, enabled: boolean, restart?: boolean): Promise<boolean> };
  EventDetector: DetectorClass;
  pointValues: PointValues;
  restRequest(options: Body): Promise<{ status: number; data: unknown; headers: Record<string, string> }>;
  webSocket(): WebSocketHelper;
}
type MangoClientClass = new (options: Body) => MangoClient;

function loadClient(): MangoClientClass | undefined {
  if (!checkout) return undefined;
  const entry = join(checkout, 'src', 'mangoClient.js');
  if (!existsSync(entry)) throw new Error(`TEST_MANGO_CLIENT=${checkout}: no src/mangoClient.js there`);
  return createRequire(import.meta.url)(entry) as MangoClientClass;
}

const MangoClientCtor = loadClient();

if (!MangoClientCtor) {
  describe('node-mango-client against the service', () => {
    it('SKIPPED: set TEST_MANGO_CLIENT to a node-mango-client checkout (with npm install --omit=dev) to run this suite', function () {
      console.warn('\n  ##  node-mango-client suite SKIPPED: TEST_MANGO_CLIENT is not set\n');
      this.skip();
    });
  });
} else {
  const Client = MangoClientCtor;
  describe('node-mango-client against the service', function () {
    this.timeout(60_000);
    let app: TestApp;
    let client: MangoClient;
    let source: MangoObject;
    let point: MangoObject;
    let second: MangoObject;
    let text: MangoObject;
    const t0 = Date.UTC(2026, 0, 1);
    const MINUTE = 60_000;

    before(async () => {
      app = await startTestApp('pglite');
      const { port } = new URL(app.url);
      client = new Client({ protocol: 'http', host: '127.0.0.1', port: Number(port) });
    });
    after(() => app?.stop());

    it('logs in and reads the current user', async () => {
      const user = await client.User.login('admin', 'admin');
      assert.equal(user.username, 'admin');
      assert.equal((await client.User.current()).username, 'admin');
    });

    it("creates a data source from the client's default object", async () => {
      source = await new client.DataSource({ modelType: 'VIRTUAL', enabled: true, pollPeriod: { periods: 1, type: 'SECONDS' } }).save();
      assert.equal(source.modelType, 'VIRTUAL');
      assert.equal(source.updatePeriods, 1);
      assert.deepEqual(source.editPermission, []);
    });

    it("creates data points from the client's default object, Mango's change types included", async () => {
      const locator = { modelType: 'PL.VIRTUAL', dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE', startValue: '0' };
      point = await new client.DataPoint({ dataSourceXid: source.xid, enabled: true, pointLocator: locator }).save();
      second = await new client.DataPoint({ dataSourceXid: source.xid, enabled: true, pointLocator: { ...locator } }).save();
      text = await new client.DataPoint({
        dataSourceXid: source.xid,
        enabled: true,
        pointLocator: { modelType: 'PL.VIRTUAL', dataType: 'ALPHANUMERIC', settable: true, changeType: 'NO_CHANGE', startValue: '' },
      }).save();
      const brownian = await new client.DataPoint({
        dataSourceXid: source.xid,
        enabled: true,
        pointLocator: { modelType: 'PL.VIRTUAL', dataType: 'NUMERIC', changeType: 'BROWNIAN', min: 0, max: 100, maxChange: 1, startValue: '50' },
      }).save();
      assert.equal((brownian.pointLocator as Body).changeType, 'RANDOM_WALK');
      // The source runs: the Brownian point gets values within its range.
      const deadline = Date.now() + 10_000;
      let value: Body | undefined;
      while (Date.now() < deadline && value === undefined) {
        value = await client.DataPoint.getValue(brownian.xid).catch(() => undefined);
        if (value === undefined) await new Promise((r) => setTimeout(r, 200));
      }
      assert.ok(value && typeof value.value === 'number' && value.value >= 0 && value.value <= 100, JSON.stringify(value));
    });

    it('finds points by RQL and reads one', async () => {
      const found = await client.DataPoint.query(`in(xid,${point.xid},${second.xid})&sort(xid)`);
      assert.deepEqual(found.map((p) => p.xid).sort(), [point.xid, second.xid].sort());
      const got = await client.DataPoint.get(point.xid);
      assert.equal(got.name, point.name);
    });

    it('sets a value and reads it back as the latest', async () => {
      await client.pointValues.set({ xid: point.xid, value: 42.5, dataType: 'NUMERIC', timestamp: Date.now() });
      const latest = await client.DataPoint.getValue(point.xid);
      assert.equal(latest.value, 42.5);
      const viaObject = await point.getValue();
      assert.equal(viaObject.value, 42.5);
    });

    it('inserts values and reads them for a time period, raw and rolled up', async () => {
      const rows = [0, 1, 2, 3, 4, 5].map((i) => ({ xid: point.xid, value: i, dataType: 'NUMERIC', timestamp: t0 + i * MINUTE }));
      await client.pointValues.insert(rows);
      await client.pointValues.insert(rows.map((r) => ({ ...r, xid: second.xid, value: r.value * 10, timestamp: r.timestamp + 30_000 })));
      const raw = (await client.pointValues.forTimePeriod({ xid: point.xid, from: new Date(t0), to: new Date(t0 + 6 * MINUTE) })) as Body[];
      assert.deepEqual(
        raw.map((v) => [v.timestamp, v.value]),
        rows.map((r) => [r.timestamp, r.value]),
      );
      const averages = (await client.pointValues.forTimePeriod({
        xid: point.xid,
        from: new Date(t0),
        to: new Date(t0 + 6 * MINUTE),
        rollup: 'AVERAGE',
        timePeriod: { periods: 3, type: 'MINUTES' },
      })) as Body[];
      assert.equal(averages.length, 2);
      // Time-weighted: each value holds one minute, so the mean of 0,1,2 and of 3,4,5.
      assert.deepEqual(
        averages.map((v) => [v.timestamp, v.value]),
        [
          [t0, 1],
          [t0 + 3 * MINUTE, 4],
        ],
      );
    });

    it('reads several points: latest per point and as one array, time period as one array', async () => {
      const latest = (await client.pointValues.latest({ xids: [point.xid, second.xid], limit: 2 })) as Record<string, Body[]>;
      assert.deepEqual(Object.keys(latest).sort(), [point.xid, second.xid].sort());
      assert.equal(latest[second.xid]!.length, 2);
      assert.equal(latest[second.xid]![0]!.value, 50);
      const single = (await client.pointValues.latestAsSingleArray({ xids: [point.xid, second.xid], limit: 2 })) as Body[];
      assert.ok(Array.isArray(single) && single.length > 0, JSON.stringify(single));
      const merged = (await client.pointValues.forTimePeriodAsSingleArray({
        xids: [point.xid, second.xid],
        from: new Date(t0),
        to: new Date(t0 + 6 * MINUTE),
      })) as Body[];
      // Rows keyed by timestamp: the two points' values never share one (30 s apart), so 12 rows.
      assert.equal(merged.length, 12);
      const times = merged.map((r) => r.timestamp as number);
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
      );
      assert.equal((merged[1]![second.xid] as Body | number | undefined) !== undefined, true, JSON.stringify(merged[1]));
    });

    it('follows a point over the WebSocket', async () => {
      const ws = client.webSocket();
      await ws.open({ path: '/rest/v3/websocket/point-value' });
      try {
        const registered = ws.matchMessage((m) => (m.payload as Body | undefined)?.xid === point.xid && (m.payload as Body).event === 'REGISTERED');
        await ws.send({ xid: point.xid, eventTypes: ['REGISTERED', 'UPDATE'] });
        await registered;
        const update = ws.matchMessage((m) => (m.payload as Body | undefined)?.event === 'UPDATE' && (m.payload as Body).xid === point.xid);
        await client.pointValues.set({ xid: point.xid, value: 7, dataType: 'NUMERIC', timestamp: Date.now() });
        const message = await update;
        assert.equal(((message.payload as Body).value as Body).value, 7);
      } finally {
        await ws.close();
      }
    });

    it('tags a point, patches it, disables and enables it', async () => {
      await point.setTags({ site: 'north' });
      await point.addTags({ floor: '2' });
      await point.getTags();
      assert.deepEqual(point.tags, { site: 'north', floor: '2' });
      const patched = await client.DataPoint.get(point.xid).then((p) => p.patch({ name: 'patched by the client' }));
      assert.equal(patched.name, 'patched by the client');
      assert.equal(patched.xid, point.xid);
      await client.DataPoint.setEnabled(point.xid, false);
      assert.equal((await client.DataPoint.get(point.xid)).enabled, false);
      await client.DataPoint.setEnabled(point.xid, true, true);
      assert.equal((await client.DataPoint.get(point.xid)).enabled, true);
    });

    it("creates detectors from the client's factory (HIGH_LIMIT, ALPHANUMERIC_REGEX_STATE)", async () => {
      const high = await client.EventDetector.createEventDetector(point.id, 'HIGH_LIMIT').save();
      assert.equal(high.dataPointXid, point.xid);
      assert.equal(high.durationMs, 10_000);
      const regex = await client.EventDetector.createEventDetector(text.id, 'ALPHANUMERIC_REGEX_STATE').save();
      assert.equal(regex.detectorType, 'ALPHANUMERIC_REGEX_STATE');
      assert.equal(regex.state, '.*');
    });

    it('keeps a document in the JSON store through /json-data', async () => {
      const doc = { layout: [1, 2, 3], title: 'Boiler house' };
      const put = await client.restRequest({ path: '/rest/v3/json-data/client-doc', method: 'POST', params: { name: 'Client doc', readPermission: 'user', editPermission: '' }, data: doc });
      assert.ok(put.status < 300, String(put.status));
      const got = await client.restRequest({ path: '/rest/v3/json-data/client-doc' });
      const body = got.data as Body;
      assert.deepEqual(body.jsonData ?? body, doc);
    });

    it('copies the data source', async () => {
      const copy = await (client.DataSource as MangoClass & { copy(xid: string, copyXid: string, copyName: string): Promise<MangoObject> }).copy(source.xid, 'client-copy', 'Copied by the client');
      assert.equal(copy.xid, 'client-copy');
      assert.equal(copy.name, 'Copied by the client');
      assert.equal(copy.enabled, false);
      assert.equal(copy.modelType, 'VIRTUAL');
    });

    it("purges a point's values in a range", async () => {
      const deleted = await client.pointValues.purge({ xid: second.xid, from: new Date(t0), to: new Date(t0 + 3 * MINUTE) });
      assert.deepEqual(deleted, { deleted: 3 });
      const left = (await client.pointValues.forTimePeriod({ xid: second.xid, from: new Date(t0), to: new Date(t0 + 6 * MINUTE) })) as Body[];
      assert.equal(left.length, 3);
    });

    it('logs out: the session is over', async () => {
      await client.User.logout();
      await assert.rejects(client.User.current(), (err: { status?: number }) => err.status === 401);
    });
  });
}
