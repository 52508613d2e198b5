// A pg pool whose connections the server ends (pg_terminate_backend of the test's own backends): a
// checked-out client has an error listener, a transaction whose connection went is discarded and
// fails with a lost-connection error, or runs again when it may (nothing committed), exactly once.
import assert from 'node:assert/strict';
import pg from 'pg';
import { hearClientErrors, pgTransaction } from '../src/store/pg-clients.js';
import { isStoreUnreachable } from '../src/store/unavailable.js';
import { dropSchema, newSchemaName, testDatabaseUrl } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';

const describePg = testDatabaseUrl ? describe : describe.skip;
if (!testDatabaseUrl) console.log('  skipped: the pg client cases need TEST_DATABASE_URL (PostgreSQL)');

describePg('pg clients whose server ends their connections', function () {
  this.timeout(30_000);
  const schema = newSchemaName();
  let admin: pg.Client;
  let pool: pg.Pool;

  before(async () => {
    admin = new pg.Client({ connectionString: testDatabaseUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.query(`create table ${schema}.t (n integer)`);
  });

  after(async () => {
    await admin.end();
    await dropSchema(schema);
  });

  beforeEach(async () => {
    pool = hearClientErrors(new pg.Pool({ connectionString: testDatabaseUrl, max: 2, options: `-c search_path=${schema}` }));
    await admin.query(`truncate ${schema}.t`);
  });

  afterEach(async () => {
    await pool.end();
  });

  const terminate = async (pid: number) => {
    await admin.query('select pg_terminate_backend($1)', [pid]);
  };
  const backendPid = async (c: pg.PoolClient) => (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const rows = async () => (await admin.query<{ n: number }>(`select n from ${schema}.t order by n`)).rows.map((r) => r.n);

  it('a checked-out client ended between statements reports its error to a listener; released, it is discarded', async () => {
    const client = await pool.connect();
    assert.ok(client.listenerCount('error') > 0, 'a listener while checked out');
    const errors: unknown[] = [];
    client.on('error', (err) => errors.push(err));
    await terminate(await backendPid(client));
    await eventually('the error event', async () => (errors.length > 0 ? true : undefined), 5_000);
    await assert.rejects(client.query('select 1'), (err) => isStoreUnreachable(err));
    client.release();
    assert.equal(pool.totalCount, 0, 'not kept for the next caller');
    assert.equal((await pool.query<{ n: number }>('select 1 as n')).rows[0]!.n, 1, 'the next checkout connects anew');
  });

  it('a transaction whose connection goes before COMMIT fails with a lost connection, commits nothing, and its connection is discarded', async () => {
    let runs = 0;
    await assert.rejects(
      pgTransaction(pool, async (c) => {
        runs++;
        await c.query('insert into t values (1)');
        await terminate(await backendPid(c));
        await c.query('insert into t values (2)');
      }),
      (err) => isStoreUnreachable(err),
    );
    assert.equal(runs, 1, 'not run again unless it may be');
    assert.deepEqual(await rows(), []);
    assert.equal(pool.totalCount, 0, 'the dead connection is not back in the pool');
  });

  it('a rerunnable transaction whose connection goes before COMMIT runs once more on a new connection, and commits once', async () => {
    const pids: number[] = [];
    const result = await pgTransaction(
      pool,
      async (c) => {
        pids.push(await backendPid(c));
        await c.query('insert into t values ($1)', [pids.length]);
        if (pids.length === 1) await terminate(pids[0]!);
        await c.query('insert into t values ($1)', [pids.length * 10]);
        return pids.length;
      },
      { rerunnable: true },
    );
    assert.equal(result, 2);
    assert.notEqual(pids[0], pids[1], 'another connection');
    assert.deepEqual(await rows(), [2, 20], 'only the second run committed');
  });

  it('a statement the server refuses leaves the connection usable: rolled back, kept, and not run again', async () => {
    let runs = 0;
    await assert.rejects(
      pgTransaction(
        pool,
        async (c) => {
          runs++;
          await c.query('insert into t values (1)');
          await c.query('select * from no_such_table');
        },
        { rerunnable: true },
      ),
      (err: { code?: string }) => err.code === '42P01',
    );
    assert.equal(runs, 1);
    assert.deepEqual(await rows(), []);
    assert.equal(pool.idleCount, 1, 'the connection went back to the pool');
  });

  it('after the server ended the idle connections, the next transaction commits on a new one', async () => {
    // Two idle connections, both ended at once: the pool drops each as its error arrives; a BEGIN
    // that meets one before that is sent again on another.
    const [a, b] = [await pool.connect(), await pool.connect()];
    const pids = [await backendPid(a), await backendPid(b)];
    a.release();
    b.release();
    for (const pid of pids) await terminate(pid);
    const n = await pgTransaction(pool, async (c) => {
      await c.query('insert into t values (7)');
      return backendPid(c);
    });
    assert.ok(!pids.includes(n), 'a new connection');
    assert.deepEqual(await rows(), [7]);
  });
});
