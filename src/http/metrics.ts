// The service's Prometheus metrics: process defaults, HTTP requests, and gauges read from the
// services at scrape time. One registry per Services (not prom-client's global one), so several
// instances in one process (the tests) do not collide.
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Services } from '../services/index.js';
import type { PointValueStore } from '../store/values/types.js';
import { httpMetrics, type HttpLabels } from './http-metrics.js';

const DATA_SOURCE_STATES = ['RUNNING', 'STOPPED', 'ERROR'] as const;
const ALARM_LEVELS = ['NONE', 'INFORMATION', 'IMPORTANT', 'WARNING', 'URGENT', 'CRITICAL', 'LIFE_SAFETY'] as const;
const SCRAPE_PRINCIPAL = { username: 'metrics', permissions: ['superadmin'] };

/** What the WebSocket hub exposes (api/websocket.ts). */
export interface WebSocketCount {
  readonly connectionCount: number;
}

/**
 * The value store has no write hook; wrapping its append sees every durable write (set, bulk,
 * data sources) without touching the pipeline, at the cost of one addition per batch.
 */
function countAppends(store: PointValueStore, onWritten: (values: number) => void): void {
  const append = store.append.bind(store);
  store.append = async (batch) => {
    await append(batch);
    onWritten(batch.length);
  };
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<HttpLabels>;
  private readonly duration: Histogram<HttpLabels>;
  private webSockets: WebSocketCount | undefined;

  constructor(s: Services, log: Logger) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by method, route pattern and status', labelNames: ['method', 'route', 'status'], registers });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time until the response starts, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const written = new Counter({ name: 'dds_point_values_written_total', help: 'Point values written durably to the value store', registers });
    countAppends(s.pointValues.store, (n) => written.inc(n));
    new Gauge({
      name: 'dds_write_buffer_values',
      help: 'Point values waiting in the write buffer',
      registers,
      collect() {
        this.set(s.pointValues.bufferedValues);
      },
    });
    new Gauge({ name: 'dds_write_buffer_capacity_values', help: 'Values the write buffer holds before writers wait (WRITE_BUFFER_VALUES)', registers }).set(s.config.values.writeBufferValues);
    const hub = () => this.webSockets;
    new Gauge({
      name: 'dds_websocket_connections',
      help: 'Open WebSocket connections',
      registers,
      collect() {
        this.set(hub()?.connectionCount ?? 0);
      },
    });
    // Scrape-time metadata queries: a few counts every scrape interval, off every request path.
    new Gauge({
      name: 'dds_data_sources',
      help: 'Data sources by runtime state',
      labelNames: ['state'],
      registers,
      async collect() {
        try {
          const counts = new Map<string, number>(DATA_SOURCE_STATES.map((st) => [st, 0]));
          for (const ds of await s.dataSources.all()) counts.set(ds.state, (counts.get(ds.state) ?? 0) + 1);
          for (const [state, n] of counts) this.set({ state }, n);
        } catch (err) {
          log.warn({ err }, 'metrics: counting data sources failed');
        }
      },
    });
    new Gauge({
      name: 'dds_active_events',
      help: 'Active events (alarms) by alarm level',
      labelNames: ['alarm_level'],
      registers,
      async collect() {
        try {
          for (const level of ALARM_LEVELS) {
            // total is a count query; the rows (batches) are never read.
            const { total } = await s.events.list(SCRAPE_PRINCIPAL, `eq(active,true)&eq(alarmLevel,${level})`);
            this.set({ alarm_level: level }, total);
          }
        } catch (err) {
          log.warn({ err }, 'metrics: counting active events failed');
        }
      },
    });
  }

  /** Reports the hub's open connections from now on (service.ts creates it after the app). */
  observeWebSockets(hub: WebSocketCount): void {
    this.webSockets = hub;
  }

  /** The HTTP middleware recording requests into this registry. */
  middleware() {
    return httpMetrics(this.requests, this.duration);
  }
}

const instances = new WeakMap<Services, ServiceMetrics>();

/** The metrics of one running instance: created with the app, found again by service.ts and tests. */
export function metricsFor(s: Services, log: Logger): ServiceMetrics {
  let m = instances.get(s);
  if (!m) {
    m = new ServiceMetrics(s, log);
    instances.set(s, m);
  }
  return m;
}
