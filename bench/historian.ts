// The historian (issue 4): bulk ingest, the hourly-average hot path, history growth and latest values,
// against the service with its embedded DuckDB value store on a fresh DATA_DIR — or, with QUESTDB_ILP and
// QUESTDB_PG set, on that QuestDB (a fresh QUESTDB_TABLE, dropped afterwards), where it also measures
// QuestDB's own `SAMPLE BY 1h` average over the same rows (cold: each point's first query; warm) and
// the same ingest into a DuckDB service in the same run (the ratio QuestDB / DuckDB). With
// VALUE_STORE=postgres the service keeps its values (and metadata) on the PostgreSQL below, in a schema
// of this run's own, dropped afterwards; the DuckDB ingest baseline runs there too.
// - ingest: 100 NUMERIC points × 1 year at 1-minute spacing (52,560,000 values) POSTed to
//   /rest/latest/point-values in batches of 10,000 consecutive minutes of one point, from 2 concurrent
//   clients (each takes half of the points), Bearer JWT, rate limits off. Sustained values/s, the
//   service's RSS (/proc/<pid>/status, sampled during the load), and what the client itself spent
//   encoding the bodies (a byte template: no JSON.stringify). Baseline: PostgreSQL COPY rows/s into a
//   classic row table (series_id, ts, value) with PRIMARY KEY (series_id, ts), in the same run.
// - hot path: GET /point-values/single/<xid>?from=<year start>&to=<year end>&rollup=AVERAGE&
//   timePeriodType=HOURS&timePeriods=1 (8,760 periods): cold (after a restart of the service, each point's
//   first request), then sequential requests across 10 points after a warm-up, then autocannon with 10
//   connections cycling through them. Baseline: the same time-weighted
//   hourly averages (value in force at each hour start included) from one SQL statement on that row
//   table, checked against the API to 1e-9 first (on an irregular sample and on a whole point).
// - latest: GET /point-values/latest/<xid> under autocannon, 10 connections; baseline GET /health.
// - growth: two more years of history for 5 points (POSTed as late, older batches), then the same
//   1-year window again; baseline: that window on the same points before the extra years.
// - cold (issue 14): after a restart of the service, every point read once, in a shuffled order, three
//   ways, each after a restart of its own: the hourly AVERAGE over the year (target p50 ≤ 3× the warm
//   p50), the raw values of one day (1,440; target p50 ≤ 3 ms) and 30 days of raw values as CSV (43,200;
//   target ≥ 1,000,000 values/s streamed). p50 and p99 over the points. The hourly AVERAGE again as
//   Arrow (Accept: application/vnd.apache.arrow.stream): cold p50 (target ≤ 3× its warm p50) and warm
//   sequential p50 against the PostgreSQL query (target ≥ 100×, issue 27).
// - analytics (issue 14): 4 concurrent clients for 60 s, each request a random point and a random window
//   of 1 to 30 days in the year, half hourly AVERAGE rollups, half raw values (JSON): requests/s, p50
//   and p99. Baseline: the same sequence of queries on the PostgreSQL row table, 4 in flight.
// - event loop: the service's own event-loop delay (prom-client's nodejs_eventloop_lag_* from /metrics,
//   scraped every second) during the ingest, against the same scrape on the idle service before it.
// PostgreSQL (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test)
// gets a schema of its own, dropped afterwards, holding every point's rows (its COPY rate and its
// queries depend on the table's size). Its sessions run with jit=off and work_mem=64MB, which make the
// baseline queries faster than the server defaults do.
//   npm run bench -- historian
//   node --import tsx bench/historian.ts                                   (this benchmark alone)
//   BENCH_HISTORIAN_POINTS=10 BENCH_HISTORIAN_DAYS=30 npm run bench -- historian   (a quick run)
//   QUESTDB_ILP=http::addr=127.0.0.1:9000 QUESTDB_PG=postgres://admin:quest@127.0.0.1:8812/qdb npm run bench -- historian
//   VALUE_STORE=postgres npm run bench -- historian
//   BENCH_HISTORIAN_ONLY=ingest npm run bench -- historian       (the ingest and its COPY baseline only)
import { randomBytes } from 'node:crypto';
import { CopyIn } from './lib/copy-in.js';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { tableFromIPC } from 'apache-arrow';
import { createToken, login } from './lib/api.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { load, loadSeconds, type LoadResult } from './lib/load.js';
import { ilpBaseline, type IlpBaselineResult } from './lib/questdb-ilp-baseline.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';
import { buildIfNeeded, startSeededService, type BenchService, type SeededService } from './lib/server.js';
import { msSince, sleep } from './lib/stats.js';

function envInt(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer between ${min} and ${max}`);
  return n;
}

const POINTS = envInt('BENCH_HISTORIAN_POINTS', 100, 2, 10_000);
const DAYS = envInt('BENCH_HISTORIAN_DAYS', 365, 1, 365);
/** `ingest`: stop after the ingest (and its baselines), for profiling and before/after comparisons of the write path. */
const ONLY = process.env.BENCH_HISTORIAN_ONLY || undefined;
if (ONLY !== undefined && ONLY !== 'ingest') throw new Error('BENCH_HISTORIAN_ONLY must be ingest');
const CLIENTS = 2;
const BATCH = 10_000;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** 2023: not a leap year, so 365 days = 525,600 minutes. */
const START = Date.UTC(2023, 0, 1);
const MINUTES = DAYS * 1440;
const END = START + MINUTES * MINUTE_MS;
const HOURS = DAYS * 24;
const TOTAL = POINTS * MINUTES;
/**
 * Points the hot path and latest values cycle through, and the ones PostgreSQL holds: spread over
 * both clients' halves (0, 10, …, 90), since the two halves' rows interleave differently on disk.
 */
const HOT: readonly number[] = Array.from({ length: Math.min(10, POINTS) }, (_, i) => Math.floor((i * POINTS) / Math.min(10, POINTS)));
/** Points that get GROWTH_SPANS more spans of history before START: every other hot point (0, 20, …, 80). */
const GROWTH: readonly number[] = HOT.filter((_, i) => i % 2 === 0);
const GROWTH_SPANS = 2;
const CONNECTIONS = 10;
const HTTP_WARMUP_ROUNDS = 2;
const HTTP_RUNS = 200;
const GROWTH_RUNS = 100;
const PG_WARMUP = 2;
const PG_RUNS = 20;
const DATABASE_URL = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** The QuestDB the service runs on (QUESTDB_ILP and QUESTDB_PG), with a table of this run's own. */
const QUESTDB =
  process.env.QUESTDB_ILP && process.env.QUESTDB_PG
    ? { ilp: process.env.QUESTDB_ILP, pg: process.env.QUESTDB_PG, table: `bench_historian_${randomBytes(5).toString('hex')}` }
    : undefined;
/** VALUE_STORE=postgres: the service's values on DATABASE_URL's server, in a schema of this run's own. */
const PG_VALUES = process.env.VALUE_STORE === 'postgres' ? { schema: `bench_values_${randomBytes(5).toString('hex')}` } : undefined;
if (process.env.VALUE_STORE && !['postgres', 'duckdb'].includes(process.env.VALUE_STORE)) {
  throw new Error('VALUE_STORE must be duckdb or postgres here (QuestDB: set QUESTDB_ILP and QUESTDB_PG)');
}
const ENGINE = QUESTDB ? 'questdb' : PG_VALUES ? 'postgres' : 'duckdb';
/** A server engine, whose ingest is compared with DuckDB's in the same run. */
const SERVER_ENGINE = QUESTDB ? 'QuestDB' : PG_VALUES ? 'PostgreSQL' : undefined;
/** QuestDB's SAMPLE BY runs (warm) per point, after its first (cold) one. */
const SAMPLE_BY_RUNS = 5;

const TARGET = {
  valuesPerSecond: 1_000_000,
  rssMiB: 1536,
  p50Ms: 15,
  p99Ms: 40,
  speedUp: 20,
  growthRatio: 1.5,
  latestRps: 15_000,
  latestP99Ms: 5,
};

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const xidOf = (point: number) => `hist-${String(point).padStart(3, '0')}`;
const iso = (ms: number) => new Date(ms).toISOString();

// ---- the data set: a deterministic walk, kept as text so that client, service and PostgreSQL parse the same decimals ----

const VALUE_TABLE_SIZE = 4099; // prime: the pattern never lines up with hours or days
const VALUE_TEXT: string[] = (() => {
  const out: string[] = [];
  let seed = 0x2545f491;
  let x = 50;
  for (let i = 0; i < VALUE_TABLE_SIZE; i++) {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    x += (seed / 2 ** 32 - 0.5) * 3;
    out.push(x.toFixed(3));
  }
  return out;
})();
const VALUE_BYTES = VALUE_TEXT.map((t) => Buffer.from(t, 'latin1'));

/** Index into the value table of `point` at minute `minute` (minutes since START; negative before it). */
function valueIndex(point: number, minute: number): number {
  const i = (minute + point * 131) % VALUE_TABLE_SIZE;
  return i < 0 ? i + VALUE_TABLE_SIZE : i;
}

// ---- the bench client: bodies from a byte template, POSTed over keep-alive connections ----

const MID = Buffer.from(',"timestamp":', 'latin1');
const MAX_VALUE_BYTES = Math.max(...VALUE_BYTES.map((b) => b.length));

/**
 * Writes `[{"xid":"…","value":…,"timestamp":…},…]` for one point's consecutive minutes straight into
 * one of two reused buffers (one may be in flight while the other is filled): the value texts are
 * pre-encoded and the 13-digit timestamp is advanced by 60,000 in place, digit by digit.
 */
class BodyEncoder {
  private readonly buffers: Buffer[];
  private turn = 0;
  /** Wall-clock nanoseconds spent encoding, and this process's CPU microseconds meanwhile. */
  ns = 0n;
  cpuMicros = 0;
  bytes = 0;

  constructor(maxXidLength: number) {
    const perValue = `{"xid":"","value":`.length + maxXidLength + MAX_VALUE_BYTES + MID.length + 13 + 2;
    this.buffers = [Buffer.allocUnsafe(BATCH * perValue + 2), Buffer.allocUnsafe(BATCH * perValue + 2)];
  }

  encode(point: number, xid: string, firstMinute: number, n: number): Buffer {
    const t = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    const buf = this.buffers[this.turn]!;
    this.turn ^= 1;
    const prefix = Buffer.from(`{"xid":${JSON.stringify(xid)},"value":`, 'utf8');
    const digits = Buffer.from(String(START + firstMinute * MINUTE_MS), 'latin1');
    if (digits.length !== 13 || String(START + (firstMinute + n) * MINUTE_MS).length !== 13) throw new Error('timestamps must have 13 digits');
    let pos = 0;
    buf[pos++] = 0x5b; // [
    for (let k = 0; k < n; k++) {
      if (k > 0) buf[pos++] = 0x2c; // ,
      for (let j = 0; j < prefix.length; j++) buf[pos++] = prefix[j]!;
      const v = VALUE_BYTES[valueIndex(point, firstMinute + k)]!;
      for (let j = 0; j < v.length; j++) buf[pos++] = v[j]!;
      for (let j = 0; j < MID.length; j++) buf[pos++] = MID[j]!;
      for (let j = 0; j < 13; j++) buf[pos++] = digits[j]!;
      buf[pos++] = 0x7d; // }
      // + 60,000 ms: add 6 at the ten-thousands digit and carry.
      let i = 8;
      let carry = 6;
      while (carry > 0) {
        const d = digits[i]! - 48 + carry;
        digits[i] = 48 + (d % 10);
        carry = d >= 10 ? 1 : 0;
        i--;
      }
    }
    buf[pos++] = 0x5d; // ]
    this.ns += process.hrtime.bigint() - t;
    const used = process.cpuUsage(cpu);
    this.cpuMicros += used.user + used.system;
    this.bytes += pos;
    return buf.subarray(0, pos);
  }
}

interface HttpResult {
  status: number;
  text: string;
  body: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

function http(url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: Buffer | string): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, text: body.toString('utf8'), body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function api<T>(service: BenchService, token: string, method: 'GET' | 'POST', path: string, body?: unknown, expect = method === 'POST' ? 201 : 200): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await http(service.url + path, method, headers, body === undefined ? undefined : JSON.stringify(body));
  if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 500)}`);
  return JSON.parse(res.text) as T;
}

// ---- the service process: RSS and CPU from /proc ----

function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** User + system CPU seconds of a process (clock ticks of 1/100 s, Linux's USER_HZ). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// ---- the service's event-loop delay, from /metrics ----

interface LoopDelay {
  /** The worst and the median of the per-second p99s, and the longest single delay, in ms. */
  p99Worst: number;
  p99Median: number;
  max: number;
  samples: number;
}

/**
 * Scrapes prom-client's event-loop gauges (nodejs_eventloop_lag_p99_seconds, _max_seconds) every
 * second: prom-client resets its histogram at every scrape, so each sample covers the second before it.
 */
function watchEventLoop(service: BenchService, token: string): { stop(): Promise<LoopDelay> } {
  const p99s: number[] = [];
  let max = 0;
  let stopped = false;
  const scrape = async () => {
    const res = await http(`${service.url}/metrics`, 'GET', { authorization: `Bearer ${token}` });
    if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${res.text.slice(0, 200)}`);
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(res.text)?.[1] ?? NaN) * 1000;
    return { p99: gauge('nodejs_eventloop_lag_p99_seconds'), max: gauge('nodejs_eventloop_lag_max_seconds') };
  };
  const loop = (async () => {
    await scrape(); // resets what came before the watch
    while (!stopped) {
      await sleep(1_000);
      const s = await scrape();
      if (Number.isFinite(s.p99)) p99s.push(s.p99);
      if (Number.isFinite(s.max)) max = Math.max(max, s.max);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const sorted = [...p99s].sort((a, b) => a - b);
      return { p99Worst: sorted.at(-1) ?? NaN, p99Median: quantile(sorted, 0.5), max, samples: sorted.length };
    },
  };
}

// ---- ingest ----

interface Job {
  point: number;
  firstMinute: number;
  n: number;
}

function pointJobs(point: number, fromMinute: number, toMinute: number): Job[] {
  const jobs: Job[] = [];
  for (let m = fromMinute; m < toMinute; m += BATCH) jobs.push({ point, firstMinute: m, n: Math.min(BATCH, toMinute - m) });
  return jobs;
}

interface Ingested {
  values: number;
  batches: number;
  seconds: number;
  rps: number;
  /** Slowest 10-second window, values/s (NaN when the load was shorter). */
  slowestWindow: number;
  rssMaxMiB: number;
  rssHwmMiB: number;
  rssSamples: number;
  encodeSeconds: number;
  encodeCpuSeconds: number;
  encodeBytes: number;
  /** 1-minute load average at the end. */
  load: number;
  clientCpuSeconds: number;
  serviceCpuSeconds: number;
  loop: LoopDelay;
}

/** Runs one queue of jobs per client (each sends its next body once the previous one is answered). */
async function ingest(service: BenchService, token: string, queues: Job[][], label: string): Promise<Ingested> {
  const url = `${service.url}/rest/latest/point-values`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const pid = service.child.pid!;
  const encoders = queues.map(() => new BodyEncoder(xidOf(POINTS).length));
  const total = queues.reduce((n, q) => n + q.reduce((m, j) => m + j.n, 0), 0);
  let done = 0;
  let batches = 0;
  let rssMax = 0;
  let rssSamples = 0;
  const windows: { at: number; done: number }[] = [];
  const cpu0 = process.cpuUsage();
  const serviceCpu0 = cpuSeconds(pid);
  const start = process.hrtime.bigint();
  let lastReport = 0;
  const sampler = setInterval(() => {
    const rss = rssMiB(pid);
    rssSamples++;
    if (rss > rssMax) rssMax = rss;
    const at = msSince(start);
    windows.push({ at, done });
    if (at - lastReport >= 10_000) {
      lastReport = at;
      const prev = windows.find((w) => w.at >= at - 10_500) ?? windows[0]!;
      const rate = ((done - prev.done) / (at - prev.at)) * 1000;
      progress(`${label}: ${fmtInt(done)} / ${fmtInt(total)} values, ${(at / 1000).toFixed(0)} s, last 10 s ${fmtInt(rate)} values/s, service RSS ${rss.toFixed(0)} MiB`);
    }
  }, 100);

  const loopWatch = watchEventLoop(service, token);
  const send = async (body: Buffer, n: number) => {
    const res = await http(url, 'POST', headers, body);
    if (res.status !== 200 || res.text !== `{"written":${n}}`) throw new Error(`POST /point-values: ${res.status} ${res.text.slice(0, 500)}`);
    done += n;
    batches++;
  };
  try {
    await Promise.all(
      queues.map(async (jobs, c) => {
        const encoder = encoders[c]!;
        let inFlight: Promise<void> | undefined;
        for (const job of jobs) {
          // Encode the next body while the previous one is at the service.
          const body = encoder.encode(job.point, xidOf(job.point), job.firstMinute, job.n);
          await inFlight;
          inFlight = send(body, job.n);
        }
        await inFlight;
      }),
    );
  } finally {
    clearInterval(sampler);
  }
  const seconds = msSince(start) / 1000;
  const loop = await loopWatch.stop();
  const rss = rssMiB(pid);
  rssMax = Math.max(rssMax, rss);
  const cpu = process.cpuUsage(cpu0);
  let slowest = Infinity;
  for (let i = 0, j = 0; i < windows.length; i++) {
    while (windows[j + 1] && windows[j + 1]!.at <= windows[i]!.at - 10_000) j++;
    if (windows[i]!.at - windows[j]!.at >= 10_000) slowest = Math.min(slowest, ((windows[i]!.done - windows[j]!.done) / (windows[i]!.at - windows[j]!.at)) * 1000);
  }
  return {
    values: done,
    batches,
    seconds,
    rps: done / seconds,
    slowestWindow: Number.isFinite(slowest) ? slowest : NaN,
    rssMaxMiB: rssMax,
    rssHwmMiB: rssMiB(pid, 'VmHWM'),
    rssSamples: rssSamples + 1,
    encodeSeconds: encoders.reduce((s, e) => s + Number(e.ns) / 1e9, 0),
    encodeCpuSeconds: encoders.reduce((s, e) => s + e.cpuMicros / 1e6, 0),
    load: loadavg()[0]!,
    encodeBytes: encoders.reduce((s, e) => s + e.bytes, 0),
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
    serviceCpuSeconds: cpuSeconds(pid) - serviceCpu0,
    loop,
  };
}

// ---- PostgreSQL: COPY into a row table, and the hourly averages in one statement ----

/**
 * Time-weighted average per hour of [from, to): each row's value holds from its ts (or from `from`,
 * for the value in force there) until the next row's ts (or endOfData), and every such segment is cut
 * at the hour boundaries it crosses. Parameters: series, from, to, endOfData (epoch ms, positive).
 */
const PG_HOURLY_AVERAGE = `
WITH r AS (
  (SELECT ts, value FROM pv WHERE series_id = $1 AND ts <= $2 ORDER BY ts DESC LIMIT 1)
  UNION ALL
  SELECT ts, value FROM pv WHERE series_id = $1 AND ts > $2 AND ts < $3
), seg AS (
  SELECT greatest(ts, $2) AS s, least(coalesce(lead(ts) OVER (ORDER BY ts), $4), $4) AS e, value FROM r
), piece AS (
  SELECT h, value * (least(e, (h + 1) * ${HOUR_MS}) - greatest(s, h * ${HOUR_MS})) AS area,
         least(e, (h + 1) * ${HOUR_MS}) - greatest(s, h * ${HOUR_MS}) AS ms
  FROM seg CROSS JOIN LATERAL generate_series(s / ${HOUR_MS}, (e - 1) / ${HOUR_MS}) AS h
  WHERE e > s
)
SELECT (h * ${HOUR_MS})::float8 AS period, sum(area) / sum(ms) AS average FROM piece GROUP BY h ORDER BY h`;

interface Latency {
  p50: number;
  p99: number;
  runs: number;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** `warmup` untimed calls, then `runs` sequential timed ones; call i gets i (warm-up calls too). */
async function sequential(fn: (i: number) => Promise<unknown>, warmup: number, runs: number): Promise<Latency> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await fn(warmup + i);
    times.push(msSince(t));
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), runs };
}

/** Calls per second and latency with `inFlight` loops running `fn` for `seconds`. */
async function concurrent(fn: (i: number) => Promise<unknown>, inFlight: number, seconds: number): Promise<{ rate: number } & Latency> {
  const start = process.hrtime.bigint();
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (msSince(start) < seconds * 1000) {
        const t = process.hrtime.bigint();
        await fn(next++);
        times.push(msSince(t));
      }
    }),
  );
  const rate = times.length / (msSince(start) / 1000);
  times.sort((a, b) => a - b);
  return { rate, p50: quantile(times, 0.5), p99: quantile(times, 0.99), runs: times.length };
}

type Hourly = { timestamp: number; value: number | null }[];

/** An irregular series for checking the SQL against the API: gaps from 250 ms to over two hours. */
const VERIFY_XID = 'hist-verify';
const VERIFY_SERIES = 1_000_000;
const VERIFY_FROM = START;
const VERIFY_TO = START + 30 * 86_400_000;
function verifySample(): { ts: number; value: number }[] {
  const gaps = [250, 17_000, 59_000, 240_000, 2_820_000, 7_980_000];
  const out: { ts: number; value: number }[] = [];
  let seed = 7;
  let ts = START + 37 * MINUTE_MS + 13_250; // the first hour is only partly in force
  while (ts < VERIFY_TO - 2 * 86_400_000) {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    out.push({ ts, value: Number(((seed % 200_001) / 1000 - 100).toFixed(3)) });
    ts += gaps[seed % gaps.length]!;
  }
  return out; // the last value stays in force for two days up to VERIFY_TO
}

/** Throws unless the API's hourly averages equal PostgreSQL's to 1e-9 (relative above 1); returns the largest difference. */
function compare(label: string, apiValues: Hourly, sql: { period: number; average: number }[]): number {
  const byPeriod = new Map(sql.map((r) => [r.period, r.average]));
  let worst = 0;
  let nonNull = 0;
  for (const { timestamp, value } of apiValues) {
    const expected = byPeriod.get(timestamp);
    if (value === null) {
      if (expected !== undefined) throw new Error(`${label}: hour ${iso(timestamp)}: API null, SQL ${expected}`);
      continue;
    }
    nonNull++;
    if (expected === undefined) throw new Error(`${label}: hour ${iso(timestamp)}: API ${value}, SQL has no row`);
    const diff = Math.abs(value - expected);
    if (diff > 1e-9 * Math.max(1, Math.abs(expected))) throw new Error(`${label}: hour ${iso(timestamp)}: API ${value}, SQL ${expected}`);
    worst = Math.max(worst, diff);
  }
  if (nonNull !== sql.length) throw new Error(`${label}: API has ${nonNull} averages, SQL ${sql.length} rows`);
  return worst;
}

interface Postgres {
  pool: pg.Pool;
  schema: string;
  copyRows: number;
  copySeconds: number;
  hourly(series: number, from: number, to: number): Promise<{ period: number; average: number }[]>;
  raw(series: number, from: number, to: number): Promise<{ ts: number; value: number }[]>;
  close(): Promise<void>;
}

async function setUpPostgres(): Promise<Postgres> {
  const schema = `bench_historian_${randomBytes(5).toString('hex')}`;
  // A fair baseline: no JIT compilation for a query run over and over, and room to sort a year of rows in memory.
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: CONNECTIONS, options: `-c search_path=${schema} -c jit=off -c work_mem=64MB` });
  const close = async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await pool.end();
  };
  try {
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query('CREATE TABLE pv (series_id integer NOT NULL, ts bigint NOT NULL, value double precision NOT NULL, PRIMARY KEY (series_id, ts))');
    const sample = verifySample();
    function* rows(): Iterable<Buffer> {
      for (let p = 0; p < POINTS; p++) {
        for (let m0 = 0; m0 < MINUTES; m0 += BATCH) {
          let text = '';
          for (let m = m0; m < Math.min(MINUTES, m0 + BATCH); m++) text += `${p}\t${START + m * MINUTE_MS}\t${VALUE_TEXT[valueIndex(p, m)]}\n`;
          yield Buffer.from(text, 'latin1');
        }
      }
      yield Buffer.from(sample.map((v) => `${VERIFY_SERIES}\t${v.ts}\t${v.value}\n`).join(''), 'latin1');
    }
    const client = await pool.connect();
    const t = process.hrtime.bigint();
    let copyRows: number;
    try {
      copyRows = await client.query(new CopyIn('COPY pv (series_id, ts, value) FROM STDIN', rows)).done;
    } finally {
      client.release();
    }
    const copySeconds = msSince(t) / 1000;
    await pool.query('VACUUM ANALYZE pv');
    return {
      pool,
      schema,
      copyRows,
      copySeconds,
      async hourly(series, from, to) {
        const r = await pool.query<{ period: number; average: number }>(PG_HOURLY_AVERAGE, [series, from, to, Math.min(to, Date.now())]);
        return r.rows;
      },
      async raw(series, from, to) {
        const r = await pool.query<{ ts: number; value: number }>('SELECT ts::float8 AS ts, value FROM pv WHERE series_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts', [series, from, to]);
        return r.rows;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

// ---- points, cold reads, QuestDB's own SAMPLE BY ----

const ARROW = 'application/vnd.apache.arrow.stream';

/** How a read asks for its answer (JSON by default) and how many values it must hold. */
interface ReadForm {
  csv?: boolean;
  arrow?: boolean;
  expectValues?: number;
}

/** Creates the bench's source and points; returns each point's id (its series in the value store). */
async function createPoints(service: BenchService, token: string): Promise<Map<string, number>> {
  await api(service, token, 'POST', '/rest/latest/data-sources', { xid: 'hist-ds', name: 'Historian bench', modelType: 'VIRTUAL' });
  const ids = new Map<string, number>();
  for (const xid of [...Array.from({ length: POINTS }, (_, p) => xidOf(p)), VERIFY_XID]) {
    const point = await api<{ id: number }>(service, token, 'POST', '/rest/latest/data-points', {
      xid,
      name: `Historian ${xid}`,
      dataSourceXid: 'hist-ds',
      pointLocator: { dataType: 'NUMERIC', settable: true },
    });
    ids.set(xid, point.id);
  }
  return ids;
}

/**
 * Each path read once, in turn: the latency of a first read. `csv` asks for text/csv, `arrow` for an
 * Arrow IPC stream; `expectValues` checks how many values (JSON array elements, CSV rows, Arrow rows)
 * each answer holds.
 */
async function firstReads(service: BenchService, token: string, paths: readonly string[], options: ReadForm = {}): Promise<Latency> {
  const times: number[] = [];
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (options.csv) headers.accept = 'text/csv';
  else if (options.arrow) headers.accept = ARROW;
  for (const path of paths) {
    const t = process.hrtime.bigint();
    const res = await http(service.url + path, 'GET', headers);
    times.push(msSince(t));
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    if (options.expectValues !== undefined) {
      const n = options.csv ? res.text.split('\r\n').filter(Boolean).length - 1 : options.arrow ? tableFromIPC(res.body).numRows : (JSON.parse(res.text) as unknown[]).length;
      if (n !== options.expectValues) throw new Error(`GET ${path}: ${n} values, expected ${options.expectValues}`);
    }
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), runs: times.length };
}

/**
 * QuestDB's own hourly arithmetic average over the year of each point, over PG-wire: the first query
 * per point of `coldSeries` (cold: compiled and read for the first time; the points the service's cold
 * reads cover, so the two p50s are of the same points), then SAMPLE_BY_RUNS more of `warmSeries` (warm).
 */
async function questdbSampleBy(
  q: NonNullable<typeof QUESTDB>,
  coldSeries: readonly number[],
  warmSeries: readonly number[],
): Promise<{ cold: Latency; warm: Latency }> {
  const client = new pg.Client({ connectionString: q.pg });
  await client.connect();
  try {
    const sql = (id: number) =>
      `SELECT ts, avg(value) FROM ${q.table} WHERE series = '${id}' AND ts >= '${iso(START)}' AND ts < '${iso(END)}' AND NOT deleted SAMPLE BY 1h ALIGN TO CALENDAR`;
    const cold: number[] = [];
    const warm: number[] = [];
    for (const id of coldSeries) {
      const t = process.hrtime.bigint();
      const { rows } = await client.query(sql(id));
      cold.push(msSince(t));
      if (rows.length !== HOURS) throw new Error(`SAMPLE BY of series ${id}: ${rows.length} hours, expected ${HOURS}`);
    }
    for (let r = 0; r < SAMPLE_BY_RUNS; r++) {
      for (const id of warmSeries) {
        const t = process.hrtime.bigint();
        await client.query(sql(id));
        warm.push(msSince(t));
      }
    }
    const latency = (times: number[]): Latency => {
      times.sort((a, b) => a - b);
      return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), runs: times.length };
    };
    return { cold: latency(cold), warm: latency(warm) };
  } finally {
    await client.end();
  }
}

/** Drops the schema the service kept its values and metadata in (VALUE_STORE=postgres). */
async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** Drops the QuestDB tables of this run. */
async function dropQuestDbTables(q: NonNullable<typeof QUESTDB>): Promise<void> {
  const client = new pg.Client({ connectionString: q.pg });
  await client.connect();
  try {
    for (const suffix of ['', '_hourly', '_pending', '_owner', '_bare']) await client.query(`DROP TABLE IF EXISTS ${q.table}${suffix}`);
  } finally {
    await client.end();
  }
}

/** The ingest's figures: values/s against PostgreSQL COPY, the service's RSS, the client's encoding. */
function ingestFigures(ing: Ingested, copyRate: number, copyRows: number, idleRss: number, finalHwm: number): Figure[] {
  const B = 'historian';
  const span = `${POINTS} points × ${DAYS} d`;
  return [
      figure(B, `ingest: POST /point-values (${ENGINE})`, ing.rps, 'values/s', `PostgreSQL COPY into row table with PK (${fmtInt(copyRows)} rows)`, copyRate,
        `${fmtInt(ing.values)} values (${span}), ${fmtInt(ing.batches)} batches of ${fmtInt(BATCH)}, ${CLIENTS} clients, ${ing.seconds.toFixed(1)} s; slowest 10 s ${fmtInt(ing.slowestWindow)}/s; ` +
          `service CPU ${ing.serviceCpuSeconds.toFixed(0)} s (${((ing.serviceCpuSeconds / ing.seconds) * 100).toFixed(0)} % of one core); load average ${ing.load.toFixed(1)} at the end; ` +
          `target ≥ ${fmtInt(TARGET.valuesPerSecond)}: ${met(ing.rps >= TARGET.valuesPerSecond)}`),
      figure(B, 'ingest: service RSS, max', ing.rssMaxMiB, 'MiB', 'service RSS before the load', idleRss,
        `${ing.rssSamples} samples every 100 ms; VmHWM ${ing.rssHwmMiB.toFixed(0)} MiB (${finalHwm.toFixed(0)} MiB by the end of the run, growth load included); ` +
          `DUCKDB_MEMORY_LIMIT default (768MB); target ≤ ${TARGET.rssMiB} MiB: ${met(Math.max(ing.rssMaxMiB, ing.rssHwmMiB) <= TARGET.rssMiB)}`),
      figure(B, 'ingest: client body encoding', ing.values / ing.encodeCpuSeconds, 'values/s', 'ingest values/s', ing.rps,
        `per CPU second: ${ing.encodeCpuSeconds.toFixed(1)} s CPU (${ing.encodeSeconds.toFixed(1)} s wall) encoding ${(ing.encodeBytes / 2 ** 20).toFixed(0)} MiB, ` +
          `${((ing.encodeCpuSeconds / ing.seconds) * 100).toFixed(0)} % of the load's wall time, overlapped with the service's work; bench process CPU ${ing.clientCpuSeconds.toFixed(1)} s in all`),
  ];
}

// ---- the run ----

/** Raw values of `days` days from `from`. */
function rawPath(xid: string, from: number, days: number): string {
  return `/rest/latest/point-values/single/${xid}?from=${iso(from)}&to=${iso(from + days * 86_400_000)}`;
}

/** A small deterministic generator in [0, 1), so every run asks the same questions. */
function seeded(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    return x / 2 ** 32;
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

const ANALYTICS_CLIENTS = 4;

interface AnalyticsQuery {
  kind: 'rollup' | 'raw';
  point: number;
  days: number;
  from: number;
  to: number;
}

/** 100,000 questions an analytics tool might ask: any point, a window of 1-30 days from a random hour. */
function analyticsQueries(random: () => number): AnalyticsQuery[] {
  return Array.from({ length: 100_000 }, (): AnalyticsQuery => {
    const days = 1 + Math.floor(random() * Math.min(30, DAYS));
    const from = START + Math.floor(random() * (DAYS - days) * 24) * HOUR_MS; // on the hour, as PostgreSQL groups
    return { kind: random() < 0.5 ? 'rollup' : 'raw', point: Math.floor(random() * POINTS), days, from, to: from + days * 86_400_000 };
  });
}

function rollupPath(xid: string, from = START, to = END): string {
  return `/rest/latest/point-values/single/${xid}?from=${iso(from)}&to=${iso(to)}&rollup=AVERAGE&timePeriodType=HOURS&timePeriods=1`;
}

async function run(): Promise<Figure[]> {
  progress(`data set: ${POINTS} points × ${DAYS} days at 1-minute spacing = ${fmtInt(TOTAL)} values, in the service and in PostgreSQL; the hot path cycles through ${HOT.map(xidOf).join(', ')}`);
  const pgdb = await setUpPostgres();
  let service: SeededService | undefined;
  try {
    const copyRate = pgdb.copyRows / pgdb.copySeconds;
    progress(`postgresql: COPY ${fmtInt(pgdb.copyRows)} rows into (series_id, ts, value) with PRIMARY KEY in ${pgdb.copySeconds.toFixed(1)} s: ${fmtInt(copyRate)} rows/s (schema ${pgdb.schema})`);

    const engineEnv: Record<string, string> = QUESTDB
      ? { QUESTDB_ILP: QUESTDB.ilp, QUESTDB_PG: QUESTDB.pg, QUESTDB_TABLE: QUESTDB.table }
      : PG_VALUES
        ? { VALUE_STORE: 'postgres', DATABASE_URL, DATABASE_SCHEMA: PG_VALUES.schema }
        : {};
    service = await startSeededService({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'silent', ...engineEnv });
    let token = await createToken(service.url, await login(service.url), 6 * 3_600_000);
    const pointIds = await createPoints(service, token);
    await sleep(500);
    const idleRss = rssMiB(service.child.pid!);
    progress(`service: ${POINTS + 1} points created, RSS ${idleRss.toFixed(0)} MiB; loading ${fmtInt(TOTAL)} values, ${CLIENTS} clients × ${POINTS / CLIENTS} points, batches of ${fmtInt(BATCH)}`);

    // -- ingest (the event loop watched on the idle service first, as the baseline) --
    const idleWatch = watchEventLoop(service, token);
    await sleep(3_000);
    const idleLoop = await idleWatch.stop();
    const perClient = Math.ceil(POINTS / CLIENTS);
    const queues = Array.from({ length: CLIENTS }, (_, c) => {
      const jobs: Job[] = [];
      for (let p = c * perClient; p < Math.min(POINTS, (c + 1) * perClient); p++) jobs.push(...pointJobs(p, 0, MINUTES));
      return jobs;
    });
    // On QuestDB: the same rows from a bare ILP client into a table of the service's shape, first (the
    // baseline waits for QuestDB to apply its rows, so none of its work overlaps the service's load).
    let bareIlp: IlpBaselineResult | undefined;
    if (QUESTDB) {
      const bareQueues = queues.map((jobs) =>
        jobs.map((job) => ({
          series: pointIds.get(xidOf(job.point))!,
          firstMs: START + job.firstMinute * MINUTE_MS,
          stepMs: MINUTE_MS,
          values: Array.from({ length: job.n }, (_, k) => VALUE_BYTES[valueIndex(job.point, job.firstMinute + k)]!),
        })),
      );
      bareIlp = await ilpBaseline(QUESTDB.ilp, QUESTDB.pg, `${QUESTDB.table}_bare`, bareQueues);
      progress(
        `bare ILP/HTTP into QuestDB (table of the service's raw shape, same values and clients): ${fmtInt(bareIlp.values)} values in ${bareIlp.seconds.toFixed(1)} s = ` +
          `${fmtInt(bareIlp.rps)} values/s, ${(bareIlp.bytes / 2 ** 20).toFixed(0)} MiB of ILP; applied ${bareIlp.applySeconds.toFixed(1)} s after the last answer; load average ${loadavg()[0]!.toFixed(2)}`,
      );
    }
    const ing = await ingest(service, token, queues, 'ingest');
    progress(
      `ingest: ${fmtInt(ing.values)} values in ${ing.seconds.toFixed(1)} s = ${fmtInt(ing.rps)} values/s (slowest 10 s: ${fmtInt(ing.slowestWindow)}); ` +
        `service CPU ${ing.serviceCpuSeconds.toFixed(1)} s, bench CPU ${ing.clientCpuSeconds.toFixed(1)} s of which encoding ${ing.encodeCpuSeconds.toFixed(1)} s; ` +
        `RSS max ${ing.rssMaxMiB.toFixed(0)} MiB (VmHWM ${ing.rssHwmMiB.toFixed(0)} MiB); load average ${ing.load.toFixed(2)}; ` +
        `event-loop delay p99 per second: median ${ing.loop.p99Median.toFixed(1)} ms, worst ${ing.loop.p99Worst.toFixed(1)} ms, longest ${ing.loop.max.toFixed(1)} ms (idle: ${idleLoop.p99Median.toFixed(1)} ms)`,
    );

    // -- on a server engine: the same ingest into DuckDB, in the same run --
    let duckIngest: Ingested | undefined;
    if (SERVER_ENGINE) {
      const duck = await startSeededService({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'silent' });
      try {
        const duckToken = await createToken(duck.url, await login(duck.url), 6 * 3_600_000);
        await createPoints(duck, duckToken);
        duckIngest = await ingest(duck, duckToken, queues, 'ingest into DuckDB (baseline)');
        progress(`ingest into DuckDB, same data and clients: ${fmtInt(duckIngest.rps)} values/s; ${SERVER_ENGINE} / DuckDB ${(ing.rps / duckIngest.rps).toFixed(2)}`);
      } finally {
        await duck.stop();
      }
    }

    if (ONLY === 'ingest') return ingestFigures(ing, copyRate, pgdb.copyRows, idleRss, rssMiB(service.child.pid!, 'VmHWM'));

    // -- the SQL checked against the API --
    const sample = verifySample();
    await api(service, token, 'POST', '/rest/latest/point-values', sample.map((v) => ({ xid: VERIFY_XID, value: v.value, timestamp: v.ts })), 200);
    const apiHourly = (xid: string, from: number, to: number) => api<Hourly>(service!, token, 'GET', rollupPath(xid, from, to));
    const verifyDiff = compare('irregular sample', await apiHourly(VERIFY_XID, VERIFY_FROM, VERIFY_TO), await pgdb.hourly(VERIFY_SERIES, VERIFY_FROM, VERIFY_TO));
    const point0 = await apiHourly(xidOf(0), START, END);
    if (point0.length !== HOURS || point0.some((v) => v.value === null)) throw new Error(`${xidOf(0)}: expected ${HOURS} hourly averages`);
    const point0Diff = compare(xidOf(0), point0, await pgdb.hourly(0, START, END));
    progress(`SQL = API: irregular sample (${sample.length} values, 720 hours) max |diff| ${verifyDiff.toExponential(1)}; ${xidOf(0)} (${HOURS} hours) max |diff| ${point0Diff.toExponential(1)}`);

    // -- cold: every point read once after a restart of the service, three ways, a restart each --
    const random = seeded(0x5eed);
    const order = shuffle(Array.from({ length: POINTS }, (_, p) => p), random);
    const restarted = async () => {
      service = await service!.restart();
      token = await createToken(service.url, await login(service.url), 6 * 3_600_000);
      return service;
    };
    // Each pass is followed by the same reads again (warm), the baseline of its figures.
    const coldAndWarm = async (paths: string[], options: ReadForm = {}) => {
      const first = await firstReads(await restarted(), token, paths, options);
      return { cold: first, warm: await firstReads(service!, token, paths, options) };
    };
    const both = (l: { cold: Latency; warm: Latency }, digits = 1) =>
      `p50 ${l.cold.p50.toFixed(digits)} ms, p99 ${l.cold.p99.toFixed(digits)} ms (read again: p50 ${l.warm.p50.toFixed(digits)} ms, p99 ${l.warm.p99.toFixed(digits)} ms)`;
    const yearReads = await coldAndWarm(order.map((p) => rollupPath(xidOf(p))));
    progress(`cold, hourly AVERAGE over the year, each of ${POINTS} points once after a restart: ${both(yearReads)}`);
    const arrowYearReads = await coldAndWarm(order.map((p) => rollupPath(xidOf(p))), { arrow: true, expectValues: HOURS });
    progress(`cold, hourly AVERAGE over the year as Arrow, each of ${POINTS} points once after a restart: ${both(arrowYearReads)}`);
    const dayStart = () => START + Math.floor(random() * DAYS) * 86_400_000; // a random whole day
    const dayReads = await coldAndWarm(order.map((p) => rawPath(xidOf(p), dayStart(), 1)), { expectValues: 1440 });
    progress(`cold, raw values of one day (1,440 values), each point once after a restart: ${both(dayReads, 2)}`);
    const csvDays = Math.min(30, DAYS);
    const csvStart = () => START + Math.floor(random() * (DAYS - csvDays + 1)) * 86_400_000;
    const csvReads = await coldAndWarm(order.map((p) => rawPath(xidOf(p), csvStart(), csvDays)), { csv: true, expectValues: csvDays * 1440 });
    const csvRate = (ms: number) => (csvDays * 1440) / (ms / 1000);
    progress(`cold, ${csvDays} days of raw values as CSV (${fmtInt(csvDays * 1440)} values), each point once after a restart: ${both(csvReads)}; p50 ${fmtInt(csvRate(csvReads.cold.p50))} values/s`);
    const cold = yearReads.cold;
    const idsOf = (points: readonly number[]) => points.map((p) => pointIds.get(xidOf(p))!);
    const sampleBy = QUESTDB ? await questdbSampleBy(QUESTDB, idsOf(order), idsOf(HOT)) : undefined;
    if (sampleBy) {
      progress(`QuestDB SAMPLE BY 1h avg(value) over the same year: cold p50 ${sampleBy.cold.p50.toFixed(1)} ms, p99 ${sampleBy.cold.p99.toFixed(1)} ms; warm p50 ${sampleBy.warm.p50.toFixed(1)} ms, p99 ${sampleBy.warm.p99.toFixed(1)} ms`);
    }

    // -- hot path over HTTP, then PostgreSQL --
    const headers = { authorization: `Bearer ${token}` };
    const hotPaths = HOT.map((p) => rollupPath(xidOf(p)));
    const expectedBytes = new Map<string, number>();
    const hotGet = async (i: number) => {
      const path = hotPaths[i % HOT.length]!;
      const res = await http(service!.url + path, 'GET', headers);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`);
      const bytes = expectedBytes.get(path);
      if (bytes === undefined) expectedBytes.set(path, res.text.length);
      else if (bytes !== res.text.length) throw new Error(`GET ${path}: the answer changed`);
    };
    const httpSeq = await sequential(hotGet, HTTP_WARMUP_ROUNDS * HOT.length, HTTP_RUNS);
    progress(`hot path, HTTP sequential: p50 ${httpSeq.p50.toFixed(2)} ms, p99 ${httpSeq.p99.toFixed(2)} ms (${HTTP_RUNS} requests over ${HOT.length} points, ${HOURS} hours each); load average ${loadavg()[0]!.toFixed(2)}`);
    const arrowHeaders = { ...headers, accept: ARROW };
    const hotArrowGet = async (i: number) => {
      const path = hotPaths[i % HOT.length]!;
      const res = await http(service!.url + path, 'GET', arrowHeaders);
      if (res.status !== 200) throw new Error(`GET ${path} as Arrow: ${res.status} ${res.text.slice(0, 300)}`);
    };
    const arrowSeq = await sequential(hotArrowGet, HTTP_WARMUP_ROUNDS * HOT.length, HTTP_RUNS);
    progress(`hot path as Arrow, HTTP sequential: p50 ${arrowSeq.p50.toFixed(2)} ms, p99 ${arrowSeq.p99.toFixed(2)} ms; load average ${loadavg()[0]!.toFixed(2)}`);
    await load({ url: service.url, paths: hotPaths, headers, connections: CONNECTIONS, seconds: 1 }); // warm-up
    const hotSeconds = loadSeconds(10);
    const hotLoad = await load({ url: service.url, paths: hotPaths, headers, connections: CONNECTIONS, seconds: hotSeconds });
    progress(`hot path, autocannon ${CONNECTIONS} conn: ${hotLoad.rps.toFixed(0)} req/s, p50 ${hotLoad.p50.toFixed(1)} ms, p99 ${hotLoad.p99.toFixed(1)} ms${hotLoad.problems ? `, ${hotLoad.problems}` : ''}`);

    const pgHot = (i: number) => pgdb.hourly(HOT[i % HOT.length]!, START, END);
    const pgSeq = await sequential(pgHot, PG_WARMUP, PG_RUNS);
    const pgSeconds = Math.min(hotSeconds, 5);
    const pgLoad = await concurrent(pgHot, CONNECTIONS, pgSeconds);
    progress(
      `hot path, PostgreSQL: sequential p50 ${pgSeq.p50.toFixed(1)} ms, p99 ${pgSeq.p99.toFixed(1)} ms; ${CONNECTIONS} in flight ${pgLoad.rate.toFixed(1)} queries/s, ` +
        `p50 ${pgLoad.p50.toFixed(0)} ms, p99 ${pgLoad.p99.toFixed(0)} ms; speed-up p50 ${(pgSeq.p50 / httpSeq.p50).toFixed(1)}×`,
    );

    // -- latest values vs /health --
    const latest = await api<{ timestamp: number; value: number }[]>(service, token, 'GET', `/rest/latest/point-values/latest/${xidOf(0)}`);
    const lastMinute = MINUTES - 1;
    if (latest.length !== 1 || latest[0]!.timestamp !== START + lastMinute * MINUTE_MS || latest[0]!.value !== Number(VALUE_TEXT[valueIndex(0, lastMinute)])) {
      throw new Error(`latest value of ${xidOf(0)}: ${JSON.stringify(latest)}`);
    }
    const latestPaths = HOT.map((p) => `/rest/latest/point-values/latest/${xidOf(p)}`);
    await load({ url: `${service.url}/health`, connections: CONNECTIONS, seconds: 1 });
    await load({ url: service.url, paths: latestPaths, headers, connections: CONNECTIONS, seconds: 1 });
    const healthLoad = await load({ url: `${service.url}/health`, connections: CONNECTIONS, seconds: Math.min(hotSeconds, 5) });
    const latestSeconds = loadSeconds(10);
    const latestLoad = await load({ url: service.url, paths: latestPaths, headers, connections: CONNECTIONS, seconds: latestSeconds });
    progress(
      `latest, autocannon ${CONNECTIONS} conn: ${latestLoad.rps.toFixed(0)} req/s, p50 ${latestLoad.p50.toFixed(2)} ms, p99 ${latestLoad.p99.toFixed(2)} ms` +
        `${latestLoad.problems ? ` (${latestLoad.problems})` : ''}; /health ${healthLoad.rps.toFixed(0)} req/s, p99 ${healthLoad.p99.toFixed(2)} ms; load average ${loadavg()[0]!.toFixed(2)}`,
    );

    // -- analytics: many points, random windows, rollups and raw values, vs the same queries on PostgreSQL --
    const analytics = analyticsQueries(seeded(0xa11a));
    const analyticsGet = async (i: number) => {
      const q = analytics[i % analytics.length]!;
      const path = q.kind === 'rollup' ? rollupPath(xidOf(q.point), q.from, q.to) : rawPath(xidOf(q.point), q.from, q.days);
      const res = await http(service!.url + path, 'GET', headers);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    };
    const analyticsPg = async (i: number) => {
      const q = analytics[i % analytics.length]!;
      await (q.kind === 'rollup' ? pgdb.hourly(q.point, q.from, q.to) : pgdb.raw(q.point, q.from, q.to));
    };
    const analyticsSeconds = loadSeconds(60);
    const serviceAnalytics = await concurrent(analyticsGet, ANALYTICS_CLIENTS, analyticsSeconds);
    const pgAnalytics = await concurrent(analyticsPg, ANALYTICS_CLIENTS, analyticsSeconds);
    progress(
      `analytics, ${ANALYTICS_CLIENTS} clients × ${analyticsSeconds} s, random points and 1-30 day windows, half hourly AVERAGE, half raw: ` +
        `service ${serviceAnalytics.rate.toFixed(1)} req/s, p50 ${serviceAnalytics.p50.toFixed(1)} ms, p99 ${serviceAnalytics.p99.toFixed(1)} ms; ` +
        `PostgreSQL ${pgAnalytics.rate.toFixed(1)} queries/s, p50 ${pgAnalytics.p50.toFixed(1)} ms, p99 ${pgAnalytics.p99.toFixed(1)} ms`,
    );

    // -- growth: two more spans of older history for a few points --
    const growthPaths = GROWTH.map((p) => rollupPath(xidOf(p)));
    const growthGet = async (i: number) => {
      const path = growthPaths[i % GROWTH.length]!;
      const res = await http(service!.url + path, 'GET', headers);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`);
      return res.text;
    };
    const before = await growthGet(0);
    const oneSpan = await sequential(growthGet, GROWTH.length, GROWTH_RUNS);
    const shared: Job[] = [];
    for (const p of GROWTH) shared.push(...pointJobs(p, -GROWTH_SPANS * MINUTES, 0));
    const growthQueues: Job[][] = Array.from({ length: CLIENTS }, () => []);
    shared.forEach((job, i) => growthQueues[i % CLIENTS]!.push(job));
    progress(`growth: loading ${fmtInt(shared.reduce((n, j) => n + j.n, 0))} older values (${GROWTH_SPANS} × ${DAYS} days before ${iso(START).slice(0, 10)}) for ${GROWTH.map(xidOf).join(', ')}`);
    const growthIngest = await ingest(service, token, growthQueues, 'growth');
    if ((await growthGet(0)) !== before) throw new Error(`${xidOf(0)}: the 1-year window changed after older history was added`);
    const threeSpans = await sequential(growthGet, GROWTH.length, GROWTH_RUNS);
    progress(
      `growth: ${fmtInt(growthIngest.rps)} values/s for the older batches; same window p50 ${oneSpan.p50.toFixed(2)} → ${threeSpans.p50.toFixed(2)} ms, ` +
        `p99 ${oneSpan.p99.toFixed(2)} → ${threeSpans.p99.toFixed(2)} ms; load average ${loadavg()[0]!.toFixed(2)}`,
    );

    const finalHwm = rssMiB(service.child.pid!, 'VmHWM');

    // -- figures --
    const B = 'historian';
    const speedUp = pgSeq.p50 / httpSeq.p50;
    const seqNote = `${HTTP_RUNS} sequential over ${HOT.length} points after ${HTTP_WARMUP_ROUNDS * HOT.length} warm-up, ${HOURS} hours each; PostgreSQL ${PG_RUNS} after ${PG_WARMUP}`;
    const loadNote = (r: LoadResult, seconds: number) => `${CONNECTIONS} conn, ${seconds} s, ${r.ok} ok${r.problems ? `; ${r.problems}` : ''}`;
    const growthNote = `${GROWTH.length} points, ${GROWTH_RUNS} sequential each; ${GROWTH_SPANS} older spans POSTed at ${fmtInt(growthIngest.rps)} values/s; target ratio ≤ ${TARGET.growthRatio}`;
    const coldNote = `each of ${POINTS} points read once after the service restarted (shuffled order), then once more`;
    const engineFigures: Figure[] = [
      figure(B, `cold: hourly AVERAGE over a year, p50 (${ENGINE})`, cold.p50, 'ms', 'warm HTTP p50, sequential', httpSeq.p50,
        `${coldNote}; target ≤ 3×: ${met(cold.p50 <= 3 * httpSeq.p50)}`),
      figure(B, `cold: hourly AVERAGE over a year, p99 (${ENGINE})`, cold.p99, 'ms', 'the same reads again, p99', yearReads.warm.p99, coldNote),
      figure(B, 'cold: raw values of one day, p50', dayReads.cold.p50, 'ms', 'the same reads again, p50', dayReads.warm.p50, `${coldNote}; 1,440 values; target ≤ 3 ms: ${met(dayReads.cold.p50 <= 3)}`),
      figure(B, 'cold: raw values of one day, p99', dayReads.cold.p99, 'ms', 'the same reads again, p99', dayReads.warm.p99, coldNote),
      figure(B, `cold: ${csvDays} days of raw values as CSV, p50`, csvRate(csvReads.cold.p50), 'values/s', 'the same reads again, p50', csvRate(csvReads.warm.p50),
        `${coldNote}; ${fmtInt(csvDays * 1440)} values each; p99 ${fmtInt(csvRate(csvReads.cold.p99))} values/s; target ≥ 1,000,000: ${met(csvRate(csvReads.cold.p50) >= 1e6)}`),
      figure(B, `analytics: throughput, ${ANALYTICS_CLIENTS} clients`, serviceAnalytics.rate, 'req/s', `PostgreSQL row table, same queries, ${ANALYTICS_CLIENTS} in flight`, pgAnalytics.rate,
        `${analyticsSeconds} s each; any of ${POINTS} points, windows of 1-30 days, half hourly AVERAGE, half raw JSON; ${serviceAnalytics.runs} requests, PostgreSQL ${pgAnalytics.runs} queries`),
      figure(B, 'analytics: p50', serviceAnalytics.p50, 'ms', 'PostgreSQL p50', pgAnalytics.p50),
      figure(B, 'analytics: p99', serviceAnalytics.p99, 'ms', 'PostgreSQL p99', pgAnalytics.p99),
      figure(B, 'ingest: service event-loop delay p99 (worst second)', ing.loop.p99Worst, 'ms', 'the idle service, same scrape', idleLoop.p99Median,
        `prom-client nodejs_eventloop_lag_* scraped every second during the ingest (${ing.loop.samples} samples): median p99 ${ing.loop.p99Median.toFixed(1)} ms, longest delay ${ing.loop.max.toFixed(1)} ms`),
    ];
    if (sampleBy) {
      engineFigures.push(
        figure(B, 'hot path vs QuestDB SAMPLE BY: cold p50', cold.p50, 'ms', 'QuestDB SAMPLE BY 1h avg, first query per point', sampleBy.cold.p50,
          `our time-weighted hourly AVERAGE over HTTP after a service restart vs SELECT avg(value) … SAMPLE BY 1h over PG-wire, each of the same ${POINTS} points once; target ratio < 1: ${met(cold.p50 < sampleBy.cold.p50)}`),
        figure(B, 'hot path vs QuestDB SAMPLE BY: warm p50', httpSeq.p50, 'ms', 'QuestDB SAMPLE BY 1h avg, repeated', sampleBy.warm.p50,
          `${SAMPLE_BY_RUNS} repeats per point for SAMPLE BY over the hot path's ${HOT.length} points; target ratio < 1: ${met(httpSeq.p50 < sampleBy.warm.p50)}`),
      );
    }
    if (bareIlp) {
      engineFigures.push(
        figure(B, 'ingest: QuestDB service vs bare ILP writer (same run)', ing.rps, 'values/s', 'bare ILP/HTTP client into a table of the service\'s shape', bareIlp.rps,
          `same values, ${CLIENTS} clients, batches of ${fmtInt(BATCH)}, answered = committed; the service also writes hourly rows and keeps reads exact; target ratio ≥ 0.5: ${met(ing.rps >= 0.5 * bareIlp.rps)}`),
      );
    }
    if (duckIngest) {
      engineFigures.push(
        figure(B, `ingest: ${SERVER_ENGINE} vs DuckDB (same run)`, ing.rps, 'values/s', 'DuckDB service, same data and clients', duckIngest.rps,
          `target ratio ≥ 0.5: ${met(ing.rps >= 0.5 * duckIngest.rps)}; ${SERVER_ENGINE} service CPU ${ing.serviceCpuSeconds.toFixed(0)} s (${SERVER_ENGINE}'s own CPU not counted), DuckDB service CPU ${duckIngest.serviceCpuSeconds.toFixed(0)} s`),
      );
    }
    return [
      ...engineFigures,
      ...ingestFigures(ing, copyRate, pgdb.copyRows, idleRss, finalHwm),
      figure(B, 'hot path: HTTP p50, sequential', httpSeq.p50, 'ms', 'PostgreSQL SQL p50, sequential', pgSeq.p50,
        `${seqNote}; speed-up ${speedUp.toFixed(1)}× (target ≥ ${TARGET.speedUp}×: ${met(speedUp >= TARGET.speedUp)}); target p50 ≤ ${TARGET.p50Ms} ms: ${met(httpSeq.p50 <= TARGET.p50Ms)}`),
      figure(B, 'hot path as Arrow: HTTP p50, sequential (warm)', arrowSeq.p50, 'ms', 'PostgreSQL SQL p50, sequential', pgSeq.p50,
        `${seqNote}; Accept: ${ARROW}; speed-up ${(pgSeq.p50 / arrowSeq.p50).toFixed(1)}× (target ≥ 100×: ${met(pgSeq.p50 / arrowSeq.p50 >= 100)}); JSON p50 ${httpSeq.p50.toFixed(2)} ms`),
      figure(B, 'hot path as Arrow: cold p50', arrowYearReads.cold.p50, 'ms', 'warm Arrow p50, sequential', arrowSeq.p50,
        `${coldNote}; target ≤ 3×: ${met(arrowYearReads.cold.p50 <= 3 * arrowSeq.p50)}`),
      figure(B, 'hot path: HTTP p99, sequential', httpSeq.p99, 'ms', 'PostgreSQL SQL p99, sequential', pgSeq.p99,
        `${seqNote}; speed-up ${(pgSeq.p99 / httpSeq.p99).toFixed(1)}×; target p99 ≤ ${TARGET.p99Ms} ms: ${met(httpSeq.p99 <= TARGET.p99Ms)}`),
      figure(B, `hot path: throughput, ${CONNECTIONS} conn`, hotLoad.rps, 'req/s', `PostgreSQL queries/s, ${CONNECTIONS} in flight`, pgLoad.rate, `${loadNote(hotLoad, hotSeconds)}; PostgreSQL ${pgLoad.runs} queries in ${pgSeconds} s`),
      figure(B, `hot path: p50, ${CONNECTIONS} conn`, hotLoad.p50, 'ms', `PostgreSQL p50, ${CONNECTIONS} in flight`, pgLoad.p50, `${loadNote(hotLoad, hotSeconds)}; target p50 ≤ ${TARGET.p50Ms} ms: ${met(hotLoad.p50 <= TARGET.p50Ms)}`),
      figure(B, `hot path: p99, ${CONNECTIONS} conn`, hotLoad.p99, 'ms', `PostgreSQL p99, ${CONNECTIONS} in flight`, pgLoad.p99, `${loadNote(hotLoad, hotSeconds)}; target p99 ≤ ${TARGET.p99Ms} ms: ${met(hotLoad.p99 <= TARGET.p99Ms)}`),
      figure(B, `latest: throughput, ${CONNECTIONS} conn`, latestLoad.rps, 'req/s', 'GET /health req/s', healthLoad.rps,
        `${loadNote(latestLoad, latestSeconds)}; ${HOT.length} points in turn; target ≥ ${fmtInt(TARGET.latestRps)}: ${met(latestLoad.rps >= TARGET.latestRps)}`),
      figure(B, `latest: p99, ${CONNECTIONS} conn`, latestLoad.p99, 'ms', 'GET /health p99', healthLoad.p99,
        `p50 ${latestLoad.p50.toFixed(2)} ms (/health ${healthLoad.p50.toFixed(2)} ms); target p99 ≤ ${TARGET.latestP99Ms} ms: ${met(latestLoad.p99 <= TARGET.latestP99Ms)}`),
      figure(B, `growth: p50 with ${GROWTH_SPANS + 1}× history`, threeSpans.p50, 'ms', 'p50 with 1× history, same points and window', oneSpan.p50,
        `${growthNote}: ${met(threeSpans.p50 / oneSpan.p50 <= TARGET.growthRatio)}`),
      figure(B, `growth: p99 with ${GROWTH_SPANS + 1}× history`, threeSpans.p99, 'ms', 'p99 with 1× history, same points and window', oneSpan.p99, growthNote),
    ];
  } finally {
    await service?.stop();
    await pgdb.close();
    if (QUESTDB) await dropQuestDbTables(QUESTDB).catch(() => undefined);
    if (PG_VALUES) await dropSchema(PG_VALUES.schema).catch(() => undefined);
    agent.destroy();
  }
}

export const historian: Benchmark = {
  name: 'historian',
  description: `POST /point-values (${fmtInt(TOTAL)} values) on ${ENGINE}, hourly AVERAGE over ${DAYS} d (cold and warm) vs PostgreSQL SQL${QUESTDB ? ' and QuestDB SAMPLE BY' : ''}, growth, latest vs /health`,
  run,
};

// Run directly: node --import tsx bench/historian.ts
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildIfNeeded();
  console.log(`## ${historian.name}: ${historian.description}`);
  const figures = await historian.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
