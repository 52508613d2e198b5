// For the driver benches: their source and points, and one driver run, the driver started against a
// context that only counts what it accepts (no pipeline, no store), left running for a while, then stopped.
import type { DriverContext, DriverFactory, ProducedValue } from '../../src/runtime/driver.js';
import type { DataPointRecord } from '../../src/store/metadata/data-points.js';
import type { DataSourceRecord, DataSourceType } from '../../src/store/metadata/data-sources.js';
import { pointRecord, sourceRecord } from '../../test/helpers/records.js';
import { sleep } from './stats.js';

/** The one source of a driver bench, DS_BENCH. */
export function benchSource(modelType: DataSourceType, settings: Record<string, unknown>, fields: Partial<DataSourceRecord> = {}): DataSourceRecord {
  return sourceRecord({ xid: 'DS_BENCH', name: 'bench', modelType, settings, ...fields });
}

/** `count` NUMERIC points DP_0, DP_1, … of DS_BENCH; `point(i)` gives the name and locator of each. */
export function benchPoints(count: number, modelType: DataSourceType, point: (i: number) => Pick<DataPointRecord, 'name' | 'pointLocator'>): DataPointRecord[] {
  return Array.from({ length: count }, (_, i) =>
    pointRecord({ id: i + 1, xid: `DP_${i}`, deviceName: 'bench', dataSourceXid: 'DS_BENCH', dataSourceName: 'bench', dataSourceType: modelType, ...point(i) }),
  );
}

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
