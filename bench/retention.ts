// Retention purge against live writes, in process on the value store the service uses (DuckDB behind
// the bucket cache; with BENCH_DATABASE_URL also the PostgreSQL engine): 20 points × 90 days of 1-minute
// values, then everything older than 30 days purged while a writer appends one live batch every 10 ms.
// Figures: the longest and p99 wait of those appends during the sliced purge (store/values/purge.ts),
// against the same appends while the same values are deleted by one `delete` per series (the baseline
// a naive purge would give), and the values purged per second.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { openValueStore } from '../src/store/values/open.js';
import { purgeSeries } from '../src/store/values/purge.js';
import type { PointValueStore, ValueBatch } from '../src/store/values/types.js';
import { progress, type Benchmark } from './lib/benchmark.js';
import { figure, type Figure } from './lib/report.js';
import { sleep } from './lib/stats.js';

const POINTS = Number(process.env.BENCH_RETENTION_POINTS ?? 20);
const DAYS = Number(process.env.BENCH_RETENTION_DAYS ?? 90);
const KEEP_DAYS = 30;
const MINUTE = 60_000;
const DAY = 86_400_000;

function history(series: number, from: number, count: number): ValueBatch {
  const batch: ValueBatch = { length: count, series: new Int32Array(count), ts: new Float64Array(count), value: new Float64Array(count), text: null, annotation: null };
  for (let i = 0; i < count; i++) {
    batch.series[i] = series;
    batch.ts[i] = from + i * MINUTE;
    batch.value[i] = Math.sin(i / 100) * 50;
  }
  return batch;
}

async function fill(store: PointValueStore, now: number): Promise<number> {
  const start = now - DAYS * DAY;
  const perSeries = DAYS * 1440;
  for (let s = 1; s <= POINTS; s++) {
    for (let i = 0; i < perSeries; i += 50_000) await store.append(history(s, start + i * MINUTE, Math.min(50_000, perSeries - i)));
  }
  return POINTS * perSeries;
}

/** Appends one live value per point every 10 ms while `work` runs; returns each append's wait (ms). */
async function appendsDuring(store: PointValueStore, now: number, work: () => Promise<number>): Promise<{ waits: number[]; deleted: number; ms: number }> {
  const waits: number[] = [];
  let running = true;
  let k = 0;
  const writer = (async () => {
    while (running) {
      const batch = history(1, now + ++k * 1000, 1);
      for (let s = 0; s < POINTS; s++) {
        batch.series[0] = s + 1;
        const t = performance.now();
        await store.append(batch);
        waits.push(performance.now() - t);
      }
      await sleep(10);
    }
  })();
  const t = performance.now();
  const deleted = await work();
  const ms = performance.now() - t;
  running = false;
  await writer;
  return { waits, deleted, ms };
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] ?? 0;
const max = (xs: number[]) => xs.reduce((m, x) => Math.max(m, x), 0);

async function measure(engine: string, open: () => Promise<{ store: PointValueStore; dispose(): Promise<void> }>): Promise<Figure[]> {
  const now = Date.now();
  const cutoffs = new Map(Array.from({ length: POINTS }, (_, i) => [i + 1, now - KEEP_DAYS * DAY]));
  // The baseline: one delete per series, on its own copy of the data.
  let base = await open();
  progress(`${engine}: ${(await fill(base.store, now)).toLocaleString()} values written (baseline copy)`);
  const whole = await appendsDuring(base.store, now, async () => {
    let n = 0;
    for (const [s, cutoff] of cutoffs) n += await base.store.delete(s, now - 400 * DAY, cutoff);
    return n;
  });
  await base.dispose();
  base = await open();
  await fill(base.store, now);
  progress(`${engine}: sliced purge`);
  const sliced = await appendsDuring(base.store, now, () => purgeSeries(base.store, cutoffs));
  await base.dispose();
  progress(`${engine}: sliced ${sliced.deleted.toLocaleString()} values in ${(sliced.ms / 1000).toFixed(1)} s, longest append ${max(sliced.waits).toFixed(1)} ms; one delete per series: ${(whole.ms / 1000).toFixed(1)} s, longest append ${max(whole.waits).toFixed(1)} ms`);
  const name = 'retention';
  return [
    figure(name, `${engine}: longest append wait during the purge`, max(sliced.waits), 'ms', 'one delete per series', max(whole.waits), 'target ≤ 50 ms'),
    figure(name, `${engine}: p99 append wait during the purge`, p99(sliced.waits), 'ms', 'one delete per series', p99(whole.waits)),
    figure(name, `${engine}: values purged per second`, sliced.deleted / (sliced.ms / 1000), 'values/s', 'one delete per series', whole.deleted / (whole.ms / 1000)),
  ];
}

async function duckdb(): Promise<{ store: PointValueStore; dispose(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'dds-bench-retention-'));
  const store = await openValueStore(loadConfig({ DATA_DIR: dir }));
  return {
    store,
    async dispose() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function postgres(url: string): Promise<{ store: PointValueStore; dispose(): Promise<void> }> {
  const schema = `bench_retention_${process.pid}_${Date.now()}`;
  const config = loadConfig({ VALUE_STORE: 'postgres', DATABASE_URL: url, DATABASE_SCHEMA: schema });
  const store = await openValueStore(config);
  return {
    store,
    async dispose() {
      await store.close();
      const pg = await import('pg');
      const client = new pg.default.Client({ connectionString: url });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    },
  };
}

export const retention: Benchmark = {
  name: 'retention',
  description: `purge of ${DAYS - KEEP_DAYS} of ${DAYS} days × ${POINTS} points while live appends run: longest append wait vs one delete per series`,
  async run() {
    const figures = await measure('DuckDB', duckdb);
    const url = process.env.BENCH_DATABASE_URL;
    if (url) figures.push(...(await measure('PostgreSQL', () => postgres(url))));
    else progress('PostgreSQL engine skipped: set BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test');
    return figures;
  },
};
