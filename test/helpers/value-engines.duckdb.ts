// Registers the embedded DuckDB value store with the contract suite: a fresh temporary directory per store.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuckDbStore } from '../../src/store/values/duckdb.js';
import { registerValueEngine } from './value-engines.js';

registerValueEngine({
  name: 'duckdb',
  async open() {
    const dir = await mkdtemp(join(tmpdir(), 'dds-values-'));
    const store = await openDuckDbStore(dir, { readers: 2 });
    return {
      store,
      async dispose() {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
