// One driver run for the driver benches: the driver started against a context that only counts what it
// accepts (no pipeline, no store), left running for a while, then stopped.
import type { DriverContext, DriverFactory, ProducedValue } from '../../src/runtime/driver.js';
import type { DataPointRecord } from '../../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../../src/store/metadata/data-sources.js';
import { sleep } from './stats.js';

export interface DriverRun {
  /** Values accepted, and the accepts that carried them. */
  values: number;
  polls: number;
  faults: string[];
  elapsedMs: number;
}

export async function runDriver(factory: DriverFactory, source: DataSourceRecord, points: DataPointRecord[], seconds: number): Promise<DriverRun> {
  const controller = new AbortController();
  const run: DriverRun = { values: 0, polls: 0, faults: [], elapsedMs: 0 };
  const ctx: DriverContext = {
    source,
    points,
    unread: [],
    periodMs: 1,
    signal: controller.signal,
    accept(batch: readonly ProducedValue[]) {
      run.values += batch.length;
      run.polls++;
      return Promise.resolve();
    },
    fault: (message) => run.faults.push(message),
    warn: (point, message) => run.faults.push(`${point.xid}: ${message}`),
    unreliable: () => undefined,
    recovered: () => undefined,
    lastValue: () => Promise.resolve(undefined),
  };
  const driver = factory(ctx);
  const started = performance.now();
  await driver.start();
  await sleep(seconds * 1000);
  await driver.stop();
  controller.abort();
  run.elapsedMs = performance.now() - started;
  return run;
}
