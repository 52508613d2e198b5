// The SET_POINT handler type on the real service (PGlite): its fields checked at save against the
// points, and one delivery attempt at a time (as the handler framework makes them) setting a virtual
// point through the user's set path with the owner's permissions, read back through /point-values;
// a Modbus device started by the test for a device that refuses the write.
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertHasMessage, assertValidation } from './helpers/assertions.js';
import { createUser, getList, loggedIn, type ApiClient } from './helpers/client.js';
import { Device } from './helpers/modbus-device.js';
import { eventually, freePort } from './helpers/wait.js';
import { setPointHandlerKind } from '../src/services/handler-set-point.js';
import { eventView, type EventRecord } from '../src/services/events.js';
import type { DeliveryResult, HandlerAction, HandlerKind } from '../src/services/handler-kinds.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const ED_PATH = '/rest/latest/event-detectors';
const PV = '/rest/latest/point-values';
const PASSWORD = 'secret-password-1';
const SOURCE = 'sp-src';
const EH = '/rest/latest/event-handlers';

interface RawValue {
  timestamp: number;
  value: unknown;
  annotation?: string;
}

describe('SET_POINT handler type', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;
  let kind: HandlerKind;
  let event: EventRecord;
  const owners: Record<string, number> = {};
  let seq = 0;

  const services = () => app.service.services;

  async function point(dataType: string, extra: Record<string, unknown> = {}, locator: Record<string, unknown> = {}): Promise<string> {
    const xid = `sp-p${++seq}`;
    const res = await admin.post(DP, {
      xid,
      name: `Point ${seq}`,
      dataSourceXid: SOURCE,
      pointLocator: { dataType, settable: true, changeType: 'NO_CHANGE', ...(dataType === 'MULTISTATE' ? { values: [1, 2, 3] } : {}), ...locator },
      setPermission: ['setters'],
      ...extra,
    });
    assert.equal(res.status, 201, res.text);
    return xid;
  }

  async function latest(xid: string): Promise<RawValue | undefined> {
    const res = await admin.get<RawValue[]>(`${PV}/latest/${xid}`);
    assert.equal(res.status, 200, res.text);
    return res.body[0];
  }

  function deliver(config: Record<string, unknown>, action: HandlerAction, ownerUserId: number | null = owners.admin!): Promise<DeliveryResult> {
    const handler = { id: 7, xid: 'eh-set', name: 'Open the valve', disabled: false, handlerType: 'SET_POINT' as const, config, ownerUserId };
    return kind.deliver({ handler, action, event, eventView: eventView(event), attempt: 1 });
  }

  before(async () => {
    app = await startTestApp('pglite', { EVENT_HANDLER_POLL_MS: '200', EVENT_HANDLER_RETRY_MS: '200' });
    admin = await loggedIn(app.url, 'admin', 'admin');
    const res = await admin.post(DS, { xid: SOURCE, name: 'Set-point source', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
    assert.equal(res.status, 201, res.text);
    const s = services();
    kind = setPointHandlerKind({ users: s.users, values: s.pointValues });
    await createUser(admin, 'setter', PASSWORD, { permissions: ['user', 'setters'] });
    await createUser(admin, 'looker', PASSWORD, { permissions: ['user'] });
    await createUser(admin, 'gone-setter', PASSWORD, { permissions: ['user', 'setters'], disabled: true });
    for (const username of ['admin', 'setter', 'looker', 'gone-setter']) owners[username] = (await s.users.findByUsername(username))!.id;
    // An event to act on: raised through the service, as a detector would.
    const xid = await point('NUMERIC');
    const p = (await s.dataPoints.findByXid(xid))!;
    event = await s.events.raise({ alarmLevel: 'WARNING', eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', message: 'too hot', dataPointId: p.id, dataPointXid: xid, dataSourceId: p.dataSourceId, dataSourceXid: SOURCE });
  });

  after(async () => {
    await app?.stop();
  });

  describe('check (at save)', () => {
    it('takes a static value in the target type and another point of that type', async () => {
      const target = await point('NUMERIC');
      const other = await point('NUMERIC');
      assert.deepEqual(await kind.check({ targetPointXid: target, activeAction: 'STATIC_VALUE', activeValue: 1.5, inactiveAction: 'POINT_VALUE', inactivePointXid: other }), []);
    });

    it('refuses unknown points, a target that is not settable, a value or a point of another type, naming each field', async () => {
      const fixed = await point('NUMERIC', {}, { settable: false });
      let problems = await kind.check({ targetPointXid: 'sp-nothing', activeAction: 'POINT_VALUE', activePointXid: 'sp-nowhere' });
      assert.deepEqual(problems.map((p) => [p.property, p.message]), [
        ['targetPointXid', 'Data point not found: sp-nothing'],
        ['activePointXid', 'Data point not found: sp-nowhere'],
      ]);
      problems = await kind.check({ targetPointXid: fixed, activeAction: 'STATIC_VALUE', activeValue: 1 });
      assert.deepEqual(problems.map((p) => [p.property, p.message]), [['targetPointXid', `Data point is not settable: ${fixed}`]]);
      const binary = await point('BINARY');
      const text = await point('ALPHANUMERIC');
      problems = await kind.check({ targetPointXid: binary, activeAction: 'STATIC_VALUE', activeValue: 'true', inactiveAction: 'POINT_VALUE', inactivePointXid: text });
      assert.deepEqual(problems.map((p) => p.property), ['activeValue', 'inactivePointXid']);
      assert.match(problems[0]!.message, /must be a boolean \(the target sp-p\d+ is BINARY\)/);
      assert.match(problems[1]!.message, /must be a BINARY point like the target/);
      const multi = await point('MULTISTATE');
      problems = await kind.check({ targetPointXid: multi, activeAction: 'STATIC_VALUE', activeValue: 1.5 });
      assert.deepEqual(problems.map((p) => [p.property, p.message]), [['activeValue', `must be an integer (the target ${multi} is MULTISTATE)`]]);
    });

    it('refuses an unknown action, a missing value or point, and a handler that does nothing', async () => {
      const target = await point('NUMERIC');
      let problems = await kind.check({ targetPointXid: target, activeAction: 'TOGGLE', inactiveAction: 'STATIC_VALUE' });
      assert.deepEqual(problems.map((p) => p.property), ['activeAction', 'inactiveValue']);
      problems = await kind.check({ targetPointXid: target, inactiveAction: 'POINT_VALUE' });
      assert.deepEqual(problems.map((p) => p.property), ['inactivePointXid']);
      problems = await kind.check({ targetPointXid: target });
      assert.deepEqual(problems.map((p) => p.property), ['activeAction']);
      problems = await kind.check({});
      assert.deepEqual(problems.map((p) => p.property), ['targetPointXid', 'activeAction']);
    });
  });

  it('acts on RAISED and RETURN_TO_NORMAL as configured, never escalates, shows its fields', () => {
    const config = { targetPointXid: 'x', activeAction: 'STATIC_VALUE', activeValue: 1, inactiveAction: 'NONE' };
    assert.deepEqual(kind.actions(config), ['RAISED']);
    assert.deepEqual(kind.actions({ ...config, inactiveAction: 'POINT_VALUE', inactivePointXid: 'y' }), ['RAISED', 'RETURN_TO_NORMAL']);
    assert.equal(kind.escalationDelayMs(config), undefined);
    assert.deepEqual(kind.view(config), { targetPointXid: 'x', activeAction: 'STATIC_VALUE', activeValue: 1, inactiveAction: 'NONE' });
  });

  describe('deliver', () => {
    it('sets the static value on RAISED and another point\'s value on RETURN_TO_NORMAL, stored and readable, annotated', async () => {
      const target = await point('NUMERIC');
      const other = await point('NUMERIC');
      const seeded = await admin.put(`${PV}/${other}`, { dataType: 'NUMERIC', value: 17.25 });
      assert.equal(seeded.status, 200, seeded.text);
      const config = { targetPointXid: target, activeAction: 'STATIC_VALUE', activeValue: 80, inactiveAction: 'POINT_VALUE', inactivePointXid: other };
      const started = Date.now();
      assert.deepEqual(await deliver(config, 'RAISED', owners.setter), { outcome: 'SENT' });
      const set = await latest(target);
      assert.equal(set?.value, 80);
      assert.ok(set!.timestamp >= started && set!.timestamp <= Date.now());
      assert.equal(set?.annotation, `Set by event handler eh-set (event ${event.id}, RAISED)`);
      assert.deepEqual(await deliver(config, 'RETURN_TO_NORMAL', owners.setter), { outcome: 'SENT' });
      assert.equal((await latest(target))?.value, 17.25);
      const stored = await admin.get<RawValue[]>(`${PV}/single/${target}?from=${started}&to=${Date.now() + 1000}`);
      assert.deepEqual(stored.body.map((v) => v.value), [80, 17.25], 'both stored, in order');
    });

    it('sets BINARY and ALPHANUMERIC targets in their type', async () => {
      const flag = await point('BINARY');
      const label = await point('ALPHANUMERIC');
      assert.equal((await deliver({ targetPointXid: flag, activeAction: 'STATIC_VALUE', activeValue: true }, 'RAISED')).outcome, 'SENT');
      assert.equal((await deliver({ targetPointXid: label, activeAction: 'STATIC_VALUE', activeValue: 'alarm <1>' }, 'RAISED')).outcome, 'SENT');
      assert.equal((await latest(flag))?.value, true);
      assert.equal((await latest(label))?.value, 'alarm <1>');
    });

    it('fails for good when the owner may not set the target, or read the source point; nothing is set', async () => {
      const target = await point('NUMERIC');
      const hidden = await point('NUMERIC', { readPermission: ['secret'] });
      await admin.put(`${PV}/${hidden}`, { dataType: 'NUMERIC', value: 5 });
      let result = await deliver({ targetPointXid: target, activeAction: 'STATIC_VALUE', activeValue: 1 }, 'RAISED', owners.looker);
      assert.ok(result.outcome === 'FAILED', JSON.stringify(result));
      assert.equal(result.retry, false);
      assert.match(result.error, /setting a value needs read and set permission/);
      result = await deliver({ targetPointXid: target, activeAction: 'POINT_VALUE', activePointXid: hidden }, 'RAISED', owners.setter);
      assert.ok(result.outcome === 'FAILED', JSON.stringify(result));
      assert.equal(result.retry, false);
      assert.equal(await latest(target), undefined, 'nothing set');
    });

    it('fails for good with a disabled or missing owner, and with a target or source that is gone', async () => {
      const target = await point('NUMERIC');
      const config = { targetPointXid: target, activeAction: 'STATIC_VALUE', activeValue: 1 };
      for (const [owner, error] of [
        [owners['gone-setter']!, /gone-setter is disabled/],
        [null, /no owner/],
        [999_999, /no owner/],
      ] as const) {
        const result = await deliver(config, 'RAISED', owner);
        assert.ok(result.outcome === 'FAILED' && !result.retry, JSON.stringify(result));
        assert.match(result.error, error);
      }
      let result = await deliver({ ...config, targetPointXid: 'sp-vanished' }, 'RAISED');
      assert.ok(result.outcome === 'FAILED' && !result.retry, JSON.stringify(result));
      assert.match(result.error, /not found: sp-vanished/);
      result = await deliver({ targetPointXid: target, activeAction: 'POINT_VALUE', activePointXid: 'sp-vanished' }, 'RAISED');
      assert.ok(result.outcome === 'FAILED' && !result.retry, JSON.stringify(result));
      assert.equal(await latest(target), undefined);
    });

    it('fails to be tried again when the device refuses the write, and sets it once the device takes it', async () => {
      const device = new Device(await freePort());
      await device.start();
      try {
        let res = await admin.post(DS, {
          xid: 'sp-plc',
          name: 'PLC',
          modelType: 'MODBUS_IP',
          enabled: true,
          updatePeriods: 1,
          updatePeriodType: 'SECONDS',
          host: '127.0.0.1',
          port: device.port,
          timeoutMs: 300,
          retries: 0,
        });
        assert.equal(res.status, 201, res.text);
        res = await admin.post(DP, { xid: 'sp-valve', name: 'Valve', dataSourceXid: 'sp-plc', pointLocator: { dataType: 'NUMERIC', settable: true, offset: 3, registerType: 'HOLDING' } });
        assert.equal(res.status, 201, res.text);
        const config = { targetPointXid: 'sp-valve', activeAction: 'STATIC_VALUE', activeValue: 55 };
        device.refuseWrites = true;
        const refused = await deliver(config, 'RAISED');
        assert.ok(refused.outcome === 'FAILED', JSON.stringify(refused));
        assert.equal(refused.retry, true);
        assert.match(refused.error, /Device write failed/);
        assert.notEqual(device.holding.get(3), 55);
        device.refuseWrites = false;
        assert.deepEqual(await deliver(config, 'RAISED'), { outcome: 'SENT' });
        assert.equal(device.holding.get(3), 55, 'written to the device');
        assert.equal((await latest('sp-valve'))?.value, 55);
      } finally {
        await admin.delete(`${DS}/sp-plc`);
        await device.stop();
      }
    });
  });
  describe('through /event-handlers', () => {
    let clock = Date.now() - 3_600_000;

    async function write(xid: string, value: number): Promise<void> {
      clock += 1_000;
      const res = await admin.post(PV, [{ xid, value, timestamp: clock }]);
      assert.equal(res.status, 200, res.text);
      await services().detectors.idle();
    }

    it('sets the target when the alarm rises and the inactive value when it returns to normal; deliveries SENT', async () => {
      const watched = await point('NUMERIC');
      const res = await admin.post(ED_PATH, { xid: 'sp-ed-hot', name: 'Too hot', dataPointXid: watched, detectorType: 'HIGH_LIMIT', alarmLevel: 'CRITICAL', limit: 30 });
      assert.equal(res.status, 201, res.text);
      const fan = await point('NUMERIC');
      const created = await admin.post<Record<string, unknown>>(EH, {
        xid: 'eh-fan',
        name: 'Fan while too hot',
        handlerType: 'SET_POINT',
        eventTypes: [{ eventType: 'DATA_POINT', referenceXid: 'sp-ed-hot' }],
        targetPointXid: fan,
        activeAction: 'STATIC_VALUE',
        activeValue: 100,
        inactiveAction: 'STATIC_VALUE',
        inactiveValue: 0,
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.targetPointXid, fan);
      assert.equal(created.body.activeValue, 100);

      await write(watched, 42);
      const on = await eventually('the fan set to 100', async () => ((await latest(fan))?.value === 100 ? latest(fan) : undefined));
      const [event] = (await getList<{ id: number }>(admin, `/rest/latest/events?dataPointXid=${watched}`)).items;
      assert.equal(on?.annotation, `Set by event handler eh-fan (event ${event!.id}, RAISED)`);
      await write(watched, 10);
      await eventually('the fan set to 0', async () => ((await latest(fan))?.value === 0 ? true : undefined));
      const deliveries = await eventually('both deliveries', async () => {
        const list = (await getList<{ eventId: number; action: string; outcome: string }>(admin, `${EH}/eh-fan/deliveries?sort(id)`)).items;
        return list.length >= 2 ? list : undefined;
      });
      assert.deepEqual(deliveries.map((d) => [d.eventId, d.action, d.outcome]), [
        [event!.id, 'RAISED', 'SENT'],
        [event!.id, 'RETURN_TO_NORMAL', 'SENT'],
      ]);
    });

    it('refuses at save a target that is not settable and a value of another type (422 naming the fields)', async () => {
      const fixed = await point('NUMERIC', {}, { settable: false });
      const res = await admin.post(EH, {
        handlerType: 'SET_POINT',
        eventTypes: [{ eventType: 'DATA_POINT' }],
        targetPointXid: fixed,
        activeAction: 'STATIC_VALUE',
        activeValue: 'on',
      });
      const messages = assertValidation(res);
      assert.deepEqual(messages.map((m) => m.property).sort(), ['activeValue', 'targetPointXid']);
      assertHasMessage(messages, 'targetPointXid', /not settable/);
    });
  });
});
