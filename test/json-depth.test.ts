// JSON_MAX_DEPTH on the real service: every kind of body at 64 and 65 levels, JSON store items
// counted from jsonData, configuration import items counted on their own, items stored deeper
// before the limit existed (inserted straight into the store) exported as they are, and deep
// documents refused with 422 naming the field, never a 500. The request log records the status
// the client got.
import assert from 'node:assert/strict';
import { assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createUser, loggedIn, type ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { capturingLogger, flushed, type LogLine } from './helpers/log.js';

const API = '/rest/latest';
const CFG = `${API}/configuration`;
const JS = `${API}/json-store`;

/** JSON text of `levels` nested arrays around 1: [[...[1]...]]. */
const nested = (levels: number): string => '['.repeat(levels) + '1' + ']'.repeat(levels);
const TOO_DEEP = 'nests deeper than 64 levels (JSON_MAX_DEPTH)';
const BODY_TOO_DEEP = 'takes the body deeper than 64 levels (JSON_MAX_DEPTH)';
const ITEM_TOO_DEEP = 'takes the item deeper than 64 levels (JSON_MAX_DEPTH)';

announceEngines();
for (const engine of metadataEngines()) {
  describe(`JSON depth over HTTP (${engine})`, function () {
    this.timeout(120_000);
    let app: TestApp;
    let admin: ApiClient;
    let plain: ApiClient;
    let lines: LogLine[];
    let seq = 0;
    const unique = (prefix: string) => `${prefix}-${++seq}`;

    /** The request log line of the last request to `path` since `from`. */
    async function loggedStatus(from: number, method: string, path: string): Promise<unknown> {
      await flushed();
      const line = lines.slice(from).findLast((l) => l.msg === 'request' && l.method === method && l.path === path);
      assert.ok(line, `a request log line for ${method} ${path}`);
      return line.status;
    }

    /** Stores an item as code from before the limit did: straight into the table, no service. */
    async function storeOldItem(xid: string, doc: string): Promise<void> {
      await app.service.services.db.query('insert into json_store (xid, name, read_permission, edit_permission, doc) values ($1, $2, $3::text[], $4::text[], $5)', [
        xid,
        'stored before JSON_MAX_DEPTH',
        ['user'],
        [],
        doc,
      ]);
    }

    const raw = (client: ApiClient, method: string, path: string, body: string) => client.request(method, path, { rawBody: body });

    before(async () => {
      const captured = capturingLogger('info');
      lines = captured.lines;
      app = await startTestApp(engine, {}, captured.log);
      admin = await loggedIn(app.url, 'admin', 'admin');
      await createUser(admin, 'deep-user', 'secret-password-1');
      plain = await loggedIn(app.url, 'deep-user', 'secret-password-1');
      const source = await admin.post(`${API}/data-sources`, { xid: 'depth-src', name: 'depth', modelType: 'VIRTUAL', enabled: false });
      assert.equal(source.status, 201, source.text);
      const point = await admin.post(`${API}/data-points`, { xid: 'depth-pt', name: 'depth', dataSourceXid: 'depth-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
      assert.equal(point.status, 201, point.text);
    });
    after(async () => {
      await app?.stop();
    });

    it("the tester's defect: an item nested 12,000 levels no longer breaks the superadmin's export", async () => {
      // A plain user can no longer store it…
      const refused = await raw(plain, 'POST', JS, `{"xid":"deep-12000","name":"deep","jsonData":${nested(12_000)}}`);
      assertHasMessage(assertValidation(refused), 'jsonData', TOO_DEEP);
      // …but a database from before the limit may hold one: the export still answers, with it as stored.
      await storeOldItem('deep-12000', nested(12_000));
      const from = lines.length;
      const res = await admin.get(`${CFG}/export`);
      assert.equal(res.status, 200, res.text.slice(0, 300));
      assert.match(res.headers.get('content-type') ?? '', /application\/json/);
      assert.ok(res.text.includes(`{"xid":"deep-12000","name":"stored before JSON_MAX_DEPTH","readPermission":["user"],"editPermission":[],"jsonData":${nested(12_000)}}`));
      const doc = res.body as { jsonStore: { xid: string }[]; dataSources: unknown[] };
      assert.ok(doc.jsonStore.some((i) => i.xid === 'deep-12000'));
      assert.ok(doc.dataSources.length >= 1);
      assert.equal(await loggedStatus(from, 'GET', `${CFG}/export`), 200);
      // The item is read as it is, and can be deleted.
      const read = await plain.get(`${JS}/deep-12000`);
      assert.equal(read.status, 200);
      assert.ok(read.text.endsWith(`"jsonData":${nested(12_000)}}`));
      assert.equal((await plain.get(`${JS}/deep-12000/0.0.0`)).text, nested(11_997));
      assert.equal((await admin.delete(`${JS}/deep-12000`)).status, 200);
    });

    it('import of a document nested 10,000 levels: 422 naming the item, nothing written', async () => {
      const from = lines.length;
      const body = `{"jsonStore":[{"xid":"ok-item","name":"fine","jsonData":{}},{"xid":"deep-import","name":"deep","jsonData":${nested(10_000)}}]}`;
      const res = await raw(admin, 'POST', `${CFG}/import`, body);
      assertHasMessage(assertValidation(res), 'jsonStore[1].jsonData', TOO_DEEP);
      assert.equal(await loggedStatus(from, 'POST', `${CFG}/import`), 422);
      assert.equal((await admin.get(`${JS}/ok-item`)).status, 404);
      assert.equal((await admin.get(`${JS}/deep-import`)).status, 404);
    });

    it('an export holding an item stored deeper than the limit imports as 422 naming that item', async () => {
      const xid = unique('old-deep');
      await storeOldItem(xid, `{"a":${nested(100)}}`);
      const fine = unique('fine');
      assert.equal((await admin.post(JS, { xid: fine, name: 'fine', jsonData: { b: [1] } })).status, 201);
      const exported = await admin.get<{ jsonStore: { xid: string; name: string }[] }>(`${CFG}/export?include=jsonStore`);
      assert.equal(exported.status, 200);
      const at = exported.body.jsonStore.findIndex((i) => i.xid === xid);
      const doc = { jsonStore: exported.body.jsonStore.map((i) => ({ ...i, name: `${i.name} again` })) };
      const res = await admin.post(`${CFG}/import`, doc);
      const messages = assertValidation(res);
      assertHasMessage(messages, `jsonStore[${at}].jsonData`, TOO_DEEP);
      assert.equal(messages.length, 1, JSON.stringify(messages));
      assert.equal(((await admin.get(`${JS}/${fine}`)).body as { name: string }).name, 'fine', 'nothing of the document was written');
      assert.equal((await admin.delete(`${JS}/${xid}`)).status, 200);
    });

    it('JSON store create and update: jsonData of 64 levels is stored, 65 levels is 422 on jsonData', async () => {
      const xid = unique('js');
      const created = await raw(plain, 'POST', JS, `{"xid":"${xid}","name":"n","editPermission":["user"],"jsonData":${nested(64)}}`);
      assert.equal(created.status, 201, created.text);
      assert.ok(created.text.endsWith(`"jsonData":${nested(64)}}`));
      assertHasMessage(assertValidation(await raw(plain, 'POST', JS, `{"xid":"${unique('js')}","name":"n","jsonData":${nested(65)}}`)), 'jsonData', TOO_DEEP);
      assertHasMessage(assertValidation(await raw(plain, 'PUT', `${JS}/${xid}`, `{"name":"n","jsonData":{"a":${nested(64)}}}`)), 'jsonData', TOO_DEEP);
      const updated = await raw(plain, 'PUT', `${JS}/${xid}`, `{"name":"n2","jsonData":{"a":${nested(63)}}}`);
      assert.equal(updated.status, 200, updated.text);
      assert.ok(updated.text.endsWith(`"jsonData":{"a":${nested(63)}}}`));
      // The rest of the body may nest as deep as jsonData, below the item's envelope; deeper is named.
      assertHasMessage(assertValidation(await raw(plain, 'PUT', `${JS}/${xid}`, `{"name":"n","jsonData":1,"extra":${nested(65)}}`)), 'extra', TOO_DEEP);
    });

    it('bulk values: a body of 64 levels is written, 65 levels is 422 naming the row', async () => {
      const row = (extra: string) => `{"xid":"depth-pt","value":1.5,"timestamp":1700000000000,"extra":${extra}}`;
      const ok = await raw(admin, 'POST', `${API}/point-values`, `[${row(nested(62))}]`);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.body, { written: 1 });
      const from = lines.length;
      const deep = await raw(admin, 'POST', `${API}/point-values`, `[${row('1')},${row(nested(63))}]`);
      assertHasMessage(assertValidation(deep), '[1]', BODY_TOO_DEEP);
      assert.equal(await loggedStatus(from, 'POST', `${API}/point-values`), 422);
    });

    it('data source and data point bodies: 64 levels are taken, 65 levels are 422 naming the field', async () => {
      const source = (extra: string) => `{"xid":"${unique('ds')}","name":"s","modelType":"VIRTUAL","enabled":false,"extra":${extra}}`;
      assert.equal((await raw(admin, 'POST', `${API}/data-sources`, source(nested(63)))).status, 201);
      assertHasMessage(assertValidation(await raw(admin, 'POST', `${API}/data-sources`, source(nested(64)))), 'extra', BODY_TOO_DEEP);
      const point = (extra: string) =>
        `{"xid":"${unique('dp')}","name":"p","dataSourceXid":"depth-src","pointLocator":{"dataType":"NUMERIC","changeType":"NO_CHANGE","extra":${extra}}}`;
      assert.equal((await raw(admin, 'POST', `${API}/data-points`, point(nested(62)))).status, 201);
      assertHasMessage(assertValidation(await raw(admin, 'POST', `${API}/data-points`, point(nested(63)))), 'pointLocator', BODY_TOO_DEEP);
      assertHasMessage(assertValidation(await raw(admin, 'PUT', `${API}/data-points/depth-pt`, point(nested(63)))), 'pointLocator', BODY_TOO_DEEP);
      // Any body: a value write, a login.
      assertHasMessage(assertValidation(await raw(admin, 'PUT', `${API}/point-values/depth-pt`, `{"value":1,"extra":${nested(64)}}`)), 'extra', BODY_TOO_DEEP);
    });

    it('configuration import: items nest as on their own routes, 64 levels in, 65 levels 422 naming item and member', async () => {
      const [s1, s2, j1, j2] = [unique('cfg-ds'), unique('cfg-ds'), unique('cfg-js'), unique('cfg-js')];
      const source = (xid: string, extra: string) => `{"xid":"${xid}","name":"s","modelType":"VIRTUAL","enabled":false,"extra":${extra}}`;
      const item = (xid: string, data: string) => `{"xid":"${xid}","name":"j","jsonData":${data}}`;
      const ok = await raw(admin, 'POST', `${CFG}/import`, `{"dataSources":[${source(s1, nested(63))}],"jsonStore":[${item(j1, nested(64))}]}`);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.body, { created: 2, updated: 0 });
      assert.ok((await admin.get(`${JS}/${j1}`)).text.endsWith(`"jsonData":${nested(64)}}`));
      const deepSource = await raw(admin, 'POST', `${CFG}/import`, `{"dataSources":[${source(s1, '1')},${source(s2, nested(64))}],"jsonStore":[${item(j2, nested(64))}]}`);
      assert.deepEqual(assertValidation(deepSource).map((m) => [m.property, m.message]), [['dataSources[1].extra', ITEM_TOO_DEEP]]);
      const deepItem = await raw(admin, 'POST', `${CFG}/import`, `{"dataSources":[${source(s2, '1')}],"jsonStore":[${item(j2, nested(65))}]}`);
      assert.deepEqual(assertValidation(deepItem).map((m) => [m.property, m.message]), [['jsonStore[0].jsonData', TOO_DEEP]]);
      assert.equal((await admin.get(`${API}/data-sources/${s2}`)).status, 404);
      assert.equal((await admin.get(`${JS}/${j2}`)).status, 404);
      // An export of 64-level items imports again unchanged.
      const exported = await admin.get(`${CFG}/export?include=jsonStore`);
      assert.equal(exported.status, 200);
      const again = await raw(admin, 'POST', `${CFG}/import`, exported.text);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body, { created: 0, updated: 0 });
    });
  });
}

describe('JSON_MAX_DEPTH', function () {
  this.timeout(60_000);
  let app: TestApp;
  let admin: ApiClient;
  before(async () => {
    app = await startTestApp('pglite', { JSON_MAX_DEPTH: '10' });
    admin = await loggedIn(app.url, 'admin', 'admin');
  });
  after(async () => {
    await app?.stop();
  });

  it('sets the limit and the message says it', async () => {
    const ok = await admin.request('POST', JS, { rawBody: `{"name":"n","jsonData":${nested(10)}}` });
    assert.equal(ok.status, 201, ok.text);
    const refused = await admin.request('POST', JS, { rawBody: `{"name":"n","jsonData":${nested(11)}}` });
    assertHasMessage(assertValidation(refused), 'jsonData', 'nests deeper than 10 levels (JSON_MAX_DEPTH)');
    const body = await admin.request('POST', `${API}/data-sources`, { rawBody: `{"name":"s","modelType":"VIRTUAL","x":${nested(10)}}` });
    assertHasMessage(assertValidation(body), 'x', 'takes the body deeper than 10 levels (JSON_MAX_DEPTH)');
  });
});
