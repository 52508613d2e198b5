import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { assertError } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, getList, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { HttpReceiver } from './helpers/http-receiver.js';
import { eventually } from './helpers/wait.js';
import { WebhookKind } from '../src/services/handler-webhook.js';
import type { HandlerAction } from '../src/services/handler-kinds.js';

const API = '/rest/latest';
const EH = `${API}/event-handlers`;
const PASSWORD = 'secret-password-1';
const SECRET = 'webhook-secret-1';

interface Delivery {
  id: number;
  eventId: number;
  action: string;
  attempt: number;
  timestamp: number;
  outcome: string;
  status?: number;
  error?: string;
}

interface WebhookBody {
  action: string;
  handlerXid: string;
  event: { id: number; active: boolean; alarmLevel: string; dataPointXid: string | null; eventType: { eventType: string } };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A WEBHOOK that also escalates (ESCALATED after `escalationDelayMs`): the framework's escalation path, with a real receiver. */
class EscalatingWebhook extends WebhookKind {
  override actions(_config: Record<string, unknown>): readonly HandlerAction[] {
    return ['RAISED', 'ESCALATED'];
  }
  override escalationDelayMs(config: Record<string, unknown>): number | undefined {
    return typeof config.escalationDelayMs === 'number' ? config.escalationDelayMs : undefined;
  }
  override view(config: Record<string, unknown>): Record<string, unknown> {
    return { ...super.view(config), escalationDelayMs: config.escalationDelayMs };
  }
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`event handlers (${engine})`, function () {
    this.timeout(60_000);
    let app: TestApp;
    let admin: ApiClient;
    let viewer: ApiClient;
    const receiver = new HttpReceiver();
    let port = 0;
    let seq = 0;
    let clock = Date.now() - 3_600_000;
    const SOURCE = 'eh-src';

    async function point(): Promise<string> {
      const xid = `eh-p${++seq}`;
      const res = await admin.post(`${API}/data-points`, { xid, name: `Point ${seq}`, dataSourceXid: SOURCE, pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    async function detector(dataPointXid: string, alarmLevel = 'CRITICAL'): Promise<string> {
      const xid = `eh-ed${++seq}`;
      const res = await admin.post(`${API}/event-detectors`, { xid, dataPointXid, detectorType: 'HIGH_LIMIT', alarmLevel, limit: 80 });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    /** Writes values one newer timestamp each and waits for the detectors. */
    async function write(xid: string, ...values: number[]): Promise<void> {
      for (const value of values) {
        clock += 10;
        const res = await admin.post(`${API}/point-values`, [{ xid, value, timestamp: clock }]);
        assert.equal(res.status, 200, res.text);
      }
      await app.service.services.detectors.idle();
    }

    async function webhook(body: Record<string, unknown>): Promise<string> {
      const xid = `eh-h${++seq}`;
      const res = await admin.post(EH, { xid, name: `Hook ${seq}`, handlerType: 'WEBHOOK', url: `http://127.0.0.1:${port}/hook/${xid}`, secret: SECRET, eventTypes: [{ eventType: 'DATA_POINT' }], ...body });
      assert.equal(res.status, 201, res.text);
      return xid;
    }

    const deliveries = async (xid: string, query = 'sort(id)') => (await getList<Delivery>(admin, `${EH}/${xid}/deliveries?${query}`)).items;
    const requestsFor = (xid: string) => receiver.requests.filter((r) => r.url === `/hook/${xid}`);
    const eventsOf = async (xid: string) => (await getList<{ id: number; active: boolean }>(admin, `${API}/events?dataPointXid=${xid}&sort(id)`)).items;

    before(async () => {
      port = await receiver.listen();
      app = await startTestApp(engine, {
        EVENT_HANDLER_RETRY_MS: '200',
        EVENT_HANDLER_POLL_MS: '200',
        EVENT_HANDLER_MAX_PENDING: '6',
        WEBHOOK_ALLOWED_HOSTS: `127.0.0.1, localhost:1`,
      });
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer } = await createRoleUsers(admin, PASSWORD));
      const res = await admin.post(`${API}/data-sources`, { xid: SOURCE, name: 'Handler device', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
      assert.equal(res.status, 201, res.text);
    });
    after(async () => {
      await app.stop();
      await receiver.close();
    });

    it('creates, reads, lists, replaces and deletes a WEBHOOK handler; the secret is never shown', async () => {
      const created = await admin.post<Record<string, unknown>>(EH, {
        xid: 'eh-crud', name: 'Crud', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/x', headers: { Authorization: 'Bearer t' }, secret: 's3cret',
        eventTypes: [{ eventType: 'DATA_SOURCE', minAlarmLevel: 'URGENT' }],
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.headers.get('location'), `${EH}/eh-crud`);
      assert.deepEqual({ ...created.body, id: 0 }, {
        id: 0, xid: 'eh-crud', name: 'Crud', disabled: false, handlerType: 'WEBHOOK', eventTypes: [{ eventType: 'DATA_SOURCE', minAlarmLevel: 'URGENT' }],
        url: 'http://127.0.0.1:9/x', headers: { Authorization: 'Bearer t' },
      });
      const got = await admin.get<Record<string, unknown>>(`${EH}/eh-crud`);
      assert.equal(got.status, 200);
      assert.equal(JSON.stringify(got.body).includes('s3cret'), false);
      const listed = await getList<Record<string, unknown>>(admin, `${EH}?xid=eh-crud`);
      assert.equal(listed.total, 1);
      assert.equal('secret' in listed.items[0]!, false);
      // PUT without the secret keeps it (write-only).
      const put = await admin.put<Record<string, unknown>>(`${EH}/eh-crud`, { name: 'Renamed', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/y', eventTypes: [{ eventType: 'SYSTEM' }], disabled: true });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.name, 'Renamed');
      assert.equal(put.body.disabled, true);
      const stored = await app.service.services.eventHandlers.definition(put.body.id as number);
      assert.equal(stored!.config.secret, 's3cret');
      const del = await admin.delete(`${EH}/eh-crud`);
      assert.equal(del.status, 200);
      assertError(await admin.get(`${EH}/eh-crud`), 404, -1, 'NOT_FOUND');
    });

    it('refuses bad handlers with 422 naming the field', async () => {
      const base = { handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/x', secret: 's', eventTypes: [{ eventType: 'DATA_POINT' }] };
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [{ ...base, url: undefined }, 'url', /required/],
        [{ ...base, url: 'ftp://127.0.0.1/x' }, 'url', /http or https/],
        [{ ...base, url: 'not a url' }, 'url', /http or https/],
        [{ ...base, url: 'http://example.com/x' }, 'url', /WEBHOOK_ALLOWED_HOSTS/],
        [{ ...base, url: 'http://localhost:2/x' }, 'url', /WEBHOOK_ALLOWED_HOSTS/],
        [{ ...base, secret: undefined }, 'secret', /required/],
        [{ ...base, headers: { 'X-Signature-256': 'forged' } }, 'headers.X-Signature-256', /set by the handler/],
        [{ ...base, headers: { 'Bad Name': 'v' } }, 'headers.Bad Name', /header name/],
        [{ ...base, headers: { 'X-A': 'a\r\nb' } }, 'headers.X-A', /one line/],
        [{ ...base, eventTypes: [{ eventType: 'DATA_POINT', referenceXid: 'no-such-detector' }] }, 'eventTypes[0].referenceXid', /Event detector not found/],
        [{ ...base, eventTypes: [{ eventType: 'DATA_SOURCE', referenceXid: 'no-such-source' }] }, 'eventTypes[0].referenceXid', /Data source not found/],
        [{ ...base, eventTypes: [{ eventType: 'SYSTEM', referenceXid: 'x' }] }, 'eventTypes[0].referenceXid', /no reference/],
        [{ ...base, eventTypes: [{ eventType: 'NOPE' }] }, 'eventTypes[0].eventType', /./],
        [{ ...base, eventTypes: [{ eventType: 'DATA_POINT', minAlarmLevel: 'LOUD' }] }, 'eventTypes[0].minAlarmLevel', /./],
        [{ ...base, eventTypes: [] }, 'eventTypes', /./],
        [{ ...base, eventTypes: undefined }, 'eventTypes', /./],
        [{ ...base, handlerType: 'PIGEON' }, 'handlerType', /./],
      ];
      for (const [body, property, message] of cases) {
        const res = await admin.post<{ result?: { messages: { property: string; message: string }[] } }>(EH, body);
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
        const m = res.body.result?.messages.find((x) => x.property === property);
        assert.ok(m, `${property} named for ${JSON.stringify(body)}: ${res.text}`);
        assert.match(m.message, message);
        assert.equal(res.text.includes('"s"'), false);
      }
      // A type this instance has no kind for (EMAIL, SET_POINT before their kinds are registered) is a 422 too.
      const known = new Set(['WEBHOOK', 'EMAIL', 'SET_POINT'].filter((t) => app.service.services.eventHandlers.kind(t)));
      for (const type of ['EMAIL', 'SET_POINT'].filter((t) => !known.has(t))) {
        const res = await admin.post<{ result?: { messages: { property: string }[] } }>(EH, { ...base, handlerType: type });
        assert.equal(res.status, 422, res.text);
        assert.equal(res.body.result!.messages[0]!.property, 'handlerType');
      }
    });

    it('is superadmin only: 403 for everyone else, on every route', async () => {
      await webhook({ xid: 'eh-admin-only' });
      assertError(await viewer.get(EH), 403, 4004, 'ACCESS_DENIED');
      assertError(await viewer.get(`${EH}/eh-admin-only`), 403, 4004, 'ACCESS_DENIED');
      assertError(await viewer.get(`${EH}/eh-admin-only/deliveries`), 403, 4004, 'ACCESS_DENIED');
      assertError(await viewer.post(EH, { handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/', secret: 's', eventTypes: [{ eventType: 'SYSTEM' }] }), 403, 4004, 'ACCESS_DENIED');
      assertError(await viewer.put(`${EH}/eh-admin-only`, { handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/', eventTypes: [{ eventType: 'SYSTEM' }] }), 403, 4004, 'ACCESS_DENIED');
      assertError(await viewer.delete(`${EH}/eh-admin-only`), 403, 4004, 'ACCESS_DENIED');
      await admin.delete(`${EH}/eh-admin-only`);
    });

    it('delivers a signed webhook: a 500 is retried, the deliveries show FAILED then SENT; return to normal and acknowledgement follow', async () => {
      const xid = await point();
      const ed = await detector(xid);
      const hook = await webhook({ eventTypes: [{ eventType: 'DATA_POINT', referenceXid: ed }] });
      receiver.statuses = [500, 200];
      await write(xid, 50, 90);
      const [event] = await eventsOf(xid);
      assert.ok(event?.active);
      const done = await eventually('the RAISED webhook sent', async () => {
        const d = await deliveries(hook);
        return d.some((x) => x.outcome === 'SENT') ? d : undefined;
      });
      assert.deepEqual(done.map((d) => [d.action, d.attempt, d.outcome, d.status, d.eventId]), [
        ['RAISED', 1, 'FAILED', 500, event.id],
        ['RAISED', 2, 'SENT', 200, event.id],
      ]);
      assert.match(done[0]!.error!, /500/);
      const sent = requestsFor(hook);
      assert.equal(sent.length, 2);
      const last = sent[1]!;
      assert.equal(last.headers['content-type'], 'application/json');
      const expected = `sha256=${createHmac('sha256', SECRET).update(last.body).digest('hex')}`;
      assert.equal(last.headers['x-signature-256'], expected, 'the signature verifies with the secret over the exact body bytes');
      assert.notEqual(last.headers['x-signature-256'], `sha256=${createHmac('sha256', 'other').update(last.body).digest('hex')}`);
      const body = JSON.parse(last.body.toString('utf8')) as WebhookBody;
      assert.equal(body.action, 'RAISED');
      assert.equal(body.handlerXid, hook);
      const shown = await admin.get<Record<string, unknown>>(`${API}/events/${event.id}`);
      assert.deepEqual(body.event, { ...shown.body, active: true }, 'the event as the API shows it');

      // Back to normal, then acknowledged: one delivery each.
      receiver.statuses = [200];
      await write(xid, 50);
      const ack = await admin.put(`${API}/events/acknowledge/${event.id}`);
      assert.equal(ack.status, 200, ack.text);
      const all = await eventually('RETURN_TO_NORMAL and ACKNOWLEDGED sent', async () => {
        const d = await deliveries(hook, 'outcome=SENT&sort(id)');
        return d.length === 3 ? d : undefined;
      });
      assert.deepEqual(all.map((d) => d.action).sort(), ['ACKNOWLEDGED', 'RAISED', 'RETURN_TO_NORMAL']);
      // RQL on the deliveries: filter, sort, limit.
      assert.deepEqual((await deliveries(hook, 'outcome=FAILED')).map((d) => d.status), [500]);
      assert.equal((await deliveries(hook, 'sort(-id)&limit(1)')).length, 1);
      assert.equal((await getList<Delivery>(admin, `${EH}/${hook}/deliveries?action=RAISED`)).total, 2);
      assertError(await admin.get(`${EH}/${hook}/deliveries?sort(nope)`), 400, 4013, 'RQL_VISIT_ERROR');
      assertError(await admin.get(`${EH}/no-such/deliveries`), 404, -1, 'NOT_FOUND');
    });

    it('has stored the jobs when the event change is answered (the worker stopped meanwhile)', async () => {
      const services = app.service.services;
      await services.handlerJobs.stop();
      try {
        const xid = await point();
        const ed = await detector(xid);
        const hook = await webhook({ eventTypes: [{ eventType: 'DATA_POINT', referenceXid: ed }] });
        const jobs = async () =>
          (await services.db.query<{ action: string }>('select j.action from event_handler_jobs j join event_handlers h on h.id = j.handler_id where h.xid = $1 order by j.id', [hook])).map((r) => r.action);
        await write(xid, 90);
        assert.deepEqual(await jobs(), ['RAISED']);
        const [event] = await eventsOf(xid);
        assert.equal((await admin.put(`${API}/events/acknowledge/${event!.id}`)).status, 200);
        assert.deepEqual(await jobs(), ['RAISED', 'ACKNOWLEDGED'], 'stored before PUT /events/acknowledge answered');
        await write(xid, 50);
        assert.deepEqual(await jobs(), ['RAISED', 'ACKNOWLEDGED', 'RETURN_TO_NORMAL']);
        assert.equal(requestsFor(hook).length, 0);
        services.handlerJobs.start();
        await eventually('all three sent', async () => ((await deliveries(hook, 'outcome=SENT')).length === 3 ? true : undefined));
        assert.deepEqual(await jobs(), []);
      } finally {
        services.handlerJobs.start();
      }
    });

    it('matches by event type, referenceXid (detector or source XID) and minAlarmLevel', async () => {
      const xid = await point();
      const critical = await detector(xid, 'CRITICAL');
      const other = await point();
      await detector(other, 'URGENT');
      receiver.statuses = [200];
      const any = await webhook({ eventTypes: [{ eventType: 'DATA_POINT' }] });
      const byRef = await webhook({ eventTypes: [{ eventType: 'DATA_POINT', referenceXid: critical }] });
      const bySource = await webhook({ eventTypes: [{ eventType: 'DATA_SOURCE', referenceXid: SOURCE }] });
      const byLevel = await webhook({ eventTypes: [{ eventType: 'DATA_POINT', minAlarmLevel: 'CRITICAL' }] });
      const system = await webhook({ eventTypes: [{ eventType: 'SYSTEM' }] });
      const off = await webhook({ eventTypes: [{ eventType: 'DATA_POINT' }], disabled: true });
      await write(xid, 90);
      await write(other, 90);
      const source = (await app.service.services.dataSources.findByXid(SOURCE))!;
      await app.service.services.events.sourceFault(source, 'test fault');
      const raisedFor = async (hook: string) => {
        await eventually(`${hook} idle`, async () => (app.service.services.handlerJobs.busy === 0 ? true : undefined));
        return (await deliveries(hook, 'outcome=SENT&action=RAISED&sort(eventId)')).length;
      };
      await eventually('deliveries made', async () => ((await deliveries(any, 'outcome=SENT&action=RAISED')).length >= 2 ? true : undefined));
      await eventually('source fault delivered', async () => ((await deliveries(bySource, 'outcome=SENT')).length >= 1 ? true : undefined));
      await sleep(300);
      assert.equal(await raisedFor(any), 2, 'any DATA_POINT event');
      assert.equal(await raisedFor(byRef), 1, 'only its detector');
      assert.equal(await raisedFor(bySource), 1, 'its source fault only, not the points of the source');
      assert.equal(await raisedFor(byLevel), 1, 'CRITICAL, not URGENT');
      assert.equal(await raisedFor(system), 0);
      assert.equal(await raisedFor(off), 0, 'disabled');
      await app.service.services.events.sourceRecovered(source);
      for (const h of [any, byRef, bySource, byLevel, system, off]) await admin.delete(`${EH}/${h}`);
    });

    it('escalates when the event is still active and unacknowledged after the delay, and not once acknowledged', async () => {
      app.service.services.eventHandlers.useKind(new EscalatingWebhook({ allowedHosts: undefined }));
      try {
        receiver.statuses = [200];
        const a = await point();
        const edA = await detector(a);
        const b = await point();
        const edB = await detector(b);
        const hookA = await webhook({ escalationDelayMs: 400, eventTypes: [{ eventType: 'DATA_POINT', referenceXid: edA }] });
        const hookB = await webhook({ escalationDelayMs: 400, eventTypes: [{ eventType: 'DATA_POINT', referenceXid: edB }] });
        const started = Date.now();
        await write(a, 90);
        await write(b, 90);
        const [eventB] = await eventsOf(b);
        assert.equal((await admin.put(`${API}/events/acknowledge/${eventB!.id}`)).status, 200);
        const escalated = await eventually('A escalated', async () => (await deliveries(hookA, 'action=ESCALATED')).find((d) => d.outcome === 'SENT'));
        assert.ok(escalated.timestamp - started >= 400, 'not before the delay');
        await sleep(600);
        assert.deepEqual((await deliveries(hookB)).map((d) => d.action), ['RAISED'], 'no escalation of an acknowledged event, and none recorded');
        assert.equal(await app.service.services.db.query('select 1 from event_handler_jobs j join event_handlers h on h.id = j.handler_id where h.xid = $1', [hookB]).then((r) => r.length), 0);
        const escalations = receiver.bodies<WebhookBody>().filter((x) => x.action === 'ESCALATED');
        assert.deepEqual(escalations.map((x) => x.handlerXid), [hookA]);
      } finally {
        app.service.services.eventHandlers.useKind(new WebhookKind({ allowedHosts: app.config.webhookAllowedHosts }));
      }
    });

    it('a receiver that never answers does not slow raising events; the queue stays bounded', async () => {
      const hang = new HttpReceiver();
      hang.hang = true;
      const hangPort = await hang.listen();
      try {
        const xid = await point();
        const ed = await detector(xid);
        const cycles = 10;
        // Without a handler first, then with one whose receiver never answers.
        let t = Date.now();
        for (let i = 0; i < cycles; i++) await write(xid, 90, 50);
        const without = Date.now() - t;
        const hook = await webhook({ url: `http://127.0.0.1:${hangPort}/dead`, eventTypes: [{ eventType: 'DATA_POINT', referenceXid: ed }] });
        t = Date.now();
        for (let i = 0; i < cycles; i++) await write(xid, 90, 50);
        const withDead = Date.now() - t;
        console.log(`      raising and clearing ${cycles} events: ${without} ms without a handler, ${withDead} ms with a dead receiver`);
        assert.ok(withDead < without * 2 + 500, `${withDead} ms with a dead receiver vs ${without} ms without`);
        await eventually('the dead receiver got requests', async () => (hang.requests.length > 0 ? true : undefined));
        // No answer in 10 s is a failed attempt, to be tried again.
        const timedOut = await eventually('an attempt timed out', async () => (await deliveries(hook, 'outcome=FAILED'))[0], 20_000, 200);
        assert.match(timedOut.error!, /no answer within 10 s/);
        // 20 jobs for a handler that may keep 6: the rest recorded GAVE_UP at once, never queued.
        const id = (await app.service.services.eventHandlers.get({ username: 'admin', permissions: ['superadmin'] }, hook)).id;
        const pending = await app.service.services.db.query<{ n: number }>('select count(*)::int as n from event_handler_jobs where handler_id = $1', [id]);
        assert.equal(pending[0]!.n, 6);
        const refused = await deliveries(hook, 'outcome=GAVE_UP');
        assert.equal(refused.length, 14);
        assert.ok(refused.every((d) => d.attempt === 0 && /EVENT_HANDLER_MAX_PENDING/.test(d.error!)));
        await admin.delete(`${EH}/${hook}`);
      } finally {
        await hang.close();
      }
    });

    it('retries with doubling delays, gives up once the job is 24 h old, and takes over a job whose claimant died', async () => {
      const xid = await point();
      const ed = await detector(xid);
      const hook = await webhook({ eventTypes: [{ eventType: 'DATA_POINT', referenceXid: ed }] });
      receiver.statusFor = (url) => (url === `/hook/${hook}` ? 503 : undefined);
      try {
        await write(xid, 90);
        const failed = await eventually('four failed attempts', async () => {
          const d = await deliveries(hook);
          return d.length >= 4 ? d : undefined;
        });
        assert.deepEqual(failed.slice(0, 4).map((d) => [d.attempt, d.outcome, d.status]), [[1, 'FAILED', 503], [2, 'FAILED', 503], [3, 'FAILED', 503], [4, 'FAILED', 503]]);
        const gaps = [1, 2, 3].map((i) => failed[i]!.timestamp - failed[i - 1]!.timestamp);
        // EVENT_HANDLER_RETRY_MS=200: about 200, 400 and 800 ms apart.
        assert.ok(gaps[0]! >= 180 && gaps[1]! >= 380 && gaps[2]! >= 780, `gaps ${gaps.join(', ')} ms`);
        assert.ok(gaps[2]! > gaps[0]! * 2, `gaps ${gaps.join(', ')} ms double`);

        // A claimant that died holds the job until its lease runs out; then another takes it over.
        const db = app.service.services.db;
        const held = Date.now() + 60_000;
        // Taken between two attempts (not while this instance holds it).
        await eventually('the job held by a dead claimant', async () => {
          const rows = await db.query(`update event_handler_jobs set claimed_by = 'dead-instance', lease_until = $2, due_ts = 0
            where handler_id = (select id from event_handlers where xid = $1) and lease_until is null returning id`, [hook, held]);
          return rows.length === 1 ? true : undefined;
        });
        const before = (await deliveries(hook)).length;
        await sleep(700);
        assert.equal((await deliveries(hook)).length, before, 'nothing while the lease holds');
        // The job is a day old when its lease runs out: the next failure is its last.
        await db.query(`update event_handler_jobs set lease_until = $2, created_ts = created_ts - 86400000
          where handler_id = (select id from event_handlers where xid = $1)`, [hook, Date.now() - 1]);
        const last = await eventually('given up', async () => (await deliveries(hook, 'outcome=GAVE_UP'))[0]);
        assert.equal(last.status, 503);
        assert.equal(last.attempt, before + 1);
        assert.equal((await db.query('select 1 from event_handler_jobs j join event_handlers h on h.id = j.handler_id where h.xid = $1', [hook])).length, 0, 'the job is gone');
      } finally {
        receiver.statusFor = () => undefined;
      }
    });

    it('keeps a pending job across a restart: delivered once the receiver is back', async () => {
      const downPort = await (async () => {
        const r = new HttpReceiver();
        const p = await r.listen();
        await r.close();
        return p;
      })();
      const xid = await point();
      const ed = await detector(xid);
      const hook = await webhook({ url: `http://127.0.0.1:${downPort}/back`, eventTypes: [{ eventType: 'DATA_POINT', referenceXid: ed }] });
      await write(xid, 90);
      await eventually('a failed attempt', async () => ((await deliveries(hook, 'outcome=FAILED')).length > 0 ? true : undefined));
      await app.restart();
      admin = await loggedIn(app.url, 'admin', 'admin');
      const back = new HttpReceiver();
      await back.listen(downPort);
      try {
        const sent = await eventually('delivered after the restart', async () => (await deliveries(hook, 'outcome=SENT'))[0], 20_000);
        assert.equal(sent.action, 'RAISED');
        assert.equal(back.requests.length, 1);
        assert.match((await deliveries(hook, 'outcome=FAILED'))[0]!.error!, /ECONNREFUSED/);
      } finally {
        await back.close();
      }
    });
  });
}
