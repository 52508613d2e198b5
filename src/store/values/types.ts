// The point-value store: the few verbs the historian needs, implemented by each engine
// (DuckDB embedded, QuestDB server, PostgreSQL server). Series are data point ids; timestamps are epoch ms.
//
// Semantics every engine shares (the contract test suite checks them):
// - One value per (series, ts): writing a timestamp again replaces the earlier value (upsert), so a
//   retried bulk request is harmless.
// - Numeric data types (NUMERIC, MULTISTATE, BINARY as 0/1) live in `value`; ALPHANUMERIC in `text`.
// - `append` resolves only when the values are durable and visible to every later read.
// - Timestamps are integers within the range of a JS Date (±8.64e15 ms); values are finite, or NaN
//   in a batch meaning "no numeric value" (an ALPHANUMERIC row). The pipeline checks both.
// - `range` yields batches whose sizes are the engine's choice.

import type { SeriesBuckets } from './bucket-columns.js';

/** A stored value as read back. */
export interface StoredValue {
  ts: number;
  /** Numeric value (BINARY as 0 or 1); null for ALPHANUMERIC. */
  value: number | null;
  /** ALPHANUMERIC value; null otherwise. */
  text: string | null;
  annotation: string | null;
}

/**
 * Values to append, column by column: no per-value objects on the ingest path. Rows need not be
 * sorted nor belong to one series.
 */
export interface ValueBatch {
  length: number;
  series: Int32Array;
  ts: Float64Array;
  /** NaN where the row is ALPHANUMERIC. */
  value: Float64Array;
  /** Per-row text, or null when the batch holds no ALPHANUMERIC row. */
  text: (string | null)[] | null;
  /** Per-row annotation, or null when the batch holds none. */
  annotation: (string | null)[] | null;
}

/**
 * Partial aggregates of the numeric values of one series inside one bucket [start, start + size).
 * Mergeable in time order, so a rollup over whole buckets never reads raw rows.
 */
export interface BucketAggregate {
  start: number;
  count: number;
  sum: number;
  min: number;
  max: number;
  firstTs: number;
  firstValue: number;
  lastTs: number;
  lastValue: number;
  /** Σ v_i × (t_{i+1} − t_i) over consecutive values inside the bucket, in value × ms. */
  innerIntegral: number;
}

/** Size of the buckets engines keep partial aggregates for. */
export const BUCKET_MS = 3_600_000;

/** The instants (epoch ms, inclusive) a store can hold. */
export interface TimeRange {
  readonly min: number;
  readonly max: number;
}

/** What a Date can hold, and so what a store without a narrower range takes: ±8.64e15 ms. */
export const INSTANT_RANGE: TimeRange = { min: -8.64e15, max: 8.64e15 };

export interface PointValueStore {
  readonly engine: 'duckdb' | 'questdb' | 'postgres';
  /** The timestamps it can store, when narrower than INSTANT_RANGE (QuestDB: 1970 to 9999). */
  readonly timeRange?: TimeRange;
  /**
   * How many appends the write buffer (write-buffer.ts, on write-queue.ts) may have under way at once
   * (default 1). A store that takes more (QuestDB: each is checked, and waits for room, while the one
   * before it is sent) gets them in call order and answers them in that order.
   */
  readonly appendConcurrency?: number;
  /**
   * A server engine's time-out per call (STORE_TIMEOUT_MS, unavailable-store.ts): reads wait no longer,
   * and the write buffer answers its writers 503 after it. Absent for an embedded engine (DuckDB).
   */
  readonly timeoutMs?: number;
  append(batch: ValueBatch): Promise<void>;
  /** Newest first, at most `limit`. */
  latest(series: number, limit: number): Promise<StoredValue[]>;
  /** Values with from <= ts < to, oldest first, in batches; at most `limit` values when given. */
  range(series: number, from: number, to: number, limit?: number): AsyncIterable<StoredValue[]>;
  /** The value in force at t: the newest with ts <= t. */
  valueAt(series: number, t: number): Promise<StoredValue | undefined>;
  /** Partial aggregates of the buckets (BUCKET_MS, aligned to the epoch) starting in [from, to), ascending; empty buckets omitted. */
  buckets(series: number, from: number, to: number): Promise<BucketAggregate[]>;
  /**
   * The same as columns (the bucket cache has them so): the rollup engine's form on the hot path.
   * The columns may share memory with the store's; they never change, and the caller must not change them.
   */
  bucketColumns?(series: number, from: number, to: number): Promise<SeriesBuckets>;
  /** Deletes values with from <= ts < to; returns how many. */
  delete(series: number, from: number, to: number): Promise<number>;
  /**
   * Drops, for every series at once, whole time partitions that hold only values before `before`
   * (with their hourly aggregates); returns how many values went. Absent where the engine has no
   * such partitions: retention then deletes series by series (purge.ts).
   */
  dropBefore?(before: number): Promise<number>;
  /**
   * The series that may hold values older than `before` (every series that does is among them),
   * found without a query per series, so that retention over many points visits only those. Absent
   * where the engine has no such way: retention then asks range() of every series (purge.ts).
   */
  seriesBefore?(before: number): Promise<number[]>;
  /** Rewrites storage for read speed (DuckDB: sorted by series and time); absent where the engine needs none. */
  compact?(): Promise<void>;
  /**
   * Another instance wrote or deleted values of these series from these timestamps on (series → the
   * earliest ts touched), or, without an argument, anything may have changed: what is cached about
   * them is out of date. Absent where nothing is cached.
   */
  changedElsewhere?(earliest?: ReadonlyMap<number, number>): void;
  /** A cheap round trip, for /health. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
