// What JSON_MAX_DEPTH's check costs: a request body is scanned for its depth before anything
// parses it (src/core/json.ts depthExceededAt, from src/http/body.ts). Measured in process on the
// largest body there is, a 16 MiB bulk ingest, against what the service does with the same body
// anyway, in the same run: with an annotation per value it takes the general path (the scan, then
// JSON.parse and the general validation); in the usual shape the fast reader (core/bulk-values.ts)
// reads it, whose fixed shape is 2 levels deep, so that body is not scanned at all (the figure
// says what the scan would add there). CPU time (process.cpuUsage), the median of several runs,
// so that other work on a busy machine skews it less than wall time would.
//   npm run bench -- json-depth
//   node --import tsx bench/json-depth.ts
import { pathToFileURL } from 'node:url';
import { readBulkColumns } from '../src/core/bulk-values.js';
import { DEFAULT_JSON_MAX_DEPTH, depthExceededAt } from '../src/core/json.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';
import { median } from './lib/stats.js';

const B = 'json-depth';
const BODY_BYTES = 16 * 1024 * 1024;
const RUNS = 9;

/** A bulk-ingest body just under 16 MiB, as bench/bounded.ts sends it. */
function bulkBody(annotated: boolean): string {
  const rows: string[] = [];
  const t0 = 1_700_000_000_000;
  let length = 2;
  for (let i = 0; ; i++) {
    const row = annotated
      ? `{"xid":"bench-bulk","value":${(i % 1000) / 10},"timestamp":${t0 + i * 1000},"annotation":"a"}`
      : `{"xid":"bench-bulk","value":${(i % 1000) / 10},"timestamp":${t0 + i * 1000}}`;
    if (length + row.length + 1 > BODY_BYTES) break;
    rows.push(row);
    length += row.length + 1;
  }
  return `[${rows.join(',')}]`;
}

/** CPU milliseconds of `work`, the median of RUNS after two warm-up runs. */
async function cpuMs(work: () => unknown): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const start = process.cpuUsage();
    await work();
    const used = process.cpuUsage(start);
    if (i >= 2) runs.push((used.user + used.system) / 1000);
  }
  return median(runs);
}

async function run(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const annotated of [false, true]) {
    const body = bulkBody(annotated);
    const shape = annotated ? 'general path' : 'fast path';
    progress(`${(body.length / 1024 / 1024).toFixed(1)} MiB bulk body (${shape})`);
    const scan = await cpuMs(() => {
      if (depthExceededAt(body, DEFAULT_JSON_MAX_DEPTH) !== -1) throw new Error('the body is not that deep');
    });
    const parse = await cpuMs(() => JSON.parse(body));
    figures.push(figure(B, `depth scan, 16 MiB bulk body (${shape})`, scan, 'ms CPU', 'JSON.parse of the same body', parse, `${RUNS} runs, median${annotated ? '' : '; not run there'}`));
    if (!annotated) {
      const reader = await cpuMs(() => readBulkColumns(body));
      figures.push(figure(B, 'depth scan, 16 MiB bulk body (fast path)', scan, 'ms CPU', 'the fast bulk reader on it', reader, `${RUNS} runs, median; not run there`));
    }
  }
  return figures;
}

export const jsonDepth: Benchmark = {
  name: B,
  description: 'CPU cost of the JSON_MAX_DEPTH scan of a 16 MiB bulk body vs JSON.parse and the fast bulk reader',
  run,
};

// Run directly: node --import tsx bench/json-depth.ts
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`## ${jsonDepth.name}: ${jsonDepth.description}`);
  const figures = await jsonDepth.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
