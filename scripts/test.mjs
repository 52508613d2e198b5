// `npm test`: every suite under test/, in mocha processes of a few files each, one after the other.
// One process for all of them kept ~100 MB of heap per suite that starts a service (not found yet; see
// .mocharc.cjs), and its garbage collection slowed the later suites several-fold. Arguments are passed to
// each mocha run (e.g. `npm test -- --grep pglite`). Exit code: 1 when any run failed.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const FILES_PER_RUN = 12;

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.test.ts') ? [join(dir, entry.name)] : []))
    .sort();
}

const files = testFiles('test');
const failed = [];
for (let i = 0; i < files.length; i += FILES_PER_RUN) {
  const part = files.slice(i, i + FILES_PER_RUN);
  const run = spawnSync('npx', ['mocha', ...process.argv.slice(2), ...part], { stdio: 'inherit' });
  if (run.status !== 0) failed.push(`${part[0]} … ${part.at(-1)} (exit ${run.status ?? run.signal})`);
}
if (failed.length > 0) {
  console.error(`\nnpm test: ${failed.length} of ${Math.ceil(files.length / FILES_PER_RUN)} mocha runs failed:\n  ${failed.join('\n  ')}`);
  process.exit(1);
}
console.log(`\nnpm test: ${files.length} test files in ${Math.ceil(files.length / FILES_PER_RUN)} mocha runs, all passing`);
