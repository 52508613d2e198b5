import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createRoleUsers, getList, loggedIn, type Response } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

interface ItemBody {
  id: number;
  xid: string;
  name: string;
  readPermission: string[];
  editPermission: string[];
  jsonData: unknown;
}
type Summary = Omit<ItemBody, 'jsonData'>;

const JS = '/rest/latest/json-store';
const PASSWORD = 'secret-password-1';
const MiB = 1024 * 1024;
const ITEM_KEYS = ['editPermission', 'id', 'jsonData', 'name', 'readPermission', 'xid'];
const SUMMARY_KEYS = ['editPermission', 'id', 'name', 'readPermission', 'xid'];

/** The jsonData text exactly as the response carries it (the API writes it last). */
function jsonDataText(res: Response): string {
  const marker = ',"jsonData":';
  const at = res.text.indexOf(marker);
  assert.ok(at > 0 && res.text.endsWith('}'), `no jsonData in ${res.text.slice(0, 200)}`);
  return res.text.slice(at + marker.length, -1);
}

/** Adds whitespace between the tokens of compact JSON text (outside strings). */
function loosen(compact: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i]!;
    out += c;
    if (inString) {
      if (c === '\\') out += compact[++i];
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (',:[{'.includes(c)) {
      out += '\n  ';
    }
  }
  return ` \t${out}\r\n`;
}

/** Documents that a parse-and-stringify round trip (or JSONB) would change. */
const TRICKY: Record<string, string> = {
  'key order, integer-like keys included': '{"b":1,"a":2,"10":3,"2":4,"":5}',
  'duplicate keys': '{"a":1,"a":2}',
  '\\u0000 in strings and keys': '{"nul":"a\\u0000b","k\\u0000ey":true,"esc":"\\\\u0000 is text here"}',
  unicode: '{"raw":"é✓😀 \u2028","escaped":"\\u00e9\\ud83d\\ude00\\n\\/","lone":"\\ud800"}',
  'big and precise numbers': '[1e308,0.1,12345678901234567890,-0,1.0,1E-7,2.5e+3,123456789012345678901234567890.123456789,1e400]',
  'nested arrays': '[[[]],[{}],[[1,[2,[3,[]]]]],{"a":[{"b":[[null]]}]}]',
  'a top-level array': '[1,"two",null,false]',
  'a top-level string': '"just text"',
  'a top-level number': '-12.50',
  'top-level null': 'null',
  'top-level true': 'true',
  'an empty object': '{}',
};

const PATH_DOC =
  '{"a":{"b":[{"c":"x"},{"d":{"z":1,"y":[2,{"q":3,"p":4}]}}]},"n":1e308,"f":0.10,"s":"t\\"u","nul":null,"t":true,' +
  '"x.y":5,"0":"zero","arr":[10,20,30],"k,{}\\"\\\\":"odd","sp ace":"s","deep":[[["in"]]]}';

/** [path as written in the URL, expected JSON text or 404]. */
const PATH_CASES: [string, string | 404][] = [
  ['a.b.0.c', '"x"'],
  ['a.b.1.d', '{"z":1,"y":[2,{"q":3,"p":4}]}'],
  ['a.b.1.d.y.1', '{"q":3,"p":4}'],
  ['a', '{"b":[{"c":"x"},{"d":{"z":1,"y":[2,{"q":3,"p":4}]}}]}'],
  ['n', '1e308'],
  ['f', '0.10'],
  ['s', '"t\\"u"'],
  ['nul', 'null'],
  ['t', 'true'],
  ['x%2Ey', '5'],
  ['0', '"zero"'],
  ['arr', '[10,20,30]'],
  ['arr.2', '30'],
  ['deep.0.0.0', '"in"'],
  [encodeURIComponent('k,{}"\\'), '"odd"'],
  ['sp%20ace', '"s"'],
  ['arr.3', 404],
  ['arr.-1', 404],
  ['arr.01', 404],
  ['arr.+1', 404],
  ['arr.%201', 404],
  ['a.b.x', 404],
  ['x.y', 404],
  ['s.0', 404],
  ['t.a', 404],
  ['nul.a', 404],
  ['missing', 404],
  ['a.b.0.c.d', 404],
];

announceEngines();
for (const engine of metadataEngines()) {
  describe(`JSON store API (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    /** role "user" only. */
    let viewer: ApiClient;
    /** roles "user" and "operators". */
    let operator: ApiClient;
    let seq = 0;
    const unique = (prefix: string) => `${prefix}${++seq}`;

    /** POSTs a body given as text, so jsonData reaches the service exactly as written here. */
    function postRaw(client: ApiClient, text: string): Promise<Response<ItemBody>> {
      return client.request<ItemBody>('POST', JS, { rawBody: text });
    }

    function envelope(fields: Record<string, unknown>, jsonDataText: string): string {
      return `${JSON.stringify(fields).slice(0, -1)},"jsonData":${jsonDataText}}`;
    }

    async function create(body: Record<string, unknown>, as = admin): Promise<ItemBody> {
      const res = await as.post<ItemBody>(JS, { name: 'item', jsonData: {}, ...body });
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    async function storedJsonbIsNull(xid: string): Promise<boolean> {
      const rows = await app.service.services.db.query<{ none: boolean }>('select doc_jsonb is null as none from json_store where xid = $1', [xid]);
      assert.equal(rows.length, 1, `no row for ${xid}`);
      return rows[0]!.none;
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      ({ viewer, operator } = await createRoleUsers(admin, PASSWORD));
    });
    after(() => app.stop());

    describe('create, read, replace, delete', () => {
      it('POST creates: 201, Location, the stored item with default permissions', async () => {
        const xid = unique('dash-');
        const res = await admin.post<ItemBody>(JS, { xid, name: 'Dashboard', jsonData: { layout: [1, 2] } });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get('location'), `${JS}/${xid}`);
        assert.match(res.headers.get('content-type') ?? '', /application\/json/);
        assert.deepEqual(Object.keys(res.body).sort(), ITEM_KEYS);
        assert.equal(typeof res.body.id, 'number');
        assert.deepEqual(
          { ...res.body, id: 0 },
          { id: 0, xid, name: 'Dashboard', readPermission: ['user'], editPermission: [], jsonData: { layout: [1, 2] } },
        );
        const fetched = await admin.get<ItemBody>(res.headers.get('location')!);
        assert.equal(fetched.status, 200);
        assert.equal(fetched.text, res.text);
      });

      it('POST of an existing XID replaces it: 200, no Location, same id', async () => {
        const first = await create({ xid: unique('cor-'), name: 'v1', jsonData: { v: 1 }, readPermission: ['operators'] });
        const res = await admin.post<ItemBody>(JS, { xid: first.xid, name: 'v2', jsonData: [2] });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers.get('location'), null);
        assert.equal(res.body.id, first.id);
        assert.equal(res.body.name, 'v2');
        assert.deepEqual(res.body.jsonData, [2]);
        assert.deepEqual(res.body.readPermission, ['operators'], 'permissions left out keep their stored values');
        const list = await getList<Summary>(admin, `${JS}?eq(xid,${first.xid})`);
        assert.equal(list.total, 1);
        assert.equal((await admin.get<ItemBody>(`${JS}/${first.xid}`)).body.name, 'v2');
      });

      it('POST without xid generates one with the JS_ prefix', async () => {
        const res = await admin.post<ItemBody>(JS, { name: 'anonymous', jsonData: 1 });
        assert.equal(res.status, 201, res.text);
        assert.match(res.body.xid, /^JS_[A-Z0-9]{12}$/);
        assert.equal(res.headers.get('location'), `${JS}/${res.body.xid}`);
        assert.equal((await admin.get(`${JS}/${res.body.xid}`)).status, 200);
      });

      it('PUT replaces the whole item and may rename it; 404 for an unknown XID, 409 on a taken XID', async () => {
        const item = await create({ xid: unique('put-'), name: 'before', jsonData: { a: 1 }, editPermission: ['operators'] });
        const res = await admin.put<ItemBody>(`${JS}/${item.xid}`, { name: 'after', jsonData: { b: 2 } });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { ...item, name: 'after', jsonData: { b: 2 } });

        const renamed = unique('renamed-');
        const moved = await admin.put<ItemBody>(`${JS}/${item.xid}`, { xid: renamed, name: 'after', jsonData: null });
        assert.equal(moved.status, 200, moved.text);
        assert.equal(moved.body.xid, renamed);
        assert.equal(moved.body.jsonData, null);
        assertError(await admin.get(`${JS}/${item.xid}`), 404, -1, 'NOT_FOUND');

        const other = await create({ xid: unique('other-') });
        assertError(await admin.put(`${JS}/${renamed}`, { xid: other.xid, name: 'x', jsonData: 1 }), 409, 4003, 'ALREADY_EXISTS');
        assertError(await admin.put(`${JS}/no-such-item`, { name: 'x', jsonData: 1 }), 404, -1);
      });

      it('DELETE answers 200 with the deleted item, then the item is gone', async () => {
        const item = await create({ xid: unique('del-'), name: 'gone soon', jsonData: { keep: 'me' } });
        const res = await admin.delete<ItemBody>(`${JS}/${item.xid}`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, item);
        assertError(await admin.get(`${JS}/${item.xid}`), 404, -1, 'NOT_FOUND');
        assertError(await admin.delete(`${JS}/${item.xid}`), 404, -1);
      });

      it('POST of an XID that exists as another item is create-or-replace, never 409', async () => {
        const xid = unique('twice-');
        const results = await Promise.all([1, 2, 3].map((n) => admin.post<ItemBody>(JS, { xid, name: `n${n}`, jsonData: n })));
        assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 201]);
        assert.equal((await getList<Summary>(admin, `${JS}?eq(xid,${xid})`)).total, 1);
      });
    });

    describe('exact round trip of jsonData', () => {
      for (const [label, doc] of Object.entries(TRICKY)) {
        it(`keeps ${label} exactly (create, read, replace, delete)`, async () => {
          const xid = unique('exact-');
          const created = await postRaw(admin, envelope({ xid, name: label }, loosen(doc)));
          assert.equal(created.status, 201, created.text);
          assert.equal(jsonDataText(created), doc);
          const read = await admin.get(`${JS}/${xid}`);
          assert.equal(jsonDataText(read), doc);
          const replaced = await admin.request('PUT', `${JS}/${xid}`, { rawBody: envelope({ name: label }, doc) });
          assert.equal(replaced.status, 200, replaced.text);
          assert.equal(jsonDataText(replaced), doc);
          assert.equal(jsonDataText(await admin.delete(`${JS}/${xid}`)), doc);
        });
      }

      it('keeps the JSONB copy only where JSONB is lossless in values', async () => {
        const plain = unique('jsonb-');
        const withNul = unique('jsonb-');
        const lone = unique('jsonb-');
        assert.equal((await postRaw(admin, envelope({ xid: plain, name: 'p' }, TRICKY['key order, integer-like keys included']!))).status, 201);
        assert.equal((await postRaw(admin, envelope({ xid: withNul, name: 'n' }, TRICKY['\\u0000 in strings and keys']!))).status, 201);
        assert.equal((await postRaw(admin, envelope({ xid: lone, name: 'l' }, '["\\ud800"]'))).status, 201);
        assert.equal(await storedJsonbIsNull(plain), false);
        assert.equal(await storedJsonbIsNull(withNul), true);
        assert.equal(await storedJsonbIsNull(lone), true);
      });

      it('keeps U+0000 and lone surrogates in jsonData exactly, in values and keys, the rest of the item checked', async () => {
        const doc = '{"nul":"a\\u0000b","high":"\\uD800","low":"x\\udc00","half":"\\ud83d","k\\u0000\\udc00":["\\ud800\\u0000","\\uDBFF\\uDFFF"]}';
        const xid = unique('bad-text-');
        const created = await postRaw(admin, envelope({ xid, name: 'kept' }, doc));
        assert.equal(created.status, 201, created.text);
        assert.equal(jsonDataText(created), doc);
        assert.equal(jsonDataText(await admin.get(`${JS}/${xid}`)), doc);
        assert.equal((await admin.get(`${JS}/${xid}/high`)).text, '"\\uD800"');
        const replaced = await admin.request('PUT', `${JS}/${xid}`, { rawBody: envelope({ name: 'again' }, `[${doc}]`) });
        assert.equal(replaced.status, 200, replaced.text);
        assert.equal(jsonDataText(await admin.get(`${JS}/${xid}`)), `[${doc}]`);
        // The same text anywhere else in the item is refused, and nothing changes.
        const refused = assertValidation(await admin.request('PUT', `${JS}/${xid}`, { rawBody: envelope({ name: 'x\udc00' }, doc) }));
        assertHasMessage(refused, 'name', /unpaired surrogate/);
        assert.equal(jsonDataText(await admin.get(`${JS}/${xid}`)), `[${doc}]`);
      });

      it('refuses a document nested 100,000 levels deep (JSON_MAX_DEPTH); one stored before the limit is still read', async () => {
        const depth = 100_000;
        const doc = '['.repeat(depth) + '"bottom"' + ']'.repeat(depth);
        const xid = unique('deep-');
        const res = await postRaw(admin, envelope({ xid, name: 'deep' }, doc));
        assertHasMessage(assertValidation(res), 'jsonData', 'nests deeper than 64 levels (JSON_MAX_DEPTH)');
        // As code from before the limit stored it: the text, no JSONB copy (too deep for JSONB).
        await app.service.services.db.query('insert into json_store (xid, name, doc) values ($1, $2, $3)', [xid, 'deep', doc]);
        assert.equal(jsonDataText(await admin.get(`${JS}/${xid}`)), doc);
        // A URL holds a few thousand segments (the request line is bounded), not 100,000.
        const levels = 5000;
        const at = await admin.get(`${JS}/${xid}/${Array.from({ length: levels }, () => '0').join('.')}`);
        assert.equal(at.status, 200, at.text.slice(0, 300));
        assert.equal(at.text, doc.slice(levels, doc.length - levels));
      });
    });

    describe('GET /json-store/<xid>/<dot.path>', () => {
      // The same document with and without a JSONB copy: answered in SQL, then by the service's walker.
      const variants: [string, string][] = [
        ['answered in SQL (JSONB copy)', PATH_DOC],
        ['walked in the service (no JSONB copy)', `${PATH_DOC.slice(0, -1)},"k\\u0000ey":"nul"}`],
      ];
      for (const [label, doc] of variants) {
        it(`returns the bare value, exactly as stored, or 404: ${label}`, async () => {
          const xid = unique('path-');
          assert.equal((await postRaw(admin, envelope({ xid, name: 'paths' }, doc))).status, 201);
          for (const [path, expected] of PATH_CASES) {
            const res = await admin.get(`${JS}/${xid}/${path}`);
            if (expected === 404) {
              assertError(res, 404, -1, 'NOT_FOUND');
            } else {
              assert.equal(res.status, 200, `${path}: ${res.text}`);
              assert.match(res.headers.get('content-type') ?? '', /application\/json/);
              assert.equal(res.text, expected, path);
            }
          }
        });
      }

      it('refuses %00 in a path (400) like any URL text; such a key is read with its whole item', async () => {
        const xid = unique('nulkey-');
        const doc = '{"k\\u0000ey":{"v":[1]}}';
        assert.equal((await postRaw(admin, envelope({ xid, name: 'nul' }, doc))).status, 201);
        const body = assertError(await admin.get(`${JS}/${xid}/k%00ey.v.0`), 400, 4005);
        assert.match(body.message, /path.*U\+0000/);
        assertError(await admin.get(`${JS}/${xid}/k%ED%B0%80ey`), 400, 4005);
        assert.equal(jsonDataText(await admin.get(`${JS}/${xid}`)), doc);
      });

      it('answers 404 for an unknown item and 400 for a bad percent-encoding', async () => {
        assertError(await admin.get(`${JS}/no-such-item/a.b`), 404, -1);
        const item = await create({ xid: unique('enc-'), jsonData: { a: 1 } });
        assertError(await admin.get(`${JS}/${item.xid}/%E0%A4%A`), 400, 4005);
      });
    });

    describe('GET /json-store (RQL)', () => {
      it('lists summaries without jsonData, with the total of all matches', async () => {
        const tag = unique('list-');
        for (const name of ['gamma', 'alpha', 'beta']) await create({ xid: `${tag}-${name}`, name, jsonData: { big: 'x'.repeat(1000) } });
        const page = await getList<Summary>(admin, `${JS}?match(xid,${tag}-*)&sort(-name)&limit(2)`);
        assert.equal(page.total, 3);
        assert.deepEqual(
          page.items.map((i) => i.name),
          ['gamma', 'beta'],
        );
        for (const item of page.items) assert.deepEqual(Object.keys(item).sort(), SUMMARY_KEYS);
        const byName = await getList<Summary>(admin, `${JS}?match(xid,${tag}-*)&eq(name,alpha)`);
        assert.deepEqual(
          byName.items.map((i) => i.xid),
          [`${tag}-alpha`],
        );
      });

      it('refuses properties other than id, xid and name', async () => {
        assertError(await admin.get(`${JS}?eq(jsonData,1)`), 400, 4013);
        assertError(await admin.get(`${JS}?eq(name`), 400, 4001);
      });

      it('shows a user only the items it may read', async () => {
        const tag = unique('vis-');
        await create({ xid: `${tag}-all`, name: 'all' });
        await create({ xid: `${tag}-ops`, name: 'ops', readPermission: ['operators'] });
        await create({ xid: `${tag}-admin`, name: 'admin only', readPermission: [] });
        const xids = async (client: ApiClient) => (await getList<Summary>(client, `${JS}?match(xid,${tag}-*)&sort(xid)`)).items.map((i) => i.xid);
        assert.deepEqual(await xids(viewer), [`${tag}-all`]);
        assert.deepEqual(await xids(operator), [`${tag}-all`, `${tag}-ops`]);
        assert.deepEqual(await xids(admin), [`${tag}-admin`, `${tag}-all`, `${tag}-ops`]);
        assert.equal((await getList<Summary>(viewer, `${JS}?match(xid,${tag}-*)`)).total, 1);
      });
    });

    describe('permissions', () => {
      it('reading needs read permission: 403 for an existing item, 404 (first) for a missing one', async () => {
        const item = await create({ xid: unique('perm-read-'), readPermission: ['operators'], jsonData: { a: 1 } });
        assertError(await viewer.get(`${JS}/${item.xid}`), 403, 4004, 'ACCESS_DENIED');
        assertError(await viewer.get(`${JS}/${item.xid}/a`), 403, 4004);
        assertError(await viewer.get(`${JS}/${item.xid}/missing`), 403, 4004);
        assertError(await viewer.get(`${JS}/no-such-item`), 404, -1);
        assertError(await viewer.get(`${JS}/no-such-item/a`), 404, -1);
        assert.equal((await operator.get(`${JS}/${item.xid}/a`)).text, '1');
        const noCopy = unique('perm-read-');
        assert.equal((await postRaw(admin, envelope({ xid: noCopy, name: 'n', readPermission: ['operators'] }, '{"a":"\\u0000"}'))).status, 201);
        assertError(await viewer.get(`${JS}/${noCopy}/a`), 403, 4004);
      });

      it('replacing and deleting need edit permission', async () => {
        const item = await create({ xid: unique('perm-edit-'), editPermission: ['operators'], jsonData: 1 });
        assertError(await viewer.put(`${JS}/${item.xid}`, { name: 'x', jsonData: 2 }), 403, 4004);
        assertError(await viewer.post(JS, { xid: item.xid, name: 'x', jsonData: 2 }), 403, 4004);
        assertError(await viewer.delete(`${JS}/${item.xid}`), 403, 4004);
        assert.deepEqual((await admin.get<ItemBody>(`${JS}/${item.xid}`)).body.jsonData, 1, 'refused writes changed nothing');
        const put = await operator.put<ItemBody>(`${JS}/${item.xid}`, { name: 'by operator', jsonData: 3 });
        assert.equal(put.status, 200, put.text);
        const posted = await operator.post<ItemBody>(JS, { xid: item.xid, name: 'again', jsonData: 4 });
        assert.equal(posted.status, 200, posted.text);
        assert.equal((await operator.delete(`${JS}/${item.xid}`)).status, 200);
      });

      it('any logged-in user may create; with the default edit [] only a superadmin may change it', async () => {
        const mine = await create({ xid: unique('viewer-'), name: 'mine', jsonData: { v: 1 } }, viewer);
        assert.deepEqual([mine.readPermission, mine.editPermission], [['user'], []]);
        assert.equal((await operator.get(`${JS}/${mine.xid}`)).status, 200, 'read ["user"]: every logged-in user reads it');
        assertError(await viewer.put(`${JS}/${mine.xid}`, { name: 'mine', jsonData: 2 }), 403, 4004);
        assert.equal((await admin.put(`${JS}/${mine.xid}`, { name: 'mine', jsonData: 2 })).status, 200);

        const shared = await create({ xid: unique('viewer-'), name: 'shared', jsonData: 1, editPermission: ['user'] }, viewer);
        const res = await viewer.put<ItemBody>(`${JS}/${shared.xid}`, { name: 'shared', jsonData: 2 });
        assert.equal(res.status, 200, res.text);
        assert.equal((await viewer.delete(`${JS}/${shared.xid}`)).status, 200);
      });

      it('needs authentication', async () => {
        const anonymous = new ApiClient(app.url);
        assertError(await anonymous.get(JS), 401, 4008);
        assertError(await anonymous.get(`${JS}/anything`), 401, 4008);
      });
    });

    describe('size limit (1 MiB of jsonData)', () => {
      /** A JSON string token of exactly `bytes` UTF-8 bytes. */
      const stringOf = (bytes: number, char = 'a') => `"${char.repeat((bytes - 2) / Buffer.byteLength(char))}"`;

      it('accepts exactly 1 MiB and returns it intact', async () => {
        const xid = unique('size-');
        const doc = stringOf(MiB);
        const res = await postRaw(admin, envelope({ xid, name: 'one MiB', readPermission: ['user'], editPermission: ['operators'] }, doc));
        assert.equal(res.status, 201, res.text.slice(0, 300));
        const read = await admin.get(`${JS}/${xid}`);
        assert.equal(jsonDataText(read).length, MiB);
        assert.equal(jsonDataText(read), doc);
      });

      it('refuses one byte more with 413 (4005), counting UTF-8 bytes', async () => {
        const over = await postRaw(admin, envelope({ xid: unique('size-'), name: 'too big' }, stringOf(MiB + 1)));
        assertError(over, 413, 4005, 'BAD_REQUEST');
        // 2 bytes per character: far fewer characters than 1 Mi, yet 2 bytes over.
        const wide = await postRaw(admin, envelope({ xid: unique('size-'), name: 'wide' }, stringOf(MiB + 2, 'é')));
        assertError(wide, 413, 4005);
        const xid = unique('size-');
        await create({ xid, jsonData: 1 });
        assertError(await admin.request('PUT', `${JS}/${xid}`, { rawBody: envelope({ name: 'x' }, stringOf(MiB + 1)) }), 413, 4005);
        assert.deepEqual((await admin.get<ItemBody>(`${JS}/${xid}`)).body.jsonData, 1);
      });

      it('does not count whitespace between tokens, but a body over 2 MiB is 413', async () => {
        const doc = `[${stringOf(MiB - 2)}]`;
        const padded = `[${' '.repeat(512 * 1024)}${stringOf(MiB - 2)}]`;
        const xid = unique('size-');
        const res = await postRaw(admin, envelope({ xid, name: 'padded' }, padded));
        assert.equal(res.status, 201, res.text.slice(0, 300));
        assert.equal(jsonDataText(await admin.get(`${JS}/${xid}`)), doc);
        const huge = `[${' '.repeat(1024 * 1024 + 10)}${stringOf(MiB - 2)}]`;
        assertError(await postRaw(admin, envelope({ xid: unique('size-'), name: 'huge body' }, huge)), 413, 4005);
      });
    });

    describe('validation', () => {
      it('names the missing or wrong properties (422, 4002)', async () => {
        const missing = assertValidation(await admin.post(JS, { xid: unique('val-') }));
        assertHasMessage(missing, 'name', 'is required');
        assertHasMessage(missing, 'jsonData', 'is required');
        const wrong = assertValidation(await admin.post(JS, { xid: '', name: 7, jsonData: {}, readPermission: 5, editPermission: [''] }));
        assertHasMessage(wrong, 'xid', 'must not be empty');
        assertHasMessage(wrong, 'name', 'must be a string');
        assertHasMessage(wrong, 'readPermission', 'must be an array');
        assertHasMessage(wrong, 'editPermission[0]', 'must not be empty');
        const notObject = assertValidation(await admin.post(JS, [1]));
        assertHasMessage(notObject, '', 'must be an object');
        const item = await create({ xid: unique('val-') });
        const put = assertValidation(await admin.put(`${JS}/${item.xid}`, { name: 'x' }));
        assertHasMessage(put, 'jsonData', 'is required');
        assertError(await admin.put(`${JS}/no-such-item`, { name: 'x' }), 404, -1);
      });

      it('refuses U+0000 outside jsonData, where PostgreSQL text cannot hold it', async () => {
        const messages = assertValidation(await postRaw(admin, '{"name":"a\\u0000b","jsonData":1,"readPermission":["r\\u0000"]}'));
        assertHasMessage(messages, 'name', /U\+0000/);
        assertHasMessage(messages, 'readPermission[0]', /U\+0000/);
      });

      it('answers 400 (4005) for malformed JSON and a wrong content type', async () => {
        assertError(await postRaw(admin, '{"name":"x","jsonData":'), 400, 4005);
        assertError(await admin.request('POST', JS, { rawBody: '{"name":"x","jsonData":1}', headers: { 'content-type': 'text/plain' } }), 400, 4005);
      });
    });
  });
}
