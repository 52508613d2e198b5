// Two instances writing one QuestDB table (a cluster behind a proxy: values of one point may come
// through either): each keeps the hourly tails of what it wrote, so they take turns under the writer
// lock (store/cluster/writer-lock.ts) and read the tails again after the other wrote. Needs a QuestDB
// (TEST_QUESTDB_ILP, TEST_QUESTDB_PG) and PostgreSQL (TEST_DATABASE_URL).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import pino from 'pino';
import { postgresWriterLock } from '../src/store/cluster/writer-lock.js';
import { BucketColumns, foldBuckets } from '../src/store/values/aggregates.js';
import { openQuestDbStore, type QuestDbStore } from '../src/store/values/questdb/index.js';
import { BUCKET_MS, type BucketAggregate, type ValueBatch } from '../src/store/values/types.js';
import { dropSchema, newSchemaName, testDatabaseUrl } from './helpers/engines.js';
import { mergeColumns } from './helpers/merge-columns.js';
import { dropQuestDbTable, newQuestDbTableName } from './helpers/value-engines.questdb.js';
import { questdbSettings } from './helpers/value-engines.js';

const H = BUCKET_MS;
const T0 = Date.UTC(2024, 3, 1);
const MIN = 60_000;
const MIGRATION = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'store', 'metadata', 'migrations', '007_value_store_writers.sql');

function minutes(series: number, from: number, n: number): ValueBatch {
  const batch: ValueBatch = { length: n, series: new Int32Array(n).fill(series), ts: new Float64Array(n), value: new Float64Array(n), text: null, annotation: null };
  // Eighths: every sum is exact, so folding in pieces equals folding at once bit for bit.
  for (let i = 0; i < n; i++) {
    batch.ts[i] = from + i * MIN;
    batch.value[i] = ((from / MIN + i) % 97) / 8;
  }
  return batch;
}

function foldAll(batches: readonly ValueBatch[]): BucketAggregate[] {
  const ts = Float64Array.from(batches.flatMap((b) => [...b.ts]));
  const value = Float64Array.from(batches.flatMap((b) => [...b.value]));
  const order = Uint32Array.from([...ts.keys()].sort((a, b) => ts[a]! - ts[b]!));
  const out = new BucketColumns();
  foldBuckets(out, 1, ts, value, order, 0, ts.length);
  return mergeColumns(out);
}

const { ilp, pg: pgUrl } = questdbSettings;
const runs = Boolean(ilp && pgUrl && testDatabaseUrl);

describe('QuestDB written by two instances', function () {
  this.timeout(120_000);
  if (!runs) {
    it('is skipped: needs TEST_QUESTDB_ILP, TEST_QUESTDB_PG and TEST_DATABASE_URL', function () {
      console.log('  (QuestDB two-writer cases skipped: no QuestDB or no PostgreSQL)');
      this.skip();
    });
    return;
  }
  const silent = pino({ level: 'silent' });
  const schema = newSchemaName();
  let table: string;
  const opened: QuestDbStore[] = [];
  const locks: { close(): Promise<void> }[] = [];

  before(async () => {
    const db = new pg.Client({ connectionString: testDatabaseUrl });
    await db.connect();
    await db.query(`create schema ${schema}; set search_path = ${schema}`);
    await db.query(await readFile(MIGRATION, 'utf8'));
    await db.end();
  });
  beforeEach(() => {
    table = newQuestDbTableName();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close().catch(() => undefined)));
    await Promise.all(locks.splice(0).map((l) => l.close()));
    await dropQuestDbTable(pgUrl!, table);
  });
  after(async () => {
    await dropSchema(schema);
  });

  async function open(instanceId?: string): Promise<QuestDbStore> {
    let writerTurn;
    if (instanceId) {
      const lock = postgresWriterLock({ url: testDatabaseUrl!, schema, installation: 'test', instanceId, name: `questdb:${table}`, log: silent });
      locks.push(lock);
      writerTurn = () => lock.acquire();
    }
    const store = await openQuestDbStore({ ilp: ilp!, pg: pgUrl!, table, log: silent, ...(writerTurn ? { writerTurn } : {}) });
    opened.push(store);
    return store;
  }

  /** Writes 3 hours in 20-minute parts, alternately through a and b; returns what an exact store holds. */
  async function alternate(a: QuestDbStore, b: QuestDbStore): Promise<BucketAggregate[]> {
    const parts: ValueBatch[] = [];
    for (let k = 0; k < 9; k++) {
      const part = minutes(1, T0 + k * 20 * MIN, 20);
      parts.push(part);
      await (k % 2 === 0 ? a : b).append(part);
    }
    return foldAll(parts);
  }

  /** The hourly rows as a fresh instance reads them, once both writers have closed (applied). */
  async function storedHours(): Promise<BucketAggregate[]> {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    const reader = await open();
    return reader.buckets(1, T0, T0 + 3 * H);
  }

  it('keeps the hourly rows exact when appends of one series alternate between the instances', async () => {
    const expected = await alternate(await open('a'), await open('b'));
    assert.deepEqual(await storedHours(), expected);
  });

  it('(control) without the writer lock the same appends leave wrong hourly rows', async () => {
    const expected = await alternate(await open(), await open());
    assert.notDeepEqual(await storedHours(), expected);
  });
});
