// `npm run bench [-- name …]`: runs all benchmarks (or the named ones) and prints one table plus one
// JSON line per figure. Every figure comes with a baseline measured in the same run on the same machine.
//   npm run bench                    all benchmarks
//   npm run bench -- login requests  a subset
//   npm run bench -- --list          names and descriptions
//   BENCH_SECONDS=5 npm run bench    shorter load runs
import { benchmarks } from './benchmarks.js';
import { loadLine, machineLine, printJsonLines, printTable, type Figure } from './lib/report.js';
import { buildIfNeeded, cleanupTemplate } from './lib/server.js';
import { msSince } from './lib/stats.js';

const args = process.argv.slice(2);
if (args.includes('--list') || args.includes('--help')) {
  for (const b of benchmarks) console.log(`${b.name.padEnd(12)} ${b.description}`);
  process.exit(0);
}
const unknown = args.filter((a) => !benchmarks.some((b) => b.name === a));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${benchmarks.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
const selected = args.length === 0 ? benchmarks : benchmarks.filter((b) => args.includes(b.name));

console.log(`# bench: ${selected.map((b) => b.name).join(', ')}`);
console.log(`# ${machineLine()}`);
console.log(`# at start: ${loadLine()}`);
buildIfNeeded();

const figures: Figure[] = [];
const failed: string[] = [];
const started = process.hrtime.bigint();
for (const b of selected) {
  console.log(`\n## ${b.name}: ${b.description}`);
  const t = process.hrtime.bigint();
  try {
    figures.push(...(await b.run()));
  } catch (err) {
    failed.push(b.name);
    console.error(`  ! ${b.name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
  console.log(`  (${(msSince(t) / 1000).toFixed(1)} s)`);
}
await cleanupTemplate();

console.log(`\n# results (ratio = value ÷ baseline value; ${(msSince(started) / 1000).toFixed(0)} s in all; at end: ${loadLine()})\n`);
printTable(figures);
console.log('\n# JSON lines\n');
printJsonLines(figures);
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
