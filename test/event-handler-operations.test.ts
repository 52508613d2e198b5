// Operating event handlers: /metrics counting deliveries by handler type and outcome (the worker's
// attempts and the work a full queue refuses at raise) and the jobs pending, and the retention of
// deliveries (EVENT_HANDLER_DELIVERY_RETENTION) deleting old rows in bounded batches.
import assert from 'node:assert/strict';
import pino from 'pino';
import { startTestApp, type TestApp } from './helpers/app.js';
import { getList, loggedIn, type ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { HttpReceiver } from './helpers/http-receiver.js';
import { eventually } from './helpers/wait.js';
import { RetentionService } from '../src/services/retention.js';
import { DeliveriesRepository } from '../src/store/metadata/event-handlers.js';

const API = '/rest/latest';
const EH = `${API}/event-handlers`;
const DAY = 86_400_000;

interface Delivery {
  eventId: number;
  action: string;
  attempt: number;
  outcome: string;
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`event handler operations (${engine})`, function () {
    this.timeout(60_000);
    let app: TestApp;
    let admin: ApiClient;
    const receiver = new HttpReceiver();
    let port = 0;
    let clock = Date.now() - 3_600_000;

    async function created(path: string, body: Record<string, unknown>): Promise<void> {
      const res = await admin.post(path, body);
      assert.equal(res.status, 201, res.text);
    }

    /** A value above the detector's limit on `xid`: one event raised. */
    async function raise(xid: string): Promise<void> {
      clock += 10;
      const res = await admin.post(`${API}/point-values`, [{ xid, value: 99, timestamp: clock }]);
      assert.equal(res.status, 200, res.text);
      await app.service.services.detectors.idle();
    }

    /** The value of one series of /metrics (0 when absent). */
    async function metric(name: string, labels: Record<string, string>): Promise<number> {
      const res = await admin.get<string>('/metrics');
      assert.equal(res.status, 200, res.text);
      const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      const line = res.text.split('\n').find((l) => (wanted.length === 0 ? l.startsWith(`${name} `) : l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w))));
      return Number(line?.split(' ').pop() ?? 0);
    }

    const deliveries = async (xid: string) => (await getList<Delivery>(admin, `${EH}/${xid}/deliveries?sort(id)`)).items;

    before(async () => {
      port = await receiver.listen();
      // A queue of one job per handler: the second event of a handler whose first is still retrying is refused.
      app = await startTestApp(engine, { EVENT_HANDLER_RETRY_MS: '50', EVENT_HANDLER_POLL_MS: '100', EVENT_HANDLER_MAX_PENDING: '1' });
      admin = await loggedIn(app.url, 'admin', 'admin');
      await created(`${API}/data-sources`, { xid: 'ops-src', name: 'Ops device', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
      for (const i of [1, 2]) {
        await created(`${API}/data-points`, { xid: `ops-p${i}`, name: `Ops ${i}`, dataSourceXid: 'ops-src', pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
        await created(`${API}/event-detectors`, { xid: `ops-ed${i}`, dataPointXid: `ops-p${i}`, detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 80 });
      }
    });
    after(async () => {
      await app.stop();
      await receiver.close();
    });

    it('/metrics counts deliveries by handler type and outcome, and the jobs pending', async () => {
      const webhook = (xid: string, detectors: string[]) =>
        created(EH, {
          xid, handlerType: 'WEBHOOK', url: `http://127.0.0.1:${port}/hook/${xid}`, secret: 'ops-secret',
          eventTypes: detectors.map((referenceXid) => ({ eventType: 'DATA_POINT', referenceXid })),
        });
      // "flaky" fails once then succeeds; "dead" always fails (its job keeps retrying).
      let flakyCalls = 0;
      receiver.statusFor = (url) => (url === '/hook/ops-dead' ? 503 : url === '/hook/ops-flaky' ? (++flakyCalls === 1 ? 500 : 200) : undefined);
      await webhook('ops-flaky', ['ops-ed1']);
      await webhook('ops-dead', ['ops-ed1', 'ops-ed2']);
      const before = {
        sent: await metric('dds_event_handler_deliveries_total', { handler_type: 'WEBHOOK', outcome: 'SENT' }),
        failed: await metric('dds_event_handler_deliveries_total', { handler_type: 'WEBHOOK', outcome: 'FAILED' }),
        gaveUp: await metric('dds_event_handler_deliveries_total', { handler_type: 'WEBHOOK', outcome: 'GAVE_UP' }),
      };
      assert.deepEqual(before, { sent: 0, failed: 0, gaveUp: 0 });
      assert.equal(await metric('dds_event_handler_jobs_pending', { handler_type: 'WEBHOOK' }), 0);

      await raise('ops-p1');
      await eventually('the flaky receiver answering the retry', async () => ((await deliveries('ops-flaky')).some((d) => d.outcome === 'SENT') ? true : undefined));
      await eventually('the dead receiver failing at least twice', async () => ((await deliveries('ops-dead')).filter((d) => d.outcome === 'FAILED').length >= 2 ? true : undefined));
      // The dead handler's job is still pending: the second event's work is refused at raise (attempt 0).
      await raise('ops-p2');
      const refused = (await deliveries('ops-dead')).filter((d) => d.outcome === 'GAVE_UP');
      assert.deepEqual(refused.map((d) => d.attempt), [0]);

      assert.equal(await metric('dds_event_handler_deliveries_total', { handler_type: 'WEBHOOK', outcome: 'SENT' }), 1);
      assert.equal(await metric('dds_event_handler_deliveries_total', { handler_type: 'WEBHOOK', outcome: 'GAVE_UP' }), 1);
      // Every FAILED row recorded (the flaky one's first attempt and the dead one's) was counted, and no other.
      const failedRows = [...(await deliveries('ops-flaky')), ...(await deliveries('ops-dead'))].filter((d) => d.outcome === 'FAILED').length;
      const failed = await metric('dds_event_handler_deliveries_total', { handler_type: 'WEBHOOK', outcome: 'FAILED' });
      assert.ok(failed >= failedRows && failed <= failedRows + 1, `FAILED counted ${failed}, rows ${failedRows} (one more may be under way)`);
      assert.equal(await metric('dds_event_handler_jobs_pending', { handler_type: 'WEBHOOK' }), 1, 'the dead handler\'s job');
      // Deleting the handler deletes its job: nothing pending any more.
      assert.equal((await admin.delete(`${EH}/ops-dead`)).status, 200);
      assert.equal(await metric('dds_event_handler_jobs_pending', { handler_type: 'WEBHOOK' }), 0);
    });

    it('keeps the matchers table that serves matching on raise in step with every save and delete', async () => {
      const { db } = app.service.services;
      const matchers = async (xid: string) =>
        (await db.query<{ t: string; r: string }>(
          `select m.event_type as t, m.reference_xid as r from event_handler_matchers m join event_handlers h on h.id = m.handler_id where h.xid = $1 order by 1, 2`,
          [xid],
        )).map((m) => `${m.t}:${m.r}`);
      const body = { handlerType: 'WEBHOOK', url: `http://127.0.0.1:${port}/hook/ops-m`, secret: 's' };
      await created(EH, { ...body, xid: 'ops-m', eventTypes: [{ eventType: 'DATA_POINT', referenceXid: 'ops-ed1' }, { eventType: 'SYSTEM' }] });
      assert.deepEqual(await matchers('ops-m'), ['DATA_POINT:ops-ed1', 'SYSTEM:']);
      const put = await admin.put(`${EH}/ops-m`, { ...body, eventTypes: [{ eventType: 'DATA_SOURCE', referenceXid: 'ops-src', minAlarmLevel: 'URGENT' }] });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(await matchers('ops-m'), ['DATA_SOURCE:ops-src']);
      const [{ id }] = (await db.query<{ id: number }>('select id from event_handlers where xid = $1', ['ops-m'])) as [{ id: number }];
      assert.equal((await admin.delete(`${EH}/ops-m`)).status, 200);
      assert.equal((await db.query('select 1 from event_handler_matchers where handler_id = $1', [id])).length, 0);
    });

    it('purges deliveries older than EVENT_HANDLER_DELIVERY_RETENTION (30 days) in bounded batches, with the daily run', async () => {
      const { db, retention } = app.service.services;
      await created(EH, { xid: 'ops-old', handlerType: 'WEBHOOK', url: `http://127.0.0.1:${port}/hook/ops-old`, secret: 's', eventTypes: [{ eventType: 'SYSTEM' }] });
      const [{ id }] = await db.query<{ id: number }>('select id from event_handlers where xid = $1', ['ops-old']) as [{ id: number }];
      const now = Date.now();
      // 2,500 deliveries a little over 31 days old, 40 a minute apart from 29 days ago on.
      await db.query(
        `insert into event_handler_deliveries (handler_id, event_id, action, attempt, ts, outcome)
         select $1, g, 'RAISED', 1, $2::bigint - g * 1000, 'SENT' from generate_series(1, 2500) g`,
        [id, now - 31 * DAY],
      );
      await db.query(
        `insert into event_handler_deliveries (handler_id, event_id, action, attempt, ts, outcome)
         select $1, 10000 + g, 'RAISED', 1, $2::bigint + g * 60000, 'SENT' from generate_series(1, 40) g`,
        [id, now - 29 * DAY],
      );
      const count = async () => (await db.query<{ n: number }>('select count(*)::int as n from event_handler_deliveries where handler_id = $1', [id]))[0]!.n;
      assert.equal(await count(), 2540);

      // Batches of 1,000: three statements (1,000, 1,000, 500), none deleting more.
      const real = new DeliveriesRepository(db);
      const batches: number[] = [];
      const store = { deleteBatchBefore: async (cutoff: number, limit: number) => { const n = await real.deleteBatchBefore(cutoff, limit); batches.push(n); return n; } };
      const { config, validator } = app.service.services;
      const batched = new RetentionService({
        points: { retention: () => Promise.resolve([]) },
        store: {} as never,
        pointValues: { forgetDeleted: () => undefined },
        settings: {} as never,
        defaultRetention: undefined,
        validator,
        log: pino({ level: 'silent' }),
        deliveries: { store, retention: config.eventHandlers.deliveryRetention, batch: 1000 },
      });
      assert.equal(await batched.purgeDeliveries(now), 2500);
      assert.deepEqual(batches, [1000, 1000, 500]);
      assert.equal(await count(), 40, 'the 40 younger than 30 days are kept');
      const kept = await db.query<{ ts: number }>('select min(ts)::bigint as ts from event_handler_deliveries where handler_id = $1', [id]);
      assert.ok(Number(kept[0]!.ts) > now - 30 * DAY);

      // The service's daily run purges them too: a day later, the 30-day cutoff has moved past 1 of the 40.
      assert.equal(retention.purgedDeliveries, 0);
      await retention.purgeIfDue(now + DAY + 90_000);
      assert.equal(retention.purgedDeliveries, 1, 'the daily run purged the one now older than 30 days');
      assert.equal(await count(), 39);
      assert.equal(await metric('dds_event_handler_deliveries_purged_total', {}), 1);
    });
  });
}
