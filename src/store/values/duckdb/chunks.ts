// Writing rows through DuckDB's DataChunk appender, column vector by column vector: the cheapest way
// into a table from JS, as long as no value becomes an object (or a BigInt) on the way.
import { endianness } from 'node:os';
import {
  BIGINT,
  DuckDBDataChunk,
  type DuckDBAppender,
  type DuckDBBigIntVector,
  type DuckDBDoubleVector,
  type DuckDBIntegerVector,
  type DuckDBType,
  type DuckDBVarCharVector,
} from '@duckdb/node-api';
import { TimeSlice } from '../../../core/time-slice.js';
import type { ValueBatch } from '../types.js';
import type { SortedRows } from '../sort.js';
import { RAW_TYPES } from './sql.js';

/** DuckDB's vector size: the most rows in one data chunk. */
export const CHUNK_ROWS = 2048;
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * Writes whole-number doubles into a BIGINT vector. node-api's setItem takes a BigInt, and making one
 * per row costs as much as the rest of the append; the vector's items are a BigInt64Array over a
 * plain buffer, so on a little-endian machine each row is written as two 32-bit words instead. Falls
 * back to setItem where that buffer is not there (another node-api version).
 */
export function setBigIntColumn(vec: DuckDBBigIntVector, count: number, valueOf: (j: number) => number): void {
  const items = (vec as unknown as { items?: unknown }).items;
  if (!LITTLE_ENDIAN || !(items instanceof BigInt64Array) || items.length < count) {
    for (let j = 0; j < count; j++) vec.setItem(j, BigInt(valueOf(j)));
    return;
  }
  const words = new Int32Array(items.buffer, items.byteOffset, count * 2);
  for (let j = 0; j < count; j++) {
    const x = valueOf(j);
    const high = Math.floor(x / 2 ** 32);
    words[2 * j] = x - high * 2 ** 32; // stored modulo 2^32: the low word's bits
    words[2 * j + 1] = high;
  }
}

/**
 * Appends numeric columns (INTEGER, BIGINT or DOUBLE) through `chunk` (of `types`, reused), then
 * flushes. Filling chunks is synchronous work (some 130 ms for 330,000 rows): between chunks it
 * yields to the event loop once `slice` has run its budget. The caller keeps `chunk` to itself
 * until this resolves.
 */
export async function appendColumns(appender: DuckDBAppender, chunk: DuckDBDataChunk, types: DuckDBType[], columns: number[][], slice = new TimeSlice()): Promise<void> {
  const length = columns[0]!.length;
  for (let off = 0; off < length; off += CHUNK_ROWS) {
    await slice.yieldIfExpired();
    const m = Math.min(CHUNK_ROWS, length - off);
    if (chunk.rowCount !== m) chunk.rowCount = m;
    for (let c = 0; c < types.length; c++) {
      const col = columns[c]!;
      if (types[c] === BIGINT) {
        const vec = chunk.getColumnVector(c) as DuckDBBigIntVector;
        setBigIntColumn(vec, m, (j) => col[off + j]!);
        vec.flush();
      } else {
        const vec = chunk.getColumnVector(c) as DuckDBIntegerVector | DuckDBDoubleVector;
        for (let j = 0; j < m; j++) vec.setItem(j, col[off + j]!);
        vec.flush();
      }
    }
    appender.appendDataChunk(chunk);
  }
  appender.flushSync();
}

/** A point_values chunk for numeric rows, reused for every append: its text and annotation columns stay NULL. */
export function createNumericChunk(): DuckDBDataChunk {
  const chunk = DuckDBDataChunk.create(RAW_TYPES, CHUNK_ROWS);
  const text = chunk.getColumnVector(3);
  const annotation = chunk.getColumnVector(4);
  for (let i = 0; i < CHUNK_ROWS; i++) {
    text.setItem(i, null);
    annotation.setItem(i, null);
  }
  text.flush();
  annotation.flush();
  return chunk;
}

/**
 * Appends a batch's sorted rows to point_values, then flushes. A batch without strings goes through
 * `numericChunk` (from createNumericChunk); one with strings through a fresh chunk per CHUNK_ROWS rows.
 * Yields between chunks as appendColumns does; the caller keeps `numericChunk` to itself until this
 * resolves.
 */
export async function appendRawRows(appender: DuckDBAppender, numericChunk: DuckDBDataChunk, batch: ValueBatch, rows: SortedRows, slice = new TimeSlice()): Promise<void> {
  const { perm, n } = rows;
  const { series, ts, value, text, annotation } = batch;
  const hasStrings = text !== null || annotation !== null;
  for (let off = 0; off < n; off += CHUNK_ROWS) {
    await slice.yieldIfExpired();
    const m = Math.min(CHUNK_ROWS, n - off);
    let chunk = numericChunk;
    if (hasStrings) chunk = DuckDBDataChunk.create(RAW_TYPES, m);
    else if (chunk.rowCount !== m) chunk.rowCount = m;
    const vs = chunk.getColumnVector(0) as DuckDBIntegerVector;
    const vt = chunk.getColumnVector(1) as DuckDBBigIntVector;
    const vv = chunk.getColumnVector(2) as DuckDBDoubleVector;
    for (let j = 0; j < m; j++) {
      const i = perm[off + j]!;
      vs.setItem(j, series[i]!);
      const v = value[i]!;
      vv.setItem(j, v === v ? v : null);
    }
    setBigIntColumn(vt, m, (j) => ts[perm[off + j]!]!);
    vs.flush();
    vt.flush();
    vv.flush();
    if (hasStrings) {
      const vx = chunk.getColumnVector(3) as DuckDBVarCharVector;
      const va = chunk.getColumnVector(4) as DuckDBVarCharVector;
      for (let j = 0; j < m; j++) {
        const i = perm[off + j]!;
        vx.setItem(j, text?.[i] ?? null);
        va.setItem(j, annotation?.[i] ?? null);
      }
      vx.flush();
      va.flush();
    }
    appender.appendDataChunk(chunk);
  }
  appender.flushSync();
}
