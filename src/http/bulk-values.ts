// A fast reader for the common shape of a bulk ingest body,
//   [{"xid":"...","value":<number>,"timestamp":<number>}, ...]
// straight into columns, without an object per value. Anything else (other keys, escapes in an
// XID, non-numeric values, malformed text) returns undefined and the caller uses JSON.parse and
// the general validation, which also produces the error messages: this reader never rejects.

export interface BulkColumns {
  length: number;
  /** Per row; consecutive rows of one point share one string. */
  xids: string[];
  values: Float64Array;
  timestamps: Float64Array;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

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

  number(): number | undefined {
    this.skipSpace();
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m) return undefined;
    this.pos += m[0].length;
    return Number(m[0]);
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

const KEY_XID = 1;
const KEY_VALUE = 2;
const KEY_TIMESTAMP = 4;

export function readBulkColumns(text: string): BulkColumns | undefined {
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
    if (!r.take(123 /* { */)) return undefined;
    let seen = 0;
    for (;;) {
      const key = r.string('');
      if (key === undefined || !r.take(58 /* : */)) return undefined;
      if (key === 'xid' && !(seen & KEY_XID)) {
        const xid = r.string(previousXid);
        if (xid === undefined) return undefined;
        xids.push(xid);
        previousXid = xid;
        seen |= KEY_XID;
      } else if (key === 'value' && !(seen & KEY_VALUE)) {
        const v = r.number();
        if (v === undefined) return undefined;
        values[n] = v;
        seen |= KEY_VALUE;
      } else if (key === 'timestamp' && !(seen & KEY_TIMESTAMP)) {
        const t = r.number();
        if (t === undefined) return undefined;
        timestamps[n] = t;
        seen |= KEY_TIMESTAMP;
      } else return undefined;
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
