// Arrow IPC stream and Parquet answers of every point-value read, read back with independent readers
// (apache-arrow's tableFromIPC / RecordBatchReader, DuckDB's read_parquet) and compared with the JSON
// answer of the same query: raw values with annotations, AVERAGE, ALL, several points in long form,
// latest values, Mango's POST forms, every data type; the errors before the first byte; a table of a
// million values streamed with the heap bounded.
import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { RecordBatchReader, tableFromIPC, type Table } from 'apache-arrow';
import { assertError } from './helpers/assertions.js';
import type { ApiClient, Response } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { assertBadParam, DAY, HOUR, MINUTE, PV, query, T0, usePointValuesApp, type DataType } from './helpers/point-values-app.js';

const ARROW = 'application/vnd.apache.arrow.stream';
const PARQUET = 'application/vnd.apache.parquet';

type Row = Record<string, unknown>;

/** A request whose body is kept as bytes (the test client decodes text). */
async function fetchBytes(client: ApiClient, method: 'GET' | 'POST', path: string, options: { accept?: string; body?: unknown } = {}): Promise<{ status: number; type: string; bytes: Uint8Array; res: Response }> {
  const headers: Record<string, string> = { cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  if (options.accept) headers.accept = options.accept;
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    headers['x-xsrf-token'] = client.cookies.get('XSRF-TOKEN')!;
  }
  const res = await fetch(client.baseUrl + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  const text = Buffer.from(bytes).toString('utf8');
  return { status: res.status, type, bytes, res: { status: res.status, headers: res.headers, text, body: type.includes('json') && text !== '' ? (JSON.parse(text) as unknown) : text } };
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values as Arrow and Parquet (${engine})`, function () {
    this.timeout(120_000);
    const pv = usePointValuesApp(engine);
    let admin: ApiClient;
    let duck: DuckDBConnection;
    let dir: string;
    let files = 0;
    const xids = {} as Record<DataType, string>;
    let second: string;
    const END = T0 + 6 * HOUR;

    before(async () => {
      admin = pv.admin;
      duck = await (await DuckDBInstance.create(':memory:')).connect();
      dir = await mkdtemp(join(tmpdir(), 'pv-formats-'));
      xids.NUMERIC = await pv.createPoint('NUMERIC', { rollup: 'AVERAGE' });
      second = await pv.createPoint('NUMERIC');
      xids.BINARY = await pv.createPoint('BINARY');
      xids.MULTISTATE = await pv.createPoint('MULTISTATE');
      xids.ALPHANUMERIC = await pv.createPoint('ALPHANUMERIC');
      const numeric: [number, unknown, string?][] = [];
      for (let t = T0 - 20 * MINUTE; t < END; t += 7 * MINUTE) numeric.push([t, Math.round(Math.sin(t / HOUR) * 1000) / 10, t % (5 * 7 * MINUTE) === 0 ? 'calibrated "x"' : undefined]);
      await pv.seed(xids.NUMERIC, numeric);
      await pv.seed(
        second,
        numeric.map(([t, v]) => [t + MINUTE, (v as number) * 2]),
      );
      await pv.seed(xids.BINARY, [
        [T0 - MINUTE, false],
        [T0 + 10 * MINUTE, true, 'switched'],
        [T0 + 2 * HOUR, false],
      ]);
      await pv.seed(xids.MULTISTATE, [
        [T0, 3],
        [T0 + 90 * MINUTE, -2, 'fault'],
        [T0 + 4 * HOUR, 7],
      ]);
      await pv.seed(xids.ALPHANUMERIC, [
        [T0 + MINUTE, 'on'],
        [T0 + HOUR, 'ünïcode, "quoted"', 'note'],
        [T0 + 3 * HOUR, ''],
      ]);
    });
    after(async () => {
      duck.closeSync();
      await rm(dir, { recursive: true, force: true });
    });

    /** An Arrow answer's rows (timestamps as epoch ms, XIDs as strings), checked to be an Arrow stream. */
    async function arrowRows(method: 'GET' | 'POST', path: string, body?: unknown, accept?: string): Promise<{ rows: Row[]; table: Table }> {
      const got = await fetchBytes(admin, method, path, { body, accept });
      assert.equal(got.status, 200, got.res.text);
      assert.equal(got.type, ARROW);
      const table = tableFromIPC(got.bytes);
      return { rows: table.toArray().map((r: { toJSON(): Row }) => ({ ...r.toJSON() })), table };
    }

    /** A Parquet answer's rows as DuckDB reads them (timestamps back to epoch ms) and DuckDB's column types. */
    async function parquetRows(method: 'GET' | 'POST', path: string, body?: unknown, accept?: string): Promise<{ rows: Row[]; types: Record<string, string> }> {
      const got = await fetchBytes(admin, method, path, { body, accept });
      assert.equal(got.status, 200, got.res.text);
      assert.equal(got.type, PARQUET);
      const file = join(dir, `answer-${++files}.parquet`);
      await writeFile(file, got.bytes);
      const described = (await duck.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`)).getRowObjectsJson();
      const types = Object.fromEntries(described.map((d) => [String(d.column_name), String(d.column_type)]));
      const read = await duck.runAndReadAll(`SELECT * REPLACE (epoch_ms("timestamp")::DOUBLE AS "timestamp") FROM read_parquet('${file}')`);
      return { rows: read.getRowObjectsJson() as Row[], types };
    }

    /** Both answers' rows, each equal to `expected`. */
    async function assertTables(method: 'GET' | 'POST', path: string, expected: Row[], body?: unknown): Promise<{ table: Table; types: Record<string, string> }> {
      const sep = path.includes('?') ? '&' : '?';
      const arrow = await arrowRows(method, `${path}${sep}format=arrow`, body);
      assert.deepEqual(arrow.rows, expected, `Arrow ${path}`);
      const parquet = await parquetRows(method, `${path}${sep}format=parquet`, body);
      assert.deepEqual(parquet.rows, expected, `Parquet ${path}`);
      return { table: arrow.table, types: parquet.types };
    }

    const json = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
      const res = method === 'GET' ? await admin.get<T>(path) : await admin.post<T>(path, body);
      assert.equal(res.status, 200, res.text);
      return res.body;
    };

    type RawJson = { timestamp: number; value: unknown; annotation?: string }[];
    const rawRows = (values: RawJson, xid?: string): Row[] =>
      values.map((v) => ({ ...(xid ? { xid } : {}), timestamp: v.timestamp, value: v.value, annotation: v.annotation ?? null }));

    const ARROW_VALUE_TYPE: Record<DataType, string> = { NUMERIC: 'Float64', BINARY: 'Bool', MULTISTATE: 'Int32', ALPHANUMERIC: 'Utf8' };
    const DUCK_VALUE_TYPE: Record<DataType, string> = { NUMERIC: 'DOUBLE', BINARY: 'BOOLEAN', MULTISTATE: 'INTEGER', ALPHANUMERIC: 'VARCHAR' };

    describe('GET reads', () => {
      for (const dataType of ['NUMERIC', 'BINARY', 'MULTISTATE', 'ALPHANUMERIC'] as const) {
        it(`raw ${dataType} values with annotations: the JSON answer's values, value typed ${ARROW_VALUE_TYPE[dataType]}`, async () => {
          const path = `${PV}/single/${xids[dataType]}?${query({ from: T0 - HOUR, to: END })}`;
          const expected = rawRows(await json<RawJson>('GET', path));
          assert.ok(expected.length >= 3 && expected.some((r) => r.annotation !== null), 'the series has values and an annotation');
          const { table, types } = await assertTables('GET', path, expected);
          assert.deepEqual(
            table.schema.fields.map((f) => `${f.name}:${String(f.type)}`),
            ['timestamp:Timestamp<MILLISECOND, UTC>', `value:${ARROW_VALUE_TYPE[dataType]}`, 'annotation:Utf8'],
          );
          assert.deepEqual(types, { timestamp: 'TIMESTAMP WITH TIME ZONE', value: DUCK_VALUE_TYPE[dataType], annotation: 'VARCHAR' });
        });
      }

      it('AVERAGE per hour (/time-period/<xid>/<rollup>): the JSON periods, no annotation column', async () => {
        const path = `${PV}/time-period/${xids.NUMERIC}/AVERAGE?${query({ from: T0, to: END, timePeriodType: 'HOURS' })}`;
        const periods = await json<{ timestamp: number; value: number | null }[]>('GET', path);
        assert.equal(periods.length, 6);
        const { table } = await assertTables('GET', path, periods.map((p) => ({ timestamp: p.timestamp, value: p.value })));
        assert.deepEqual(
          table.schema.fields.map((f) => f.name),
          ['timestamp', 'value'],
        );
      });

      it('ALL: one column per statistic (counts int32), NUMERIC and BINARY', async () => {
        for (const dataType of ['NUMERIC', 'BINARY'] as const) {
          const path = `${PV}/single/${xids[dataType]}?${query({ from: T0, to: END, rollup: 'ALL', timePeriodType: 'HOURS', timePeriods: 2 })}`;
          const periods = await json<{ timestamp: number; value: Record<string, unknown> }[]>('GET', path);
          const { table } = await assertTables(
            'GET',
            path,
            periods.map((p) => ({ timestamp: p.timestamp, ...p.value })),
          );
          assert.deepEqual(
            table.schema.fields.map((f) => f.name),
            ['timestamp', ...Object.keys(periods[0]!.value)],
          );
          assert.equal(String(table.schema.fields.find((f) => f.name === 'count')!.type), 'Int32');
          if (dataType === 'BINARY') assert.equal(String(table.schema.fields.find((f) => f.name === 'first')!.type), 'Bool');
        }
      });

      it('several points in long form: a dictionary-encoded xid column first, each point in turn (raw and AVERAGE)', async () => {
        for (const rollup of [undefined, 'AVERAGE']) {
          const path = `${PV}/multiple-arrays/time-period/${xids.NUMERIC},${second}?${query({ from: T0, to: T0 + 3 * HOUR, rollup, timePeriodType: rollup && 'MINUTES', timePeriods: rollup && 30 })}`;
          const answer = await json<Record<string, RawJson>>('GET', path);
          const expected = [xids.NUMERIC, second].flatMap((xid) =>
            rollup ? answer[xid]!.map((p) => ({ xid, timestamp: p.timestamp, value: p.value })) : rawRows(answer[xid]!, xid),
          );
          const { table, types } = await assertTables('GET', path, expected);
          assert.equal(table.schema.fields[0]!.name, 'xid');
          assert.match(String(table.schema.fields[0]!.type), /^Dictionary<Int32, Utf8>/);
          assert.equal(types.xid, 'VARCHAR');
        }
      });

      it('latest values, newest first, on both latest routes (Accept chooses)', async () => {
        for (const path of [`${PV}/latest/${xids.NUMERIC}?limit=5`, `${PV}/${xids.ALPHANUMERIC}/latest?limit=2`]) {
          const expected = rawRows(await json<RawJson>('GET', path));
          const arrow = await arrowRows('GET', path, undefined, ARROW);
          assert.deepEqual(arrow.rows, expected);
          const parquet = await parquetRows('GET', path, undefined, PARQUET);
          assert.deepEqual(parquet.rows, expected);
        }
      });

      it('an empty range is a table of no rows with its columns', async () => {
        const path = `${PV}/single/${xids.NUMERIC}?${query({ from: T0 - 10 * DAY, to: T0 - 9 * DAY })}`;
        const { table, types } = await assertTables('GET', path, []);
        assert.deepEqual(
          table.schema.fields.map((f) => f.name),
          ['timestamp', 'value', 'annotation'],
        );
        assert.deepEqual(Object.keys(types), ['timestamp', 'value', 'annotation']);
      });

      it('format overrides Accept; Accept alone chooses; JSON for */*', async () => {
        const path = `${PV}/single/${xids.NUMERIC}?${query({ from: T0, to: T0 + HOUR })}`;
        assert.equal((await fetchBytes(admin, 'GET', `${path}&format=parquet`, { accept: ARROW })).type, PARQUET);
        assert.equal((await fetchBytes(admin, 'GET', `${path}&format=json`, { accept: ARROW })).type, 'application/json; charset=utf-8');
        assert.equal((await fetchBytes(admin, 'GET', path, { accept: `${PARQUET}, ${ARROW};q=0.5` })).type, PARQUET);
        assert.match((await fetchBytes(admin, 'GET', `${path}&format=csv`)).type, /^text\/csv/);
        assert.match((await fetchBytes(admin, 'GET', path, { accept: '*/*' })).type, /^application\/json/);
      });
    });

    describe('Mango POST reads', () => {
      const fields = ['TIMESTAMP', 'VALUE', 'ANNOTATION'];
      /** A single array's cell of a point: its value, or {timestamp, value} (Mango's statistic times). */
      const cellValue = (cell: unknown): unknown => (typeof cell === 'object' && cell !== null && 'value' in cell ? cell.value : cell);

      it('multiple arrays (raw, ALL): each point in turn, as the JSON arrays', async () => {
        const body = { xids: [xids.NUMERIC, second], from: T0, to: T0 + 2 * HOUR, fields };
        const answer = await json<Record<string, RawJson>>('POST', `${PV}/multiple-arrays/time-period`, body);
        await assertTables('POST', `${PV}/multiple-arrays/time-period`, [xids.NUMERIC, second].flatMap((xid) => rawRows(answer[xid]!, xid)), body);
        const all = { xids: [xids.NUMERIC, second], from: T0, to: T0 + 2 * HOUR, timePeriod: { periods: 30, type: 'MINUTES' } };
        // Mango's ALL: a flat object, each statistic {timestamp, value} (count a number).
        const periods = await json<Record<string, Record<string, number | { value?: unknown }>[]>>('POST', `${PV}/multiple-arrays/time-period/ALL`, all);
        const flat = (p: Record<string, number | { value?: unknown }>): Row =>
          Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v === 'number' ? v : (v.value ?? null)]));
        await assertTables(
          'POST',
          `${PV}/multiple-arrays/time-period/ALL`,
          [xids.NUMERIC, second].flatMap((xid) => periods[xid]!.map((p) => ({ xid, ...flat(p) }))),
          all,
        );
      });

      it('single array (AVERAGE): long form in timestamp order, as the JSON rows', async () => {
        const body = { xids: [xids.NUMERIC, second], from: T0, to: T0 + 3 * HOUR, timePeriod: { periods: 20, type: 'MINUTES' } };
        const rows = await json<Row[]>('POST', `${PV}/single-array/time-period/AVERAGE`, body);
        const expected = rows.flatMap((r) => [xids.NUMERIC, second].filter((x) => x in r).map((xid) => ({ xid, timestamp: r.timestamp, value: cellValue(r[xid]) })));
        assert.equal(expected.length, 18);
        await assertTables('POST', `${PV}/single-array/time-period/AVERAGE`, expected, body);
      });

      it('latest (multiple arrays and single array, newest first)', async () => {
        const body = { xids: [xids.NUMERIC, second], limit: 3, fields };
        const arrays = await json<Record<string, RawJson>>('POST', `${PV}/multiple-arrays/latest`, body);
        await assertTables('POST', `${PV}/multiple-arrays/latest`, [xids.NUMERIC, second].flatMap((xid) => rawRows(arrays[xid]!, xid)), body);
        const rows = await json<Row[]>('POST', `${PV}/single-array/latest`, { xids: [xids.NUMERIC, second], limit: 3 });
        const expected = rows.flatMap((r) => [xids.NUMERIC, second].filter((x) => x in r).map((xid) => ({ xid, timestamp: r.timestamp, value: cellValue(r[xid]) })));
        const arrow = await arrowRows('POST', `${PV}/single-array/latest?format=arrow`, { xids: [xids.NUMERIC, second], limit: 3 });
        assert.deepEqual(
          arrow.rows.map(({ xid, timestamp, value }) => ({ xid, timestamp, value })),
          expected,
        );
      });
    });

    describe('errors before the first byte are the JSON error envelope', () => {
      const path = () => `${PV}/single/${xids.NUMERIC}?${query({ from: T0, to: T0 + HOUR })}`;

      it('an unknown format is a 400 naming the parameter', async () => {
        assertBadParam((await fetchBytes(admin, 'GET', `${path()}&format=xlsx`)).res, 'format');
        assertBadParam((await fetchBytes(admin, 'POST', `${PV}/multiple-arrays/latest?format=feather`, { body: { xids: [xids.NUMERIC] } })).res, 'format');
      });

      it('an Accept naming nothing the read answers is a 406 listing what it answers', async () => {
        const got = await fetchBytes(admin, 'GET', path(), { accept: 'application/xml' });
        const body = assertError(got.res, 406, 4005);
        assert.match(body.message, /application\/vnd\.apache\.arrow\.stream/);
        assert.match(got.res.headers.get('vary') ?? '', /accept/i, 'answers differ by Accept: Vary says so');
      });

      it('an unknown point, a rollup the point cannot have, and points whose columns differ', async () => {
        assertError((await fetchBytes(admin, 'GET', `${PV}/single/no-such-point?format=arrow`)).res, 404, -1);
        assertBadParam((await fetchBytes(admin, 'GET', `${PV}/single/${xids.BINARY}?rollup=AVERAGE&format=parquet`)).res, 'rollup');
        const mixed = await fetchBytes(admin, 'GET', `${PV}/multiple-arrays/time-period/${xids.NUMERIC},${xids.BINARY}?format=arrow&from=${T0}&to=${END}`);
        assert.match(assertError(mixed.res, 400, 4005).message, /value columns differ/);
        const post = await fetchBytes(admin, 'POST', `${PV}/multiple-arrays/time-period?format=parquet`, { body: { xids: [xids.NUMERIC, xids.ALPHANUMERIC], from: T0, to: END } });
        assert.equal(post.status, 422, post.res.text);
      });
    });

    describe('a million values', () => {
      const N = 1_000_000;
      let big: string;
      before(async function () {
        this.timeout(600_000);
        big = await pv.createPoint('NUMERIC');
        const CHUNK = 200_000;
        for (let first = 0; first < N; first += CHUNK) {
          const entries = [];
          for (let i = first; i < first + CHUNK; i++) entries.push({ xid: big, timestamp: T0 + i * 1000, value: i % 1000 });
          const res = await pv.bulk(entries);
          assert.equal(res.status, 200, res.text);
        }
      });

      /** A full collection on demand (the process runs without --expose-gc), so the samples are live memory, not garbage. */
      async function collector(): Promise<() => void> {
        const v8 = await import('node:v8');
        const vm = await import('node:vm');
        v8.setFlagsFromString('--expose_gc');
        return vm.runInNewContext('gc') as () => void;
      }
      /** The service runs in this process: its live heap and array buffers, after a full collection. */
      let gc: () => void;
      before(async () => (gc = await collector()));
      const memory = () => {
        gc();
        const m = process.memoryUsage();
        return m.heapUsed + m.arrayBuffers;
      };
      /** Samples memory every 250 ms (a full collection each) until stopped; the highest sample. */
      const sampling = () => {
        let peak = memory();
        const base = peak;
        const timer = setInterval(() => (peak = Math.max(peak, memory())), 250);
        return {
          sample: () => (peak = Math.max(peak, memory())),
          stop: () => {
            clearInterval(timer);
            return (peak - base) / 2 ** 20;
          },
        };
      };
      const bigPath = (format: string) => `${PV}/single/${big}?${query({ from: T0, to: T0 + N * 1000, format })}`;
      const cookie = () => ({ cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ') });
      // The JSON of these values is ~40 MB, their Arrow stream 19 MB, their objects well over 100 MB:
      // an answer built whole before it is sent would pass this.
      const BOUND_MIB = 64;

      it('streams 1,000,000 raw values as Arrow in record batches with memory bounded', async function () {
        this.timeout(600_000);
        const live = sampling();
        const res = await fetch(`${admin.baseUrl}${bigPath('arrow')}`, { headers: cookie() });
        assert.equal(res.status, 200);
        let rows = 0;
        let batches = 0;
        let sum = 0;
        const reader = await RecordBatchReader.from(res.body as unknown as AsyncIterable<Uint8Array>);
        for await (const batch of reader) {
          batches++;
          const ts = batch.getChild('timestamp')!;
          const values = batch.getChild('value')!.toArray() as Float64Array;
          assert.equal(Number(ts.get(0)), T0 + rows * 1000, 'rows in order, none lost');
          for (const v of values) sum += v;
          rows += batch.numRows;
          if (batches % 25 === 0) live.sample();
        }
        const grew = live.stop();
        assert.equal(rows, N);
        assert.equal(sum, (N / 1000) * ((999 * 1000) / 2));
        assert.ok(batches > 10, `streamed in record batches (${batches})`);
        console.log(`      1,000,000 values as Arrow: ${batches} record batches, live heap + buffers at most +${grew.toFixed(1)} MiB over the start`);
        assert.ok(grew < BOUND_MIB, `memory grew ${grew.toFixed(1)} MiB while streaming`);
      });

      it('streams them as Parquet a row group at a time, which DuckDB reads back whole', async function () {
        this.timeout(600_000);
        const live = sampling();
        const res = await fetch(`${admin.baseUrl}${bigPath('parquet')}`, { headers: cookie() });
        assert.equal(res.status, 200);
        const file = join(dir, 'million.parquet');
        const out = createWriteStream(file);
        let chunks = 0;
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          chunks++;
          if (!out.write(chunk)) await once(out, 'drain');
          live.sample();
        }
        const grew = live.stop();
        await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
        const read = await duck.runAndReadAll(
          `SELECT count(*)::DOUBLE AS n, sum(value) AS total, min(epoch_ms("timestamp"))::DOUBLE AS first, max(epoch_ms("timestamp"))::DOUBLE AS last FROM read_parquet('${file}')`,
        );
        assert.deepEqual(read.getRowObjectsJson(), [{ n: N, total: (N / 1000) * ((999 * 1000) / 2), first: T0, last: T0 + (N - 1) * 1000 }]);
        const groups = await duck.runAndReadAll(`SELECT count(DISTINCT row_group_id)::DOUBLE AS groups FROM parquet_metadata('${file}')`);
        console.log(`      1,000,000 values as Parquet: ${String(groups.getRowObjectsJson()[0]!.groups)} row groups, ${chunks} body chunks, live heap + buffers at most +${grew.toFixed(1)} MiB`);
        assert.ok(grew < BOUND_MIB, `memory grew ${grew.toFixed(1)} MiB while streaming`);
      });
    });
  });
}
