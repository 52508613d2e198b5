// Writing rows to QuestDB: InfluxDB line protocol (version 1, text) built here, sent over HTTP (POST
// /write?precision=u). One request is one commit per table it names, acknowledged (204) once the rows
// are in the tables' WALs; a failed request commits nothing of the failing table.
//
// Written by hand because this is the ingest hot path: the official client builds each row through
// several calls with checks and awaits (~11 µs a value here), and its HTTP transport retried a refused
// connection for over a minute, so an outage hung every write. Here a row is one template string, and
// a request fails at once on a refused or reset connection and after its time-out otherwise, with the
// socket error's code kept as the cause (store/unavailable.ts reads it).
//
// The wire format, from QuestDB 8.0.3's LineTcpParser (the ILP/HTTP endpoint parses the same way):
//   table,series=<id> value=<double>,text="...",annotation="..." <epoch µs>\n
// - a tag (symbol) value and the table name never need escaping here: ids are digits, names identifiers;
// - a string field is in double quotes, where `\` escapes the next byte: `\\`, `\"`, and `\` before a
//   line feed keeps it (an unescaped line feed ends the line);
// - a double without a suffix; an integer ends in `i`; booleans t/f; timestamps in µs (precision=u),
//   which reach year 9999, where nanoseconds would stop in 2262.
// Version 1 is the one every QuestDB server takes (newer ones announce 2 and 3 too; 2 only sends
// doubles in binary), so it is the one we speak whatever the server announces (negotiate.ts).
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { BucketAggregate } from '../types.js';
import { parseIlpConfig } from './config.js';
import { MAX_TS_MS } from './time.js';

/** A string field: quoted, with the bytes the parser treats specially escaped. */
export function ilpString(s: string): string {
  let needs = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c || c === 0x22 || c === 0x0a) {
      needs = true;
      break;
    }
  }
  return needs ? `"${s.replace(/[\\"\n]/g, (c) => `\\${c}`)}"` : `"${s}"`;
}

/** A double field value: JS's shortest round-trip form, which QuestDB parses back exactly. */
function ilpDouble(v: number): string {
  return String(v);
}

/** Epoch ms as the µs of a line's timestamp: the ms digits and 000 (µs of year 9999 pass 2^53, ms do not). */
function us(ms: number): string {
  return `${ms}000`;
}

const NEWLINE = 0x0a;
const INITIAL_BYTES = 1 << 20;

/**
 * Lines for one request, written as bytes into a growing buffer. The store builds them from already
 * checked batches (timestamps whole ms in 1970..9999, values finite or NaN). A numeric value row, the
 * hot path of ingest, is written byte by byte (no string per row but the double's digits); rows with
 * text go through strings.
 */
export class IlpLines {
  private buf = Buffer.allocUnsafe(INITIAL_BYTES);
  private at = 0;
  private rows = 0;
  /** `<table>,series=` and ` value=` as bytes, for the last table written. */
  private prefixTable = '';
  private prefix = Buffer.alloc(0);
  private static readonly VALUE = Buffer.from(' value=');

  get length(): number {
    return this.rows;
  }

  /** Bytes so far: how big the request has grown. */
  get size(): number {
    return this.at;
  }

  /**
   * A point value. `value` NaN (no numeric value) is left out, so it reads back as NULL; `deleted` is
   * left out too: a BOOLEAN is false when absent, and writing a (series, ts) again replaces the whole
   * row (dedup), so a soft-deleted value comes back. A row with no field at all says deleted=f.
   */
  value(table: string, series: number, ts: number, value: number, text: string | null, annotation: string | null): void {
    if (text === null && annotation === null && !Number.isNaN(value)) {
      this.numericRow(table, series, ts, value);
      return;
    }
    const fields: string[] = [];
    if (!Number.isNaN(value)) fields.push(`value=${ilpDouble(value)}`);
    if (text !== null) fields.push(`text=${ilpString(text)}`);
    if (annotation !== null) fields.push(`annotation=${ilpString(annotation)}`);
    if (fields.length === 0) fields.push('deleted=f');
    this.line(`${table},series=${series} ${fields.join(',')} ${us(ts)}\n`);
  }

  /** An hourly aggregate row. */
  hourly(table: string, series: number, a: BucketAggregate): void {
    this.line(
      `${table},series=${series} n=${a.count}i,sum=${ilpDouble(a.sum)},min=${ilpDouble(a.min)},max=${ilpDouble(a.max)},` +
        `first_ms=${a.firstTs}i,first_value=${ilpDouble(a.firstValue)},last_ms=${a.lastTs}i,last_value=${ilpDouble(a.lastValue)},` +
        `inner_integral=${ilpDouble(a.innerIntegral)} ${us(a.start)}\n`,
    );
  }

  /** An empty hour: every value of it is gone (deleted). */
  emptyHour(table: string, series: number, start: number): void {
    this.line(`${table},series=${series} n=0i,sum=0,min=0,max=0,first_ms=0i,first_value=0,last_ms=0i,last_value=0,inner_integral=0 ${us(start)}\n`);
  }

  /** An intent row (sql.ts, t_pending); written again with done = true at the same `atUs`. */
  intent(table: string, id: number, series: number, msFrom: number, msTo: number, done: boolean, atUs: number): void {
    this.line(`${table} id=${id}i,series=${series}i,ms_from=${msFrom}i,ms_to=${msTo}i,done=${done ? 't' : 'f'} ${atUs}\n`);
  }

  /** The lines so far; the builder starts empty again. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.at));
    this.at = 0;
    this.rows = 0;
    return out;
  }

  private numericRow(table: string, series: number, ts: number, value: number): void {
    if (table !== this.prefixTable) {
      this.prefixTable = table;
      this.prefix = Buffer.from(`${table},series=`, 'latin1');
    }
    const digits = ilpDouble(value);
    this.reserve(this.prefix.length + 16 + IlpLines.VALUE.length + digits.length + 24);
    const b = this.buf;
    let o = this.at;
    b.set(this.prefix, o);
    o = writeDigits(b, o + this.prefix.length, series);
    b.set(IlpLines.VALUE, o);
    o += IlpLines.VALUE.length;
    for (let k = 0; k < digits.length; k++) b[o++] = digits.charCodeAt(k);
    b[o++] = 0x20;
    o = writeDigits(b, o, ts);
    if (ts !== 0) {
      b[o++] = 0x30; // µs: the ms digits and 000
      b[o++] = 0x30;
      b[o++] = 0x30;
    }
    b[o++] = NEWLINE;
    this.at = o;
    this.rows++;
  }

  private line(text: string): void {
    this.reserve(Buffer.byteLength(text, 'utf8'));
    this.at += this.buf.write(text, this.at, 'utf8');
    this.rows++;
  }

  private reserve(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + bytes) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
}

/** The decimal digits of a non-negative safe integer written at `o`; returns the end. */
function writeDigits(b: Buffer, o: number, n: number): number {
  if (n < 10) {
    b[o] = 48 + n;
    return o + 1;
  }
  // Two halves of at most 8 digits each keep the arithmetic on small integers.
  if (n >= 1e8) {
    const high = Math.floor(n / 1e8);
    const end = writeDigits(b, o, high);
    return writeFixed(b, end, n - high * 1e8, 8);
  }
  let digits = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
  return writeFixed(b, o, n, digits);
}

/** `n` as exactly `digits` digits (zero-padded) at `o`; returns the end. */
function writeFixed(b: Buffer, o: number, n: number, digits: number): number {
  const end = o + digits;
  for (let p = end - 1; p >= o; p--) {
    const q = Math.floor(n / 10);
    b[p] = 48 + (n - q * 10);
    n = q;
  }
  return end;
}

/**
 * `lines` cut into requests of at most about `max` bytes, each ending at a line's end (a line longer
 * than `max` is a request of its own). A line ends at a line feed after its timestamp's last digit; a
 * line feed after `\` is inside a string (ilpString), and a cut there would end a request in the middle
 * of a row.
 */
export function splitLines(lines: Buffer, max: number): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  while (lines.length - start > max) {
    const cut = lastLineEnd(lines, start + max - 1, start);
    const next = cut >= 0 ? cut : nextLineEnd(lines, start + max);
    const end = next < 0 ? lines.length : next + 1;
    out.push(lines.subarray(start, end));
    start = end;
  }
  if (start < lines.length) out.push(lines.subarray(start));
  return out;
}

function isLineEnd(lines: Buffer, i: number): boolean {
  const before = lines[i - 1];
  return before !== undefined && before >= 0x30 && before <= 0x39;
}

/** The last line end at or before `from` and not before `floor`, or -1. */
function lastLineEnd(lines: Buffer, from: number, floor: number): number {
  let i = lines.lastIndexOf(NEWLINE, from);
  while (i > floor && !isLineEnd(lines, i)) i = lines.lastIndexOf(NEWLINE, i - 1);
  return i >= floor && isLineEnd(lines, i) ? i : -1;
}

/** The first line end at or after `from`, or -1. */
function nextLineEnd(lines: Buffer, from: number): number {
  let i = lines.indexOf(NEWLINE, from);
  while (i >= 0 && !isLineEnd(lines, i)) i = lines.indexOf(NEWLINE, i + 1);
  return i;
}

/** Rejects, before anything is sent, rows QuestDB cannot store as given (the same RangeErrors as DuckDB's). */
export function validateTimestamp(ts: number, row: number): void {
  if (!Number.isInteger(ts)) throw new RangeError(`row ${row}: timestamp ${ts} is not a whole number of ms`);
  if (ts < 0) throw new RangeError(`row ${row}: timestamp ${ts} is before 1970, which QuestDB cannot store`);
  if (ts > MAX_TS_MS) throw new RangeError(`row ${row}: timestamp ${ts} is after year 9999`);
}

/** A write QuestDB refused (4xx/5xx), with its JSON error's message. */
export class IlpRequestError extends Error {
  override readonly name = 'IlpRequestError';

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What the store needs of the HTTP side: send a request's lines, end the connections. */
export interface IlpTransport {
  send(lines: Buffer): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** A large request may take longer: its time-out grows by its size at this rate (the client's default). */
const MIN_THROUGHPUT_BYTES_PER_S = 100 * 1024;

/**
 * ILP over HTTP(S) for the configuration string (QUESTDB_ILP): addr, username/password (Basic) or token
 * (Bearer), tls_verify/tls_ca, request_timeout (ms; default `defaultTimeoutMs`, the store's time-out) and
 * request_min_throughput (bytes/s). Keep-alive connections; no retry (a failed write is the caller's
 * to retry: dedup makes that harmless).
 */
export function ilpTransport(ilp: string, defaultTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): IlpTransport {
  const { schema, settings } = parseIlpConfig(ilp);
  const addr = settings.get('addr')!;
  const url = new URL(`${schema}://${addr.includes(':') ? addr : `${addr}:9000`}/write?precision=u`);
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
  const token = settings.get('token');
  const username = settings.get('username');
  if (token) headers.authorization = `Bearer ${token}`;
  else if (username) headers.authorization = `Basic ${Buffer.from(`${username}:${settings.get('password') ?? ''}`).toString('base64')}`;
  const timeoutMs = positive(settings.get('request_timeout')) ?? defaultTimeoutMs;
  const throughput = positive(settings.get('request_min_throughput')) ?? MIN_THROUGHPUT_BYTES_PER_S;
  const https = schema === 'https';
  const agent = https
    ? new HttpsAgent({
        keepAlive: true,
        rejectUnauthorized: settings.get('tls_verify') !== 'unsafe_off',
        ...(settings.get('tls_ca') ? { ca: readFileSync(settings.get('tls_ca')!) } : {}),
      })
    : new HttpAgent({ keepAlive: true });
  const request = https ? httpsRequest : httpRequest;

  return {
    send(body: Buffer): Promise<void> {
      const timeout = timeoutMs + (body.length / throughput) * 1000;
      return new Promise<void>((resolve, reject) => {
        const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) }, timeout }, (res) => {
          readAnswer(res).then((text) => {
            if (res.statusCode === 204 || res.statusCode === 200) resolve();
            else reject(new IlpRequestError(res.statusCode ?? 0, `QuestDB refused the write (HTTP ${res.statusCode}): ${errorMessage(text)}`));
          }, reject);
        });
        req.on('timeout', () => req.destroy(Object.assign(new Error(`QuestDB did not answer a write within ${Math.round(timeout)} ms`), { code: 'ETIMEDOUT' })));
        req.on('error', (err) => reject(new Error(`QuestDB write to ${url.host} failed: ${err.message}`, { cause: err })));
        req.end(body);
      });
    },
    async close(): Promise<void> {
      agent.destroy();
    },
  };
}

function positive(text: string | undefined): number | undefined {
  const n = Number(text);
  return text !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

function readAnswer(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (text.length < 64 * 1024) text += chunk;
    });
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

/** QuestDB's JSON error body ({"code","message","line","errorId"}) as one line. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; line?: unknown; errorId?: unknown };
    const parts = [String(body.message ?? text)];
    if (body.line !== undefined) parts.push(`line ${String(body.line)}`);
    if (body.errorId !== undefined) parts.push(`errorId ${String(body.errorId)}`);
    return parts.join(', ');
  } catch {
    return text.slice(0, 500) || 'no error body';
  }
}
