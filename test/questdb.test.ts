// The QuestDB engine: the parts that need no server (configuration, literal SQL, the ILP lines and
// transport, the WAL watcher, the hourly rows), and the live-server cases when TEST_QUESTDB_ILP and
// TEST_QUESTDB_PG are set (read-after-write, text and number round trips, stale cached plans, crash
// recovery of the hourly rows, start-up errors). The shared point-value contract runs in
// test/value-store.test.ts and test/engine-rollups.test.ts.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import pg from 'pg';
import pino from 'pino';
import { ConfigError } from '../src/config.js';
import { BucketColumns, foldBuckets } from '../src/store/values/aggregates.js';
import { sortRows } from '../src/store/values/sort.js';
import {
  announcedVersions,
  checkIlpServer,
  checkSchema,
  createTableStatements,
  foldRecomputed,
  hourlyRowToAggregate,
  IlpLines,
  initQuestDbStore,
  layerOf,
  mergeHours,
  mergeValues,
  Unapplied,
  IlpRequestError,
  ilpString,
  ilpTransport,
  MAX_TS_MS,
  microsToMs,
  openQuestDbStore,
  parseIlpConfig,
  planHourly,
  rowToStoredValue,
  SeriesTails,
  seriesLiteral,
  statements,
  tableNames,
  tsLiteral,
  validateBatch,
  validateTableName,
  WalApplyTimeoutError,
  WalSuspendedError,
  WalWatcher,
  type QuestDbStore,
  type WalStatus,
} from '../src/store/values/questdb/index.js';
import { BUCKET_MS, type BucketAggregate, type StoredValue, type ValueBatch } from '../src/store/values/types.js';
import { mergeColumns } from './helpers/merge-columns.js';
import { dropQuestDbTable, newQuestDbTableName } from './helpers/value-engines.questdb.js';
import { questdbSettings } from './helpers/value-engines.js';
import { freePort } from './helpers/wait.js';

const H = BUCKET_MS;
const T0 = Date.UTC(2024, 0, 1);

function batchOf(rows: { series: number; ts: number; value?: number; text?: string; annotation?: string }[]): ValueBatch {
  const hasText = rows.some((r) => r.text !== undefined);
  const hasAnnotation = rows.some((r) => r.annotation !== undefined);
  return {
    length: rows.length,
    series: Int32Array.from(rows.map((r) => r.series)),
    ts: Float64Array.from(rows.map((r) => r.ts)),
    value: Float64Array.from(rows.map((r) => r.value ?? NaN)),
    text: hasText ? rows.map((r) => r.text ?? null) : null,
    annotation: hasAnnotation ? rows.map((r) => r.annotation ?? null) : null,
  };
}

/** The hourly aggregates of one series' ascending (ts, value) rows, folded at once: the reference. */
function foldAll(rows: readonly { ts: number; value: number }[]): BucketAggregate[] {
  const out = new BucketColumns();
  const ts = Float64Array.from(rows.map((r) => r.ts));
  const value = Float64Array.from(rows.map((r) => r.value));
  foldBuckets(out, 1, ts, value, Uint32Array.from(rows.map((_, i) => i)), 0, rows.length);
  return mergeColumns(out);
}

const text = (b: Buffer) => b.toString('utf8');

describe('QuestDB engine (no server)', () => {
  describe('configuration', () => {
    it('accepts lower-case identifiers as table names and rejects anything else', () => {
      for (const ok of ['point_values', '_t', 'a1']) assert.equal(validateTableName(ok), ok);
      for (const bad of ['Point', '1a', 'a-b', 'a b', "a';drop", '']) assert.throws(() => validateTableName(bad), /lower-case identifier/);
      assert.deepEqual(tableNames('pv'), { raw: 'pv', hourly: 'pv_hourly', pending: 'pv_pending' });
    });

    it('takes the ILP configuration string apart: http or https, settings with ;; as a literal ;', () => {
      const { schema, settings } = parseIlpConfig('https::addr=q:9000;username=u;password=a;;b;tls_verify=unsafe_off;');
      assert.equal(schema, 'https');
      assert.deepEqual([...settings], [
        ['addr', 'q:9000'],
        ['username', 'u'],
        ['password', 'a;b'],
        ['tls_verify', 'unsafe_off'],
      ]);
      assert.throws(() => parseIlpConfig('tcp::addr=q:9009'), /http or https/);
      assert.throws(() => parseIlpConfig('http::username=u'), /needs 'addr'/);
      assert.throws(() => parseIlpConfig('addr=q'), /http::addr/);
    });

    it('reads the announced protocol versions of old (flat) and new (config) /settings answers', () => {
      assert.deepEqual(announcedVersions({ 'release.type': 'OSS', 'release.version': '8.0.3' }), []);
      assert.deepEqual(announcedVersions({ config: { 'line.proto.support.versions': [1, 2, 3] } }), [1, 2, 3]);
      assert.deepEqual(announcedVersions({ 'line.proto.support.versions': ['1', '2'] }), [1, 2]);
      assert.deepEqual(announcedVersions(null), []);
    });
  });

  describe('SQL', () => {
    it('creates the raw, hourly and intent tables: SYMBOL INDEX series, WAL, deduplicated', () => {
      const [raw, hourly, pending] = createTableStatements('pv');
      assert.match(raw!, /^CREATE TABLE IF NOT EXISTS pv \(series SYMBOL CAPACITY \d+ CACHE INDEX, value DOUBLE, text VARCHAR, annotation VARCHAR, deleted BOOLEAN, ts TIMESTAMP\) TIMESTAMP\(ts\) PARTITION BY MONTH WAL DEDUP UPSERT KEYS\(ts, series\)$/);
      assert.match(hourly!, /^CREATE TABLE IF NOT EXISTS pv_hourly \(series SYMBOL .* bucket TIMESTAMP\) TIMESTAMP\(bucket\) PARTITION BY YEAR WAL DEDUP UPSERT KEYS\(bucket, series\)$/);
      assert.match(pending!, /^CREATE TABLE IF NOT EXISTS pv_pending .* WAL DEDUP UPSERT KEYS\(ts, id, series\)$/);
    });

    it('binds nothing: every number is a checked literal, so no cached plan can keep an old bound', () => {
      const sql = statements('pv');
      const texts = [
        sql.latest(3, 10),
        sql.range(3, T0, T0 + H, 100),
        sql.range(3, T0, T0 + H, 100, true),
        sql.valueAt(3, T0),
        sql.buckets(3, T0, T0 + H),
        sql.numericRows([3, 4], T0, T0 + H),
        sql.countLive(3, T0, T0 + 1),
        sql.softDelete(3, T0, T0 + 1),
        sql.tails([3, 4]),
        sql.hourStarts(3, T0, T0 + H),
      ];
      for (const t of texts) assert.doesNotMatch(t, /\$\d/, t);
      assert.equal(sql.latest(3, 10), "SELECT cast(ts AS LONG) AS ts_us, value, text, annotation FROM pv WHERE series = '3' AND NOT deleted ORDER BY ts DESC LIMIT 10");
      assert.match(sql.range(3, T0, T0 + H, 100, true), /ts > '2024-01-01T00:00:00.000000Z' AND ts < '2024-01-01T01:00:00.000000Z'/);
      for (const t of [sql.latest(3, 1), sql.range(3, 0, 1, 1), sql.valueAt(3, 0), sql.numericRows([3], 0, 1), sql.countLive(3, 0, 1)]) assert.match(t, /NOT deleted/);
      assert.throws(() => seriesLiteral(1.5), /not an integer/);
      assert.throws(() => sql.latest(3, Infinity), /not an integer/);
    });

    it('writes bounds as timestamp literals, fractional ones rounded up, clamped to 1970..9999', () => {
      assert.equal(tsLiteral(0), "'1970-01-01T00:00:00.000000Z'");
      assert.equal(tsLiteral(1_700_000_000_123), "'2023-11-14T22:13:20.123000Z'");
      assert.equal(tsLiteral(1.2), tsLiteral(2));
      assert.equal(tsLiteral(-5), tsLiteral(0));
      assert.equal(tsLiteral(MAX_TS_MS), "'9999-12-31T23:59:59.999000Z'");
      // Beyond: the last µs, still after every stored timestamp (an exclusive upper bound keeps MAX_TS_MS).
      assert.equal(tsLiteral(Infinity), "'9999-12-31T23:59:59.999999Z'");
      assert.equal(tsLiteral(MAX_TS_MS + 10), "'9999-12-31T23:59:59.999999Z'");
      assert.throws(() => tsLiteral(NaN), /NaN/);
    });

    it('checks an existing layout: types, designated timestamp, dedup keys', () => {
      const good = [
        { column: 'series', type: 'SYMBOL', designated: false, upsertKey: true },
        { column: 'value', type: 'DOUBLE', designated: false, upsertKey: false },
        { column: 'text', type: 'VARCHAR', designated: false, upsertKey: false },
        { column: 'annotation', type: 'VARCHAR', designated: false, upsertKey: false },
        { column: 'deleted', type: 'BOOLEAN', designated: false, upsertKey: false },
        { column: 'ts', type: 'TIMESTAMP', designated: true, upsertKey: true },
      ];
      assert.deepEqual(checkSchema('raw', good), []);
      // The layout before the hourly table: series as INT.
      const old = good.map((c) => (c.column === 'series' ? { ...c, column: 'series_id', type: 'INT' } : c));
      assert.deepEqual(checkSchema('raw', old), ['column series is missing']);
      assert.deepEqual(checkSchema('raw', good.map((c) => ({ ...c, upsertKey: false }))), ['ts is not a DEDUP UPSERT KEY', 'series is not a DEDUP UPSERT KEY']);
      assert.deepEqual(checkSchema('raw', good.map((c) => ({ COLUMN: c.column, TYPE: c.type, DESIGNATED: c.designated, UPSERTKEY: c.upsertKey }))), []);
    });
  });

  describe('rows', () => {
    it('maps PG-wire rows: epoch micros exactly (beyond 2^53 too), NaN and NULL doubles as null', () => {
      assert.equal(microsToMs('1700000000123456'), 1_700_000_000_123);
      assert.equal(microsToMs(BigInt(MAX_TS_MS) * 1000n + 999n), MAX_TS_MS);
      assert.deepEqual(rowToStoredValue({ ts_us: '1000', value: 'NaN', text: null, annotation: 'a' }), { ts: 1, value: null, text: null, annotation: 'a' });
      assert.deepEqual(rowToStoredValue({ ts_us: 2000, value: null, text: 'x', annotation: null }), { ts: 2, value: null, text: 'x', annotation: null });
      assert.deepEqual(
        hourlyRowToAggregate({ bucket_us: String(T0 * 1000), n: '2', sum: 3, min: 1, max: 2, first_ms: String(T0), first_value: 1, last_ms: String(T0 + 5), last_value: 2, inner_integral: 5 }),
        { start: T0, count: 2, sum: 3, min: 1, max: 2, firstTs: T0, firstValue: 1, lastTs: T0 + 5, lastValue: 2, innerIntegral: 5 },
      );
    });
  });

  describe('ILP lines', () => {
    it('writes numeric rows byte by byte: series tag, shortest double, µs timestamp, nothing else', () => {
      const lines = new IlpLines();
      lines.value('pv', 12, T0, 1.5, null, null);
      lines.value('pv', 0, 0, -2, null, null);
      lines.value('pv', 2147483647, MAX_TS_MS, 1e-7, null, null);
      lines.value('pv', 3, 1, 5e-324, null, null);
      assert.equal(lines.length, 4);
      assert.equal(
        text(lines.take()),
        `pv,series=12 value=1.5 ${T0}000\npv,series=0 value=-2 0\npv,series=2147483647 value=1e-7 ${MAX_TS_MS}000\npv,series=3 value=5e-324 1000\n`,
      );
      assert.equal(lines.size, 0, 'take() empties the builder');
    });

    it('quotes text and annotations with \\ before \\, " and line feeds; leaves out a NaN value', () => {
      const lines = new IlpLines();
      lines.value('pv', 1, 1, NaN, 'a "q" \\ b\nc,d e=f\r', 'ünï😀');
      lines.value('pv', 1, 2, 3, null, 'note');
      lines.value('pv', 1, 3, NaN, null, null);
      assert.equal(text(lines.take()), 'pv,series=1 text="a \\"q\\" \\\\ b\\\nc,d e=f\r",annotation="ünï😀" 1000\npv,series=1 value=3,annotation="note" 2000\npv,series=1 deleted=f 3000\n');
      assert.equal(ilpString('plain'), '"plain"');
    });

    it('writes hourly, empty-hour and intent rows', () => {
      const lines = new IlpLines();
      lines.hourly('pv_hourly', 4, { start: T0, count: 2, sum: 3, min: 1, max: 2, firstTs: T0, firstValue: 1, lastTs: T0 + 10, lastValue: 2, innerIntegral: 10 });
      lines.emptyHour('pv_hourly', 4, T0 + H);
      lines.intent('pv_pending', 77, 4, T0, T0 + H, true, 123456);
      assert.equal(
        text(lines.take()),
        `pv_hourly,series=4 n=2i,sum=3,min=1,max=2,first_ms=${T0}i,first_value=1,last_ms=${T0 + 10}i,last_value=2,inner_integral=10 ${T0}000\n` +
          `pv_hourly,series=4 n=0i,sum=0,min=0,max=0,first_ms=0i,first_value=0,last_ms=0i,last_value=0,inner_integral=0 ${T0 + H}000\n` +
          `pv_pending id=77i,series=4i,ms_from=${T0}i,ms_to=${T0 + H}i,done=t 123456\n`,
      );
    });

    it('rejects timestamps and values QuestDB cannot store before sending anything', () => {
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: -1, value: 1 }])), /before 1970/);
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: MAX_TS_MS + 1, value: 1 }])), /after year 9999/);
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: 1.5, value: 1 }])), /whole number/);
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: 1, value: Infinity }])), /not finite/);
      validateBatch(batchOf([{ series: 1, ts: 0, value: 1 }, { series: 1, ts: MAX_TS_MS, value: NaN }]));
    });
  });

  describe('ILP transport', () => {
    let server: Server | undefined;
    afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

    it('fails at once on a refused connection, with the socket error as the cause', async () => {
      const port = await freePort();
      const ilp = ilpTransport(`http::addr=127.0.0.1:${port}`);
      const started = Date.now();
      await assert.rejects(ilp.send(Buffer.from('t v=1 1\n')), (err: unknown) => {
        assert.match((err as Error).message, /QuestDB write to 127\.0\.0\.1:\d+ failed/);
        assert.equal(((err as Error).cause as NodeJS.ErrnoException).code, 'ECONNREFUSED');
        return true;
      });
      assert.ok(Date.now() - started < 2_000, 'a refused connection is not retried');
      await ilp.close();
    });

    it('gives up after request_timeout when the server does not answer, with ETIMEDOUT', async () => {
      server = createServer(() => undefined).listen(0, '127.0.0.1');
      await new Promise((r) => server!.once('listening', r));
      const ilp = ilpTransport(`http::addr=127.0.0.1:${(server.address() as AddressInfo).port};request_timeout=300`);
      await assert.rejects(ilp.send(Buffer.from('t v=1 1\n')), (err: unknown) => {
        assert.equal(((err as Error).cause as NodeJS.ErrnoException).code, 'ETIMEDOUT');
        return true;
      });
      await ilp.close();
    });

    it("reports a refused write with QuestDB's JSON error, and sends the credentials of the configuration", async () => {
      let authorization: string | undefined;
      let url: string | undefined;
      server = createServer((req, res) => {
        authorization = req.headers.authorization;
        url = req.url;
        req.resume();
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'invalid', message: 'failed to parse line protocol: invalid field format', line: 1, errorId: 'abc-1' }));
      }).listen(0, '127.0.0.1');
      await new Promise((r) => server!.once('listening', r));
      const ilp = ilpTransport(`http::addr=127.0.0.1:${(server.address() as AddressInfo).port};username=admin;password=p;;w`);
      await assert.rejects(ilp.send(Buffer.from('bad\n')), (err: unknown) => {
        assert.ok(err instanceof IlpRequestError);
        assert.equal(err.status, 400);
        assert.equal(err.message, 'QuestDB refused the write (HTTP 400): failed to parse line protocol: invalid field format, line 1, errorId abc-1');
        return true;
      });
      assert.equal(authorization, `Basic ${Buffer.from('admin:p;w').toString('base64')}`);
      assert.equal(url, '/write?precision=u');
      await ilp.close();
    });
  });

  describe('WAL watcher', () => {
    const st = (writerTxn: number, sequencerTxn: number, suspended = false): WalStatus => ({ writerTxn, sequencerTxn, suspended });

    /** A watcher over a scripted wal_tables() sequence: read i answers script[i] (the last one after). */
    function watcher(script: Record<string, WalStatus>[], timeoutMs = 1_000) {
      let reads = 0;
      let t = 0;
      const w = new WalWatcher({
        read: async (tables) => {
          const row = script[Math.min(reads++, script.length - 1)]!;
          t += 10;
          return new Map(tables.filter((name) => row[name]).map((name) => [name, row[name]!]));
        },
        timeoutMs,
        pollMs: 1,
        now: () => t,
      });
      return { w, reads: () => reads };
    }

    it('waits until the sequencerTxn seen after the call is applied, not for later commits', async () => {
      const { w, reads } = watcher([{ pv: st(3, 6) }, { pv: st(5, 9) }, { pv: st(6, 12) }]);
      await w.applied('pv');
      assert.equal(reads(), 3);
    });

    it('serves every waiting writer with one read per round', async () => {
      const { w, reads } = watcher([{ pv: st(1, 2), pv_hourly: st(4, 5) }, { pv: st(2, 2), pv_hourly: st(5, 5) }]);
      await Promise.all([w.applied('pv', 'pv_hourly'), w.applied('pv'), w.applied('pv_hourly')]);
      assert.equal(reads(), 2);
    });

    it('fails on a suspended table, after the timeout, on a table wal_tables() does not list, and when the read fails', async () => {
      await assert.rejects(watcher([{ pv: st(3, 6) }, { pv: st(4, 6, true) }]).w.applied('pv'), (err: unknown) => {
        assert.ok(err instanceof WalSuspendedError);
        assert.match(err.message, /pv is suspended .*RESUME WAL/);
        return true;
      });
      await assert.rejects(watcher([{ pv: st(1, 2) }], 50).w.applied('pv'), WalApplyTimeoutError);
      await assert.rejects(watcher([{}]).w.applied('pv'), /not listed by wal_tables\(\)/);
      const failing = new WalWatcher({
        read: async () => {
          throw new Error('connect ECONNREFUSED');
        },
        timeoutMs: 1000,
        pollMs: 1,
      });
      await assert.rejects(Promise.all([failing.applied('a'), failing.applied('b')]), /ECONNREFUSED/);
    });
  });

  describe('values not applied yet', () => {
    const v = (ts: number, value: number): StoredValue => ({ ts, value, text: null, annotation: null });

    it('merges two ascending runs, the newer winning on the same timestamp, up to a limit', () => {
      assert.deepEqual(mergeValues([v(1, 1), v(3, 3), v(5, 5)], [v(2, 20), v(3, 30), v(6, 60)]), [v(1, 1), v(2, 20), v(3, 30), v(5, 5), v(6, 60)]);
      assert.deepEqual(mergeValues([v(1, 1), v(3, 3)], [v(2, 20)], 2), [v(1, 1), v(2, 20)]);
      assert.deepEqual(mergeValues([], [v(1, 1)]), [v(1, 1)]);
    });

    it('puts hours held in memory in place of the table\'s, by start', () => {
      const hour = (start: number, count: number): BucketAggregate => ({ start, count, sum: count, min: 1, max: 1, firstTs: start, firstValue: 1, lastTs: start, lastValue: 1, innerIntegral: 0 });
      assert.deepEqual(mergeHours([hour(0, 1), hour(H, 1)], new Map([[H, hour(H, 5)], [3 * H, hour(3 * H, 2)]])), [hour(0, 1), hour(H, 5), hour(3 * H, 2)]);
    });

    it('keeps layers until removed, the newest winning per (series, ts) and per hour', () => {
      const unapplied = new Unapplied();
      const first = batchOf([{ series: 1, ts: 10, value: 1 }, { series: 2, ts: 10, value: 2 }]);
      const second = batchOf([{ series: 1, ts: 10, value: 5, annotation: 'again' }, { series: 1, ts: 20, value: NaN, text: 't' }]);
      const a = layerOf(first, sortRows(first), []);
      const b = layerOf(second, sortRows(second), []);
      unapplied.add(a);
      unapplied.add(b);
      assert.equal(unapplied.size, 4);
      assert.deepEqual(unapplied.range(1, 0, 100), [
        { ts: 10, value: 5, text: null, annotation: 'again' },
        { ts: 20, value: null, text: 't', annotation: null },
      ]);
      assert.ok(unapplied.has(2));
      unapplied.remove(a);
      assert.ok(!unapplied.has(2));
      assert.equal(unapplied.size, 2);
    });
  });

  describe('hourly rows', () => {
    /** Values of one series with random gaps from 1 ms to 3 hours, some without a numeric value. */
    const series = fc
      .array(fc.tuple(fc.integer({ min: 1, max: 3 * H }), fc.option(fc.integer({ min: -1000, max: 1000 }), { freq: 8 })), { minLength: 1, maxLength: 80 })
      .map((steps) => {
        let ts = T0 + 123;
        return steps.map(([gap, v]) => ({ ts: (ts += gap), value: v === null ? NaN : v / 8 }));
      });

    it('continues a series across appends in time order exactly as folding it at once', () => {
      fc.assert(
        fc.property(series, fc.array(fc.nat(), { maxLength: 6 }), (rows, rawCuts) => {
          const cuts = [...new Set(rawCuts.map((c) => c % rows.length))].sort((a, b) => a - b);
          const bounds = [0, ...cuts.filter((c) => c > 0), rows.length];
          const tails = new SeriesTails();
          tails.load([1], new Map());
          const written = new Map<number, BucketAggregate>();
          for (let p = 0; p + 1 < bounds.length; p++) {
            const part = rows.slice(bounds[p], bounds[p + 1]);
            const batch = batchOf(part.map((r) => ({ series: 1, ts: r.ts, value: r.value })));
            const plan = planHourly(batch, sortRows(batch), tails);
            assert.deepEqual(plan.recompute, []);
            for (const { aggregate } of plan.rows) written.set(aggregate.start, aggregate);
            for (const [s, tail] of plan.tails) tails.set(s, tail);
          }
          const expected = foldAll(rows.filter((r) => !Number.isNaN(r.value)));
          assert.deepEqual([...written.values()].sort((a, b) => a.start - b.start), expected);
        }),
      );
    });

    it('sends a late value, or a timestamp written again, to a recompute of the hours it reaches', () => {
      const tails = new SeriesTails();
      tails.load([1, 2], new Map([[1, { start: T0, count: 1, sum: 5, min: 5, max: 5, firstTs: T0 + 10, firstValue: 5, lastTs: T0 + 10, lastValue: 5, innerIntegral: 0 }]]));
      const batch = batchOf([
        { series: 1, ts: T0 + 10, value: 6 },
        { series: 1, ts: T0 + 3 * H, value: 7 },
        { series: 2, ts: T0, value: 1 },
      ]);
      const plan = planHourly(batch, sortRows(batch), tails);
      assert.deepEqual(plan.recompute, [{ series: 1, from: T0, to: T0 + 4 * H }]);
      assert.deepEqual(plan.rows.map((r) => r.series), [2]);
      assert.equal(plan.tails.get(1), undefined, 'a recomputed series forgets its tail');
      assert.throws(() => planHourly(batchOf([{ series: 3, ts: T0, value: 1 }]), sortRows(batchOf([{ series: 3, ts: T0, value: 1 }])), tails), /no tail loaded/);
    });

    it('recomputes whole hours from raw rows, and empties the hours left without a value', () => {
      const rows = [
        { series: 1, ts_us: String((T0 + 5) * 1000), value: 2 },
        { series: 1, ts_us: String((T0 + 15) * 1000), value: 4 },
        { series: 1, ts_us: String((T0 + 2 * H) * 1000), value: 1 },
      ];
      const existing = new Map([[1, new Set([T0, T0 + H, T0 + 2 * H, T0 + 9 * H])]]);
      const out = foldRecomputed(rows, [{ series: 1, from: T0, to: T0 + 3 * H }], existing);
      assert.deepEqual(out.rows.map((r) => r.aggregate), foldAll([{ ts: T0 + 5, value: 2 }, { ts: T0 + 15, value: 4 }, { ts: T0 + 2 * H, value: 1 }]));
      assert.deepEqual(out.emptyHours, [{ series: 1, start: T0 + H }], 'only hours inside the span that hold a row now');
    });
  });
});

const { ilp, pg: pgUrl } = questdbSettings;

describe('QuestDB engine (live server)', function () {
  this.timeout(120_000);
  if (!ilp || !pgUrl) {
    it('is skipped: set TEST_QUESTDB_ILP and TEST_QUESTDB_PG to run it', function () {
      console.log('  (QuestDB live-server cases skipped: no QuestDB)');
      this.skip();
    });
    return;
  }
  const silent = pino({ level: 'silent' });
  let store: QuestDbStore;
  let table: string;
  beforeEach(async () => {
    table = newQuestDbTableName();
    store = await openQuestDbStore({ ilp, pg: pgUrl, table, log: silent });
  });
  afterEach(async () => {
    try {
      await store.close();
    } finally {
      await dropQuestDbTable(pgUrl, table);
    }
  });

  const all = async (s: QuestDbStore, series: number, from = 0, to = MAX_TS_MS + 1) => {
    const out: StoredValue[] = [];
    for await (const b of s.range(series, from, to)) out.push(...b);
    return out;
  };

  it('checks the server at open: it answers /settings, and takes protocol version 1', async () => {
    await checkIlpServer(ilp, silent);
  });

  it('makes an append visible to the very next read, hourly rows included', async () => {
    await store.append(batchOf([{ series: 1, ts: T0, value: 1.25 }, { series: 1, ts: T0 + 1, text: 'x', annotation: 'a' }, { series: 1, ts: T0 + 10, value: 3 }]));
    assert.deepEqual(await store.latest(1, 10), [
      { ts: T0 + 10, value: 3, text: null, annotation: null },
      { ts: T0 + 1, value: null, text: 'x', annotation: 'a' },
      { ts: T0, value: 1.25, text: null, annotation: null },
    ]);
    assert.deepEqual(await store.buckets(1, T0, T0 + H), foldAll([{ ts: T0, value: 1.25 }, { ts: T0 + 10, value: 3 }]));
  });

  it('round-trips text with every character the line protocol treats specially, and edge doubles and instants', async () => {
    const texts = ['a "q" b', 'back\\slash', 'line\nfeed', 'cr\rlf\r\n', 'comma, space=equals', '  lead', 'ünïcødé ✓ 😀', '\\"', 'end\\', '"', ''];
    const numbers = [1e21, 1e-7, 5e-324, -1.7976931348623157e308, 0.1 + 0.2, -0, 123456789.12345678];
    const rows = [
      ...texts.map((t, i) => ({ series: 2, ts: T0 + i, text: t, annotation: `note ${t}` })),
      ...numbers.map((value, i) => ({ series: 3, ts: T0 + i, value })),
      { series: 4, ts: 0, value: 1 },
      { series: 4, ts: MAX_TS_MS, value: 2 },
    ];
    await store.append(batchOf(rows));
    assert.deepEqual((await all(store, 2)).map((v) => [v.text, v.annotation]), texts.map((t) => [t, `note ${t}`]));
    assert.deepEqual((await all(store, 3)).map((v) => v.value), numbers.map((n) => (Object.is(n, -0) ? 0 : n)));
    assert.deepEqual((await all(store, 4)).map((v) => v.ts), [0, MAX_TS_MS]);
  });

  it('never answers from a plan cached with an earlier bound: random reads with changing bounds agree with the reference', async () => {
    // Two series in separate months, so many bounds fall where the table has no partition.
    const model = new Map<number, { ts: number; value: number }[]>();
    const rows: { series: number; ts: number; value: number }[] = [];
    for (const [series, start] of [[5, T0], [6, Date.UTC(2024, 5, 1)]] as const) {
      const list = Array.from({ length: 40 }, (_, i) => ({ ts: start + i * 7 * 60_000, value: i * 1.5 + series }));
      model.set(series, list);
      rows.push(...list.map((r) => ({ series, ...r })));
    }
    await store.append(batchOf(rows));
    const candidates = [...model.values()].flat().flatMap((r) => [r.ts - 1, r.ts, r.ts + 1]).concat([T0 - 86_400_000, Date.UTC(2024, 2, 1), Date.UTC(2025, 0, 1)]);
    let seed = 42;
    const pick = () => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return candidates[seed % candidates.length]!;
    };
    for (let i = 0; i < 120; i++) {
      const series = i % 3 === 0 ? 6 : 5;
      const list = model.get(series)!;
      const [a, b] = [pick(), pick()].sort((x, y) => x - y);
      const inForce = [...list].reverse().find((r) => r.ts <= a!);
      assert.deepEqual((await store.valueAt(series, a!))?.ts, inForce?.ts, `valueAt(${series}, ${a})`);
      const inRange = list.filter((r) => r.ts >= a! && r.ts < b!).map((r) => r.ts);
      assert.deepEqual((await all(store, series, a!, b!)).map((v) => v.ts), inRange, `range(${series}, ${a}, ${b})`);
    }
  });

  it('answers an append once committed; until QuestDB applies it, reads take its rows and hours from memory', async () => {
    // Rows in the table, applied.
    await store.append(batchOf([{ series: 8, ts: T0, value: 1 }, { series: 8, ts: T0 + 60_000, value: 2 }]));
    await store.close();
    // The same table through a store whose writes QuestDB commits but never applies: its ILP requests
    // are kept here, and wal_tables() answers that the table is behind.
    const pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
    const sent: Buffer[] = [];
    let behind = true;
    const lagging = await initQuestDbStore(
      {
        query: async <T extends object>(sql: string) => {
          const rows = (await pool.query(sql)).rows as Record<string, unknown>[];
          if (behind && sql.includes('wal_tables()')) for (const r of rows) r.sequencerTxn = Number(r.writerTxn ?? r.writertxn) + 1;
          return rows as T[];
        },
        ilp: { send: async (body) => void sent.push(body), close: async () => undefined },
        end: () => pool.end(),
      },
      { table, log: silent },
    );
    try {
      // Values continuing the series (a late one would be recomputed from the table, applied first).
      await lagging.append(batchOf([{ series: 8, ts: T0 + 120_000, value: 3, annotation: 'new' }, { series: 8, ts: T0 + 180_000, value: -0 }]));
      assert.equal(sent.length, 1, 'one request for the raw and hourly rows');
      const expected = [
        { ts: T0, value: 1, text: null, annotation: null },
        { ts: T0 + 60_000, value: 2, text: null, annotation: null },
        { ts: T0 + 120_000, value: 3, text: null, annotation: 'new' },
        { ts: T0 + 180_000, value: 0, text: null, annotation: null },
      ];
      assert.deepEqual(await all(lagging, 8), expected);
      assert.deepEqual(await lagging.latest(8, 3), [expected[3], expected[2], expected[1]]);
      assert.deepEqual(await lagging.valueAt(8, T0 + 150_000), expected[2]);
      assert.deepEqual(await lagging.valueAt(8, T0 + 60_000), expected[1]);
      assert.deepEqual(await lagging.buckets(8, T0, T0 + H), foldAll(expected.map((v) => ({ ts: v.ts, value: v.value }))));
      const paged: StoredValue[][] = [];
      for await (const page of lagging.range(8, T0, T0 + H, 2)) paged.push(page);
      assert.deepEqual(paged.flat(), expected.slice(0, 2), 'the limit counts merged values');
      const beyond: StoredValue[][] = [];
      for await (const page of lagging.range(8, T0 + 90_000, T0 + H, 10)) beyond.push(page);
      assert.deepEqual(beyond.flat(), expected.slice(2), 'a range past the table rows');
    } finally {
      behind = false;
      await lagging.close();
    }
    store = await openQuestDbStore({ ilp, pg: pgUrl, table, log: silent });
  });

  it('recomputes at open the hours of a write a crash left between its raw rows and its hourly rows', async () => {
    // What a crash leaves: the intent and the raw rows committed, the hourly rows never written.
    const { raw, pending } = tableNames(table);
    const lines = new IlpLines();
    lines.intent(pending, 1, 9, T0, T0 + 2 * H, false, T0 * 1000);
    const raws = [
      { ts: T0 + 60_000, value: 4 },
      { ts: T0 + 120_000, value: 6 },
      { ts: T0 + H + 1, value: 1 },
    ];
    for (const r of raws) lines.value(raw, 9, r.ts, r.value, null, null);
    const transport = ilpTransport(ilp);
    await transport.send(lines.take());
    await transport.close();
    await store.close();
    store = await openQuestDbStore({ ilp, pg: pgUrl, table, log: silent });
    assert.deepEqual(await store.buckets(9, T0, T0 + 2 * H), foldAll(raws));
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      const undone = await client.query(`SELECT count() AS n FROM ${pending} WHERE NOT done`);
      assert.equal(Number(undone.rows[0].n), 0, 'the intent is marked done');
    } finally {
      await client.end();
    }
  });

  it('keeps hourly rows exact through late values, rewrites, deletes and values that are no longer numeric', async () => {
    const truth = new Map<number, number>();
    const write = async (rows: { ts: number; value: number }[]) => {
      for (const r of rows) truth.set(r.ts, r.value);
      await store.append(batchOf(rows.map((r) => ({ series: 7, ...r }))));
    };
    await write([0, 1, 2, 3].map((i) => ({ ts: T0 + i * 20 * 60_000, value: i })));
    await write([{ ts: T0 + 5 * 60_000, value: 10 }]); // late
    await write([{ ts: T0 + 20 * 60_000, value: 20 }]); // rewrite
    await write([{ ts: T0 + 2 * H, value: 5 }]); // in order, a new hour
    await store.append(batchOf([{ series: 7, ts: T0 + 40 * 60_000, text: 'no number' }])); // a numeric value replaced by text
    truth.delete(T0 + 40 * 60_000);
    assert.equal(await store.delete(7, T0 + 2 * H, T0 + 3 * H), 1);
    truth.delete(T0 + 2 * H);
    const expected = foldAll([...truth].sort((a, b) => a[0] - b[0]).map(([ts, value]) => ({ ts, value })));
    assert.deepEqual(await store.buckets(7, T0, T0 + 3 * H), expected);
    await store.close();
    store = await openQuestDbStore({ ilp, pg: pgUrl, table, log: silent });
    await write([{ ts: T0 + 61 * 60_000, value: 8 }]); // continues the hour after a reopen (tail loaded from the table)
    assert.deepEqual(
      await store.buckets(7, T0, T0 + 3 * H),
      foldAll([...truth].sort((a, b) => a[0] - b[0]).map(([ts, value]) => ({ ts, value }))),
    );
  });

  it('sends appends of disjoint series at once and keeps each series in call order: raw and hourly rows exact, also as read back after a reopen', async () => {
    const truth = new Map<number, Map<number, number>>([[1, new Map()], [2, new Map()], [3, new Map()]]);
    const appends: Promise<void>[] = [];
    const write = (rows: { series: number; ts: number; value: number }[]) => {
      for (const r of rows) truth.get(r.series)!.set(r.ts, r.value);
      appends.push(store.append(batchOf(rows)));
    };
    // Chunks of 45 minutes, fired without waiting, two in a row per series (1, 1, 2, 2, 3, 3, 1, …):
    // each chunk rewrites the previous chunk's last minute of its series (a later value must win), and
    // every fourth append holds two series.
    for (let k = 0; k < 24; k++) {
      const series = (Math.floor(k / 2) % 3) + 1;
      const first = T0 + (Math.floor(k / 6) * 2 + (k % 2)) * 44 * 60_000;
      const rows = Array.from({ length: 45 }, (_, m) => ({ series, ts: first + m * 60_000, value: k * 100 + m }));
      if (k % 4 === 3) rows.push({ series: (series % 3) + 1, ts: T0 + 20 * H + k * 60_000, value: k });
      write(rows);
    }
    await Promise.all(appends);
    const check = async (s: QuestDbStore) => {
      for (const [series, values] of truth) {
        const expected = [...values].sort((a, b) => a[0] - b[0]).map(([ts, value]) => ({ ts, value }));
        assert.deepEqual((await all(s, series)).map((v) => ({ ts: v.ts, value: v.value })), expected, `raw rows of series ${series}`);
        assert.deepEqual(await s.buckets(series, T0, T0 + 24 * H), foldAll(expected), `hourly rows of series ${series}`);
      }
    };
    await check(store);
    await store.close();
    store = await openQuestDbStore({ ilp, pg: pgUrl, table, log: silent });
    await check(store);
  });

  it('refuses a table of the old layout (INT series) with a message naming QUESTDB_TABLE', async () => {
    const old = newQuestDbTableName();
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      await client.query(`CREATE TABLE ${old} (series_id INT, value DOUBLE, text VARCHAR, annotation VARCHAR, deleted BOOLEAN, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL DEDUP UPSERT KEYS(ts, series_id)`);
      await assert.rejects(openQuestDbStore({ ilp, pg: pgUrl, table: old, log: silent }), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /^QUESTDB_TABLE: QuestDB table \w+ exists with another layout \(column series is missing/);
        return true;
      });
    } finally {
      await client.end();
      await dropQuestDbTable(pgUrl, old);
    }
  });

  it('stops opening with a ConfigError naming QUESTDB_ILP or QUESTDB_PG when a side cannot be reached or refuses the credentials', async () => {
    const closed = await freePort();
    await assert.rejects(openQuestDbStore({ ilp: `http::addr=127.0.0.1:${closed}`, pg: pgUrl, table: 'unused_table', log: silent }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^QUESTDB_ILP: cannot reach the QuestDB server: .*ECONNREFUSED/);
      return true;
    });
    const pgWrongPort = new URL(pgUrl);
    pgWrongPort.port = String(closed);
    await assert.rejects(openQuestDbStore({ ilp, pg: pgWrongPort.toString(), table: 'unused_table', log: silent }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^QUESTDB_PG: cannot query the QuestDB server: .*ECONNREFUSED/);
      return true;
    });
    const wrongPassword = new URL(pgUrl);
    wrongPassword.password = 'not-the-password';
    await assert.rejects(openQuestDbStore({ ilp, pg: wrongPassword.toString(), table: 'unused_table', log: silent }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^QUESTDB_PG: cannot query the QuestDB server: .*(password|authentication)/i);
      return true;
    });
  });
});
