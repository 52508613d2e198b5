// Line-protocol ingest (issue 27): 20 points × 1 year at 1-minute spacing (10,512,000 values, as the
// historian bench's shape) written through POST /rest/latest/api/v2/write in bodies of 10,000 lines
// (500 minutes × 20 points, the way a gateway batches), from 2 concurrent clients, each sending its
// next body once the previous one was answered (204: durable and readable). The service's RSS is
// sampled from /proc every 100 ms. Baseline, in the same run: PostgreSQL COPY of the same rows into
// a row table (series_id, ts, value) with PRIMARY KEY (series_id, ts), one connection.
// Goal: ingest ≥ 2× COPY, RSS ≤ 1.5 GB. Also the parser alone (core/line-protocol.ts) against the
// 2 M lines/s goal, with JSON.parse of the same values as bulk-ingest JSON beside it.
//   npm run bench -- line-protocol
//   node --import tsx bench/line-protocol.ts        (this benchmark alone)
//   BENCH_LP_DAYS=30 …                              (a shorter year, for a quick look)
import { randomBytes } from 'node:crypto';
import { CopyIn } from './lib/copy-in.js';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { parseLineProtocol } from '../src/core/line-protocol.js';
import { createToken, login } from './lib/api.js';
import { progress, type Benchmark } from './lib/benchmark.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';
import { buildIfNeeded, startSeededService, type BenchService } from './lib/server.js';
import { msSince, sleep } from './lib/stats.js';

const POINTS = 20;
const DAYS = Number(process.env.BENCH_LP_DAYS ?? 365);
const MINUTES = DAYS * 1440;
const TOTAL = POINTS * MINUTES;
const MINUTES_PER_BODY = 500; // × 20 points = 10,000 lines
const CLIENTS = 2;
const START = Date.UTC(2023, 0, 1);
const MINUTE_MS = 60_000;
const DATABASE_URL = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const TARGET = { ratio: 2, rssMiB: 1536, parseLinesPerSecond: 2_000_000 };

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** A deterministic walk kept as text, so that the service and PostgreSQL parse the same decimals. */
const VALUES: string[] = (() => {
  const out: string[] = [];
  let seed = 0x2545f491;
  let x = 50;
  for (let i = 0; i < 4099; i++) {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    x += (seed / 2 ** 32 - 0.5) * 3;
    out.push(x.toFixed(3));
  }
  return out;
})();
const valueAt = (point: number, minute: number) => VALUES[(minute * 7 + point * 613) % VALUES.length]!;
const device = (point: number) => `d${String(point).padStart(2, '0')}`;
/** Each point's line head, as a gateway writes it. */
const HEADS = Array.from({ length: POINTS }, (_, p) => `plant,device=${device(p)},site=north power=`);

/** The body of minutes [m0, m1): every point at each minute, timestamps in ms. */
function lpBody(m0: number, m1: number): string {
  let text = '';
  for (let m = m0; m < m1; m++) {
    const ts = START + m * MINUTE_MS;
    for (let p = 0; p < POINTS; p++) text += `${HEADS[p]}${valueAt(p, m)} ${ts}\n`;
  }
  return text;
}

function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function api(service: BenchService, token: string, path: string, body: unknown): Promise<void> {
  const res = await post(service.url + path, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, JSON.stringify(body));
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text.slice(0, 300)}`);
}

/** PostgreSQL COPY of the same rows into a row table with a primary key: rows/s. */
async function postgresCopy(): Promise<{ rows: number; seconds: number }> {
  const schema = `bench_lp_${randomBytes(5).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1, options: `-c search_path=${schema}` });
  try {
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query('CREATE TABLE pv (series_id integer NOT NULL, ts bigint NOT NULL, value double precision NOT NULL, PRIMARY KEY (series_id, ts))');
    function* rows(): Iterable<Buffer> {
      for (let m0 = 0; m0 < MINUTES; m0 += MINUTES_PER_BODY) {
        let text = '';
        for (let m = m0; m < Math.min(MINUTES, m0 + MINUTES_PER_BODY); m++) {
          const ts = START + m * MINUTE_MS;
          for (let p = 0; p < POINTS; p++) text += `${p}\t${ts}\t${valueAt(p, m)}\n`;
        }
        yield Buffer.from(text, 'latin1');
      }
    }
    const client = await pool.connect();
    const t = process.hrtime.bigint();
    try {
      const n = await client.query(new CopyIn('COPY pv (series_id, ts, value) FROM STDIN', rows)).done;
      return { rows: n, seconds: msSince(t) / 1000 };
    } finally {
      client.release();
    }
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await pool.end();
  }
}

interface Ingested {
  values: number;
  seconds: number;
  rssMaxMiB: number;
  rssHwmMiB: number;
  load: number;
}

async function ingest(service: BenchService, token: string): Promise<Ingested> {
  const url = `${service.url}/rest/latest/api/v2/write?bucket=lp-bench&org=bench&precision=ms`;
  const headers = { authorization: `Token ${token}`, 'content-type': 'text/plain; charset=utf-8' };
  const pid = service.child.pid!;
  const bodies: [number, number][] = [];
  for (let m = 0; m < MINUTES; m += MINUTES_PER_BODY) bodies.push([m, Math.min(MINUTES, m + MINUTES_PER_BODY)]);
  let next = 0;
  let done = 0;
  let rssMax = 0;
  let lastReport = 0;
  const start = process.hrtime.bigint();
  const sampler = setInterval(() => {
    const rss = rssMiB(pid);
    if (rss > rssMax) rssMax = rss;
    const at = msSince(start);
    if (at - lastReport >= 10_000) {
      lastReport = at;
      progress(`ingest: ${fmtInt(done)} / ${fmtInt(TOTAL)} values, ${(at / 1000).toFixed(0)} s, ${fmtInt((done / at) * 1000)} values/s, service RSS ${rss.toFixed(0)} MiB`);
    }
  }, 100);
  try {
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        // Each client encodes its next body while the previous one is at the service.
        let inFlight: Promise<void> | undefined;
        while (next < bodies.length) {
          const [m0, m1] = bodies[next++]!;
          const body = lpBody(m0, m1);
          const n = (m1 - m0) * POINTS;
          await inFlight;
          inFlight = post(url, headers, body).then((res) => {
            if (res.status !== 204) throw new Error(`POST /api/v2/write: ${res.status} ${res.text.slice(0, 500)}`);
            done += n;
          });
        }
        await inFlight;
      }),
    );
  } finally {
    clearInterval(sampler);
  }
  const seconds = msSince(start) / 1000;
  rssMax = Math.max(rssMax, rssMiB(pid));
  return { values: done, seconds, rssMaxMiB: rssMax, rssHwmMiB: rssMiB(pid, 'VmHWM'), load: loadavg()[0]! };
}

/** The parser alone on one 10,000-line body, best of several runs; JSON.parse of the same values as a bulk body beside it. */
function parserRates(): { lp: number; json: number } {
  const lp = Buffer.from(lpBody(0, 5_000)); // 100,000 lines
  const json = JSON.stringify(
    Array.from({ length: 100_000 }, (_, i) => ({ xid: `lp-${device(i % POINTS)}`, value: Number(valueAt(i % POINTS, Math.floor(i / POINTS))), timestamp: START + Math.floor(i / POINTS) * MINUTE_MS })),
  );
  const best = (fn: () => void) => {
    let ms = Infinity;
    for (let k = 0; k < 7; k++) {
      const t = process.hrtime.bigint();
      fn();
      ms = Math.min(ms, msSince(t));
    }
    return (100_000 / ms) * 1000;
  };
  return { lp: best(() => parseLineProtocol(lp, 'ms')), json: best(() => JSON.parse(json)) };
}

async function run(): Promise<Figure[]> {
  const B = 'line-protocol';
  const parse = parserRates();
  progress(`parser: ${fmtInt(parse.lp)} lines/s (JSON.parse of the same values as bulk JSON: ${fmtInt(parse.json)} values/s)`);
  progress(`data set: ${POINTS} points × ${DAYS} days at 1 min = ${fmtInt(TOTAL)} values; PostgreSQL COPY first`);
  const copy = await postgresCopy();
  const copyRate = copy.rows / copy.seconds;
  progress(`postgresql: COPY ${fmtInt(copy.rows)} rows into (series_id, ts, value) with PRIMARY KEY in ${copy.seconds.toFixed(1)} s: ${fmtInt(copyRate)} rows/s`);
  const service = await startSeededService({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'silent' });
  try {
    const token = await createToken(service.url, await login(service.url), 6 * 3_600_000);
    await api(service, token, '/rest/latest/data-sources', { xid: 'lp-bench', name: 'Line protocol bench', modelType: 'LINE_PROTOCOL', enabled: true, createPoints: false });
    for (let p = 0; p < POINTS; p++) {
      await api(service, token, '/rest/latest/data-points', {
        xid: `lp-${device(p)}`,
        name: `Power ${device(p)}`,
        dataSourceXid: 'lp-bench',
        pointLocator: { dataType: 'NUMERIC', measurement: 'plant', tags: { device: device(p) }, field: 'power' },
        setPermission: ['superadmin'],
      });
    }
    await sleep(500);
    const ing = await ingest(service, token);
    const rate = ing.values / ing.seconds;
    const ratio = rate / copyRate;
    progress(`ingest: ${fmtInt(ing.values)} values in ${ing.seconds.toFixed(1)} s = ${fmtInt(rate)} values/s; ${ratio.toFixed(2)}× COPY; RSS max ${ing.rssMaxMiB.toFixed(0)} MiB (VmHWM ${ing.rssHwmMiB.toFixed(0)} MiB); load average ${ing.load.toFixed(2)}`);
    return [
      figure(B, 'line-protocol ingest, 2 clients', rate, 'values/s', 'PostgreSQL COPY rows/s (PK)', copyRate, `bodies of 10,000 lines, 204 when durable; ${ratio.toFixed(2)}× (target ≥ ${TARGET.ratio}×: ${met(ratio >= TARGET.ratio)}); load ${ing.load.toFixed(1)}`),
      figure(B, 'service RSS max during ingest', ing.rssMaxMiB, 'MiB', 'target', TARGET.rssMiB, `VmHWM ${ing.rssHwmMiB.toFixed(0)} MiB; target ≤ ${TARGET.rssMiB} MiB: ${met(ing.rssMaxMiB <= TARGET.rssMiB)}`),
      figure(B, 'parser alone, 1 thread', parse.lp, 'lines/s', 'JSON.parse, same values as bulk JSON', parse.json, `goal ≥ ${fmtInt(TARGET.parseLinesPerSecond)} lines/s: ${met(parse.lp >= TARGET.parseLinesPerSecond)}`),
    ];
  } finally {
    await service.stop();
    agent.destroy();
  }
}

export const lineProtocol: Benchmark = {
  name: 'line-protocol',
  description: `POST /api/v2/write (${fmtInt(TOTAL)} values, 2 clients, 10,000-line bodies) vs PostgreSQL COPY into a row table; the parser alone`,
  run,
};

// Run directly: node --import tsx bench/line-protocol.ts
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildIfNeeded();
  console.log(`## ${lineProtocol.name}: ${lineProtocol.description}`);
  const figures = await lineProtocol.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
