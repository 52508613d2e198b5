// Builds the web console (web/) into dist/web/: esbuild bundles web/src/main.ts with uPlot into
// app.js (+ app.css from the CSS it imports), and index.html is copied next to them. The service
// serves that folder at `/` (src/app.ts). No network: everything comes from node_modules.
//   node scripts/build-web.mjs              build
//   node scripts/build-web.mjs --if-needed  only when a file under web/ (or package-lock.json) is newer (npm start)
//   node scripts/build-web.mjs --typecheck  also check the console's TypeScript (web/tsconfig.json) first
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const src = 'web';
const out = join('dist', 'web');
const marker = join(out, 'index.html');
const args = new Set(process.argv.slice(2));

function newestMtime(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

if (args.has('--if-needed') && existsSync(marker)) {
  const inputs = Math.max(newestMtime(src), newestMtime('package-lock.json'), newestMtime('scripts/build-web.mjs'));
  if (inputs <= statSync(marker).mtimeMs) process.exit(0);
}

if (args.has('--typecheck')) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', join(src, 'tsconfig.json'), '--noEmit'], { stdio: 'inherit' });
}

// Build beside the served folder, then swap, so a running service never serves half a build.
const tmp = `${out}.tmp-${process.pid}`;
rmSync(tmp, { recursive: true, force: true });
try {
  await build({
    entryPoints: { app: join(src, 'src', 'main.ts') },
    outdir: tmp,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    sourcemap: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  cpSync(join(src, 'index.html'), join(tmp, 'index.html'));
  rmSync(out, { recursive: true, force: true });
  renameSync(tmp, out);
} catch (err) {
  rmSync(tmp, { recursive: true, force: true });
  console.error('web console build failed');
  throw err;
}
console.log(`web console built into ${out}/`);
