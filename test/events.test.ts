import assert from 'node:assert/strict';
import { assertError } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, createUser, getList, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import type { EventRecord, RaiseInput } from '../src/services/events.js';
import type { DataSourceRecord } from '../src/store/metadata/data-sources.js';

interface EventBody {
  id: number;
  alarmLevel: string;
  activeTimestamp: number;
  active: boolean;
  rtnApplicable: boolean;
  rtnTimestamp: number | null;
  rtnCause: string | null;
  message: string;
  acknowledged: boolean;
  acknowledgedTimestamp: number | null;
  acknowledgedByUsername: string | null;
  eventType: { eventType: string; subType: string | null; referenceId1: number | null; referenceId2: number | null };
  dataPointXid: string | null;
  dataSourceXid: string | null;
  comments: { username: string; timestamp: number; text: string }[];
}

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const EV = '/rest/latest/events';
const PASSWORD = 'secret-password-1';
const VIEW_KEYS = [
  'acknowledged', 'acknowledgedByUsername', 'acknowledgedTimestamp', 'active', 'activeTimestamp', 'alarmLevel', 'comments', 'dataPointXid', 'dataSourceXid',
  'eventType', 'id', 'message', 'rtnApplicable', 'rtnCause', 'rtnTimestamp',
];

announceEngines();
for (const engine of metadataEngines()) {
  describe(`events API (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    let viewer: ApiClient;
    let operator: ApiClient;
    const ids: Record<string, number> = {};
    const sources: Record<string, DataSourceRecord> = {};
    const T0 = 1_700_000_000_000;

    const ev = () => app.service.services.events;
    const list = (client: ApiClient, query: string) => getList<EventBody>(client, `${EV}?${query}`);
    const idsOf = async (client: ApiClient, query: string) => (await list(client, query)).items.map((e) => e.id);

    async function pointId(xid: string, source: string, readPermission: string[]): Promise<number> {
      const res = await admin.post<{ id: number }>(DP, { xid, name: xid, dataSourceXid: source, pointLocator: { dataType: 'NUMERIC' }, readPermission });
      assert.equal(res.status, 201, res.text);
      return res.body.id;
    }

    async function pointEvent(name: string, xid: string, pid: number, alarmLevel: RaiseInput['alarmLevel'], offset: number): Promise<EventRecord> {
      const e = await ev().raise({
        alarmLevel, eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', message: `${name} on ${xid}`, activeTimestamp: T0 + offset,
        referenceId1: pid, dataPointId: pid, dataPointXid: xid, dataSourceId: sources.pub!.id, dataSourceXid: sources.pub!.xid,
      });
      ids[name] = e.id;
      return e;
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
      for (const [key, readPermission] of [['pub', ['user']], ['adm', []]] as const) {
        const res = await admin.post(DS, { xid: `ev-src-${key}`, name: `Source ${key}`, modelType: 'VIRTUAL', readPermission });
        assert.equal(res.status, 201, res.text);
        sources[key] = (await app.service.services.dataSources.findByXid(`ev-src-${key}`))!;
      }
      const pub = await pointId('ev-pub', 'ev-src-pub', ['user']);
      const ops = await pointId('ev-ops', 'ev-src-pub', ['operators']);
      const adm = await pointId('ev-adm', 'ev-src-pub', []);
      await pointEvent('e1', 'ev-pub', pub, 'INFORMATION', 1);
      await pointEvent('e2', 'ev-ops', ops, 'WARNING', 2);
      await pointEvent('e3', 'ev-adm', adm, 'CRITICAL', 3);
      ids.e4 = (await ev().raise({ alarmLevel: 'URGENT', eventType: 'DATA_SOURCE', subType: 'DEVICE_FAULT', message: 'pub fault', activeTimestamp: T0 + 4, dataSourceId: sources.pub!.id, dataSourceXid: 'ev-src-pub' })).id;
      ids.e5 = (await ev().raise({ alarmLevel: 'LIFE_SAFETY', eventType: 'DATA_SOURCE', subType: 'DEVICE_FAULT', message: 'adm fault', activeTimestamp: T0 + 5, dataSourceId: sources.adm!.id, dataSourceXid: 'ev-src-adm' })).id;
      ids.e6 = (await ev().raise({ alarmLevel: 'IMPORTANT', eventType: 'SYSTEM', subType: 'STARTUP', message: 'system', activeTimestamp: T0 + 6 })).id;
      await pointEvent('e7', 'ev-pub', pub, 'CRITICAL', 7);
      await ev().returnToNormal(ids.e7!, 'RETURN_TO_NORMAL', T0 + 70);
    });
    after(() => app.stop());

    it('lists events as {items, total} with exactly the API fields', async () => {
      const all = await list(admin, 'sort(id)');
      assert.equal(all.total, 7);
      for (const item of all.items) assert.deepEqual(Object.keys(item).sort(), VIEW_KEYS);
      const e7 = all.items.find((e) => e.id === ids.e7)!;
      assert.deepEqual(
        { ...e7, id: 0 },
        {
          id: 0, alarmLevel: 'CRITICAL', activeTimestamp: T0 + 7, active: false, rtnApplicable: true, rtnTimestamp: T0 + 70,
          rtnCause: 'RETURN_TO_NORMAL', message: 'e7 on ev-pub', acknowledged: false, acknowledgedTimestamp: null, acknowledgedByUsername: null,
          eventType: { eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', referenceId1: e7.eventType.referenceId1, referenceId2: null },
          dataPointXid: 'ev-pub', dataSourceXid: 'ev-src-pub', comments: [],
        },
      );
      assert.equal(typeof e7.eventType.referenceId1, 'number');
      assert.deepEqual((await list(admin, 'limit(2)&sort(-id)')).items.map((e) => e.id), [ids.e7, ids.e6]);
    });

    it('GET /events/<id>: the event; 404 for an unknown or malformed id', async () => {
      const res = await admin.get<EventBody>(`${EV}/${ids.e1}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.message, 'e1 on ev-pub');
      assert.equal(res.body.active, true);
      for (const bad of ['999999999', 'abc', '0', '1.5', '99999999999999999999']) {
        assertError(await admin.get(`${EV}/${bad}`), 404, -1, 'NOT_FOUND');
      }
    });

    it('RQL compares alarmLevel by severity, not alphabetically', async () => {
      assert.deepEqual(await idsOf(admin, 'ge(alarmLevel,WARNING)&sort(id)'), [ids.e2, ids.e3, ids.e4, ids.e5, ids.e7]);
      assert.deepEqual(await idsOf(admin, 'alarmLevel=lt=URGENT&sort(id)'), [ids.e1, ids.e2, ids.e6]);
      assert.deepEqual(await idsOf(admin, 'gt(alarmLevel,CRITICAL)'), [ids.e5]);
      assert.deepEqual(await idsOf(admin, 'alarmLevel=CRITICAL&sort(id)'), [ids.e3, ids.e7]);
      assert.deepEqual(await idsOf(admin, 'sort(-alarmLevel,id)&limit(3)'), [ids.e5, ids.e3, ids.e7]);
      assert.deepEqual(await idsOf(admin, 'in(alarmLevel,information,important)&sort(id)'), [ids.e1, ids.e6]);
    });

    it('RQL filters on active, eventType, subType, XIDs, timestamps and message', async () => {
      assert.deepEqual(await idsOf(admin, 'eq(active,false)'), [ids.e7]);
      assert.equal((await list(admin, 'active=true')).total, 6);
      assert.deepEqual(await idsOf(admin, 'eventType=DATA_SOURCE&sort(id)'), [ids.e4, ids.e5]);
      assert.deepEqual(await idsOf(admin, 'subType=STARTUP'), [ids.e6]);
      assert.deepEqual(await idsOf(admin, 'dataPointXid=ev-pub&sort(id)'), [ids.e1, ids.e7]);
      assert.deepEqual(await idsOf(admin, 'dataSourceXid=ev-src-adm'), [ids.e5]);
      assert.deepEqual(await idsOf(admin, `ge(activeTimestamp,${T0 + 6})&sort(-activeTimestamp)`), [ids.e7, ids.e6]);
      assert.deepEqual(await idsOf(admin, `lt(activeTimestamp,${new Date(T0 + 2).toISOString()})`), [ids.e1]);
      assert.deepEqual(await idsOf(admin, `ne(rtnTimestamp,null)`), [ids.e7]);
      assert.deepEqual(await idsOf(admin, 'match(message,*FAULT)&sort(id)'), [ids.e4, ids.e5]);
      assertError(await admin.get(`${EV}?eq(colour,red)`), 400, 4013);
      assertError(await admin.get(`${EV}?ge(alarmLevel,HOT)`), 400, 4013);
      assertError(await admin.get(`${EV}?eq(active,true`), 400, 4001);
    });

    it('a user sees only events of points and sources it may read; SYSTEM events are superadmin only', async () => {
      assert.deepEqual(await idsOf(viewer, 'sort(id)'), [ids.e1, ids.e4, ids.e7]);
      assert.equal((await list(viewer, 'limit(1)')).total, 3);
      assert.deepEqual(await idsOf(operator, 'sort(id)'), [ids.e1, ids.e2, ids.e4, ids.e7]);
      assert.deepEqual(await idsOf(viewer, 'ge(alarmLevel,WARNING)&sort(id)'), [ids.e4, ids.e7]);
      for (const hidden of ['e2', 'e3', 'e5', 'e6']) assertError(await viewer.get(`${EV}/${ids[hidden]}`), 403, 4004, 'ACCESS_DENIED');
      assert.equal((await operator.get(`${EV}/${ids.e2}`)).status, 200);
      assertError(await viewer.get(`${EV}/999999999`), 404, -1);
    });

    it('PUT /events/acknowledge/<id> records who and when; acknowledging again keeps the first', async () => {
      const before = Date.now();
      const res = await operator.put<EventBody>(`${EV}/acknowledge/${ids.e2}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.id, ids.e2);
      assert.equal(res.body.acknowledged, true);
      assert.equal(res.body.acknowledgedByUsername, 'operator');
      assert.ok(res.body.acknowledgedTimestamp! >= before && res.body.acknowledgedTimestamp! <= Date.now());
      assert.equal(res.body.active, true, 'acknowledging does not end an event that returns to normal');
      const again = await admin.put<EventBody>(`${EV}/acknowledge/${ids.e2}`);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.acknowledgedByUsername, 'operator');
      assert.equal(again.body.acknowledgedTimestamp, res.body.acknowledgedTimestamp);
      assertError(await viewer.put(`${EV}/acknowledge/${ids.e3}`), 403, 4004);
      assert.equal((await admin.get<EventBody>(`${EV}/${ids.e3}`)).body.acknowledged, false, 'a refused acknowledgement changed nothing');
      assertError(await admin.put(`${EV}/acknowledge/999999999`), 404, -1);
      assertError(await admin.put(`${EV}/acknowledge/x1`), 404, -1);
    });

    it('POST /events/acknowledge?<rql> acknowledges only readable matches and counts them', async () => {
      const res = await viewer.post<{ count: number }>(`${EV}/acknowledge?ge(alarmLevel,INFORMATION)`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { count: 3 });
      const acked = (await list(admin, 'acknowledged=true&sort(id)')).items;
      assert.deepEqual(acked.map((e) => [e.id, e.acknowledgedByUsername]), [
        [ids.e1, 'viewer'], [ids.e2, 'operator'], [ids.e4, 'viewer'], [ids.e7, 'viewer'],
      ]);
      const window = await admin.post<{ count: number }>(`${EV}/acknowledge?acknowledged=false&sort(-id)&limit(1)`);
      assert.deepEqual(window.body, { count: 1 });
      assert.equal((await admin.get<EventBody>(`${EV}/${ids.e6}`)).body.acknowledged, true, 'the window in the query order');
      assert.deepEqual((await admin.post(`${EV}/acknowledge?ge(alarmLevel,NONE)`)).body, { count: 2 });
      assert.deepEqual((await admin.post(`${EV}/acknowledge`)).body, { count: 0 }, 'already acknowledged ones are not counted');
      assertError(await admin.post(`${EV}/acknowledge?eq(nope,1)`), 400, 4013);
    });

    it('POST /events/acknowledge refuses a body (400, select by RQL) and acknowledges nothing; no body, blank, null and {} are none', async () => {
      const raise = async (message: string) => (await ev().raise({ alarmLevel: 'WARNING', eventType: 'SYSTEM', subType: 'OTHER', message })).id;
      const first = await raise('body-1');
      const second = await raise('body-2');
      const unacknowledged = async () => idsOf(admin, `in(id,${first},${second})&acknowledged=false&sort(id)`);
      const refused: { body?: unknown; rawBody?: string; headers?: Record<string, string> }[] = [
        { body: { ids: [first] } },
        { body: [first] },
        { body: { key: 'events.ack', args: [] } },
        { rawBody: 'ids=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
        { rawBody: `{"ids":[${first}]${' '.repeat(5000)}}` },
      ];
      for (const { body, ...options } of refused) {
        const res = await admin.post(`${EV}/acknowledge?in(id,${first})`, body, options);
        assertError(res, 400, 4005);
        assert.match((res.body as { message: string }).message, /RQL query only, e\.g\. \/events\/acknowledge\?in\(id,7,8\)/);
      }
      assert.deepEqual(await unacknowledged(), [first, second], 'a refused request acknowledged nothing');
      for (const rawBody of ['', '  ', 'null', '{ }']) {
        const res = await admin.post<{ count: number }>(`${EV}/acknowledge?in(id,${first})`, undefined, { rawBody });
        assert.equal(res.status, 200, `${JSON.stringify(rawBody)}: ${res.text}`);
      }
      assert.deepEqual(await unacknowledged(), [second], 'the query alone selected');
    });

    it('the acknowledging username is kept after the user is deleted', async () => {
      await createUser(admin, 'temp-acker', PASSWORD);
      const temp = await loggedIn(app.url, 'temp-acker', PASSWORD);
      const e = await ev().raise({ alarmLevel: 'WARNING', eventType: 'DATA_SOURCE', message: 'for temp', subType: 'OTHER', dataSourceId: sources.pub!.id, dataSourceXid: 'ev-src-pub', referenceId1: 99 });
      assert.equal((await temp.put(`${EV}/acknowledge/${e.id}`)).status, 200);
      assert.equal((await admin.delete('/rest/latest/users/temp-acker')).status, 200);
      assert.equal((await admin.get<EventBody>(`${EV}/${e.id}`)).body.acknowledgedByUsername, 'temp-acker');
    });

    it('sourceFault raises one DEVICE_FAULT event per episode; sourceRecovered returns it; RAISED etc. are published', async () => {
      const seen: string[] = [];
      const unsubscribe = ev().subscribe((action, e) => seen.push(`${action}:${e.eventType}`));
      const ds = sources.adm!;
      await ev().returnToNormal(ids.e5!, 'RETURN_TO_NORMAL');
      await ev().sourceFault(ds, 'connection refused');
      await ev().sourceFault(ds, 'still refused');
      let faults = (await list(admin, 'dataSourceXid=ev-src-adm&active=true')).items;
      assert.equal(faults.length, 1);
      assert.equal(faults[0]!.alarmLevel, 'URGENT');
      assert.equal(faults[0]!.eventType.subType, 'DEVICE_FAULT');
      assert.match(faults[0]!.message, /Source adm \(ev-src-adm\).*connection refused/);
      await ev().sourceRecovered(ds);
      faults = (await list(admin, 'dataSourceXid=ev-src-adm&sort(id)')).items;
      assert.equal(faults.at(-1)!.active, false);
      assert.equal(faults.at(-1)!.rtnCause, 'RETURN_TO_NORMAL');
      await ev().sourceFault(ds, 'again');
      assert.equal((await list(admin, 'dataSourceXid=ev-src-adm&active=true')).total, 1, 'a new episode raises a new event');
      unsubscribe();
      assert.deepEqual(seen, ['RETURN_TO_NORMAL:DATA_SOURCE', 'RAISED:DATA_SOURCE', 'RETURN_TO_NORMAL:DATA_SOURCE', 'RAISED:DATA_SOURCE']);
      const viewerMay = await ev().mayRead({ username: 'viewer', permissions: ['user'] }, (await ev().get({ username: 'admin', permissions: ['superadmin'] }, ids.e5!)));
      assert.equal(viewerMay, false);
    });
  });

  // 1,000,000 events on PostgreSQL; 250,000 on PGlite, whose single WASM thread takes ~25 s to
  // insert a million rows into the events indexes (the file must stay near 30 s).
  const N = engine === 'postgresql' ? 1_000_000 : 250_000;
  describe(`events at scale: ${N.toLocaleString('en')} stored (${engine})`, function () {
    this.timeout(120_000);
    let app: TestApp;
    let admin: ApiClient;

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      assert.equal((await admin.post(DS, { xid: 'big-src', name: 'Big', modelType: 'VIRTUAL' })).status, 201);
      assert.equal((await admin.post(DP, { xid: 'big-0', name: 'Big 0', dataSourceXid: 'big-src', pointLocator: { dataType: 'NUMERIC' } })).status, 201);
      const db = app.service.services.db;
      const source = (await app.service.services.dataSources.findByXid('big-src'))!;
      const point = (await app.service.services.dataPoints.findByXid('big-0'))!;
      // History of 1000 points (big-0 is a real one); every N/10th event (all on big-0) still active.
      // A script (exec), not a statement: one insert of a million rows may outlast STORE_TIMEOUT_MS.
      await db.exec(
        `insert into events (alarm_level, active_ts, active, rtn_applicable, rtn_ts, rtn_cause, cleared_ts, message, event_type, sub_type,
           data_point_id, data_point_xid, data_source_id, data_source_xid)
         select (array['INFORMATION','WARNING','URGENT','CRITICAL'])[1 + i % 4], 1600000000000 + i, i % ${N / 10} = 0, true,
           case when i % ${N / 10} = 0 then null else 1600000000001 + i end, case when i % ${N / 10} = 0 then null else 'RETURN_TO_NORMAL' end,
           case when i % ${N / 10} = 0 then null else 1600000000001 + i end, 'bulk event', 'DATA_POINT', 'HIGH_LIMIT',
           case when i % 1000 = 0 then ${point.id} else 1000000 + i % 1000 end, 'big-' || (i % 1000), ${source.id}, 'big-src'
         from generate_series(1, ${N}) i`,
      );
      await db.query('analyze events');
    });
    after(() => app.stop());

    it('answers "active events of a point" quickly', async () => {
      const viewerPassword = PASSWORD;
      await createUser(admin, 'big-viewer', viewerPassword);
      const viewer = await loggedIn(app.url, 'big-viewer', viewerPassword);
      await getList(admin, `${EV}?dataPointXid=big-0&active=true`); // warm up
      for (const client of [admin, viewer]) {
        const started = performance.now();
        const res = await getList<EventBody>(client, `${EV}?dataPointXid=big-0&active=true`);
        const ms = performance.now() - started;
        assert.equal(res.total, 10);
        assert.ok(res.items.every((e) => e.active && e.dataPointXid === 'big-0'));
        assert.ok(ms < 250, `took ${ms.toFixed(1)} ms`);
      }
      const started = performance.now();
      const newest = await getList<EventBody>(admin, `${EV}?active=true&sort(-activeTimestamp)&limit(5)`);
      assert.equal(newest.total, 10);
      assert.equal(newest.items[0]!.activeTimestamp, 1600000000000 + N);
      assert.ok(performance.now() - started < 250);
    });

    it('the planner answers active events of a point from a partial index, not a scan (EXPLAIN)', async () => {
      const plan = await app.service.services.db.query<{ 'QUERY PLAN': string }>(
        'explain select t.id from events t where (t.data_point_xid = $1::text) and (t.active = $2::boolean)',
        ['big-0', true],
      );
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      // Any of the partial "where active" indexes answers it from the few active rows.
      assert.match(text, /Index (Only )?Scan using events_(point_|source_)?active /, text);
      assert.doesNotMatch(text, /Seq Scan/, text);
    });
  });
}
