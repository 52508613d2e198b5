// Login throughput: POST /rest/latest/login with correct admin credentials and a fixed double-submit
// XSRF token, rate limits off. Baseline: raw argon2id verification of the same kind of hash in-process.
import { hashPassword, verifyPassword } from '../src/services/passwords.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { ADMIN, loginHeaders } from './lib/api.js';
import { load, loadSeconds } from './lib/load.js';
import { figure, type Figure } from './lib/report.js';
import { startSeededService } from './lib/server.js';
import { median, msSince } from './lib/stats.js';

const CONNECTIONS = 10;

/** Verifications per second with `inFlight` running at once, for about `seconds`. */
async function verifyRate(hash: string, inFlight: number, seconds: number): Promise<number> {
  const start = process.hrtime.bigint();
  const deadline = seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (msSince(start) < deadline) {
        if (!(await verifyPassword(hash, ADMIN.password))) throw new Error('argon2 verify failed');
        done++;
      }
    }),
  );
  return done / (msSince(start) / 1000);
}

/** Median latency of one verification at a time. */
async function verifyLatency(hash: string, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await verifyPassword(hash, ADMIN.password);
    times.push(msSince(start));
  }
  return median(times);
}

export const loginBench: Benchmark = {
  name: 'login',
  description: `POST /login, ${CONNECTIONS} connections, vs raw argon2id verify`,
  async run(): Promise<Figure[]> {
    const hash = await hashPassword(ADMIN.password);
    await verifyLatency(hash, 3); // warm-up
    // The baseline is measured before and after the load and averaged, so a change in what else
    // the machine is doing shows up in both sides of the ratio.
    const latencyBefore = await verifyLatency(hash, 30);
    const rateBefore = await verifyRate(hash, CONNECTIONS, 3);
    progress(`raw argon2id verify before: ${rateBefore.toFixed(1)}/s with ${CONNECTIONS} in flight, ${latencyBefore.toFixed(1)} ms one at a time`);

    const service = await startSeededService({ RATE_LIMIT_ENABLED: 'false' });
    try {
      const seconds = loadSeconds(10);
      const r = await load({
        url: `${service.url}/rest/latest/login`,
        method: 'POST',
        headers: loginHeaders('0123456789abcdef0123456789abcdef0123456789abcdef'),
        body: JSON.stringify(ADMIN),
        connections: CONNECTIONS,
        seconds,
      });
      progress(`login: ${r.rps.toFixed(1)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.ok} ok${r.problems ? `, ${r.problems}` : ''}`);
      await service.stop();
      const latencyAfter = await verifyLatency(hash, 30);
      const rateAfter = await verifyRate(hash, CONNECTIONS, 3);
      progress(`raw argon2id verify after: ${rateAfter.toFixed(1)}/s with ${CONNECTIONS} in flight, ${latencyAfter.toFixed(1)} ms one at a time`);
      const rate = (rateBefore + rateAfter) / 2;
      const latency = (latencyBefore + latencyAfter) / 2;
      const note = `${CONNECTIONS} conn, ${seconds} s${r.problems ? `; ${r.problems}` : ''}`;
      return [
        figure('login', 'login throughput', r.rps, 'req/s', `argon2id verify/s, ${CONNECTIONS} in flight`, rate, note),
        figure('login', 'login latency p50', r.p50, 'ms', 'argon2id verify, 1 at a time', latency, note),
        figure('login', 'login latency p99', r.p99, 'ms', 'argon2id verify, 1 at a time', latency, note),
      ];
    } finally {
      await service.stop();
    }
  },
};
