// Writing rows through DuckDB's DataChunk appender (src/store/values/duckdb/chunks.ts), on a real
// in-memory DuckDB: every row arrives, and filling chunks shares the event loop.
import assert from 'node:assert/strict';
import { DuckDBDataChunk, DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { TimeSlice } from '../src/core/time-slice.js';
import { appendColumns, appendRawRows, CHUNK_ROWS, createNumericChunk } from '../src/store/values/duckdb/chunks.js';
import { sortRows } from '../src/store/values/sort.js';
import { KEY_TYPES, SCHEMA } from '../src/store/values/duckdb/sql.js';
import type { ValueBatch } from '../src/store/values/types.js';
import { turnCounter } from './helpers/wait.js';

/** A slice that is always expired: it yields at every chance it is given. */
const alwaysYield = () => new TimeSlice(0);

describe('DuckDB chunk appends', () => {
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
    conn = await instance.connect();
    for (const sql of SCHEMA) await conn.run(sql);
    await conn.run('CREATE TABLE keys (series_id INTEGER, ts BIGINT)');
  });
  after(() => {
    conn.closeSync();
    instance.closeSync();
  });

  it('appendRawRows writes every row of a batch of several chunks, yielding between chunks', async () => {
    const n = 5 * CHUNK_ROWS + 17;
    const batch: ValueBatch = {
      length: n,
      series: new Int32Array(n).fill(3),
      ts: Float64Array.from({ length: n }, (_, i) => 1_700_000_000_000 + i * 1000),
      value: Float64Array.from({ length: n }, (_, i) => i / 4),
      text: null,
      annotation: null,
    };
    const appender = await conn.createAppender('point_values');
    const counter = turnCounter();
    await appendRawRows(appender, createNumericChunk(), batch, sortRows(batch), alwaysYield());
    const turns = counter.stop();
    // Six chunks: a yield before each lets at least five other turns in.
    assert.ok(turns >= 5, `${turns} other turns while six chunks were written`);
    const rows = (await conn.runAndReadAll('SELECT count(*)::INTEGER, sum(value), min(ts)::DOUBLE, max(ts)::DOUBLE FROM point_values WHERE series_id = 3')).getRows();
    assert.deepEqual(rows, [[n, ((n - 1) * n) / 8, 1_700_000_000_000, 1_700_000_000_000 + (n - 1) * 1000]]);
  });

  it('appendColumns writes every row, yielding between chunks', async () => {
    const n = 3 * CHUNK_ROWS + 1;
    const appender = await conn.createAppender('keys');
    const counter = turnCounter();
    await appendColumns(appender, DuckDBDataChunk.create(KEY_TYPES, CHUNK_ROWS), KEY_TYPES, [
      Array.from({ length: n }, (_, i) => i % 7),
      Array.from({ length: n }, (_, i) => i * 1000),
    ], alwaysYield());
    appender.closeSync();
    const turns = counter.stop();
    assert.ok(turns >= 3, `${turns} other turns while four chunks were written`);
    const rows = (await conn.runAndReadAll('SELECT count(*)::INTEGER, max(ts)::DOUBLE FROM keys')).getRows();
    assert.deepEqual(rows, [[n, (n - 1) * 1000]]);
  });
});
