// Authenticated request throughput: GET /rest/latest/users/current with a Bearer JWT and with a
// session cookie, rate limits off. Baseline: GET /health (anonymous, one metadata ping) on the same server.
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { createToken, login } from './lib/api.js';
import { load, loadSeconds, type LoadResult } from './lib/load.js';
import { figure, type Figure } from './lib/report.js';
import { startSeededService } from './lib/server.js';

const CONNECTIONS = 10;

export const requests: Benchmark = {
  name: 'requests',
  description: `GET /users/current with Bearer and session, ${CONNECTIONS} connections, vs GET /health`,
  async run(): Promise<Figure[]> {
    const service = await startSeededService({ RATE_LIMIT_ENABLED: 'false' });
    try {
      const session = await login(service.url);
      const token = await createToken(service.url, session);
      const current = `${service.url}/rest/latest/users/current`;
      const targets: { name: string; url: string; headers: Record<string, string> }[] = [
        { name: 'GET /health', url: `${service.url}/health`, headers: {} },
        { name: 'Bearer JWT', url: current, headers: { authorization: `Bearer ${token}` } },
        { name: 'session cookie', url: current, headers: { cookie: session.cookie } },
      ];
      for (const t of targets) await load({ url: t.url, headers: t.headers, connections: CONNECTIONS, seconds: 1 }); // warm-up

      // /health runs before and after the others and is averaged, so drifting machine load hits both sides.
      const seconds = loadSeconds(6);
      const results: LoadResult[] = [];
      for (const t of [...targets, targets[0]!]) {
        const r = await load({ url: t.url, headers: t.headers, connections: CONNECTIONS, seconds });
        progress(`${t.name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.ok} ok${r.problems ? `, ${r.problems}` : ''}`);
        results.push(r);
      }
      const [healthBefore, bearer, cookie, healthAfter] = results as [LoadResult, LoadResult, LoadResult, LoadResult];
      const health = {
        rps: (healthBefore.rps + healthAfter.rps) / 2,
        p50: (healthBefore.p50 + healthAfter.p50) / 2,
        p99: (healthBefore.p99 + healthAfter.p99) / 2,
      };
      const note = (r: LoadResult) => `${CONNECTIONS} conn, ${seconds} s${r.problems ? `; ${r.problems}` : ''}`;
      const out: Figure[] = [];
      for (const [label, r] of [
        ['/users/current, Bearer', bearer],
        ['/users/current, session', cookie],
      ] as const) {
        out.push(figure('requests', `${label} throughput`, r.rps, 'req/s', 'GET /health req/s (mean of 2 runs)', health.rps, note(r)));
        out.push(figure('requests', `${label} p50`, r.p50, 'ms', 'GET /health p50 (mean of 2 runs)', health.p50, note(r)));
        out.push(figure('requests', `${label} p99`, r.p99, 'ms', 'GET /health p99 (mean of 2 runs)', health.p99, note(r)));
      }
      return out;
    } finally {
      await service.stop();
    }
  },
};
