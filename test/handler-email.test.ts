// The EMAIL handler type against a real SMTP server (smtp-server, messages parsed by mailparser) and
// the real service (PGlite): events raised by a detector on values written through the API, then one
// delivery attempt at a time through the kind, as the handler framework makes them.
import assert from 'node:assert/strict';
import type { ParsedMail } from 'mailparser';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertHasMessage, assertValidation } from './helpers/assertions.js';
import { createUser, getList, loggedIn, type ApiClient } from './helpers/client.js';
import { startTestSmtp, type TestSmtp } from './helpers/smtp.js';
import { eventually, freePort, waitFor } from './helpers/wait.js';
import { emailHandlerKind, type EmailHandlerDeps } from '../src/services/handler-email.js';
import { eventView, type EventRecord } from '../src/services/events.js';
import type { DeliveryResult, HandlerAction, HandlerKind } from '../src/services/handler-kinds.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const ED = '/rest/latest/event-detectors';
const PV = '/rest/latest/point-values';
const EV = '/rest/latest/events';
const EH = '/rest/latest/event-handlers';
const PASSWORD = 'secret-password-1';
const SUPERADMIN = { username: 'admin', permissions: ['superadmin'] };
const FROM = '"Alarms" <alarms@example.com>';
const PUBLIC_URL = 'https://scada.example.com';
interface Delivery {
  id: number;
  eventId: number;
  action: string;
  attempt: number;
  outcome: string;
  status?: number;
  error?: string;
}

/** A point name with markup in it: the HTML part must show it as text. */
const POINT_NAME = 'Boiler <b>&</b> "flow"';

describe('EMAIL handler type', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;
  let smtp: TestSmtp;
  let kind: HandlerKind;
  const kinds: HandlerKind[] = [];
  let seq = 0;
  let clock = Date.UTC(2026, 0, 15, 12, 0, 0);

  const services = () => app.service.services;
  const textOf = (m: ParsedMail) => m.text ?? '';
  const htmlOf = (m: ParsedMail) => (typeof m.html === 'string' ? m.html : '');

  function deps(overrides: Partial<EmailHandlerDeps> = {}): EmailHandlerDeps {
    const s = services();
    return {
      mail: { smtpUrl: smtp.url, from: FROM },
      publicUrl: PUBLIC_URL,
      users: s.users,
      detectors: s.eventDetectors,
      points: s.dataPoints,
      values: s.pointValues,
      zone: 'UTC',
      timeoutsMs: { connection: 2_000, greeting: 2_000, socket: 5_000 },
      ...overrides,
    };
  }

  function newKind(overrides: Partial<EmailHandlerDeps> = {}): HandlerKind {
    const k = emailHandlerKind(deps(overrides));
    kinds.push(k);
    return k;
  }

  function deliver(k: HandlerKind, config: Record<string, unknown>, action: HandlerAction, event: EventRecord, attempt = 1): Promise<DeliveryResult> {
    const handler = { id: 1, xid: 'eh-mail', name: 'Mail the shift', disabled: false, handlerType: 'EMAIL' as const, config, ownerUserId: null };
    return k.deliver({ handler, action, event, eventView: eventView(event), attempt });
  }

  /** A point with a HIGH_LIMIT 30 detector (hold 2 s) on the virtual source; returns its xid. */
  async function alarmPoint(): Promise<string> {
    const xid = `mail-p${++seq}`;
    let res = await admin.post(DP, {
      xid,
      name: POINT_NAME,
      deviceName: 'Plant 1',
      dataSourceXid: 'mail-src',
      pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' },
      unit: '°C',
    });
    assert.equal(res.status, 201, res.text);
    res = await admin.post(ED, { xid: `mail-ed${seq}`, name: 'Too hot', dataPointXid: xid, detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 30 });
    assert.equal(res.status, 201, res.text);
    return xid;
  }

  async function write(xid: string, value: number): Promise<number> {
    clock += 60_000;
    const res = await admin.post(PV, [{ xid, value, timestamp: clock }]);
    assert.equal(res.status, 200, res.text);
    await services().detectors.idle();
    return clock;
  }

  async function eventOf(xid: string): Promise<EventRecord> {
    const { items } = await getList<{ id: number }>(admin, `${EV}?dataPointXid=${xid}&sort(-id)&limit(1)`);
    assert.ok(items[0], `no event on ${xid}`);
    return services().events.get(SUPERADMIN, items[0].id);
  }

  /** Raises an event on a new point with the value 42 (limit 30); returns it and its point. */
  async function raised(): Promise<{ xid: string; event: EventRecord; ts: number }> {
    const xid = await alarmPoint();
    await write(xid, 20);
    const ts = await write(xid, 42);
    return { xid, event: await eventOf(xid), ts };
  }

  async function nextMails(count: number, from: number): Promise<ParsedMail[]> {
    await waitFor(`${count} mails`, () => smtp.received.length >= from + count);
    return smtp.received.slice(from, from + count).map((r) => r.parsed);
  }

  before(async () => {
    smtp = await startTestSmtp({
      refuse: (address) => {
        if (address.startsWith('gone@')) return { code: 550, text: '5.1.1 No such mailbox' };
        if (address.startsWith('busy@')) return { code: 451, text: '4.3.0 Try again later' };
        return undefined;
      },
    });
    app = await startTestApp('pglite', { SMTP_URL: smtp.url, SMTP_FROM: FROM, PUBLIC_URL, EVENT_HANDLER_POLL_MS: '200', EVENT_HANDLER_RETRY_MS: '200' });
    admin = await loggedIn(app.url, 'admin', 'admin');
    await createUser(admin, 'alice', PASSWORD, { email: 'alice@example.com', timezone: 'Europe/Berlin' });
    await createUser(admin, 'carol', PASSWORD, { email: 'carol@example.com', disabled: true });
    await createUser(admin, 'dave', PASSWORD, { email: 'dave@example.com' });
    const res = await admin.post(DS, { xid: 'mail-src', name: 'Mail source', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
    assert.equal(res.status, 201, res.text);
    kind = newKind();
  });

  after(async () => {
    for (const k of kinds) await k.close?.();
    await app?.stop();
    await smtp?.close();
  });

  describe('check (at save)', () => {
    it('takes users, addresses and an escalation', async () => {
      const problems = await kind.check({
        recipients: [{ type: 'USER', username: 'alice' }, { type: 'ADDRESS', address: 'ops@example.com' }],
        sendOnInactive: true,
        escalation: { delayMs: 900_000, recipients: [{ type: 'ADDRESS', address: 'boss@example.com' }] },
      });
      assert.deepEqual(problems, []);
    });

    it('refuses an unknown username, a malformed address, a bad type and a bad escalation, naming each field', async () => {
      const problems = await kind.check({
        recipients: [{ type: 'USER', username: 'nobody' }, { type: 'ADDRESS', address: 'not an address' }, { type: 'FAX', number: 1 }],
        sendOnAcknowledge: 'yes',
        escalation: { delayMs: 0, recipients: [] },
      });
      const byField = new Map(problems.map((p) => [p.property, p.message]));
      assert.match(byField.get('recipients[0].username') ?? '', /User not found: nobody/);
      assert.match(byField.get('recipients[1].address') ?? '', /email address/);
      assert.match(byField.get('recipients[2].type') ?? '', /USER, ADDRESS/);
      assert.match(byField.get('sendOnAcknowledge') ?? '', /true or false/);
      assert.match(byField.get('escalation.delayMs') ?? '', /integer/);
      assert.match(byField.get('escalation.recipients') ?? '', /at least one/);
      assert.ok(problems.every((p) => p.level === 'ERROR' && p.localizedMessage === p.message));
    });

    it('refuses recipients missing while the handler sends, and a handler that sends nothing', async () => {
      let problems = await kind.check({});
      assert.deepEqual(problems.map((p) => p.property), ['recipients']);
      problems = await kind.check({ recipients: [{ type: 'ADDRESS', address: 'a@example.com' }], sendOnActive: false });
      assert.deepEqual(problems.map((p) => p.property), ['sendOnActive']);
    });

    it('refuses every EMAIL handler while SMTP_URL and SMTP_FROM are not set', async () => {
      const problems = await newKind({ mail: undefined }).check({ recipients: [{ type: 'ADDRESS', address: 'a@example.com' }] });
      assert.equal(problems.length, 1);
      assert.equal(problems[0]!.property, 'handlerType');
      assert.match(problems[0]!.message, /SMTP_URL and SMTP_FROM/);
    });
  });

  describe('actions, escalation delay and view', () => {
    it('acts on RAISED by default, on the others as asked, on ESCALATED with an escalation', () => {
      assert.deepEqual(kind.actions({ recipients: [] }), ['RAISED']);
      const all = { recipients: [], sendOnActive: false, sendOnInactive: true, sendOnAcknowledge: true, escalation: { delayMs: 5000, recipients: [] } };
      assert.deepEqual(kind.actions(all), ['RETURN_TO_NORMAL', 'ACKNOWLEDGED', 'ESCALATED']);
      assert.equal(kind.escalationDelayMs(all), 5000);
      assert.equal(kind.escalationDelayMs({ recipients: [] }), undefined);
    });

    it('shows the fields with their defaults', () => {
      const recipients = [{ type: 'ADDRESS', address: 'a@example.com' }];
      assert.deepEqual(kind.view({ recipients }), { recipients, sendOnActive: true, sendOnInactive: false, sendOnAcknowledge: false });
    });
  });

  describe('deliver', () => {
    it('mails the point, value, limit, time (each reader in their zone) and the console link to users and addresses', async () => {
      const { xid, event, ts } = await raised();
      const before = smtp.received.length;
      const config = { recipients: [{ type: 'USER', username: 'alice' }, { type: 'ADDRESS', address: 'ops@example.com' }] };
      const result = await deliver(kind, config, 'RAISED', event);
      assert.deepEqual(result, { outcome: 'SENT', status: 250 });
      const envelopes = smtp.received.slice(before);
      assert.equal(envelopes.length, 2, 'one message per time zone');
      const berlin = envelopes.find((r) => r.rcptTo.includes('alice@example.com'))!;
      const utc = envelopes.find((r) => r.rcptTo.includes('ops@example.com'))!;
      assert.deepEqual(berlin.rcptTo, ['alice@example.com']);
      assert.deepEqual(utc.rcptTo, ['ops@example.com']);
      for (const { parsed } of [berlin, utc]) {
        assert.equal(parsed.from?.value[0]?.address, 'alarms@example.com');
        assert.equal(parsed.subject, `[URGENT] Alarm raised: Plant 1 - ${POINT_NAME} (${xid})`);
        const text = textOf(parsed);
        assert.ok(text.includes(`Point:`) && text.includes(`Plant 1 - ${POINT_NAME} (${xid})`), text);
        assert.match(text, /Value:\s+42 °C/);
        assert.match(text, new RegExp(`Limit:\\s+Too hot \\(HIGH_LIMIT mail-ed${seq}\\): above the high limit 30`));
        assert.match(text, /Alarm level:\s+URGENT/);
        assert.match(text, /Action:\s+RAISED/);
        assert.match(text, new RegExp(`Event:\\s+${event.id} \\(active, not acknowledged\\)`));
        assert.ok(text.includes(`Console:`) && text.includes(`${PUBLIC_URL}/`), text);
        assert.ok(text.includes(event.message), 'the event message is in the text');
        const html = htmlOf(parsed);
        assert.ok(html.includes('Boiler &lt;b&gt;&amp;&lt;/b&gt; &quot;flow&quot;'), 'the point name is escaped in the HTML');
        assert.ok(!html.includes('<b>&</b>'), 'no markup from the point name');
        assert.ok(html.includes(`<a href="${PUBLIC_URL}/">`), 'the console link');
      }
      // 12:02 UTC on 15 January is 13:02 in Berlin (CET).
      const at = new Date(ts);
      assert.ok(textOf(utc.parsed).includes(`${at.toISOString().slice(0, 19)}.000Z (UTC)`), textOf(utc.parsed));
      const berlinTime = `${new Date(ts + 3_600_000).toISOString().slice(0, 19)}.000+01:00 (Europe/Berlin)`;
      assert.ok(textOf(berlin.parsed).includes(berlinTime), textOf(berlin.parsed));
    });

    it('waits for the value that raised the event when its job runs before the value is stored', async () => {
      const xid = await alarmPoint();
      const s = services();
      const point = (await s.dataPoints.findByXid(xid))!;
      const [detector] = await s.eventDetectors.forPoint(point.id);
      await write(xid, 20);
      clock += 60_000;
      // The event as the detector raises it, stamped with its value's time, before that value is written.
      const event = await s.events.raise({
        alarmLevel: 'URGENT', eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', message: 'raised ahead of its value', activeTimestamp: clock,
        referenceId1: point.id, referenceId2: detector!.id, dataPointId: point.id, dataPointXid: xid, dataSourceId: point.dataSourceId, dataSourceXid: point.dataSourceXid, detectorId: detector!.id,
      });
      const before = smtp.received.length;
      const delivery = deliver(kind, { recipients: [{ type: 'ADDRESS', address: 'ops@example.com' }] }, 'RAISED', event);
      await new Promise((r) => setTimeout(r, 300));
      const res = await admin.post(PV, [{ xid, value: 55, timestamp: clock }]);
      assert.equal(res.status, 200, res.text);
      assert.equal((await delivery).outcome, 'SENT');
      const [mail] = await nextMails(1, before);
      assert.match(textOf(mail!), /Value:\s+55 °C/, 'the raising value, not the 20 before it');
    });

    it('mails a data source event (no point, no limit) and, without PUBLIC_URL, no link', async () => {
      const s = services();
      const source = (await s.dataSources.findByXid('mail-src'))!;
      const event = await s.events.raise({ alarmLevel: 'URGENT', eventType: 'DATA_SOURCE', subType: 'DEVICE_FAULT', message: 'Mail source: no answer from <device>', dataSourceId: source.id, dataSourceXid: 'mail-src' });
      const before = smtp.received.length;
      const result = await deliver(newKind({ publicUrl: undefined }), { recipients: [{ type: 'ADDRESS', address: 'ops@example.com' }] }, 'RAISED', event);
      assert.equal(result.outcome, 'SENT');
      const [mail] = await nextMails(1, before);
      assert.equal(mail!.subject, '[URGENT] Alarm raised: mail-src');
      const text = textOf(mail!);
      assert.match(text, /Data source:\s+mail-src/);
      assert.ok(!/^(Point|Value|Limit|Console):/m.test(text), text);
      assert.ok(!text.includes('http'), 'no link without PUBLIC_URL');
      assert.ok(!htmlOf(mail!).includes('<a '), 'no link in the HTML');
      assert.ok(htmlOf(mail!).includes('no answer from &lt;device&gt;'), 'the message escaped');
    });

    it('mails the return to normal with the value that ended it, and the acknowledgement with who acknowledged', async () => {
      const { xid } = await raised();
      const rtnTs = await write(xid, 12.5);
      let event = await eventOf(xid);
      assert.equal(event.active, false);
      const config = { recipients: [{ type: 'ADDRESS', address: 'ops@example.com' }], sendOnInactive: true, sendOnAcknowledge: true };
      let before = smtp.received.length;
      assert.equal((await deliver(kind, config, 'RETURN_TO_NORMAL', event)).outcome, 'SENT');
      let [mail] = await nextMails(1, before);
      assert.equal(mail!.subject, `[URGENT] Alarm returned to normal: Plant 1 - ${POINT_NAME} (${xid})`);
      assert.match(textOf(mail!), new RegExp(`Value:\\s+12.5 °C at ${new Date(rtnTs).toISOString().slice(0, 19)}`));
      assert.match(textOf(mail!), /Returned to normal:/);
      assert.match(textOf(mail!), /Action:\s+RETURN_TO_NORMAL/);

      const ack = await admin.put(`${EV}/acknowledge/${event.id}`, {});
      assert.equal(ack.status, 200, ack.text);
      event = await eventOf(xid);
      before = smtp.received.length;
      assert.equal((await deliver(kind, config, 'ACKNOWLEDGED', event)).outcome, 'SENT');
      [mail] = await nextMails(1, before);
      assert.equal(mail!.subject, `[URGENT] Alarm acknowledged by admin: Plant 1 - ${POINT_NAME} (${xid})`);
      assert.match(textOf(mail!), /Acknowledged:\s+\S+ \(UTC\) by admin/);
      assert.match(textOf(mail!), /Action:\s+ACKNOWLEDGED/);
    });

    it('mails ESCALATED to the escalation recipients only', async () => {
      const { xid, event } = await raised();
      const config = {
        recipients: [{ type: 'ADDRESS', address: 'ops@example.com' }],
        escalation: { delayMs: 900_000, recipients: [{ type: 'USER', username: 'dave' }, { type: 'ADDRESS', address: 'boss@example.com' }] },
      };
      const before = smtp.received.length;
      assert.equal((await deliver(kind, config, 'ESCALATED', event)).outcome, 'SENT');
      const [mail] = await nextMails(1, before);
      assert.deepEqual(smtp.received[before]!.rcptTo.sort(), ['boss@example.com', 'dave@example.com']);
      assert.equal(mail!.subject, `[URGENT] Alarm not acknowledged after 15 min: Plant 1 - ${POINT_NAME} (${xid})`);
      assert.match(textOf(mail!), /Action:\s+ESCALATED/);
    });

    it('skips users that are disabled, gone or without email; with nobody left it fails for good', async () => {
      const { event } = await raised();
      await createUser(admin, 'erin', PASSWORD, { email: 'erin@example.com' });
      const created = await admin.post('/rest/latest/users', { username: 'frank', password: PASSWORD, permissions: ['user'] });
      assert.equal(created.status, 201, created.text);
      const config = {
        recipients: [{ type: 'USER', username: 'carol' }, { type: 'USER', username: 'erin' }, { type: 'USER', username: 'frank' }, { type: 'USER', username: 'alice' }],
      };
      assert.deepEqual(await kind.check(config), []);
      const del = await admin.delete('/rest/latest/users/erin');
      assert.equal(del.status, 200, del.text);
      let before = smtp.received.length;
      assert.equal((await deliver(kind, config, 'RAISED', event)).outcome, 'SENT');
      await nextMails(1, before);
      assert.deepEqual(smtp.received.slice(before).flatMap((r) => r.rcptTo), ['alice@example.com']);

      before = smtp.received.length;
      const result = await deliver(kind, { recipients: config.recipients.slice(0, 3) }, 'RAISED', event);
      assert.equal(result.outcome, 'FAILED');
      assert.ok(result.outcome === 'FAILED' && !result.retry);
      assert.match(result.outcome === 'FAILED' ? result.error : '', /carol: disabled; erin: no such user; frank: no email address/);
      assert.equal(smtp.received.length, before, 'nothing sent');
    });

    it('fails for good on a 5xx refusal, and to be tried again on a 4xx one', async () => {
      const { event } = await raised();
      const refused = await deliver(kind, { recipients: [{ type: 'ADDRESS', address: 'gone@example.com' }] }, 'RAISED', event);
      assert.equal(refused.outcome, 'FAILED');
      assert.ok(refused.outcome === 'FAILED');
      assert.equal(refused.retry, false);
      assert.equal(refused.status, 550);
      assert.match(refused.error, /No such mailbox/);
      const deferred = await deliver(kind, { recipients: [{ type: 'ADDRESS', address: 'busy@example.com' }] }, 'RAISED', event);
      assert.ok(deferred.outcome === 'FAILED');
      assert.equal(deferred.retry, true);
      assert.equal(deferred.status, 451);
    });

    it('fails to be tried again when the SMTP server cannot be reached', async () => {
      const { event } = await raised();
      const down = newKind({ mail: { smtpUrl: `smtp://127.0.0.1:${await freePort()}`, from: FROM } });
      const started = Date.now();
      const result = await deliver(down, { recipients: [{ type: 'ADDRESS', address: 'ops@example.com' }] }, 'RAISED', event);
      assert.ok(result.outcome === 'FAILED', JSON.stringify(result));
      assert.equal(result.retry, true);
      assert.equal(result.status, undefined);
      assert.ok(Date.now() - started < 10_000, 'a refused connection fails at once');
    });

    it('logs in over smtps:// with the credentials of the URL; a wrong password fails for good', async () => {
      const secure = await startTestSmtp({ secure: true, auth: { user: 'mailer', pass: 'p@ss:word' } });
      try {
        const { event } = await raised();
        const config = { recipients: [{ type: 'ADDRESS', address: 'ops@example.com' }] };
        const ok = await deliver(newKind({ mail: { smtpUrl: secure.url, from: FROM } }), config, 'RAISED', event);
        assert.deepEqual(ok, { outcome: 'SENT', status: 250 });
        assert.equal(secure.received.length, 1);
        assert.equal(secure.received[0]!.user, 'mailer');
        const wrong = newKind({ mail: { smtpUrl: secure.url.replace('p%40ss', 'nope'), from: FROM } });
        const refused = await deliver(wrong, config, 'RAISED', event);
        assert.ok(refused.outcome === 'FAILED', JSON.stringify(refused));
        assert.equal(refused.status, 535);
        assert.equal(refused.retry, false);
        assert.equal(secure.received.length, 1);
      } finally {
        for (const k of kinds.splice(-2)) await k.close?.();
        await secure.close();
      }
    });

    it('close() ends the pooled SMTP connections', async () => {
      const { event } = await raised();
      const own = newKind();
      assert.equal((await deliver(own, { recipients: [{ type: 'ADDRESS', address: 'ops@example.com' }] }, 'RAISED', event)).outcome, 'SENT');
      const open = smtp.connections;
      assert.ok(open >= 1, 'the pool keeps its connection');
      await own.close!();
      await eventually('the connection closed', async () => (smtp.connections < open ? true : undefined), 5_000);
    });
  });
  describe('through /event-handlers', () => {
    const deliveries = async (xid: string) => (await getList<Delivery>(admin, `${EH}/${xid}/deliveries?sort(id)`)).items;
    const mailsAbout = (xid: string) => smtp.received.filter((r) => r.parsed.subject?.includes(`(${xid})`));
    const outcomes = (list: Delivery[]) => list.map((d) => [d.eventId, d.action, d.attempt, d.outcome, d.status]);

    it('an EMAIL handler on a detector mails the alarm and its return to normal; the deliveries list shows SENT', async () => {
      const xid = await alarmPoint();
      const detectorXid = `mail-ed${seq}`;
      const res = await admin.post<Record<string, unknown>>(EH, {
        xid: 'eh-mail-on',
        name: 'Mail the shift',
        handlerType: 'EMAIL',
        eventTypes: [{ eventType: 'DATA_POINT', referenceXid: detectorXid }],
        recipients: [{ type: 'USER', username: 'alice' }, { type: 'ADDRESS', address: 'shift@example.com' }],
        sendOnInactive: true,
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.sendOnActive, true);
      assert.equal(res.body.sendOnInactive, true);
      assert.equal(res.body.sendOnAcknowledge, false);
      assert.deepEqual(res.body.recipients, [{ type: 'USER', username: 'alice' }, { type: 'ADDRESS', address: 'shift@example.com' }]);

      await write(xid, 20);
      await write(xid, 42);
      const event = await eventOf(xid);
      await waitFor('the alarm mails', () => mailsAbout(xid).length >= 2, 15_000);
      const raisedMails = mailsAbout(xid);
      assert.deepEqual(raisedMails.flatMap((r) => r.rcptTo).sort(), ['alice@example.com', 'shift@example.com']);
      for (const r of raisedMails) {
        assert.equal(r.parsed.subject, `[URGENT] Alarm raised: Plant 1 - ${POINT_NAME} (${xid})`);
        assert.match(textOf(r.parsed), /Value:\s+42 °C/);
        assert.match(textOf(r.parsed), /above the high limit 30/);
        assert.ok(textOf(r.parsed).includes(`${PUBLIC_URL}/rest/latest/events/${event.id}`));
      }
      const sent = await eventually('the RAISED delivery', async () => {
        const list = await deliveries('eh-mail-on');
        return list.length >= 1 ? list : undefined;
      });
      assert.deepEqual(outcomes(sent), [[event.id, 'RAISED', 1, 'SENT', 250]]);

      await write(xid, 10);
      await waitFor('the return-to-normal mails', () => mailsAbout(xid).length >= 4, 15_000);
      assert.ok(mailsAbout(xid).slice(2).every((r) => r.parsed.subject === `[URGENT] Alarm returned to normal: Plant 1 - ${POINT_NAME} (${xid})`));
      const both = await eventually('the RETURN_TO_NORMAL delivery', async () => {
        const list = await deliveries('eh-mail-on');
        return list.length >= 2 ? list : undefined;
      });
      assert.deepEqual(outcomes(both), [
        [event.id, 'RAISED', 1, 'SENT', 250],
        [event.id, 'RETURN_TO_NORMAL', 1, 'SENT', 250],
      ]);
    });

    it('refuses at save a username nobody has, naming the field (422)', async () => {
      const res = await admin.post(EH, {
        handlerType: 'EMAIL',
        eventTypes: [{ eventType: 'DATA_POINT' }],
        recipients: [{ type: 'USER', username: 'nobody-here' }],
      });
      assertHasMessage(assertValidation(res), 'recipients[0].username', /User not found: nobody-here/);
    });

    it('mails the escalation when the alarm is not acknowledged in time, and not when it is', async () => {
      const delayMs = 1_500;
      const late = await alarmPoint();
      const lateDetector = `mail-ed${seq}`;
      const acked = await alarmPoint();
      const ackedDetector = `mail-ed${seq}`;
      const res = await admin.post(EH, {
        xid: 'eh-mail-escalate',
        handlerType: 'EMAIL',
        eventTypes: [{ eventType: 'DATA_POINT', referenceXid: lateDetector }, { eventType: 'DATA_POINT', referenceXid: ackedDetector }],
        sendOnActive: false,
        escalation: { delayMs, recipients: [{ type: 'ADDRESS', address: 'manager@example.com' }] },
      });
      assert.equal(res.status, 201, res.text);
      const raisedAt = Date.now(); // no later than the statement that raises the event and schedules its escalation
      await write(late, 42);
      await write(acked, 42);
      const ackedEvent = await eventOf(acked);
      const ack = await admin.put(`${EV}/acknowledge/${ackedEvent.id}`, {});
      assert.equal(ack.status, 200, ack.text);

      await waitFor('the escalation mail', () => mailsAbout(late).length >= 1, 15_000);
      const elapsed = Date.now() - raisedAt;
      assert.ok(elapsed >= delayMs, `escalated after ${elapsed} ms, before the ${delayMs} ms delay`);
      const [mail] = mailsAbout(late);
      assert.deepEqual(mail!.rcptTo, ['manager@example.com']);
      assert.equal(mail!.parsed.subject, `[URGENT] Alarm not acknowledged after 1 s 500 ms: Plant 1 - ${POINT_NAME} (${late})`);
      const lateEvent = await eventOf(late);
      const list = await eventually('the ESCALATED delivery', async () => {
        const l = await deliveries('eh-mail-escalate');
        return l.length >= 1 ? l : undefined;
      });
      // The acknowledged event's escalation fell due as well and was dropped without a delivery.
      await new Promise((r) => setTimeout(r, 1_000));
      assert.deepEqual(outcomes(await deliveries('eh-mail-escalate')), [[lateEvent.id, 'ESCALATED', 1, 'SENT', 250]]);
      assert.deepEqual(outcomes(list), [[lateEvent.id, 'ESCALATED', 1, 'SENT', 250]]);
      assert.equal(mailsAbout(acked).length, 0, 'no escalation for the acknowledged alarm');
    });
  });
});
