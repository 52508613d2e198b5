// A table of typed columns as a Parquet file (application/vnd.apache.parquet), written with
// hyparquet-writer a row group at a time as the batches arrive: the file's head and each row
// group go out as soon as they are encoded, and only the footer (the row groups' metadata, some
// hundred bytes per column and group) waits for the end. Memory holds one row group of
// ROW_GROUP_ROWS rows (its columns and their encoding) besides that metadata.
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { int64Of, type ColumnBatch, type ColumnCells, type ColumnKind, type TableColumn, type TableSchema } from './column-table.js';

/** Rows per row group: enough for the encodings to pay; one group is encoded without a yield, so 65,536 held the event loop 313 ms under load, 16,384 48 ms. */
export const ROW_GROUP_ROWS = 16_384;

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];
type ColumnSource = Parameters<ParquetWriter['write']>[0]['columnData'][number];

/**
 * A column's schema element. `written`: the element the columns are written with, where timestamps
 * are plain INT64 (given as int64 words: with the TIMESTAMP type hyparquet-writer would make a BigInt
 * of every one, twice the time of the whole column); the file's footer says TIMESTAMP (ms, UTC).
 */
function schemaElement(column: TableColumn, written: boolean): SchemaElement {
  const repetition_type = column.nullable ? 'OPTIONAL' : 'REQUIRED';
  const { name } = column;
  switch (column.kind) {
    case 'timestamp':
      return written ? { name, repetition_type, type: 'INT64' } : { name, repetition_type, type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } };
    case 'float64':
      return { name, repetition_type, type: 'DOUBLE' };
    case 'bool':
      return { name, repetition_type, type: 'BOOLEAN' };
    case 'int32':
      return { name, repetition_type, type: 'INT32' };
    case 'utf8':
    case 'xid':
      return { name, repetition_type, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } };
  }
}

/** A ByteWriter whose bytes are taken out after each row group, so its buffer holds one group. */
class TakenWriter extends ByteWriter {
  take(): Uint8Array {
    const bytes = new Uint8Array(this.buffer, 0, this.index).slice();
    this.index = 0;
    return bytes;
  }
}

/** A column's cells as hyparquet takes them: typed arrays when nothing is missing, else arrays with nulls. */
function columnValues(kind: ColumnKind, cells: ColumnCells, xids: readonly string[]): ColumnSource['data'] {
  if (Array.isArray(cells)) return cells;
  if (cells instanceof Int32Array) return Array.from(cells, (i) => xids[i]!);
  if (kind === 'timestamp') return int64Of(cells);
  const hasNull = cells.some((x) => Number.isNaN(x));
  if (kind === 'bool') return Array.from(cells, (x) => (Number.isNaN(x) ? null : x === 1));
  if (kind === 'int32') return hasNull ? Array.from(cells, (x) => (Number.isNaN(x) ? null : x)) : Int32Array.from(cells);
  return hasNull ? Array.from(cells, (x) => (Number.isNaN(x) ? null : x)) : cells;
}

/** Batches joined into one of `rows` rows. */
function concatenated(schema: TableSchema, batches: readonly ColumnBatch[], rows: number): ColumnBatch {
  if (batches.length === 1) return batches[0]!;
  const cells = schema.columns.map((_, c) => {
    const first = batches[0]!.cells[c]!;
    if (Array.isArray(first)) return batches.flatMap((b) => b.cells[c] as (string | null)[]);
    const out = first instanceof Int32Array ? new Int32Array(rows) : new Float64Array(rows);
    let at = 0;
    for (const b of batches) {
      const part = b.cells[c] as Float64Array | Int32Array;
      out.set(part, at);
      at += part.length;
    }
    return out;
  });
  return { length: rows, cells };
}

export async function* parquetFile(schema: TableSchema, batches: AsyncIterable<ColumnBatch>): AsyncGenerator<Uint8Array> {
  const writer = new TakenWriter();
  const root = { name: 'root', num_children: schema.columns.length };
  const parquet = new ParquetWriter({ writer, schema: [root, ...schema.columns.map((c) => schemaElement(c, true))], createdBy: 'mango-historian' });
  let pending: ColumnBatch[] = [];
  let rows = 0;
  const writeGroup = async () => {
    const group = concatenated(schema, pending, rows);
    pending = [];
    rows = 0;
    // Timestamps rise by steady steps: delta encoding stores a year of minutes in a few kilobytes.
    const columnData = schema.columns.map((c, i): ColumnSource => ({
      name: c.name,
      data: columnValues(c.kind, group.cells[i]!, schema.xids),
      ...(c.kind === 'timestamp' ? { encoding: 'DELTA_BINARY_PACKED' as const } : {}),
    }));
    await parquet.write({ columnData, rowGroupSize: group.length });
  };
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    pending.push(batch);
    rows += batch.length;
    if (rows >= ROW_GROUP_ROWS) {
      await writeGroup();
      yield writer.take();
    }
  }
  if (rows > 0) await writeGroup();
  parquet.schema = [root, ...schema.columns.map((c) => schemaElement(c, false))];
  await parquet.finish();
  yield writer.take();
}
