// A fast reader for the common shape of a bulk ingest body,
//   [{"xid":"...","value":<number>,"timestamp":<number>}, ...]
// straight into columns, without an object per value. Anything else (other keys, escapes in an
// XID, non-numeric values, malformed text) returns undefined and the caller uses JSON.parse and
// the general validation, which also produces the error messages: this reader never rejects.
// A 16 MiB body takes this reader a few hundred milliseconds: it shares the event loop meanwhile.
import { TimeSlice } from './time-slice.js';

export interface BulkColumns {
  length: number;
  /** Per row; consecutive rows of one point share one string. */
  xids: string[];
  values: Float64Array;
  timestamps: Float64Array;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** Exact powers of ten: a decimal with at most 15 significant digits is m / 10^k, correctly rounded. */
const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k);
const MAX_FAST_DIGITS = 15;

const KEY_XID = 1;
const KEY_VALUE = 2;
const KEY_TIMESTAMP = 4;
/** Characters of each key with its quotes, by KEY_ bit. */
const KEY_TEXT_LENGTH: Record<number, number> = { [KEY_XID]: 5, [KEY_VALUE]: 7, [KEY_TIMESTAMP]: 11 };

class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  skipSpace(): void {
    const t = this.text;
    let c = t.charCodeAt(this.pos);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = t.charCodeAt(++this.pos);
  }

  /** Consumes `ch` (after optional space) or reports false. */
  take(ch: number): boolean {
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) !== ch) return false;
    this.pos++;
    return true;
  }

  /**
   * A JSON number. Plain decimals of up to 15 digits (timestamps, most measurements) are built from
   * their digits: both m and 10^k are exact doubles, so one division rounds exactly as Number() does.
   * Anything longer or with an exponent goes through the regular expression and Number().
   */
  number(): number | undefined {
    this.skipSpace();
    const t = this.text;
    let pos = this.pos;
    const negative = t.charCodeAt(pos) === 45; /* - */
    if (negative) pos++;
    const intStart = pos;
    let m = 0;
    let c = t.charCodeAt(pos);
    while (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      c = t.charCodeAt(++pos);
    }
    let digits = pos - intStart;
    if (digits === 0 || (digits > 1 && t.charCodeAt(intStart) === 48)) return undefined;
    let scale = 0;
    if (c === 46 /* . */) {
      const fracStart = ++pos;
      c = t.charCodeAt(pos);
      while (c >= 48 && c <= 57) {
        m = m * 10 + (c - 48);
        c = t.charCodeAt(++pos);
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
    return this.numberSlow();
  }

  private numberSlow(): number | undefined {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m) return undefined;
    this.pos += m[0].length;
    return Number(m[0]);
  }

  /** One of the three keys, as its KEY_ bit, or 0 for anything else. */
  key(): number {
    this.skipSpace();
    const t = this.text;
    const p = this.pos;
    if (t.charCodeAt(p) !== 34 /* " */) return 0;
    const key = t.startsWith('xid"', p + 1) ? KEY_XID : t.startsWith('value"', p + 1) ? KEY_VALUE : t.startsWith('timestamp"', p + 1) ? KEY_TIMESTAMP : 0;
    if (key !== 0) this.pos = p + KEY_TEXT_LENGTH[key]!;
    return key;
  }

  /** A string without escapes; `previous` is returned (not a new string) when it matches. */
  string(previous: string): string | undefined {
    if (!this.take(34 /* " */)) return undefined;
    const end = this.text.indexOf('"', this.pos);
    if (end < 0) return undefined;
    const length = end - this.pos;
    let s: string;
    if (length === previous.length && this.text.startsWith(previous, this.pos)) s = previous;
    else {
      s = this.text.slice(this.pos, end);
      if (s.includes('\\')) return undefined;
    }
    this.pos = end + 1;
    return s;
  }
}

/** Rows read between looks at the time slice. */
const SLICE_CHECK_ROWS = 1024;

export async function readBulkColumns(text: string, slice = new TimeSlice()): Promise<BulkColumns | undefined> {
  const r = new Reader(text);
  if (!r.take(91 /* [ */)) return undefined;
  // Each row holds at least {"xid":"","value":0,"timestamp":0}: 35 characters.
  const capacity = Math.ceil(text.length / 35) + 1;
  const values = new Float64Array(capacity);
  const timestamps = new Float64Array(capacity);
  const xids: string[] = [];
  let previousXid = '';
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
        const xid = r.string(previousXid);
        if (xid === undefined) return undefined;
        xids.push(xid);
        previousXid = xid;
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
  return r.pos === r.text.length ? columns : undefined;
}
