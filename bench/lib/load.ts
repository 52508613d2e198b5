// HTTP load with autocannon: successful requests per second and latency percentiles.
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  seconds?: number;
  /** Paths (with query) each connection cycles through in order, instead of url's own path. */
  paths?: readonly string[];
}

export interface LoadResult {
  /** 2xx responses per second over the whole run. */
  rps: number;
  /** Response-time percentiles of the 2xx responses, in milliseconds. */
  p50: number;
  p99: number;
  ok: number;
  failed: number;
  /** Status codes other than 2xx, errors and timeouts, for the note column. */
  problems: string;
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  // autocannon's own histogram keeps whole milliseconds; collect the exact 2xx response times instead.
  let times = new Float64Array(1 << 16);
  let count = 0;
  const instance = autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections ?? 10,
    duration: options.seconds ?? 10,
    timeout: 10,
    ...(options.paths ? { requests: options.paths.map((path) => ({ path })) } : {}),
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode < 200 || statusCode >= 300) return;
    if (count === times.length) {
      const bigger = new Float64Array(times.length * 2);
      bigger.set(times);
      times = bigger;
    }
    times[count++] = responseTime;
  });
  const r = await instance;
  const sorted = times.subarray(0, count).sort();
  const other = Object.entries(r.statusCodeStats)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, s]) => `${s.count}×${code}`);
  if (r.errors) other.push(`${r.errors} errors`);
  if (r.timeouts) other.push(`${r.timeouts} timeouts`);
  const ok = r['2xx'];
  return {
    rps: ok / r.duration,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    ok,
    failed: r.non2xx + r.errors,
    problems: other.join(', '),
  };
}

/** Seconds per load run: BENCH_SECONDS overrides the benchmark's own default. */
export function loadSeconds(fallback: number): number {
  const raw = Number(process.env.BENCH_SECONDS);
  return Number.isFinite(raw) && raw > 0 ? raw : fallback;
}
