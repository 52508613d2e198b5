// Start-up: spawn `node dist/src/main.js` → first 200 from /health, on an empty DATA_DIR (PGlite
// initdb, migrations, admin user) and again on the existing one. Baseline: a bare node:http server.
import { join } from 'node:path';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { figure, type Figure } from './lib/report.js';
import { freePort, removeDir, spawnUntilReady, startService, tempDir } from './lib/server.js';
import { median } from './lib/stats.js';

const FIRST_START_RUNS = 3;
const RESTART_RUNS = 5;

async function baselineMs(dir: string): Promise<number> {
  const port = await freePort();
  const code = `require('http').createServer((q,s)=>s.end('ok')).listen(${port})`;
  const s = await spawnUntilReady(process.execPath, ['-e', code], {}, `http://127.0.0.1:${port}/`, join(dir, 'baseline.log'));
  await s.stop();
  return s.readyMs;
}

export const startup: Benchmark = {
  name: 'startup',
  description: 'spawn → first 200 from /health: first start (empty DATA_DIR) and restart',
  async run(): Promise<Figure[]> {
    const scratch = await tempDir();
    const dirs: string[] = [];
    try {
      // The baseline runs just before each service start, so both see the same machine load.
      const baseline: number[] = [];
      const first: number[] = [];
      for (let i = 0; i < FIRST_START_RUNS; i++) {
        baseline.push(await baselineMs(scratch));
        const dataDir = await tempDir();
        dirs.push(dataDir);
        const s = await startService({ dataDir });
        first.push(s.readyMs);
        await s.stop();
      }
      progress(`first start on an empty DATA_DIR: ${first.map((ms) => ms.toFixed(0)).join(', ')} ms`);

      const restart: number[] = [];
      const existing = dirs[dirs.length - 1]!;
      for (let i = 0; i < RESTART_RUNS; i++) {
        baseline.push(await baselineMs(scratch));
        const s = await startService({ dataDir: existing });
        restart.push(s.readyMs);
        await s.stop();
      }
      progress(`restart on the existing DATA_DIR: ${restart.map((ms) => ms.toFixed(0)).join(', ')} ms`);
      progress(`node:http hello server (before each start): ${baseline.map((ms) => ms.toFixed(0)).join(', ')} ms`);

      const base = median(baseline);
      const hello = `node:http hello, median of ${baseline.length}`;
      return [
        figure('startup', 'first start, empty DATA_DIR (initdb)', median(first), 'ms', hello, base, `median of ${FIRST_START_RUNS}`),
        figure('startup', 'restart, existing DATA_DIR', median(restart), 'ms', hello, base, `median of ${RESTART_RUNS}`),
      ];
    } finally {
      for (const dir of [scratch, ...dirs]) await removeDir(dir);
    }
  },
};
