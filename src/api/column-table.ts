// A table of typed columns, batch by batch: what the Arrow and Parquet writers take, and what the
// point-value reads give them (point-value-columns.ts). The JSON and CSV writers do not go through
// it. Numbers travel as Float64Array whatever their column's type (NaN: no value), so a batch is a
// few typed arrays and no object per value; only text columns are arrays of strings.

/** A column's type: `xid` is a point's XID as an index into the table's `xids` (dictionary-encoded). */
export type ColumnKind = 'timestamp' | 'float64' | 'bool' | 'int32' | 'utf8' | 'xid';

export interface TableColumn {
  name: string;
  kind: ColumnKind;
  /** Whether a cell may be empty (NaN or null). */
  nullable: boolean;
}

export interface TableSchema {
  columns: readonly TableColumn[];
  /** The dictionary of an `xid` column: every XID the table may name, in the request's order. */
  xids: readonly string[];
}

/** One column's cells: numbers (NaN for none), strings (null for none) or XID indexes. */
export type ColumnCells = Float64Array | (string | null)[] | Int32Array;

export interface ColumnBatch {
  length: number;
  /** In the schema's order. */
  cells: readonly ColumnCells[];
}

/** Turns a table's batches into the bytes of an answer, a batch at a time. */
export type TableEncoder = (schema: TableSchema, batches: AsyncIterable<ColumnBatch>) => AsyncGenerator<Uint8Array>;

/** A timestamp column (epoch ms) as int64, two int32 words each, little-endian: exact up to 2^53, with no BigInt made per value. */
export function int64Of(ms: Float64Array): BigInt64Array {
  const words = new Int32Array(ms.length * 2);
  for (let i = 0; i < ms.length; i++) {
    const x = ms[i]!;
    const low = x >>> 0;
    words[2 * i] = low;
    words[2 * i + 1] = (x - low) / 4294967296;
  }
  return new BigInt64Array(words.buffer);
}
