// Configuration import at size (issue 24): 5,000 points, 1,000 event detectors and 100 users in one
// POST /configuration/import, into an enabled virtual source (the measurement) and, just before, into
// a disabled one (the baseline: nothing to restart), on embedded PGlite and on PostgreSQL
// (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test; the
// service gets a schema of its own, dropped afterwards). Meanwhile a second client asks
// GET /health/live every 50 ms. Figures: the import's answer time, the longest and p99 wait of
// /health/live during it. Targets: answered within 60 s, /health/live never waiting over 250 ms.
//   npm run bench -- import
//   BENCH_IMPORT_ENGINES=pglite node --import tsx bench/import.ts      (this benchmark alone)
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { login, type LoggedIn } from './lib/api.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';
import { buildIfNeeded, removeDir, startSeededService, startService, tempDir, type BenchService } from './lib/server.js';
import { msSince, sleep } from './lib/stats.js';

const POINTS = Number(process.env.BENCH_IMPORT_POINTS ?? 5_000);
const DETECTORS = Number(process.env.BENCH_IMPORT_DETECTORS ?? 1_000);
const USERS = Number(process.env.BENCH_IMPORT_USERS ?? 100);
const POLL_MS = 50;
const TARGET_IMPORT_MS = 60_000;
const TARGET_WAIT_MS = 250;
const DATABASE_URL = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

type Engine = 'pglite' | 'postgresql';

/** The document: `prefix` keeps the two imports of a run apart. */
function documentFor(prefix: string, sourceXid: string): Buffer {
  const points = Array.from({ length: POINTS }, (_, i) => ({
    xid: `${prefix}_DP_${i}`,
    name: `Point ${i}`,
    dataSourceXid: sourceXid,
    pointLocator: { dataType: 'NUMERIC', changeType: 'RANDOM_WALK', min: 0, max: 100, maxChange: 1 },
    tags: { site: `site ${i % 20}` },
  }));
  const detectors = Array.from({ length: DETECTORS }, (_, i) => ({
    xid: `${prefix}_ED_${i}`,
    name: `High ${i}`,
    dataPointXid: points[(i * 5) % POINTS]!.xid,
    detectorType: 'HIGH_LIMIT',
    alarmLevel: 'URGENT',
    limit: 99.5,
  }));
  const users = Array.from({ length: USERS }, (_, i) => ({ username: `${prefix.toLowerCase()}_user_${i}`, password: `bench-password-${i}`, permissions: ['user'] }));
  return Buffer.from(JSON.stringify({ dataPoints: points, eventDetectors: detectors, users }));
}

interface Answer {
  status: number;
  ms: number;
  text: string;
}

function send(url: string, agent: Agent, method: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const req = request(url, { method, agent, headers: body ? { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: msSince(started), text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, ms: msSince(started), text: '' }));
    });
    req.on('error', (err) => resolve({ status: 0, ms: msSince(started), text: err.message }));
    req.end(body);
  });
}

const writeHeaders = (s: LoggedIn) => ({ cookie: s.cookie, 'x-xsrf-token': s.xsrf });

/** Asks /health/live every POLL_MS on a connection of its own until stopped; returns each wait (ms). */
function pollLiveness(baseUrl: string): { stop(): Promise<number[]> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const waits: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = process.hrtime.bigint();
      const a = await send(`${baseUrl}/health/live`, agent, 'GET', {});
      if (a.status !== 200) throw new Error(`/health/live answered ${a.status} ${a.text}`);
      waits.push(a.ms);
      await sleep(Math.max(0, POLL_MS - msSince(started)));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      return waits;
    },
  };
}

interface Run {
  importMs: number;
  longestWait: number;
  p99Wait: number;
  polls: number;
}

const quantile = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
};

/** One import of the document into `sourceXid` while /health/live is polled; checks what it created. */
async function importOnce(service: BenchService, session: LoggedIn, prefix: string, sourceXid: string): Promise<Run> {
  const body = documentFor(prefix, sourceXid);
  const agent = new Agent({ keepAlive: false });
  const poll = pollLiveness(service.url);
  await sleep(4 * POLL_MS);
  const answer = await send(`${service.url}/rest/latest/configuration/import`, agent, 'POST', writeHeaders(session), body);
  const waits = await poll.stop();
  if (answer.status !== 200) throw new Error(`import into ${sourceXid} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  const counts = JSON.parse(answer.text) as { created: number };
  if (counts.created !== POINTS + DETECTORS + USERS) throw new Error(`import into ${sourceXid} created ${counts.created} items`);
  const listed = await send(`${service.url}/rest/latest/data-points?eq(dataSourceXid,${sourceXid})&limit(1)`, agent, 'GET', { cookie: session.cookie });
  const total = (JSON.parse(listed.text) as { total: number }).total;
  if (total !== POINTS) throw new Error(`${sourceXid} has ${total} points after the import`);
  return { importMs: answer.ms, longestWait: waits.reduce((m, w) => Math.max(m, w), 0), p99Wait: quantile(waits, 0.99), polls: waits.length };
}

async function createSource(service: BenchService, session: LoggedIn, xid: string, enabled: boolean): Promise<void> {
  const body = Buffer.from(JSON.stringify({ xid, name: xid, modelType: 'VIRTUAL', enabled, updatePeriods: 1, updatePeriodType: 'SECONDS' }));
  const a = await send(`${service.url}/rest/latest/data-sources`, new Agent(), 'POST', writeHeaders(session), body);
  if (a.status !== 201) throw new Error(`creating ${xid}: ${a.status} ${a.text}`);
}

/** The baseline (into a disabled source), then the measurement (into an enabled one). */
async function measure(service: BenchService, engine: Engine): Promise<Figure[]> {
  const session = await login(service.url);
  await createSource(service, session, 'BENCH_IMPORT_OFF', false);
  await createSource(service, session, 'BENCH_IMPORT_ON', true);
  const off = await importOnce(service, session, 'OFF', 'BENCH_IMPORT_OFF');
  progress(`${engine}: into a disabled source ${(off.importMs / 1000).toFixed(1)} s, /health/live longest ${off.longestWait.toFixed(0)} ms, p99 ${off.p99Wait.toFixed(0)} ms (${off.polls} polls)`);
  const on = await importOnce(service, session, 'ON', 'BENCH_IMPORT_ON');
  progress(`${engine}: into an enabled source ${(on.importMs / 1000).toFixed(1)} s, /health/live longest ${on.longestWait.toFixed(0)} ms, p99 ${on.p99Wait.toFixed(0)} ms (${on.polls} polls)`);
  const label = engine === 'pglite' ? 'PGlite' : 'PostgreSQL';
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const what = `${POINTS} points + ${DETECTORS} detectors + ${USERS} users`;
  const baseline = 'same import into a disabled source';
  return [
    figure('import', `${label}: import into an enabled source (${what})`, on.importMs, 'ms', baseline, off.importMs, `target ≤ ${TARGET_IMPORT_MS / 1000} s: ${met(on.importMs <= TARGET_IMPORT_MS)}`),
    figure('import', `${label}: longest /health/live wait during it`, on.longestWait, 'ms', baseline, off.longestWait, `polled every ${POLL_MS} ms; target ≤ ${TARGET_WAIT_MS} ms: ${met(on.longestWait <= TARGET_WAIT_MS)}`),
    figure('import', `${label}: p99 /health/live wait during it`, on.p99Wait, 'ms', baseline, off.p99Wait),
  ];
}

async function onPglite(): Promise<Figure[]> {
  const service = await startSeededService({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'warn' });
  try {
    return await measure(service, 'pglite');
  } finally {
    await service.stop();
  }
}

async function onPostgres(): Promise<Figure[]> {
  const schema = `bench_import_${randomBytes(5).toString('hex')}`;
  const dataDir = await tempDir();
  let service: BenchService | undefined;
  try {
    service = await startService({ dataDir, env: { DATABASE_URL, DATABASE_SCHEMA: schema, RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'warn' } });
    return await measure(service, 'postgresql');
  } finally {
    await service?.stop();
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await client.end();
    await removeDir(dataDir);
  }
}

function engines(): Engine[] {
  const wanted = (process.env.BENCH_IMPORT_ENGINES ?? 'pglite,postgresql').split(',').map((s) => s.trim());
  return (['pglite', 'postgresql'] as const).filter((e) => wanted.includes(e));
}

export const importBench: Benchmark = {
  name: 'import',
  description: `configuration import of ${POINTS} points + ${DETECTORS} detectors + ${USERS} users into an enabled source (PGlite, PostgreSQL): time and /health/live waits vs a disabled source`,
  async run(): Promise<Figure[]> {
    const out: Figure[] = [];
    const errors: string[] = [];
    for (const engine of engines()) {
      try {
        out.push(...(engine === 'pglite' ? await onPglite() : await onPostgres()));
      } catch (err) {
        errors.push(`${engine}: ${err instanceof Error ? err.message : String(err)}`);
        progress(`! ${engine} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    }
    // One engine failing (no PostgreSQL server) still reports the other.
    if (out.length === 0 && errors.length > 0) throw new Error(errors.join('; '));
    return out;
  },
};

// Run directly: node --import tsx bench/import.ts
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildIfNeeded();
  console.log(`## ${importBench.name}: ${importBench.description}`);
  const figures = await importBench.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
