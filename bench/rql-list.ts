// RQL list endpoint under a realistic table: 100,000 data points in 4 sources (10% of names contain
// "x"), then GET /rest/latest/data-points?match(name,*x*)&sort(-name)&limit(50) as admin with a Bearer
// JWT: p50/p99 of sequential requests and req/s under autocannon. Baseline, in the same run: the same
// count + page issued directly to the database (pg on PostgreSQL, in-process on PGlite), built with the
// service's own compiler and list queries, so the SQL is exactly what the service sends.
// On PostgreSQL (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test)
// the service gets a schema of its own, dropped afterwards; then once more on embedded PGlite.
//   npm run bench -- rql-list
//   node --import tsx bench/rql-list.ts             (runs this benchmark alone)
//   BENCH_RQL_ENGINES=postgresql BENCH_SECONDS=5 node --import tsx bench/rql-list.ts
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { compileRql, type SqlQueryParts } from '../src/core/rql/index.js';
import { dataPointResource, DataPointsRepository, type DataPointRecord } from '../src/store/metadata/data-points.js';
import type { Queryable, Row } from '../src/store/metadata/db.js';
import { countRows, pageRows, type ListSource } from '../src/store/metadata/list.js';
import { openPglite } from '../src/store/metadata/pglite.js';
import { createToken, login } from './lib/api.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { load, loadSeconds, type LoadResult } from './lib/load.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';
import { buildIfNeeded, removeDir, startService, tempDir, type BenchService } from './lib/server.js';
import { msSince } from './lib/stats.js';

const POINTS = 100_000;
const SOURCES = 4;
const QUERY = 'match(name,*x*)&sort(-name)&limit(50)';
const PAGE = 50;
const MATCHES = POINTS / 10;
const WARMUP = 30;
const RUNS = 200;
const CONNECTIONS = 10;
const TARGET_P50_MS = 50;
const DATABASE_URL = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

type Engine = 'postgresql' | 'pglite';

/** One statement each; names are 8 hex digits (never an x) plus " x " for every tenth point. */
const SEED_SQL = [
  `insert into data_sources (xid, name, model_type)
   select 'BENCH_DS_' || g, 'Bench source ' || g, 'VIRTUAL' from generate_series(1, ${SOURCES}) g`,
  `insert into data_points (xid, name, device_name, data_source_id, data_type, point_locator, tags)
   select 'BENCH_DP_' || lpad(g::text, 6, '0'),
          substr(md5(g::text), 1, 8) || case when g % 10 = 0 then ' x ' else ' ' end || g,
          'device ' || (g % 500),
          (array(select id from data_sources where xid like 'BENCH\\_DS\\_%' order by id))[1 + g % ${SOURCES}],
          'NUMERIC', '{"changeType":"NO_CHANGE","min":0,"max":100}'::jsonb,
          jsonb_build_object('site', 'site ' || (g % 20))
   from generate_series(1, ${POINTS}) g`,
  'analyze data_sources',
  'analyze data_points',
];

/** The q-quantile (0..1) of sorted values, nearest rank (as lib/load.ts). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

interface Latency {
  p50: number;
  p99: number;
}

/** `WARMUP` untimed calls, then `RUNS` sequential timed ones. */
async function sequential(fn: () => Promise<unknown>): Promise<Latency> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(msSince(start));
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/** Calls per second with `inFlight` loops running `fn` for `seconds`. */
async function rate(fn: () => Promise<unknown>, inFlight: number, seconds: number): Promise<number> {
  const start = process.hrtime.bigint();
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (msSince(start) < seconds * 1000) {
        await fn();
        done++;
      }
    }),
  );
  return done / (msSince(start) / 1000);
}

/** The service's own list SQL for the admin (a superadmin: no permission filter). */
function listSql(): { source: ListSource; q: SqlQueryParts } {
  const stub: Queryable = { query: () => Promise.reject(new Error('unused')), exec: () => Promise.reject(new Error('unused')) };
  return { source: new DataPointsRepository(stub).source, q: compileRql(dataPointResource, QUERY) };
}

/** Count + page exactly as GET /data-points does it; returns the total and the page's XIDs. */
async function directList(db: Queryable, source: ListSource, q: SqlQueryParts): Promise<{ total: number; xids: string[] }> {
  const total = await countRows(db, source, q);
  const xids: string[] = [];
  for await (const batch of pageRows<DataPointRecord>(db, source, q)) for (const r of batch) xids.push(r.xid);
  return { total, xids };
}

interface Measured {
  engine: Engine;
  http: Latency;
  direct: Latency;
  load: LoadResult;
  directRate: number;
  seconds: number;
}

/** Sequential HTTP latency and autocannon load against a running, seeded service. */
async function measureHttp(service: BenchService, expected: { total: number; xids: string[] }): Promise<{ http: Latency; load: LoadResult; seconds: number }> {
  const token = await createToken(service.url, await login(service.url));
  const url = `${service.url}/rest/latest/data-points?${QUERY}`;
  const headers = { authorization: `Bearer ${token}` };
  const once = async () => {
    const res = await fetch(url, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text}`);
    return text;
  };
  const body = JSON.parse(await once()) as { items: { xid: string }[]; total: number };
  const xids = body.items.map((p) => p.xid);
  if (body.total !== expected.total || JSON.stringify(xids) !== JSON.stringify(expected.xids)) {
    throw new Error(`HTTP and direct results differ: total ${body.total} vs ${expected.total}, first ${xids[0]} vs ${expected.xids[0]}`);
  }
  const http = await sequential(once);
  await load({ url, headers, connections: CONNECTIONS, seconds: 1 }); // warm-up
  const seconds = loadSeconds(10);
  const r = await load({ url, headers, connections: CONNECTIONS, seconds });
  return { http, load: r, seconds };
}

async function onPostgres(): Promise<Measured> {
  const schema = `bench_rql_${randomBytes(5).toString('hex')}`;
  const dataDir = await tempDir();
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: CONNECTIONS, options: `-c search_path=${schema}` });
  const db: Queryable = {
    query: async <T extends Row>(text: string, values?: readonly unknown[]) => (await pool.query<T>(text, values ? [...values] : undefined)).rows,
    exec: async (script: string) => {
      await pool.query(script);
    },
  };
  let service: BenchService | undefined;
  try {
    service = await startService({
      dataDir,
      env: { DATABASE_URL, DATABASE_SCHEMA: schema, RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'silent' },
    });
    const t = process.hrtime.bigint();
    for (const sql of SEED_SQL) await db.exec(sql);
    progress(`postgresql: ${POINTS.toLocaleString('en-US')} points inserted and analysed in ${(msSince(t) / 1000).toFixed(1)} s (schema ${schema})`);

    const { source, q } = listSql();
    const expected = await directList(db, source, q);
    if (expected.total !== MATCHES || expected.xids.length !== PAGE) throw new Error(`unexpected seed: ${expected.total} matches, page of ${expected.xids.length}`);
    const direct = await sequential(() => directList(db, source, q));
    const seconds = loadSeconds(10);
    const directRate = await rate(() => directList(db, source, q), CONNECTIONS, Math.min(seconds, 5));
    const measured = await measureHttp(service, expected);
    return { engine: 'postgresql', direct, directRate, ...measured };
  } finally {
    await service?.stop();
    await pool.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await pool.end();
    await removeDir(dataDir);
  }
}

async function onPglite(): Promise<Measured> {
  const dataDir = await tempDir();
  let service: BenchService | undefined;
  try {
    // First start: initdb, migrations and the admin user; then seed the stopped service's store
    // in-process (PGlite has one owner at a time) and take the baseline there.
    await (await startService({ dataDir, env: { LOG_LEVEL: 'silent' } })).stop();
    const db = await openPglite(join(dataDir, 'metadata'));
    let expected: { total: number; xids: string[] };
    let direct: Latency;
    let directRate: number;
    try {
      const t = process.hrtime.bigint();
      for (const sql of SEED_SQL) await db.exec(sql);
      progress(`pglite: ${POINTS.toLocaleString('en-US')} points inserted and analysed in ${(msSince(t) / 1000).toFixed(1)} s`);
      const { source, q } = listSql();
      expected = await directList(db, source, q);
      if (expected.total !== MATCHES || expected.xids.length !== PAGE) throw new Error(`unexpected seed: ${expected.total} matches`);
      direct = await sequential(() => directList(db, source, q));
      directRate = await rate(() => directList(db, source, q), CONNECTIONS, Math.min(loadSeconds(10), 5));
    } finally {
      await db.close();
    }
    service = await startService({ dataDir, env: { RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'silent' } });
    const measured = await measureHttp(service, expected);
    return { engine: 'pglite', direct, directRate, ...measured };
  } finally {
    await service?.stop();
    await removeDir(dataDir);
  }
}

function figuresOf(m: Measured): Figure[] {
  const label = m.engine === 'postgresql' ? 'PostgreSQL' : 'PGlite';
  const via = m.engine === 'postgresql' ? 'direct pg' : 'direct in-process PGlite';
  const target = `target p50 < ${TARGET_P50_MS} ms: ${m.http.p50 < TARGET_P50_MS ? 'met' : 'NOT met'}`;
  const seq = `${RUNS} sequential after ${WARMUP} warm-up; ${target}`;
  const loadNote = `${CONNECTIONS} conn, ${m.seconds} s; autocannon p50 ${m.load.p50.toFixed(1)} ms, p99 ${m.load.p99.toFixed(1)} ms${m.load.problems ? `; ${m.load.problems}` : ''}`;
  return [
    figure('rql-list', `${label}: HTTP p50`, m.http.p50, 'ms', `${via} count+page p50`, m.direct.p50, seq),
    figure('rql-list', `${label}: HTTP p99`, m.http.p99, 'ms', `${via} count+page p99`, m.direct.p99, seq),
    figure('rql-list', `${label}: HTTP throughput`, m.load.rps, 'req/s', `${via} count+page/s, ${CONNECTIONS} in flight`, m.directRate, loadNote),
  ];
}

function engines(): Engine[] {
  const wanted = (process.env.BENCH_RQL_ENGINES ?? 'postgresql,pglite').split(',').map((s) => s.trim());
  return (['postgresql', 'pglite'] as const).filter((e) => wanted.includes(e));
}

export const rqlList: Benchmark = {
  name: 'rql-list',
  description: `GET /data-points?${QUERY} over ${POINTS.toLocaleString('en-US')} points (PostgreSQL, then PGlite) vs the same SQL direct`,
  async run(): Promise<Figure[]> {
    const out: Figure[] = [];
    const errors: string[] = [];
    for (const engine of engines()) {
      try {
        const m = engine === 'postgresql' ? await onPostgres() : await onPglite();
        progress(
          `${engine}: HTTP p50 ${m.http.p50.toFixed(2)} ms, p99 ${m.http.p99.toFixed(2)} ms; direct p50 ${m.direct.p50.toFixed(2)} ms, ` +
            `p99 ${m.direct.p99.toFixed(2)} ms; HTTP/direct p50 ${(m.http.p50 / m.direct.p50).toFixed(2)}×; ` +
            `${m.load.rps.toFixed(0)} req/s (${m.load.ok} ok${m.load.problems ? `, ${m.load.problems}` : ''}) vs ${m.directRate.toFixed(0)} direct/s`,
        );
        out.push(...figuresOf(m));
      } catch (err) {
        // One engine failing (no PostgreSQL server) still reports the other.
        errors.push(`${engine}: ${err instanceof Error ? err.message : String(err)}`);
        progress(`! ${engine} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    }
    if (out.length === 0 && errors.length > 0) throw new Error(errors.join('; '));
    return out;
  },
};

// Run directly: node --import tsx bench/rql-list.ts
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildIfNeeded();
  console.log(`## ${rqlList.name}: ${rqlList.description}`);
  const figures = await rqlList.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
