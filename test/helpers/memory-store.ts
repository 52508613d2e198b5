// A plain in-memory point-value store: sorted arrays per series, upsert on equal ts, buckets computed
// naively from the values on every call. The reference the engines' contract suite compares against,
// and the store that drives computeRollup in the rollup tests.
import { BUCKET_MS, type BucketAggregate, type PointValueStore, type StoredValue, type ValueBatch } from '../../src/store/values/types.js';

export class MemoryValueStore implements Omit<PointValueStore, 'engine'> {
  readonly engine = 'memory' as const;
  private readonly data = new Map<number, StoredValue[]>();

  /** `rangeBatchSize`: values per batch that range() yields (small sizes exercise batching). */
  constructor(private readonly rangeBatchSize = 1000) {}

  async append(batch: ValueBatch): Promise<void> {
    for (let i = 0; i < batch.length; i++) {
      const value = batch.value[i] as number;
      this.upsert(batch.series[i] as number, {
        ts: batch.ts[i] as number,
        value: Number.isNaN(value) ? null : value,
        text: batch.text?.[i] ?? null,
        annotation: batch.annotation?.[i] ?? null,
      });
    }
  }

  async latest(series: number, limit: number): Promise<StoredValue[]> {
    return limit > 0 ? this.values(series).slice(-limit).reverse() : [];
  }

  async *range(series: number, from: number, to: number, limit = Infinity): AsyncIterable<StoredValue[]> {
    const inside = this.values(series)
      .filter((v) => v.ts >= from && v.ts < to)
      .slice(0, limit);
    for (let i = 0; i < inside.length; i += this.rangeBatchSize) yield inside.slice(i, i + this.rangeBatchSize);
  }

  async valueAt(series: number, t: number): Promise<StoredValue | undefined> {
    return this.values(series)
      .filter((v) => v.ts <= t)
      .at(-1);
  }

  async buckets(series: number, from: number, to: number): Promise<BucketAggregate[]> {
    const byStart = new Map<number, { ts: number; value: number }[]>();
    for (const v of this.values(series)) {
      if (v.value === null) continue;
      const start = Math.floor(v.ts / BUCKET_MS) * BUCKET_MS;
      if (start < from || start >= to) continue;
      const members = byStart.get(start) ?? [];
      members.push({ ts: v.ts, value: v.value });
      byStart.set(start, members);
    }
    return [...byStart.entries()].sort(([a], [b]) => a - b).map(([start, members]) => bucketOf(start, members));
  }

  async delete(series: number, from: number, to: number): Promise<number> {
    const values = this.values(series);
    const kept = values.filter((v) => v.ts < from || v.ts >= to);
    this.data.set(series, kept);
    return values.length - kept.length;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.data.clear();
  }

  private values(series: number): StoredValue[] {
    return this.data.get(series) ?? [];
  }

  private upsert(series: number, value: StoredValue): void {
    const values = this.data.get(series) ?? [];
    this.data.set(series, values);
    const last = values.at(-1);
    if (!last || last.ts < value.ts) {
      values.push(value);
      return;
    }
    const at = values.findIndex((v) => v.ts >= value.ts);
    if (values[at]?.ts === value.ts) values[at] = value;
    else values.splice(at, 0, value);
  }
}

/** Aggregates of one bucket's values (ascending ts), straight from the definitions. */
function bucketOf(start: number, members: { ts: number; value: number }[]): BucketAggregate {
  const values = members.map((m) => m.value);
  let innerIntegral = 0;
  for (let i = 0; i + 1 < members.length; i++) {
    const m = members[i] as { ts: number; value: number };
    innerIntegral += m.value * ((members[i + 1] as { ts: number }).ts - m.ts);
  }
  const first = members[0] as { ts: number; value: number };
  const last = members.at(-1) as { ts: number; value: number };
  return {
    start,
    count: members.length,
    sum: values.reduce((a, b) => a + b, 0),
    min: values.reduce((a, b) => Math.min(a, b)),
    max: values.reduce((a, b) => Math.max(a, b)),
    firstTs: first.ts,
    firstValue: first.value,
    lastTs: last.ts,
    lastValue: last.value,
    innerIntegral,
  };
}
