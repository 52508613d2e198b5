// InfluxDB line protocol read byte by byte into columns: one row per field value, no object per line.
//   measurement[,tag=value...] field=value[,field=value...] [timestamp]
// The rules are InfluxDB 1.x's (models/points.go), which 2.x keeps: a backslash escapes the next byte
// while scanning; in names only `\,` and `\ ` (and `\=` in tag keys, tag values and field keys) lose
// their backslash, any other backslash stays; string field values unescape `\"` and `\\` and may
// span lines; floats are decimals, `i` ends a signed 64-bit integer and `u` an unsigned one; booleans
// are t T true True TRUE f F false False FALSE; `#` starts a comment line; blank lines are skipped;
// a line without a timestamp takes the server's time. Series (measurement and tags as sent) and field
// keys are decoded once per request, each distinct text keyed by its bytes.
// No maintained npm parser was both correct on these points and fast (see the README); hence this one.
import { DomainError } from './errors.js';

/** The value's type as the line wrote it. */
export const KIND_FLOAT = 0;
export const KIND_INTEGER = 1;
export const KIND_UNSIGNED = 2;
export const KIND_BOOLEAN = 3;
export const KIND_STRING = 4;
export type FieldKind = typeof KIND_FLOAT | typeof KIND_INTEGER | typeof KIND_UNSIGNED | typeof KIND_BOOLEAN | typeof KIND_STRING;

/** What a timestamp counts. InfluxDB 1.x sends n, u, ms, s, m, h; 2.x ns, us, ms, s. */
export const PRECISIONS = ['ns', 'n', 'us', 'u', 'µ', 'ms', 's', 'm', 'h'] as const;
export type Precision = (typeof PRECISIONS)[number];

/** Digits dropped to reach milliseconds (ns, us), or the factor that reaches them (s, m, h). */
const PRECISION_SCALE: Record<Precision, { drop: number; factor: number }> = {
  ns: { drop: 6, factor: 1 },
  n: { drop: 6, factor: 1 },
  us: { drop: 3, factor: 1 },
  u: { drop: 3, factor: 1 },
  µ: { drop: 3, factor: 1 },
  ms: { drop: 0, factor: 1 },
  s: { drop: 0, factor: 1_000 },
  m: { drop: 0, factor: 60_000 },
  h: { drop: 0, factor: 3_600_000 },
};

export function isPrecision(text: string): text is Precision {
  return (PRECISIONS as readonly string[]).includes(text);
}

export interface SeriesKey {
  measurement: string;
  /** In the order the line gave them. */
  tags: [string, string][];
}

export interface LineProtocolColumns {
  /** Field values (rows). */
  length: number;
  /** Lines that held points. */
  points: number;
  /** Per row: index into seriesKeys. */
  series: Int32Array;
  /** Per row: index into fieldKeys. */
  fields: Int32Array;
  kinds: Uint8Array;
  /** Numbers; booleans as 1 and 0; NaN for strings. */
  values: Float64Array;
  /** Per row, only when some row is a string. */
  strings: (string | null)[] | null;
  /** Epoch milliseconds (sub-millisecond digits dropped, towards the past). */
  timestamps: Float64Array;
  /** Per row: the 1-based line where its point began. */
  lines: Int32Array;
  seriesKeys: SeriesKey[];
  fieldKeys: string[];
}

/** A line that does not parse: its 1-based number and what is wrong with it. */
export class LineProtocolError extends Error {
  override readonly name = 'LineProtocolError';
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

const NL = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;
const COMMA = 44;
const EQUALS = 61;
const BACKSLASH = 92;
const QUOTE = 34;
const HASH = 35;
const MINUS = 45;
const PLUS = 43;
const DOT = 46;

const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

class Columns {
  length = 0;
  series: Int32Array;
  fields: Int32Array;
  kinds: Uint8Array;
  values: Float64Array;
  timestamps: Float64Array;
  lines: Int32Array;
  strings: (string | null)[] | null = null;

  constructor(capacity: number) {
    this.series = new Int32Array(capacity);
    this.fields = new Int32Array(capacity);
    this.kinds = new Uint8Array(capacity);
    this.values = new Float64Array(capacity);
    this.timestamps = new Float64Array(capacity);
    this.lines = new Int32Array(capacity);
  }

  grow(): void {
    const n = this.series.length * 2;
    const copy = <T extends Int32Array | Uint8Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.series = copy(this.series, (k) => new Int32Array(k));
    this.fields = copy(this.fields, (k) => new Int32Array(k));
    this.kinds = copy(this.kinds, (k) => new Uint8Array(k));
    this.values = copy(this.values, (k) => new Float64Array(k));
    this.timestamps = copy(this.timestamps, (k) => new Float64Array(k));
    this.lines = copy(this.lines, (k) => new Int32Array(k));
  }
}

/**
 * The distinct byte strings of one body (series as sent, field keys) → their index, found by a hash
 * of the bytes and a compare: no string is made per line, only one per distinct key.
 */
class ByteKeys {
  private readonly byHash = new Map<number, number>();
  /** Keys whose hash an earlier key has (rare): by their text. */
  private readonly collided = new Map<string, number>();
  private readonly raws: Uint8Array[] = [];
  private lastHash = 0;

  /** The index of the bytes [start, end), or -1. */
  find(buf: Buffer, start: number, end: number): number {
    let h = 0x811c9dc5;
    for (let p = start; p < end; p++) h = Math.imul(h ^ buf[p]!, 0x01000193);
    this.lastHash = h;
    const index = this.byHash.get(h);
    if (index !== undefined && sameBytes(this.raws[index]!, buf, start, end)) return index;
    if (this.collided.size === 0) return -1;
    return this.collided.get(buf.toString('latin1', start, end)) ?? -1;
  }

  /** Adds the bytes find() just missed; returns their index. */
  add(buf: Buffer, start: number, end: number): number {
    const index = this.raws.length;
    this.raws.push(buf.slice(start, end));
    if (this.byHash.has(this.lastHash)) this.collided.set(buf.toString('latin1', start, end), index);
    else this.byHash.set(this.lastHash, index);
    return index;
  }
}

function sameBytes(raw: Uint8Array, buf: Buffer, start: number, end: number): boolean {
  if (raw.length !== end - start) return false;
  for (let i = 0; i < raw.length; i++) if (raw[i] !== buf[start + i]) return false;
  return true;
}

class Parser {
  pos = 0;
  line = 1;
  private readonly seriesIndex = new ByteKeys();
  private readonly fieldIndex = new ByteKeys();
  readonly seriesKeys: SeriesKey[] = [];
  readonly fieldKeys: string[] = [];
  readonly out: Columns;
  points = 0;
  /** Whether the current name being scanned held a backslash. */
  private escaped = false;

  constructor(
    private readonly buf: Buffer,
    private readonly scale: { drop: number; factor: number },
    private readonly now: number,
  ) {
    this.out = new Columns(Math.max(16, Math.min(1 << 20, buf.length >> 4)));
  }

  fail(reason: string): never {
    throw new LineProtocolError(this.line, reason);
  }

  run(): void {
    const buf = this.buf;
    const end = buf.length;
    while (this.pos < end) {
      let c = buf[this.pos]!;
      while (c === SPACE || c === TAB || c === CR) c = buf[++this.pos]!;
      if (this.pos >= end) break;
      if (c === NL) {
        this.pos++;
        this.line++;
        continue;
      }
      if (c === HASH) {
        const nl = buf.indexOf(NL, this.pos);
        this.pos = nl < 0 ? end : nl;
        continue;
      }
      this.point();
    }
  }

  /** One point from its first byte to the end of its line (the newline is left for run()). */
  private point(): void {
    const buf = this.buf;
    const startLine = this.line;
    const start = this.pos;
    // Measurement and tags: up to the first unescaped space.
    const keyEnd = this.scanSeries();
    if (keyEnd === start) this.fail('missing measurement');
    if (buf[this.pos] !== SPACE) this.fail('missing fields');
    const series = this.seriesOf(start, keyEnd);
    while (buf[this.pos] === SPACE) this.pos++;
    // Fields.
    const firstRow = this.out.length;
    for (;;) {
      const keyStart = this.pos;
      const fieldKeyEnd = this.scanFieldKey();
      if (fieldKeyEnd === keyStart) this.fail('missing field key');
      if (buf[this.pos] !== EQUALS) this.fail(`missing field value for ${this.text(keyStart, fieldKeyEnd)}`);
      this.pos++;
      const field = this.fieldOf(keyStart, fieldKeyEnd);
      const out = this.out;
      if (out.length === out.series.length) out.grow();
      const row = out.length++;
      out.series[row] = series;
      out.fields[row] = field;
      out.lines[row] = startLine;
      this.value(row);
      const c = buf[this.pos];
      if (c === COMMA) {
        this.pos++;
        continue;
      }
      break;
    }
    // Timestamp, or the server's time.
    let ts = this.now;
    let c = buf[this.pos];
    if (c === SPACE || c === TAB) {
      while (c === SPACE || c === TAB) c = buf[++this.pos];
      if (c !== undefined && c !== NL && c !== CR) ts = this.timestamp();
    }
    c = buf[this.pos];
    while (c === SPACE || c === TAB || c === CR) c = buf[++this.pos];
    if (c !== undefined && c !== NL) this.fail(`unexpected '${String.fromCharCode(c)}' after the ${ts === this.now ? 'fields' : 'timestamp'}`);
    const out = this.out;
    for (let r = firstRow; r < out.length; r++) out.timestamps[r] = ts;
    this.points++;
  }

  /** Scans a measurement with its tags (to an unescaped space, or the end of the line); returns its end. */
  private scanSeries(): number {
    const buf = this.buf;
    const end = buf.length;
    let p = this.pos;
    let c = buf[p]!;
    if (c === COMMA) this.fail('missing measurement');
    while (p < end) {
      c = buf[p]!;
      // A backslash escapes the next byte, never a newline: a line ends where it ends.
      if (c === BACKSLASH && buf[p + 1] !== NL) {
        p += 2;
        continue;
      }
      if (c === SPACE || c === NL) break;
      if (c === CR && (p + 1 >= end || buf[p + 1] === NL)) break;
      p++;
    }
    if (p > end) p = end;
    this.pos = p;
    return p;
  }

  /** A field key: to an unescaped `=` (or where the line stops making sense). */
  private scanFieldKey(): number {
    const buf = this.buf;
    const end = buf.length;
    let p = this.pos;
    while (p < end) {
      const c = buf[p]!;
      if (c === BACKSLASH && buf[p + 1] !== NL) {
        p += 2;
        continue;
      }
      if (c === EQUALS || c === COMMA || c === SPACE || c === NL) break;
      p++;
    }
    if (p > end) p = end;
    this.pos = p;
    return p;
  }

  private seriesOf(start: number, end: number): number {
    const known = this.seriesIndex.find(this.buf, start, end);
    if (known >= 0) return known;
    this.seriesKeys.push(this.decodeSeries(start, end));
    return this.seriesIndex.add(this.buf, start, end);
  }

  private fieldOf(start: number, end: number): number {
    const known = this.fieldIndex.find(this.buf, start, end);
    if (known >= 0) return known;
    this.fieldKeys.push(this.unescapeName(start, end, true));
    return this.fieldIndex.add(this.buf, start, end);
  }

  /** Splits measurement,k=v,... at unescaped commas and equals signs, then unescapes each part. */
  private decodeSeries(start: number, end: number): SeriesKey {
    const buf = this.buf;
    const parts: [number, number][] = [];
    let p = start;
    let partStart = start;
    while (p < end) {
      const c = buf[p]!;
      if (c === BACKSLASH) {
        p += 2;
        continue;
      }
      if (c === COMMA) {
        parts.push([partStart, p]);
        partStart = p + 1;
      }
      p++;
    }
    parts.push([partStart, Math.min(p, end)]);
    const [m, ...tagParts] = parts;
    const measurement = this.unescapeName(m![0], m![1], false);
    const tags: [string, string][] = [];
    for (const [a, b] of tagParts) {
      let eq = -1;
      for (let q = a; q < b; q++) {
        const c = buf[q]!;
        if (c === BACKSLASH) {
          q++;
          continue;
        }
        if (c === EQUALS) {
          eq = q;
          break;
        }
      }
      if (a === b) this.fail('missing tag key');
      if (eq < 0) this.fail(`missing tag value for ${this.text(a, b)}`);
      if (eq === a) this.fail('missing tag key');
      if (eq + 1 === b) this.fail(`missing tag value for ${this.text(a, eq)}`);
      tags.push([this.unescapeName(a, eq, true), this.unescapeName(eq + 1, b, true)]);
    }
    return { measurement, tags };
  }

  /** A name's bytes as text: `\,` and `\ ` (and `\=` when `equals`) lose their backslash; strict UTF-8, no U+0000. */
  private unescapeName(start: number, end: number, equals: boolean): string {
    const buf = this.buf;
    let plain = true;
    for (let p = start; p < end; p++) if (buf[p] === BACKSLASH) plain = false;
    let bytes: Uint8Array;
    if (plain) bytes = buf.subarray(start, end);
    else {
      const copy = new Uint8Array(end - start);
      let n = 0;
      for (let p = start; p < end; p++) {
        const c = buf[p]!;
        const next = buf[p + 1];
        if (c === BACKSLASH && p + 1 < end && (next === COMMA || next === SPACE || (equals && next === EQUALS))) {
          copy[n++] = next;
          p++;
        } else copy[n++] = c;
      }
      bytes = copy.subarray(0, n);
    }
    return this.decode(bytes);
  }

  private decode(bytes: Uint8Array): string {
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      this.fail('invalid UTF-8');
    }
    if (text.includes('\u0000')) this.fail('U+0000 is not allowed');
    return text;
  }

  /** For messages: a name as sent, cut short. */
  private text(start: number, end: number): string {
    return JSON.stringify(this.buf.toString('utf8', start, Math.min(end, start + 64)));
  }

  private value(row: number): void {
    const buf = this.buf;
    const c = buf[this.pos];
    const out = this.out;
    if (c === QUOTE) {
      out.kinds[row] = KIND_STRING;
      out.values[row] = NaN;
      (out.strings ??= [])[row] = this.stringValue();
      return;
    }
    if (c === undefined || c === NL || c === SPACE || c === COMMA || c === CR) this.fail('missing field value');
    if (isDigit(c) || c === MINUS || c === PLUS || c === DOT) {
      this.numberValue(row);
      return;
    }
    const start = this.pos;
    let p = start;
    while (p < buf.length) {
      const d = buf[p]!;
      if (d === COMMA || d === SPACE || d === NL || d === TAB || d === CR) break;
      p++;
    }
    const word = buf.toString('latin1', start, p);
    const bool = BOOLEANS[word];
    if (bool === undefined) this.fail(`invalid field value ${this.text(start, p)}`);
    this.pos = p;
    out.kinds[row] = KIND_BOOLEAN;
    out.values[row] = bool;
  }

  private numberValue(row: number): void {
    const buf = this.buf;
    const start = this.pos;
    let p = start;
    let c = buf[p]!;
    const negative = c === MINUS;
    if (c === MINUS || c === PLUS) c = buf[++p]!;
    if (buf[start] === PLUS) this.fail('invalid number: a leading + is not allowed');
    let m = 0;
    let digits = 0;
    const intStart = p;
    while (isDigit(c)) {
      m = m * 10 + (c - 48);
      digits++;
      c = buf[++p]!;
    }
    const intDigits = p - intStart;
    const out = this.out;
    if (c === 105 /* i */ || c === 117 /* u */) {
      if (intDigits === 0) this.fail('invalid number');
      if (c === 117 && negative) this.fail('invalid unsigned integer: must not be negative');
      this.pos = p + 1;
      this.endOfValue();
      let v = negative ? -m : m;
      if (intDigits > 15) {
        const big = BigInt(buf.toString('latin1', start, p));
        if (c === 105 ? big < INT64_MIN || big > INT64_MAX : big > UINT64_MAX) this.fail(`${c === 105 ? 'integer' : 'unsigned integer'} out of range`);
        v = Number(big);
      }
      out.kinds[row] = c === 105 ? KIND_INTEGER : KIND_UNSIGNED;
      out.values[row] = v;
      return;
    }
    let fracDigits = 0;
    if (c === DOT) {
      c = buf[++p]!;
      while (isDigit(c)) {
        m = m * 10 + (c - 48);
        digits++;
        fracDigits++;
        c = buf[++p]!;
      }
    }
    if (intDigits + fracDigits === 0) this.fail('invalid number');
    let exponent = false;
    if (c === 101 || c === 69 /* e E */) {
      exponent = true;
      c = buf[++p]!;
      if (c === PLUS || c === MINUS) c = buf[++p]!;
      if (!isDigit(c)) this.fail('invalid number');
      while (isDigit(c)) c = buf[++p]!;
    }
    this.pos = p;
    this.endOfValue();
    let v: number;
    if (!exponent && digits <= 15) v = (negative ? -m : m) / POW10[fracDigits]!;
    else v = Number(buf.toString('latin1', start, p));
    if (!Number.isFinite(v)) this.fail('number out of range');
    out.kinds[row] = KIND_FLOAT;
    out.values[row] = v;
  }

  /** After a number: the next field, the timestamp or the end of the line. */
  private endOfValue(): void {
    const c = this.buf[this.pos];
    if (c !== undefined && c !== COMMA && c !== SPACE && c !== NL && c !== TAB && c !== CR) this.fail('invalid number');
  }

  /** A quoted string: `\"` and `\\` unescaped, other backslashes kept; newlines inside count as lines. */
  private stringValue(): string {
    const buf = this.buf;
    const start = ++this.pos;
    let p = start;
    let escapes = false;
    let lines = 0;
    for (;;) {
      if (p >= buf.length) this.fail('unterminated string');
      const c = buf[p]!;
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escapes = true;
        if (buf[p + 1] === NL) lines++;
        p += 2;
        continue;
      }
      if (c === NL) lines++;
      p++;
    }
    this.pos = p + 1;
    let bytes: Uint8Array = buf.subarray(start, p);
    if (escapes) {
      const copy = new Uint8Array(p - start);
      let n = 0;
      for (let q = start; q < p; q++) {
        const c = buf[q]!;
        const next = buf[q + 1];
        if (c === BACKSLASH && (next === QUOTE || next === BACKSLASH)) {
          copy[n++] = next;
          q++;
        } else copy[n++] = c;
      }
      bytes = copy.subarray(0, n);
    }
    const text = this.decode(bytes);
    this.line += lines;
    const c = buf[this.pos];
    if (c !== undefined && c !== COMMA && c !== SPACE && c !== NL && c !== TAB && c !== CR) this.fail('unexpected text after a string field value');
    return text;
  }

  private timestamp(): number {
    const buf = this.buf;
    let p = this.pos;
    const negative = buf[p] === MINUS;
    if (negative) p++;
    const digitsStart = p;
    while (isDigit(buf[p]!)) p++;
    const digits = p - digitsStart;
    const c = buf[p];
    if (digits === 0 || (c !== undefined && c !== NL && c !== SPACE && c !== TAB && c !== CR)) this.fail('invalid timestamp');
    if (digits > 19) this.fail('timestamp out of range');
    this.pos = p;
    const { drop, factor } = this.scale;
    const kept = digits - drop;
    let ms = 0;
    for (let q = digitsStart; q < digitsStart + kept; q++) ms = ms * 10 + (buf[q]! - 48);
    let remainder = false;
    for (let q = Math.max(digitsStart, digitsStart + kept); q < p; q++) if (buf[q] !== 48) remainder = true;
    if (negative) ms = -ms - (remainder ? 1 : 0);
    ms *= factor;
    if (!Number.isSafeInteger(ms)) this.fail('timestamp out of range');
    return ms;
  }
}

const BOOLEANS: Record<string, number | undefined> = Object.assign(Object.create(null) as Record<string, number>, {
  t: 1,
  T: 1,
  true: 1,
  True: 1,
  TRUE: 1,
  f: 0,
  F: 0,
  false: 0,
  False: 0,
  FALSE: 0,
});

/**
 * Parses a whole body; throws LineProtocolError naming the first line that does not parse. `now`
 * (epoch ms) stamps lines without a timestamp.
 */
export function parseLineProtocol(body: Buffer, precision: Precision = 'ns', now = Date.now()): LineProtocolColumns {
  const parser = new Parser(body, PRECISION_SCALE[precision], now);
  parser.run();
  const o = parser.out;
  if (o.strings) for (let i = 0; i < o.length; i++) o.strings[i] ??= null;
  return {
    length: o.length,
    points: parser.points,
    series: o.series.subarray(0, o.length),
    fields: o.fields.subarray(0, o.length),
    kinds: o.kinds.subarray(0, o.length),
    values: o.values.subarray(0, o.length),
    strings: o.strings,
    timestamps: o.timestamps.subarray(0, o.length),
    lines: o.lines.subarray(0, o.length),
    seriesKeys: parser.seriesKeys,
    fieldKeys: parser.fieldKeys,
  };
}

/** A refusal about one line of a line-protocol body: the answer names it (InfluxDB's `line` field too). */
export class LineDomainError extends DomainError {
  constructor(
    kind: 'bad-request' | 'invalid',
    readonly line: number,
    message: string,
  ) {
    super(kind, message);
  }
}
