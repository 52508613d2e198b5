// The chunked writer of configuration imports (services/import-chunks.ts) on a real PGlite: new items
// in multi-row inserts, changed ones updated, equal ones left alone, and a chunk whose insert fails
// done again one by one so that the failure lands on its item.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DomainError } from '../src/core/errors.js';
import { importInChunks, IMPORT_CHUNK, type ChunkedKind } from '../src/services/import-chunks.js';
import { DataPointsRepository, type DataPointRecord } from '../src/store/metadata/data-points.js';
import type { MetadataDb, Queryable, Row } from '../src/store/metadata/db.js';
import { migrate } from '../src/store/metadata/migrate.js';
import { openPglite } from '../src/store/metadata/pglite.js';
import { removeDir, tempDir } from './helpers/engines.js';

describe('importInChunks', function () {
  this.timeout(60_000);
  let dir: string;
  let db: MetadataDb;
  let sourceId: number;

  before(async () => {
    dir = await tempDir('dds-chunks-');
    db = await openPglite(join(dir, 'metadata'));
    await migrate(db);
    [{ id: sourceId }] = (await db.query<{ id: number }>(`insert into data_sources (xid, name, model_type) values ('S', 'S', 'VIRTUAL') returning id`)) as [{ id: number }];
  });
  after(async () => {
    await db.close();
    await removeDir(dir);
  });

  /** Points whose item is {xid, name}; a name starting with "bad" is refused as a service would. */
  function kind(repo: DataPointsRepository): ChunkedKind<DataPointRecord> {
    const record = (item: Record<string, unknown>): Partial<DataPointRecord> => {
      if (String(item.name).startsWith('bad')) throw DomainError.invalid('name', 'is bad');
      return { xid: item.xid as string, name: item.name as string, dataSourceId: sourceId, deviceName: 'd', dataType: 'NUMERIC', pointLocator: {} };
    };
    return {
      repo,
      prefetch: async () => undefined,
      newRecord: async (item) => record(item),
      changesTo: async (_existing, item) => record(item),
      same: (before, after) => before.name === after.name,
    };
  }

  async function run(items: Record<string, unknown>[]) {
    const problems: { index: number; message: string }[] = [];
    const saved: { xid: string; created: boolean }[] = [];
    const statements: string[] = [];
    await db.transaction(async (tx) => {
      const recording: Queryable = {
        query: <T extends Row>(text: string, values?: readonly unknown[]) => {
          statements.push(text);
          return tx.query<T>(text, values);
        },
        exec: (script) => tx.exec(script),
      };
      await importInChunks(recording, kind(new DataPointsRepository(recording)), items, {
        problem: (index, err) => problems.push({ index, message: err instanceof Error ? err.message : String(err) }),
        saved: (record, before) => saved.push({ xid: record.xid, created: before === undefined }),
      });
    });
    return { problems, saved, statements };
  }

  it('inserts new items a chunk per statement, checks each, and places a refusal on its item', async () => {
    const items = Array.from({ length: 3 * IMPORT_CHUNK }, (_, i) => ({ xid: `A${i}`, name: i === 7 ? 'bad one' : `A ${i}` }));
    const { problems, saved, statements } = await run(items);
    assert.deepEqual(problems.map((p) => p.index), [7]);
    assert.match(problems[0]!.message, /name is bad/);
    assert.equal(saved.length, items.length - 1);
    assert.ok(saved.every((s) => s.created));
    assert.equal(statements.filter((t) => t.startsWith('insert into data_points')).length, 3, 'one insert per chunk');
    const stored = await db.query<{ n: number }>(`select count(*)::int as n from data_points where xid like 'A%'`);
    assert.equal(stored[0]!.n, items.length - 1);
  });

  it('updates changed items and leaves equal ones alone', async () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ xid: `A${i + 10}`, name: i < 3 ? `renamed ${i}` : `A ${i + 10}` }));
    const { problems, saved, statements } = await run(items);
    assert.deepEqual(problems, []);
    assert.deepEqual(saved, [0, 1, 2].map((i) => ({ xid: `A${i + 10}`, created: false })));
    assert.equal(statements.filter((t) => t.startsWith('update data_points')).length, 3);
    const names = await db.query<{ name: string }>(`select name from data_points where xid in ('A10', 'A13') order by xid`);
    assert.deepEqual(names.map((r) => r.name), ['renamed 0', 'A 13']);
  });

  it('a chunk whose insert fails is written one by one: only the failing item has a problem', async () => {
    // Two new items with one XID (the document's check refuses this; here it makes the insert fail).
    const items = [...Array.from({ length: 20 }, (_, i) => ({ xid: `B${i}`, name: `B ${i}` })), { xid: 'B5', name: 'again' }];
    const { problems, saved } = await run(items);
    assert.deepEqual(problems.map((p) => p.index), [20]);
    assert.match(problems[0]!.message, /XID is already in use/);
    assert.equal(saved.length, 20);
    const stored = await db.query<{ n: number }>(`select count(*)::int as n from data_points where xid like 'B%'`);
    assert.equal(stored[0]!.n, 20);
  });
});
