// Values QuestDB has committed but not yet applied. An ILP request is durable in the tables' WAL when it
// returns, but readers see it only once a background job has applied it, some tens of milliseconds to
// seconds later. Waiting for that before answering made ingest wait on QuestDB's apply; instead an
// append is answered when its request is committed, and until its rows are applied this store's reads
// merge them from here. Each append adds a layer; a layer goes when the WAL shows its transaction
// applied (wal.ts). A later layer wins over an earlier one and over the table for the same (series, ts),
// as QuestDB's dedup will once applied. Other instances reading the same tables see the values once
// applied.
import type { SortedRows } from '../sort.js';
import type { BucketAggregate, StoredValue, ValueBatch } from '../types.js';

/**
 * One append's rows, as sent: the batch ordered by sortRows (one row per (series, ts), ascending per
 * series), and the hourly rows it wrote per series. Values become objects only when read.
 */
export interface Layer {
  batch: ValueBatch;
  sorted: SortedRows;
  /** Per series, its segment in `sorted`. */
  segment: Map<number, number>;
  hours: Map<number, BucketAggregate[]>;
  size: number;
}

export function layerOf(batch: ValueBatch, sorted: SortedRows, hourly: readonly { series: number; aggregate: BucketAggregate }[]): Layer {
  const segment = new Map<number, number>();
  for (let g = 0; g < sorted.segSeries.length; g++) segment.set(sorted.segSeries[g]!, g);
  const hours = new Map<number, BucketAggregate[]>();
  for (const { series, aggregate } of hourly) {
    let list = hours.get(series);
    if (!list) hours.set(series, (list = []));
    list.push(aggregate);
  }
  return { batch, sorted, segment, hours, size: sorted.n };
}

export class Unapplied {
  /** Oldest first. */
  private layers: Layer[] = [];
  private count = 0;

  /** Values held, over all layers. */
  get size(): number {
    return this.count;
  }

  add(layer: Layer): void {
    this.layers.push(layer);
    this.count += layer.size;
  }

  remove(layer: Layer): void {
    const i = this.layers.indexOf(layer);
    if (i < 0) return;
    this.layers.splice(i, 1);
    this.count -= layer.size;
  }

  /** The layers held now (to drop them once the WAL shows everything before now applied). */
  snapshot(): readonly Layer[] {
    return [...this.layers];
  }

  has(series: number): boolean {
    return this.layers.some((l) => l.segment.has(series));
  }

  /** The series' values with from <= ts < to, ascending, the newest layer's winning per ts. */
  range(series: number, from: number, to: number): StoredValue[] {
    const byTs = new Map<number, StoredValue>();
    for (const layer of this.layers) {
      const g = layer.segment.get(series);
      if (g === undefined) continue;
      const { batch, sorted } = layer;
      for (let k = sorted.segStart[g]!; k < sorted.segEnd[g]!; k++) {
        const i = sorted.perm[k]!;
        const ts = batch.ts[i]!;
        if (ts < from || ts >= to) continue;
        const value = batch.value[i]!;
        // As the table will answer: NaN is NULL, and -0 was sent as 0.
        byTs.set(ts, { ts, value: Number.isNaN(value) ? null : value + 0, text: batch.text?.[i] ?? null, annotation: batch.annotation?.[i] ?? null });
      }
    }
    return [...byTs.values()].sort((a, b) => a.ts - b.ts);
  }

  /** The series' hourly rows starting in [from, to), the newest layer's winning per hour. */
  hours(series: number, from: number, to: number): Map<number, BucketAggregate> {
    const byStart = new Map<number, BucketAggregate>();
    for (const layer of this.layers) {
      for (const h of layer.hours.get(series) ?? []) if (h.start >= from && h.start < to) byStart.set(h.start, h);
    }
    return byStart;
  }
}

/** Two ascending runs of values merged, `newer` winning on equal ts; at most `limit`. */
export function mergeValues(older: readonly StoredValue[], newer: readonly StoredValue[], limit = Infinity): StoredValue[] {
  const out: StoredValue[] = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < older.length || j < newer.length)) {
    const a = older[i];
    const b = newer[j];
    if (b === undefined || (a !== undefined && a.ts < b.ts)) {
      out.push(a!);
      i++;
    } else {
      if (a !== undefined && a.ts === b.ts) i++;
      out.push(b);
      j++;
    }
  }
  return out;
}

/** Hourly rows of the table with `overrides` put in their place (by start), ascending. */
export function mergeHours(rows: readonly BucketAggregate[], overrides: ReadonlyMap<number, BucketAggregate>): BucketAggregate[] {
  if (overrides.size === 0) return rows as BucketAggregate[];
  const byStart = new Map(rows.map((r) => [r.start, r]));
  for (const [start, h] of overrides) byStart.set(start, h);
  return [...byStart.values()].sort((a, b) => a.start - b.start);
}
