// What a data source type implements to collect values (virtual generator, Modbus TCP poller, MQTT
// subscriber), and what the runtime gives it. A driver never throws for a device fault: it reports
// it (the source goes to ERROR with lastError and a DATA_SOURCE event), keeps retrying with backoff,
// and reports the recovery. A driver that reads a device also says which points it cannot read
// (unreliable), from its start until each one's first value.
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { DataSourceRecord } from '../store/metadata/data-sources.js';

/** One value a driver read from its device (raw: the pipeline coerces it by the point's dataType). */
export interface ProducedValue {
  point: DataPointRecord;
  value: unknown;
  /** Epoch ms; defaults to now. */
  ts?: number;
}

/** A point a driver makes for what its device announces (a Sparkplug BIRTH's metric, with createPoints). */
export interface NewPoint {
  xid: string;
  name: string;
  deviceName?: string;
  /** The source type's locator, with dataType and settable. */
  pointLocator: Record<string, unknown>;
}

export interface DriverContext {
  /** The source as it was when the driver started (an update restarts the driver). */
  readonly source: DataSourceRecord;
  /** The source's enabled points when the driver started (a point change restarts the driver). */
  readonly points: readonly DataPointRecord[];
  /**
   * The points not read since the source started on this instance: all of them at a first start
   * (service start, enable, take-over), those an edit added when the source restarts in place. A
   * driver that reads a device marks them unreliable at start; a generator (virtual) ignores them.
   */
  readonly unread: readonly DataPointRecord[];
  /** updatePeriods × updatePeriodType in ms. */
  readonly periodMs: number;
  /**
   * Hands values to the point-value pipeline; resolves once they are stored (await it before the
   * next poll: that is the backpressure). Values a point's type cannot take are dropped and
   * reported as a fault; never rejects.
   */
  accept(values: readonly ProducedValue[]): Promise<void>;
  /** The device failed: state ERROR with this message as lastError, one DATA_SOURCE event per episode. */
  fault(message: string): void;
  /** The device answered: back to RUNNING, the episode's event returns to normal. */
  recovered(): void;
  /**
   * A value for one point could not be read (an unparsable payload): a warning on that point, counted
   * in /metrics; the source stays RUNNING. The point's next good value clears it.
   */
  warn(point: DataPointRecord, message: string): void;
  /**
   * These points cannot be read now (connection lost or refused, a time-out, a device exception for
   * their registers; for Sparkplug B, a DEATH of their node or device): marked unreliable with this
   * reason until each one's next value through accept(). Apart from fault(): a faulty source may
   * still read some points, and its points stay unreliable after it recovered until they are read.
   */
  unreliable(points: readonly DataPointRecord[], reason: string): void;
  /**
   * Makes these points on the source (set permission for its editors), as one change: the source
   * then restarts once with them (the driver calling it is stopped meanwhile). Resolves with the
   * points made; rejects when one cannot be made (an XID in use), after those made before it. Absent
   * where points cannot be made (test contexts, the bench).
   */
  createPoints?(points: readonly NewPoint[]): Promise<DataPointRecord[]>;
  /** The point's newest stored value as the API shows it (a restarted generator continues from it). */
  lastValue(point: DataPointRecord): Promise<number | boolean | string | undefined>;
  /** Aborted when the driver is stopped: pending waits and retries should end. */
  readonly signal: AbortSignal;
}

export interface SourceDriver {
  /** Starts collecting; resolves once started (not when the device answered). */
  start(): Promise<void>;
  /** Stops collecting and releases connections; after it resolves, accept() is not called again. */
  stop(): Promise<void>;
  /**
   * Writes a set value to the device (settable points). Resolves when the device accepted it, with
   * the value the device now holds when that differs from what was asked (undefined: the same);
   * rejects with an Error whose message says why otherwise. Absent when the type stores set values
   * without a device (virtual).
   */
  write?(point: DataPointRecord, value: number | boolean | string): Promise<number | boolean | string | void>;
}

export type DriverFactory = (ctx: DriverContext) => SourceDriver;


/**
 * The longest pause between reconnection attempts. Short on purpose: once the device is back, the
 * source recovers within it (plus one connect), however long the device was away; a refused TCP
 * connect every 4 s costs a device nothing.
 */
export const MAX_BACKOFF_MS = 4_000;

/** Reconnection pauses while a device is down: 1 s, 2 s, then every 4 s. */
export function backoffMs(attempt: number): number {
  return Math.min(1_000 * 2 ** Math.max(0, attempt), MAX_BACKOFF_MS);
}

/** Resolves after ms, or at once when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
