// List answers (src/http/list.ts) on a real Koa server: the whole envelope, streamed batch by
// batch, sharing the event loop even when the batches come without any I/O.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { sendList } from '../src/http/list.js';
import { turnCounter } from './helpers/wait.js';

describe('sendList', () => {
  let server: Server;
  let url: string;
  const BATCHES = 40;
  const PER_BATCH = 50;

  before(async () => {
    const app = new Koa();
    app.use(async (ctx) => {
      // Batches straight from memory: no I/O between them, as an in-process store may give them.
      async function* batches(): AsyncGenerator<number[]> {
        for (let b = 0; b < BATCHES; b++) yield Array.from({ length: PER_BATCH }, (_, i) => b * PER_BATCH + i);
      }
      // About 1 ms of work per batch.
      const view = (n: number) => {
        const until = performance.now() + 1 / PER_BATCH;
        while (performance.now() < until);
        return { n };
      };
      await sendList(ctx, BATCHES * PER_BATCH, batches(), view);
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers every item and the total in the envelope', async () => {
    const res = await fetch(url);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { items: { n: number }[]; total: number };
    assert.equal(body.total, BATCHES * PER_BATCH);
    assert.deepEqual(
      body.items.map((i) => i.n),
      Array.from({ length: BATCHES * PER_BATCH }, (_, i) => i),
    );
  });

  it('lets other work run between batches', async () => {
    const counter = turnCounter();
    const res = await fetch(url);
    await res.arrayBuffer();
    const turns = counter.stop();
    // 40 ms of batches in slices of 10 ms: a few turns at least; the socket writes alone may give some too.
    assert.ok(turns >= 3, `${turns} other turns`);
  });
});
