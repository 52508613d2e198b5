// core/line-protocol.ts against a slow reference written from the same rules (string operations and
// regular expressions, no byte scanning), fuzzed with fast-check over an alphabet of the protocol's
// own delimiters; and round trips through @influxdata/influxdb-client's own encoder (Point).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Point } from '@influxdata/influxdb-client';
import { KIND_BOOLEAN, KIND_FLOAT, KIND_INTEGER, KIND_STRING, KIND_UNSIGNED, LineProtocolError, parseLineProtocol, type Precision } from '../src/core/line-protocol.js';

interface Row {
  measurement: string;
  tags: [string, string][];
  field: string;
  kind: number;
  value: number | string;
  ts: number;
  line: number;
}

type Outcome = { rows: Row[] } | { errorLine: number };

const NOW = 1_700_000_000_123;
const BOOLEANS: Record<string, number> = { t: 1, T: 1, true: 1, True: 1, TRUE: 1, f: 0, F: 0, false: 0, False: 0, FALSE: 0 };
const DROP: Record<string, number> = { ns: 6, us: 3, ms: 0, s: 0 };
const FACTOR: Record<string, number> = { ns: 1, us: 1, ms: 1, s: 1000 };

/** The reference: a line at a time by string slicing; the same rules as the module's header says. */
function reference(text: string, precision: 'ns' | 'us' | 'ms' | 's'): Outcome {
  const rows: Row[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  class Fail extends Error {}
  const fail = (): never => {
    throw new Fail();
  };
  const checkText = (s: string) => {
    if (s.includes('\u0000')) fail();
    return s;
  };
  /** Reads to the first of `stops` not escaped by a backslash (a backslash never escapes a newline). */
  const readEscaped = (stops: (c: string, at: number) => boolean): string => {
    const start = i;
    while (i < n) {
      if (text[i] === '\\' && text[i + 1] !== '\n') {
        i = Math.min(i + 2, n);
        continue;
      }
      if (stops(text[i]!, i)) break;
      i++;
    }
    return text.slice(start, i);
  };
  const splitUnescaped = (s: string, sep: string): string[] => {
    const parts: string[] = [];
    let cur = '';
    for (let k = 0; k < s.length; k++) {
      if (s[k] === '\\') {
        cur += s.slice(k, k + 2);
        k++;
      } else if (s[k] === sep) {
        parts.push(cur);
        cur = '';
      } else cur += s[k];
    }
    parts.push(cur);
    return parts;
  };
  const firstUnescaped = (s: string, sep: string): number => {
    for (let k = 0; k < s.length; k++) {
      if (s[k] === '\\') k++;
      else if (s[k] === sep) return k;
    }
    return -1;
  };
  const unName = (s: string) => checkText(s.replace(/\\([, =])/g, '$1'));
  const unMeasurement = (s: string) => checkText(s.replace(/\\([, ])/g, '$1'));
  try {
    while (i < n) {
      while (i < n && ' \t\r'.includes(text[i]!)) i++;
      if (i >= n) break;
      if (text[i] === '\n') {
        line++;
        i++;
        continue;
      }
      if (text[i] === '#') {
        while (i < n && text[i] !== '\n') i++;
        continue;
      }
      const startLine = line;
      if (text[i] === ',') fail();
      const series = readEscaped((c, at) => c === ' ' || c === '\n' || (c === '\r' && (at + 1 >= n || text[at + 1] === '\n')));
      if (text[i] !== ' ') fail();
      const [m, ...tagParts] = splitUnescaped(series, ',');
      const measurement = unMeasurement(m!);
      const tags: [string, string][] = tagParts.map((part) => {
        const eq = firstUnescaped(part, '=');
        if (eq <= 0 || eq === part.length - 1) fail();
        return [unName(part.slice(0, eq)), unName(part.slice(eq + 1))];
      });
      while (text[i] === ' ') i++;
      const pointRows: Omit<Row, 'ts'>[] = [];
      for (;;) {
        const key = readEscaped((c) => c === '=' || c === ',' || c === ' ' || c === '\n');
        if (key === '' || text[i] !== '=') fail();
        i++;
        const field = unName(key);
        let kind: number;
        let value: number | string;
        if (text[i] === '"') {
          const start = ++i;
          let lines = 0;
          while (i < n && text[i] !== '"') {
            if (text[i] === '\\') {
              if (text[i + 1] === '\n') lines++;
              i += 2;
              continue;
            }
            if (text[i] === '\n') lines++;
            i++;
          }
          if (i >= n) fail();
          value = checkText(text.slice(start, i).replace(/\\(["\\])/g, '$1'));
          i++;
          line += lines;
          kind = KIND_STRING;
          if (i < n && !',\n\t\r '.includes(text[i]!)) fail();
        } else {
          const start = i;
          while (i < n && !', \n\t\r'.includes(text[i]!)) i++;
          const token = text.slice(start, i);
          if (/^-?\d+i$/.test(token)) {
            const big = BigInt(token.slice(0, -1));
            if (big < -(2n ** 63n) || big > 2n ** 63n - 1n) fail();
            kind = KIND_INTEGER;
            value = Number(big);
          } else if (/^\d+u$/.test(token)) {
            const big = BigInt(token.slice(0, -1));
            if (big > 2n ** 64n - 1n) fail();
            kind = KIND_UNSIGNED;
            value = Number(big);
          } else if (/^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(token)) {
            kind = KIND_FLOAT;
            value = Number(token);
            if (!Number.isFinite(value)) fail();
          } else if (token in BOOLEANS) {
            kind = KIND_BOOLEAN;
            value = BOOLEANS[token]!;
          } else return fail();
        }
        pointRows.push({ measurement, tags, field, kind, value, line: startLine });
        if (text[i] === ',') {
          i++;
          continue;
        }
        break;
      }
      let ts = NOW;
      if (text[i] === ' ' || text[i] === '\t') {
        while (text[i] === ' ' || text[i] === '\t') i++;
        if (i < n && text[i] !== '\n' && text[i] !== '\r') {
          const start = i;
          while (i < n && !' \t\r\n'.includes(text[i]!)) i++;
          const token = text.slice(start, i);
          if (!/^-?\d{1,19}$/.test(token)) fail();
          const negative = token.startsWith('-');
          const digits = negative ? token.slice(1) : token;
          const drop = DROP[precision]!;
          const kept = digits.slice(0, Math.max(0, digits.length - drop));
          const rest = digits.slice(Math.max(0, digits.length - drop));
          let ms = Number(kept || '0');
          if (negative) ms = -ms - (/[1-9]/.test(rest) ? 1 : 0);
          ms *= FACTOR[precision]!;
          if (!Number.isSafeInteger(ms)) fail();
          ts = ms;
        }
      }
      while (i < n && ' \t\r'.includes(text[i]!)) i++;
      if (i < n && text[i] !== '\n') fail();
      for (const r of pointRows) rows.push({ ...r, ts });
    }
  } catch (err) {
    if (err instanceof Fail) return { errorLine: line };
    throw err;
  }
  return { rows };
}

function parsed(text: string, precision: Precision): Outcome {
  try {
    const c = parseLineProtocol(Buffer.from(text, 'utf8'), precision, NOW);
    const rows: Row[] = [];
    for (let i = 0; i < c.length; i++) {
      const s = c.seriesKeys[c.series[i]!]!;
      rows.push({
        measurement: s.measurement,
        tags: s.tags,
        field: c.fieldKeys[c.fields[i]!]!,
        kind: c.kinds[i]!,
        value: c.kinds[i] === KIND_STRING ? c.strings![i]! : c.values[i]!,
        ts: c.timestamps[i]!,
        line: c.lines[i]!,
      });
    }
    return { rows };
  } catch (err) {
    if (err instanceof LineProtocolError) return { errorLine: err.line };
    throw err;
  }
}

/** Pieces a line-protocol body is made of, so that random bodies are often almost right. */
const piece = fc.constantFrom(
  'm', 'cpu', 'é', ',', ' ', '=', '\\', '"', '\n', '\r', '\t', '#', 'host', 'a', 't', 'T', 'true', 'FALSE', 'f',
  '1', '0', '-', '.', 'e', 'E', '+', 'i', 'u', '12', '3.25', '1e3', '9223372036854775807', '99999999999999999999',
  '1700000000000000000', '\u0000', 'x=1', ' v=2 ', 'k=v', '"s"', '\\"', '\\\\', '\\,', '\\ ', '\\=',
);
const body = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));
const lineLike = fc
  .array(
    fc.tuple(
      fc.constantFrom('m', 'cpu load', 'a\\,b', 'é'),
      fc.array(fc.tuple(fc.constantFrom('k', 'host', 'a=b', 'x y'), fc.constantFrom('v', '1', 'c,d', 'e f')), { maxLength: 3 }),
      fc.array(fc.tuple(fc.constantFrom('v', 'f', 'a b'), fc.constantFrom('1', '-2.5', '3i', '4u', 'true', 'F', '"q\\"x"', '"multi\nline"', '1e400', '.5', 'x')), { minLength: 1, maxLength: 3 }),
      fc.option(fc.constantFrom('1700000000000000000', '-1500', '0', '12x'), { nil: undefined }),
    ),
    { maxLength: 6 },
  )
  .map((points) =>
    points
      .map(([m, tags, fields, ts]) => {
        const esc = (s: string) => s.replace(/([, =])/g, '\\$1');
        const head = [m.replace(/([, ])/g, '\\$1'), ...tags.map(([k, v]) => `${esc(k)}=${esc(v)}`)].join(',');
        return `${head} ${fields.map(([k, v]) => `${esc(k)}=${v}`).join(',')}${ts === undefined ? '' : ` ${ts}`}`;
      })
      .join('\n'),
  );

describe('line protocol parser', () => {
  it('agrees with the reference on random bodies made of its delimiters (fuzz)', () => {
    fc.assert(
      fc.property(body, fc.constantFrom('ns', 'us', 'ms', 's' as const), (text, precision) => {
        assert.deepEqual(parsed(text, precision), reference(text, precision), JSON.stringify(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('agrees with the reference on random well-shaped lines (fuzz)', () => {
    fc.assert(
      fc.property(lineLike, fc.constantFrom('ns', 'ms', 's' as const), (text, precision) => {
        assert.deepEqual(parsed(text, precision), reference(text, precision), JSON.stringify(text));
      }),
      { numRuns: 5_000 },
    );
  });

  it('reads back what the InfluxDB client encodes (round trip, property)', () => {
    const name = fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom('a', 'Z', '0', ' ', ',', '=', '\\', '"', 'é', '_', '#', '\n') });
    // A backslash before a delimiter (or at the end) cannot be told from an escape in line protocol,
    // whoever encodes it (InfluxDB's documentation says as much); names here avoid that one case.
    const tagValue = name.filter((s) => !/\\([ ,=]|$)/.test(s) && !s.includes('\n'));
    const key = tagValue.filter((s) => !s.startsWith('#'));
    fc.assert(
      fc.property(
        key,
        fc.dictionary(key, tagValue, { maxKeys: 3 }),
        fc.oneof(
          fc.record({ kind: fc.constant(KIND_FLOAT), value: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
          fc.record({ kind: fc.constant(KIND_INTEGER), value: fc.integer() }),
          fc.record({ kind: fc.constant(KIND_UNSIGNED), value: fc.nat() }),
          fc.record({ kind: fc.constant(KIND_BOOLEAN), value: fc.boolean() }),
          fc.record({ kind: fc.constant(KIND_STRING), value: fc.string({ maxLength: 20, unit: fc.constantFrom('a', '"', '\\', ' ', ',', '\n', 'é') }) }),
        ),
        key,
        fc.integer({ min: -1e12, max: 4e12 }),
        (measurement, tags, f, fieldKey, ts) => {
          const p = new Point(measurement).timestamp(String(ts));
          for (const [k, v] of Object.entries(tags)) p.tag(k, v);
          if (f.kind === KIND_FLOAT) p.floatField(fieldKey, f.value);
          else if (f.kind === KIND_INTEGER) p.intField(fieldKey, f.value);
          else if (f.kind === KIND_UNSIGNED) p.uintField(fieldKey, f.value);
          else if (f.kind === KIND_BOOLEAN) p.booleanField(fieldKey, f.value);
          else p.stringField(fieldKey, f.value);
          const text = p.toLineProtocol()!;
          const out = parsed(text, 'ms');
          assert.ok('rows' in out, `${JSON.stringify(text)} did not parse`);
          assert.equal(out.rows.length, 1);
          const row = out.rows[0]!;
          assert.equal(row.measurement, measurement);
          assert.deepEqual(Object.fromEntries(row.tags), { ...tags });
          assert.equal(row.field, fieldKey);
          assert.equal(row.kind, f.kind);
          const expected = typeof f.value === 'boolean' ? Number(f.value) : f.value;
          assert.equal(row.value, expected === 0 ? 0 : expected, 'the client writes -0 as 0');
          assert.equal(row.ts, ts);
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('reads the documented forms', () => {
    const text = [
      '# comment',
      '',
      'weather,location=us\\,midwest,sea\\ level=0\\=1 temperature=82,wind=-1.5e1,count=7i,big=18446744073709551615u,ok=t,note="say \\"hi\\" \\\\ \\n" 1465839830100400200',
      'my\\ measurement,tag\\=key=v field\\ key="line one',
      'line two"',
      'cpu v=.5 -1465839830100400200',
    ].join('\n');
    const out = parsed(text, 'ns');
    assert.ok('rows' in out);
    assert.deepEqual(
      out.rows.map((r) => [r.measurement, r.tags, r.field, r.kind, r.value, r.ts, r.line]),
      [
        ['weather', [['location', 'us,midwest'], ['sea level', '0=1']], 'temperature', KIND_FLOAT, 82, 1465839830100, 3],
        ['weather', [['location', 'us,midwest'], ['sea level', '0=1']], 'wind', KIND_FLOAT, -15, 1465839830100, 3],
        ['weather', [['location', 'us,midwest'], ['sea level', '0=1']], 'count', KIND_INTEGER, 7, 1465839830100, 3],
        ['weather', [['location', 'us,midwest'], ['sea level', '0=1']], 'big', KIND_UNSIGNED, 2 ** 64, 1465839830100, 3],
        ['weather', [['location', 'us,midwest'], ['sea level', '0=1']], 'ok', KIND_BOOLEAN, 1, 1465839830100, 3],
        ['weather', [['location', 'us,midwest'], ['sea level', '0=1']], 'note', KIND_STRING, 'say "hi" \\ \\n', 1465839830100, 3],
        ['my measurement', [['tag=key', 'v']], 'field key', KIND_STRING, 'line one\nline two', NOW, 4],
        ['cpu', [], 'v', KIND_FLOAT, 0.5, -1465839830101, 6],
      ],
    );
  });

  it('names the line of each kind of mistake', () => {
    const cases: [string, number, RegExp][] = [
      ['m f=1\nm', 2, /missing fields/],
      ['m f=1\n\nm f=', 3, /missing field value/],
      ['m,t f=1', 1, /missing tag value/],
      ['m,=v f=1', 1, /missing tag key/],
      ['m f=1x', 1, /invalid number/],
      ['m f=9223372036854775808i', 1, /out of range/],
      ['m f=-1u', 1, /must not be negative/],
      ['m f=yes', 1, /invalid field value/],
      ['m f="open', 1, /unterminated string/],
      ['m f="a\nb" 12x', 2, /invalid timestamp/],
      ['m f=1 1 2', 1, /after the timestamp/],
      [',t=v f=1', 1, /missing measurement/],
      ['m f=1e999', 1, /out of range/],
    ];
    for (const [text, line, reason] of cases) {
      assert.throws(
        () => parseLineProtocol(Buffer.from(text), 'ns', NOW),
        (err: LineProtocolError) => err instanceof LineProtocolError && err.line === line && reason.test(err.reason),
        JSON.stringify(text),
      );
    }
    assert.throws(() => parseLineProtocol(Buffer.from([0x6d, 0x20, 0x66, 0x3d, 0x22, 0xff, 0x22]), 'ns', NOW), /invalid UTF-8/);
  });

  it('parses simple numeric lines without a cliff (measured; the bench holds the 2 M lines/s goal)', function () {
    this.timeout(60_000);
    const lines: string[] = [];
    for (let i = 0; i < 500_000; i++) lines.push(`cpu,host=h${i % 20},region=eu usage=${(i % 1000) / 8} ${1_700_000_000_000 + i * 60_000}000000`);
    const buf = Buffer.from(lines.join('\n'));
    let best = Infinity;
    for (let k = 0; k < 5; k++) {
      const t = performance.now();
      const c = parseLineProtocol(buf, 'ns');
      best = Math.min(best, performance.now() - t);
      assert.equal(c.length, 500_000);
    }
    const rate = (500_000 / best) * 1000;
    console.log(`      ${(rate / 1e6).toFixed(2)} M lines/s (best of 5, 500,000 lines, ${(buf.length / 1e6).toFixed(1)} MB)`);
    // The goal, 2 M/s, is for an idle core (npm run bench -- line-protocol); tests share a loaded
    // machine, so this only catches a cliff (an object or a string per value).
    assert.ok(rate > 2e5, `${rate} lines/s`);
  });
});
