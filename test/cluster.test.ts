// Two service instances as child processes on one PostgreSQL (metadata and point values,
// VALUE_STORE=postgres), as a site behind a proxy runs them: live values cross instances, a data
// source runs on exactly one and moves when its instance dies, a revoked token is refused everywhere,
// an alarm is raised once.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import WebSocket from 'ws';
import { ApiClient, loggedIn } from './helpers/client.js';
import { Device } from './helpers/modbus-device.js';
import { dropSchema, newSchemaName, removeDir, tempDir, testDatabaseUrl } from './helpers/engines.js';
import { eventually, freePort } from './helpers/wait.js';

const API = '/rest/latest';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Instance {
  name: string;
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  dataDir: string;
}

async function startInstance(name: string, schema: string): Promise<Instance> {
  const port = await freePort();
  const dataDir = await tempDir(`dds-cluster-${name}-`);
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: testDatabaseUrl,
      DATABASE_SCHEMA: schema,
      VALUE_STORE: 'postgres',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_ENABLED: 'false',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await eventually(`instance ${name} answers /health`, async () => {
    if (child.exitCode !== null) throw new Error(`instance ${name} exited (${child.exitCode}): ${stderr.slice(-2000)}`);
    const res = await fetch(`${url}/health`).catch(() => undefined);
    return res?.ok ? true : undefined;
  }, 60_000, 200);
  return { name, url, child, exited, dataDir };
}

async function stopInstance(i: Instance, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill(signal);
  await i.exited;
  await removeDir(i.dataDir);
}

/** Which child process holds a source's lease: the pid in its lease connection's application name. */
async function leaseHolder(db: pg.Client, sourceId: number): Promise<number | undefined> {
  const { rows } = await db.query<{ application_name: string }>(
    `select a.application_name from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and l.granted and l.objid = $1 and a.application_name like 'device-data-service leases %'`,
    [sourceId],
  );
  // Every installation (test schema) on the server uses its own lock space: keep this cluster's pids.
  const pids = rows.map((r) => Number(r.application_name.split(' ').pop()));
  return pids.find((pid) => instances.some((i) => i.child.pid === pid));
}

let instances: Instance[] = [];

function openSocket(url: string, token: string): Promise<{ ws: WebSocket; messages: { payload: { xid: string; event: string; value?: { value: unknown; timestamp: number } } }[] }> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${API}/websocket/point-value`, { headers: { authorization: `Bearer ${token}` } });
  const messages: { payload: { xid: string; event: string; value?: { value: unknown; timestamp: number } } }[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString()) as (typeof messages)[number]));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, messages }));
    ws.once('error', reject);
  });
}

const describeCluster = testDatabaseUrl ? describe : describe.skip;
if (!testDatabaseUrl) console.log('  skipped: the cluster suite needs TEST_DATABASE_URL (PostgreSQL)');

describeCluster('two instances as one service (PostgreSQL, VALUE_STORE=postgres)', function () {
  this.timeout(120_000);
  const schema = newSchemaName();
  let a: Instance;
  let b: Instance;
  let adminA: ApiClient;
  let adminB: ApiClient;
  let db: pg.Client;
  let seq = 0;
  const unique = (p: string) => `${p}-${Date.now().toString(36)}-${++seq}`;

  before(async () => {
    // One after the other: the first creates the schema and the admin.
    a = await startInstance('a', schema);
    instances = [a];
    b = await startInstance('b', schema);
    instances = [a, b];
    adminA = await loggedIn(a.url, 'admin', 'admin');
    adminB = await loggedIn(b.url, 'admin', 'admin');
    db = new pg.Client({ connectionString: testDatabaseUrl });
    await db.connect();
  });

  after(async () => {
    await Promise.all(instances.map((i) => stopInstance(i)));
    await db?.end();
    await dropSchema(schema);
  });

  /** A point whose values come from the API: its (virtual) source produces once an hour, 0. */
  async function manualPoint(): Promise<string> {
    const ds = unique('cds');
    assert.equal((await adminA.post(`${API}/data-sources`, { xid: ds, name: ds, modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' })).status, 201);
    const xid = unique('cdp');
    const res = await adminA.post(`${API}/data-points`, { xid, name: xid, dataSourceXid: ds, pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', startValue: '0', settable: true } });
    assert.equal(res.status, 201, res.text);
    return xid;
  }

  async function tokenOf(c: ApiClient): Promise<string> {
    const res = await c.post<{ token: string }>(`${API}/auth-tokens/create`, {});
    assert.equal(res.status, 201, res.text);
    return res.body.token;
  }

  it('a value written through A reaches a WebSocket client on B within 1 s', async () => {
    const xid = await manualPoint();
    const { ws, messages } = await openSocket(b.url, await tokenOf(adminB));
    try {
      ws.send(JSON.stringify({ xid, eventTypes: ['UPDATE'] }));
      await eventually('REGISTERED', async () => (messages.some((m) => m.payload.event === 'REGISTERED') ? true : undefined));
      // B announces what it follows; give the announcement time to reach A.
      await new Promise((r) => setTimeout(r, 300));
      const latencies: number[] = [];
      for (let i = 0; i < 5; i++) {
        const ts = Date.now();
        const sent = performance.now();
        assert.equal((await adminA.post(`${API}/point-values`, [{ xid, value: i, timestamp: ts }])).status, 200);
        await eventually(`value ${i} on B`, async () => (messages.some((m) => m.payload.event === 'UPDATE' && m.payload.value?.timestamp === ts) ? true : undefined), 5_000, 5);
        latencies.push(performance.now() - sent);
      }
      console.log(`      A → B WebSocket: ${latencies.map((l) => l.toFixed(0)).join(', ')} ms`);
      assert.ok(Math.max(...latencies) < 1_000, `every value within 1 s: ${latencies.join(', ')}`);
      // Readable through B within 1 s: B's latest-value cache was told.
      await eventually('the newest value through B', async () => {
        const latest = await adminB.get<{ value: number }[]>(`${API}/point-values/latest/${xid}?limit=1`);
        return latest.body[0]?.value === 4 ? true : undefined;
      }, 1_000, 10);
    } finally {
      ws.terminate();
    }
  });

  it('a token revoked through A is refused by B within 1 s; a disabled user and reset keys everywhere', async () => {
    const token = await tokenOf(adminA);
    const onB = () => fetch(`${b.url}${API}/users/current`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await onB()).status, 200, 'B takes the token (and caches the user)');
    const revoked = performance.now();
    assert.equal((await adminA.post(`${API}/auth-tokens/revoke`)).status, 204);
    await eventually('B refuses the revoked token', async () => ((await onB()).status === 401 ? true : undefined), 1_000, 10);
    console.log(`      revoked on A, refused on B after ${(performance.now() - revoked).toFixed(0)} ms`);

    const username = unique('cu');
    const password = 'Cluster-pass-1';
    assert.equal((await adminA.post(`${API}/users`, { username, password, email: `${username}@example.com`, permissions: ['user'] })).status, 201);
    const userOnB = await loggedIn(b.url, username, password);
    assert.equal((await userOnB.get(`${API}/users/current`)).status, 200);
    const user = (await adminA.get<Record<string, unknown>>(`${API}/users/${username}`)).body;
    const disabled = performance.now();
    assert.equal((await adminA.put(`${API}/users/${username}`, { ...user, disabled: true })).status, 200);
    await eventually('B refuses the disabled user', async () => ((await userOnB.get(`${API}/users/current`)).status === 401 ? true : undefined), 1_000, 10);
    console.log(`      disabled on A, refused on B after ${(performance.now() - disabled).toFixed(0)} ms`);

    // The signing keys reset through A: B refuses tokens signed before and takes those signed after.
    const before = await tokenOf(adminA);
    const withToken = (t: string) => fetch(`${b.url}${API}/users/current`, { headers: { authorization: `Bearer ${t}` } });
    assert.equal((await withToken(before)).status, 200);
    const reset = performance.now();
    assert.equal((await adminA.post(`${API}/auth-tokens/reset-keys`)).status, 204);
    await eventually('B refuses a token of the old key', async () => ((await withToken(before)).status === 401 ? true : undefined), 1_000, 10);
    console.log(`      keys reset on A, old token refused on B after ${(performance.now() - reset).toFixed(0)} ms`);
    assert.equal((await withToken(await tokenOf(adminA))).status, 200, 'a token of the new key');
  });

  it('one event per limit crossing, whichever instance took the values', async () => {
    const xid = await manualPoint();
    const det = unique('ced');
    const created = await adminB.post(`${API}/event-detectors`, { xid: det, name: det, dataPointXid: xid, detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 50 });
    assert.equal(created.status, 201, created.text);
    await new Promise((r) => setTimeout(r, 500)); // the detector instance follows the point and says so
    let t = Date.now();
    const write = async (via: ApiClient, value: number) => {
      t += 1_000;
      assert.equal((await via.post(`${API}/point-values`, [{ xid, value, timestamp: t }])).status, 200);
      await new Promise((r) => setTimeout(r, 150));
    };
    await write(adminA, 10);
    await write(adminB, 60); // crossing 1
    await write(adminA, 70);
    await write(adminB, 20); // back to normal
    await write(adminA, 80); // crossing 2
    await write(adminB, 90);
    const events = await eventually('two events', async () => {
      const res = await adminA.get<{ items: { active: boolean }[]; total: number }>(`${API}/events?eq(dataPointXid,${xid})`);
      return res.body.total >= 2 ? res.body : undefined;
    }, 5_000);
    await new Promise((r) => setTimeout(r, 500)); // a duplicate would come about now
    const again = await adminB.get<{ items: { active: boolean }[]; total: number }>(`${API}/events?eq(dataPointXid,${xid})`);
    assert.equal(again.body.total, 2, JSON.stringify(again.body.items));
    assert.deepEqual(again.body.items.map((e) => e.active).sort(), [false, true]);
    assert.equal(events.total, 2);
  });

  it('comments made through A reach an events WebSocket on B with all the event\'s comments, far more than a NOTIFY holds', async () => {
    const xid = await manualPoint();
    const det = unique('cmd');
    assert.equal((await adminA.post(`${API}/event-detectors`, { xid: det, name: det, dataPointXid: xid, detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 50 })).status, 201);
    await new Promise((r) => setTimeout(r, 500)); // the detector instance follows the point
    assert.equal((await adminA.post(`${API}/point-values`, [{ xid, value: 60, timestamp: Date.now() }])).status, 200);
    const id = await eventually('the event', async () => (await adminA.get<{ items: { id: number }[] }>(`${API}/events?eq(dataPointXid,${xid})`)).body.items[0]?.id, 5_000);

    const ws = new WebSocket(`${b.url.replace(/^http/, 'ws')}${API}/websocket/events`, { headers: { authorization: `Bearer ${await tokenOf(adminB)}` } });
    const pushed: { payload: { action: string; event: { id: number; comments: { text: string }[] }; comment?: { text: string } } }[] = [];
    ws.on('message', (data: Buffer) => pushed.push(JSON.parse(data.toString('utf8')) as (typeof pushed)[number]));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      // Eight comments of 1,000 characters: the event's comments outgrow a NOTIFY (8,000 bytes) on the fourth.
      const texts = Array.from({ length: 8 }, (_, i) => `${i}`.repeat(1000));
      for (const text of texts) assert.equal((await adminA.post(`${API}/events/${id}/comments`, { text })).status, 201);
      assert.equal((await adminA.put(`${API}/events/acknowledge/${id}`, { comment: 'done' })).status, 200);
      const mine = () => pushed.filter((m) => m.payload.event.id === id);
      await eventually('nine pushes on B', async () => (mine().length >= 9 ? true : undefined), 5_000);
      const got = mine();
      assert.deepEqual(got.map((m) => m.payload.action), [...texts.map(() => 'COMMENT_ADDED'), 'ACKNOWLEDGED']);
      got.slice(0, 8).forEach((m, i) => assert.equal(m.payload.comment?.text, texts[i]));
      assert.deepEqual(got[8]!.payload.event.comments.map((c) => c.text), [...texts, 'done']);
      assert.equal(got[8]!.payload.comment?.text, 'done');
    } finally {
      ws.close();
    }
  });

  it('a value set through either instance goes to the device through the one running its source', async () => {
    const xid = await manualPoint();
    for (const [via, value] of [[adminA, 11], [adminB, 12]] as const) {
      const set = await via.put(`${API}/point-values/${xid}`, { dataType: 'NUMERIC', value });
      assert.equal(set.status, 200, set.text);
      // Seen through the other instance within 1 s (its latest-value cache was told).
      const other = via === adminA ? adminB : adminA;
      await eventually(`${value} through the other instance`, async () => {
        const latest = await other.get<{ value: number }[]>(`${API}/point-values/latest/${xid}?limit=1`);
        return latest.body[0]?.value === value ? true : undefined;
      }, 1_000, 10);
    }
  });

  it('a set value needs read permission through either instance, refused before the relay reaches the device', async () => {
    const device = new Device(await freePort());
    device.setWords(3, [7]);
    await device.start();
    try {
      const ds = unique('mds');
      const source = { xid: ds, name: ds, modelType: 'MODBUS_IP', enabled: true, updatePeriods: 1, updatePeriodType: 'SECONDS', host: '127.0.0.1', port: device.port, timeoutMs: 500, retries: 0 };
      assert.equal((await adminA.post(`${API}/data-sources`, source)).status, 201);
      const xid = unique('mdp');
      const point = {
        xid, name: xid, dataSourceXid: ds, readPermission: ['readers'], setPermission: ['setters'],
        pointLocator: { dataType: 'NUMERIC', settable: true, offset: 3, registerType: 'HOLDING' },
      };
      assert.equal((await adminA.post(`${API}/data-points`, point)).status, 201);
      const name = unique('setter');
      assert.equal((await adminA.post(`${API}/users`, { username: name, password: 'setter-password-1', permissions: ['setters'] })).status, 201);
      const setters = [await loggedIn(a.url, name, 'setter-password-1'), await loggedIn(b.url, name, 'setter-password-1')];
      const writes = () => device.requests.fc6 + device.requests.fc16;
      const before = writes();
      for (const via of setters) {
        const res = await via.put(`${API}/point-values/${xid}`, { dataType: 'NUMERIC', value: 42 });
        assert.equal(res.status, 403, res.text);
      }
      assert.equal(writes(), before, 'neither instance wrote the device');
      assert.equal(device.holding.get(3), 7);

      // With read permission the same user sets through both, one of them relaying to the other.
      assert.equal((await adminA.put(`${API}/data-points/${xid}`, { ...point, readPermission: ['readers', 'setters'] })).status, 200);
      for (const [i, via] of setters.entries()) {
        await eventually(`set through ${i === 0 ? 'A' : 'B'}`, async () => {
          const res = await via.put(`${API}/point-values/${xid}`, { dataType: 'NUMERIC', value: 50 + i });
          return res.status === 200 ? true : undefined;
        }, 5_000, 100);
        assert.equal(device.holding.get(3), 50 + i);
      }
    } finally {
      await device.stop();
    }
  });

  it('a virtual source runs on exactly one instance, on the other within 10 s of a SIGKILL, and is handed over on SIGTERM', async () => {
    const ds = unique('vds');
    const res = await adminA.post<{ id: number }>(`${API}/data-sources`, { xid: ds, name: ds, modelType: 'VIRTUAL', enabled: true, updatePeriods: 100, updatePeriodType: 'MILLISECONDS' });
    assert.equal(res.status, 201, res.text);
    const xid = unique('vdp');
    const point = await adminB.post(`${API}/data-points`, { xid, name: xid, dataSourceXid: ds, pointLocator: { dataType: 'NUMERIC', changeType: 'INCREMENT', min: 0, max: 1e9, step: 1 } });
    assert.equal(point.status, 201, point.text);
    const sourceId = (await adminA.get<{ id: number }>(`${API}/data-sources/${ds}`)).body.id;
    const owner = await eventually('a lease holder', () => leaseHolder(db, sourceId));
    await new Promise((r) => setTimeout(r, 2_000));
    const read = async (via: ApiClient) => (await via.get<{ timestamp: number }[]>(`${API}/point-values/latest/${xid}?limit=1000`)).body.map((v) => v.timestamp);
    const stamps = await read(adminA);
    assert.ok(stamps.length >= 8 && stamps.length <= 30, `one producer at 10 values/s: ${stamps.length} values in ~2 s`);
    assert.equal(new Set(stamps).size, stamps.length, 'no duplicate timestamps');
    // The source keeps producing: B's read, made after A's, holds A's values and perhaps newer ones.
    const newestOnA = Math.max(...stamps);
    assert.deepEqual((await read(adminB)).filter((t) => t <= newestOnA), stamps.filter((t) => t <= newestOnA), 'both instances read the same history');

    const victim = instances.find((i) => i.child.pid === owner)!;
    const survivor = instances.find((i) => i !== victim)!;
    // Both instances name the runner (INSTANCE_NAME's default, host:pid).
    const nameOf = (i: Instance) => `${hostname()}:${i.child.pid}`;
    const runningOn = async (via: ApiClient) => (await via.get<{ runningOn: string | null }>(`${API}/data-sources/${ds}`)).body.runningOn;
    assert.deepEqual([await runningOn(adminA), await runningOn(adminB)], [nameOf(victim), nameOf(victim)]);
    victim.child.kill('SIGKILL');
    await victim.exited;
    const killed = performance.now();
    // The dead instance's backend may hold the lock a moment longer, until PostgreSQL sees its socket closed.
    const next = await eventually('the survivor takes the source', async () => {
      const holder = await leaseHolder(db, sourceId);
      return holder === victim.child.pid ? undefined : holder;
    }, 10_000, 100);
    assert.equal(next, survivor.child.pid);
    const client = survivor === a ? adminA : adminB;
    const before = Math.max(...(await read(client)));
    const newer = await eventually('new values after the take-over', async () => {
      const newest = Math.max(...(await read(client)));
      return newest > before ? newest : undefined;
    }, 10_000 - (performance.now() - killed), 100);
    console.log(`      SIGKILL of ${victim.name}: source running on ${survivor.name} after ${(performance.now() - killed).toFixed(0)} ms`);
    assert.ok(newer > before);
    assert.equal(await runningOn(client), nameOf(survivor), 'the take-over wrote the survivor\'s name');
    instances = instances.filter((i) => i !== victim);
    await removeDir(victim.dataDir);

    // A third instance joins; SIGTERM of the one running the source hands it over before it exits.
    const c = await startInstance('c', schema);
    instances = [...instances, c];
    const stopped = performance.now();
    await stopInstance(survivor, 'SIGTERM');
    instances = instances.filter((i) => i !== survivor);
    const third = await eventually('the third instance takes the source', async () => {
      const holder = await leaseHolder(db, sourceId);
      return holder === survivor.child.pid ? undefined : holder;
    }, 10_000, 100);
    assert.equal(third, c.child.pid);
    const adminC = await loggedIn(c.url, 'admin', 'admin');
    await eventually('runningOn names the third instance', async () => ((await runningOn(adminC)) === nameOf(c) ? true : undefined), 5_000, 50);
    console.log(`      SIGTERM of ${survivor.name}: source running on c after ${(performance.now() - stopped).toFixed(0)} ms`);
  });
});
