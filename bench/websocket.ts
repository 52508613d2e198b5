// WebSocket fan-out (issue 5): 1,000 points, 10,000 value updates/s, 1,000 subscribed clients.
// - The service runs as a child process (dist/, embedded engines, rate limits off). 1,000 NUMERIC
//   points on a disabled VIRTUAL source (nothing but the bulk POSTs produces values).
// - Updates: every 100 ms one POST /rest/latest/point-values of 1,000 values, one per point (10,000
//   values/s), Bearer JWT, at most 4 POSTs in flight (a late tick is skipped and counted). Each value
//   IS its send time (epoch ms with a fractional part, taken just before the POST), so every client
//   computes delivery latency from its own clock: POST → durable write → bus → fan-out → client.
// - Fan-out run: 1,000 WebSocket clients (Bearer), each subscribed to 10 points for UPDATE, so each
//   point has 10 subscribers and the service owes 100,000 messages/s.
// - Baseline, same run, same load: 1 client subscribed to all 1,000 points (10,000 messages/s): the
//   same ingest → delivery path without fan-out.
// - Latency is measured twice: end to end from the POST's send time, and from the moment its answer
//   arrived (the service answers once the values are durable and published on the bus), which is
//   the fan-out's own share. Negative: the message arrived before the POST's answer did.
// Figures: delivered messages/s, p50/p99 delivery latency (target p99 ≤ 50 ms), the service's peak
// RSS (/proc/<pid>/status, sampled every 250 ms). Clients, load and measurement share this one
// process: its event-loop delay is part of the measured latency (the note says how busy it was).
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
import { startSeededService, type BenchService } from './lib/server.js';
import { sleep } from './lib/stats.js';

const POINTS = 1_000;
const CLIENTS = 1_000;
const POINTS_PER_CLIENT = 10;
const TICK_MS = 100;
const MAX_IN_FLIGHT = 4;
const WARM_UP_MS = 2_000;
const DRAIN_MS = 1_500;
const API = '/rest/latest';

const now = () => performance.timeOrigin + performance.now();

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

/** Send and arrival times of the UPDATEs whose value (send time) falls in the measured window. */
class Recorder {
  sent: Float64Array = new Float64Array(1 << 20);
  arrived: Float64Array = new Float64Array(1 << 20);
  count = 0;
  closedEarly = 0;
  from = Infinity;
  to = Infinity;
  /** POST send time → when its answer arrived. */
  readonly answered = new Map<number, number>();

  record(sentAt: number): void {
    if (sentAt < this.from || sentAt >= this.to) return;
    if (this.count === this.sent.length) {
      this.sent = grow(this.sent);
      this.arrived = grow(this.arrived);
    }
    this.sent[this.count] = sentAt;
    this.arrived[this.count++] = now();
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

/** Opens a client subscribed (UPDATE) to the given points; resolves once every REGISTERED arrived. */
function openClient(ctx: Ctx, xids: readonly string[], rec: Recorder): Promise<WebSocket> {
  const ws = new WebSocket(`${ctx.service.url.replace(/^http/, 'ws')}${API}/websocket/point-value`, {
    headers: { authorization: `Bearer ${ctx.token}` },
    perMessageDeflate: false,
  });
  return new Promise((resolve, reject) => {
    let registered = 0;
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { status: string; payload: { event?: string; value?: { value: number } | null; message?: string } };
      if (m.status !== 'OK') return reject(new Error(`subscription failed: ${m.payload.message}`));
      if (m.payload.event === 'UPDATE') rec.record(m.payload.value!.value);
      else if (m.payload.event === 'REGISTERED' && ++registered === xids.length) resolve(ws);
    });
    ws.once('open', () => {
      for (const xid of xids) ws.send(JSON.stringify({ xid, eventTypes: ['UPDATE'] }));
    });
    ws.once('error', reject);
    ws.once('close', (code) => {
      if (code !== 1000 && code !== 1005) rec.closedEarly++;
      reject(new Error(`socket closed (${code}) before its subscriptions were registered`));
    });
  });
}

interface LoadStats {
  posted: number;
  skipped: number;
  failed: number;
}

/** Posts one value per point every TICK_MS until `until` (epoch ms); each value is its send time. */
async function drive(ctx: Ctx, until: number, rec: Recorder): Promise<LoadStats> {
  const stats: LoadStats = { posted: 0, skipped: 0, failed: 0 };
  let inFlight = 0;
  let lastTs = 0;
  const pending = new Set<Promise<void>>();
  for (let tick = now(); tick < until; tick += TICK_MS) {
    const wait = tick - now();
    if (wait > 0) await sleep(wait);
    if (inFlight >= MAX_IN_FLIGHT) {
      stats.skipped++;
      continue;
    }
    const ts = (lastTs = Math.max(lastTs + 1, Math.floor(now())));
    const sentAt = now();
    const body = '[' + ctx.xids.map((xid) => `{"xid":"${xid}","value":${sentAt},"timestamp":${ts}}`).join(',') + ']';
    inFlight++;
    const p = fetch(`${ctx.service.url}${API}/point-values`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' },
      body,
    })
      .then(async (res) => {
        await res.arrayBuffer();
        rec.answered.set(sentAt, now());
        if (res.status === 200) stats.posted += ctx.xids.length;
        else stats.failed++;
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

interface RunResult {
  messagesPerSecond: number;
  p50: number;
  p99: number;
  /** From the POST's answer (values durable and published) to arrival. */
  fanOutP50: number;
  fanOutP99: number;
  rssPeakMiB: number;
  valuesPerSecond: number;
  note: string;
}

/** Connects the clients, drives the load, and measures what arrived. */
async function run(ctx: Ctx, label: string, subscriptions: readonly (readonly string[])[], seconds: number): Promise<RunResult> {
  const rec = new Recorder();
  const sockets: WebSocket[] = [];
  for (let i = 0; i < subscriptions.length; i += 50) {
    sockets.push(...(await Promise.all(subscriptions.slice(i, i + 50).map((xids) => openClient(ctx, xids, rec)))));
  }
  const subscribers = subscriptions.reduce((n, s) => n + s.length, 0) / POINTS;
  progress(`${label}: ${sockets.length} client(s) subscribed, ${subscribers} subscriber(s) per point`);

  const pid = ctx.service.child.pid!;
  let rssPeak = rssMiB(pid);
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(pid))), 250);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const start = now();
  rec.from = start + WARM_UP_MS;
  rec.to = start + WARM_UP_MS + seconds * 1000;
  loop.enable();
  const stats = await drive(ctx, rec.to, rec);
  await sleep(DRAIN_MS);
  loop.disable();
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, rssMiB(pid));
  for (const ws of sockets) ws.close(1000);

  const windowS = (rec.to - rec.from) / 1000;
  const expected = Math.round(((stats.posted * (windowS / (windowS + WARM_UP_MS / 1000))) * subscribers) / windowS);
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
    note: `${sockets.length} client(s), ${subscribers}/point, ${seconds} s; ~${expected.toLocaleString('en-US')} msg/s owed; ${stats.skipped} ticks skipped, ${stats.failed} POSTs failed, ${rec.closedEarly} sockets closed early; client loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms`,
  };
  progress(
    `${label}: ${result.messagesPerSecond.toFixed(0)} msg/s delivered, latency from the POST p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ` +
      `from its answer p50 ${result.fanOutP50.toFixed(1)} ms, p99 ${result.fanOutP99.toFixed(1)} ms, ` +
      `service RSS peak ${result.rssPeakMiB.toFixed(0)} MiB, ${result.valuesPerSecond.toFixed(0)} values/s posted; ${result.note}`,
  );
  await sleep(500);
  return result;
}

export const websocketBench: Benchmark = {
  name: 'websocket',
  description: `WebSocket fan-out: ${CLIENTS} clients × ${POINTS_PER_CLIENT} of ${POINTS} points, 10,000 values/s, vs 1 client on all points`,
  async run(): Promise<Figure[]> {
    const service = await startSeededService({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'warn' });
    try {
      const session = await login(service.url);
      const token = await createToken(service.url, session);
      const ctx: Ctx = { service, token, xids: [] };
      ctx.xids = await createPoints(ctx);
      progress(`${POINTS} points created; RSS ${rssMiB(service.child.pid!).toFixed(0)} MiB`);
      const seconds = loadSeconds(10);
      const single = await run(ctx, '1 client, all points (baseline)', [ctx.xids], seconds);
      const fanOut = await run(
        ctx,
        `${CLIENTS} clients`,
        Array.from({ length: CLIENTS }, (_, c) => Array.from({ length: POINTS_PER_CLIENT }, (_, k) => ctx.xids[(c * POINTS_PER_CLIENT + k) % POINTS]!)),
        seconds,
      );
      const baseline = '1 client subscribed to all 1,000 points, same load';
      return [
        figure('websocket', 'fan-out delivered messages/s', fanOut.messagesPerSecond, 'msg/s', baseline, single.messagesPerSecond, fanOut.note),
        figure('websocket', 'delivery latency p50, from the POST', fanOut.p50, 'ms', baseline, single.p50),
        figure('websocket', 'delivery latency p99, from the POST (target ≤ 50)', fanOut.p99, 'ms', baseline, single.p99, `baseline: ${single.note}`),
        figure('websocket', 'delivery latency p50, from the POST answer', fanOut.fanOutP50, 'ms', baseline, single.fanOutP50),
        figure('websocket', 'delivery latency p99, from the POST answer (target ≤ 50)', fanOut.fanOutP99, 'ms', baseline, single.fanOutP99, 'the fan-out share: values are durable and published when the answer leaves; negative = before the answer arrived'),
        figure('websocket', 'fan-out service RSS peak', fanOut.rssPeakMiB, 'MiB', baseline, single.rssPeakMiB),
      ];
    } finally {
      await service.stop();
    }
  },
};
