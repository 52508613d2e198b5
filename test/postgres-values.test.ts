// The PostgreSQL value store beyond the shared contract (test/value-store.test.ts): month partitions
// far apart and at the ends of the instant range, two instances writing one series and hour at once,
// strings COPY must carry unchanged, a server that goes away, and the choice of engine by VALUE_STORE.
// Needs TEST_DATABASE_URL; the partition arithmetic is tested without it (test/postgres-partitions.test.ts).
import assert from 'node:assert/strict';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { DomainError } from '../src/core/errors.js';
import { openValueStore } from '../src/store/values/open.js';
import { monthOf, partitionName, type PostgresStore } from '../src/store/values/postgres/index.js';
import { BUCKET_MS, INSTANT_RANGE, type BucketAggregate, type StoredValue, type ValueBatch } from '../src/store/values/types.js';
import { dropSchema, newSchemaName, tempDir, removeDir, testDatabaseUrl } from './helpers/engines.js';
import { referenceBucket } from './helpers/reference-rollup.js';
import { Relay } from './helpers/relay.js';
import { openTestPostgresStore } from './helpers/value-engines.postgres.js';
import { freePort } from './helpers/wait.js';

const H = BUCKET_MS;

interface Row {
  s: number;
  ts: number;
  v?: number;
  text?: string | null;
  ann?: string | null;
}

function batchOf(rows: Row[]): ValueBatch {
  return {
    length: rows.length,
    series: Int32Array.from(rows.map((r) => r.s)),
    ts: Float64Array.from(rows.map((r) => r.ts)),
    value: Float64Array.from(rows.map((r) => r.v ?? NaN)),
    text: rows.map((r) => r.text ?? null),
    annotation: rows.map((r) => r.ann ?? null),
  };
}

async function readAll(it: AsyncIterable<StoredValue[]>): Promise<StoredValue[]> {
  const out: StoredValue[] = [];
  for await (const page of it) out.push(...page);
  return out;
}

describe('PostgreSQL value store', function () {
  this.timeout(60_000);
  if (!testDatabaseUrl) {
    it('skipped: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run the PostgreSQL value-store cases');
    return;
  }
  const url = testDatabaseUrl;
  let admin: pg.Client;

  before(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
  });

  async function partitionsIn(schema: string): Promise<string[]> {
    const { rows } = await admin.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace
       WHERE n.nspname = $1 AND p.relname = 'point_values' ORDER BY 1`,
      [schema],
    );
    return rows.map((r) => r.name);
  }

  it('makes the current and next months at open, and the months of far-apart data on demand', async () => {
    const { store, schema, dispose } = await openTestPostgresStore();
    try {
      const now = monthOf(Date.now());
      assert.deepEqual(await partitionsIn(schema), [partitionName('point_values', now), partitionName('point_values', now + 1)].sort());
      const rows = [
        { s: 1, ts: Date.UTC(1970, 0, 1), v: 1 },
        { s: 1, ts: Date.UTC(2024, 5, 30, 23, 59, 59, 999), v: 2 },
        { s: 1, ts: Date.UTC(9999, 11, 31, 23, 59, 59, 999), v: 3 },
        { s: 1, ts: -1, v: -1 },
        { s: 1, ts: -62_135_596_800_001, v: -2 }, // the last instant of 1 BC (year 0)
        { s: 1, ts: INSTANT_RANGE.min, v: -3, text: 'first instant' },
        { s: 1, ts: INSTANT_RANGE.max, v: 4, ann: 'last instant' },
      ];
      await store.append(batchOf(rows));
      const expected = rows.map((r) => ({ ts: r.ts, value: r.v, text: r.text ?? null, annotation: r.ann ?? null })).sort((a, b) => a.ts - b.ts);
      assert.deepEqual(await readAll(store.range(1, -Infinity, Infinity)), expected);
      assert.deepEqual(await store.latest(1, 1), [expected[expected.length - 1]]);
      assert.deepEqual(await store.valueAt(1, -1e16), undefined);
      assert.deepEqual(await store.valueAt(1, INSTANT_RANGE.min), expected[0]);
      const parts = await partitionsIn(schema);
      const made = ['point_values_p197001', 'point_values_p202406', 'point_values_p999912', 'point_values_p196912', 'point_values_p000012', 'point_values_n27182104', 'point_values_p27576009'];
      const expectedParts = new Set([...made, partitionName('point_values', now), partitionName('point_values', now + 1)]);
      assert.deepEqual(parts, [...expectedParts].sort());
      const buckets = await store.buckets(1, -Infinity, Infinity);
      assert.deepEqual(
        buckets.map((b) => [b.start, b.count, b.sum]),
        expected.map((e) => [Math.floor(e.ts / H) * H, 1, e.value]),
      );
      // A partition made by another instance (here: the catalog) is taken as it is.
      await admin.query(`CREATE TABLE ${schema}.point_values_p203001 PARTITION OF ${schema}.point_values FOR VALUES FROM (${Date.UTC(2030, 0)}) TO (${Date.UTC(2030, 1)})`);
      await store.append(batchOf([{ s: 2, ts: Date.UTC(2030, 0, 15), v: 7 }]));
      assert.deepEqual(await store.latest(2, 5), [{ ts: Date.UTC(2030, 0, 15), value: 7, text: null, annotation: null }]);
      // Deleting everything removes the aggregates too.
      assert.equal(await store.delete(1, -Infinity, Infinity), rows.length);
      assert.deepEqual(await store.buckets(1, -Infinity, Infinity), []);
      assert.deepEqual(await readAll(store.range(1, -Infinity, Infinity)), []);
    } finally {
      await dispose();
    }
  });

  it('keeps exact buckets when two instances append to the same series and hours at once', async () => {
    const first = await openTestPostgresStore();
    const second = await openTestPostgresStore({ schema: first.schema });
    try {
      const T = Date.UTC(2024, 2, 10, 12);
      const s = 42;
      const all = new Map<number, number>();
      // Each instance writes every other second of the same two hours, 120 values spread over both
      // hours per append: without the series lock a recompute would miss rows the other committed
      // meanwhile, and one instance's bucket row would overwrite the other's.
      const writer = async (store: PostgresStore, parity: number) => {
        for (let round = 0; round < 30; round++) {
          const rows: Row[] = [];
          for (let i = round; i < 3600; i += 30) rows.push({ s, ts: T + (2 * i + parity) * 1000, v: parity * 1000 + round + i / 10_000 });
          await store.append(batchOf(rows));
        }
      };
      await Promise.all([writer(first.store, 0), writer(second.store, 1)]);
      for (const v of await readAll(first.store.range(s, T - H, T + 3 * H))) all.set(v.ts, v.value!);
      assert.equal(all.size, 7200, 'every timestamp written once by one of them');
      const expected: BucketAggregate[] = [];
      for (const start of [T, T + H]) {
        const xs = [...all.entries()].filter(([ts]) => ts >= start && ts < start + H).sort((a, b) => a[0] - b[0]).map(([ts, v]) => ({ ts, v }));
        expected.push(referenceBucket(start, xs));
      }
      for (const store of [first.store, second.store]) {
        const got = await store.buckets(s, T - H, T + 3 * H);
        assert.equal(got.length, 2);
        got.forEach((b, i) => {
          const e = expected[i]!;
          assert.deepEqual({ ...b, sum: 0, innerIntegral: 0 }, { ...e, sum: 0, innerIntegral: 0 });
          assert.ok(Math.abs(b.sum - e.sum) <= 1e-9 * Math.abs(e.sum), `sum ${b.sum} != ${e.sum}`);
          assert.ok(Math.abs(b.innerIntegral - e.innerIntegral) <= 1e-9 * Math.abs(e.innerIntegral), `inner ${b.innerIntegral} != ${e.innerIntegral}`);
        });
      }
    } finally {
      await second.store.close();
      await first.dispose();
    }
  });

  it('round-trips strings that COPY text or CSV would need escaped, and tells NULL from empty', async () => {
    const { store, dispose } = await openTestPostgresStore();
    try {
      const nasty = [
        '',
        '\\',
        '\\N',
        'NULL',
        '\\.',
        'a\tb',
        'line\nbreak',
        'carriage\rreturn\r\n',
        '"quoted", with, commas',
        "it's",
        '\\x00\\000',
        '\u0001\u001f\u007f',
        'ünïcödé €, 日本語, 🌡️ 𝔘',
        '\uFEFFbom',
        'x'.repeat(100_000),
      ];
      const T = Date.UTC(2024, 0, 1);
      const rows: Row[] = nasty.map((text, i) => ({ s: 7, ts: T + i, text, ann: nasty[nasty.length - 1 - i]! }));
      rows.push({ s: 7, ts: T + 1000, text: null, ann: '' }, { s: 7, ts: T + 1001, v: 0.5, text: null, ann: null });
      await store.append(batchOf(rows));
      const back = await readAll(store.range(7, T, T + 2000));
      assert.deepEqual(
        back,
        rows.map((r) => ({ ts: r.ts, value: r.v ?? null, text: r.text ?? null, annotation: r.ann ?? null })),
      );
      assert.deepEqual(
        (await store.buckets(7, T, T + H)).map((b) => [b.count, b.sum]),
        [[1, 0.5]],
        'only the numeric row counts',
      );
    } finally {
      await dispose();
    }
  });

  it('answers 503 while its server is unreachable, and works again once it is back', async () => {
    const server = new URL(url);
    const relay = new Relay(await freePort(), { host: server.hostname, port: Number(server.port || 5432) });
    await relay.open();
    const viaRelay = new URL(url);
    viaRelay.host = `127.0.0.1:${relay.port}`;
    const schema = newSchemaName();
    const dataDir = await tempDir();
    const config = loadConfig({ VALUE_STORE: 'postgres', DATABASE_URL: viaRelay.toString(), DATABASE_SCHEMA: schema, DATA_DIR: dataDir });
    const store = await openValueStore(config);
    try {
      assert.equal(store.engine, 'postgres');
      const T = Date.UTC(2024, 0, 1);
      await store.append(batchOf([{ s: 1, ts: T, v: 1 }]));
      await relay.cut();
      for (const attempt of [() => store.latest(1, 1), () => store.append(batchOf([{ s: 1, ts: T + 1, v: 2 }])), () => store.ping()]) {
        await assert.rejects(attempt(), (err: unknown) => {
          assert.ok(err instanceof DomainError, String(err));
          assert.equal(err.kind, 'unavailable');
          assert.doesNotMatch(err.message, /select|insert|point_values/i);
          return true;
        });
      }
      await relay.open();
      await store.append(batchOf([{ s: 1, ts: T + 2, v: 3 }]));
      assert.deepEqual(
        (await store.latest(1, 5)).map((v) => v.value),
        [3, 1],
      );
      // The tables are in DATABASE_SCHEMA.
      const { rows } = await admin.query('SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2', [schema, 'point_values_hourly']);
      assert.equal(rows.length, 1);
    } finally {
      await store.close();
      await relay.cut();
      await dropSchema(schema);
      await removeDir(dataDir);
    }
  });
});
