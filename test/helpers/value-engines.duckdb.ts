// Registers the embedded DuckDB value store with the contract suite: a fresh temporary directory per
// store, once bare and once behind the hourly-aggregate cache the service puts in front of it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withBucketCache } from '../../src/store/values/bucket-cache.js';
import { openDuckDbStore } from '../../src/store/values/duckdb/index.js';
import type { PointValueStore } from '../../src/store/values/types.js';
import { registerValueEngine } from './value-engines.js';

async function openDuckDb(wrap: (store: PointValueStore) => PointValueStore) {
  const dir = await mkdtemp(join(tmpdir(), 'dds-values-'));
  const store = wrap(await openDuckDbStore(dir, { readers: 2 }));
  return {
    store,
    async dispose() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

registerValueEngine({ name: 'duckdb', open: () => openDuckDb((s) => s) });
// A small bound, so the suites also run through eviction.
registerValueEngine({ name: 'duckdb+cache', open: () => openDuckDb((s) => withBucketCache(s, { maxBuckets: 2_000 })) });
