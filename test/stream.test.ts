// Streamed answers (src/http/stream.ts) on a real Koa server: the first chunk before the answer
// starts, a failure after it destroys the response and is logged (src/http/errors.ts
// answerLateFailures), backpressure, and a client that goes away stops the work.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import { DomainError } from '../src/core/errors.js';
import { answerLateFailures, errorMiddleware } from '../src/http/errors.js';
import { sendChunks } from '../src/http/stream.js';
import { waitFor } from './helpers/wait.js';

interface LogLine {
  level: number;
  msg: string;
  path?: string;
  err?: { message: string };
}

describe('sendChunks', () => {
  let server: Server;
  let url: string;
  const logged: LogLine[] = [];
  /** The chunks the route answers with; set per test. */
  let source: () => AsyncGenerator<string>;

  before(async () => {
    const log = pino({ level: 'debug' }, { write: (line: string) => void logged.push(JSON.parse(line) as LogLine) });
    const app = new Koa();
    answerLateFailures(app, log);
    app.use(errorMiddleware(log));
    app.use((ctx) => sendChunks(ctx, 'application/json', source()));
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (logged.length = 0));

  /** GET url; resolves with the response once its head arrives. */
  function get(): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => request(url, (res) => resolve(res)).on('error', reject).end());
  }

  /** Reads the whole body; `complete` is false when the connection broke before its end. */
  function readBody(res: IncomingMessage): Promise<{ text: string; complete: boolean }> {
    return new Promise((resolve) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ text, complete: res.complete }));
      res.on('error', () => resolve({ text, complete: false }));
      res.on('aborted', () => resolve({ text, complete: false }));
    });
  }

  it('answers every chunk in order', async () => {
    source = async function* () {
      yield '[1';
      yield ',2';
      yield ',3]';
    };
    const res = await get();
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /application\/json/);
    assert.deepEqual(await readBody(res), { text: '[1,2,3]', complete: true });
  });

  it('answers a failure in the first chunk as an error response: nothing was sent yet', async () => {
    source = async function* () {
      // Computing the first chunk fails.
      yield await Promise.reject<string>(new DomainError('unavailable', 'The value store is not answering'));
    };
    const res = await get();
    assert.equal(res.statusCode, 503);
    const body = JSON.parse((await readBody(res)).text) as { message: string };
    assert.equal(body.message, 'The value store is not answering');
  });

  it('destroys the response when a later chunk fails (a truncated body, never one closed as if whole) and logs why', async () => {
    source = async function* () {
      yield '{"a":[1,2';
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw new Error('store went away');
    };
    const res = await get();
    assert.equal(res.statusCode, 200);
    const { text, complete } = await readBody(res);
    assert.equal(complete, false, 'the body must not end normally');
    assert.equal(text, '{"a":[1,2');
    await waitFor('the failure is logged', () => logged.some((l) => l.level === 50 && l.err?.message === 'store went away'));
    const line = logged.find((l) => l.err?.message === 'store went away')!;
    assert.equal(line.path, '/stream');
  });

  it('computes the next chunk only as the client takes the previous ones (backpressure), and stops when the client goes away', async () => {
    let pulled = 0;
    let stopped = false;
    const chunk = 'x'.repeat(256 * 1024);
    source = async function* () {
      try {
        for (;;) {
          pulled++;
          yield chunk;
        }
      } finally {
        stopped = true;
      }
    };
    const res = await get();
    res.pause(); // a client that reads nothing
    await new Promise((resolve) => setTimeout(resolve, 300));
    const whilePaused = pulled;
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Socket buffers take some megabytes; without backpressure this would be thousands of chunks.
    assert.ok(whilePaused < 100, `${whilePaused} chunks of 256 KiB computed for a client that reads nothing`);
    assert.equal(pulled, whilePaused, 'nothing more is computed while the client reads nothing');
    res.destroy();
    await waitFor('the source is stopped once the client has gone', () => stopped);
    assert.ok(!logged.some((l) => l.level >= 50), `a client that goes away is not logged as a failure: ${JSON.stringify(logged)}`);
  });
});
