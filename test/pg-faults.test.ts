// PostgreSQL ending the service's connections under load, as an administrator's pg_terminate_backend
// or a server restart does: every 2 s for 30 s while clients bulk-ingest and others read and write
// metadata. The instances run as child processes (a crash ends the child, not the test) and name
// their connections through DATABASE_URL's application_name, so the test ends only its own backends
// on the shared server. Every instance must outlive the storm, every request be answered 2xx or 503
// (never a 500, never a dropped connection), every acknowledged value be read back exactly, and a
// data source keep running somewhere.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import WebSocket from 'ws';
import { ApiClient, loggedIn } from './helpers/client.js';
import { dropSchema, newSchemaName, removeDir, tempDir, testDatabaseUrl } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';

const API = '/rest/latest';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STORM_MS = 30_000;
const ROUND_MS = 2_000;
/** Values per point per ingest request; each ingest client writes two points. */
const VALUES_PER_POINT = 250;
/** Historical timestamps: the virtual source's live values never fall among them. */
const T0 = Date.UTC(2021, 0, 1);

interface Instance {
  name: string;
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  dataDir: string;
  /** Log lines at error level or above but for a store unavailable (a 500, an unhandled failure), and stderr. */
  errors: string[];
}

/** DATABASE_URL naming every connection of the instance `appName` (the URL's parameters win over the code's). */
function urlNaming(appName: string): string {
  const url = new URL(testDatabaseUrl!);
  url.searchParams.set('application_name', appName);
  return url.toString();
}

async function startInstance(name: string, schema: string, appName: string, valueStore: 'postgres' | 'duckdb'): Promise<Instance> {
  const dataDir = await tempDir(`dds-pgfaults-${name}-`);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('QUESTDB_') || key === 'VALUE_STORE') delete env[key];
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: {
      ...env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: urlNaming(appName),
      DATABASE_SCHEMA: schema,
      VALUE_STORE: valueStore,
      LOG_LEVEL: 'info',
      RATE_LIMIT_ENABLED: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const errors: string[] = [];
  const keep = (line: string) => {
    errors.push(line.slice(0, 2_000));
    if (errors.length > 50) errors.shift();
  };
  child.stderr!.on('data', (d: Buffer) => keep(d.toString()));
  const listening = new Promise<string>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; url?: string; err?: { kind?: string } };
        if (entry.msg === 'listening' && entry.url) resolve(entry.url);
        // A store unavailable for a moment is what the test does; anything else at error level is not.
        if ((entry.level ?? 0) >= 50 && entry.err?.kind !== 'unavailable') keep(line);
      } catch {
        keep(line);
      }
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await Promise.race([
    listening,
    exited.then((code) => {
      throw new Error(`instance ${name} exited (${code}) at start: ${errors.join('\n')}`);
    }),
  ]);
  return { name, url, child, exited, dataDir, errors };
}

function alive(i: Instance): boolean {
  return i.child.exitCode === null && i.child.signalCode === null;
}

async function stopInstance(i: Instance): Promise<void> {
  if (alive(i)) i.child.kill('SIGTERM');
  await i.exited;
  await removeDir(i.dataDir);
}

/** What the clients were answered during the storm. */
class Outcomes {
  readonly statuses = new Map<number, number>();
  readonly refused: string[] = [];

  count(what: string, status: number, text: string): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    if ((status < 200 || status > 299) && status !== 503) this.refused.push(`${what}: ${status} ${text.slice(0, 300)}`);
  }

  dropped(what: string, err: unknown): void {
    this.refused.push(`${what}: no answer (${(err as Error).message}; ${String((err as Error).cause ?? '')})`);
  }

  summary(): string {
    return [...this.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ');
  }
}

/** One ingest client's points and the requests it made: acknowledged, or answered 503 (unknown). */
interface Ingest {
  xids: [string, string];
  acked: number[];
  unknown: number[];
}

function valueOf(k: number, seq: number, i: number): number {
  return Math.sin(k * 1e6 + seq * VALUES_PER_POINT + i) * 1e3;
}

function tsOf(seq: number, i: number, point: number): number {
  return T0 + (seq * VALUES_PER_POINT + i) * 1_000 + point;
}

function ingestBody(k: number, xids: readonly string[], seq: number): { xid: string; value: number; timestamp: number }[] {
  const rows: { xid: string; value: number; timestamp: number }[] = [];
  xids.forEach((xid, p) => {
    for (let i = 0; i < VALUES_PER_POINT; i++) rows.push({ xid, value: valueOf(k, seq, i) + p, timestamp: tsOf(seq, i, p) });
  });
  return rows;
}

async function ingestLoop(client: ApiClient, k: number, ingest: Ingest, outcomes: Outcomes, running: () => boolean): Promise<void> {
  for (let seq = 0; running(); seq++) {
    try {
      const res = await client.post(`${API}/point-values`, ingestBody(k, ingest.xids, seq));
      outcomes.count('POST /point-values', res.status, res.text);
      if (res.status === 200) ingest.acked.push(seq);
      else {
        ingest.unknown.push(seq);
        await new Promise((r) => setTimeout(r, 50));
      }
    } catch (err) {
      ingest.unknown.push(seq);
      outcomes.dropped('POST /point-values', err);
    }
  }
}

/** A configuration import (one transaction on one connection): a source and five points. */
function importDocument(xid: string): unknown {
  return {
    dataSources: [{ xid, name: xid, modelType: 'VIRTUAL', enabled: false, updatePeriods: 1, updatePeriodType: 'MINUTES' }],
    dataPoints: Array.from({ length: 5 }, (_, j) => ({ xid: `${xid}-p${j}`, name: `${xid}-p${j}`, dataSourceXid: xid, pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', startValue: '0' } })),
  };
}

/**
 * Creates sources and imports configurations (remembering the XIDs of those acknowledged) and reads
 * points, sources and the latest values of `points` (filling the caches the cluster keeps right),
 * until the storm ends.
 */
async function metadataLoop(writer: ApiClient, reader: ApiClient, prefix: string, points: readonly string[], created: string[], outcomes: Outcomes, running: () => boolean): Promise<void> {
  for (let i = 0; running(); i++) {
    const xid = `${prefix}-${i}`;
    const steps: [string, () => Promise<{ status: number; text: string }>][] = [
      ['GET /point-values/latest', () => reader.get(`${API}/point-values/latest/${points[i % points.length]}?limit=1`)],
      ['POST /data-sources', () => writer.post(`${API}/data-sources`, { xid, name: xid, modelType: 'VIRTUAL', enabled: false })],
      ['POST /configuration/import', () => writer.post(`${API}/configuration/import`, importDocument(`${xid}-imp`))],
      ['GET /data-points', () => reader.get(`${API}/data-points?limit(20)`)],
      ['GET /data-sources/<xid>', () => reader.get(`${API}/data-sources/${created.at(-1) ?? xid}`)],
      ['GET /users/current', () => reader.get(`${API}/users/current`)],
    ];
    for (const [what, step] of steps) {
      try {
        const res = await step();
        outcomes.count(what, res.status, res.text);
        if (what === 'POST /data-sources' && res.status === 201) created.push(xid);
        if (what === 'POST /configuration/import' && res.status === 200) created.push(`${xid}-imp`);
      } catch (err) {
        outcomes.dropped(what, err);
      }
    }
  }
}

/** Ends every backend named `appNames` every ROUND_MS for STORM_MS; returns how many it ended per round. */
async function storm(db: pg.Client, appNames: string[], instances: Instance[]): Promise<number[]> {
  const rounds: number[] = [];
  const end = Date.now() + STORM_MS;
  while (Date.now() < end && instances.every(alive)) {
    await new Promise((r) => setTimeout(r, ROUND_MS));
    const { rows } = await db.query<{ n: number }>('select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = any($1)', [appNames]);
    rounds.push(rows[0]!.n);
  }
  return rounds;
}

/** Every stored value of a point in the test's time range, by timestamp. */
async function stored(client: ApiClient, xid: string): Promise<Map<number, number>> {
  const res = await client.get<{ timestamp: number; value: number }[]>(`${API}/point-values/single/${xid}?from=${T0}&to=${T0 + 100 * 365 * 86_400_000}`);
  assert.equal(res.status, 200, res.text);
  return new Map(res.body.map((v) => [v.timestamp, v.value]));
}

/** Every acknowledged value is there exactly; anything else there came from a request answered 503. */
async function assertIngested(client: ApiClient, k: number, ingest: Ingest): Promise<number> {
  let checked = 0;
  for (const [p, xid] of ingest.xids.entries()) {
    const values = await stored(client, xid);
    for (const seq of ingest.acked) {
      for (let i = 0; i < VALUES_PER_POINT; i++) {
        const ts = tsOf(seq, i, p);
        const expected = valueOf(k, seq, i) + p;
        assert.ok(values.has(ts), `${xid}: the acknowledged value at ${ts} (request ${seq}) is missing`);
        assert.ok(Object.is(values.get(ts), expected), `${xid} at ${ts}: ${values.get(ts)} ≠ ${expected}`);
        checked++;
      }
    }
    const unknown = new Set(ingest.unknown);
    for (const ts of values.keys()) {
      const seq = Math.floor((ts - p - T0) / 1_000 / VALUES_PER_POINT);
      assert.ok(ingest.acked.includes(seq) || unknown.has(seq), `${xid}: a value at ${ts} nobody wrote`);
    }
    assert.ok(values.size >= ingest.acked.length * VALUES_PER_POINT);
    assert.ok(values.size <= (ingest.acked.length + ingest.unknown.length) * VALUES_PER_POINT);
  }
  return checked;
}

const describePg = testDatabaseUrl ? describe : describe.skip;
if (!testDatabaseUrl) console.log('  skipped: the PostgreSQL fault suite needs TEST_DATABASE_URL');

describePg('PostgreSQL ending the service\'s connections every 2 s under load', function () {
  this.timeout(240_000);
  let db: pg.Client;
  let instances: Instance[] = [];
  let schema: string;

  beforeEach(async () => {
    schema = newSchemaName();
    db = new pg.Client({ connectionString: testDatabaseUrl });
    await db.connect();
  });

  afterEach(async () => {
    await Promise.all(instances.map((i) => stopInstance(i)));
    instances = [];
    await db.end();
    await dropSchema(schema);
  });

  /**
   * Runs the storm over `instances` (named `appNames`): an ingest client per entry of `ingestVia`, a
   * metadata writer and reader pair, then checks that everything held.
   */
  async function survive(appNames: string[], ingestVia: Instance[]): Promise<{ admins: ApiClient[]; ingests: Ingest[] }> {
    const admins = await Promise.all(instances.map((i) => loggedIn(i.url, 'admin', 'admin')));
    const admin = admins[0]!;
    // Manual points on a disabled source, two per ingest client.
    const ds = await admin.post(`${API}/data-sources`, { xid: 'ingest', name: 'ingest', modelType: 'VIRTUAL', enabled: false });
    assert.equal(ds.status, 201, ds.text);
    const ingests: Ingest[] = [];
    for (let k = 0; k < ingestVia.length; k++) {
      const xids: [string, string] = [`in-${k}-a`, `in-${k}-b`];
      for (const xid of xids) {
        const res = await admin.post(`${API}/data-points`, { xid, name: xid, dataSourceXid: 'ingest', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', startValue: '0' } });
        assert.equal(res.status, 201, res.text);
      }
      ingests.push({ xids, acked: [], unknown: [] });
    }
    // A source that runs under a lease, producing a value every 200 ms.
    const ticker = await admin.post(`${API}/data-sources`, { xid: 'ticker', name: 'ticker', modelType: 'VIRTUAL', enabled: true, updatePeriods: 200, updatePeriodType: 'MILLISECONDS' });
    assert.equal(ticker.status, 201, ticker.text);
    const tick = await admin.post(`${API}/data-points`, { xid: 'tick', name: 'tick', dataSourceXid: 'ticker', pointLocator: { dataType: 'NUMERIC', changeType: 'INCREMENT', min: 0, max: 1e9, step: 1 } });
    assert.equal(tick.status, 201, tick.text);

    const named = await db.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where application_name = any($1)', [appNames]);
    assert.ok(named.rows[0]!.n >= 3 * instances.length, `the instances' connections carry their names (${named.rows[0]!.n})`);

    const outcomes = new Outcomes();
    let stormOver = false;
    const running = () => !stormOver && instances.every(alive);
    const clientsFor = await Promise.all(ingestVia.map((i) => loggedIn(i.url, 'admin', 'admin')));
    const created: string[] = [];
    const metaWriter = admins[0]!;
    const metaReader = admins[admins.length - 1]!;
    const work = [
      ...ingests.map((ingest, k) => ingestLoop(clientsFor[k]!, k, ingest, outcomes, running)),
      metadataLoop(metaWriter, metaReader, 'meta', ingests.flatMap((i) => i.xids), created, outcomes, running),
    ];
    const started = Date.now();
    const rounds = await storm(db, appNames, instances);
    stormOver = true;
    await Promise.all(work);
    const acked = ingests.reduce((n, i) => n + i.acked.length, 0);
    console.log(
      `      ${rounds.length} rounds in ${((Date.now() - started) / 1000).toFixed(1)} s ended ${rounds.join(', ')} connections; answers ${outcomes.summary()}; ` +
        `${acked} ingest requests acknowledged, ${ingests.reduce((n, i) => n + i.unknown.length, 0)} not`,
    );

    for (const i of instances) assert.ok(alive(i), `instance ${i.name} outlived the storm (exit ${i.child.exitCode ?? i.child.signalCode}):\n${i.errors.join('\n')}`);
    assert.ok(rounds.length >= STORM_MS / ROUND_MS - 1 && rounds.every((n) => n > 0), `every round ended connections: ${rounds.join(', ')}`);
    assert.deepEqual(outcomes.refused, [], 'every request answered 2xx or 503');
    for (const i of instances) {
      await eventually(`${i.name} answers /health with 200`, async () => ((await fetch(`${i.url}/health`)).status === 200 ? true : undefined), 20_000, 200);
      assert.deepEqual(i.errors, [], `${i.name} logged no error`);
    }
    assert.ok(acked > 0, 'some ingest requests were acknowledged');

    // Every acknowledged write is there, read through every instance.
    let checked = 0;
    for (const client of admins) for (const [k, ingest] of ingests.entries()) checked += await assertIngested(client, k, ingest);
    // Every instance's latest value is the stored newest: none kept a value another instance replaced
    // while its channel was down (it resyncs when the channel is back).
    for (const xid of ingests.flatMap((i) => i.xids)) {
      const values = await stored(admin, xid);
      let newest = -Infinity;
      for (const ts of values.keys()) newest = Math.max(newest, ts);
      for (const [n, client] of admins.entries()) {
        await eventually(`the latest value of ${xid} through ${instances[n]!.name}`, async () => {
          const res = await client.get<{ timestamp: number; value: number }[]>(`${API}/point-values/latest/${xid}?limit=1`);
          return res.body[0]?.timestamp === newest && res.body[0].value === values.get(newest) ? true : undefined;
        }, 5_000, 100);
      }
    }
    console.log(`      ${checked} acknowledged values read back exactly (through each instance); ${created.length} sources created or imported, all there`);
    for (const xid of created) assert.equal((await admin.get(`${API}/data-sources/${xid}`)).status, 200, `source ${xid} acknowledged is there`);
    for (const xid of created.filter((x) => x.endsWith('-imp'))) {
      const points = await admin.get<{ total: number }>(`${API}/data-points?dataSourceXid=${xid}`);
      assert.equal(points.body.total, 5, `the points of the acknowledged import ${xid}`);
    }

    // The source runs somewhere after the storm: its point gets new values.
    const newest = async () => (await admin.get<{ timestamp: number }[]>(`${API}/point-values/latest/tick?limit=1`)).body[0]?.timestamp ?? 0;
    const after = Date.now();
    await eventually('the ticker produces after the storm', async () => ((await newest()) > after ? true : undefined), 15_000, 200);
    return { admins, ingests };
  }

  it('two instances on one schema with PostgreSQL values: both live on, nothing acknowledged is lost', async () => {
    const tag = randomBytes(4).toString('hex');
    const appNames = [`dds-pgfaults-${tag}-a`, `dds-pgfaults-${tag}-b`];
    // One after the other: the first creates the schema and the admin.
    instances.push(await startInstance('a', schema, appNames[0]!, 'postgres'));
    instances.push(await startInstance('b', schema, appNames[1]!, 'postgres'));
    const { admins } = await survive(appNames, [instances[0]!, instances[1]!, instances[0]!, instances[1]!]);

    // The channel carries again: a value written through A reaches a WebSocket client on B.
    const token = await admins[1]!.post<{ token: string }>(`${API}/auth-tokens/create`, {});
    assert.equal(token.status, 201, token.text);
    const ws = new WebSocket(`${instances[1]!.url.replace(/^http/, 'ws')}${API}/websocket/point-value`, { headers: { authorization: `Bearer ${token.body.token}` } });
    const updates: number[] = [];
    ws.on('message', (d: Buffer) => {
      const m = JSON.parse(d.toString()) as { payload: { event: string; value?: { timestamp: number } } };
      if (m.payload.event === 'UPDATE' && m.payload.value) updates.push(m.payload.value.timestamp);
    });
    try {
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      ws.send(JSON.stringify({ xid: 'in-0-a', eventTypes: ['UPDATE'] }));
      // B announces what it follows within seconds; A relays the values of followed points.
      const sent: number[] = [];
      await eventually('a value written through A, live on B', async () => {
        const ts = Date.now();
        assert.equal((await admins[0]!.post(`${API}/point-values`, [{ xid: 'in-0-a', value: 42.5, timestamp: ts }])).status, 200);
        sent.push(ts);
        return updates.some((t) => sent.includes(t)) ? true : undefined;
      }, 15_000, 250);
    } finally {
      ws.terminate();
    }
  });

  it('one instance with DuckDB values and PostgreSQL metadata lives on, nothing acknowledged is lost', async () => {
    const appName = `dds-pgfaults-${randomBytes(4).toString('hex')}-d`;
    instances.push(await startInstance('d', schema, appName, 'duckdb'));
    await survive([appName], [instances[0]!, instances[0]!, instances[0]!]);
  });
});
