import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation, type ValidationMessageShape } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, getList, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

interface DetectorBody {
  id: number;
  xid: string;
  name: string;
  dataPointXid: string;
  detectorType: string;
  alarmLevel: string;
  rtnApplicable: boolean;
  readPermission: string[];
  editPermission: string[];
  [setting: string]: unknown;
}

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const ED = '/rest/latest/event-detectors';
const PASSWORD = 'secret-password-1';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`event detectors API (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    /** role "user" only. */
    let viewer: ApiClient;
    /** roles "user" and "operators". */
    let operator: ApiClient;
    let seq = 0;
    const unique = (prefix: string) => `${prefix}${++seq}`;

    const SOURCE = 'ed-src';
    const NUMERIC = 'ed-numeric';
    const BINARY = 'ed-binary';
    const MULTISTATE = 'ed-multistate';
    const ALPHA = 'ed-alpha';
    /** A NUMERIC point operators may edit. */
    const OPS_POINT = 'ed-ops-point';

    async function createPoint(xid: string, pointLocator: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
      const res = await admin.post(DP, { xid, name: xid, dataSourceXid: SOURCE, pointLocator, ...extra });
      assert.equal(res.status, 201, res.text);
    }

    function detector(dataPointXid: string, detectorType: string, settings: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
      return { xid: unique('ed-'), name: unique('detector '), dataPointXid, detectorType, alarmLevel: 'URGENT', ...settings, ...extra };
    }

    async function create(body: Record<string, unknown>, as = admin): Promise<DetectorBody> {
      const res = await as.post<DetectorBody>(ED, body);
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    /** The create fails with 422 and a message for `property`; nothing is stored. */
    async function rejects(body: Record<string, unknown>, property: string, message: string | RegExp): Promise<ValidationMessageShape[]> {
      const res = await admin.post(ED, body);
      const messages = assertValidation(res);
      assertHasMessage(messages, property, message);
      if (typeof body.xid === 'string') assert.equal((await admin.get(`${ED}/${body.xid}`)).status, 404, 'an invalid detector was stored');
      return messages;
    }

    const list = (client: ApiClient, query: string) => getList<DetectorBody>(client, `${ED}?${query}`);

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
      const src = await admin.post(DS, { xid: SOURCE, name: 'Detector device', modelType: 'VIRTUAL' });
      assert.equal(src.status, 201, src.text);
      await createPoint(NUMERIC, { dataType: 'NUMERIC' });
      await createPoint(BINARY, { dataType: 'BINARY' });
      await createPoint(MULTISTATE, { dataType: 'MULTISTATE', values: [1, 2, 3] });
      await createPoint(ALPHA, { dataType: 'ALPHANUMERIC' });
      await createPoint(OPS_POINT, { dataType: 'NUMERIC' }, { editPermission: ['operators'] });
    });
    after(() => app.stop());

    describe('POST /event-detectors', () => {
      it('creates a HIGH_LIMIT detector: 201, Location, the stored resource with defaults', async () => {
        const xid = unique('ed-high-');
        const res = await admin.post<DetectorBody>(ED, { xid, name: 'Too hot', dataPointXid: NUMERIC, detectorType: 'HIGH_LIMIT', alarmLevel: 'CRITICAL', limit: 80, resetLimit: 75 });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('location'), `${ED}/${xid}`);
        assert.equal(typeof res.body.id, 'number');
        assert.deepEqual(
          { ...res.body, id: 0 },
          {
            id: 0,
            xid,
            name: 'Too hot',
            dataPointXid: NUMERIC,
            detectorType: 'HIGH_LIMIT',
            alarmLevel: 'CRITICAL',
            limit: 80,
            resetLimit: 75,
            rtnApplicable: true,
            readPermission: ['user'],
            editPermission: [],
          },
        );
        const fetched = await admin.get<DetectorBody>(res.headers.get('location')!);
        assert.equal(fetched.status, 200);
        assert.deepEqual(fetched.body, res.body);
      });

      const cases: { type: string; point: string; settings: Record<string, unknown>; required: string[] }[] = [
        { type: 'HIGH_LIMIT', point: NUMERIC, settings: { limit: 10 }, required: ['limit'] },
        { type: 'LOW_LIMIT', point: NUMERIC, settings: { limit: -5.5 }, required: ['limit'] },
        { type: 'RANGE', point: NUMERIC, settings: { low: 1, high: 9 }, required: ['low', 'high'] },
        { type: 'BINARY_STATE', point: BINARY, settings: { state: true }, required: ['state'] },
        { type: 'MULTISTATE_STATE', point: MULTISTATE, settings: { state: 2 }, required: ['state'] },
        { type: 'NO_UPDATE', point: ALPHA, settings: { durationMs: 60000 }, required: ['durationMs'] },
      ];
      for (const c of cases) {
        it(`creates ${c.type} with ${c.required.join(' and ')}, and reports each missing as "is required"`, async () => {
          const body = await create(detector(c.point, c.type, c.settings));
          assert.equal(body.detectorType, c.type);
          assert.equal(body.dataPointXid, c.point);
          for (const [key, value] of Object.entries(c.settings)) assert.deepEqual(body[key], value, key);
          for (const missing of c.required) {
            const settings = { ...c.settings };
            delete settings[missing];
            const res = await admin.post(ED, detector(c.point, c.type, settings));
            const messages = assertValidation(res);
            assertHasMessage(messages, missing, 'is required');
            assert.match((res.body as { message: string }).message, /EventDetectorVO/);
          }
        });
      }

      it('answers NO_UPDATE on any data type, and refuses durationMs 0 with "must be greater than 0"', async () => {
        for (const p of [NUMERIC, BINARY, MULTISTATE]) await create(detector(p, 'NO_UPDATE', { durationMs: 1 }));
        await rejects(detector(NUMERIC, 'NO_UPDATE', { durationMs: 0 }), 'durationMs', 'must be greater than 0');
        await rejects(detector(NUMERIC, 'NO_UPDATE', { durationMs: -1 }), 'durationMs', /.+/);
        await rejects(detector(NUMERIC, 'NO_UPDATE', { durationMs: 1.5 }), 'durationMs', 'must be an integer');
      });

      it('refuses a point of the wrong data type with 422 on dataPointXid', async () => {
        await rejects(detector(BINARY, 'HIGH_LIMIT', { limit: 1 }), 'dataPointXid', /NUMERIC/);
        await rejects(detector(MULTISTATE, 'LOW_LIMIT', { limit: 1 }), 'dataPointXid', /NUMERIC/);
        await rejects(detector(ALPHA, 'RANGE', { low: 1, high: 2 }), 'dataPointXid', /NUMERIC/);
        await rejects(detector(NUMERIC, 'BINARY_STATE', { state: true }), 'dataPointXid', /BINARY/);
        await rejects(detector(BINARY, 'MULTISTATE_STATE', { state: 1 }), 'dataPointXid', /MULTISTATE/);
      });

      it('refuses a state of the wrong kind', async () => {
        await rejects(detector(BINARY, 'BINARY_STATE', { state: 1 }), 'state', /.+/);
        await rejects(detector(MULTISTATE, 'MULTISTATE_STATE', { state: true }), 'state', /.+/);
        await rejects(detector(MULTISTATE, 'MULTISTATE_STATE', { state: 1.5 }), 'state', /.+/);
      });

      it('refuses a HIGH_LIMIT resetLimit above the limit and a LOW_LIMIT resetLimit below it', async () => {
        await rejects(detector(NUMERIC, 'HIGH_LIMIT', { limit: 50, resetLimit: 51 }), 'resetLimit', /.+/);
        await rejects(detector(NUMERIC, 'LOW_LIMIT', { limit: 50, resetLimit: 49 }), 'resetLimit', /.+/);
        assert.equal((await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 50, resetLimit: 50 }))).resetLimit, 50);
        assert.equal((await create(detector(NUMERIC, 'LOW_LIMIT', { limit: 50, resetLimit: 55 }))).resetLimit, 55);
      });

      it('refuses a RANGE whose low is above its high', async () => {
        const messages = assertValidation(await admin.post(ED, detector(NUMERIC, 'RANGE', { low: 10, high: 5 })));
        assert.ok(messages.some((m) => m.property === 'high' || m.property === 'low'), JSON.stringify(messages));
      });

      it('defaults rtnApplicable to true and keeps false', async () => {
        assert.equal((await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }))).rtnApplicable, true);
        const off = await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1, rtnApplicable: false }));
        assert.equal(off.rtnApplicable, false);
        assert.equal((await admin.get<DetectorBody>(`${ED}/${off.xid}`)).body.rtnApplicable, false);
      });

      it('refuses an unknown dataPointXid with 422 on dataPointXid', async () => {
        const messages = await rejects(detector('no-such-point', 'HIGH_LIMIT', { limit: 1 }), 'dataPointXid', /.+/);
        assert.equal(messages.length, 1);
        await rejects({ ...detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }), dataPointXid: undefined }, 'dataPointXid', 'is required');
      });

      it('refuses a missing or unknown alarmLevel and detectorType', async () => {
        await rejects(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }, { alarmLevel: 'SEVERE' }), 'alarmLevel', /^must be one of/);
        await rejects(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }, { alarmLevel: undefined }), 'alarmLevel', 'is required');
        await rejects(detector(NUMERIC, 'SPIKE', {}), 'detectorType', /^must be one of/);
        await rejects(detector(NUMERIC, 'HIGH_LIMIT', { limit: 'high' }), 'limit', 'must be a number');
      });

      it('generates an ED_ XID when none is given', async () => {
        const res = await admin.post<DetectorBody>(ED, { dataPointXid: NUMERIC, detectorType: 'HIGH_LIMIT', alarmLevel: 'WARNING', limit: 3 });
        assert.equal(res.status, 201, res.text);
        assert.match(res.body.xid, /^ED_[A-Z0-9]+$/);
        assert.equal(res.headers.get('location'), `${ED}/${res.body.xid}`);
        assert.equal((await admin.get(`${ED}/${res.body.xid}`)).status, 200);
      });

      it('refuses an existing XID with 409 4003 "XID is already in use"', async () => {
        const first = await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }));
        const body = assertError(await admin.post(ED, detector(NUMERIC, 'LOW_LIMIT', { limit: 1 }, { xid: first.xid })), 409, 4003, 'ALREADY_EXISTS');
        assert.equal(body.message, 'XID is already in use');
        assert.equal((await admin.get<DetectorBody>(`${ED}/${first.xid}`)).body.detectorType, 'HIGH_LIMIT');
      });
    });

    describe('GET, PUT and DELETE /event-detectors/<xid>', () => {
      it('answers an unknown XID with 404, code -1', async () => {
        for (const res of [await admin.get(`${ED}/nope`), await admin.put(`${ED}/nope`, detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 })), await admin.delete(`${ED}/nope`)]) {
          assertError(res, 404, -1, 'NOT_FOUND');
        }
      });

      it('updates a detector: 200 with the stored resource, settings of the new type only', async () => {
        const created = await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 10, resetLimit: 8 }));
        const res = await admin.put<DetectorBody>(`${ED}/${created.xid}`, {
          xid: created.xid,
          name: 'Now a range',
          dataPointXid: NUMERIC,
          detectorType: 'RANGE',
          alarmLevel: 'INFORMATION',
          low: 2,
          high: 4,
          rtnApplicable: false,
        });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, {
          id: created.id,
          xid: created.xid,
          name: 'Now a range',
          dataPointXid: NUMERIC,
          detectorType: 'RANGE',
          alarmLevel: 'INFORMATION',
          low: 2,
          high: 4,
          rtnApplicable: false,
          readPermission: ['user'],
          editPermission: [],
        });
        assert.deepEqual((await admin.get(`${ED}/${created.xid}`)).body, res.body);
      });

      it('validates an update like a create', async () => {
        const created = await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 10 }));
        assertHasMessage(assertValidation(await admin.put(`${ED}/${created.xid}`, { ...created, limit: undefined })), 'limit', 'is required');
        assertHasMessage(assertValidation(await admin.put(`${ED}/${created.xid}`, { ...created, dataPointXid: BINARY })), 'dataPointXid', /NUMERIC/);
        assert.deepEqual((await admin.get(`${ED}/${created.xid}`)).body, created);
      });

      it('deletes a detector: 200 with the deleted resource', async () => {
        const created = await create(detector(BINARY, 'BINARY_STATE', { state: false }));
        const res = await admin.delete<DetectorBody>(`${ED}/${created.xid}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, created);
        assertError(await admin.get(`${ED}/${created.xid}`), 404, -1);
      });

      it('deletes the detectors of a deleted point', async () => {
        const pointXid = unique('ed-doomed-');
        await createPoint(pointXid, { dataType: 'NUMERIC' });
        const a = await create(detector(pointXid, 'HIGH_LIMIT', { limit: 1 }));
        const b = await create(detector(pointXid, 'NO_UPDATE', { durationMs: 1000 }));
        assert.equal((await list(admin, `eq(dataPointXid,${pointXid})`)).total, 2);
        assert.equal((await admin.delete(`${DP}/${pointXid}`)).status, 200);
        for (const d of [a, b]) assertError(await admin.get(`${ED}/${d.xid}`), 404, -1);
        assert.equal((await list(admin, `eq(dataPointXid,${pointXid})`)).total, 0);
      });
    });

    describe('GET /event-detectors (RQL)', () => {
      const pointXid = 'ed-rql-point';
      before(async () => {
        await createPoint(pointXid, { dataType: 'NUMERIC' });
        const rows: [string, string, string][] = [
          ['rqled-alpha', 'INFORMATION', 'HIGH_LIMIT'],
          ['rqled-beta', 'WARNING', 'LOW_LIMIT'],
          ['rqled-gamma', 'URGENT', 'HIGH_LIMIT'],
          ['rqled-delta', 'CRITICAL', 'RANGE'],
          ['rqled-epsilon', 'LIFE_SAFETY', 'HIGH_LIMIT'],
        ];
        for (const [name, alarmLevel, detectorType] of rows) {
          const settings = detectorType === 'RANGE' ? { low: 0, high: 1 } : { limit: 1 };
          await create({ xid: `xid-${name}`, name, dataPointXid: pointXid, detectorType, alarmLevel, ...settings });
        }
      });

      it('lists as {items, total}, filtered by dataPointXid', async () => {
        const body = await list(admin, `eq(dataPointXid,${pointXid})&sort(name)`);
        assert.deepEqual(body.items.map((d) => d.name), ['rqled-alpha', 'rqled-beta', 'rqled-delta', 'rqled-epsilon', 'rqled-gamma']);
        assert.equal(body.total, 5);
      });

      it('filters with eq and match', async () => {
        const eq = await list(admin, 'eq(name,rqled-delta)');
        assert.deepEqual(eq.items.map((d) => d.xid), ['xid-rqled-delta']);
        const match = await list(admin, 'match(name,*ta)&sort(name)');
        assert.deepEqual(match.items.map((d) => d.name), ['rqled-beta', 'rqled-delta']);
        const byType = await list(admin, `eq(dataPointXid,${pointXid})&eq(detectorType,HIGH_LIMIT)&sort(name)`);
        assert.deepEqual(byType.items.map((d) => d.name), ['rqled-alpha', 'rqled-epsilon', 'rqled-gamma']);
      });

      it('compares alarmLevel by severity, not alphabetically', async () => {
        const above = await list(admin, `eq(dataPointXid,${pointXid})&gt(alarmLevel,WARNING)&sort(name)`);
        assert.deepEqual(above.items.map((d) => d.alarmLevel).sort(), ['CRITICAL', 'LIFE_SAFETY', 'URGENT']);
        const bySeverity = await list(admin, `eq(dataPointXid,${pointXid})&sort(-alarmLevel)`);
        assert.deepEqual(bySeverity.items.map((d) => d.alarmLevel), ['LIFE_SAFETY', 'CRITICAL', 'URGENT', 'WARNING', 'INFORMATION']);
      });

      it('sorts descending and pages with limit(count,offset), total counting every match', async () => {
        const page = await list(admin, `eq(dataPointXid,${pointXid})&sort(-name)&limit(2,1)`);
        assert.deepEqual(page.items.map((d) => d.name), ['rqled-epsilon', 'rqled-delta']);
        assert.equal(page.total, 5);
      });

      it('refuses an unknown property with 400 4013', async () => {
        const body = assertError(await admin.get(`${ED}?gt(limit,3)`), 400, 4013, 'RQL_VISIT_ERROR');
        assert.match(body.message, /limit/);
      });
    });

    describe('permissions', () => {
      let open: DetectorBody;
      let adminOnly: DetectorBody;
      let operators: DetectorBody;
      before(async () => {
        open = await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }, { xid: 'perm-ed-open' }));
        adminOnly = await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }, { xid: 'perm-ed-admin', readPermission: [] }));
        operators = await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }, { xid: 'perm-ed-ops', readPermission: ['operators'], editPermission: ['operators'] }));
      });

      it('refuses creating a detector on a point the user may not edit with 403, allows it with the point\'s edit permission', async () => {
        const body = detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 });
        const res = assertError(await viewer.post(ED, body), 403, 4004, 'ACCESS_DENIED');
        assert.equal(res.message, 'Access denied');
        assertError(await operator.post(ED, body), 403, 4004);
        assertError(await viewer.post(ED, { ...body, dataPointXid: OPS_POINT }), 403, 4004);
        assert.equal((await admin.get(`${ED}/${body.xid as string}`)).status, 404);
        const mine = await create({ ...body, dataPointXid: OPS_POINT }, operator);
        assert.equal(mine.dataPointXid, OPS_POINT);
      });

      it('lists to each user only the detectors it may read', async () => {
        const forViewer = await list(viewer, 'match(xid,perm-ed-*)&sort(xid)');
        assert.deepEqual(forViewer.items.map((d) => d.xid), [open.xid]);
        assert.equal(forViewer.total, 1);
        const forOperator = await list(operator, 'match(xid,perm-ed-*)&sort(xid)');
        assert.deepEqual(forOperator.items.map((d) => d.xid), [open.xid, operators.xid]);
        assert.equal(forOperator.total, 2);
        assert.equal((await list(admin, 'match(xid,perm-ed-*)')).total, 3);
      });

      it('answers 403 for a detector the user may not read', async () => {
        assertError(await viewer.get(`${ED}/${adminOnly.xid}`), 403, 4004);
        assertError(await viewer.get(`${ED}/${operators.xid}`), 403, 4004);
        assertError(await operator.get(`${ED}/${adminOnly.xid}`), 403, 4004);
        assert.deepEqual((await viewer.get(`${ED}/${open.xid}`)).body, open);
        assert.deepEqual((await operator.get(`${ED}/${operators.xid}`)).body, operators);
      });

      it('hides a detector on a point the user may not read, whatever its own read permission', async () => {
        await createPoint('ed-hidden-point', { dataType: 'NUMERIC' }, { readPermission: ['operators'] });
        const hidden = await create(detector('ed-hidden-point', 'HIGH_LIMIT', { limit: 42 }, { xid: 'perm-hidden-ed' }));
        assert.deepEqual(hidden.readPermission, ['user'], 'the detector itself defaults to read ["user"]');
        const forViewer = await list(viewer, 'match(xid,perm-*)&sort(xid)');
        assert.ok(!forViewer.items.some((d) => d.xid === hidden.xid), 'listed to a user who cannot read its point');
        assert.equal(forViewer.total, forViewer.items.length, 'total counts a hidden detector');
        assert.equal((await list(viewer, 'eq(dataPointXid,ed-hidden-point)')).total, 0);
        const refused = assertError(await viewer.get(`${ED}/${hidden.xid}`), 403, 4004);
        assert.ok(!JSON.stringify(refused).includes('42'), 'the refusal leaks the limit');
        assertError(await viewer.put(`${ED}/${hidden.xid}`, { ...hidden, limit: 1 }), 403, 4004);
        assert.deepEqual((await operator.get(`${ED}/${hidden.xid}`)).body, hidden);
        assert.ok((await list(operator, 'match(xid,perm-*)')).items.some((d) => d.xid === hidden.xid));
        assert.equal((await admin.get<DetectorBody>(`${ED}/${hidden.xid}`)).body.limit, 42);
      });

      it('refuses update and delete without edit permission and changes nothing', async () => {
        for (const client of [viewer, operator]) {
          assertError(await client.put(`${ED}/${open.xid}`, { ...open, limit: 99 }), 403, 4004);
          assertError(await client.delete(`${ED}/${open.xid}`), 403, 4004);
        }
        assertError(await viewer.put(`${ED}/${operators.xid}`, { ...operators, limit: 99 }), 403, 4004);
        assertError(await viewer.delete(`${ED}/${operators.xid}`), 403, 4004);
        assert.deepEqual((await admin.get(`${ED}/${open.xid}`)).body, open);
        assert.deepEqual((await admin.get(`${ED}/${operators.xid}`)).body, operators);
      });

      it('allows update and delete with the detector\'s edit permission, on a point the user may not edit', async () => {
        const d = await create(detector(NUMERIC, 'HIGH_LIMIT', { limit: 1 }, { editPermission: ['operators'] }));
        const updated = await operator.put<DetectorBody>(`${ED}/${d.xid}`, { ...d, limit: 7 });
        assert.equal(updated.status, 200, updated.text);
        assert.equal(updated.body.limit, 7);
        assert.equal((await admin.get<DetectorBody>(`${ED}/${d.xid}`)).body.limit, 7);
        // Moving it onto another point still needs edit permission on that point.
        assertError(await operator.put(`${ED}/${d.xid}`, { ...d, dataPointXid: BINARY, detectorType: 'BINARY_STATE', state: true }), 403, 4004);
        const moved = await operator.put<DetectorBody>(`${ED}/${d.xid}`, { ...d, dataPointXid: OPS_POINT });
        assert.equal(moved.status, 200, moved.text);
        assert.equal(moved.body.dataPointXid, OPS_POINT);
        const deleted = await operator.delete<DetectorBody>(`${ED}/${d.xid}`);
        assert.equal(deleted.status, 200, deleted.text);
        assertError(await admin.get(`${ED}/${d.xid}`), 404, -1);
      });

      it('allows update and delete with the point\'s edit permission', async () => {
        const d = await create(detector(OPS_POINT, 'LOW_LIMIT', { limit: 5 }));
        assert.deepEqual(d.editPermission, []);
        const updated = await operator.put<DetectorBody>(`${ED}/${d.xid}`, { ...d, limit: 6 });
        assert.equal(updated.status, 200, updated.text);
        assert.equal(updated.body.limit, 6);
        const deleted = await operator.delete<DetectorBody>(`${ED}/${d.xid}`);
        assert.equal(deleted.status, 200, deleted.text);
        assertError(await admin.get(`${ED}/${d.xid}`), 404, -1);
      });
    });
  });
}
