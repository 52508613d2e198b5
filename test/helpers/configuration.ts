// The configuration export and import as the suites call them: each call checked for its success status.
import assert from 'node:assert/strict';
import type { ApiClient } from './client.js';

const CFG = '/rest/latest/configuration';

export type Item = Record<string, unknown>;
export type Doc = Record<string, Item[]>;

/** POSTs `body` to `path`, expecting 201. */
export async function created(client: ApiClient, path: string, body: Item): Promise<void> {
  const res = await client.post(path, body);
  assert.equal(res.status, 201, res.text);
}

/** GET /configuration/export with `query`, expecting 200. */
export async function exported(client: ApiClient, query = ''): Promise<Doc> {
  const res = await client.get<Doc>(`${CFG}/export${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** POST /configuration/import of `doc`, expecting 200 with its counts. */
export async function imported(client: ApiClient, doc: unknown): Promise<{ created: number; updated: number }> {
  const res = await client.post<{ created: number; updated: number }>(`${CFG}/import`, doc);
  assert.equal(res.status, 200, res.text);
  return res.body;
}
