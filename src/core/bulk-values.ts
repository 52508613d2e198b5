// A fast reader for the common shape of a bulk ingest body,
//   [{"xid":"...","value":<number>,"timestamp":<number>}, ...]
// straight into columns, without an object per value. Anything else (other keys, escapes in an
// XID, non-numeric values, malformed text) returns undefined and the caller uses JSON.parse and
// the general validation, which also produces the error messages: this reader never rejects.
// It reads the body's bytes (UTF-8, checked by the caller), so the usual body is never turned into
// a string: only each new XID is decoded. A 16 MiB body takes this reader some 100 ms: it shares
// the event loop meanwhile.
import { TimeSlice } from './time-slice.js';

export interface BulkColumns {
  length: number;
  /** Per row; consecutive rows of one point share one string. */
  xids: string[];
  values: Float64Array;
  timestamps: Float64Array;
}

/** The whole text of a JSON number (the reader's slow path checks a candidate against it). */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** Exact powers of ten: a decimal with at most 15 significant digits is m / 10^k, correctly rounded. */
const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k);
const MAX_FAST_DIGITS = 15;

const KEY_XID = 1;
const KEY_VALUE = 2;
const KEY_TIMESTAMP = 4;
const KEY_TEXT: Record<number, Buffer> = { [KEY_XID]: Buffer.from('"xid"'), [KEY_VALUE]: Buffer.from('"value"'), [KEY_TIMESTAMP]: Buffer.from('"timestamp"') };
const QUOTE = 34;
const BACKSLASH = 92;

class Reader {
  pos = 0;
  readonly length: number;
  /** The previous XID, and where its bytes are: a row repeating it costs a byte comparison. */
  private xid = '';
  private xidStart = 0;
  private xidLength = -1;

  constructor(readonly bytes: Buffer) {
    this.length = bytes.length;
  }

  /** The byte at i, or -1 past the end (never a read out of the array's bounds). */
  private at(i: number): number {
    return i < this.length ? this.bytes[i]! : -1;
  }

  skipSpace(): void {
    let c = this.at(this.pos);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = this.at(++this.pos);
  }

  /** Consumes `ch` (after optional space) or reports false. */
  take(ch: number): boolean {
    this.skipSpace();
    if (this.at(this.pos) !== ch) return false;
    this.pos++;
    return true;
  }

  /**
   * A JSON number. Plain decimals of up to 15 digits (timestamps, most measurements) are built from
   * their digits: both m and 10^k are exact doubles, so one division rounds exactly as Number() does.
   * Anything longer or with an exponent goes through Number() once its text is a JSON number.
   */
  number(): number | undefined {
    this.skipSpace();
    const start = this.pos;
    let pos = start;
    const negative = this.at(pos) === 45; /* - */
    if (negative) pos++;
    const intStart = pos;
    let m = 0;
    let c = this.at(pos);
    while (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      c = this.at(++pos);
    }
    let digits = pos - intStart;
    if (digits === 0 || (digits > 1 && this.at(intStart) === 48)) return undefined;
    let scale = 0;
    if (c === 46 /* . */) {
      const fracStart = ++pos;
      c = this.at(pos);
      while (c >= 48 && c <= 57) {
        m = m * 10 + (c - 48);
        c = this.at(++pos);
      }
      scale = pos - fracStart;
      if (scale === 0) return undefined;
      digits += scale;
    }
    if (c !== 101 && c !== 69 /* e E */ && digits <= MAX_FAST_DIGITS) {
      this.pos = pos;
      const v = scale === 0 ? m : m / POW10[scale]!;
      return negative ? -v : v;
    }
    return this.numberSlow(start);
  }

  /** A number's characters from `start` (digits, sign, point, exponent), read by Number() when they are a JSON number. */
  private numberSlow(start: number): number | undefined {
    let end = start;
    for (let c = this.at(end); (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69; c = this.at(++end));
    const text = this.bytes.toString('latin1', start, end);
    if (!NUMBER.test(text)) return undefined;
    this.pos = end;
    return Number(text);
  }

  /** One of the three keys, as its KEY_ bit, or 0 for anything else. */
  key(): number {
    this.skipSpace();
    const p = this.pos;
    if (this.at(p) !== QUOTE) return 0;
    const second = this.at(p + 1);
    const key = second === 120 /* x */ ? KEY_XID : second === 118 /* v */ ? KEY_VALUE : second === 116 /* t */ ? KEY_TIMESTAMP : 0;
    if (key === 0) return 0;
    const text = KEY_TEXT[key]!;
    for (let k = 2; k < text.length; k++) if (this.at(p + k) !== text[k]) return 0;
    this.pos = p + text.length;
    return key;
  }

  /** A string without escapes or control characters; the previous XID's string is returned (not a new one) when it matches. */
  xidString(): string | undefined {
    if (!this.take(QUOTE)) return undefined;
    const start = this.pos;
    const end = this.bytes.indexOf(QUOTE, start);
    if (end < 0) return undefined;
    const length = end - start;
    this.pos = end + 1;
    if (length === this.xidLength && this.sameBytes(start, this.xidStart, length)) return this.xid;
    // An escape, or a control character JSON does not allow raw (U+0000 must never reach a lookup).
    for (let k = start; k < end; k++) if (this.bytes[k] === BACKSLASH || this.bytes[k]! < 32) return undefined;
    this.xid = this.bytes.toString('utf8', start, end);
    this.xidStart = start;
    this.xidLength = length;
    return this.xid;
  }

  private sameBytes(a: number, b: number, length: number): boolean {
    const bytes = this.bytes;
    for (let k = 0; k < length; k++) if (bytes[a + k] !== bytes[b + k]) return false;
    return true;
  }
}

/** Rows read between looks at the time slice. */
const SLICE_CHECK_ROWS = 1024;

/**
 * `body`: the bytes of the body (valid UTF-8, without a byte order mark: the caller checked), or
 * its text. Returns undefined for anything but the usual shape.
 */
export async function readBulkColumns(body: Buffer | string, slice = new TimeSlice()): Promise<BulkColumns | undefined> {
  const r = new Reader(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  if (!r.take(91 /* [ */)) return undefined;
  // Each row holds at least {"xid":"","value":0,"timestamp":0}: 35 bytes.
  const capacity = Math.ceil(r.length / 35) + 1;
  const values = new Float64Array(capacity);
  const timestamps = new Float64Array(capacity);
  const xids: string[] = [];
  let n = 0;
  if (r.take(93 /* ] */)) return end(r, { length: 0, xids, values, timestamps });
  for (;;) {
    if (n % SLICE_CHECK_ROWS === 0) await slice.yieldIfExpired();
    if (!r.take(123 /* { */)) return undefined;
    let seen = 0;
    for (;;) {
      const key = r.key();
      if (key === 0 || key & seen || !r.take(58 /* : */)) return undefined;
      if (key === KEY_XID) {
        const xid = r.xidString();
        if (xid === undefined) return undefined;
        xids.push(xid);
        seen |= KEY_XID;
      } else if (key === KEY_VALUE) {
        const v = r.number();
        if (v === undefined) return undefined;
        values[n] = v;
        seen |= KEY_VALUE;
      } else {
        const t = r.number();
        if (t === undefined) return undefined;
        timestamps[n] = t;
        seen |= KEY_TIMESTAMP;
      }
      if (r.take(125 /* } */)) break;
      if (!r.take(44 /* , */)) return undefined;
    }
    if (seen !== (KEY_XID | KEY_VALUE | KEY_TIMESTAMP)) return undefined;
    n++;
    if (r.take(93 /* ] */)) break;
    if (!r.take(44 /* , */)) return undefined;
  }
  return end(r, { length: n, xids, values, timestamps });
}

function end(r: Reader, columns: BulkColumns): BulkColumns | undefined {
  r.skipSpace();
  return r.pos === r.length ? columns : undefined;
}
