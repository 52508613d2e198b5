// Instances of one installation (one PostgreSQL metadata schema): an instance with embedded values
// (DuckDB) refuses to run beside another, in either order (exit code 2 naming VALUE_STORE), a crashed
// one does not block a restart; every instance names the one running a source (runningOn), which
// follows a hand-over, and says so in its log and in /metrics.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { ConfigError } from '../src/config.js';
import { projectRoot } from '../src/paths.js';
import { refusal, valueStoreOf } from '../src/store/cluster/instances.js';
import { ApiClient, loggedIn } from './helpers/client.js';
import { dropSchema, newSchemaName, removeDir, tempDir, testDatabaseUrl } from './helpers/engines.js';
import { startInstance, stopInstance, type Instance } from './helpers/instances.js';
import { flushed } from './helpers/log.js';
import { eventually, freePort } from './helpers/wait.js';

const API = '/rest/latest';
const at = Date.UTC(2025, 0, 1);

describe('instance rules (refusal)', () => {
  const duck = (name: string) => ({ name, valueStore: 'duckdb', started: at });
  const pgv = (name: string) => ({ name, valueStore: 'postgres', started: at });

  it('lets instances sharing a server value store run together, and one alone whatever its store', () => {
    assert.equal(refusal(pgv('b'), [pgv('a')]), undefined);
    assert.equal(refusal({ name: 'q2', valueStore: 'questdb:t' }, [{ name: 'q1', valueStore: 'questdb:t', started: at }]), undefined);
    assert.equal(refusal(duck('a'), []), undefined);
  });

  it('refuses an embedded store beside any instance, and any instance beside an embedded store, naming VALUE_STORE and the other instance', () => {
    for (const [joining, running] of [
      [duck('d2'), [pgv('web-a')]],
      [duck('d2'), [duck('web-a')]],
      [pgv('d2'), [duck('web-a')]],
    ] as const) {
      const err = refusal(joining, running);
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^VALUE_STORE: .*instance web-a .*must share the value store/);
    }
  });

  it('refuses two server stores that differ, and a name already running (INSTANCE_NAME)', () => {
    assert.match(refusal(pgv('b'), [{ name: 'a', valueStore: 'questdb:point_values', started: at }])!.message, /^VALUE_STORE: instance a \(VALUE_STORE=questdb, QUESTDB_TABLE=point_values\)/);
    assert.match(refusal({ name: 'b', valueStore: 'questdb:t2' }, [{ name: 'a', valueStore: 'questdb:t1', started: at }])!.message, /^VALUE_STORE: /);
    assert.match(refusal(pgv('a'), [pgv('a')])!.message, /^INSTANCE_NAME: an instance named a runs already .*since 2025-01-01T00:00:00.000Z/);
  });

  it('compares QuestDB stores by table', () => {
    assert.equal(valueStoreOf({ engine: 'questdb', questdbTable: 'pv' }), 'questdb:pv');
    assert.equal(valueStoreOf({ engine: 'postgres', questdbTable: 'pv' }), 'postgres');
  });
});

const describeCluster = testDatabaseUrl ? describe : describe.skip;

/** At info: the tests read the instances' start and connection lines. */
const start = (schema: string, name: string, env: Record<string, string> = {}) => startInstance(schema, name, { env, logLevel: 'info' });

/** `src/main.ts` in a child process. */
function spawnMain(env: Record<string, string>): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', `${projectRoot}/src/main.ts`], {
    cwd: projectRoot,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_ENABLED: 'false', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
  return { child, stderr: () => stderr, exited };
}

describeCluster('instances of one installation (PostgreSQL metadata)', function () {
  this.timeout(120_000);

  describe('an instance with embedded values (DuckDB)', () => {
    const schema = newSchemaName();
    after(() => dropSchema(schema));

    it('refuses to start beside a running instance, and every instance refuses beside it; a killed one blocks nothing', async () => {
      // A DuckDB instance runs in its own process.
      const duckDir = await tempDir('dds-instances-duck-');
      const port = await freePort();
      const duck = spawnMain({ PORT: String(port), DATA_DIR: duckDir, DATABASE_URL: testDatabaseUrl!, DATABASE_SCHEMA: schema, INSTANCE_NAME: 'duck-1', VALUE_STORE: 'duckdb' });
      try {
        await eventually('the DuckDB instance answers /health', async () => {
          if (duck.child.exitCode !== null) throw new Error(`exited ${duck.child.exitCode}: ${duck.stderr()}`);
          return (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok ? true : undefined;
        }, 60_000, 200);

        // An instance with shared values (PostgreSQL) refuses to start beside it: exit code 2.
        const pgDir = await tempDir('dds-instances-pg-');
        const refused = spawnMain({ PORT: '0', DATA_DIR: pgDir, DATABASE_URL: testDatabaseUrl!, DATABASE_SCHEMA: schema, VALUE_STORE: 'postgres' });
        assert.equal(await refused.exited, 2, refused.stderr());
        assert.match(refused.stderr(), /^configuration error: VALUE_STORE: instance duck-1 keeps its point values embedded \(VALUE_STORE=duckdb/m);
        await removeDir(pgDir);

        // So does a second DuckDB instance (here, in this process).
        await assert.rejects(start(schema, 'duck-2', { VALUE_STORE: 'duckdb' }), (err: unknown) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.match(err.message, /^VALUE_STORE: this instance keeps its point values embedded \(VALUE_STORE=duckdb, under DATA_DIR\), but instance duck-1 \(VALUE_STORE=duckdb\) runs/);
          return true;
        });

        // Killed, it blocks nothing: PostgreSQL frees its lock with its connection.
        duck.child.kill('SIGKILL');
        await duck.exited;
        const next = await eventually('a DuckDB instance starts once the killed one is gone', async () => {
          try {
            return await start(schema, 'duck-2', { VALUE_STORE: 'duckdb' });
          } catch (err) {
            if (err instanceof ConfigError) return undefined; // its backend has not noticed yet
            throw err;
          }
        }, 20_000, 250);
        await stopInstance(next);
      } finally {
        if (duck.child.exitCode === null && duck.child.signalCode === null) duck.child.kill('SIGKILL');
        await duck.exited;
        await removeDir(duckDir);
      }
    });

    it('refuses to start beside an instance with shared values, naming VALUE_STORE (exit code 2 from npm start)', async () => {
      const shared = await start(schema, 'web-a');
      try {
        const dir = await tempDir('dds-instances-duck-');
        const refused = spawnMain({ PORT: '0', DATA_DIR: dir, DATABASE_URL: testDatabaseUrl!, DATABASE_SCHEMA: schema, VALUE_STORE: 'duckdb' });
        assert.equal(await refused.exited, 2, refused.stderr());
        assert.match(refused.stderr(), /^configuration error: VALUE_STORE: this instance keeps its point values embedded .* but instance web-a \(VALUE_STORE=postgres\) runs on this metadata server/m);
        await removeDir(dir);
        // A second instance with the same name is refused too; another name with shared values starts.
        await assert.rejects(start(schema, 'web-a'), (err: unknown) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.match(err.message, /^INSTANCE_NAME: an instance named web-a runs already/);
          return true;
        });
        const other = await start(schema, 'web-b');
        await stopInstance(other);
      } finally {
        await stopInstance(shared);
      }
    });
  });

  describe('an instance whose presence connection ends', () => {
    const schema = newSchemaName();
    after(() => dropSchema(schema));

    it('joins again, so that an embedded-values instance is still refused', async () => {
      const shared = await start(schema, 'web-a');
      const db = new pg.Client({ connectionString: testDatabaseUrl });
      await db.connect();
      try {
        const [{ value: installation }] = (await db.query<{ value: string }>(`select value from ${schema}.settings where key = 'installation.id'`)).rows as [{ value: string }];
        // The backend holding this installation's instance lock (no other test's connection).
        const holder = async () => {
          const { rows } = await db.query<{ pid: number }>(
            `select l.pid from pg_locks l where l.locktype = 'advisory' and l.granted and l.objsubid = 2
               and l.classid::text::bigint = (hashtext($1)::bigint & 4294967295)`,
            [`${installation}:instances`],
          );
          return rows.map((r) => r.pid);
        };
        const [before] = await holder();
        assert.ok(before, 'web-a holds its instance lock');
        await db.query('select pg_terminate_backend($1)', [before]);
        const [after] = await eventually('web-a holds its lock again, on a new connection', async () => {
          const pids = await holder();
          return pids.length === 1 && pids[0] !== before ? pids : undefined;
        }, 10_000, 100);
        assert.notEqual(after, before);
        await flushed();
        assert.ok(shared.lines.some((l) => l.msg === 'instance presence: connection lost'), 'the loss is logged');
        await assert.rejects(start(schema, 'duck', { VALUE_STORE: 'duckdb' }), (err: unknown) => err instanceof ConfigError && /^VALUE_STORE: .*instance web-a/.test(err.message));
        const { rows } = await db.query<{ name: string }>(`select name from ${schema}.cluster_instances order by id`);
        assert.deepEqual(rows.map((r) => r.name), ['web-a'], 'the row of the lost connection was replaced, not kept beside');
      } finally {
        await db.end();
        await stopInstance(shared);
      }
    });
  });

  describe('runningOn, hand-over and /metrics', () => {
    const schema = newSchemaName();
    let a: Instance;
    let b: Instance;
    let adminA: ApiClient;
    let adminB: ApiClient;

    before(async () => {
      a = await start(schema, 'web-a');
      b = await start(schema, 'web-b');
      adminA = await loggedIn(a.service.url, 'admin', 'admin');
      adminB = await loggedIn(b.service.url, 'admin', 'admin');
    });
    after(async () => {
      for (const i of [a, b]) await stopInstance(i).catch(() => undefined);
      await dropSchema(schema);
    });

    const runningOn = async (via: ApiClient, xid: string) => (await via.get<{ runningOn: string | null }>(`${API}/data-sources/${xid}`)).body.runningOn;
    const logged = (i: Instance, msg: string, xid: string) => i.lines.find((l) => l.msg === msg && l.source === xid);

    it('logs the start of each instance with its name and engines', () => {
      for (const i of [a, b]) {
        const line = i.lines.find((l) => l.msg === 'instance started');
        assert.ok(line, JSON.stringify(i.lines.slice(0, 5)));
        assert.equal(line.instance, i.name);
        assert.equal(line.values, 'postgres');
        assert.equal(line.metadata, 'postgresql');
      }
    });

    it('names the instance running a source on every instance; a disable through the other hands it over', async () => {
      const xid = `ro-${Date.now().toString(36)}`;
      const res = await adminA.post<{ id: number }>(`${API}/data-sources`, { xid, name: xid, modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
      assert.equal(res.status, 201, res.text);
      const runner = await eventually('a runner', async () => {
        const here = [];
        for (const i of [a, b]) if (await i.service.services.runtime.runsHere(res.body.id)) here.push(i);
        return here.length === 1 ? here[0] : undefined;
      });
      const other = runner === a ? b : a;
      assert.equal(await runningOn(adminA, xid), runner.name);
      assert.equal(await runningOn(adminB, xid), runner.name);
      const listed = await adminB.get<{ items: { xid: string }[] }>(`${API}/data-sources?eq(runningOn,${runner.name})&eq(xid,${xid})`);
      assert.deepEqual(listed.body.items.map((s) => s.xid), [xid]);
      await flushed();
      assert.ok(logged(runner, 'data source started on this instance', xid));
      assert.equal(logged(runner, 'data source started on this instance', xid)!.instance, runner.name);

      // Disabled through the instance that does not run it: stopped there, null everywhere.
      const off = await (other === a ? adminA : adminB).put(`${API}/data-sources/enable-disable/${xid}`, { enabled: false });
      assert.equal(off.status, 200, off.text);
      await eventually('the runner stops it', async () => ((await runner.service.services.runtime.runsHere(res.body.id)) ? undefined : true));
      assert.equal(await runningOn(adminA, xid), null);
      assert.equal(await runningOn(adminB, xid), null);
      await flushed();
      assert.equal(logged(runner, 'data source handed over', xid)?.reason, 'disabled');
    });

    it('follows the source when its instance loses its leases (its connection ends), and each sweep corrects a wrong name', async () => {
      const xid = `ll-${Date.now().toString(36)}`;
      const res = await adminA.post<{ id: number }>(`${API}/data-sources`, { xid, name: xid, modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
      assert.equal(res.status, 201, res.text);
      const id = res.body.id;
      const runnerNow = async () => {
        const here = [];
        for (const i of [a, b]) if (await i.service.services.runtime.runsHere(id)) here.push(i);
        return here.length === 1 ? here[0] : undefined;
      };
      const agreed = async (i: Instance) => ((await runningOn(adminA, xid)) === i.name && (await runningOn(adminB, xid)) === i.name ? true : undefined);
      const runner = await eventually('a runner', runnerNow);
      await eventually('both name it', () => agreed(runner));

      const db = new pg.Client({ connectionString: testDatabaseUrl });
      await db.connect();
      try {
        // The runner's lease connection ends: found by this installation's lock on this source, so
        // no other test's connection is touched.
        const [{ value: installation }] = (await db.query<{ value: string }>(`select value from ${schema}.settings where key = 'installation.id'`)).rows as [{ value: string }];
        const { rows } = await db.query<{ ended: boolean }>(
          `select pg_terminate_backend(l.pid) as ended from pg_locks l
            where l.locktype = 'advisory' and l.granted and l.objid = $1 and l.objsubid = 2
              and l.classid::text::bigint = (hashtext($2)::bigint & 4294967295)`,
          [id, `${installation}:source`],
        );
        assert.deepEqual(rows.map((r) => r.ended), [true]);
        await eventually('the runner logs the lost lease', async () => {
          await flushed();
          return logged(runner, 'data source handed over', xid)?.reason === 'lease lost' ? true : undefined;
        }, 10_000);
        const next = await eventually('one runner again', runnerNow, 10_000, 100);
        await eventually('both name the runner', () => agreed(next), 10_000, 100);

        // A name that is wrong (written late, or by hand) is corrected by the runner's next sweep.
        await db.query(`update ${schema}.data_sources set running_on = 'ghost' where id = $1`, [id]);
        await eventually('the sweep writes the runner\'s name again', () => agreed(next), 10_000, 100);
      } finally {
        await db.end();
      }
    });

    it('follows a take-over when the running instance stops, with a log line on each side; /metrics names the instance', async () => {
      const xid = `to-${Date.now().toString(36)}`;
      const res = await adminB.post<{ id: number }>(`${API}/data-sources`, { xid, name: xid, modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
      assert.equal(res.status, 201, res.text);
      const runner = await eventually('a runner', async () => {
        for (const i of [a, b]) if (await i.service.services.runtime.runsHere(res.body.id)) return i;
        return undefined;
      });
      const survivor = runner === a ? b : a;
      const survivorClient = survivor === a ? adminA : adminB;

      const metrics = async () => (await survivorClient.get('/metrics')).text;
      const runHere = (text: string, state: string) => Number(new RegExp(`^dds_data_sources_run_here\\{dds_instance="${survivor.name}",state="${state}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
      const before = runHere(await metrics(), 'RUNNING');
      assert.ok(Number.isInteger(before), 'the survivor counts the sources it runs, labelled with its name');

      // A SIGTERM's path: the runner stops and hands its sources over.
      await runner.service.stop();
      const stopped = performance.now();
      await eventually('the survivor names itself', async () => ((await runningOn(survivorClient, xid)) === survivor.name ? true : undefined), 10_000, 50);
      console.log(`      ${runner.name} stopped: runningOn says ${survivor.name} after ${(performance.now() - stopped).toFixed(0)} ms`);
      assert.equal(await survivor.service.services.runtime.runsHere(res.body.id), true);
      await flushed();
      assert.equal(logged(runner, 'data source handed over', xid)?.reason, 'instance stopping');
      const taken = logged(survivor, 'data source taken over', xid);
      assert.ok(taken, 'the survivor logs the take-over');
      assert.equal(taken.from, runner.name);
      assert.equal(taken.instance, survivor.name);

      const text = await metrics();
      assert.match(text, new RegExp(`^dds_instance_info\\{dds_instance="${survivor.name}",metadata="postgresql",value_store="postgres"\\} 1$`, 'm'));
      assert.ok(runHere(text, 'RUNNING') > before, `${runHere(text, 'RUNNING')} > ${before}`);
      await runner.service.stop(); // (stop() twice is one stop; after() removes its directory)
    });
  });
});
