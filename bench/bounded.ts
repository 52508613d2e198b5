// Bounded work per request (issue 11): how long GET /health waits while heavy requests run, and how
// much memory a large rollup costs the service.
// - /health latency: one client asks GET /health one request after another (p50, p99, max), first
//   on an idle service (the baseline), then while another client repeats, back to back:
//   · the largest rollup the default limits allow: /multiple-arrays/time-period/<8 xids>/ALL over
//     25,000 SECONDS periods each (8 × 25,000 = ROLLUP_MAX_PERIODS' default 200,000), JSON;
//   · a 16 MiB bulk ingest in the usual shape (the fast reader) and one with an annotation per
//     value (JSON.parse and the general validation).
// - RSS: the service's VmRSS growth during the largest allowed rollup (baseline: VmRSS before it),
//   and during the attack's shape (8 × 1,000,000 SECONDS periods, 1e9 ms) on a service started
//   with ROLLUP_MAX_PERIODS=10000000 so it is allowed (baseline: the growth for the same range and
//   points in 40-second periods, 200,000 in all, run just before): streamed chunk by chunk, the
//   growth should not follow the periods.
// - The attack as an attacker sends it (default limits): its answer time and /health meanwhile.
// Data: 8 NUMERIC points, one value every 10 s over the last 1e9 ms (100,000 values each).
//   npm run bench -- bounded
//   BENCH_SERVICE_ENTRY=/other/build/dist/src/main.js npm run bench -- bounded   (another build)
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { createToken, login } from './lib/api.js';
import { figure, type Figure } from './lib/report.js';
import { startSeededService, type BenchService, type SeededService } from './lib/server.js';
import { median, msSince } from './lib/stats.js';

const B = 'bounded';
const POINTS = 8;
const SPAN_MS = 1e9;
const SPACING_MS = 10_000;
const ALLOWED_PERIODS_PER_POINT = 25_000;
const ATTACK_PERIODS_PER_POINT = 1_000_000;
const LOAD_SECONDS = 6;
const IDLE_PROBES = 400;
const BULK_BYTES = 16 * 1024 * 1024;
const MiB = 1024 * 1024;

interface Answer {
  status: number;
  bytes: number;
  ms: number;
  /** The first bytes of the body (an error body, or the start of the data). */
  head: string;
}

/** One request; the body is counted, not kept. A truncated body (the connection dropped) is status 0. */
function send(url: string, agent: Agent, headers: Record<string, string>, method = 'GET', body?: Buffer): Promise<Answer> {
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const req = request(url, { method, agent, headers: body ? { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) } : headers }, (res) => {
      let bytes = 0;
      let head = '';
      res.on('data', (chunk: Buffer) => {
        if (head.length < 200) head += chunk.subarray(0, 200).toString('utf8');
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: msSince(started), head }));
      res.on('error', () => resolve({ status: 0, bytes, ms: msSince(started), head }));
    });
    req.on('error', () => resolve({ status: 0, bytes: 0, ms: msSince(started), head: '' }));
    req.end(body);
  });
}

interface Latency {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN };
}

const fmtLatency = (l: Latency) => `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, max ${l.max.toFixed(1)} ms (${l.n} probes)`;

function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * A connection per probe: a kept-alive one could be closed by the server's keep-alive timer while
 * the server was stalled, failing the probe rather than timing it.
 */
const probeAgent = () => new Agent({ keepAlive: false, maxSockets: 1 });

/** GET /health one after another until `until` settles; returns every latency. */
async function probeHealth(service: BenchService, until: Promise<unknown>): Promise<number[]> {
  const agent = probeAgent();
  let done = false;
  void until.finally(() => (done = true));
  const samples: number[] = [];
  try {
    while (!done) {
      const a = await send(`${service.url}/health`, agent, {});
      if (a.status !== 200) throw new Error(`/health answered ${a.status}`);
      samples.push(a.ms);
    }
  } finally {
    agent.destroy();
  }
  return samples;
}

async function idleHealth(service: BenchService): Promise<Latency> {
  const agent = probeAgent();
  const samples: number[] = [];
  for (let i = 0; i < IDLE_PROBES; i++) samples.push((await send(`${service.url}/health`, agent, {})).ms);
  agent.destroy();
  return latency(samples);
}

interface Loaded {
  health: Latency;
  answers: Answer[];
  rssBefore: number;
  rssMax: number;
}

/** Repeats `work` back to back for `seconds` (at least once) while /health is probed and RSS sampled. */
async function underLoad(service: BenchService, seconds: number, work: () => Promise<Answer>): Promise<Loaded> {
  const pid = service.child.pid!;
  const rssBefore = rssMiB(pid);
  let rssMax = rssBefore;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMiB(pid))), 20);
  const answers: Answer[] = [];
  const load = (async () => {
    const start = process.hrtime.bigint();
    do answers.push(await work());
    while (msSince(start) < seconds * 1000);
  })();
  try {
    const samples = await probeHealth(service, load);
    await load;
    return { health: latency(samples), answers, rssBefore, rssMax: Math.max(rssMax, rssMiB(pid)) };
  } finally {
    clearInterval(sampler);
  }
}

interface Setup {
  xids: string[];
  headers: Record<string, string>;
  end: number;
}

async function setUp(service: BenchService): Promise<Setup> {
  const session = await login(service.url);
  const token = await createToken(service.url, session);
  const headers = { authorization: `Bearer ${token}` };
  const agent = new Agent({ keepAlive: true });
  const post = async (path: string, body: unknown) => {
    const a = await send(`${service.url}/rest/latest${path}`, agent, headers, 'POST', Buffer.from(JSON.stringify(body)));
    if (a.status !== 201 && a.status !== 200) throw new Error(`POST ${path}: ${a.status} ${a.head}`);
  };
  await post('/data-sources', { xid: 'bench-src', name: 'bench', modelType: 'VIRTUAL', enabled: false });
  const xids = Array.from({ length: POINTS }, (_, i) => `bench-pt-${i}`);
  for (const xid of [...xids, 'bench-bulk']) {
    await post('/data-points', { xid, name: xid, dataSourceXid: 'bench-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', settable: true } });
  }
  const end = Math.floor(Date.now() / 1000) * 1000;
  const start = end - SPAN_MS;
  for (const xid of xids) {
    for (let from = start; from < end; from += 20_000 * SPACING_MS) {
      const rows: string[] = [];
      for (let t = from; t < Math.min(end, from + 20_000 * SPACING_MS); t += SPACING_MS) rows.push(`{"xid":"${xid}","value":${(t / SPACING_MS) % 97},"timestamp":${t}}`);
      const a = await send(`${service.url}/rest/latest/point-values`, agent, headers, 'POST', Buffer.from(`[${rows.join(',')}]`));
      if (a.status !== 200) throw new Error(`seeding ${xid}: ${a.status} ${a.head}`);
    }
  }
  agent.destroy();
  return { xids, headers, end };
}

function rollupUrl(service: BenchService, s: Setup, rollup: string, periodsPerPoint: number): string {
  const from = s.end - periodsPerPoint * 1000;
  return `${service.url}/rest/latest/point-values/multiple-arrays/time-period/${s.xids.join(',')}/${rollup}?from=${from}&to=${s.end}&timePeriodType=SECONDS`;
}

/** A bulk body of about BULK_BYTES: consecutive seconds of one point, the usual shape or with annotations. */
function bulkBody(annotated: boolean, round: number): Buffer {
  const rows: string[] = [];
  let size = 2;
  const t0 = Date.UTC(2020, 0, 1) + round * 1e9;
  for (let i = 0; size < BULK_BYTES - 200; i++) {
    const row = annotated
      ? `{"xid":"bench-bulk","value":${(i % 1000) / 10},"timestamp":${t0 + i * 1000},"annotation":"a"}`
      : `{"xid":"bench-bulk","value":${(i % 1000) / 10},"timestamp":${t0 + i * 1000}}`;
    rows.push(row);
    size += row.length + 1;
  }
  return Buffer.from(`[${rows.join(',')}]`);
}

function expectStatus(answers: Answer[], status: number, what: string): void {
  const bad = answers.find((a) => a.status !== status);
  if (bad) throw new Error(`${what}: expected ${status}, got ${bad.status} ${bad.head}`);
}

async function run(): Promise<Figure[]> {
  const figures: Figure[] = [];
  let service = await startSeededService({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'warn' });
  let raised: SeededService | undefined;
  try {
    progress('seeding 8 points × 100,000 values');
    let setup = await setUp(service);
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    const idle = await idleHealth(service);
    progress(`idle /health: ${fmtLatency(idle)}`);
    const healthFigures = (label: string, l: Loaded, note: string) => {
      progress(`${label}: /health ${fmtLatency(l.health)}; ${note}`);
      figures.push(figure(B, `/health p50 during ${label}`, l.health.p50, 'ms', 'idle /health p50', idle.p50, note));
      figures.push(figure(B, `/health p99 during ${label}`, l.health.p99, 'ms', 'idle /health p99', idle.p99, note));
      figures.push(figure(B, `/health max during ${label}`, l.health.max, 'ms', 'idle /health max', idle.max, note));
    };

    const allowedUrl = rollupUrl(service, setup, 'ALL', ALLOWED_PERIODS_PER_POINT);
    const allowed = await underLoad(service, LOAD_SECONDS, () => send(allowedUrl, agent, setup.headers));
    expectStatus(allowed.answers, 200, 'largest allowed rollup');
    const a0 = allowed.answers[0]!;
    const allowedNote = `${POINTS} xids × ${ALLOWED_PERIODS_PER_POINT.toLocaleString('en-US')} SECONDS periods, ALL, JSON: ${allowed.answers.length} requests, ${(a0.bytes / MiB).toFixed(1)} MiB each, median ${median(allowed.answers.map((a) => a.ms)).toFixed(0)} ms`;
    healthFigures('largest allowed rollup', allowed, allowedNote);
    const allowedGrowth = allowed.rssMax - allowed.rssBefore;
    figures.push(figure(B, 'RSS growth, largest allowed rollup', allowedGrowth, 'MiB', 'service RSS before it', allowed.rssBefore, allowedNote));

    for (const annotated of [false, true]) {
      let round = 0;
      const label = annotated ? '16 MiB bulk ingest, general path' : '16 MiB bulk ingest, fast path';
      const bodies = [bulkBody(annotated, 0), bulkBody(annotated, 1)];
      const loaded = await underLoad(service, LOAD_SECONDS, () => send(`${service.url}/rest/latest/point-values`, agent, setup.headers, 'POST', bodies[round++ % 2]));
      expectStatus(loaded.answers, 200, label);
      healthFigures(label, loaded, `${loaded.answers.length} POSTs of ${(bodies[0]!.length / MiB).toFixed(1)} MiB, median ${median(loaded.answers.map((a) => a.ms)).toFixed(0)} ms each`);
    }

    const attackUrl = rollupUrl(service, setup, 'COUNT', ATTACK_PERIODS_PER_POINT);
    const attack = await underLoad(service, 0, () => send(attackUrl, agent, setup.headers));
    const answer = attack.answers[0]!;
    const attackNote = `${POINTS} xids × 1,000,000 SECONDS periods, COUNT, default limits: status ${answer.status}, ${(answer.bytes / MiB).toFixed(1)} MiB, ${answer.ms.toFixed(0)} ms; /health max ${attack.health.max.toFixed(1)} ms; ${answer.head.slice(0, 120)}`;
    progress(`attack: ${attackNote}`);
    figures.push(figure(B, 'attack request: time to answer', answer.ms, 'ms', 'idle /health p50', idle.p50, attackNote));
    agent.destroy();
    await service.stop();

    // The attack's shape allowed (ROLLUP_MAX_PERIODS=10,000,000): memory must not follow the periods.
    raised = await startSeededService({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'warn', ROLLUP_MAX_PERIODS: '10000000' });
    service = raised;
    progress('seeding again on a service with ROLLUP_MAX_PERIODS=10000000');
    setup = await setUp(raised);
    const bigAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    // First the same range and points in 40-second periods (200,000 in all), which also warms the
    // store's caches with the data both read; then 40 times the periods.
    const coarseUrl = `${rollupUrl(raised, setup, 'COUNT', ATTACK_PERIODS_PER_POINT)}&timePeriods=40`;
    const coarse = await underLoad(raised, 0, () => send(coarseUrl, bigAgent, setup.headers));
    expectStatus(coarse.answers, 200, '200,000 periods of 40 s');
    const big = await underLoad(raised, 0, () => send(rollupUrl(raised!, setup, 'COUNT', ATTACK_PERIODS_PER_POINT), bigAgent, setup.headers));
    bigAgent.destroy();
    expectStatus(big.answers, 200, '8,000,000 periods with ROLLUP_MAX_PERIODS=10000000');
    const b0 = big.answers[0]!;
    const coarseGrowth = coarse.rssMax - coarse.rssBefore;
    const bigNote =
      `${POINTS} xids × 1,000,000 SECONDS periods, COUNT, ROLLUP_MAX_PERIODS=10000000: ${(b0.bytes / MiB).toFixed(0)} MiB in ${(b0.ms / 1000).toFixed(1)} s; ` +
      `/health ${fmtLatency(big.health)}; RSS before ${big.rssBefore.toFixed(0)} MiB; baseline: the same range in 40 s periods (200,000), run first: ` +
      `${(coarse.answers[0]!.bytes / MiB).toFixed(1)} MiB, RSS +${coarseGrowth.toFixed(0)} MiB`;
    progress(bigNote);
    figures.push(figure(B, 'RSS growth, 8,000,000 periods (limit raised)', big.rssMax - big.rssBefore, 'MiB', 'RSS growth, same range in 200,000 periods', coarseGrowth, bigNote));
    figures.push(figure(B, '/health max during 8,000,000 periods', big.health.max, 'ms', 'idle /health max', idle.max, bigNote));
    return figures;
  } finally {
    await service.stop();
  }
}

export const bounded: Benchmark = {
  name: 'bounded',
  description: '/health latency during the largest allowed rollup and 16 MiB bulk ingests; RSS growth of large rollups; the issue-11 attack',
  run,
};
