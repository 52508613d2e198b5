// The line-protocol rows the QuestDB store sends (src/store/values/questdb/ilp.ts), without a server:
// read back by a parser written here after QuestDB's LineTcpParser (the rules ilp.ts's header lists:
// in a quoted string `\` takes the next byte as it is and an unescaped line feed is an error; outside,
// `,`, ` ` and a line feed end a name or value), so every string, double, series and timestamp is
// checked as QuestDB would read it. Table names need no escaping: config.ts allows only lower-case
// identifiers (tested in test/questdb.test.ts); the exact bytes of the common rows are there too.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { splitLines } from '../src/store/values/questdb/ilp.js';
import { appendLines, IlpLines, ilpString, MAX_TS_MS, MIN_PARALLEL_REQUEST_BYTES, planHourly, requestsAtHours, SeriesTails, validateTimestamp } from '../src/store/values/questdb/index.js';
import { sortRows } from '../src/store/values/sort.js';
import { BUCKET_MS, type ValueBatch } from '../src/store/values/types.js';

type Field = { kind: 'string'; value: string } | { kind: 'integer'; value: bigint } | { kind: 'boolean'; value: boolean } | { kind: 'double'; value: number };

interface Line {
  table: string;
  tags: Record<string, string>;
  fields: Record<string, Field>;
  /** The timestamp (µs). */
  ts: bigint;
}

const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const LF = 0x0a;
const SPACE = 0x20;
const COMMA = 0x2c;
const EQUALS = 0x3d;

/** Reads lines as QuestDB's LineTcpParser does; throws where it would report an error. */
function parseLines(buf: Buffer): Line[] {
  const lines: Line[] = [];
  let at = 0;
  /** An unquoted name or value up to one of `ends`, `\` escaping the next byte. */
  const token = (ends: number[]): { text: string; end: number } => {
    const bytes: number[] = [];
    while (at < buf.length && !ends.includes(buf[at]!)) {
      if (buf[at] === BACKSLASH) at++;
      if (at >= buf.length) throw new Error('escape at the end of the data');
      bytes.push(buf[at++]!);
    }
    if (at >= buf.length) throw new Error('data ends inside a line');
    return { text: Buffer.from(bytes).toString('utf8'), end: buf[at++]! };
  };
  const quoted = (): string => {
    const bytes: number[] = [];
    at++; // the opening quote
    for (;;) {
      if (at >= buf.length) throw new Error('string without its closing quote');
      const b = buf[at++]!;
      if (b === QUOTE) break;
      if (b === LF) throw new Error('unescaped line feed in a string');
      if (b === BACKSLASH) {
        if (at >= buf.length) throw new Error('escape at the end of the data');
        bytes.push(buf[at++]!);
      } else bytes.push(b);
    }
    return Buffer.from(bytes).toString('utf8');
  };
  while (at < buf.length) {
    const table = token([COMMA, SPACE]);
    const line: Line = { table: table.text, tags: {}, fields: {}, ts: 0n };
    let end = table.end;
    while (end === COMMA) {
      const key = token([EQUALS]);
      const value = token([COMMA, SPACE]);
      line.tags[key.text] = value.text;
      end = value.end;
    }
    do {
      const key = token([EQUALS]);
      if (key.text === '') throw new Error('field without a name');
      let field: Field;
      if (buf[at] === QUOTE) {
        field = { kind: 'string', value: quoted() };
        end = buf[at++]!;
      } else {
        const value = token([COMMA, SPACE, LF]);
        end = value.end;
        const t = value.text;
        if (/^-?\d+i$/.test(t)) field = { kind: 'integer', value: BigInt(t.slice(0, -1)) };
        else if (/^(t|f|true|false)$/i.test(t)) field = { kind: 'boolean', value: /^t/i.test(t) };
        else if (/^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) || /^(NaN|-?Infinity)$/.test(t)) field = { kind: 'double', value: Number(t) };
        else throw new Error(`not a value: ${t}`);
      }
      line.fields[key.text] = field;
    } while (end === COMMA);
    if (end !== SPACE) throw new Error('a line needs a timestamp here');
    const ts = token([LF]);
    if (!/^\d+$/.test(ts.text)) throw new Error(`not a timestamp: ${ts.text}`);
    line.ts = BigInt(ts.text);
    lines.push(line);
  }
  return lines;
}

interface ValueRow {
  table: string;
  series: number;
  ts: number;
  value: number;
  text: string | null;
  annotation: string | null;
}

/** The line a value row should read back as: NaN left out, deleted=f when nothing else is there. */
function expectedLine(r: ValueRow): Line {
  const fields: Record<string, Field> = {};
  if (!Number.isNaN(r.value)) fields.value = { kind: 'double', value: Object.is(r.value, -0) ? 0 : r.value };
  if (r.text !== null) fields.text = { kind: 'string', value: r.text };
  if (r.annotation !== null) fields.annotation = { kind: 'string', value: r.annotation };
  if (Object.keys(fields).length === 0) fields.deleted = { kind: 'boolean', value: false };
  return { table: r.table, tags: { series: String(r.series) }, fields, ts: BigInt(r.ts) * 1000n };
}

function write(rows: readonly ValueRow[], lines = new IlpLines()): Buffer {
  for (const r of rows) lines.value(r.table, r.series, r.ts, r.value, r.text, r.annotation);
  return lines.take();
}

/** Every byte the line protocol treats specially, in and around words. */
const SPECIALS = ['', ' ', ',', '=', '"', '\\', '\n', '\r', '\t', '\\"', '"\\', '\\\n', 'a b,c=d', 'end\\', '\\\\\\', '""', 'x"y\\"z', '\0', 'ünï', '😀', '\u2028'];

const stringArb = fc.oneof(fc.constantFrom(...SPECIALS), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: fc.constantFrom('\\', '"', '\n', ' ', ',', '=', 'a', 'é'), maxLength: 20 }));
const rowArb = fc.record({
  table: fc.constantFrom('pv', 'point_values', 'pv_2'),
  series: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  ts: fc.integer({ min: 0, max: MAX_TS_MS }),
  value: fc.oneof(fc.double({ noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, NaN)),
  text: fc.option(stringArb, { nil: null }),
  annotation: fc.option(stringArb, { nil: null }),
});

describe('QuestDB engine: ILP lines', () => {
  it('reads back every row as written: strings with any bytes, doubles, series, µs timestamps, NaN left out', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { maxLength: 30 }), (rows) => {
        assert.deepEqual(parseLines(write(rows)), rows.map(expectedLine));
      }),
      { numRuns: 300 },
    );
  });

  it('quotes a string and escapes exactly \\, " and line feeds; space, comma, equals, CR and tab stay as they are', () => {
    assert.equal(ilpString(''), '""');
    assert.equal(ilpString('a b,c=d\r\t'), '"a b,c=d\r\t"');
    assert.equal(ilpString('\\'), '"\\\\"');
    assert.equal(ilpString('"'), '"\\""');
    assert.equal(ilpString('\n'), '"\\\n"');
    assert.equal(ilpString('end\\'), '"end\\\\"', 'a trailing backslash does not escape the closing quote');
    assert.equal(ilpString('\\"\n'), '"\\\\\\"\\\n"');
    for (const s of SPECIALS) assert.deepEqual(parseLines(Buffer.from(`t a=${ilpString(s)} 1\n`)), [{ table: 't', tags: {}, fields: { a: { kind: 'string', value: s } }, ts: 1n }], JSON.stringify(s));
  });

  it('writes an empty text and an empty annotation as "" (not left out, not NULL)', () => {
    const row: ValueRow = { table: 'pv', series: 1, ts: 5, value: NaN, text: '', annotation: '' };
    assert.equal(write([row]).toString('utf8'), 'pv,series=1 text="",annotation="" 5000\n');
    assert.deepEqual(parseLines(write([row])), [expectedLine(row)]);
  });

  it('writes every finite double in digits that read back as the same double (-0 as 0)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (v) => {
        const [line] = parseLines(write([{ table: 'pv', series: 1, ts: 1, value: v, text: null, annotation: null }]));
        assert.deepEqual(line!.fields, { value: { kind: 'double', value: Object.is(v, -0) ? 0 : v } });
      }),
      { numRuns: 500 },
    );
  });

  it('writes series and timestamps of every digit count, zeros inside and at the end included', () => {
    const numbers = [0, 1, 9, 10, 11, 99, 100, 101, 1000, 99_999_999, 100_000_000, 100_000_001, 1_000_000_000, 2_000_000_001, 2 ** 31 - 1, 10_000_000_000_000, MAX_TS_MS];
    for (let digits = 1; digits <= 15; digits++) numbers.push(10 ** digits - 1, 10 ** digits, 10 ** digits + 1, 5 * 10 ** (digits - 1) + 7);
    for (const ts of numbers.filter((n) => n <= MAX_TS_MS)) {
      const series = Math.min(ts, 2 ** 31 - 1);
      const text = write([{ table: 'pv', series, ts, value: 1, text: null, annotation: null }]).toString('latin1');
      assert.equal(text, `pv,series=${series} value=1 ${ts === 0 ? '0' : `${ts}000`}\n`);
    }
    assert.equal(write([{ table: 'pv', series: 3, ts: 1, value: 1, text: 'x', annotation: null }]).toString('utf8'), 'pv,series=3 value=1,text="x" 1000\n');
  });

  it('grows past its first megabyte, numeric and text rows mixed, and starts empty again after take()', () => {
    const lines = new IlpLines();
    const rows: ValueRow[] = [];
    for (let i = 0; i < 30_000; i++) {
      rows.push({ table: i % 2 === 0 ? 'pv' : 'pv_other', series: i % 1000, ts: 1_700_000_000_000 + i, value: i % 5 === 0 ? NaN : i / 7, text: i % 5 === 0 ? `t${i} "q"\n` : null, annotation: i % 13 === 0 ? 'ä' : null });
    }
    for (const r of rows) lines.value(r.table, r.series, r.ts, r.value, r.text, r.annotation);
    assert.equal(lines.length, rows.length);
    const size = lines.size;
    assert.ok(size > 1024 * 1024, `${size} bytes: past the first MiB`);
    const taken = lines.take();
    assert.equal(taken.length, size);
    assert.deepEqual(parseLines(taken), rows.map(expectedLine));
    assert.equal(lines.length, 0);
    assert.equal(lines.size, 0);
    // The same builder again: its remembered table prefix follows the table of each row.
    const again: ValueRow[] = [
      { table: 'pv_other', series: 1, ts: 1, value: 2, text: null, annotation: null },
      { table: 'pv', series: 1, ts: 1, value: 2, text: null, annotation: null },
    ];
    assert.deepEqual(parseLines(write(again, lines)), again.map(expectedLine));
  });

  it('writes hourly aggregates with integer counts and ms, and intents with their own µs timestamp', () => {
    const lines = new IlpLines();
    const start = Date.UTC(2024, 0, 1);
    lines.hourly('pv_hourly', 9, { start, count: 3, sum: -0.5, min: -1e-7, max: 1e21, firstTs: start, firstValue: -1e-7, lastTs: start + 3_599_999, lastValue: 1e21, innerIntegral: 0.1 + 0.2 });
    lines.emptyHour('pv_hourly', 9, start + 3_600_000);
    lines.intent('pv_pending', 5, 9, start, start + 3_600_000, false, 1_700_000_000_000_001);
    const [hourly, empty, intent] = parseLines(lines.take());
    const d = (value: number): Field => ({ kind: 'double', value });
    const i = (value: number): Field => ({ kind: 'integer', value: BigInt(value) });
    assert.deepEqual(hourly, {
      table: 'pv_hourly',
      tags: { series: '9' },
      fields: { n: i(3), sum: d(-0.5), min: d(-1e-7), max: d(1e21), first_ms: i(start), first_value: d(-1e-7), last_ms: i(start + 3_599_999), last_value: d(1e21), inner_integral: d(0.1 + 0.2) },
      ts: BigInt(start) * 1000n,
    });
    assert.deepEqual(empty!.fields.n, i(0));
    assert.equal(empty!.ts, BigInt(start + 3_600_000) * 1000n);
    assert.deepEqual(intent, {
      table: 'pv_pending',
      tags: {},
      fields: { id: i(5), series: i(9), ms_from: i(start), ms_to: i(start + 3_600_000), done: { kind: 'boolean', value: false } },
      ts: 1_700_000_000_000_001n,
    });
  });

  it('splits a request at line ends only, never at a line feed inside a string', () => {
    const lines = write([
      { table: 'pv', series: 1, ts: 1, value: NaN, text: 'first line\nsecond line', annotation: null },
      { table: 'pv', series: 1, ts: 2, value: NaN, text: 'x', annotation: null },
    ]);
    // The last line feed within 30 bytes is the escaped one in the first string.
    assert.ok(lines.lastIndexOf(0x0a, 29) > 0 && lines[lines.lastIndexOf(0x0a, 29) - 1] === 0x5c);
    assert.deepEqual(
      splitLines(lines, 30).map((b) => b.toString('utf8')),
      ['pv,series=1 text="first line\\\nsecond line" 1000\n', 'pv,series=1 text="x" 2000\n'],
    );
  });

  it('splits random rows into requests that each read alone, at most max bytes unless one line is longer', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 400 }), (rows, max) => {
        const lines = write(rows);
        const parts = splitLines(lines, max);
        assert.ok(Buffer.concat(parts).equals(lines), 'the parts are the lines, in order');
        const read = parts.map((part) => parseLines(part));
        assert.deepEqual(read.flat(), rows.map(expectedLine));
        for (const [k, part] of parts.entries()) assert.ok(part.length <= max || read[k]!.length === 1, `part ${k}: ${part.length} bytes, ${read[k]!.length} lines`);
      }),
      { numRuns: 300 },
    );
    assert.deepEqual(splitLines(Buffer.alloc(0), 10), []);
  });

  it("cuts an append's lines only where an hour's raw rows and its hourly row end, into requests of at most max bytes", () => {
    const appendArb = fc.array(
      fc.record({
        series: fc.integer({ min: 1, max: 4 }),
        ts: fc.integer({ min: 0, max: 30 * BUCKET_MS }),
        value: fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constant(NaN)),
        text: fc.option(fc.constantFrom('a', 'x\ny', 'long text '.repeat(20)), { nil: null }),
      }),
      { minLength: 1, maxLength: 200 },
    );
    fc.assert(
      fc.property(appendArb, fc.integer({ min: 300, max: 6000 }), fc.integer({ min: 1, max: 4 }), (rows, max, parallel) => {
        const batch: ValueBatch = {
          length: rows.length,
          series: Int32Array.from(rows, (r) => r.series),
          ts: Float64Array.from(rows, (r) => r.ts),
          value: Float64Array.from(rows, (r) => r.value),
          text: rows.map((r) => r.text),
          annotation: null,
        };
        const sorted = sortRows(batch);
        const tails = new SeriesTails();
        tails.load(sorted.segSeries, new Map());
        const plan = planHourly(batch, sorted, tails);
        const lines = appendLines({ raw: 'pv', hourly: 'pv_hourly' }, batch, sorted, plan.rows);
        const parts = requestsAtHours(lines, max, parallel);
        if (parts === undefined) {
          // Only when one hour's rows alone exceed max.
          const ends = [0, ...lines.cuts];
          assert.ok(ends.some((end, k) => k > 0 && end - ends[k - 1]! > max), 'refused though every hour fits');
          return;
        }
        assert.ok(Buffer.concat(parts).equals(lines.bytes), 'the parts are the lines, in order');
        const read = parts.map((part) => parseLines(part));
        assert.equal(read.flat().filter((l) => l.table === 'pv').length, sorted.n, 'one raw row per (series, ts)');
        assert.equal(read.flat().filter((l) => l.table === 'pv_hourly').length, plan.rows.length);
        // Each (series, hour) lives in one request: its raw rows and its hourly row.
        const home = new Map<string, number>();
        read.forEach((part, k) =>
          part.forEach((line) => {
            const hour = line.table === 'pv' ? Math.floor(Number(line.ts) / 1000 / BUCKET_MS) : Number(line.ts) / 1000 / BUCKET_MS;
            const key = `${line.tags.series}:${hour}`;
            assert.equal(home.get(key) ?? k, k, `rows of ${key} in requests ${home.get(key)} and ${k}`);
            home.set(key, k);
          }),
        );
        for (const [k, part] of parts.entries()) {
          const isWholeHour = lines.cuts.includes(parts.slice(0, k + 1).reduce((n, p) => n + p.length, 0));
          assert.ok(isWholeHour, `request ${k} ends inside an hour`);
          assert.ok(part.length <= max, `request ${k}: ${part.length} bytes > ${max}`);
        }
      }),
      { numRuns: 100 },
    );
    // Large enough: cut into `parallel` parts of about equal size; small: one request.
    const big = { bytes: Buffer.alloc(4 * MIN_PARALLEL_REQUEST_BYTES), cuts: Array.from({ length: 64 }, (_, k) => ((k + 1) * 4 * MIN_PARALLEL_REQUEST_BYTES) / 64) };
    assert.deepEqual(requestsAtHours(big, 8 * 2 ** 20, 2)?.map((b) => b.length), [2 * MIN_PARALLEL_REQUEST_BYTES, 2 * MIN_PARALLEL_REQUEST_BYTES]);
    const small = { bytes: Buffer.alloc(MIN_PARALLEL_REQUEST_BYTES), cuts: [MIN_PARALLEL_REQUEST_BYTES / 2, MIN_PARALLEL_REQUEST_BYTES] };
    assert.deepEqual(requestsAtHours(small, 8 * 2 ** 20, 2)?.map((b) => b.length), [MIN_PARALLEL_REQUEST_BYTES]);
  });

  it('accepts whole ms from 1970 to the end of 9999 and refuses anything else, naming the row', () => {
    validateTimestamp(0, 0);
    validateTimestamp(MAX_TS_MS, 0);
    assert.equal(new Date(MAX_TS_MS).toISOString(), '9999-12-31T23:59:59.999Z');
    assert.throws(() => validateTimestamp(-1, 3), /^RangeError: row 3: timestamp -1 is before 1970/);
    assert.throws(() => validateTimestamp(MAX_TS_MS + 1, 4), /^RangeError: row 4: .* after year 9999/);
    assert.throws(() => validateTimestamp(0.5, 5), /^RangeError: row 5: .* not a whole number/);
    assert.throws(() => validateTimestamp(NaN, 6), RangeError);
    // µs of the last ms: past 2^53, which is why the digits are written, not multiplied.
    assert.ok(MAX_TS_MS * 1000 > Number.MAX_SAFE_INTEGER);
    assert.equal(parseLines(write([{ table: 'pv', series: 1, ts: MAX_TS_MS, value: 1, text: null, annotation: null }]))[0]!.ts, 253_402_300_799_999_000n);
  });
});
