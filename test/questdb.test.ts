// QuestDB adapter: the parts that need no server (configuration, SQL, ILP rows, timestamp conversion,
// the WAL apply wait, bucket folding), and a few live-server cases when TEST_QUESTDB_ILP and
// TEST_QUESTDB_PG are set. The shared point-value contract runs in test/value-store.test.ts.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createBuffer, SenderOptions } from '@questdb/nodejs-client';
import pino from 'pino';
import {
  bucketRowToAggregate,
  buildSenderConfig,
  ceilToBucket,
  initQuestDbStore,
  checkSchema,
  createTableSql,
  foldNumericRows,
  MAX_TS_MS,
  microsParam,
  microsToMs,
  msParam,
  openQuestDbStore,
  parseWalRow,
  rowToStoredValue,
  senderLog,
  statements,
  validateBatch,
  validateTableName,
  waitForWalApply,
  WalApplyTimeoutError,
  WalSuspendedError,
  writeRows,
  type IlpSender,
  type QuestDbConnections,
  type QuestDbStore,
  type WalStatus,
} from '../src/store/values/questdb/index.js';
import { BUCKET_MS, type ValueBatch } from '../src/store/values/types.js';
import { dropQuestDbTable, newQuestDbTableName } from './helpers/value-engines.questdb.js';
import { questdbSettings } from './helpers/value-engines.js';

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

describe('QuestDB adapter (no server)', () => {
  describe('configuration', () => {
    it('accepts lower-case identifiers as table names and rejects anything else', () => {
      assert.equal(validateTableName('point_values'), 'point_values');
      assert.equal(validateTableName('_t1'), '_t1');
      for (const bad of ['', 'Point', '1t', 'a-b', 'a.b', 't; drop table x', "t'", 'a b', 'x'.repeat(128)]) {
        assert.throws(() => validateTableName(bad), /lower-case identifier/, bad);
      }
    });

    it('builds the Sender configuration: auto_flush off, protocol_version when given, other keys kept', () => {
      assert.equal(buildSenderConfig('http::addr=host:9000'), 'http::addr=host:9000;auto_flush=off;');
      assert.equal(buildSenderConfig('http::addr=host:9000;', 1), 'http::addr=host:9000;auto_flush=off;protocol_version=1;');
      assert.equal(
        buildSenderConfig('https::addr=h:9000;username=admin;password=a;;b;protocol_version=2;auto_flush_rows=10;auto_flush=on', 1),
        'https::addr=h:9000;username=admin;password=a;;b;protocol_version=1;auto_flush=off;',
      );
      // The caller's protocol_version stays when the option is not given.
      assert.equal(buildSenderConfig('http::addr=h;protocol_version=1'), 'http::addr=h;protocol_version=1;auto_flush=off;');
    });

    it('produces configuration strings the client itself parses', () => {
      const opts = new SenderOptions(buildSenderConfig('http::addr=host:9001;password=x;;y', 2));
      assert.equal(opts.host, 'host');
      assert.equal(opts.port, 9001);
      assert.equal(opts.password, 'x;y');
      assert.equal(opts.auto_flush, false);
      assert.equal(opts.protocol_version, '2');
    });

    it('refuses TCP transports and malformed strings', () => {
      assert.throws(() => buildSenderConfig('tcp::addr=host:9009'), /http or https/);
      assert.throws(() => buildSenderConfig('addr=host:9000'), /http::addr/);
      assert.throws(() => buildSenderConfig('http::user=x'), /'addr'/);
      assert.throws(() => buildSenderConfig('http::addr=h;oops'), /missing '='/);
    });
  });

  describe('SQL', () => {
    it('creates a WAL table, partitioned by day, deduplicated on (ts, series_id)', () => {
      const sql = createTableSql('pv');
      assert.match(sql, /^CREATE TABLE IF NOT EXISTS pv \(/);
      assert.match(sql, /series_id INT, value DOUBLE, text VARCHAR, annotation VARCHAR, deleted BOOLEAN, ts TIMESTAMP\)/);
      assert.match(sql, /TIMESTAMP\(ts\) PARTITION BY DAY WAL DEDUP UPSERT KEYS\(ts, series_id\)$/);
      assert.match(createTableSql('pv', 'STRING'), /text STRING, annotation STRING/);
      assert.throws(() => createTableSql('pv; drop'), /lower-case identifier/);
    });

    it('binds every value: no statement carries a literal from the caller', () => {
      const sql = statements('pv');
      for (const [name, text] of Object.entries(sql)) {
        if (name === 'columns') continue;
        assert.doesNotMatch(text, /'(?!hour')[^']*'/, `${name} has a string literal`);
        assert.doesNotMatch(text, /=\s*\d/, `${name} has a numeric literal`);
      }
      assert.equal(sql.columns, "SELECT * FROM table_columns('pv')");
    });

    it('filters soft-deleted rows in every read and updates only live rows', () => {
      const sql = statements('pv');
      for (const name of ['latest', 'rangeFirst', 'rangeNext', 'valueAt', 'numericRows', 'buckets', 'countLive', 'softDelete'] as const) {
        assert.match(sql[name], /NOT deleted/, name);
      }
      assert.match(sql.softDelete, /^UPDATE pv SET deleted = true WHERE series_id = \$1 AND ts >= \$2 AND ts < \$3/);
    });

    it('reads timestamps as epoch micros (cast to LONG), never as TIMESTAMP values', () => {
      const sql = statements('pv');
      for (const name of ['latest', 'rangeFirst', 'rangeNext', 'valueAt', 'numericRows'] as const) {
        assert.match(sql[name], /^SELECT cast\(ts AS LONG\) AS ts_us, value/, name);
      }
      assert.match(sql.rangeFirst, /ts >= \$2 AND ts < \$3 .*ORDER BY ts LIMIT \$4$/);
      assert.match(sql.rangeNext, /ts > \$2 AND ts < \$3 .*ORDER BY ts LIMIT \$4$/);
      assert.match(sql.latest, /ORDER BY ts DESC LIMIT \$2$/);
      assert.match(sql.valueAt, /ts < \$2 .*ORDER BY ts DESC LIMIT 1$/);
    });

    it('pushes buckets down with lead/lag and order-independent aggregates', () => {
      const { buckets } = statements('pv');
      assert.match(buckets, /lag\(bucket\) OVER \(ORDER BY ts\)/);
      assert.match(buckets, /lead\(bucket\) OVER \(ORDER BY ts\)/);
      assert.match(buckets, /lead\(ts_us\) OVER \(ORDER BY ts\)/);
      assert.match(buckets, /value IS NOT NULL/);
      assert.match(buckets, /GROUP BY bucket ORDER BY bucket$/);
    });

    it('checks an existing table layout', () => {
      const good = [
        { column: 'series_id', type: 'INT', designated: false, upsertKey: true },
        { column: 'value', type: 'DOUBLE', designated: false, upsertKey: false },
        { column: 'text', type: 'VARCHAR', designated: false, upsertKey: false },
        { column: 'annotation', type: 'STRING', designated: false, upsertKey: false },
        { column: 'deleted', type: 'BOOLEAN', designated: false, upsertKey: false },
        { column: 'ts', type: 'TIMESTAMP', designated: true, upsertKey: true },
      ];
      assert.deepEqual(checkSchema(good), []);
      const noDedup = good.map((c) => ({ ...c, upsertKey: false }));
      assert.deepEqual(checkSchema(noDedup), ['ts is not a DEDUP UPSERT KEY', 'series_id is not a DEDUP UPSERT KEY']);
      const problems = checkSchema([...good.filter((c) => c.column !== 'deleted'), { column: 'value', type: 'LONG', designated: false, upsertKey: false }]);
      assert.deepEqual(problems, ['column value has type LONG', 'column deleted is missing']);
      // Labels in another case (PG-wire may fold them) are still found.
      assert.deepEqual(checkSchema(good.map((c) => ({ COLUMN: c.column, TYPE: c.type, DESIGNATED: c.designated, UPSERTKEY: c.upsertKey }))), []);
    });
  });

  describe('timestamps', () => {
    it('formats bind parameters as ISO timestamps with microseconds and Z', () => {
      assert.equal(msParam(0), '1970-01-01T00:00:00.000000Z');
      assert.equal(msParam(1_700_000_000_123), '2023-11-14T22:13:20.123000Z');
      assert.equal(microsParam('1700000000123456'), '2023-11-14T22:13:20.123456Z');
      assert.equal(microsParam(1n), '1970-01-01T00:00:00.000001Z');
    });

    it('rounds fractional bounds up and clamps bounds into the designated-timestamp range', () => {
      assert.equal(msParam(1.2), msParam(2));
      assert.equal(msParam(-5), msParam(0));
      assert.equal(msParam(Number.POSITIVE_INFINITY), '9999-12-31T23:59:59.999000Z');
      assert.equal(msParam(MAX_TS_MS + 10), '9999-12-31T23:59:59.999000Z');
      assert.equal(microsParam(10n ** 20n), '9999-12-31T23:59:59.999999Z');
      assert.throws(() => msParam(NaN), /NaN/);
    });

    it('converts epoch micros (int8 text) to epoch ms exactly, beyond 2^53 micros too', () => {
      assert.equal(microsToMs('1700000000123000'), 1_700_000_000_123);
      assert.equal(microsToMs('1700000000123999'), 1_700_000_000_123);
      assert.equal(microsToMs(253_402_300_799_999_000n), MAX_TS_MS); // 2.5e17 > 2^53: Number() would round
      assert.equal(microsToMs('253402300799999000'), MAX_TS_MS);
      assert.equal(microsToMs(-1n), -1);
      assert.equal(microsToMs(0), 0);
    });

    it('maps a bucket range to whole buckets starting inside it', () => {
      assert.equal(ceilToBucket(0), 0);
      assert.equal(ceilToBucket(1), BUCKET_MS);
      assert.equal(ceilToBucket(BUCKET_MS), BUCKET_MS);
      assert.equal(ceilToBucket(BUCKET_MS * 5 + 30 * 60_000), BUCKET_MS * 6);
    });
  });

  describe('rows', () => {
    it('maps PG-wire rows to stored values: NaN and NULL doubles are null, text kept', () => {
      assert.deepEqual(rowToStoredValue({ ts_us: '1000', value: 2.5, text: null, annotation: 'a' }), { ts: 1, value: 2.5, text: null, annotation: 'a' });
      assert.deepEqual(rowToStoredValue({ ts_us: '2000', value: null, text: 'on', annotation: null }), { ts: 2, value: null, text: 'on', annotation: null });
      assert.deepEqual(rowToStoredValue({ ts_us: '3000', value: NaN, text: '', annotation: null }), { ts: 3, value: null, text: '', annotation: null });
      assert.equal(rowToStoredValue({ ts_us: '4000', value: '1.25', text: null, annotation: null }).value, 1.25);
    });

    it('maps bucket rows: start from the first timestamp, LONG columns as text', () => {
      const h = 400_000 * BUCKET_MS;
      const agg = bucketRowToAggregate({
        first_us: String((h + 5) * 1000),
        last_us: String((h + 65) * 1000),
        n: '3',
        s: 6,
        mn: 1,
        mx: 3,
        first_v: 1,
        last_v: 3,
        integral: 110,
      });
      assert.deepEqual(agg, { start: h, count: 3, sum: 6, min: 1, max: 3, firstTs: h + 5, firstValue: 1, lastTs: h + 65, lastValue: 3, innerIntegral: 110 });
    });

    it('parses wal_tables() rows whatever the label case and LONG encoding', () => {
      assert.deepEqual(parseWalRow({ name: 't', suspended: false, writerTxn: '7', writerLagTxnCount: '1', sequencerTxn: '8' }), {
        suspended: false,
        writerTxn: 7,
        sequencerTxn: 8,
      });
      assert.deepEqual(parseWalRow({ name: 't', suspended: true, writertxn: 3, sequencertxn: 3 }), { suspended: true, writerTxn: 3, sequencerTxn: 3 });
      assert.throws(() => parseWalRow({ name: 't', suspended: false }), /writerTxn/);
    });
  });

  describe('ILP rows', () => {
    const lines = async (batch: ValueBatch, protocol: '1' | '2' = '1') => {
      const buffer = createBuffer(new SenderOptions(`http::addr=localhost:9000;protocol_version=${protocol}`));
      await writeRows(buffer, 'pv', batch, 0, batch.length);
      return buffer.toBufferView().toString('latin1').split('\n').slice(0, -1);
    };

    it('writes numeric rows to value, ALPHANUMERIC rows to text, deleted=false always, ms timestamps', async () => {
      const batch = batchOf([
        { series: 7, ts: 1_700_000_000_123, value: 1.5 },
        { series: 8, ts: 1_700_000_000_124, text: 'on "x"', annotation: 'set by a, b' },
        { series: 9, ts: 1_700_000_000_125, value: 0 },
      ]);
      assert.deepEqual(await lines(batch), [
        'pv series_id=7i,value=1.5,deleted=f 1700000000123000000',
        'pv series_id=8i,text="on \\"x\\"",annotation="set by a, b",deleted=f 1700000000124000000',
        'pv series_id=9i,value=0,deleted=f 1700000000125000000',
      ]);
    });

    it('leaves out the value of a numeric NaN (stored as NULL) and sends binary doubles on protocol 2', async () => {
      const [nan] = await lines(batchOf([{ series: 1, ts: 5, value: NaN }]));
      assert.equal(nan, 'pv series_id=1i,deleted=f 5000000');
      const [v2] = await lines(batchOf([{ series: 1, ts: 5, value: 2 }]), '2');
      assert.ok(v2!.startsWith('pv series_id=1i,value=='), v2); // '=' then the binary-double marker
      assert.ok(v2!.endsWith(',deleted=f 5000t'), v2);
    });

    it('writes only the requested slice of a batch', async () => {
      const batch = batchOf([1, 2, 3, 4].map((i) => ({ series: i, ts: i, value: i })));
      const buffer = createBuffer(new SenderOptions('http::addr=localhost:9000;protocol_version=1'));
      await writeRows(buffer, 'pv', batch, 1, 3);
      assert.deepEqual(buffer.toBufferView().toString().trim().split('\n'), ['pv series_id=2i,value=2,deleted=f 2000000', 'pv series_id=3i,value=3,deleted=f 3000000']);
    });

    it('routes the Sender\'s log to the store\'s logger at the same level', async () => {
      const lines: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          done();
        },
      });
      const log = senderLog(pino({ level: 'info' }, sink).child({ engine: 'questdb' }));
      log('warn', 'Unexpected message from server: x');
      log('error', new Error('resp err'));
      log('debug', 'Flushing, number of flushed rows: 3'); // below the level: dropped
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        lines.map((l) => [l.level, l.engine, l.msg]),
        [
          [40, 'questdb', 'ilp: Unexpected message from server: x'],
          [50, 'questdb', 'ilp: resp err'],
        ],
      );
    });

    it('rejects timestamps and values QuestDB cannot store before sending anything', () => {
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: -1, value: 1 }])), /before 1970/);
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: NaN, value: 1 }])), /not a whole number/);
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: 1.5, value: 1 }])), /not a whole number/);
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: 1, value: 1 }, { series: 1, ts: 2, value: -Infinity }])), /row 1: value -Infinity is not finite/);
      assert.throws(() => validateBatch(batchOf([{ series: 1, ts: MAX_TS_MS + 1, value: 1 }])), /after year 9999/);
      assert.throws(() => validateBatch({ ...batchOf([{ series: 1, ts: 1, value: 1 }]), length: 2 }), /shorter/);
      validateBatch(batchOf([{ series: 1, ts: 0, value: 1 }]));
    });
  });

  describe('WAL apply wait', () => {
    /** A fake clock and a scripted wal_tables() row sequence. */
    function script(statuses: (WalStatus | undefined)[]) {
      let t = 0;
      let reads = 0;
      const sleeps: number[] = [];
      return {
        sleeps,
        reads: () => reads,
        opts: {
          table: 'pv',
          timeoutMs: 1_000,
          now: () => t,
          sleep: async (ms: number) => {
            sleeps.push(ms);
            t += ms;
          },
          read: async () => {
            const s = statuses[Math.min(reads, statuses.length - 1)];
            reads++;
            return s;
          },
        },
      };
    }
    const st = (writerTxn: number, sequencerTxn: number, suspended = false): WalStatus => ({ writerTxn, sequencerTxn, suspended });

    it('returns at once when the writer has caught up with the sequencer', async () => {
      const s = script([st(5, 5)]);
      await waitForWalApply(s.opts);
      assert.equal(s.reads(), 1);
      assert.deepEqual(s.sleeps, []);
    });

    it('polls with a growing interval until writerTxn reaches the sequencerTxn seen first', async () => {
      // Later commits by others (sequencerTxn 9, 12) do not extend the wait beyond txn 6.
      const s = script([st(3, 6), st(4, 9), st(5, 12), st(6, 12)]);
      const final = await waitForWalApply({ ...s.opts, minPollMs: 2, maxPollMs: 5 });
      assert.deepEqual(final, st(6, 12));
      assert.equal(s.reads(), 4);
      assert.deepEqual(s.sleeps, [2, 4, 5]);
    });

    it('throws WalSuspendedError when the table is suspended before our transaction is applied', async () => {
      const s = script([st(3, 6), st(4, 6, true)]);
      await assert.rejects(waitForWalApply(s.opts), (err: unknown) => {
        assert.ok(err instanceof WalSuspendedError);
        assert.match(err.message, /pv is suspended .*RESUME WAL/);
        assert.deepEqual(err.status, st(4, 6, true));
        return true;
      });
    });

    it('still resolves when a suspension comes after our transaction was applied', async () => {
      const s = script([st(6, 6, true)]);
      assert.deepEqual(await waitForWalApply(s.opts), st(6, 6, true));
    });

    it('gives up with WalApplyTimeoutError after the timeout, without sleeping past it', async () => {
      const s = script([st(1, 2)]);
      await assert.rejects(waitForWalApply({ ...s.opts, timeoutMs: 50, minPollMs: 10, maxPollMs: 20 }), (err: unknown) => {
        assert.ok(err instanceof WalApplyTimeoutError);
        assert.equal(err.targetTxn, 2);
        assert.match(err.message, /did not apply transaction 2 of table pv within 50 ms/);
        return true;
      });
      assert.equal(s.sleeps.reduce((a, b) => a + b, 0), 50);
    });

    it('fails clearly when the table is not a WAL table', async () => {
      await assert.rejects(waitForWalApply(script([undefined]).opts), /not listed by wal_tables\(\)/);
      await assert.rejects(waitForWalApply(script([st(1, 2), undefined]).opts), /not listed by wal_tables\(\)/);
    });

    it('propagates query errors', async () => {
      const s = script([st(1, 1)]);
      await assert.rejects(
        waitForWalApply({
          ...s.opts,
          read: async () => {
            throw new Error('connection refused');
          },
        }),
        /connection refused/,
      );
    });
  });

  describe('bucket folding (the JS path)', () => {
    it('computes count, sum, min, max, first, last and the inner integral per hour', () => {
      const h = 1000 * BUCKET_MS;
      const row = (ms: number, value: number | null) => ({ ts_us: String(ms * 1000), value });
      const folded = foldNumericRows([
        row(h + 0, 2),
        row(h + 1_000, 4),
        row(h + 2_000, null), // no numeric value: skipped, as NaN is
        row(h + 2_500, NaN),
        row(h + 3_000, 1),
        row(h + BUCKET_MS + 500, 10), // next hour: the 1 stays in force across the boundary, but inner only
        row(h + 3 * BUCKET_MS, 7), // an empty hour in between is omitted
        row(h + 3 * BUCKET_MS + 10, 8),
      ]);
      assert.deepEqual(folded, [
        { start: h, count: 3, sum: 7, min: 1, max: 4, firstTs: h, firstValue: 2, lastTs: h + 3_000, lastValue: 1, innerIntegral: 2 * 1_000 + 4 * 2_000 },
        { start: h + BUCKET_MS, count: 1, sum: 10, min: 10, max: 10, firstTs: h + BUCKET_MS + 500, firstValue: 10, lastTs: h + BUCKET_MS + 500, lastValue: 10, innerIntegral: 0 },
        { start: h + 3 * BUCKET_MS, count: 2, sum: 15, min: 7, max: 8, firstTs: h + 3 * BUCKET_MS, firstValue: 7, lastTs: h + 3 * BUCKET_MS + 10, lastValue: 8, innerIntegral: 70 },
      ]);
    });

    it('returns nothing for no rows', () => {
      assert.deepEqual(foldNumericRows([]), []);
    });
  });

  it('refuses to open with a bad configuration before connecting', async () => {
    await assert.rejects(openQuestDbStore({ ilp: 'tcp::addr=h:9009', pg: 'postgres://127.0.0.1:1/qdb' }), /http or https/);
    await assert.rejects(openQuestDbStore({ ilp: 'http::addr=h:9000', pg: 'postgres://127.0.0.1:1/qdb', table: 'Bad-Name' }), /lower-case identifier/);
  });
});

/** Parses a bind parameter made by msParam/microsParam back into epoch micros. */
function paramMicros(p: unknown): bigint {
  const s = String(p);
  assert.match(s, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  return BigInt(Date.parse(`${s.slice(0, 23)}Z`)) * 1000n + BigInt(s.slice(23, 26));
}

interface FakeRow {
  series: number;
  us: bigint;
  value: number | null;
  text: string | null;
  annotation: string | null;
  deleted: boolean;
}

/**
 * An in-memory stand-in for QuestDB behind the two connections: ILP rows become a transaction on
 * flush, transactions are applied (made visible) only as wal_tables() is polled, reads interpret the
 * store's own statements. Enough to exercise the orchestration, not QuestDB's SQL.
 */
class FakeQuestDb {
  /** Keyed by series and timestamp: the dedup key. */
  rows = new Map<string, FakeRow>();
  pending: (() => void)[] = [];
  applied = 0;
  calls: { text: string; values: unknown[] | undefined }[] = [];
  flushes = 0;
  suspended = false;
  varcharSupported = true;
  windowFunctions = true;
  /** wal_tables() reads before each pending transaction is applied. */
  applyAfterReads = 2;
  private readsSinceApply = 0;
  private building: Partial<FakeRow> = {};
  private buffered: FakeRow[] = [];
  closed = { sender: false, pool: false };

  constructor(readonly table: string) {}

  private get sql() {
    return statements(this.table);
  }

  private live(series: number) {
    return [...this.rows.values()].filter((r) => r.series === series && !r.deleted).sort((a, b) => (a.us < b.us ? -1 : a.us > b.us ? 1 : 0));
  }

  private out(r: FakeRow) {
    return { ts_us: r.us.toString(), value: r.value, text: r.text, annotation: r.annotation };
  }

  readonly sender: IlpSender = {
    table: (name: string) => {
      assert.equal(name, this.table);
      this.building = { value: null, text: null, annotation: null, deleted: true };
    },
    intColumn: (name: string, v: number) => {
      assert.equal(name, 'series_id');
      this.building.series = v;
    },
    floatColumn: (name: string, v: number) => {
      assert.equal(name, 'value');
      this.building.value = v;
    },
    stringColumn: (name: string, v: string) => {
      assert.ok(name === 'text' || name === 'annotation');
      this.building[name] = v;
    },
    booleanColumn: (name: string, v: boolean) => {
      assert.equal(name, 'deleted');
      this.building.deleted = v;
    },
    at: async (ts: number, unit: 'ms') => {
      assert.equal(unit, 'ms');
      assert.ok(Number.isInteger(ts));
      this.buffered.push({ ...(this.building as FakeRow), us: BigInt(ts) * 1000n });
    },
    flush: async () => {
      const txn = this.buffered;
      this.buffered = [];
      this.flushes++;
      this.pending.push(() => {
        // DEDUP UPSERT KEYS(ts, series_id): the new row replaces the whole old one.
        for (const row of txn) this.rows.set(`${row.series}:${row.us}`, row);
      });
      return true;
    },
    reset: () => {
      this.buffered = [];
    },
    close: async () => {
      this.closed.sender = true;
    },
  };

  readonly conn: QuestDbConnections = {
    sender: this.sender,
    end: async () => {
      this.closed.pool = true;
    },
    query: async <T extends object>(text: string, values?: unknown[]): Promise<T[]> => {
      this.calls.push({ text, values });
      return this.answer(text, values ?? []) as T[];
    },
  };

  private answer(text: string, v: unknown[]): object[] {
    const sql = this.sql;
    if (text.startsWith('CREATE TABLE')) {
      if (!this.varcharSupported && text.includes('VARCHAR')) throw new Error('unsupported type: VARCHAR');
      return [];
    }
    if (text === sql.columns) {
      return [
        { column: 'series_id', type: 'INT', designated: false, upsertKey: true },
        { column: 'value', type: 'DOUBLE', designated: false, upsertKey: false },
        { column: 'text', type: this.varcharSupported ? 'VARCHAR' : 'STRING', designated: false, upsertKey: false },
        { column: 'annotation', type: this.varcharSupported ? 'VARCHAR' : 'STRING', designated: false, upsertKey: false },
        { column: 'deleted', type: 'BOOLEAN', designated: false, upsertKey: false },
        { column: 'ts', type: 'TIMESTAMP', designated: true, upsertKey: true },
      ];
    }
    if (text === sql.walStatus) {
      assert.deepEqual(v, [this.table]);
      if (this.pending.length && !this.suspended && ++this.readsSinceApply >= this.applyAfterReads) {
        this.readsSinceApply = 0;
        this.pending.shift()!();
        this.applied++;
      }
      return [{ name: this.table, suspended: this.suspended, writerTxn: String(this.applied), writerLagTxnCount: String(this.pending.length), sequencerTxn: String(this.applied + this.pending.length) }];
    }
    const series = v[0] as number;
    const inRange = (r: FakeRow, lo: bigint, hi: bigint) => r.us >= lo && r.us < hi;
    switch (text) {
      case sql.latest:
        return this.live(series).reverse().slice(0, v[1] as number).map((r) => this.out(r));
      case sql.rangeFirst:
      case sql.rangeNext: {
        const lo = paramMicros(v[1]);
        const hi = paramMicros(v[2]);
        return this.live(series)
          .filter((r) => (text === sql.rangeFirst ? r.us >= lo : r.us > lo) && r.us < hi)
          .slice(0, v[3] as number)
          .map((r) => this.out(r));
      }
      case sql.valueAt: {
        const hi = paramMicros(v[1]);
        const before = this.live(series).filter((r) => r.us < hi);
        return before.length ? [this.out(before[before.length - 1]!)] : [];
      }
      case sql.numericRows:
        return this.live(series)
          .filter((r) => inRange(r, paramMicros(v[1]), paramMicros(v[2])) && r.value !== null)
          .map((r) => ({ ts_us: r.us.toString(), value: r.value }));
      case sql.buckets: {
        if (!this.windowFunctions) throw new Error('unknown function name: lead');
        const rows = this.live(series).filter((r) => r.value !== null && inRange(r, paramMicros(v[1]), paramMicros(v[2])));
        return foldNumericRows(rows.map((r) => ({ ts_us: r.us, value: r.value }))).map((b) => ({
          bucket: String(b.start * 1000),
          n: String(b.count),
          s: b.sum,
          mn: b.min,
          mx: b.max,
          first_us: String(b.firstTs * 1000),
          last_us: String(b.lastTs * 1000),
          first_v: b.firstValue,
          last_v: b.lastValue,
          integral: b.innerIntegral,
        }));
      }
      case sql.countLive:
        return [{ n: String(this.live(series).filter((r) => inRange(r, paramMicros(v[1]), paramMicros(v[2]))).length) }];
      case sql.softDelete: {
        const lo = paramMicros(v[1]);
        const hi = paramMicros(v[2]);
        this.pending.push(() => {
          for (const r of this.rows.values()) if (r.series === series && inRange(r, lo, hi)) r.deleted = true;
        });
        return [];
      }
      case 'SELECT 1':
        return [{ '1': 1 }];
    }
    throw new Error(`unexpected SQL: ${text}`);
  }
}

describe('QuestDB store over fake connections', () => {
  const T0 = Date.UTC(2024, 0, 1);
  const open = async (configure?: (db: FakeQuestDb) => void) => {
    const db = new FakeQuestDb('pv');
    configure?.(db);
    const store = await initQuestDbStore(db.conn, { table: 'pv', applyTimeoutMs: 1_000, sleep: async () => undefined });
    return { db, store };
  };
  const all = async (store: QuestDbStore, series: number) => {
    const out = [];
    for await (const b of store.range(series, 0, MAX_TS_MS)) out.push(...b);
    return out;
  };

  it('creates the table, checks it and probes for window functions on open', async () => {
    const { db, store } = await open();
    assert.equal(store.engine, 'questdb');
    assert.equal(store.bucketsInSql, true);
    assert.deepEqual(
      db.calls.map((c) => c.text.split(' (')[0]!.split(' FROM')[0]),
      ['CREATE TABLE IF NOT EXISTS pv', 'SELECT *', 'WITH r AS'],
    );
  });

  it('falls back to STRING columns on a server without VARCHAR', async () => {
    const { db } = await open((d) => (d.varcharSupported = false));
    const creates = db.calls.filter((c) => c.text.startsWith('CREATE'));
    assert.equal(creates.length, 2);
    assert.match(creates[1]!.text, /text STRING/);
  });

  it('closes both connections when the table has another layout', async () => {
    const db = new FakeQuestDb('pv');
    const query = db.conn.query;
    db.conn.query = async <T extends object>(text: string, values?: unknown[]) =>
      text.startsWith('SELECT * FROM table_columns') ? ([{ column: 'ts', type: 'TIMESTAMP', designated: true, upsertKey: false }] as T[]) : query<T>(text, values);
    await assert.rejects(initQuestDbStore(db.conn, { table: 'pv' }), /exists with another layout: column series_id is missing/);
    assert.deepEqual(db.closed, { sender: true, pool: true });
  });

  it('resolves append only once wal_tables() shows the transaction applied, so the next read sees it', async () => {
    const { db, store } = await open((d) => (d.applyAfterReads = 3));
    await store.append(batchOf([{ series: 1, ts: T0, value: 1.5 }, { series: 1, ts: T0 + 1, text: 'on', annotation: 'a' }]));
    assert.equal(db.flushes, 1);
    assert.equal(db.pending.length, 0);
    assert.equal(db.calls.filter((c) => c.text.includes('wal_tables()')).length, 3);
    assert.deepEqual(await store.latest(1, 5), [
      { ts: T0 + 1, value: null, text: 'on', annotation: 'a' },
      { ts: T0, value: 1.5, text: null, annotation: null },
    ]);
  });

  it('fails append on a suspended table, and after the timeout', async () => {
    const { store } = await open((d) => (d.suspended = true));
    await assert.rejects(store.append(batchOf([{ series: 1, ts: T0, value: 1 }])), WalSuspendedError);
    const slow = new FakeQuestDb('pv');
    slow.applyAfterReads = Number.POSITIVE_INFINITY;
    let t = 0;
    const clocked = await initQuestDbStore(slow.conn, {
      table: 'pv',
      applyTimeoutMs: 20,
      now: () => t,
      sleep: async (ms) => {
        t += ms;
      },
    });
    await assert.rejects(clocked.append(batchOf([{ series: 1, ts: T0, value: 1 }])), WalApplyTimeoutError);
    assert.equal(t, 20);
  });

  it('upserts on (series, ts) and serialises concurrent appends through the one sender', async () => {
    const { db, store } = await open();
    await Promise.all([
      store.append(batchOf([{ series: 1, ts: T0, value: 1 }, { series: 1, ts: T0 + 1, value: 2 }])),
      store.append(batchOf([{ series: 1, ts: T0, value: 3 }, { series: 2, ts: T0, value: 4 }])),
    ]);
    assert.equal(db.flushes, 2);
    assert.deepEqual((await all(store, 1)).map((x) => [x.ts - T0, x.value]), [[0, 3], [1, 2]]);
    assert.deepEqual((await all(store, 2)).map((x) => x.value), [4]);
  });

  it('rejects a bad batch before sending and resets the sender after a failed flush', async () => {
    const { db, store } = await open();
    await assert.rejects(store.append(batchOf([{ series: 1, ts: -5, value: 1 }])), /before 1970/);
    assert.equal(db.flushes, 0);
    const flush = db.sender.flush;
    db.sender.flush = async () => {
      throw new Error('HTTP 400: cast error');
    };
    let resets = 0;
    const reset = db.sender.reset;
    db.sender.reset = () => {
      resets++;
      return reset();
    };
    await assert.rejects(store.append(batchOf([{ series: 1, ts: T0, value: 1 }])), /cast error/);
    assert.equal(resets, 1);
    db.sender.flush = flush;
    await store.append(batchOf([{ series: 1, ts: T0 + 1, value: 2 }]));
    assert.deepEqual((await all(store, 1)).map((x) => x.value), [2]);
  });

  it('pages range() by timestamp, with the first page inclusive and the limit honoured', async () => {
    const { db, store } = await open();
    const n = 23_456;
    await store.append(batchOf(Array.from({ length: n }, (_, i) => ({ series: 7, ts: T0 + i, value: i }))));
    const sizes: number[] = [];
    let count = 0;
    for await (const b of store.range(7, T0, T0 + n)) {
      sizes.push(b.length);
      for (const x of b) assert.equal(x.value, x.ts - T0);
      count += b.length;
    }
    assert.equal(count, n);
    assert.deepEqual(sizes, [10_000, 10_000, 3_456]);
    const rangeCalls = db.calls.filter((c) => c.text.includes('ORDER BY ts LIMIT'));
    assert.equal(rangeCalls[0]!.values![1], msParam(T0));
    assert.equal(rangeCalls[1]!.values![1], msParam(T0 + 9_999)); // keyset: ts > last seen
    let limited = 0;
    for await (const b of store.range(7, T0 + 10, T0 + n, 10_001)) limited += b.length;
    assert.equal(limited, 10_001);
    assert.deepEqual(await (async () => {
      const out = [];
      for await (const b of store.range(7, T0 + 5, T0 + 5)) out.push(b);
      return out;
    })(), []);
  });

  it('answers valueAt with the newest value at or before t', async () => {
    const { store } = await open();
    await store.append(batchOf([{ series: 1, ts: T0, value: 1 }, { series: 1, ts: T0 + 10, value: 2 }]));
    assert.equal((await store.valueAt(1, T0 + 9.9))?.value, 1);
    assert.equal((await store.valueAt(1, T0 + 10))?.value, 2);
    assert.equal(await store.valueAt(1, T0 - 1), undefined);
    assert.equal(await store.valueAt(1, -1), undefined);
  });

  it('soft-deletes: counts, waits for the update to apply, hides the rows, a rewrite brings one back', async () => {
    const { db, store } = await open();
    await store.append(batchOf([0, 1, 2, 3].flatMap((i) => [{ series: 1, ts: T0 + i, value: i }, { series: 2, ts: T0 + i, value: i }])));
    assert.equal(await store.delete(1, T0 + 1, T0 + 3), 2);
    assert.equal(db.pending.length, 0);
    assert.deepEqual((await all(store, 1)).map((x) => x.value), [0, 3]);
    assert.equal((await all(store, 2)).length, 4);
    assert.equal(await store.delete(1, T0 + 1, T0 + 3), 0);
    assert.equal(db.calls.filter((c) => c.text.startsWith('UPDATE')).length, 1);
    await store.append(batchOf([{ series: 1, ts: T0 + 2, value: 42 }]));
    assert.deepEqual((await all(store, 1)).map((x) => x.value), [0, 42, 3]);
    assert.equal((await store.latest(1, 1))[0]?.value, 3);
  });

  it('computes buckets in SQL when lead/lag exist, else from rows, with the same result', async () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({ series: 3, ts: T0 + i * 41_000, value: (i % 17) - 8 }));
    const sqlStore = await open();
    const jsStore = await open((d) => (d.windowFunctions = false));
    assert.equal(jsStore.store.bucketsInSql, false);
    for (const { store } of [sqlStore, jsStore]) await store.append(batchOf(rows));
    const from = T0 + 1;
    const to = T0 + 3 * BUCKET_MS + 1;
    const viaSql = await sqlStore.store.buckets(3, from, to);
    const viaJs = await jsStore.store.buckets(3, from, to);
    assert.deepEqual(viaSql, viaJs);
    assert.deepEqual(viaSql.map((b) => b.start), [T0 + BUCKET_MS, T0 + 2 * BUCKET_MS, T0 + 3 * BUCKET_MS]);
    const bucketCall = sqlStore.db.calls.filter((c) => c.text.startsWith('WITH r AS')).pop()!;
    assert.deepEqual(bucketCall.values, [3, msParam(T0 + BUCKET_MS), msParam(T0 + 4 * BUCKET_MS)]);
    assert.deepEqual(await sqlStore.store.buckets(3, T0 + 1, T0 + 2), []);
  });

  it('pings, closes once, and refuses use after close', async () => {
    const { db, store } = await open();
    await store.ping();
    await store.close();
    await store.close();
    assert.deepEqual(db.closed, { sender: true, pool: true });
    await assert.rejects(store.latest(1, 1), /closed/);
  });

  it('tells onAppended of each append once the WAL has applied it, and of no failed one', async () => {
    const db = new FakeQuestDb('pv');
    db.applyAfterReads = 3;
    const calls: { values: number; walReads: number; visible: number }[] = [];
    const walReads = () => db.calls.filter((c) => c.text.includes('wal_tables()')).length;
    const store = await initQuestDbStore(db.conn, {
      table: 'pv',
      applyTimeoutMs: 1_000,
      sleep: async () => undefined,
      onAppended: (values) => calls.push({ values, walReads: walReads(), visible: db.rows.size }),
    });
    await store.append(batchOf([{ series: 1, ts: T0, value: 1 }, { series: 1, ts: T0 + 1, text: 'on' }]));
    await store.append(batchOf([]));
    assert.deepEqual(calls, [{ values: 2, walReads: 3, visible: 2 }]);
    await assert.rejects(store.append(batchOf([{ series: 1, ts: -1, value: 1 }])), /before 1970/);
    db.suspended = true;
    await assert.rejects(store.append(batchOf([{ series: 1, ts: T0 + 2, value: 1 }])), WalSuspendedError);
    assert.equal(calls.length, 1);
  });
});

describe('QuestDB adapter (live server)', () => {
  const { ilp, pg: pgUrl } = questdbSettings;
  if (!ilp || !pgUrl) {
    console.log('  skipped: no QuestDB (set TEST_QUESTDB_ILP and TEST_QUESTDB_PG)');
    return;
  }

  let store: QuestDbStore;
  let table: string;
  beforeEach(async () => {
    table = newQuestDbTableName();
    store = await openQuestDbStore({ ilp, pg: pgUrl, table });
  });
  afterEach(async () => {
    try {
      await store.close();
    } finally {
      await dropQuestDbTable(pgUrl, table);
    }
  });

  const all = async (series: number, from = 0, to = MAX_TS_MS) => {
    const out = [];
    for await (const b of store.range(series, from, to)) out.push(...b);
    return out;
  };

  it('makes an append visible to the very next read', async () => {
    const t0 = Date.UTC(2024, 0, 1);
    await store.append(batchOf([{ series: 1, ts: t0, value: 1.25 }, { series: 1, ts: t0 + 1, text: 'x', annotation: 'a' }]));
    assert.deepEqual(await store.latest(1, 10), [
      { ts: t0 + 1, value: null, text: 'x', annotation: 'a' },
      { ts: t0, value: 1.25, text: null, annotation: null },
    ]);
  });

  it('upserts on (series, ts), also within one batch, and keeps other series apart', async () => {
    const t0 = Date.UTC(2024, 0, 1);
    await store.append(batchOf([{ series: 1, ts: t0, value: 1 }, { series: 2, ts: t0, value: 20 }, { series: 1, ts: t0, value: 2 }]));
    await store.append(batchOf([{ series: 1, ts: t0, value: 3 }]));
    assert.deepEqual((await all(1)).map((v) => v.value), [3]);
    assert.deepEqual((await all(2)).map((v) => v.value), [20]);
  });

  it('soft-deletes a range of one series, counts it, and a rewrite brings a value back', async () => {
    const t0 = Date.UTC(2024, 0, 1);
    await store.append(batchOf([0, 1, 2, 3].flatMap((i) => [{ series: 1, ts: t0 + i * 1000, value: i }, { series: 2, ts: t0 + i * 1000, value: i }])));
    assert.equal(await store.delete(1, t0 + 1000, t0 + 3000), 2);
    assert.equal(await store.delete(1, t0 + 1000, t0 + 3000), 0);
    assert.deepEqual((await all(1)).map((v) => v.value), [0, 3]);
    assert.equal((await all(2)).length, 4);
    assert.equal((await store.valueAt(1, t0 + 2500))?.value, 0);
    await store.append(batchOf([{ series: 1, ts: t0 + 2000, value: 42 }]));
    assert.deepEqual((await all(1)).map((v) => v.value), [0, 42, 3]);
  });

  it('pages range() by timestamp and honours the limit', async () => {
    const t0 = Date.UTC(2024, 0, 1);
    const n = 25_000;
    await store.append(batchOf(Array.from({ length: n }, (_, i) => ({ series: 5, ts: t0 + i, value: i }))));
    const batches: number[] = [];
    let count = 0;
    for await (const b of store.range(5, t0, t0 + n)) {
      batches.push(b.length);
      for (const v of b) assert.equal(v.value, v.ts - t0);
      count += b.length;
    }
    assert.equal(count, n);
    assert.ok(batches.length >= 3, `batches ${batches.join(',')}`);
    let limited = 0;
    for await (const b of store.range(5, t0, t0 + n, 12_345)) limited += b.length;
    assert.equal(limited, 12_345);
  });

  it('computes the same buckets in SQL as folding rows in JS', async () => {
    if (!store.bucketsInSql) console.log('    (server has no lead/lag: buckets() folds rows in JS, so this compares the JS path with itself)');
    const h = Date.UTC(2024, 0, 1);
    const rows = [];
    for (let i = 0; i < 500; i++) rows.push({ series: 3, ts: h + i * 37_321, value: Math.round(Math.sin(i) * 1000) / 8 });
    await store.append(batchOf(rows));
    const from = h + 1000;
    const to = h + 5 * BUCKET_MS;
    assert.deepEqual(await store.buckets(3, from, to), await store.bucketsFromRows(3, from, to));
  });
});
