// RQL end to end over HTTP, on every metadata engine: a seeded set of data points queried through
// GET /rest/latest/data-points with query strings as a browser sends them (percent-encoded), each
// compared with the exact XIDs (in order) and total. Also: the contract's RQL errors, paging and the
// default page of 1000, permission filtering, GET /users with RQL, the streamed list envelope, and a
// property test that no query string yields a 5xx. The compiler itself is unit-tested in rql.test.ts.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Principal } from '../src/services/permissions.js';
import { assertError } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient, createUser } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const POINTS = '/rest/latest/data-points';
const USERS = '/rest/latest/users';
const PASSWORD = 'secret-password-1';
const ADMIN: Principal = { username: 'admin', permissions: ['superadmin'] };

interface ListBody<T> {
  items: T[];
  total: number;
}
interface PointItem {
  id: number;
  xid: string;
  name: string;
}
interface UserItem {
  id: number;
  username: string;
}

// ---- seed ----------------------------------------------------------------------------------------

const DS_A = 'RQL_DS_A';
const DS_B = 'RQL_DS_B';
const DS_C = 'RQL_DS_C';

interface PointSeed {
  xid: string;
  name: string;
  deviceName: string;
  source: string;
  dataType: 'NUMERIC' | 'BINARY' | 'MULTISTATE' | 'ALPHANUMERIC';
  enabled?: boolean;
  tags?: Record<string, string>;
  readPermission?: string[];
}

/**
 * Created in this order, so ids ascend with the XID (P01 < P02 < ...) and "no sort" (id order) is
 * XID order. Names are chosen for code-point order: " " < "%" < digits < upper case < "_" < lower
 * case < "Ü" < "ü". DS_C's points carry read permissions other than the default ["user"].
 */
const SEED: readonly PointSeed[] = [
  { xid: 'P01', name: 'Alpha', deviceName: 'Boiler', source: DS_A, dataType: 'NUMERIC', tags: { site: 'north', floor: '1' } },
  { xid: 'P02', name: 'alpha', deviceName: 'Boiler', source: DS_A, dataType: 'NUMERIC', enabled: false, tags: { site: 'north' } },
  { xid: 'P03', name: 'ALPHA 2', deviceName: 'Boiler', source: DS_A, dataType: 'BINARY', tags: { site: 'south' } },
  { xid: 'P04', name: 'Beta', deviceName: 'Pump', source: DS_A, dataType: 'MULTISTATE', tags: { site: 'south', floor: '2' } },
  { xid: 'P05', name: 'beta', deviceName: 'pump', source: DS_A, dataType: 'ALPHANUMERIC', enabled: false },
  { xid: 'P06', name: 'Küche Temp', deviceName: 'Küche', source: DS_B, dataType: 'NUMERIC', tags: { room: 'Küche' } },
  { xid: 'P07', name: 'KÜCHE Humidity', deviceName: 'Küche', source: DS_B, dataType: 'NUMERIC' },
  { xid: 'P08', name: 'kuche plain', deviceName: 'Kuche', source: DS_B, dataType: 'NUMERIC' },
  { xid: 'P09', name: '50% valve', deviceName: 'Valve', source: DS_B, dataType: 'NUMERIC' },
  { xid: 'P10', name: '50 valve', deviceName: 'Valve', source: DS_B, dataType: 'NUMERIC', enabled: false },
  { xid: 'P11', name: 'a_b', deviceName: 'Misc', source: DS_B, dataType: 'BINARY' },
  { xid: 'P12', name: 'axb', deviceName: 'Misc', source: DS_B, dataType: 'BINARY' },
  { xid: 'P13', name: 'star*name', deviceName: 'Misc', source: DS_B, dataType: 'ALPHANUMERIC' },
  { xid: 'P14', name: 'starlight', deviceName: 'Misc', source: DS_B, dataType: 'ALPHANUMERIC' },
  { xid: 'P15', name: 'with space', deviceName: 'Misc', source: DS_B, dataType: 'NUMERIC' },
  { xid: 'P16', name: 'comma, separated', deviceName: 'Misc', source: DS_B, dataType: 'NUMERIC' },
  { xid: 'P17', name: 'Zeta', deviceName: 'Zone', source: DS_A, dataType: 'NUMERIC', tags: { site: 'north' } },
  { xid: 'P18', name: 'zeta', deviceName: 'Zone', source: DS_A, dataType: 'NUMERIC' },
  { xid: 'P19', name: '123', deviceName: 'Counter', source: DS_A, dataType: 'MULTISTATE' },
  { xid: 'P20', name: 'Über', deviceName: 'Zone', source: DS_A, dataType: 'NUMERIC', tags: { site: 'über' } },
  { xid: 'P21', name: 'ab', deviceName: 'Lab', source: DS_B, dataType: 'NUMERIC' },
  { xid: 'P22', name: 'abc', deviceName: 'Lab', source: DS_B, dataType: 'NUMERIC' },
  { xid: 'P23', name: 'abd', deviceName: 'Lab', source: DS_B, dataType: 'NUMERIC', enabled: false },
  { xid: 'P24', name: 'Beta', deviceName: 'Pump', source: DS_B, dataType: 'NUMERIC' },
  { xid: 'P25', name: 'Gamma', deviceName: 'Secret', source: DS_C, dataType: 'NUMERIC', readPermission: ['operators'] },
  { xid: 'P26', name: 'gamma', deviceName: 'Secret', source: DS_C, dataType: 'NUMERIC', readPermission: [] },
  { xid: 'P27', name: 'Delta', deviceName: 'Open', source: DS_C, dataType: 'NUMERIC', readPermission: ['user'] },
  { xid: 'P28', name: 'Epsilon', deviceName: 'Secret', source: DS_C, dataType: 'BINARY', readPermission: ['engineers'] },
  { xid: 'P29', name: 'Theta', deviceName: 'Open', source: DS_C, dataType: 'MULTISTATE', readPermission: ['operators', 'engineers'] },
  { xid: 'P30', name: '100%', deviceName: 'Counter', source: DS_C, dataType: 'NUMERIC', readPermission: ['user'], tags: { site: 'north' } },
];

/** Every seeded XID in id order, and the subsets used below. */
const ALL = SEED.map((p) => p.xid);
const range = (from: number, to: number) => ALL.slice(from - 1, to);
/** Names ascending by code point (ties by id). */
const BY_NAME = ['P30', 'P19', 'P10', 'P09', 'P03', 'P01', 'P04', 'P24', 'P27', 'P28', 'P25', 'P07', 'P06', 'P29', 'P17',
  'P11', 'P21', 'P22', 'P23', 'P02', 'P12', 'P05', 'P16', 'P26', 'P08', 'P13', 'P14', 'P15', 'P18', 'P20'];
/** Names descending; the two "Beta" points keep id order (the tiebreak is always id ascending). */
const BY_NAME_DESC = ['P20', 'P18', 'P15', 'P14', 'P13', 'P08', 'P26', 'P16', 'P05', 'P12', 'P02', 'P23', 'P22', 'P21', 'P11',
  'P17', 'P29', 'P06', 'P07', 'P25', 'P28', 'P27', 'P04', 'P24', 'P01', 'P03', 'P09', 'P10', 'P19', 'P30'];
/** What a user holding only the "user" role may read: everything but P25, P26, P28, P29. */
const USER_READABLE = ALL.filter((x) => !['P25', 'P26', 'P28', 'P29'].includes(x));

async function seedPoints(app: TestApp): Promise<Map<string, number>> {
  const s = app.service.services;
  for (const [xid, name] of [[DS_A, 'Source A'], [DS_B, 'Source B'], [DS_C, 'Source C']] as const) {
    await s.dataSources.create(ADMIN, { xid, name, modelType: 'VIRTUAL', updatePeriods: 1 });
  }
  const ids = new Map<string, number>();
  for (const p of SEED) {
    const created = await s.dataPoints.create(ADMIN, {
      xid: p.xid,
      name: p.name,
      deviceName: p.deviceName,
      dataSourceXid: p.source,
      enabled: p.enabled ?? true,
      pointLocator: { dataType: p.dataType, changeType: 'NO_CHANGE' },
      ...(p.tags ? { tags: p.tags } : {}),
      ...(p.readPermission ? { readPermission: p.readPermission } : {}),
    });
    ids.set(p.xid, created.id);
  }
  return ids;
}

// ---- the table ----------------------------------------------------------------------------------

interface Case {
  /** The query string as a browser sends it; `{P10}` stands for the id of point P10. */
  q: string;
  xids: readonly string[];
  /** Defaults to xids.length. */
  total?: number;
}

const CASES: readonly Case[] = [
  // eq / ne / gt / lt / ge / le on strings: exact, code-point order ("Z" < "a", "Ü" after ASCII)
  { q: 'eq(name,Alpha)', xids: ['P01'] },
  { q: 'eq(name,alpha)', xids: ['P02'] },
  { q: `ne(name,Beta)&eq(dataSourceXid,${DS_A})`, xids: ['P01', 'P02', 'P03', 'P05', 'P17', 'P18', 'P19', 'P20'] },
  { q: 'lt(name,a)&sort(name)', xids: BY_NAME.slice(0, 15) },
  { q: 'gt(name,Zeta)&sort(name)', xids: BY_NAME.slice(15) },
  { q: 'gt(name,Z)&lt(name,a)&sort(name)', xids: ['P17'] },
  { q: 'ge(name,zeta)&sort(name)', xids: ['P18', 'P20'] },
  { q: 'gt(name,z)&sort(-name)', xids: ['P20', 'P18'] },
  { q: 'le(name,ALPHA%202)&sort(name)', xids: ['P30', 'P19', 'P10', 'P09', 'P03'] },
  { q: 'gt(deviceName,Kuche)&lt(deviceName,L)', xids: ['P06', 'P07'] },
  { q: 'lt(deviceName,K%C3%BCche)&ge(deviceName,K)', xids: ['P08'] },
  { q: 'lt(deviceName,K%C3%BCche)&gt(deviceName,Kuche)', xids: [] },
  // on id (an integer) and enabled (a boolean)
  { q: 'eq(id,{P10})', xids: ['P10'] },
  { q: 'le(id,{P03})', xids: ['P01', 'P02', 'P03'] },
  { q: 'gt(id,{P27})', xids: ['P28', 'P29', 'P30'] },
  { q: 'ge(id,{P28})&lt(id,{P30})', xids: ['P28', 'P29'] },
  { q: `ne(id,{P04})&eq(dataSourceXid,${DS_A})&lt(id,{P06})`, xids: ['P01', 'P02', 'P03', 'P05'] },
  { q: 'eq(enabled,false)', xids: ['P02', 'P05', 'P10', 'P23'] },
  { q: 'ne(enabled,true)', xids: ['P02', 'P05', 'P10', 'P23'] },
  { q: `enabled=true&dataSourceXid=${DS_C}`, xids: range(25, 30) },
  // match: case-insensitive by default, case-sensitive with true; only * and ? are wildcards
  { q: 'match(name,alpha*)', xids: ['P01', 'P02', 'P03'] },
  { q: 'match(name,ALPHA)', xids: ['P01', 'P02'] },
  { q: 'match(name,alpha*,true)', xids: ['P02'] },
  { q: 'match(name,ALPHA*,true)', xids: ['P03'] },
  { q: 'match(name,Alpha,false)', xids: ['P01', 'P02'] },
  { q: 'match(name,50%25*)', xids: ['P09'] },
  { q: 'match(name,*%25)', xids: ['P30'] },
  { q: 'match(name,a_b)', xids: ['P11'] },
  { q: 'match(name,a?b)', xids: ['P11', 'P12'] },
  { q: 'match(name,ab%3F)', xids: ['P22', 'P23'] },
  { q: 'match(name,star*)', xids: ['P13', 'P14'] },
  { q: 'match(name,*%20*)&sort(name)', xids: ['P10', 'P09', 'P03', 'P07', 'P06', 'P16', 'P08', 'P15'] },
  { q: 'match(deviceName,k%C3%BCche)', xids: ['P06', 'P07'] },
  { q: 'match(name,K%C3%BCche*,true)', xids: ['P06'] },
  // eq takes * literally
  { q: 'eq(name,star*name)', xids: ['P13'] },
  // values with spaces, commas, non-ASCII (percent-encoded)
  { q: 'eq(name,with%20space)', xids: ['P15'] },
  { q: 'eq(name,comma%2C%20separated)', xids: ['P16'] },
  { q: 'eq(name,%C3%9Cber)', xids: ['P20'] },
  { q: 'eq(deviceName,K%C3%BCche)', xids: ['P06', 'P07'] },
  // in, both forms
  { q: 'in(name,Alpha,beta,Zeta)', xids: ['P01', 'P05', 'P17'] },
  { q: 'in(name,(Alpha,beta,Zeta))', xids: ['P01', 'P05', 'P17'] },
  { q: 'in(name,comma%2C%20separated,with%20space)', xids: ['P15', 'P16'] },
  { q: 'in(deviceName,(K%C3%BCche,Kuche))', xids: ['P06', 'P07', 'P08'] },
  { q: 'in(id,{P02},{P20},999999)', xids: ['P02', 'P20'] },
  // and / or / not, & and |, parentheses
  { q: 'or(eq(name,Alpha),eq(name,zeta))', xids: ['P01', 'P18'] },
  { q: 'eq(name,Alpha)|eq(name,zeta)', xids: ['P01', 'P18'] },
  { q: 'eq(deviceName,Lab)&eq(enabled,false)|eq(name,Alpha)', xids: ['P01', 'P23'] },
  { q: 'eq(deviceName,Lab)&(eq(enabled,false)|eq(name,ab))', xids: ['P21', 'P23'] },
  { q: '(eq(deviceName,Boiler)|eq(deviceName,Pump))&eq(enabled,true)', xids: ['P01', 'P03', 'P04', 'P24'] },
  { q: `not(eq(dataSourceXid,${DS_B}))&eq(enabled,false)`, xids: ['P02', 'P05'] },
  { q: 'and(eq(deviceName,Lab),not(eq(name,ab)))', xids: ['P22', 'P23'] },
  { q: 'and(eq(name,Alpha),eq(name,Beta))', xids: [] },
  // p=value shorthand and the FIQL form p=op=value
  { q: 'name=alpha', xids: ['P02'] },
  { q: 'deviceName=Valve&enabled=true', xids: ['P09'] },
  { q: `deviceName=ne=Misc&dataSourceXid=${DS_B}&name=lt=b`, xids: ['P06', 'P07', 'P09', 'P10', 'P21', 'P22', 'P23', 'P24'] },
  // sort: several keys, ascending and descending, ties broken by id ascending
  { q: 'sort(name)', xids: BY_NAME },
  { q: 'sort(-name)', xids: BY_NAME_DESC },
  { q: 'sort(+name)', xids: BY_NAME },
  { q: 'eq(name,Beta)&sort(-name)', xids: ['P04', 'P24'] },
  { q: 'eq(deviceName,Misc)&sort(-deviceName)', xids: range(11, 16) },
  { q: `eq(dataSourceXid,${DS_A})&sort(deviceName,-name)`, xids: ['P02', 'P01', 'P03', 'P19', 'P04', 'P20', 'P18', 'P17', 'P05'] },
  {
    q: `sort(-deviceName,name)&eq(dataSourceXid,${DS_B})`,
    xids: ['P10', 'P09', 'P24', 'P11', 'P12', 'P16', 'P13', 'P14', 'P15', 'P21', 'P22', 'P23', 'P07', 'P06', 'P08'],
  },
  { q: `eq(dataSourceXid,${DS_C})&sort(-id)`, xids: range(25, 30).reverse() },
  { q: `sort(dataSourceXid,-id)&in(deviceName,Boiler,Open,Lab)`, xids: ['P03', 'P02', 'P01', 'P23', 'P22', 'P21', 'P29', 'P27'] },
  // dataType sorts in its declared order NUMERIC, BINARY, MULTISTATE, ALPHANUMERIC
  { q: `eq(dataSourceXid,${DS_A})&sort(dataType,-id)`, xids: ['P20', 'P18', 'P17', 'P02', 'P01', 'P03', 'P19', 'P04', 'P05'] },
  // limit(n), limit(n,offset): total counts every match
  { q: 'sort(name)&limit(5)', xids: BY_NAME.slice(0, 5), total: 30 },
  { q: 'sort(name)&limit(5,5)', xids: BY_NAME.slice(5, 10), total: 30 },
  { q: 'limit(3,28)&sort(name)', xids: ['P18', 'P20'], total: 30 },
  { q: 'limit(5,100)', xids: [], total: 30 },
  { q: 'limit(0)', xids: [], total: 30 },
  { q: 'eq(enabled,false)&limit(2,1)', xids: ['P05', 'P10'], total: 4 },
  { q: 'limit(100000)', xids: ALL },
  // tags.<key>
  { q: 'eq(tags.site,north)', xids: ['P01', 'P02', 'P17', 'P30'] },
  { q: 'tags.site=south', xids: ['P03', 'P04'] },
  { q: 'eq(tags.floor,2)', xids: ['P04'] },
  { q: 'eq(tags.site,%C3%BCber)', xids: ['P20'] },
  { q: 'eq(tags.room,K%C3%BCche)', xids: ['P06'] },
  { q: 'match(tags.site,*TH)', xids: ['P01', 'P02', 'P03', 'P04', 'P17', 'P30'] },
  { q: 'in(tags.site,north,south)&sort(-tags.site,name)', xids: ['P03', 'P04', 'P30', 'P01', 'P17', 'P02'] },
  { q: 'eq(tags.site,null)&limit(1)', xids: ['P05'], total: 23 },
  { q: 'ne(tags.site,north)&limit(0)', xids: [], total: 26 },
  { q: 'eq(tags.nosuchkey,x)', xids: [] },
  // dataSourceXid
  { q: `eq(dataSourceXid,${DS_C})`, xids: range(25, 30) },
  { q: `in(dataSourceXid,${DS_A},${DS_C})&eq(dataType,BINARY)`, xids: ['P03', 'P28'] },
  { q: 'match(dataSourceXid,*_b)', xids: ['P06', 'P07', 'P08', 'P09', 'P10', 'P11', 'P12', 'P13', 'P14', 'P15', 'P16', 'P21', 'P22', 'P23', 'P24'] },
  // dataType (an enum: any case on input; ordered comparisons follow the declared order)
  { q: 'eq(dataType,MULTISTATE)', xids: ['P04', 'P19', 'P29'] },
  { q: 'eq(dataType,binary)', xids: ['P03', 'P11', 'P12', 'P28'] },
  { q: 'in(dataType,ALPHANUMERIC,MULTISTATE)', xids: ['P04', 'P05', 'P13', 'P14', 'P19', 'P29'] },
  { q: 'gt(dataType,MULTISTATE)', xids: ['P05', 'P13', 'P14'] },
  { q: 'match(dataType,*STATE)', xids: ['P04', 'P19', 'P29'] },
  // string: / number: prefixes; a bare value takes the property's type (eq(name,123) is text)
  { q: 'eq(name,string:123)', xids: ['P19'] },
  { q: 'eq(name,123)', xids: ['P19'] },
  { q: 'match(name,1*)', xids: ['P19', 'P30'] },
  { q: 'eq(id,number:{P05})', xids: ['P05'] },
  { q: 'eq(enabled,string:false)', xids: ['P02', 'P05', 'P10', 'P23'] },
  { q: 'eq(name,string:null)', xids: [] },
  { q: 'eq(deviceName,string:Counter)', xids: ['P19', 'P30'] },
  // empty results
  { q: 'eq(name,nothing)', xids: [] },
  { q: 'match(name,*nothing*)&sort(-name)&limit(10,0)', xids: [] },
  { q: 'eq(unit,)&limit(1)', xids: ['P01'], total: 30 },
];

// ---- suites -------------------------------------------------------------------------------------

function withIds(q: string, ids: Map<string, number>): string {
  return q.replace(/\{(P\d\d)\}/g, (_, xid: string) => String(ids.get(xid) ?? assert.fail(`no id for ${xid}`)));
}

async function list<T = PointItem>(client: ApiClient, path: string, q: string): Promise<ListBody<T>> {
  const res = await client.get<ListBody<T>>(q === '' ? path : `${path}?${q}`);
  assert.equal(res.status, 200, `${q}: ${res.text}`);
  assert.deepEqual(Object.keys(res.body), ['items', 'total'], `${q}: envelope`);
  assert.ok(Array.isArray(res.body.items));
  assert.equal(typeof res.body.total, 'number');
  return res.body;
}

async function xidsOf(client: ApiClient, q: string): Promise<{ xids: string[]; total: number }> {
  const body = await list(client, POINTS, q);
  return { xids: body.items.map((p) => p.xid), total: body.total };
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`RQL over HTTP (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    let ids: Map<string, number>;

    async function loggedIn(username: string, password = PASSWORD): Promise<ApiClient> {
      const c = new ApiClient(app.url);
      await c.login(username, password);
      return c;
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn('admin', 'admin');
      ids = await seedPoints(app);
      await createUser(admin, 'rqlviewer', PASSWORD, { permissions: ['user'] });
      await createUser(admin, 'rqloperator', PASSWORD, { permissions: ['user', 'operators'] });
      await createUser(admin, 'rqlengineer', PASSWORD, { permissions: ['engineers'] });
    });
    after(() => app?.stop());

    it('seeded points have ids ascending in XID order', () => {
      const sorted = [...ids.values()];
      assert.deepEqual(sorted, [...sorted].sort((a, b) => a - b));
      assert.equal(ids.size, 30);
    });

    it('no query: every point in id order, total 30', async () => {
      assert.deepEqual(await xidsOf(admin, ''), { xids: ALL, total: 30 });
    });

    describe(`GET /data-points?<rql>: ${CASES.length} cases`, () => {
      for (const c of CASES) {
        it(`${c.q} → [${c.xids.join(',')}]${c.total !== undefined ? ` of ${c.total}` : ''}`, async () => {
          const got = await xidsOf(admin, withIds(c.q, ids));
          assert.deepEqual(got, { xids: [...c.xids], total: c.total ?? c.xids.length });
        });
      }
    });

    it('? unencoded in the query string (as typed in an address bar) is the one-character wildcard', async () => {
      assert.deepEqual(await xidsOf(admin, 'match(name,ab?)'), { xids: ['P22', 'P23'], total: 2 });
    });

    it('match is case-insensitive on non-ASCII letters too (küche matches KÜCHE)', async () => {
      assert.deepEqual(await xidsOf(admin, 'match(name,*k%C3%BCche*)'), { xids: ['P06', 'P07'], total: 2 });
    });

    describe('errors', () => {
      it('unknown property → 400, 4013, the message naming the valid properties', async () => {
        for (const q of ['eq(nosuch,1)', 'sort(nosuch)', 'match(pointLocator,x)', 'in(readPermission,user)']) {
          const body = assertError(await admin.get(`${POINTS}?${q}`), 400, 4013, 'RQL_VISIT_ERROR');
          for (const p of ['id', 'xid', 'name', 'enabled', 'deviceName', 'dataSourceXid', 'dataType', 'settable', 'unit', 'tags.<key>']) {
            assert.ok(body.message.includes(p), `${q}: "${body.message}" does not name ${p}`);
          }
        }
      });

      it('unknown operator, a value of the wrong type, an unknown enum value → 400, 4013', async () => {
        for (const q of ['foo(name,1)', 'eq(id,abc)', 'eq(enabled,yes)', 'gt(enabled,true)', 'eq(dataType,FOO)', 'eq(name,number:1)']) {
          assertError(await admin.get(`${POINTS}?${q}`), 400, 4013, 'RQL_VISIT_ERROR');
        }
      });

      it('unparsable → 400, 4001, the message giving the position', async () => {
        for (const q of ['eq(name,Alpha', 'eq(name,%ZZ)', ')(', 'eq(name,a)&', 'limit(-1)', 'limit(a)', 'eq(name,a,b)', 'sort()', 'eq(name,%00)', 'eq(name,%ED%B0%80)', 'match(name,50%)']) {
          const body = assertError(await admin.get(`${POINTS}?${q}`), 400, 4001, 'RQL_PARSE_FAILURE');
          assert.match(body.message, /position \d+/, `${q}: ${body.message}`);
        }
      });

      it('limit above 100000 → 400, 4005; 100000 itself is fine', async () => {
        assertError(await admin.get(`${POINTS}?limit(100001)`), 400, 4005, 'BAD_REQUEST');
        assertError(await admin.get(`${POINTS}?limit(100001,5)&eq(name,Alpha)`), 400, 4005, 'BAD_REQUEST');
        assert.equal((await admin.get(`${POINTS}?limit(100000)`)).status, 200);
      });

      it('an error body never carries SQL', async () => {
        const res = await admin.get(`${POINTS}?eq(name,a'%3B%20drop%20table%20data_points%3B--)`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { items: [], total: 0 });
        for (const q of ['eq(nosuch,1)', 'eq(name,Alpha']) {
          const text = (await admin.get(`${POINTS}?${q}`)).text;
          assert.doesNotMatch(text, /select |from data_points|\$\d/i);
        }
      });
    });

    describe('permission filtering', () => {
      let viewer: ApiClient;
      let operator: ApiClient;
      let engineer: ApiClient;

      before(async () => {
        viewer = await loggedIn('rqlviewer');
        operator = await loggedIn('rqloperator');
        engineer = await loggedIn('rqlengineer');
      });

      it('a user sees only the points it may read; total counts only those', async () => {
        assert.deepEqual(await xidsOf(viewer, ''), { xids: USER_READABLE, total: 26 });
        assert.deepEqual(await xidsOf(viewer, `eq(dataSourceXid,${DS_C})`), { xids: ['P27', 'P30'], total: 2 });
        assert.deepEqual(await xidsOf(operator, `eq(dataSourceXid,${DS_C})`), { xids: ['P25', 'P27', 'P29', 'P30'], total: 4 });
        assert.deepEqual(await xidsOf(engineer, `eq(dataSourceXid,${DS_C})`), { xids: ['P27', 'P28', 'P29', 'P30'], total: 4 });
        assert.deepEqual(await xidsOf(admin, `eq(dataSourceXid,${DS_C})`), { xids: range(25, 30), total: 6 });
      });

      it('the filter cannot be escaped with or(), not() or paging', async () => {
        assert.deepEqual(await xidsOf(viewer, 'match(name,*amma)'), { xids: [], total: 0 });
        assert.deepEqual(await xidsOf(operator, 'match(name,*amma)'), { xids: ['P25'], total: 1 });
        assert.deepEqual(await xidsOf(viewer, withIds('or(eq(name,gamma),eq(name,Gamma))|eq(id,{P26})|eq(xid,P28)', ids)), { xids: [], total: 0 });
        assert.deepEqual(await xidsOf(viewer, withIds('not(ne(id,{P25}))', ids)), { xids: [], total: 0 });
        assert.deepEqual(await xidsOf(viewer, `not(eq(dataSourceXid,${DS_A}))&not(eq(dataSourceXid,${DS_B}))`), { xids: ['P27', 'P30'], total: 2 });
        assert.deepEqual(await xidsOf(viewer, 'sort(name)&limit(3)'), { xids: ['P30', 'P19', 'P10'], total: 26 });
        assert.deepEqual(await xidsOf(viewer, 'sort(-name)&limit(2,24)'), { xids: ['P19', 'P30'], total: 26 });
      });
    });

    describe('GET /users with RQL', () => {
      let viewer: ApiClient;
      let viewerId: number;

      before(async () => {
        viewer = await loggedIn('rqlviewer');
        viewerId = ((await viewer.get<UserItem>(`${USERS}/current`)).body as UserItem).id;
      });

      const names = (b: ListBody<UserItem>) => b.items.map((u) => u.username);

      it('admin: eq(username,...), match, sort and limit', async () => {
        assert.deepEqual(names(await list<UserItem>(admin, USERS, 'eq(username,rqlviewer)')), ['rqlviewer']);
        const rql = await list<UserItem>(admin, USERS, 'match(username,rql*)&sort(-username)');
        assert.deepEqual([names(rql), rql.total], [['rqlviewer', 'rqloperator', 'rqlengineer'], 3]);
        const page = await list<UserItem>(admin, USERS, 'sort(username)&limit(2)');
        assert.deepEqual([names(page), page.total], [['admin', 'rqlengineer'], 4]);
        const disabled = await list<UserItem>(admin, USERS, 'eq(disabled,false)&sort(-id)&limit(1)');
        assert.deepEqual([names(disabled), disabled.total], [['rqlengineer'], 4]);
      });

      it('a non-admin sees only itself, whatever the RQL', async () => {
        for (const [q, expected, total] of [
          ['', ['rqlviewer'], 1],
          ['eq(username,admin)', [], 0],
          ['or(eq(username,admin),eq(username,rqlviewer))', ['rqlviewer'], 1],
          ['eq(username,admin)|eq(disabled,false)', ['rqlviewer'], 1],
          [`ne(id,${viewerId})`, [], 0],
          ['sort(-username)&limit(10)', ['rqlviewer'], 1],
          ['limit(1,1)', [], 1],
        ] as const) {
          const body = await list<UserItem>(viewer, USERS, q);
          assert.deepEqual([names(body), body.total], [expected, total], q);
        }
      });

      it('users: unknown property → 4013 naming the valid ones; no password hash to filter on', async () => {
        for (const q of ['eq(passwordHash,x)', 'eq(password_hash,x)', 'eq(permissions,superadmin)']) {
          const body = assertError(await admin.get(`${USERS}?${q}`), 400, 4013);
          assert.match(body.message, /id, username, email, name, disabled/);
        }
        assertError(await viewer.get(`${USERS}?eq(username,`), 400, 4001);
      });
    });
  });
}

// ---- more than one page -------------------------------------------------------------------------

const BULK = 1205;
const bulkXid = (i: number) => `BULK_${String(i).padStart(5, '0')}`;

for (const engine of metadataEngines()) {
  describe(`RQL over HTTP: ${BULK} points, default limit and streaming (${engine})`, () => {
    let app: TestApp;
    let admin: ApiClient;
    let viewer: ApiClient;

    before(async () => {
      app = await startTestApp(engine);
      admin = new ApiClient(app.url);
      await admin.login('admin', 'admin');
      const s = app.service.services;
      const ds = await s.dataSources.create(ADMIN, { xid: 'BULK_DS', name: 'Bulk', modelType: 'VIRTUAL' });
      // One statement; even-numbered points are superadmin-only.
      await s.db.query(
        `insert into data_points (xid, name, device_name, data_source_id, data_type, point_locator, read_permission)
         select 'BULK_' || lpad(g::text, 5, '0'), 'bulk ' || g, 'Bulk', $1, 'NUMERIC',
                '{"changeType":"NO_CHANGE","min":0,"max":100}'::jsonb,
                case when g % 2 = 0 then '{}'::text[] else '{user}'::text[] end
         from generate_series(1, ${BULK}) g`,
        [ds.id],
      );
      await createUser(admin, 'bulkviewer', PASSWORD, { permissions: ['user'] });
      viewer = new ApiClient(app.url);
      await viewer.login('bulkviewer', PASSWORD);
    });
    after(() => app?.stop());

    it('no limit(): the first 1000 in id order, total counting all', async () => {
      const { xids, total } = await xidsOf(admin, '');
      assert.equal(total, BULK);
      assert.equal(xids.length, 1000);
      assert.deepEqual(xids, Array.from({ length: 1000 }, (_, i) => bulkXid(i + 1)));
    });

    it('limit() across the internal batch boundary: no row lost or repeated', async () => {
      const big = await xidsOf(admin, 'limit(1100)');
      assert.deepEqual(big.xids, Array.from({ length: 1100 }, (_, i) => bulkXid(i + 1)));
      const tail = await xidsOf(admin, 'limit(1000,1000)');
      assert.deepEqual(tail, { xids: Array.from({ length: BULK - 1000 }, (_, i) => bulkXid(i + 1001)), total: BULK });
      const sorted = await xidsOf(admin, 'sort(-name)&limit(100000)');
      assert.equal(sorted.xids.length, BULK);
      assert.equal(new Set(sorted.xids).size, BULK);
    });

    it('a non-admin: the readable half only, in total too', async () => {
      const readable = Math.ceil(BULK / 2);
      const all = await xidsOf(viewer, 'limit(100000)');
      assert.equal(all.total, readable);
      assert.deepEqual(all.xids, Array.from({ length: readable }, (_, i) => bulkXid(2 * i + 1)));
      assert.deepEqual(await xidsOf(viewer, 'eq(name,bulk%202)'), { xids: [], total: 0 });
      const page = await xidsOf(viewer, 'match(name,bulk%2012*)&sort(-name)&limit(3)');
      // bulk 12, 120..129, 1200..1205, odd only: 121 123 125 127 129 1201 1203 1205
      assert.deepEqual(page, { xids: [bulkXid(129), bulkXid(127), bulkXid(125)], total: 8 });
    });

    it('the list is streamed: chunked, no Content-Length, valid JSON with items before total', async () => {
      const res = await fetch(`${app.url}${POINTS}?limit(100000)`, { headers: { cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('content-length'), null);
      assert.equal(res.headers.get('transfer-encoding'), 'chunked');
      const text = await res.text();
      assert.ok(text.startsWith('{"items":[{'), text.slice(0, 40));
      assert.ok(text.endsWith(`],"total":${BULK}}`), text.slice(-40));
      const body = JSON.parse(text) as ListBody<PointItem>;
      assert.deepEqual(Object.keys(body), ['items', 'total']);
      assert.equal(body.items.length, BULK);
      // An empty page is valid JSON too.
      const empty = await fetch(`${app.url}${POINTS}?eq(name,none)`, { headers: { cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      assert.equal(await empty.text(), '{"items":[],"total":0}');
    });
  });
}

// ---- property: no query string yields a 5xx -----------------------------------------------------

describe('RQL over HTTP: random query strings never yield a 5xx (pglite)', () => {
  let app: TestApp;
  let admin: ApiClient;
  let viewer: ApiClient;

  before(async () => {
    app = await startTestApp('pglite');
    admin = new ApiClient(app.url);
    await admin.login('admin', 'admin');
    await seedPoints(app);
    await createUser(admin, 'fcviewer', PASSWORD, { permissions: ['user'] });
    viewer = new ApiClient(app.url);
    await viewer.login('fcviewer', PASSWORD);
  });
  after(() => app?.stop());

  const TOKENS = [
    'eq', 'ne', 'gt', 'lt', 'ge', 'le', 'match', 'like', 'in', 'and', 'or', 'not', 'sort', 'limit', 'foo',
    '(', ')', ',', '&', '|', '=', '-', '+', '*', '?', '%', '%2', '%25', '%2C', '%20', '%C3%BC', '%C3', '%ZZ', '%00', '%5C', '\\',
    "'", '"', ';', '--', 'name', 'id', 'xid', 'enabled', 'dataType', 'dataSourceXid', 'deviceName', 'settable', 'unit',
    'tags.site', 'tags.', 'tags', 'true', 'false', 'null', 'string:', 'number:', 'date:', 'boolean:', '1', '0', '-1', '1.5',
    '100000', '100001', '999999999999999', '99999999999999999999', '1e309', 'NaN', 'NUMERIC', 'binary', 'Alpha', 'K%C3%BCche',
  ];
  const PROPS = ['name', 'id', 'xid', 'enabled', 'dataType', 'dataSourceXid', 'deviceName', 'settable', 'unit', 'tags.site', 'nosuch'];
  const VALUES = ['Alpha', '1', '-5', '2.5', 'true', 'false', 'null', 'string:1', 'number:7', 'date:2024-01-01T00:00:00Z', 'boolean:true', 'NUMERIC', '*a?', '50%25', '%C3%9Cber', '', '99999999999999999999'];

  const value = fc.oneof(fc.constantFrom(...VALUES), fc.string({ maxLength: 6 }).map(encodeURIComponent));
  const term: fc.Arbitrary<string> = fc.letrec<{ term: string }>((tie) => ({
    term: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.tuple(fc.constantFrom('eq', 'ne', 'gt', 'lt', 'ge', 'le'), fc.constantFrom(...PROPS), value).map(([op, p, v]) => `${op}(${p},${v})`),
      fc.tuple(fc.constantFrom(...PROPS), value, fc.constantFrom('', ',true', ',false', ',x')).map(([p, v, f]) => `match(${p},${v}${f})`),
      fc.tuple(fc.constantFrom(...PROPS), fc.array(value, { maxLength: 4 }), fc.boolean()).map(([p, vs, g]) => (g ? `in(${p},(${vs.join(',')}))` : `in(${p},${vs.join(',')})`)),
      fc.tuple(fc.constantFrom(...PROPS), value).map(([p, v]) => `${p}=${v}`),
      fc.tuple(fc.constantFrom('and', 'or'), fc.array(tie('term'), { minLength: 1, maxLength: 3 })).map(([op, ts]) => `${op}(${ts.join(',')})`),
      tie('term').map((t) => `not(${t})`),
      fc.tuple(tie('term'), fc.constantFrom('&', '|'), tie('term')).map(([a, op, b]) => `(${a}${op}${b})`),
      fc.array(fc.tuple(fc.constantFrom('', '-', '+'), fc.constantFrom(...PROPS)), { minLength: 1, maxLength: 3 }).map((ks) => `sort(${ks.map(([d, p]) => d + p).join(',')})`),
      fc.tuple(fc.nat(200_000), fc.option(fc.nat(100), { nil: undefined })).map(([n, o]) => (o === undefined ? `limit(${n})` : `limit(${n},${o})`)),
    ),
  })).term;
  const grammatical = fc.array(term, { minLength: 1, maxLength: 4 }).map((ts) => ts.join('&'));
  const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 25 }).map((ts) => ts.join(''));
  const anyText = fc.string({ unit: 'binary', maxLength: 40 });
  const query = fc.oneof(grammatical, tokenSoup, anyText);

  it('status is 200 with {items,total} or 400 with 4001/4005/4013 (admin and non-admin)', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(query, fc.boolean(), async (q, asAdmin) => {
        const res = await (asAdmin ? admin : viewer).get<ListBody<PointItem> & { serviceStatusCode?: number }>(`${POINTS}?${q}`);
        assert.ok(res.status < 500, `${res.status} for ${JSON.stringify(q)}: ${res.text}`);
        if (res.status === 200) {
          assert.deepEqual(Object.keys(res.body), ['items', 'total']);
          assert.ok(res.body.items.length <= res.body.total);
        } else {
          assert.equal(res.status, 400, `${res.status} for ${JSON.stringify(q)}: ${res.text}`);
          assert.ok([4001, 4005, 4013].includes(res.body.serviceStatusCode!), `${JSON.stringify(q)}: ${res.text}`);
        }
      }),
      { numRuns: 400 },
    );
  });
});
