// A DriverContext standing in for the runtime when a test runs a driver alone: it keeps the values the
// driver hands on and its faults, and answers everything else as a source with no history would.
import type { DriverContext, ProducedValue } from '../../src/runtime/driver.js';
import type { DataPointRecord } from '../../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../../src/store/metadata/data-sources.js';

export interface Recording {
  ctx: DriverContext;
  values: ProducedValue[];
  faults: string[];
  /** What the runtime does once the driver has stopped: aborts the context's signal. */
  abort(): void;
}

/** Every point is unread, as at a source's first start. */
export function recordingContext(source: DataSourceRecord, points: DataPointRecord[], periodMs: number): Recording {
  const values: ProducedValue[] = [];
  const faults: string[] = [];
  const controller = new AbortController();
  const ctx: DriverContext = {
    source,
    points,
    unread: points,
    periodMs,
    signal: controller.signal,
    accept: (batch) => {
      values.push(...batch);
      return Promise.resolve();
    },
    fault: (message) => void faults.push(message),
    recovered: () => undefined,
    warn: () => undefined,
    unreliable: () => undefined,
    lastValue: () => Promise.resolve(undefined),
  };
  return { ctx, values, faults, abort: () => controller.abort() };
}
