// Spawning the service (or any HTTP server) as a child process, timing it to its first 200, and
// stopping it again. Each server writes its log to a file in its own temporary directory.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { msSince, sleep } from './stats.js';

/** BENCH_SERVICE_ENTRY runs another build (e.g. main's, for a before/after comparison). */
export const serviceEntry = process.env.BENCH_SERVICE_ENTRY || join(projectRoot, 'dist', 'src', 'main.js');

/** Compiles src/ to dist/ when a source file is newer than the entry point (as `npm start` does). */
export function buildIfNeeded(): void {
  execFileSync(process.execPath, [join(projectRoot, 'scripts', 'build-if-needed.mjs')], { cwd: projectRoot, stdio: 'inherit' });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function tempDir(prefix = 'dds-bench-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

export interface Spawned {
  child: ChildProcess;
  /** Milliseconds from spawn() to the first 200 from `readyUrl`. */
  readyMs: number;
  logFile: string;
  stop(): Promise<void>;
}

function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Spawns `command args` with exactly `env` (plus PATH and HOME), polls `readyUrl` every few
 * milliseconds and resolves once it answers 200. Fails if the process exits or `timeoutMs` passes.
 */
export async function spawnUntilReady(
  command: string,
  args: string[],
  env: Record<string, string>,
  readyUrl: string,
  logFile: string,
  timeoutMs = 60_000,
): Promise<Spawned> {
  const fd = openSync(logFile, 'a');
  const start = process.hrtime.bigint();
  const child = spawn(command, args, {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let exited = false;
  child.once('exit', () => (exited = true));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 15_000))) {
      child.kill('SIGKILL');
      await waitForExit(child, 5_000);
    }
  };

  for (;;) {
    if ((await status(readyUrl)) === 200) return { child, readyMs: msSince(start), logFile, stop };
    if (exited) throw new Error(`${command} ${args.join(' ')} exited before ${readyUrl} answered 200:\n${logTail(logFile)}`);
    if (msSince(start) > timeoutMs) {
      await stop();
      throw new Error(`${readyUrl} did not answer 200 within ${timeoutMs} ms:\n${logTail(logFile)}`);
    }
    await sleep(5);
  }
}

export interface ServiceOptions {
  dataDir: string;
  /** Extra environment variables for the service (RATE_LIMIT_ENABLED, BASIC_AUTH_ENABLED, …). */
  env?: Record<string, string>;
  port?: number;
}

export interface BenchService extends Spawned {
  url: string;
  port: number;
  dataDir: string;
}

/**
 * Starts `node dist/src/main.js` on 127.0.0.1 with embedded engines under `dataDir`.
 * BENCH_SERVICE_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes to the service's node.
 */
export async function startService(options: ServiceOptions): Promise<BenchService> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const spawned = await spawnUntilReady(
    process.execPath,
    [...nodeArgs, serviceEntry],
    { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: options.dataDir, LOG_LEVEL: 'info', ...options.env },
    `${url}/health`,
    join(options.dataDir, 'service.log'),
  );
  return { ...spawned, url, port, dataDir: options.dataDir };
}

// A DATA_DIR that has been through PGlite's initdb, migrations and the admin user, made once per run
// and copied for each benchmark that only needs a running service (initdb costs seconds).
let template: Promise<string> | undefined;
function templateDataDir(): Promise<string> {
  template ??= (async () => {
    const dir = await tempDir('dds-bench-template-');
    try {
      const service = await startService({ dataDir: dir });
      await service.stop();
    } catch (err) {
      await removeDir(dir);
      template = undefined;
      throw err;
    }
    return dir;
  })();
  return template;
}

export interface SeededService extends BenchService {
  /** Stops the process and starts it again on the same data (a cold start: nothing cached in memory). */
  restart(): Promise<SeededService>;
}

/** Starts the service on a copy of an initialised DATA_DIR; stop() also deletes the copy. */
export async function startSeededService(env: Record<string, string> = {}): Promise<SeededService> {
  const dataDir = await tempDir();
  try {
    await cp(join(await templateDataDir(), 'metadata'), join(dataDir, 'metadata'), { recursive: true });
    return seeded(await startService({ dataDir, env }), env);
  } catch (err) {
    await removeDir(dataDir);
    throw err;
  }
}

function seeded(service: BenchService, env: Record<string, string>): SeededService {
  return {
    ...service,
    async stop() {
      await service.stop();
      await removeDir(service.dataDir);
    },
    async restart() {
      await service.stop();
      return seeded(await startService({ dataDir: service.dataDir, env }), env);
    },
  };
}

export async function cleanupTemplate(): Promise<void> {
  if (template) await removeDir(await template);
  template = undefined;
}

/** The bare Koa + @koa/router route (lib/bare-koa.ts) in a child process; `url` answers a constant body. */
export async function startBareKoa(): Promise<Spawned & { url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/constant`;
  const logFile = join(await tempDir('dds-bench-koa-'), 'bare-koa.log');
  const spawned = await spawnUntilReady(process.execPath, ['--import', 'tsx', join(projectRoot, 'bench', 'lib', 'bare-koa.ts'), String(port)], {}, url, logFile);
  return { ...spawned, url };
}
