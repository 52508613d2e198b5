import pg from 'pg';
import { ilpTransport, initQuestDbStore } from '../src/store/values/questdb/index.js';
import type { ValueBatch } from '../src/store/values/types.js';
const table = 'zz_prof_' + Date.now();
const pool = new pg.Pool({ connectionString: 'postgres://admin:quest@127.0.0.1:8812/qdb', max: 4 });
const ilp = ilpTransport('http::addr=127.0.0.1:9000');
const times: Record<string, number[]> = {};
const add = (k: string, ms: number) => (times[k] ??= []).push(ms);
const store = await initQuestDbStore({
  query: async (text: string) => { const a = performance.now(); const r = (await pool.query(text)).rows; add(text.includes('wal_tables') ? 'walq' : 'q', performance.now() - a); return r as never; },
  ilp: { send: async (lines: Buffer) => { const a = performance.now(); await ilp.send(lines); add('send ' + (lines.length > 10000 ? 'big' : 'small'), performance.now() - a); }, close: () => ilp.close() },
  end: () => pool.end(),
}, { table });
const T0 = Date.UTC(2024, 0, 1);
const t = performance.now();
const appendTimes: number[] = [];
await Promise.all([0, 1].map(async (c) => {
  for (let off = 0; off < 200_000; off += 10_000) {
    const batch: ValueBatch = { length: 10_000, series: new Int32Array(10_000).fill(7 + c), ts: new Float64Array(10_000), value: new Float64Array(10_000), text: null, annotation: null };
    for (let i = 0; i < 10_000; i++) { batch.ts[i] = T0 + (off + i) * 60_000; batch.value[i] = Math.sin((off + i) / 100); }
    const a = performance.now(); await store.append(batch); appendTimes.push(performance.now() - a);
  }
}));
const sec = (performance.now() - t) / 1000;
console.log('total', sec.toFixed(2), 's', Math.round(400000 / sec), 'values/s; append avg', Math.round(appendTimes.reduce((a, b) => a + b) / appendTimes.length));
for (const [k, v] of Object.entries(times)) console.log(k, 'n', v.length, 'sum', Math.round(v.reduce((a, b) => a + b)), 'avg', (v.reduce((a, b) => a + b) / v.length).toFixed(1));
await store.close();
const c = new pg.Client({ connectionString: 'postgres://admin:quest@127.0.0.1:8812/qdb' }); await c.connect();
for (const s of ['', '_hourly', '_pending', '_owner']) await c.query(`DROP TABLE IF EXISTS ${table}${s}`).catch(() => 0);
await c.end();
