import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, getList, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

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
  eventType: { eventType: string; subType: string | null; referenceId1: number | null; referenceId2: number | null };
  dataPointXid: string | null;
  dataSourceXid: string | null;
}

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const ED = '/rest/latest/event-detectors';
const PV = '/rest/latest/point-values';
const EV = '/rest/latest/events';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

announceEngines();
for (const engine of metadataEngines()) {
  describe(`event detector runtime (${engine})`, function () {
    this.timeout(20_000);
    let app: TestApp;
    let admin: ApiClient;
    let seq = 0;
    // Values are written with increasing timestamps in the recent past, so each is its point's newest.
    let clock = Date.now() - 3_600_000;
    const SOURCE = 'rt-src';

    async function point(dataType: string, extra: Record<string, unknown> = {}): Promise<string> {
      const xid = `rt-p${++seq}`;
      const pointLocator = { dataType, settable: true, changeType: 'NO_CHANGE', ...(dataType === 'MULTISTATE' ? { values: [1, 2, 3] } : {}) };
      const res = await admin.post(DP, { xid, name: `Point ${seq}`, dataSourceXid: SOURCE, pointLocator, setPermission: ['user'], ...extra });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    async function detector(dataPointXid: string, detectorType: string, settings: Record<string, unknown>): Promise<string> {
      const xid = `rt-ed${++seq}`;
      const res = await admin.post(ED, { xid, name: `${detectorType} ${seq}`, dataPointXid, detectorType, alarmLevel: 'CRITICAL', ...settings });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    /** Writes values through the bulk API, one newer timestamp each; returns the timestamps. */
    async function write(xid: string, ...values: (number | boolean)[]): Promise<number[]> {
      const stamps: number[] = [];
      for (const value of values) {
        clock += 10;
        stamps.push(clock);
        const res = await admin.post(PV, [{ xid, value, timestamp: clock }]);
        assert.equal(res.status, 200, res.text);
      }
      await app.service.services.detectors.idle();
      return stamps;
    }

    const eventsOf = async (xid: string) => (await getList<EventBody>(admin, `${EV}?dataPointXid=${xid}&sort(id)`)).items;

    /** Polls until the point's events satisfy `ok` (timer-driven detectors). */
    async function waitForEvents(xid: string, ok: (events: EventBody[]) => boolean, timeoutMs = 3000): Promise<EventBody[]> {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const events = await eventsOf(xid);
        if (ok(events)) return events;
        if (Date.now() > end) assert.fail(`events of ${xid} never matched: ${JSON.stringify(events)}`);
        await sleep(25);
      }
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      const res = await admin.post(DS, { xid: SOURCE, name: 'Runtime device', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
      assert.equal(res.status, 201, res.text);
    });
    after(() => app.stop());

    it('HIGH_LIMIT raises one event per crossing and returns to normal at or below the limit', async () => {
      const xid = await point('NUMERIC');
      await detector(xid, 'HIGH_LIMIT', { limit: 80 });
      const [, up, , down] = await write(xid, 50, 90, 95, 80);
      let events = await eventsOf(xid);
      assert.equal(events.length, 1, 'one event for one crossing, not one per value');
      const [e] = events;
      assert.equal(e!.active, false);
      assert.equal(e!.activeTimestamp, up);
      assert.equal(e!.rtnTimestamp, down);
      assert.equal(e!.rtnCause, 'RETURN_TO_NORMAL');
      assert.equal(e!.alarmLevel, 'CRITICAL');
      assert.deepEqual(e!.eventType.eventType, 'DATA_POINT');
      assert.equal(e!.eventType.subType, 'HIGH_LIMIT');
      assert.equal(e!.dataSourceXid, SOURCE);
      assert.match(e!.message, /90.*above the high limit 80/);
      await write(xid, 81, 100);
      events = await eventsOf(xid);
      assert.equal(events.length, 2, 'a second crossing raises a second event');
      assert.equal(events[1]!.active, true);
    });

    it('HIGH_LIMIT with resetLimit returns to normal only below resetLimit (hysteresis)', async () => {
      const xid = await point('NUMERIC');
      await detector(xid, 'HIGH_LIMIT', { limit: 80, resetLimit: 70 });
      await write(xid, 85, 75, 79, 85, 70);
      let events = await eventsOf(xid);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.active, true, 'still active at 75, 79 and exactly 70');
      const [down] = await write(xid, 69.9);
      events = await eventsOf(xid);
      assert.equal(events[0]!.active, false);
      assert.equal(events[0]!.rtnTimestamp, down);
      await write(xid, 75, 80);
      assert.equal((await eventsOf(xid)).length, 1, 'values up to the limit do not raise again');
    });

    it('LOW_LIMIT mirrors HIGH_LIMIT, with resetLimit', async () => {
      const xid = await point('NUMERIC');
      await detector(xid, 'LOW_LIMIT', { limit: 10, resetLimit: 20 });
      await write(xid, 15, 5, 1, 15);
      let events = await eventsOf(xid);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.active, true);
      assert.match(events[0]!.message, /below the low limit 10/);
      await write(xid, 21);
      events = await eventsOf(xid);
      assert.equal(events[0]!.active, false);
      await write(xid, 9.5);
      assert.equal((await eventsOf(xid)).length, 2);
    });

    it('RANGE raises when the value leaves [low, high] and returns inside', async () => {
      const xid = await point('NUMERIC');
      await detector(xid, 'RANGE', { low: 0, high: 10 });
      await write(xid, 5, 0, 10, 12, 15);
      let events = await eventsOf(xid);
      assert.equal(events.length, 1, 'bounds are inside; one event while outside');
      await write(xid, 3, -1);
      events = await eventsOf(xid);
      assert.equal(events.length, 2);
      assert.deepEqual(
        events.map((e) => e.active),
        [false, true],
      );
    });

    it('BINARY_STATE raises on the state and returns when it differs (values set through PUT)', async () => {
      const xid = await point('BINARY');
      await detector(xid, 'BINARY_STATE', { state: true });
      for (const value of [false, true, true]) {
        const res = await admin.put(`${PV}/${xid}`, { dataType: 'BINARY', value });
        assert.equal(res.status, 200, res.text);
        await sleep(2); // PUT stamps with now: keep the timestamps apart
      }
      await app.service.services.detectors.idle();
      let events = await eventsOf(xid);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.active, true);
      await admin.put(`${PV}/${xid}`, { dataType: 'BINARY', value: false });
      await app.service.services.detectors.idle();
      events = await eventsOf(xid);
      assert.equal(events[0]!.active, false);
    });

    it('MULTISTATE_STATE raises on the state and returns when it differs', async () => {
      const xid = await point('MULTISTATE');
      await detector(xid, 'MULTISTATE_STATE', { state: 2 });
      await write(xid, 1, 2, 2);
      assert.deepEqual(
        (await eventsOf(xid)).map((e) => e.active),
        [true],
      );
      await write(xid, 3, 2);
      assert.deepEqual(
        (await eventsOf(xid)).map((e) => e.active),
        [false, true],
      );
    });

    it('NO_UPDATE raises after durationMs without a value and returns on the next value', async () => {
      const xid = await point('NUMERIC');
      // Timed by the event's own timestamp, not by sleeps that a loaded machine stretches.
      await detector(xid, 'NO_UPDATE', { durationMs: 1000 });
      await sleep(200);
      const reset = Date.now();
      await write(xid, 1); // resets the timer: without it the event would rise 800 ms from here
      const raised = await waitForEvents(xid, (e) => e.length === 1);
      assert.equal(raised[0]!.active, true);
      assert.ok(raised[0]!.activeTimestamp >= reset + 1000, 'a value inside durationMs resets the timer');
      assert.match(raised[0]!.message, /no value for 1000 ms/);
      await sleep(1100);
      assert.equal((await eventsOf(xid)).length, 1, 'no second event while still silent');
      await write(xid, 2);
      assert.equal((await eventsOf(xid))[0]!.active, false);
      await waitForEvents(xid, (e) => e.length === 2 && e[1]!.active);
    });

    it('durationMs: the condition must hold that long; clearing it first cancels the event', async () => {
      const xid = await point('NUMERIC');
      await detector(xid, 'HIGH_LIMIT', { limit: 80, durationMs: 300 });
      await write(xid, 90);
      await sleep(100);
      await write(xid, 70);
      await sleep(350);
      assert.equal((await eventsOf(xid)).length, 0, 'the condition did not hold for 300 ms');
      const started = Date.now();
      await write(xid, 90, 95);
      assert.equal((await eventsOf(xid)).length, 0, 'not raised before durationMs');
      const events = await waitForEvents(xid, (e) => e.length === 1);
      assert.ok(Date.now() - started >= 250, 'raised only after the duration');
      assert.equal(events[0]!.active, true);
      await write(xid, 50);
      assert.equal((await eventsOf(xid))[0]!.active, false);
    });

    it('rtnApplicable false: the event stays active until acknowledged; the next crossing raises again', async () => {
      const xid = await point('NUMERIC');
      await detector(xid, 'HIGH_LIMIT', { limit: 80, rtnApplicable: false });
      await write(xid, 90, 50, 40);
      let events = await eventsOf(xid);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.rtnApplicable, false);
      assert.equal(events[0]!.active, true, 'no return to normal for this event');
      assert.equal(events[0]!.rtnTimestamp, null);
      const ack = await admin.put<EventBody>(`${EV}/acknowledge/${events[0]!.id}`);
      assert.equal(ack.status, 200, ack.text);
      assert.equal(ack.body.active, false);
      assert.equal(ack.body.acknowledged, true);
      await write(xid, 85);
      events = await eventsOf(xid);
      assert.equal(events.length, 2);
      assert.equal(events[1]!.active, true);
    });

    it('deleting a detector ends its active event (SOURCE_DISABLED) and keeps the history', async () => {
      const xid = await point('NUMERIC');
      const ed = await detector(xid, 'HIGH_LIMIT', { limit: 80 });
      await write(xid, 90);
      assert.equal((await admin.delete(`${ED}/${ed}`)).status, 200);
      await app.service.services.detectors.idle();
      const events = await eventsOf(xid);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.active, false);
      assert.equal(events[0]!.rtnCause, 'SOURCE_DISABLED');
      await write(xid, 50, 95);
      assert.equal((await eventsOf(xid)).length, 1, 'a deleted detector raises nothing');
    });

    it('disabling the source returns its points’ events with SOURCE_DISABLED; re-enabling watches again', async () => {
      const src = 'rt-src-toggle';
      assert.equal((await admin.post(DS, { xid: src, name: 'Toggle', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' })).status, 201);
      const xid = `rt-p${++seq}`;
      const res = await admin.post(DP, { xid, name: 'Toggle point', dataSourceXid: src, pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' }, setPermission: ['user'] });
      assert.equal(res.status, 201, res.text);
      await detector(xid, 'HIGH_LIMIT', { limit: 80 });
      await write(xid, 90);
      assert.equal((await eventsOf(xid))[0]!.active, true);

      const off = await admin.put(`${DS}/enable-disable/${src}`, { enabled: false });
      assert.equal(off.status, 200, off.text);
      await app.service.services.detectors.idle();
      let events = await eventsOf(xid);
      assert.equal(events[0]!.active, false);
      assert.equal(events[0]!.rtnCause, 'SOURCE_DISABLED');
      await write(xid, 50, 99);
      assert.equal((await eventsOf(xid)).length, 1, 'values of a disabled source raise nothing');

      const on = await admin.put(`${DS}/enable-disable/${src}`, { enabled: true });
      assert.equal(on.status, 200, on.text);
      await write(xid, 50, 99);
      events = await eventsOf(xid);
      assert.equal(events.length, 2);
      assert.equal(events[1]!.active, true);
    });

    it('a restart on the same data restores state: no duplicate event, and the return to normal still works', async () => {
      const xid = await point('NUMERIC');
      await detector(xid, 'HIGH_LIMIT', { limit: 80 });
      await write(xid, 90);
      assert.equal((await eventsOf(xid)).length, 1);
      await app.restart();
      admin = await loggedIn(app.url, 'admin', 'admin');
      await write(xid, 95, 99);
      let events = await eventsOf(xid);
      assert.equal(events.length, 1, 'the open episode survived the restart');
      assert.equal(events[0]!.active, true);
      await write(xid, 10);
      events = await eventsOf(xid);
      assert.equal(events[0]!.active, false);
      assert.equal(events[0]!.rtnCause, 'RETURN_TO_NORMAL');
    });

    it('a renamed point keeps its events under the new XID', async () => {
      const xid = await point('NUMERIC');
      await detector(xid, 'HIGH_LIMIT', { limit: 80 });
      await write(xid, 90);
      const current = await admin.get<Record<string, unknown>>(`${DP}/${xid}`);
      const renamed = `${xid}-renamed`;
      const res = await admin.put(`${DP}/${xid}`, { ...current.body, xid: renamed });
      assert.equal(res.status, 200, res.text);
      await app.service.services.detectors.idle();
      const events = await eventsOf(renamed);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.active, true, 'editing a live point keeps its open episode');
      await write(renamed, 10);
      assert.equal((await eventsOf(renamed))[0]!.active, false);
    });
  });
}
