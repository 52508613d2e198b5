// `npm start` builds only when a source file is newer than the compiled entry point,
// so a fresh clone works with `npm ci && npm start` and a restart stays fast.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const entry = 'dist/src/main.js';

function newestMtime(dir) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    newest = Math.max(newest, st.isDirectory() ? newestMtime(path) : st.mtimeMs);
  }
  return newest;
}

const stale = !existsSync(entry) || newestMtime('src') > statSync(entry).mtimeMs;
if (stale) {
  console.log('building (tsc)…');
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
