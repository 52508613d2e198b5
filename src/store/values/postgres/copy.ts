// COPY … FROM STDIN in PostgreSQL's binary format: the rows of a sorted batch encoded straight from
// its columns (no per-row object, no text escaping: strings go as length-prefixed UTF-8, doubles as
// their 8 IEEE bytes, so every value arrives bit for bit), sent with pg-copy-streams.
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { SortedRows } from '../sort.js';
import type { ValueBatch } from '../types.js';

/** "PGCOPY\n\377\r\n\0", flags (0) and header extension length (0). */
const HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
/** series, ts, value, text, annotation. */
const FIELDS = 5;
/** Field count, then series (4 + 4), ts (4 + 8) and the value's length word. */
const FIXED_ROW_BYTES = 2 + 8 + 12 + 4;
/** Rows per chunk handed to the socket: bounds the memory of one chunk, not of the batch. */
const CHUNK_ROWS = 16_384;

/** The sorted rows of `batch` as binary COPY data for (series, ts, value, text, annotation), in chunks. */
export function encodeBinaryCopy(batch: ValueBatch, rows: SortedRows): Buffer[] {
  const { perm, n } = rows;
  const chunks: Buffer[] = [HEADER];
  for (let off = 0; off < n; off += CHUNK_ROWS) chunks.push(encodeRows(batch, perm, off, Math.min(n, off + CHUNK_ROWS)));
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1, 0);
  chunks.push(trailer);
  return chunks;
}

function encodeRows(batch: ValueBatch, perm: Uint32Array, start: number, end: number): Buffer {
  const { series, ts, value, text, annotation } = batch;
  let size = 0;
  for (let k = start; k < end; k++) {
    const i = perm[k]!;
    const v = value[i]!;
    size += FIXED_ROW_BYTES + (v === v ? 8 : 0) + 8;
    const x = text?.[i];
    const a = annotation?.[i];
    if (x != null) size += Buffer.byteLength(x, 'utf8');
    if (a != null) size += Buffer.byteLength(a, 'utf8');
  }
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  for (let k = start; k < end; k++) {
    const i = perm[k]!;
    at = buf.writeInt16BE(FIELDS, at);
    at = buf.writeInt32BE(4, at);
    at = buf.writeInt32BE(series[i]!, at);
    // int8 as two 32-bit words: no BigInt per row.
    const t = ts[i]!;
    const high = Math.floor(t / 2 ** 32);
    at = buf.writeInt32BE(8, at);
    at = buf.writeInt32BE(high, at);
    at = buf.writeUInt32BE(t - high * 2 ** 32, at);
    const v = value[i]!;
    if (v === v) {
      at = buf.writeInt32BE(8, at);
      at = buf.writeDoubleBE(v, at);
    } else {
      at = buf.writeInt32BE(-1, at); // NaN: an ALPHANUMERIC row has no numeric value (NULL)
    }
    at = writeText(buf, at, text?.[i]);
    at = writeText(buf, at, annotation?.[i]);
  }
  return buf;
}

function writeText(buf: Buffer, at: number, s: string | null | undefined): number {
  if (s == null) return buf.writeInt32BE(-1, at);
  const len = buf.write(s, at + 4, 'utf8');
  buf.writeInt32BE(len, at);
  return at + 4 + len;
}

/** Runs `COPY … FROM STDIN` (given as `sql`) on a pg client with `chunks` as its data (pg-copy-streams). */
export async function copyIn(client: PoolClient, sql: string, chunks: readonly Buffer[]): Promise<void> {
  const stream = client.query(copyFrom(sql));
  // Chunks are bounded (CHUNK_ROWS): written without waiting for drain, the batch is in memory anyway.
  await new Promise<void>((resolve, reject) => {
    // `on`, not `once`: a stream on a connection that breaks, or a COPY that timed out, may report more
    // than one error (the time-out, then its closed connection).
    stream.on('error', reject);
    stream.once('finish', resolve);
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
  });
}
