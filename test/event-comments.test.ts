// Event comments: POST /events/<id>/comments, acknowledging with a comment, comments in every view
// of an event (list, one, acknowledge answer, WebSocket), the push of a new comment, and reads that
// stay a few statements however many events and comments there are; an event handler sees the comments.
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, getList, loggedIn } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { HttpReceiver } from './helpers/http-receiver.js';
import { eventually } from './helpers/wait.js';
import type { EventRecord } from '../src/services/events.js';

interface CommentBody {
  username: string;
  timestamp: number;
  text: string;
}

interface EventBody {
  id: number;
  acknowledged: boolean;
  acknowledgedTimestamp: number | null;
  acknowledgedByUsername: string | null;
  message: string;
  comments: CommentBody[];
}

interface Pushed {
  status: string;
  payload: { action: string; event: EventBody; comment?: CommentBody };
}

const API = '/rest/latest';
const EV = `${API}/events`;
const PASSWORD = 'secret-password-1';

/** A WebSocket on /websocket/events whose messages are read in order. */
class EventSocket {
  private readonly received: Pushed[] = [];
  private waiting: ((m: Pushed) => void) | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString('utf8')) as Pushed;
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(m);
      } else this.received.push(m);
    });
  }

  static async open(app: TestApp, client: ApiClient): Promise<EventSocket> {
    const token = (await client.post<{ token: string }>(`${API}/auth-tokens/create`, {})).body.token;
    const ws = new WebSocket(`${app.url.replace(/^http/, 'ws')}${API}/websocket/events`, { headers: { authorization: `Bearer ${token}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new EventSocket(ws);
  }

  next(timeoutMs = 5_000): Promise<Pushed> {
    const queued = this.received.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no WebSocket message')), timeoutMs);
      this.waiting = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
    });
  }

  close(): void {
    this.ws.close();
  }
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`event comments (${engine})`, function () {
    this.timeout(120_000);
    let app: TestApp;
    let admin: ApiClient;
    let viewer: ApiClient;
    const sockets: EventSocket[] = [];
    let pointId = 0;
    let hiddenPointId = 0;
    let sourceId = 0;

    const events = () => app.service.services.events;
    const comment = (client: ApiClient, id: number | string, body: unknown) => client.post<EventBody>(`${EV}/${id}/comments`, body);
    const getEvent = async (id: number) => (await admin.get<EventBody>(`${EV}/${id}`)).body;

    /** An event of the point the viewer may read (or of the hidden one). */
    async function raise(message: string, hidden = false): Promise<number> {
      const pid = hidden ? hiddenPointId : pointId;
      const e = await events().raise({
        alarmLevel: 'URGENT', eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', message, referenceId1: pid,
        dataPointId: pid, dataPointXid: hidden ? 'cm-hidden' : 'cm-pub', dataSourceId: sourceId, dataSourceXid: 'cm-src',
      });
      return e.id;
    }

    /** Statements the metadata store runs while `fn` runs, those whose text matches `pattern`. */
    async function statements<T>(pattern: RegExp, fn: () => Promise<T>): Promise<{ result: T; count: number; ms: number }> {
      const { db } = app.service.services;
      const query = db.query.bind(db);
      let count = 0;
      db.query = ((text: string, values?: readonly unknown[]) => {
        if (pattern.test(text)) count++;
        return query(text, values);
      }) as typeof db.query;
      const started = performance.now();
      try {
        const result = await fn();
        return { result, count, ms: performance.now() - started };
      } finally {
        db.query = query;
      }
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer } = await createRoleUsers(admin, PASSWORD));
      assert.equal((await admin.post(`${API}/data-sources`, { xid: 'cm-src', name: 'Comments', modelType: 'VIRTUAL', readPermission: ['user'] })).status, 201);
      sourceId = (await app.service.services.dataSources.findByXid('cm-src'))!.id;
      const point = async (xid: string, readPermission: string[]) => {
        const res = await admin.post<{ id: number }>(`${API}/data-points`, { xid, name: xid, dataSourceXid: 'cm-src', pointLocator: { dataType: 'NUMERIC' }, readPermission });
        assert.equal(res.status, 201, res.text);
        return res.body.id;
      };
      pointId = await point('cm-pub', ['user']);
      hiddenPointId = await point('cm-hidden', []);
    });
    afterEach(() => {
      for (const s of sockets.splice(0)) s.close();
    });
    after(() => app.stop());

    it('a reader comments: 201 with the event, comments oldest first in GET, the list and the acknowledge answer', async () => {
      const id = await raise('pump pressure high');
      assert.deepEqual((await getEvent(id)).comments, []);
      const before = Date.now();
      const first = await comment(viewer, id, { text: 'Looking into it' });
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.id, id);
      assert.equal(first.body.comments.length, 1);
      const [c] = first.body.comments;
      assert.deepEqual(Object.keys(c!).sort(), ['text', 'timestamp', 'username']);
      assert.equal(c!.username, 'viewer');
      assert.equal(c!.text, 'Looking into it');
      assert.ok(c!.timestamp >= before && c!.timestamp <= Date.now());
      const second = await comment(admin, id, { text: '  valve replaced\nline two  ' });
      assert.equal(second.status, 201, second.text);
      const expected = [
        ['viewer', 'Looking into it'],
        ['admin', '  valve replaced\nline two  '], // kept as sent
      ];
      const pairs = (e: EventBody) => e.comments.map((x) => [x.username, x.text]);
      assert.deepEqual(pairs(second.body), expected);
      assert.deepEqual(pairs(await getEvent(id)), expected);
      const listed = await getList<EventBody>(viewer, `${EV}?eq(id,${id})`);
      assert.deepEqual(pairs(listed.items[0]!), expected);
      const acked = await viewer.put<EventBody>(`${EV}/acknowledge/${id}`);
      assert.equal(acked.status, 200, acked.text);
      assert.equal(acked.body.acknowledged, true);
      assert.deepEqual(pairs(acked.body), expected);
    });

    it('403 for an event the user may not read, 404 for none; nothing stored', async () => {
      const hidden = await raise('hidden alarm', true);
      const system = (await events().raise({ alarmLevel: 'IMPORTANT', eventType: 'SYSTEM', subType: 'X', message: 'system' })).id;
      assertError(await comment(viewer, hidden, { text: 'peek' }), 403, 4004);
      assertError(await comment(viewer, system, { text: 'peek' }), 403, 4004);
      assertError(await viewer.put(`${EV}/acknowledge/${hidden}`, { comment: 'peek' }), 403, 4004);
      for (const bad of ['999999999', 'abc', '0']) assertError(await comment(admin, bad, { text: 'x' }), 404, -1, 'NOT_FOUND');
      assert.deepEqual((await getEvent(hidden)).comments, []);
      assert.equal((await getEvent(hidden)).acknowledged, false);
      assert.equal((await comment(admin, hidden, { text: 'admin reads all' })).status, 201);
    });

    it('refuses a bad body: 400 without JSON, 422 naming text (missing, blank, too long, not a string, U+0000)', async () => {
      const id = await raise('validation');
      assertError(await viewer.post(`${EV}/${id}/comments`), 400, 4005);
      assertError(await viewer.post(`${EV}/${id}/comments`, undefined, { rawBody: '{"text": "unterminated' }), 400, 4005);
      assertHasMessage(assertValidation(await comment(viewer, id, {})), 'text', /required/);
      assertHasMessage(assertValidation(await comment(viewer, id, { text: '' })), 'text', 'must not be blank');
      assertHasMessage(assertValidation(await comment(viewer, id, { text: ' \n\t ' })), 'text', 'must not be blank');
      assertHasMessage(assertValidation(await comment(viewer, id, { text: 'x'.repeat(1025) })), 'text', 'must be at most 1024 characters');
      assertHasMessage(assertValidation(await comment(viewer, id, { text: 42 })), 'text', 'must be a string');
      const nul = await viewer.post(`${EV}/${id}/comments`, undefined, { rawBody: '{"text":"a\\u0000b"}' });
      assertHasMessage(assertValidation(nul), 'text', 'must not contain the character U+0000');
      assert.deepEqual((await getEvent(id)).comments, []);
      // 1,024 characters, counted as characters: 1,024 emoji (2,048 UTF-16 units) are accepted.
      assert.equal((await comment(viewer, id, { text: 'x'.repeat(1024) })).status, 201);
      const emoji = await comment(viewer, id, { text: '😀'.repeat(1024) });
      assert.equal(emoji.status, 201, emoji.text);
      assert.equal(emoji.body.comments[1]!.text, '😀'.repeat(1024));
    });

    it('acknowledges with a comment by the acknowledging user, at the acknowledgement time; a refused comment acknowledges nothing', async () => {
      const id = await raise('ack with comment');
      assertHasMessage(assertValidation(await viewer.put(`${EV}/acknowledge/${id}`, { comment: '   ' })), 'comment', 'must not be blank');
      assertHasMessage(assertValidation(await viewer.put(`${EV}/acknowledge/${id}`, { comment: 'y'.repeat(1025) })), 'comment', 'must be at most 1024 characters');
      assertHasMessage(assertValidation(await viewer.put(`${EV}/acknowledge/${id}`, [])), '', 'must be an object');
      let e = await getEvent(id);
      assert.equal(e.acknowledged, false);
      assert.deepEqual(e.comments, []);

      const res = await viewer.put<EventBody>(`${EV}/acknowledge/${id}`, { comment: 'Reset the pump' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.acknowledged, true);
      assert.equal(res.body.acknowledgedByUsername, 'viewer');
      assert.deepEqual(res.body.comments, [{ username: 'viewer', timestamp: res.body.acknowledgedTimestamp, text: 'Reset the pump' }]);
      assert.deepEqual(await getEvent(id), res.body);

      // Acknowledged again with a comment: the first acknowledgement stays, the comment is kept.
      const again = await admin.put<EventBody>(`${EV}/acknowledge/${id}`, { comment: 'Confirmed' });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.acknowledgedByUsername, 'viewer');
      assert.equal(again.body.acknowledgedTimestamp, res.body.acknowledgedTimestamp);
      assert.deepEqual(again.body.comments.map((c) => `${c.username}:${c.text}`), ['viewer:Reset the pump', 'admin:Confirmed']);

      // No body, null and {} acknowledge without a comment (clients that always send a body).
      for (const body of [undefined, null, {}]) {
        const other = await raise(`plain ack ${String(JSON.stringify(body))}`);
        const plain = await viewer.request<EventBody>('PUT', `${EV}/acknowledge/${other}`, body === undefined ? {} : { rawBody: JSON.stringify(body) });
        assert.equal(plain.status, 200, plain.text);
        assert.equal(plain.body.acknowledged, true);
        assert.deepEqual(plain.body.comments, []);
      }
      e = await getEvent(id);
      assert.equal(e.comments.length, 2);
    });

    it('pushes COMMENT_ADDED with the comment and the event with all its comments, to readers only; ACKNOWLEDGED carries the ack comment', async () => {
      const asViewer = await EventSocket.open(app, viewer);
      sockets.push(asViewer);
      const visible = await raise('pushed alarm');
      const hidden = await raise('hidden pushed alarm', true);
      assert.equal((await asViewer.next()).payload.action, 'RAISED');

      assert.equal((await comment(admin, hidden, { text: 'not for viewers' })).status, 201);
      assert.equal((await comment(admin, visible, { text: 'first note' })).status, 201);
      const added = await asViewer.next();
      assert.equal(added.status, 'OK');
      assert.equal(added.payload.action, 'COMMENT_ADDED');
      assert.deepEqual(Object.keys(added.payload).sort(), ['action', 'comment', 'event']);
      assert.equal(added.payload.event.id, visible);
      assert.equal(added.payload.comment!.text, 'first note');
      assert.equal(added.payload.comment!.username, 'admin');
      assert.deepEqual(added.payload.event.comments, [added.payload.comment]);
      assert.deepEqual(added.payload.event, await getEvent(visible));

      assert.equal((await viewer.put(`${EV}/acknowledge/${visible}`, { comment: 'on it' })).status, 200);
      const acked = await asViewer.next();
      assert.equal(acked.payload.action, 'ACKNOWLEDGED');
      assert.equal(acked.payload.comment!.text, 'on it');
      assert.deepEqual(acked.payload.event.comments.map((c) => c.text), ['first note', 'on it']);
      assert.equal(acked.payload.event.acknowledged, true);
    });

    it('a comment relayed by another instance reaches this one\'s sockets with the comments read here', async () => {
      const asAdmin = await EventSocket.open(app, admin);
      sockets.push(asAdmin);
      const id = await raise('relayed');
      assert.equal((await asAdmin.next()).payload.action, 'RAISED');
      const stored = await comment(admin, id, { text: 'written elsewhere' });
      assert.equal((await asAdmin.next()).payload.action, 'COMMENT_ADDED');
      // What the cluster channel carries: the event without comments, their count and the new one's id.
      const record = (await app.service.services.db.query<{ id: number }>('select id from event_comments where event_id = $1', [id]))[0]!;
      const bare = { ...(await events().get({ username: 'admin', permissions: ['superadmin'] }, id)), comments: [] } as EventRecord;
      events().publishedElsewhere('COMMENT_ADDED', bare, { count: 1, addedId: record.id });
      const relayed = await asAdmin.next();
      assert.equal(relayed.payload.action, 'COMMENT_ADDED');
      assert.deepEqual(relayed.payload.event.comments, stored.body.comments);
      assert.deepEqual(relayed.payload.comment, stored.body.comments[0]);
      // An event without comments is told as it came, without a read.
      const { count } = await statements(/event_comments/, async () => {
        events().publishedElsewhere('ACKNOWLEDGED', { ...bare, comments: [] }, { count: 0 });
        return asAdmin.next();
      });
      assert.equal(count, 0);
    });

    it('a webhook handler gets the acknowledgement with its comment; a comment alone starts no handler', async () => {
      const receiver = new HttpReceiver();
      const port = await receiver.listen();
      try {
        const created = await admin.post(`${API}/event-handlers`, {
          xid: 'cm-hook', name: 'Hook', handlerType: 'WEBHOOK', url: `http://127.0.0.1:${port}/hook`, secret: 'k',
          eventTypes: [{ eventType: 'DATA_POINT', minAlarmLevel: 'URGENT' }],
        });
        assert.equal(created.status, 201, created.text);
        const id = await raise('handled alarm');
        assert.equal((await comment(viewer, id, { text: 'before the acknowledgement' })).status, 201);
        assert.equal((await viewer.put(`${EV}/acknowledge/${id}`, { comment: 'acknowledged, fan replaced' })).status, 200);
        type Hook = { action: string; event: { id: number; comments: CommentBody[] } };
        const acked = await eventually('the ACKNOWLEDGED webhook', async () => receiver.bodies<Hook>().find((b) => b.event.id === id && b.action === 'ACKNOWLEDGED'), 10_000);
        assert.deepEqual(acked.event.comments.map((c) => `${c.username}:${c.text}`), ['viewer:before the acknowledgement', 'viewer:acknowledged, fan replaced']);
        const deliveries = await admin.get<{ items: { eventId: number; action: string }[] }>(`${API}/event-handlers/cm-hook/deliveries?eq(eventId,${id})&sort(id)`);
        assert.deepEqual(deliveries.body.items.map((d) => d.action), ['RAISED', 'ACKNOWLEDGED'], 'no delivery for the comment alone');
        assert.equal((await admin.delete(`${API}/event-handlers/cm-hook`)).status, 200);
      } finally {
        await receiver.close();
      }
    });

    it('100×: an event with 1,000 comments is one statement; 1,000 events with comments list in a few, never one per event', async () => {
      const { db } = app.service.services;
      const id = await raise('much discussed');
      await db.query(
        `insert into event_comments (event_id, user_id, username, ts, text)
         select $1, null, 'operator-' || (g % 7), 1700000000000 + g, 'note ' || g from generate_series(1, 1000) g`,
        [id],
      );
      const one = await statements(/event_comments/, () => admin.get<EventBody>(`${EV}/${id}`));
      assert.equal(one.result.status, 200);
      assert.equal(one.result.body.comments.length, 1000);
      assert.deepEqual(one.result.body.comments.slice(0, 2).map((c) => c.text), ['note 1', 'note 2']);
      assert.equal(one.result.body.comments[999]!.text, 'note 1000');
      assert.ok(one.result.body.comments.every((c, i) => c.timestamp === 1700000000001 + i));
      assert.equal(one.count, 1, 'one statement reads the event and its comments');

      // 1,000 more events, 3 comments each.
      const first = (await db.query<{ id: number }>(
        `insert into events (alarm_level, active_ts, active, rtn_applicable, message, event_type, sub_type, data_point_id, data_point_xid, data_source_id, data_source_xid, cleared_ts)
         select 'WARNING', 1600000000000 + g, false, true, 'bulk ' || g, 'DATA_POINT', 'BULK', $1, 'cm-pub', $2, 'cm-src', 1 from generate_series(1, 1000) g
         returning id`,
        [pointId, sourceId],
      ))[0]!.id;
      await db.query(
        `insert into event_comments (event_id, user_id, username, ts, text)
         select e.id, null, 'viewer', e.active_ts + k, 'bulk comment ' || k from events e, generate_series(1, 3) k where e.sub_type = 'BULK'`,
      );
      for (const client of [admin, viewer]) {
        const list = await statements(/from events t/, () => getList<EventBody>(client, `${EV}?eq(subType,BULK)&sort(activeTimestamp)&limit(1000)`));
        assert.equal(list.result.total, 1000);
        assert.equal(list.result.items.length, 1000);
        assert.equal(list.result.items[0]!.id, first);
        assert.ok(list.result.items.every((e) => e.comments.length === 3 && e.comments[2]!.text === 'bulk comment 3'));
        // The list reads batches of 100 rows: 10 statements and the count, whatever the comments.
        assert.ok(list.count <= 12, `${list.count} statements for 1,000 events`);
        assert.ok(list.ms < 5_000, `${Math.round(list.ms)} ms for 1,000 events with 3,000 comments`);
        console.log(`      ${engine} ${client === admin ? 'admin' : 'viewer'}: 1,000 events with 3,000 comments listed in ${Math.round(list.ms)} ms, ${list.count} statements; one event with 1,000 comments in ${Math.round(one.ms)} ms`);
      }
    });
  });
}
