// What an anonymous flood of forged tokens costs: 400 sequential GET /rest/latest/users/current from
// one address, each with a new token that has the right shape and names the server's key id but
// carries a random signature; default rate limits (burst 40, then 5/s). The service runs in this
// process and process.cpuUsage() (user + system) brackets the requests, so the client's own work is
// in the figure too. Baseline: the same 400 requests without a token, from another address, same
// run. A refused request should cost about what the baseline costs; one whose signature is checked
// costs ~3 ms more (on the machine this was written on).
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { startService } from '../src/service.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { figure, type Figure } from './lib/report.js';
import { removeDir, tempDir } from './lib/server.js';
import { median } from './lib/stats.js';

const REQUESTS = 400;
const ROUNDS = 7;
const WARM_UP_ROUNDS = 2;

interface Round {
  cpuMs: number;
  statuses: Map<number, number>;
}

function get(agent: Agent, url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A random ES512 signature whose two integers lie below the curve order, so checking it costs the whole
 * elliptic-curve verification (~3 ms) rather than an early range check (~0.3 ms).
 */
function forgedSignature(): string {
  const half = () => {
    const b = randomBytes(66);
    b[0] = 0; // P-521: the top 7 of 528 bits must be 0 for a value below the order
    return b;
  };
  return Buffer.concat([half(), half()]).toString('base64url');
}

function forgedToken(kid: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'ES512', kid })}.${part({ typ: 'auth', sub: 'admin', uid: 1, v: 0, iat: now, exp: now + 3600 })}.${forgedSignature()}`;
}

/** CPU of REQUESTS sequential requests from `ip`, each with the headers `extra()` gives. */
async function measure(agent: Agent, url: string, ip: string, extra: () => Record<string, string>): Promise<Round> {
  const statuses = new Map<number, number>();
  const start = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    // TRUST_PROXY=true: one hop on this branch, the leftmost entry before; a single entry means the same to both.
    const status = await get(agent, url, { 'x-forwarded-for': ip, ...extra() });
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  const used = process.cpuUsage(start);
  return { cpuMs: (used.user + used.system) / 1000, statuses };
}

const describeStatuses = (s: Map<number, number>) => [...s].sort(([a], [b]) => a - b).map(([k, v]) => `${v}×${k}`).join(', ');

export async function measureForgedTokens(): Promise<{ forged: Round[]; baseline: Round[] }> {
  const dataDir = await tempDir();
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: join(dataDir, 'data'), LOG_LEVEL: 'silent', RATE_LIMIT_ENABLED: 'true', TRUST_PROXY: 'true' });
  const service = await startService(config);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const kid = String(service.services.tokens.publicJwk().kid);
    const url = `${service.url}/rest/latest/users/current`;
    const forged: Round[] = [];
    const baseline: Round[] = [];
    // The first rounds warm the JIT up (and are printed, not counted).
    for (let r = 0; r < WARM_UP_ROUNDS + ROUNDS; r++) {
      const b = await measure(agent, url, `10.1.${r}.1`, () => ({}));
      const f = await measure(agent, url, `10.2.${r}.1`, () => ({ authorization: `Bearer ${forgedToken(kid)}` }));
      const label = r < WARM_UP_ROUNDS ? `warm-up ${r + 1}` : `round ${r - WARM_UP_ROUNDS + 1}`;
      progress(`${label}: forged ${f.cpuMs.toFixed(0)} ms CPU (${describeStatuses(f.statuses)}), no token ${b.cpuMs.toFixed(0)} ms CPU (${describeStatuses(b.statuses)})`);
      if (r < WARM_UP_ROUNDS) continue;
      baseline.push(b);
      forged.push(f);
    }
    return { forged, baseline };
  } finally {
    agent.destroy();
    await service.stop();
    await removeDir(dataDir);
  }
}

export const forgedTokenBench: Benchmark = {
  name: 'forged-token',
  description: `CPU of ${REQUESTS} anonymous requests with forged ES512 tokens naming the server's key, vs the same without a token`,
  async run(): Promise<Figure[]> {
    const { forged, baseline } = await measureForgedTokens();
    const f = median(forged.map((r) => r.cpuMs));
    const b = median(baseline.map((r) => r.cpuMs));
    const extra = median(forged.map((r, i) => r.cpuMs - baseline[i]!.cpuMs));
    const note = `median of ${ROUNDS} rounds after ${WARM_UP_ROUNDS} warm-up, in-process service and client, default rate limits; forged: ${describeStatuses(forged[0]!.statuses)}`;
    return [
      figure('forged-token', `CPU, ${REQUESTS} forged-token requests`, f, 'ms', `CPU, ${REQUESTS} requests without a token`, b, note),
      figure('forged-token', 'CPU per forged-token request beyond one without a token', extra / REQUESTS, 'ms', 'CPU per request without a token', b / REQUESTS, note),
    ];
  },
};
