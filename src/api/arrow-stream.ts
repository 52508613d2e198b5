// A table of typed columns as an Arrow IPC stream (application/vnd.apache.arrow.stream), written
// with apache-arrow one record batch per table batch: the schema (and the XID dictionary) goes out
// with the first batch, each batch's bytes as soon as it is encoded, so memory holds one batch.
import {
  AsyncByteQueue,
  Bool,
  Dictionary,
  Field,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Timestamp,
  TimeUnit,
  Utf8,
  vectorFromArray,
  type Data,
  type DataType,
  type Vector,
} from 'apache-arrow';
import { int64Of, type ColumnBatch, type ColumnCells, type ColumnKind, type TableColumn, type TableSchema } from './column-table.js';

/** The one id of the XID dictionary: it is the same for every batch, so it is written once. */
const XID_DICTIONARY_ID = 0;

function arrowType(kind: ColumnKind): DataType {
  switch (kind) {
    case 'timestamp':
      return new Timestamp(TimeUnit.MILLISECOND, 'UTC');
    case 'float64':
      return new Float64();
    case 'bool':
      return new Bool();
    case 'int32':
      return new Int32();
    case 'utf8':
      return new Utf8();
    case 'xid':
      return new Dictionary(new Utf8(), new Int32(), XID_DICTIONARY_ID);
  }
}

export function arrowSchema(schema: TableSchema): Schema {
  return new Schema(schema.columns.map((c) => new Field(c.name, arrowType(c.kind), c.nullable)));
}

/** A validity bitmap (bit set: a value) of the numbers that are not NaN, or undefined when all are. */
function numberValidity(numbers: Float64Array): { bitmap: Uint8Array | undefined; nulls: number } {
  let nulls = 0;
  for (let i = 0; i < numbers.length; i++) if (Number.isNaN(numbers[i])) nulls++;
  if (nulls === 0) return { bitmap: undefined, nulls };
  const bitmap = new Uint8Array((numbers.length + 7) >> 3);
  for (let i = 0; i < numbers.length; i++) if (!Number.isNaN(numbers[i])) bitmap[i >> 3]! |= 1 << (i & 7);
  return { bitmap, nulls };
}

const utf8 = new TextEncoder();

function utf8Data(strings: readonly (string | null)[]): Data<Utf8> {
  const offsets = new Int32Array(strings.length + 1);
  const bitmap = new Uint8Array((strings.length + 7) >> 3);
  let nulls = 0;
  let bytes = 0;
  const encoded: Uint8Array[] = new Array<Uint8Array>(strings.length);
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i];
    if (s === null || s === undefined) {
      nulls++;
      encoded[i] = EMPTY;
    } else {
      encoded[i] = utf8.encode(s);
      bitmap[i >> 3]! |= 1 << (i & 7);
    }
    bytes += encoded[i]!.length;
    offsets[i + 1] = bytes;
  }
  const data = new Uint8Array(bytes);
  for (let i = 0; i < encoded.length; i++) data.set(encoded[i]!, offsets[i]!);
  return makeData({ type: new Utf8(), length: strings.length, nullCount: nulls, nullBitmap: nulls > 0 ? bitmap : undefined, valueOffsets: offsets, data });
}
const EMPTY = new Uint8Array(0);

function columnData(column: TableColumn, cells: ColumnCells, dictionary: Vector<Utf8>): Data {
  const type = arrowType(column.kind);
  if (Array.isArray(cells)) return utf8Data(cells);
  if (cells instanceof Int32Array) {
    return makeData({ type: type as Dictionary<Utf8, Int32>, length: cells.length, nullCount: 0, data: cells, dictionary });
  }
  const { bitmap, nulls } = numberValidity(cells);
  const common = { length: cells.length, nullCount: nulls, nullBitmap: bitmap };
  switch (column.kind) {
    case 'timestamp':
      return makeData({ type: type as Timestamp, ...common, data: int64Of(cells) });
    case 'float64':
      return makeData({ type: type as Float64, ...common, data: cells });
    case 'int32':
      return makeData({ type: type as Int32, ...common, data: Int32Array.from(cells, (x) => (Number.isNaN(x) ? 0 : x)) });
    case 'bool': {
      const bits = new Uint8Array((cells.length + 7) >> 3);
      for (let i = 0; i < cells.length; i++) if (cells[i] === 1) bits[i >> 3]! |= 1 << (i & 7);
      return makeData({ type: type as Bool, ...common, data: bits });
    }
    default:
      throw new Error(`column ${column.name}: ${column.kind} cells must not be numbers`);
  }
}

export function recordBatch(arrow: Schema, schema: TableSchema, batch: ColumnBatch, dictionary: Vector<Utf8>): RecordBatch {
  const children = schema.columns.map((c, i) => columnData(c, batch.cells[i]!, dictionary));
  return new RecordBatch(arrow, makeData({ type: new Struct(arrow.fields), length: batch.length, nullCount: 0, children }));
}

/** The writer's sink: keeps what the writer wrote until the stream takes it. */
class TakenBytes extends AsyncByteQueue {
  private chunks: Uint8Array[] = [];
  override write(value: Uint8Array): void {
    if (value.byteLength > 0) this.chunks.push(value);
  }
  take(): Uint8Array[] {
    const chunks = this.chunks;
    this.chunks = [];
    return chunks;
  }
}

function joined(chunks: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const c of chunks) length += c.byteLength;
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * The stream's bytes, one chunk per batch (schema first, end-of-stream marker last). An empty table
 * is the schema alone, which every reader takes as zero rows.
 */
export async function* arrowStream(schema: TableSchema, batches: AsyncIterable<ColumnBatch>): AsyncGenerator<Uint8Array> {
  const arrow = arrowSchema(schema);
  const dictionary = vectorFromArray([...schema.xids], new Utf8());
  const sink = new TakenBytes();
  const writer = new RecordBatchStreamWriter({ autoDestroy: false });
  writer.reset(sink, arrow);
  let wrote = false;
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    writer.write(recordBatch(arrow, schema, batch, dictionary));
    wrote = true;
    yield joined(sink.take());
  }
  // With no batch the writer has not written the schema yet: an empty batch makes it.
  if (!wrote) writer.write(new RecordBatch(arrow, makeData({ type: new Struct(arrow.fields), length: 0, nullCount: 0, children: arrow.fields.map((f) => makeData({ type: f.type, length: 0 })) })));
  writer.finish();
  yield joined(sink.take());
}
