// COPY … FROM STDIN in PostgreSQL's binary format: the rows of a sorted batch encoded straight from
// its columns (no per-row object, no text escaping: strings go as length-prefixed UTF-8, doubles as
// their 8 IEEE bytes, so every value arrives bit for bit), and a pg Submittable that sends the bytes.
//
// The Submittable is what pg-copy-streams' from() does, cut down to a buffer we already hold: pg
// hands a submitted object the connection, calls handleCopyInResponse once the server is ready for
// data, and handleReadyForQuery / handleError at the end. Not depending on that package keeps the
// write path to the pg client the service already has.
import type { Connection, Submittable } from 'pg';
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

/** The connection methods of the COPY sub-protocol (pg has them; @types/pg does not list them). */
interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

function isCopyConnection(c: Connection): c is Connection & CopyConnection {
  const maybe = c as Connection & Partial<CopyConnection>;
  return typeof maybe.sendCopyFromChunk === 'function' && typeof maybe.endCopyFrom === 'function';
}

/** Runs `COPY … FROM STDIN` (given as `sql`) on a pg client with `chunks` as its data. */
export class CopyIn implements Submittable {
  readonly done: Promise<void>;
  private settle!: (err?: unknown) => void;

  constructor(
    private readonly sql: string,
    private readonly chunks: Buffer[],
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      let settled = false;
      this.settle = (err?: unknown) => {
        if (settled) return;
        settled = true;
        if (err === undefined) resolve();
        else reject(err instanceof Error ? err : new Error(String(err)));
      };
    });
  }

  submit(connection: Connection): void {
    if (!isCopyConnection(connection)) {
      this.settle(new Error('this pg version has no COPY FROM support'));
      return;
    }
    connection.query(this.sql);
  }

  handleCopyInResponse(connection: Connection): void {
    const c = connection as Connection & CopyConnection;
    for (const chunk of this.chunks) c.sendCopyFromChunk(chunk);
    c.endCopyFrom();
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    this.settle();
  }

  handleError(err: unknown): void {
    this.settle(err);
  }

  // Messages a COPY FROM never gets; pg would call them on the active query if it did.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}
}
