// The service's Prometheus metrics: process defaults, HTTP requests, and gauges read from the
// services at scrape time. One registry per Services (not prom-client's global one), so several
// instances in one process (the tests) do not collide.
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';
import type { DataSourceService } from '../services/data-sources.js';
import type { EventHandlerService } from '../services/event-handlers.js';
import type { EventService } from '../services/events.js';
import type { PointValueService } from '../services/point-values.js';
import type { RetentionService } from '../services/retention.js';
import type { TokenService } from '../services/tokens.js';
import type { DeliveryCounts } from '../store/metadata/event-handlers.js';
import { httpMetrics, type HttpLabels } from './http-metrics.js';

const DATA_SOURCE_STATES = ['RUNNING', 'STOPPED', 'ERROR'] as const;
const ALARM_LEVELS = ['NONE', 'INFORMATION', 'IMPORTANT', 'WARNING', 'URGENT', 'CRITICAL', 'LIFE_SAFETY'] as const;
const SCRAPE_PRINCIPAL = { username: 'metrics', permissions: ['superadmin'] };

/** What the WebSocket hub exposes (api/websocket.ts). */
export interface WebSocketCount {
  readonly connectionCount: number;
}

/** What the metrics read at scrape time. */
export interface MetricsSources {
  config: Pick<Config, 'values' | 'instanceName'>;
  db: { readonly engine: string };
  /** Values the store's append hook has counted. */
  writes: { readonly values: number };
  pointValues: Pick<PointValueService, 'bufferedValues'>;
  dataSources: Pick<DataSourceService, 'all'>;
  events: Pick<EventService, 'list'>;
  tokens: Pick<TokenService, 'signatureVerifications'>;
  retention: Pick<RetentionService, 'purgedValues' | 'lastPurge' | 'purgedDeliveries'>;
  eventHandlers: Pick<EventHandlerService, 'pendingJobs'>;
  deliveryCounts: Pick<DeliveryCounts, 'entries'>;
  /** Per-point warnings (unreadable messages) and driver starts, counted per source xid; the sources run here. */
  runtime: {
    readonly warnings: { readonly counts: ReadonlyMap<string, number> };
    readonly starts: ReadonlyMap<string, number>;
    readonly runningHere: { readonly total: number; readonly faulted: number };
  };
}

/** A counter of a running total kept elsewhere, caught up at each scrape. */
function totalCounter(registers: Registry[], name: string, help: string, total: () => number): void {
  let counted = 0;
  new Counter({
    name,
    help,
    registers,
    collect() {
      const now = total();
      this.inc(now - counted);
      counted = now;
    },
  });
}

/** The same, a running total per label set. */
function labelledTotalCounter<L extends string>(
  registers: Registry[],
  name: string,
  help: string,
  labelNames: readonly L[],
  totals: () => [Record<L, string>, number][],
): void {
  const counted = new Map<string, number>();
  new Counter<L>({
    name,
    help,
    labelNames,
    registers,
    collect() {
      for (const [labels, now] of totals()) {
        const key = labelNames.map((l) => labels[l]).join('\u0000');
        this.inc(labels, now - (counted.get(key) ?? 0));
        counted.set(key, now);
      }
    },
  });
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<HttpLabels>;
  private readonly duration: Histogram<HttpLabels>;
  private webSockets: WebSocketCount | undefined;

  constructor(s: MetricsSources, log: Logger) {
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
    // The value store's append hook counts (compose.ts); the counter catches up at scrape time.
    totalCounter(registers, 'dds_point_values_written_total', 'Point values written durably to the value store', () => s.writes.values);
    labelledTotalCounter(
      registers,
      'dds_data_point_warnings_total',
      'Values a data source could not read for a point (e.g. an unparsable MQTT payload), by source xid, since start',
      ['source'],
      () => [...s.runtime.warnings.counts].map(([source, n]) => [{ source }, n]),
    );
    labelledTotalCounter(
      registers,
      'dds_data_source_starts_total',
      'Data source driver starts on this instance (at start-up, on a save of the source or of its points, on a take-over), by source xid, since start',
      ['source'],
      () => [...s.runtime.starts].map(([source, n]) => [{ source }, n]),
    );
    totalCounter(registers, 'dds_point_values_purged_total', 'Point values deleted by retention purges and POST /point-values/purge since start', () => s.retention.purgedValues);
    new Gauge({
      name: 'dds_history_last_purge_timestamp_seconds',
      help: 'When the last retention purge ended (unix seconds; 0: none known yet)',
      registers,
      collect() {
        this.set((s.retention.lastPurge ?? 0) / 1000);
      },
    });
    labelledTotalCounter(
      registers,
      'dds_event_handler_deliveries_total',
      'Event handler deliveries recorded by this instance since start, by handler type and outcome (SENT, FAILED: to be retried or refused for good, GAVE_UP: after 24 h of retries or refused at raise by a full queue)',
      ['handler_type', 'outcome'],
      () => [...s.deliveryCounts.entries()].map(({ handlerType, outcome, count }) => [{ handler_type: handlerType, outcome }, count]),
    );
    totalCounter(
      registers,
      'dds_event_handler_deliveries_purged_total',
      'Event handler deliveries deleted by this instance\'s retention runs (EVENT_HANDLER_DELIVERY_RETENTION) since start',
      () => s.retention.purgedDeliveries,
    );
    new Gauge({
      name: 'dds_event_handler_jobs_pending',
      help: 'Event handler jobs waiting in the cluster (due, under way or waiting for a retry), by handler type',
      labelNames: ['handler_type'],
      registers,
      async collect() {
        try {
          for (const [type, n] of await s.eventHandlers.pendingJobs()) this.set({ handler_type: type }, n);
        } catch (err) {
          log.warn({ err }, 'metrics: counting event handler jobs failed');
        }
      },
    });
    // Each costs ~1.3–2.7 ms of CPU: a client refused by a rate limit must not make it grow.
    totalCounter(
      registers,
      'dds_token_signature_verifications_total',
      'JWT signature verifications (tokens not answered from the verified-token cache nor refused before)',
      () => s.tokens.signatureVerifications,
    );
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
    // Which instance this is: `dds_instance`, not `instance`, which Prometheus sets on every series it
    // scrapes (the target's address) and would rename ours to `exported_instance`. A label on this
    // one series (and on the sources run here), not on every series: a default name (host:pid) changes
    // with every restart, and every series would start anew with it.
    const instance = s.config.instanceName;
    new Gauge({
      name: 'dds_instance_info',
      help: 'This instance: its INSTANCE_NAME and engines (always 1)',
      labelNames: ['dds_instance', 'metadata', 'value_store'],
      registers,
    }).set({ dds_instance: instance, metadata: s.db.engine, value_store: s.config.values.engine }, 1);
    new Gauge({
      name: 'dds_data_sources_run_here',
      help: 'Data sources this instance runs (holds the lease of), by state: RUNNING, or ERROR while the device fails',
      labelNames: ['dds_instance', 'state'],
      registers,
      collect() {
        const { total, faulted } = s.runtime.runningHere;
        this.set({ dds_instance: instance, state: 'RUNNING' }, total - faulted);
        this.set({ dds_instance: instance, state: 'ERROR' }, faulted);
      },
    });
    // Scrape-time metadata queries: a few counts every scrape interval, off every request path.
    new Gauge({
      name: 'dds_data_sources',
      help: 'Data sources of the installation by runtime state (every instance counts them all; dds_data_sources_run_here counts its own)',
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

const instances = new WeakMap<MetricsSources, ServiceMetrics>();

/** The metrics of one running instance: created with the app, found again by service.ts and tests. */
export function metricsFor(s: MetricsSources, log: Logger): ServiceMetrics {
  let m = instances.get(s);
  if (!m) {
    m = new ServiceMetrics(s, log);
    instances.set(s, m);
  }
  return m;
}
