// A real DuckDB value store in a temporary directory, a spy around a store, and batch builders,
// for the pipeline suites (write buffer, latest cache).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuckDbStore, type DuckDbValueStore } from '../../src/store/values/duckdb/index.js';
import type { PointValueStore, StoredValue, ValueBatch } from '../../src/store/values/types.js';

export interface TempStore {
  store: DuckDbValueStore;
  dispose(): Promise<void>;
}

export async function openTempDuckDb(): Promise<TempStore> {
  const dir = await mkdtemp(join(tmpdir(), 'dds-pipeline-'));
  const store = await openDuckDbStore(dir, { readers: 2 });
  return {
    store,
    async dispose() {
      await store.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface Row {
  series: number;
  ts: number;
  value?: number;
  text?: string | null;
  annotation?: string | null;
}

export function batchOf(rows: readonly Row[]): ValueBatch {
  const hasText = rows.some((r) => r.text != null);
  const hasAnnotation = rows.some((r) => r.annotation != null);
  return {
    length: rows.length,
    series: Int32Array.from(rows, (r) => r.series),
    ts: Float64Array.from(rows, (r) => r.ts),
    value: Float64Array.from(rows, (r) => r.value ?? NaN),
    text: hasText ? rows.map((r) => r.text ?? null) : null,
    annotation: hasAnnotation ? rows.map((r) => r.annotation ?? null) : null,
  };
}

/** `count` numeric rows of one series at ts = start, start + step, ... with value = ts / step. */
export function seriesBatch(series: number, start: number, count: number, step = 1): ValueBatch {
  const rows: Row[] = [];
  for (let i = 0; i < count; i++) rows.push({ series, ts: start + i * step, value: (start + i * step) / step });
  return batchOf(rows);
}

export function numeric(ts: number, value: number, annotation: string | null = null): StoredValue {
  return { ts, value, text: null, annotation };
}

/** Reads every value of a series, oldest first. */
export async function readAll(store: Pick<PointValueStore, 'range'>, series: number): Promise<StoredValue[]> {
  const out: StoredValue[] = [];
  for await (const batch of store.range(series, -8.64e15, 8.64e15)) out.push(...batch);
  return out;
}

/**
 * A PointValueStore that delegates to `inner` and counts calls; `beforeAppend` runs first on every
 * append (to hold it at a gate or to make it fail).
 */
export class SpyStore implements PointValueStore {
  readonly engine: PointValueStore['engine'];
  /** Set to let the write buffer run several appends at once (as QuestDB does). */
  appendConcurrency: number | undefined;
  /** Set to give the write buffer a time-out, as a server store has (STORE_TIMEOUT_MS). */
  timeoutMs: number | undefined;
  latestCalls = 0;
  appendCalls = 0;
  appendSizes: number[] = [];
  beforeAppend: ((batch: ValueBatch, call: number) => Promise<void> | void) | undefined;

  constructor(readonly inner: PointValueStore) {
    this.engine = inner.engine;
  }

  async append(batch: ValueBatch): Promise<void> {
    const call = ++this.appendCalls;
    this.appendSizes.push(batch.length);
    if (this.beforeAppend) await this.beforeAppend(batch, call);
    return this.inner.append(batch);
  }
  /** Awaited after the store answered latest() and before the answer is returned (a slow read). */
  afterLatest: (() => Promise<void> | void) | undefined;

  async latest(series: number, limit: number): Promise<StoredValue[]> {
    this.latestCalls++;
    const values = await this.inner.latest(series, limit);
    if (this.afterLatest) await this.afterLatest();
    return values;
  }
  range(series: number, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]> {
    return this.inner.range(series, from, to, limit);
  }
  valueAt(series: number, t: number) {
    return this.inner.valueAt(series, t);
  }
  buckets(series: number, from: number, to: number) {
    return this.inner.buckets(series, from, to);
  }
  delete(series: number, from: number, to: number) {
    return this.inner.delete(series, from, to);
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}

/** A promise and the function that resolves it. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Tracks whether a promise has settled, without letting a rejection go unhandled. */
export function track<T>(p: Promise<T>): { promise: Promise<T>; settled: () => boolean; state: () => 'pending' | 'resolved' | 'rejected'; error: () => unknown } {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let error: unknown;
  p.then(
    () => (state = 'resolved'),
    (err: unknown) => {
      state = 'rejected';
      error = err;
    },
  );
  return { promise: p, settled: () => state !== 'pending', state: () => state, error: () => error };
}

/** Lets queued callbacks and I/O run for a moment. */
export function settle(ms = 20): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
