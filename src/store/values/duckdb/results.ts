// Query results of the reads turned into the store's values: stored values from SQL.newest,
// SQL.newestOne and SQL.oldest; hourly aggregates from SQL.buckets, read off the chunks' vectors.
import type { DuckDBDoubleVector, DuckDBIntegerVector, DuckDBMaterializedResult, DuckDBResultReader, DuckDBVarCharVector } from '@duckdb/node-api';
import { SeriesBuckets } from '../bucket-columns.js';
import { BUCKET_MS, type StoredValue } from '../types.js';

/** The row of SQL.newestOne: none when its window held no value (max(ts) is NULL). */
export function toNewestOne(reader: DuckDBResultReader): StoredValue[] {
  if (reader.currentRowCount === 0) return [];
  const ts = reader.value(0, 0) as number | null;
  if (ts === null) return [];
  const value = reader.value(1, 0) as number | null;
  const text = reader.value(2, 0) as string | null;
  const annotation = reader.value(3, 0) as string | null;
  return [{ ts, value: value ?? null, text: text ?? null, annotation: annotation ?? null }];
}

export function toStoredValues(reader: DuckDBResultReader): StoredValue[] {
  if (reader.currentRowCount === 0) return []; // getColumns() has no columns then
  const [ts, value, text, annotation] = reader.getColumns() as [number[], (number | null)[], (string | null)[], (string | null)[]];
  const out = new Array<StoredValue>(ts.length);
  for (let i = 0; i < ts.length; i++) {
    out[i] = { ts: ts[i]!, value: value[i] ?? null, text: text[i] ?? null, annotation: annotation[i] ?? null };
  }
  return out;
}

/**
 * The rows of SQL.window (ts, value, text, annotation) in ts order, read off the chunks' vectors: rows
 * come in table order, which is ts order for a series but for late rows appended after newer ones,
 * so they are sorted only when they are not (ts is unique per series).
 */
export function readWindow(result: DuckDBMaterializedResult): StoredValue[] {
  const out: StoredValue[] = [];
  let ordered = true;
  let prev = -Infinity;
  for (let c = 0; c < result.chunkCount; c++) {
    const chunk = result.getChunk(c);
    const m = chunk.rowCount;
    if (m === 0) continue;
    const ts = chunk.getColumnVector(0) as DuckDBDoubleVector;
    const value = chunk.getColumnVector(1) as DuckDBDoubleVector;
    const text = chunk.getColumnVector(2) as DuckDBVarCharVector;
    const annotation = chunk.getColumnVector(3) as DuckDBVarCharVector;
    for (let j = 0; j < m; j++) {
      const t = ts.getItem(j)!; // NOT NULL
      if (t <= prev) ordered = false;
      prev = t;
      out.push({ ts: t, value: value.getItem(j), text: text.getItem(j), annotation: annotation.getItem(j) });
    }
  }
  if (!ordered) out.sort((a, b) => a.ts - b.ts);
  return out;
}

/** Column vectors of one chunk of SQL.buckets, in its column order. */
type BucketVectors = [
  DuckDBDoubleVector,
  DuckDBIntegerVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
  DuckDBDoubleVector,
];

/** Row j of a chunk of SQL.buckets into the columns, merged with its bucket's rows before (every column is NOT NULL). */
function addRow(out: SeriesBuckets, v: BucketVectors, j: number): void {
  out.merge(
    v[0].getItem(j)! * BUCKET_MS,
    v[1].getItem(j)!,
    v[2].getItem(j)!,
    v[3].getItem(j)!,
    v[4].getItem(j)!,
    v[5].getItem(j)!,
    v[6].getItem(j)!,
    v[7].getItem(j)!,
    v[8].getItem(j)!,
    v[9].getItem(j)!,
  );
}

/**
 * The rows of SQL.buckets as one aggregate per bucket, ascending, into columns (bucket-columns.ts)
 * with no object per row. Rows come in table order, ascending by (bucket, first_ts) unless buckets were recomputed or
 * merged since the last compaction; only then are they sorted. Partial rows of a bucket are merged.
 */
export function readBuckets(result: DuckDBMaterializedResult): SeriesBuckets {
  const chunkCount = result.chunkCount;
  const vectors: BucketVectors[] = [];
  const sizes: number[] = [];
  let total = 0;
  let ordered = true;
  let prevBucket = -Infinity;
  let prevFirst = -Infinity;
  for (let c = 0; c < chunkCount; c++) {
    const chunk = result.getChunk(c);
    const m = chunk.rowCount;
    if (m === 0) continue;
    const v = [] as unknown as BucketVectors;
    for (let k = 0; k < 10; k++) v.push(chunk.getColumnVector(k) as DuckDBDoubleVector);
    vectors.push(v);
    sizes.push(m);
    total += m;
    if (ordered) {
      const [vb, , , , , vf] = v;
      for (let j = 0; j < m; j++) {
        const b = vb.getItem(j)!;
        const f = vf.getItem(j)!;
        if (b < prevBucket || (b === prevBucket && f < prevFirst)) {
          ordered = false;
          break;
        }
        prevBucket = b;
        prevFirst = f;
      }
    }
  }
  const out = new SeriesBuckets(total);
  if (total === 0) return out;
  if (ordered) {
    for (let c = 0; c < vectors.length; c++) {
      const v = vectors[c]!;
      const m = sizes[c]!;
      for (let j = 0; j < m; j++) addRow(out, v, j);
    }
    return out;
  }
  // Out of order: sort (chunk, row) references by (bucket, first_ts).
  const refChunk = new Uint32Array(total);
  const refRow = new Uint32Array(total);
  const keyBucket = new Float64Array(total);
  const keyFirst = new Float64Array(total);
  let r = 0;
  for (let c = 0; c < vectors.length; c++) {
    const v = vectors[c]!;
    for (let j = 0; j < sizes[c]!; j++, r++) {
      refChunk[r] = c;
      refRow[r] = j;
      keyBucket[r] = v[0].getItem(j)!;
      keyFirst[r] = v[5].getItem(j)!;
    }
  }
  const order = Array.from({ length: total }, (_, i) => i);
  order.sort((a, b) => keyBucket[a]! - keyBucket[b]! || keyFirst[a]! - keyFirst[b]!);
  for (const i of order) addRow(out, vectors[refChunk[i]!]!, refRow[i]!);
  return out;
}
