// WebSocket fan-out (issues 5 and 14): 1,000 points, 1,000 subscribed clients, at 2,000 and 5,000 values/s.
// - The service runs as a child process (dist/, embedded engines, rate limits off). 1,000 NUMERIC
//   points on a disabled VIRTUAL source (nothing but the bulk POSTs produces values).
// - Updates: one POST of 1,000 values (one per point) every 500 ms (2,000 values/s) or 200 ms (5,000),
//   Bearer JWT, at most 4 POSTs in flight (a late tick is skipped and counted). Each value IS its send
//   time (epoch ms with a fractional part, taken just before the POST), so every client computes
//   delivery latency from its own clock: POST → durable write → bus → fan-out → client.
// - 1,000 WebSocket clients (Bearer), each subscribed to 10 points for UPDATE: each point has 10
//   subscribers, so the service owes 20,000 or 50,000 messages/s.
// - Baseline, same run, same clients and load: a bare `ws` broadcast server (lib/bare-ws.ts, a process
//   of its own) that parses the same POST body and sends each value to its subscribers.
// - Every owed message is accounted for: delivered, not delivered to a socket the server closed with a
//   code that says why (1013: slow consumer), or lost silently (a socket that stayed open and missed it;
//   target 0). A run ends once nothing has arrived for 1 s, so queued messages are not counted lost.
// - Latency is measured twice: end to end from the POST's send time, and from the moment its answer
//   arrived (the service answers once the values are durable and published on the bus), which is
//   the fan-out's own share.
// Figures: delivered messages/s, p50/p99 delivery latency, messages lost silently, the server's peak RSS
// (/proc/<pid>/status, sampled every 250 ms). Clients, load and measurement share this one process:
// its event-loop delay is part of the measured latency (the note says how busy it was).
//   npm run bench -- websocket
//   BENCH_SECONDS=5 npm run bench -- websocket       (shorter load runs)
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { createToken, login } from './lib/api.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { loadSeconds } from './lib/load.js';
import { figure, type Figure } from './lib/report.js';
import { join } from 'node:path';
import { projectRoot } from '../src/paths.js';
import { freePort, spawnUntilReady, startSeededService, tempDir, type BenchService, type Spawned } from './lib/server.js';
import { sleep } from './lib/stats.js';

const POINTS = 1_000;
const CLIENTS = 1_000;
const POINTS_PER_CLIENT = 10;
const MAX_IN_FLIGHT = 4;
const WARM_UP_MS = 2_000;
/** The run ends once no message has arrived for this long (at most MAX_DRAIN_MS after the last POST). */
const DRAIN_MS = 1_000;
const MAX_DRAIN_MS = 15_000;
/** Values per second posted in the runs (1,000 per POST, one per point, every 1,000/rate s). */
const RATES = [2_000, 5_000] as const;
const API = '/rest/latest';

const now = () => performance.timeOrigin + performance.now();

/** Where the clients subscribe and the load is posted: the service, or the bare `ws` server. */
interface Target {
  name: string;
  wsUrl: string;
  postUrl: string;
  headers: Record<string, string>;
  /** The process serving it, for its RSS. */
  pid: number;
}

interface Ctx {
  service: BenchService;
  token: string;
  xids: string[];
}

async function api(ctx: Pick<Ctx, 'service' | 'token'>, method: string, path: string, body: unknown): Promise<Response> {
  return fetch(ctx.service.url + API + path, {
    method,
    headers: { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function createPoints(ctx: Pick<Ctx, 'service' | 'token'>): Promise<string[]> {
  const ds = await api(ctx, 'POST', '/data-sources', { xid: 'bench-ws-src', name: 'WebSocket bench', modelType: 'VIRTUAL', enabled: false });
  if (ds.status !== 201) throw new Error(`data source: ${ds.status} ${await ds.text()}`);
  const xids = Array.from({ length: POINTS }, (_, i) => `bench-ws-${i}`);
  for (let i = 0; i < xids.length; i += 20) {
    await Promise.all(
      xids.slice(i, i + 20).map(async (xid) => {
        const body = { xid, name: xid, dataSourceXid: 'bench-ws-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } };
        const res = await api(ctx, 'POST', '/data-points', body);
        if (res.status !== 201) throw new Error(`data point ${xid}: ${res.status} ${await res.text()}`);
      }),
    );
  }
  return xids;
}

/** One client's tally: UPDATEs received for values sent in the window, and how its socket ended. */
interface ClientTally {
  points: number;
  received: number;
  /** The close code if the socket closed before the run ended it (1013: slow consumer). */
  closedWith?: number;
}

/** Send and arrival times of the UPDATEs whose value (send time) falls in the measured window. */
class Recorder {
  sent: Float64Array = new Float64Array(1 << 20);
  arrived: Float64Array = new Float64Array(1 << 20);
  count = 0;
  lastArrival = 0;
  from = Infinity;
  to = Infinity;
  /** POST send time → when its answer arrived. */
  readonly answered = new Map<number, number>();
  /** Send times of the POSTs answered 200 within the window: each owes one message per subscription. */
  readonly owed = new Set<number>();

  record(sentAt: number, tally: ClientTally): void {
    this.lastArrival = now();
    if (sentAt < this.from || sentAt >= this.to) return;
    tally.received++;
    if (this.count === this.sent.length) {
      this.sent = grow(this.sent);
      this.arrived = grow(this.arrived);
    }
    this.sent[this.count] = sentAt;
    this.arrived[this.count++] = this.lastArrival;
  }

  /** Latencies from the send (`from: 'send'`) or from the POST's answer. */
  latencies(from: 'send' | 'answer'): Float64Array {
    const out = new Float64Array(this.count);
    for (let i = 0; i < this.count; i++) {
      const start = from === 'send' ? this.sent[i]! : (this.answered.get(this.sent[i]!) ?? NaN);
      out[i] = this.arrived[i]! - start;
    }
    return out.sort();
  }
}

function grow(a: Float64Array): Float64Array {
  const bigger = new Float64Array(a.length * 2);
  bigger.set(a);
  return bigger;
}

function quantile(sorted: Float64Array, q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

const UPDATE_VALUE = '"event":"UPDATE","value":{"dataType":"NUMERIC","value":';

/**
 * The value (its send time) of an UPDATE, read without parsing the whole message; NaN for any
 * other message, which is parsed. The clients share this process with the load and the measurement:
 * a JSON.parse per message was a third of its busy time (CPU profile, 50,000 messages/s), delay
 * measured as the server's. Both servers send the same UPDATE text (lib/bare-ws.ts).
 */
function updateValue(text: string): number {
  if (!text.startsWith('{"status":"OK"')) return NaN;
  const at = text.indexOf(UPDATE_VALUE);
  return at < 0 ? NaN : parseFloat(text.slice(at + UPDATE_VALUE.length, at + UPDATE_VALUE.length + 32));
}

/** Opens a client subscribed (UPDATE) to the given points; resolves once every REGISTERED arrived. */
function openClient(target: Target, xids: readonly string[], rec: Recorder, tally: ClientTally): Promise<WebSocket> {
  const ws = new WebSocket(target.wsUrl, { headers: target.headers, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    let registered = 0;
    ws.on('message', (data) => {
      const text = data.toString();
      const sentAt = updateValue(text);
      if (!Number.isNaN(sentAt)) return rec.record(sentAt, tally);
      const m = JSON.parse(text) as { status: string; payload: { event?: string; value?: { value: number } | null; message?: string } };
      if (m.status !== 'OK') return reject(new Error(`subscription failed: ${m.payload.message}`));
      if (m.payload.event === 'UPDATE') rec.record(m.payload.value!.value, tally);
      else if (m.payload.event === 'REGISTERED' && ++registered === xids.length) resolve(ws);
    });
    ws.once('open', () => {
      for (const xid of xids) ws.send(JSON.stringify({ xid, eventTypes: ['UPDATE'] }));
    });
    ws.once('error', reject);
    ws.once('close', (code) => {
      tally.closedWith = code;
      reject(new Error(`socket closed (${code}) before its subscriptions were registered`));
    });
  });
}

interface LoadStats {
  posted: number;
  skipped: number;
  failed: number;
}

/** Posts one value per point every `tickMs` until `until` (epoch ms); each value is its send time. */
async function drive(target: Target, xids: readonly string[], tickMs: number, until: number, rec: Recorder): Promise<LoadStats> {
  const stats: LoadStats = { posted: 0, skipped: 0, failed: 0 };
  let inFlight = 0;
  let lastTs = 0;
  const pending = new Set<Promise<void>>();
  for (let tick = now(); tick < until; tick += tickMs) {
    const wait = tick - now();
    if (wait > 0) await sleep(wait);
    if (inFlight >= MAX_IN_FLIGHT) {
      stats.skipped++;
      continue;
    }
    const ts = (lastTs = Math.max(lastTs + 1, Math.floor(now())));
    const sentAt = now();
    const body = '[' + xids.map((xid) => `{"xid":"${xid}","value":${sentAt},"timestamp":${ts}}`).join(',') + ']';
    inFlight++;
    const p = fetch(target.postUrl, { method: 'POST', headers: { ...target.headers, 'content-type': 'application/json' }, body })
      .then(async (res) => {
        await res.arrayBuffer();
        rec.answered.set(sentAt, now());
        if (res.status !== 200) return void stats.failed++;
        stats.posted += xids.length;
        if (sentAt >= rec.from && sentAt < rec.to) rec.owed.add(sentAt);
      })
      .catch(() => void stats.failed++)
      .finally(() => {
        inFlight--;
        pending.delete(p);
      });
    pending.add(p);
  }
  await Promise.all(pending);
  return stats;
}

function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Where the owed messages went: delivered, not delivered to a client told so by a close code, or lost. */
interface Delivery {
  owed: number;
  delivered: number;
  /** Not delivered, on sockets the server closed with a code saying why (code → messages). */
  told: Map<number, number>;
  closedSockets: Map<number, number>;
  /** Not delivered to sockets that stayed open: lost without a word. */
  lostSilently: number;
}

function account(tallies: readonly ClientTally[], owedTicks: number): Delivery {
  const d: Delivery = { owed: 0, delivered: 0, told: new Map(), closedSockets: new Map(), lostSilently: 0 };
  for (const t of tallies) {
    const owed = t.points * owedTicks;
    d.owed += owed;
    d.delivered += Math.min(t.received, owed);
    const missing = Math.max(0, owed - t.received);
    if (t.closedWith === undefined) {
      d.lostSilently += missing;
    } else {
      d.told.set(t.closedWith, (d.told.get(t.closedWith) ?? 0) + missing);
      d.closedSockets.set(t.closedWith, (d.closedSockets.get(t.closedWith) ?? 0) + 1);
    }
  }
  return d;
}

const byCode = (m: ReadonlyMap<number, number>) => [...m].map(([code, n]) => `${n.toLocaleString('en-US')} (${code})`).join(', ') || '0';

interface RunResult {
  messagesPerSecond: number;
  p50: number;
  p99: number;
  /** From the POST's answer (values durable and published) to arrival. */
  fanOutP50: number;
  fanOutP99: number;
  rssPeakMiB: number;
  valuesPerSecond: number;
  delivery: Delivery;
  note: string;
}

/** Connects the clients, drives the load at `valuesPerSecond`, and measures what arrived and what did not. */
async function run(
  target: Target,
  xids: readonly string[],
  label: string,
  subscriptions: readonly (readonly string[])[],
  seconds: number,
  valuesPerSecond: number,
): Promise<RunResult> {
  const rec = new Recorder();
  const sockets: WebSocket[] = [];
  const tallies = subscriptions.map((s): ClientTally => ({ points: s.length, received: 0 }));
  for (let i = 0; i < subscriptions.length; i += 50) {
    const batch = subscriptions.slice(i, i + 50).map((s, k) => openClient(target, s, rec, tallies[i + k]!));
    sockets.push(...(await Promise.all(batch)));
  }
  const subscribers = subscriptions.reduce((n, s) => n + s.length, 0) / POINTS;
  progress(`${label}: ${sockets.length} client(s) subscribed, ${subscribers} subscriber(s) per point`);

  let rssPeak = rssMiB(target.pid);
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(target.pid))), 250);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const start = now();
  rec.from = start + WARM_UP_MS;
  rec.to = start + WARM_UP_MS + seconds * 1000;
  loop.enable();
  const stats = await drive(target, xids, (POINTS / valuesPerSecond) * 1000, rec.to, rec);
  // Drained once nothing has arrived for DRAIN_MS (messages still queued are not counted lost early).
  const drainUntil = now() + MAX_DRAIN_MS;
  while (now() - rec.lastArrival < DRAIN_MS && now() < drainUntil) await sleep(100);
  loop.disable();
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, rssMiB(target.pid));
  for (const ws of sockets) ws.close(1000);

  const windowS = (rec.to - rec.from) / 1000;
  const delivery = account(tallies, rec.owed.size);
  const endToEnd = rec.latencies('send');
  const fromAnswer = rec.latencies('answer');
  const result: RunResult = {
    messagesPerSecond: rec.count / windowS,
    p50: quantile(endToEnd, 0.5),
    p99: quantile(endToEnd, 0.99),
    fanOutP50: quantile(fromAnswer, 0.5),
    fanOutP99: quantile(fromAnswer, 0.99),
    rssPeakMiB: rssPeak,
    valuesPerSecond: stats.posted / (windowS + WARM_UP_MS / 1000),
    delivery,
    note:
      `${sockets.length} client(s), ${subscribers}/point, ${valuesPerSecond.toLocaleString('en-US')} values/s, ${seconds} s; ` +
      `${delivery.owed.toLocaleString('en-US')} messages owed, ${delivery.delivered.toLocaleString('en-US')} delivered, ` +
      `undelivered to sockets closed with a code: ${byCode(delivery.told)} (sockets: ${byCode(delivery.closedSockets)}), lost silently: ${delivery.lostSilently}; ` +
      `${stats.skipped} ticks skipped, ${stats.failed} POSTs failed; client loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms`,
  };
  progress(
    `${label}: ${result.messagesPerSecond.toFixed(0)} msg/s delivered, latency from the POST p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ` +
      `from its answer p50 ${result.fanOutP50.toFixed(1)} ms, p99 ${result.fanOutP99.toFixed(1)} ms, ` +
      `RSS peak ${result.rssPeakMiB.toFixed(0)} MiB, ${result.valuesPerSecond.toFixed(0)} values/s posted; ${result.note}`,
  );
  await sleep(500);
  return result;
}

/** The bare `ws` broadcast server (lib/bare-ws.ts) in a child process. */
async function startBareWs(): Promise<Spawned & { target: Target }> {
  const port = await freePort();
  const logFile = join(await tempDir('dds-bench-ws-'), 'bare-ws.log');
  const spawned = await spawnUntilReady(process.execPath, ['--import', 'tsx', join(projectRoot, 'bench', 'lib', 'bare-ws.ts'), String(port)], {}, `http://127.0.0.1:${port}/`, logFile);
  return { ...spawned, target: { name: 'bare ws', wsUrl: `ws://127.0.0.1:${port}/`, postUrl: `http://127.0.0.1:${port}/`, headers: {}, pid: spawned.child.pid! } };
}

function fanOutSubscriptions(xids: readonly string[]): string[][] {
  return Array.from({ length: CLIENTS }, (_, c) => Array.from({ length: POINTS_PER_CLIENT }, (_, k) => xids[(c * POINTS_PER_CLIENT + k) % POINTS]!));
}

export const websocketBench: Benchmark = {
  name: 'websocket',
  description: `WebSocket fan-out: ${CLIENTS} clients × ${POINTS_PER_CLIENT} of ${POINTS} points at ${RATES.join(' and ')} values/s, vs a bare ws broadcast server`,
  async run(): Promise<Figure[]> {
    const bare = await startBareWs();
    const service = await startSeededService({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'warn' });
    try {
      const session = await login(service.url);
      const token = await createToken(service.url, session);
      const ctx: Ctx = { service, token, xids: [] };
      ctx.xids = await createPoints(ctx);
      progress(`${POINTS} points created; RSS ${rssMiB(service.child.pid!).toFixed(0)} MiB`);
      const own: Target = {
        name: 'service',
        wsUrl: `${service.url.replace(/^http/, 'ws')}${API}/websocket/point-value`,
        postUrl: `${service.url}${API}/point-values`,
        headers: { authorization: `Bearer ${token}` },
        pid: service.child.pid!,
      };
      const seconds = loadSeconds(10);
      const subscriptions = fanOutSubscriptions(ctx.xids);
      const out: Figure[] = [];
      for (const rate of RATES) {
        const floor = await run(bare.target, ctx.xids, `bare ws, ${rate} values/s`, subscriptions, seconds, rate);
        const ours = await run(own, ctx.xids, `service, ${rate} values/s`, subscriptions, seconds, rate);
        const baseline = `bare ws broadcast server, same clients and load`;
        const at = `${rate.toLocaleString('en-US')} values/s`;
        out.push(
          figure('websocket', `${at}: delivered messages/s`, ours.messagesPerSecond, 'msg/s', baseline, floor.messagesPerSecond, ours.note),
          figure('websocket', `${at}: delivery latency p50, from the POST`, ours.p50, 'ms', baseline, floor.p50),
          figure('websocket', `${at}: delivery latency p99, from the POST`, ours.p99, 'ms', baseline, floor.p99, `baseline: ${floor.note}`),
          figure('websocket', `${at}: delivery latency p99, from the POST answer`, ours.fanOutP99, 'ms', baseline, floor.fanOutP99, 'the fan-out share: values are durable and published when the answer leaves'),
          figure('websocket', `${at}: messages lost silently (target 0)`, ours.delivery.lostSilently, 'msgs', baseline, floor.delivery.lostSilently, `undelivered but told (close code): ${byCode(ours.delivery.told)}`),
          figure('websocket', `${at}: service RSS peak`, ours.rssPeakMiB, 'MiB', baseline, floor.rssPeakMiB),
        );
      }
      return out;
    } finally {
      await service.stop();
      await bare.stop();
    }
  },
};
