// The binary COPY data the PostgreSQL store sends (src/store/values/postgres/copy.ts), without a
// server: decoded here by PostgreSQL's binary COPY format (the 11-byte signature, flags, header
// extension; per tuple an int16 field count, then per field an int32 length, -1 for NULL, and the
// bytes: int4 series, int8 ts, float8 value, text, annotation; the int16 -1 trailer) and compared
// with the batch, bit for bit.
import assert from 'node:assert/strict';
import { encodeBinaryCopy } from '../src/store/values/postgres/copy.js';
import { sortRows } from '../src/store/values/sort.js';
import type { ValueBatch } from '../src/store/values/types.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

interface Tuple {
  series: number;
  ts: bigint;
  /** The value's 8 bytes in hex, so that -0 compares exactly; null for NULL. */
  value: string | null;
  text: string | null;
  annotation: string | null;
}

/** Reads one whole COPY stream: header, tuples, trailer, nothing after. */
function decode(data: Buffer): Tuple[] {
  assert.ok(data.subarray(0, 11).equals(SIGNATURE), 'signature');
  assert.equal(data.readInt32BE(11), 0, 'flags: no OIDs');
  const extension = data.readInt32BE(15);
  let at = 19 + extension;
  const tuples: Tuple[] = [];
  for (;;) {
    const fields = data.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    assert.equal(fields, 5, `field count of tuple ${tuples.length}`);
    const field = (): Buffer | null => {
      const length = data.readInt32BE(at);
      at += 4;
      if (length === -1) return null;
      assert.ok(length >= 0 && at + length <= data.length, `field length ${length} at ${at}`);
      const bytes = data.subarray(at, at + length);
      at += length;
      return bytes;
    };
    const series = field();
    const ts = field();
    const value = field();
    const text = field();
    const annotation = field();
    assert.ok(series !== null && series.length === 4, 'series: int4, never NULL');
    assert.ok(ts !== null && ts.length === 8, 'ts: int8, never NULL');
    assert.ok(value === null || value.length === 8, 'value: float8 or NULL');
    tuples.push({
      series: series.readInt32BE(0),
      ts: ts.readBigInt64BE(0),
      value: value && value.toString('hex'),
      text: text && text.toString('utf8'),
      annotation: annotation && annotation.toString('utf8'),
    });
  }
  assert.equal(at, data.length, 'nothing after the trailer');
  return tuples;
}

function float8(v: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
}

function float8Hex(v: number): string {
  return float8(v).toString('hex');
}

interface Row {
  s: number;
  ts: number;
  v: number;
  text?: string | null;
  ann?: string | null;
}

/** A batch of rows; text and annotation columns only when a row has one (as the pipeline builds them). */
function batchOf(rows: Row[]): ValueBatch {
  const hasText = rows.some((r) => r.text != null);
  const hasAnn = rows.some((r) => r.ann != null);
  return {
    length: rows.length,
    series: Int32Array.from(rows.map((r) => r.s)),
    ts: Float64Array.from(rows.map((r) => r.ts)),
    value: Float64Array.from(rows.map((r) => r.v)),
    text: hasText ? rows.map((r) => r.text ?? null) : null,
    annotation: hasAnn ? rows.map((r) => r.ann ?? null) : null,
  };
}

/** What the rows should decode to: NaN as NULL, every other double its own 8 bytes. */
function expected(rows: Row[]): Tuple[] {
  return rows.map((r) => ({
    series: r.s,
    ts: BigInt(r.ts),
    value: Number.isNaN(r.v) ? null : float8Hex(r.v),
    text: r.text ?? null,
    annotation: r.ann ?? null,
  }));
}

/** deepEqual, tuple by tuple: fast on large batches, and names the first tuple that differs. */
function assertTuples(actual: Tuple[], wanted: Tuple[]): void {
  assert.equal(actual.length, wanted.length, 'tuple count');
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const w = wanted[i]!;
    if (a.series !== w.series || a.ts !== w.ts || a.value !== w.value || a.text !== w.text || a.annotation !== w.annotation) assert.deepEqual(a, w, `tuple ${i}`);
  }
}

function encode(batch: ValueBatch): Buffer[] {
  return encodeBinaryCopy(batch, sortRows(batch));
}

describe('PostgreSQL value store: binary COPY encoding', () => {
  it('writes the header, one 5-field tuple per row and the trailer, and nothing else', () => {
    const chunks = encode(batchOf([{ s: 7, ts: 1_700_000_000_123, v: 21.5 }]));
    assert.equal(chunks.length, 3, 'header, one chunk of rows, trailer');
    assert.ok(chunks[0]!.equals(Buffer.concat([SIGNATURE, Buffer.alloc(8)])), 'signature, flags 0, extension length 0');
    assert.ok(chunks[2]!.equals(Buffer.from([0xff, 0xff])), 'trailer: field count -1');
    // int16 5 | int32 4, int4 7 | int32 8, int8 ts | int32 8, float8 21.5 | int32 -1 | int32 -1
    const ts = Buffer.alloc(8);
    ts.writeBigInt64BE(1_700_000_000_123n);
    assert.deepEqual(
      chunks[1],
      Buffer.concat([
        Buffer.from([0, 5, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 8]),
        ts,
        Buffer.from([0, 0, 0, 8]),
        float8(21.5),
        Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
      ]),
    );
  });

  it('writes an empty batch as the header and the trailer alone', () => {
    const batch = batchOf([]);
    assert.deepEqual(decode(Buffer.concat(encode(batch))), []);
    assert.equal(encode(batch).length, 2);
  });

  it('carries timestamps as int8 over the whole range a Date holds, before 1970 and at word boundaries', () => {
    const timestamps = [
      0,
      -0,
      1,
      -1,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 32 + 1,
      -(2 ** 32),
      -(2 ** 32) - 1,
      -(2 ** 31),
      2 ** 31,
      Date.UTC(1969, 11, 31, 23, 59, 59, 999),
      Date.UTC(2024, 1, 29, 12),
      -62_135_596_800_001,
      -8.64e15,
      8.64e15,
      Number.MAX_SAFE_INTEGER,
      Number.MIN_SAFE_INTEGER,
    ];
    const rows = timestamps.map((ts, i) => ({ s: i, ts, v: i }));
    assert.deepEqual(decode(Buffer.concat(encode(batchOf(rows)))), expected(rows));
  });

  it('carries every double bit for bit: -0, subnormals, the extremes, ±Infinity; NaN (no numeric value) as NULL', () => {
    // The store's validate() refuses ±Infinity before encoding; the encoding itself carries them.
    const values = [0, -0, 1, -1, 0.1 + 0.2, 5e-324, -5e-324, 2.2250738585072014e-308, Number.MAX_VALUE, -Number.MAX_VALUE, Infinity, -Infinity, 1e21, 1e-7, NaN];
    const rows = values.map((v, i) => ({ s: 1, ts: i, v }));
    const tuples = decode(Buffer.concat(encode(batchOf(rows))));
    assert.deepEqual(tuples, expected(rows));
    assert.ok(Object.is(Buffer.from(tuples[1]!.value!, 'hex').readDoubleBE(0), -0), '-0 keeps its sign');
    assert.equal(tuples[values.length - 1]!.value, null, 'NaN is NULL');
  });

  it('carries text and annotations as UTF-8 with their byte length: empty, multi-byte, control characters and COPY text-format specials', () => {
    const strings = ['', 'plain', 'tab\there', 'line\nfeed\r\n', 'back\\slash', '\\N', 'comma, "quote"', 'zero\0byte', 'grüße', '温度', '🌡️ 21 °C', 'x'.repeat(70_000)];
    const rows: Row[] = strings.map((text, i) => ({ s: 2, ts: i, v: NaN, text, ann: strings[strings.length - 1 - i]! }));
    const tuples = decode(Buffer.concat(encode(batchOf(rows))));
    assert.deepEqual(tuples, expected(rows));
    assert.equal(tuples[0]!.text, '', 'an empty text is not NULL');
  });

  it('writes NULL for a row without text or annotation, and for a batch without those columns', () => {
    const rows: Row[] = [
      { s: 1, ts: 1, v: 1 },
      { s: 1, ts: 2, v: NaN, text: 'on' },
      { s: 1, ts: 3, v: 3, ann: 'calibrated' },
      { s: 1, ts: 4, v: NaN, text: '', ann: '' },
    ];
    assert.deepEqual(decode(Buffer.concat(encode(batchOf(rows)))), expected(rows));
    const numeric = batchOf([{ s: 1, ts: 1, v: 1 }]);
    assert.equal(numeric.text, null);
    assert.equal(numeric.annotation, null);
    assert.deepEqual(decode(Buffer.concat(encode(numeric))), expected([{ s: 1, ts: 1, v: 1 }]));
  });

  it('writes the rows in (series, ts) order, one per (series, ts), the last written winning', () => {
    const rows: Row[] = [
      { s: 2, ts: 20, v: 1 },
      { s: 1, ts: 30, v: 2 },
      { s: 2, ts: 10, v: 3 },
      { s: 1, ts: 30, v: 4, ann: 'again' },
      { s: -5, ts: -1, v: 5 },
    ];
    assert.deepEqual(
      decode(Buffer.concat(encode(batchOf(rows)))),
      expected([rows[4]!, rows[3]!, rows[2]!, rows[0]!]),
    );
  });

  it('cuts a large batch into chunks of whole tuples, the same rows as one piece', () => {
    const n = 40_000;
    const rows: Row[] = [];
    for (let i = 0; i < n; i++) {
      rows.push({ s: i % 3, ts: 1_700_000_000_000 + i * 1000, v: i % 7 === 0 ? NaN : i / 3, text: i % 7 === 0 ? `s${i}` : null, ann: i % 11 === 0 ? 'ä'.repeat(i % 5) : null });
    }
    const chunks = encode(batchOf(rows));
    assert.ok(chunks.length > 3, `${chunks.length} chunks`);
    // Every chunk between the header and the trailer is whole tuples and exactly sized (decode finds
    // nothing after the trailer): it decodes on its own.
    let decoded: Tuple[] = [];
    for (const chunk of chunks.slice(1, -1)) decoded = decoded.concat(decode(Buffer.concat([chunks[0]!, chunk, chunks[chunks.length - 1]!])));
    const sorted = [...rows].sort((a, b) => a.s - b.s || a.ts - b.ts);
    assertTuples(decoded, expected(sorted));
    assertTuples(decode(Buffer.concat(chunks)), decoded);
  });
});
