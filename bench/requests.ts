// The request path: authenticated reads (latest value, /users/current) with a session cookie and with a
// Bearer JWT, /health (readiness) and /health/live, 10 connections, rate limits off. Baseline: a bare
// Koa + @koa/router route answering a constant body, in its own process like the service (lib/bare-koa.ts),
// measured before and after the service and averaged so drifting machine load hits both sides.
// Target (issue 14): every authenticated read ≥ 0.8× the bare route, p99 ≤ 5 ms.
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { createToken, login, type LoggedIn } from './lib/api.js';
import { load, loadSeconds, type LoadResult } from './lib/load.js';
import { figure, type Figure } from './lib/report.js';
import { startBareKoa, startSeededService } from './lib/server.js';

const CONNECTIONS = 10;
const XID = 'bench-latest';

async function seedPoint(url: string, session: LoggedIn): Promise<void> {
  const headers = { 'content-type': 'application/json', cookie: session.cookie, 'x-xsrf-token': session.xsrf };
  const send = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${url}/rest/latest${path}`, { method, headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  await send('POST', '/data-sources', { xid: 'bench-req-src', name: 'requests bench', modelType: 'VIRTUAL', enabled: true });
  await send('POST', '/data-points', { xid: XID, name: XID, dataSourceXid: 'bench-req-src', enabled: true, pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', settable: true } });
  await send('PUT', `/point-values/${XID}`, { dataType: 'NUMERIC', value: 21.5, timestamp: Date.now() });
}

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
}

export const requests: Benchmark = {
  name: 'requests',
  description: `latest value, /users/current (session, Bearer) and /health, ${CONNECTIONS} connections, vs a bare Koa route`,
  async run(): Promise<Figure[]> {
    const bare = await startBareKoa();
    const service = await startSeededService({ RATE_LIMIT_ENABLED: 'false' });
    try {
      const session = await login(service.url);
      const token = await createToken(service.url, session);
      await seedPoint(service.url, session);
      const latest = `${service.url}/rest/latest/point-values/latest/${XID}`;
      const current = `${service.url}/rest/latest/users/current`;
      const bareTarget: Target = { name: 'bare Koa route', url: bare.url, headers: {} };
      const targets: Target[] = [
        { name: 'latest value, session', url: latest, headers: { cookie: session.cookie } },
        { name: 'latest value, Bearer', url: latest, headers: { authorization: `Bearer ${token}` } },
        { name: '/users/current, session', url: current, headers: { cookie: session.cookie } },
        { name: '/users/current, Bearer', url: current, headers: { authorization: `Bearer ${token}` } },
        { name: 'GET /health/live', url: `${service.url}/health/live`, headers: {} },
        { name: 'GET /health (readiness)', url: `${service.url}/health`, headers: {} },
      ];
      for (const t of [bareTarget, ...targets]) await load({ url: t.url, headers: t.headers, connections: CONNECTIONS, seconds: 1 }); // warm-up

      const seconds = loadSeconds(6);
      const run = async (t: Target) => {
        const r = await load({ url: t.url, headers: t.headers, connections: CONNECTIONS, seconds });
        progress(`${t.name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.ok} ok${r.problems ? `, ${r.problems}` : ''}`);
        return r;
      };
      const before = await run(bareTarget);
      const measured: [Target, LoadResult][] = [];
      for (const t of targets) measured.push([t, await run(t)]);
      const after = await run(bareTarget);
      const base = { rps: (before.rps + after.rps) / 2, p50: (before.p50 + after.p50) / 2, p99: (before.p99 + after.p99) / 2 };
      const baseline = 'bare Koa route (mean of 2 runs)';
      const note = (r: LoadResult) => `${CONNECTIONS} conn, ${seconds} s${r.problems ? `; ${r.problems}` : ''}`;
      const out: Figure[] = [];
      for (const [t, r] of measured) {
        out.push(figure('requests', `${t.name} throughput (target ≥ 0.8×)`, r.rps, 'req/s', `${baseline} req/s`, base.rps, note(r)));
        out.push(figure('requests', `${t.name} p50`, r.p50, 'ms', `${baseline} p50`, base.p50, note(r)));
        out.push(figure('requests', `${t.name} p99 (target ≤ 5 ms)`, r.p99, 'ms', `${baseline} p99`, base.p99, note(r)));
      }
      return out;
    } finally {
      await service.stop();
      await bare.stop();
    }
  },
};
