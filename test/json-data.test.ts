// Mango's /json-data over the JSON store's items: the document as the body, name and permissions in
// the query, dot-path reads, replaces (POST), merges (PUT) and deletes, as Mango's api-test specs
// (json-data-rest-controller.spec.js, jsonStore.spec.js) call them; exactness of the stored text,
// permissions, limits and bad input.
import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, type Response } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

interface ItemBody {
  id: number;
  xid: string;
  name: string;
  readPermission: string[];
  editPermission: string[];
  jsonData: unknown;
}

const JD = '/rest/latest/json-data';
const JS = '/rest/latest/json-store';
const PASSWORD = 'secret-password-1';
const MiB = 1024 * 1024;
const ITEM_KEYS = ['editPermission', 'id', 'jsonData', 'name', 'readPermission', 'xid'];

/** Mango's test document (json-data-rest-controller.spec.js). */
const DOC = { key1: 'value1', key2: 'value2', objectKey: { prop1: true, prop2: false }, arrayKey: [1, 2, 3] };

/** The jsonData text exactly as the response carries it (written last). */
function jsonDataText(res: Response): string {
  const marker = ',"jsonData":';
  const at = res.text.indexOf(marker);
  assert.ok(at > 0 && res.text.endsWith('}'), `no jsonData in ${res.text.slice(0, 200)}`);
  return res.text.slice(at + marker.length, -1);
}

/** A query string as node-mango-client writes params (querystring.stringify: arrays repeat the key). */
function query(params: Record<string, string | string[]>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? v : [v]) parts.push(`${k}=${encodeURIComponent(one)}`);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`JSON data API, Mango's /json-data (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    /** role "user" only. */
    let viewer: ApiClient;
    /** roles "user" and "operators". */
    let operator: ApiClient;
    let seq = 0;
    const unique = (prefix: string) => `${prefix}${++seq}`;

    const url = (xid: string, path?: string) => `${JD}/${encodeURIComponent(xid)}${path === undefined ? '' : `/${path}`}`;
    /** Sends `text` as the body as it is. */
    const send = (client: ApiClient, method: string, path: string, text: string) => client.request<ItemBody>(method, path, { rawBody: text });

    /** Mango's testSetup: POST /json-data/<xid>?name=...&readPermission=...&editPermission=... */
    async function create(doc: unknown = DOC, params: Record<string, string | string[]> = {}, as = admin): Promise<ItemBody> {
      const xid = unique('jd-');
      const res = await as.post<ItemBody>(`${url(xid)}${query({ name: 'test data', ...params })}`, doc);
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    async function storedJsonbIsNull(xid: string): Promise<boolean> {
      const rows = await app.service.services.db.query<{ none: boolean }>('select doc_jsonb is null as none from json_store where xid = $1', [xid]);
      return rows[0]!.none;
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = new ApiClient(app.url);
      await admin.login('admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
    });
    after(() => app.stop());

    describe('Mango\'s shapes', () => {
      it('POST /json-data/<xid> creates: 201, Location, Mango\'s JsonDataModel; the same item as /json-store', async () => {
        const xid = unique('create-');
        const res = await admin.post<ItemBody>(`${url(xid)}${query({ name: 'my item', readPermission: ['user'], editPermission: ['operators'] })}`, DOC);
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('location'), `${JD}/${xid}`);
        assert.deepEqual(Object.keys(res.body).sort(), ITEM_KEYS);
        assert.equal(typeof res.body.id, 'number');
        assert.deepEqual({ ...res.body, id: 0 }, { id: 0, xid, name: 'my item', readPermission: ['user'], editPermission: ['operators'], jsonData: DOC });
        const read = await admin.get<ItemBody>(url(xid));
        assert.equal(read.status, 200);
        assert.equal(read.text, res.text);
        assert.equal((await admin.get(`${JS}/${xid}`)).text, res.text, '/json-store shows the same item');
      });

      it('permissions from the query: comma-separated, repeated, or empty (superadmin only)', async () => {
        assert.deepEqual((await create(DOC, { readPermission: 'user, operators', editPermission: ['operators', 'a,b'] })).editPermission, ['operators', 'a', 'b']);
        const empty = await create(DOC, { readPermission: '', editPermission: '' });
        assert.deepEqual([empty.readPermission, empty.editPermission], [[], []]);
        assertError(await viewer.get(url(empty.xid)), 403, 4004);
        const defaults = await create(DOC, {});
        assert.deepEqual([defaults.readPermission, defaults.editPermission], [['user'], []], "left out: /json-store's defaults");
      });

      it('GET /json-data lists the XIDs the caller may read', async () => {
        const open = await create(DOC, { readPermission: 'user' });
        const closed = await create(DOC, { readPermission: '' });
        const all = await admin.get<string[]>(JD);
        assert.equal(all.status, 200);
        assert.ok(all.body.includes(open.xid) && all.body.includes(closed.xid));
        assert.deepEqual(all.body, [...all.body].sort());
        const mine = (await viewer.get<string[]>(JD)).body;
        assert.ok(mine.includes(open.xid));
        assert.ok(!mine.includes(closed.xid));
      });

      it('GET /json-data/<xid>/<path>: the item with the value there as jsonData', async () => {
        const item = await create();
        const res = await admin.get<ItemBody>(url(item.xid, 'objectKey'));
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { ...item, jsonData: { prop1: true, prop2: false } });
        assert.equal((await admin.get<ItemBody>(url(item.xid, 'arrayKey.2'))).body.jsonData, 3);
        assert.equal((await admin.get<ItemBody>(url(item.xid, 'objectKey.prop2'))).body.jsonData, false);
        assertError(await admin.get(url(item.xid, 'missing')), 404, -1);
        assertError(await admin.get(url(item.xid, 'arrayKey.3')), 404, -1);
        assertError(await admin.get(url('no-such-item', 'a')), 404, -1);
      });

      it('PUT merges into the document: members into an object, a value onto an array (200, the merged value)', async () => {
        const item = await create();
        const merged = await admin.put<ItemBody>(`${url(item.xid)}${query({ name: 'string' })}`, { key3: 'value3', key1: 'new' });
        assert.equal(merged.status, 200, merged.text);
        assert.deepEqual(merged.body.jsonData, { ...DOC, key1: 'new', key3: 'value3' });
        assert.equal(merged.body.name, 'string');
        assert.deepEqual(Object.keys(merged.body.jsonData as object), ['key1', 'key2', 'objectKey', 'arrayKey', 'key3'], 'members keep their places, new ones last');

        const array = await create([0]);
        const appended = await admin.put<ItemBody>(url(array.xid), 1);
        assert.equal(appended.status, 200, appended.text);
        assert.deepEqual(appended.body.jsonData, [0, 1]);
        assert.deepEqual((await admin.put<ItemBody>(url(array.xid), { a: [1] })).body.jsonData, [0, 1, { a: [1] }]);
        assert.deepEqual((await admin.get<ItemBody>(url(array.xid))).body.jsonData, [0, 1, { a: [1] }]);
      });

      it('PUT /json-data/<xid>/<path> merges there, answering the merged value', async () => {
        const item = await create();
        const res = await admin.put<ItemBody>(url(item.xid, 'objectKey'), { prop3: 123 });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.jsonData, { prop1: true, prop2: false, prop3: 123 });
        assert.deepEqual((await admin.put<ItemBody>(url(item.xid, 'arrayKey'), 4)).body.jsonData, [1, 2, 3, 4]);
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body.jsonData, { ...DOC, objectKey: { prop1: true, prop2: false, prop3: 123 }, arrayKey: [1, 2, 3, 4] });
      });

      it('PUT refuses what Mango refuses: a non-object into an object, anything into a scalar (400); no item or path (404)', async () => {
        const item = await create();
        assertError(await admin.put(url(item.xid), [1]), 400, 4005);
        assertError(await admin.put(url(item.xid, 'objectKey'), 'text'), 400, 4005);
        assertError(await admin.put(url(item.xid, 'key1'), { a: 1 }), 400, 4005);
        assertError(await admin.put(url(item.xid, 'nothing'), { a: 1 }), 404, -1);
        assertError(await admin.put(url('no-such-item'), { a: 1 }), 404, -1);
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body.jsonData, DOC, 'nothing changed');
      });

      it('POST /json-data/<xid>/<path> replaces the value there or adds the member (201, the value written)', async () => {
        const item = await create();
        const res = await admin.post<ItemBody>(`${url(item.xid, 'objectKey')}${query({ name: 'string' })}`, { prop1: 1, prop2: 2 });
        assert.equal(res.status, 201, res.text);
        assert.deepEqual(res.body.jsonData, { prop1: 1, prop2: 2 });
        assert.equal((await admin.post<ItemBody>(url(item.xid, 'key2'), 'replaced')).body.jsonData, 'replaced');
        assert.equal((await admin.post(url(item.xid, 'arrayKey.1'), null)).status, 201);
        assert.equal((await admin.post(url(item.xid, 'added'), { n: 1 })).status, 201);
        assert.equal((await admin.post(url(item.xid, 'added.deeper'), true)).status, 201);
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body.jsonData, {
          key1: 'value1',
          key2: 'replaced',
          objectKey: { prop1: 1, prop2: 2 },
          arrayKey: [1, null, 3],
          added: { n: 1, deeper: true },
        });
      });

      it('POST at a path refuses a missing item or parent (404), a bad index or a scalar parent (400)', async () => {
        const item = await create();
        assertError(await admin.post(url('no-such-item', 'a'), 1), 404, -1);
        assertError(await admin.post(url(item.xid, 'none.a'), 1), 404, -1);
        assertError(await admin.post(url(item.xid, 'arrayKey.3'), 1), 400, 4005);
        assertError(await admin.post(url(item.xid, 'arrayKey.x'), 1), 400, 4005);
        assertError(await admin.post(url(item.xid, 'key1.a'), 1), 400, 4005);
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body.jsonData, DOC, 'nothing changed');
      });

      it('POST /json-data/<xid> of an existing item replaces its document and the fields given (201, as Mango)', async () => {
        const item = await create(DOC, { readPermission: 'operators', editPermission: 'operators' });
        const res = await admin.post<ItemBody>(url(item.xid), ['new']);
        assert.equal(res.status, 201, res.text);
        assert.deepEqual(res.body, { ...item, jsonData: ['new'] }, 'name and permissions left out are kept');
        const renamed = await admin.post<ItemBody>(`${url(item.xid)}${query({ name: 'other', readPermission: 'user' })}`, 1);
        assert.deepEqual({ ...renamed.body }, { ...item, name: 'other', readPermission: ['user'], jsonData: 1 });
      });

      it('DELETE with a path removes the value (answering the document now); without one, the item', async () => {
        const item = await create();
        const res = await admin.delete<ItemBody>(url(item.xid, 'objectKey'));
        assert.equal(res.status, 200, res.text);
        const rest: Record<string, unknown> = { ...DOC };
        delete rest.objectKey;
        assert.deepEqual(res.body.jsonData, rest);
        assert.deepEqual((await admin.delete<ItemBody>(url(item.xid, 'arrayKey.0'))).body.jsonData, { ...rest, arrayKey: [2, 3] });
        assertError(await admin.delete(url(item.xid, 'objectKey')), 404, -1);
        assertError(await admin.delete(url(item.xid, 'arrayKey.2')), 404, -1);
        assertError(await admin.delete(url(item.xid, 'key1.a')), 404, -1);
        const whole = await admin.delete<ItemBody>(url(item.xid));
        assert.equal(whole.status, 200);
        assert.deepEqual(whole.body.jsonData, { ...rest, arrayKey: [2, 3] });
        assertError(await admin.get(url(item.xid)), 404, -1);
        assertError(await admin.delete(url(item.xid)), 404, -1);
      });

      it("jsonStore.spec.js: retrieve, merge, append, partial get, partial delete, partial replace", async () => {
        const item = await create({ myString: 'a', data2: { myString: 'b' } }, { readPermission: '', editPermission: '' });
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body.jsonData, { myString: 'a', data2: { myString: 'b' } });
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid, 'data2'))).body.jsonData, { myString: 'b' });
        assert.deepEqual((await admin.put<ItemBody>(url(item.xid), { more: 1 })).body.jsonData, { myString: 'a', data2: { myString: 'b' }, more: 1 });
        const replaced = await admin.post<ItemBody>(`${url(item.xid, 'data2')}${query({ name: item.name, readPermission: '', editPermission: '' })}`, 'c');
        assert.equal(replaced.body.jsonData, 'c');
        assert.equal(((await admin.get<ItemBody>(url(item.xid))).body.jsonData as { data2: string }).data2, 'c');
        const deleted = await admin.delete<ItemBody>(url(item.xid, 'data2'));
        assert.deepEqual(deleted.body.jsonData, { myString: 'a', more: 1 });
      });
    });

    describe('the stored text', () => {
      it('a document is kept exactly: key order, duplicates, number spelling, \\u0000 and lone surrogates', async () => {
        const doc = '{"b":1,"a":2,"10":3,"n":1e308,"f":0.10,"big":12345678901234567890,"nul":"a\\u0000b","lone":"\\ud800","d":{"x":1,"x":2}}';
        const xid = unique('exact-');
        const res = await send(admin, 'POST', `${url(xid)}?name=exact`, ` \n${doc.replace(/,/g, ',\n  ')}\t`);
        assert.equal(res.status, 201, res.text);
        assert.equal(jsonDataText(res), doc);
        assert.equal(jsonDataText(await admin.get(url(xid))), doc);
        assert.equal(await storedJsonbIsNull(xid), true, 'JSONB cannot hold \\u0000');
      });

      it('path edits leave the rest of the text as it was, and keep the JSONB copy right', async () => {
        const xid = unique('edit-');
        assert.equal((await send(admin, 'POST', `${url(xid)}?name=e`, '{"n":1e308,"f":0.10,"o":{"a":1},"arr":[1.0]}')).status, 201);
        assert.equal(await storedJsonbIsNull(xid), false);
        assert.equal(jsonDataText(await send(admin, 'PUT', url(xid, 'o'), '{"b": 2.50}')), '{"a":1,"b":2.50}');
        assert.equal(jsonDataText(await send(admin, 'PUT', url(xid, 'arr'), '1E2')), '[1.0,1E2]');
        assert.equal(jsonDataText(await send(admin, 'POST', url(xid, 'f'), '0.100')), '0.100');
        assert.equal(jsonDataText(await admin.get(url(xid))), '{"n":1e308,"f":0.100,"o":{"a":1,"b":2.50},"arr":[1.0,1E2]}');
        assert.equal(jsonDataText(await admin.get(url(xid, 'o.b'))), '2.50', 'read through the JSONB copy');
        assert.equal(await storedJsonbIsNull(xid), false);
        // A value JSONB cannot hold drops the copy; reads still find every value.
        assert.equal((await send(admin, 'POST', url(xid, 'nul'), '"x\\u0000"')).status, 201);
        assert.equal(await storedJsonbIsNull(xid), true);
        assert.equal(jsonDataText(await admin.get(url(xid, 'o.b'))), '2.50');
        assert.equal(jsonDataText(await admin.get(url(xid, 'nul'))), '"x\\u0000"');
      });

      it('keys with dots, spaces and quotes are reached by percent-encoding', async () => {
        const item = await create({ 'x.y': { 'sp ace': 1, 'q"k': [] } });
        assert.equal((await admin.get<ItemBody>(url(item.xid, 'x%2Ey.sp%20ace'))).body.jsonData, 1);
        assert.deepEqual((await admin.put<ItemBody>(url(item.xid, `x%2Ey.${encodeURIComponent('q"k')}`), 'v')).body.jsonData, ['v']);
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body.jsonData, { 'x.y': { 'sp ace': 1, 'q"k': ['v'] } });
      });

      it('concurrent merges of different keys keep every key (compare and set)', async () => {
        const item = await create({});
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => admin.put(url(item.xid), { [`k${i}`]: i })));
        for (const r of results) assert.equal(r.status, 200, r.text);
        assert.deepEqual(Object.keys((await admin.get<ItemBody>(url(item.xid))).body.jsonData as object).sort(), Array.from({ length: 8 }, (_, i) => `k${i}`));
      });
    });

    describe('permissions', () => {
      it('reads need read permission, writes read and edit permission (403); unauthenticated is 401', async () => {
        const item = await create(DOC, { readPermission: 'user', editPermission: 'operators' });
        assert.equal((await viewer.get(url(item.xid))).status, 200);
        assert.equal((await viewer.get(url(item.xid, 'key1'))).status, 200);
        assertError(await viewer.put(url(item.xid), { a: 1 }), 403, 4004);
        assertError(await viewer.post(url(item.xid), { a: 1 }), 403, 4004);
        assertError(await viewer.post(url(item.xid, 'key1'), 1), 403, 4004);
        assertError(await viewer.delete(url(item.xid, 'key1')), 403, 4004);
        assertError(await viewer.delete(url(item.xid)), 403, 4004);
        assert.equal((await operator.put(url(item.xid), { a: 1 })).status, 200);
        const closed = await create(DOC, { readPermission: 'operators', editPermission: 'user' });
        assertError(await viewer.get(url(closed.xid)), 403, 4004);
        assertError(await viewer.get(url(closed.xid, 'key1')), 403, 4004);
        assertError(await viewer.put(url(closed.xid), { a: 1 }), 403, 4004);
        const anonymous = new ApiClient(app.url);
        assertError(await anonymous.get(JD), 401, 4008);
        assertError(await anonymous.get(url(item.xid)), 401, 4008);
        assertError(await viewer.request('PUT', url(item.xid), { body: { a: 1 }, csrf: false }), 403, 4004);
      });

      it('any user may create, with the defaults of /json-store', async () => {
        const mine = await create({ mine: true }, { editPermission: 'user' }, viewer);
        assert.deepEqual([mine.readPermission, mine.editPermission], [['user'], ['user']]);
        assert.equal((await viewer.put(url(mine.xid), { more: 1 })).status, 200);
      });
    });

    describe('limits and bad input', () => {
      it('an item over 1 MiB is a 413 (the body, or the document an edit would make); nothing changes', async () => {
        const big = JSON.stringify({ s: 'x'.repeat(MiB) });
        assertError(await send(admin, 'POST', `${url(unique('big-'))}?name=big`, big), 413, 4005);
        const item = await create({ s: 'x'.repeat(MiB - 100) });
        assertError(await admin.put(url(item.xid), { more: 'y'.repeat(200) }), 413, 4005);
        assertError(await admin.post(url(item.xid, 'more'), 'y'.repeat(200)), 413, 4005);
        assert.equal(((await admin.get<ItemBody>(url(item.xid))).body.jsonData as { s: string }).s.length, MiB - 100);
        assertError(await send(admin, 'POST', `${url(unique('huge-'))}?name=huge`, `"${'x'.repeat(2 * MiB)}"`), 413, 4005);
      });

      it('nesting deeper than JSON_MAX_DEPTH (64) is a 422, in the body or in the document an edit makes', async () => {
        const nest = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
        assertValidation(await send(admin, 'POST', `${url(unique('deep-'))}?name=deep`, nest(65)));
        assert.equal((await send(admin, 'POST', `${url(unique('deep-'))}?name=deep`, nest(64))).status, 201);
        const item = await create({ a: {} });
        assertHasMessage(assertValidation(await send(admin, 'POST', url(item.xid, 'a.b'), nest(63))), 'jsonData', /64/);
        // {"a":{"b":[...]}}: the document, a, and b's own levels.
        assertValidation(await send(admin, 'PUT', url(item.xid, 'a'), `{"b":${nest(63)}}`));
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body.jsonData, { a: {} }, 'nothing changed');
        assert.equal((await send(admin, 'PUT', url(item.xid, 'a'), `{"b":${nest(62)}}`)).status, 200);
      });

      it('bad bodies: none, malformed JSON, another content type (400)', async () => {
        const item = await create();
        assertError(await admin.request('POST', `${url(unique('nobody-'))}?name=x`), 400, 4005);
        assertError(await send(admin, 'PUT', url(item.xid), '{"a":'), 400, 4005);
        assertError(await send(admin, 'POST', url(item.xid, 'key1'), 'undefined'), 400, 4005);
        assertError(await admin.request('PUT', url(item.xid), { rawBody: 'a', headers: { 'content-type': 'text/plain' } }), 400, 4005);
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body.jsonData, DOC);
      });

      it('bad query fields: no name for a new item, an empty or long name, too many roles (422); a repeated name (400)', async () => {
        assertHasMessage(assertValidation(await admin.post(url(unique('noname-')), DOC)), 'name', 'is required');
        assertHasMessage(assertValidation(await admin.post(`${url(unique('empty-'))}?name=`, DOC)), 'name', /must not be empty/);
        assertValidation(await admin.post(`${url(unique('long-'))}?name=${'n'.repeat(256)}`, DOC));
        const roles = Array.from({ length: 101 }, (_, i) => `r${i}`).join(',');
        assertHasMessage(assertValidation(await admin.post(`${url(unique('roles-'))}?name=r&readPermission=${roles}`, DOC)), 'readPermission', /at most 100/);
        assertError(await admin.post(`${url(unique('twice-'))}?name=a&name=b`, DOC), 400, 4005);
        assertError(await admin.post(`${url(unique('nul-'))}?name=a%00b`, DOC), 400, 4005);
        const item = await create();
        assertValidation(await admin.put(`${url(item.xid)}?name=`, { a: 1 }));
        assert.deepEqual((await admin.get<ItemBody>(url(item.xid))).body, item, 'nothing changed');
        assertError(await admin.get(url(item.xid, 'a%ZZ')), 400, 4005);
        assertValidation(await admin.post(`${url('x'.repeat(101))}?name=x`, DOC));
      });
    });
  });
}
