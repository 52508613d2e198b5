// A response body streamed from text chunks, with backpressure. The first chunk is computed before
// the answer starts, so a failure there is still an error response; a failure after the first byte
// cannot be one any more: Koa's pipeline then destroys the response (the client sees a truncated
// body, never a cut-off answer closed as if whole) and the app's error handler logs it
// (logLateFailure).
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { LateFailure } from './errors.js';

/**
 * Bytes buffered ahead of the socket besides the chunk being written: the next chunk is computed
 * only once the client has taken the previous one.
 */
const BUFFERED_BYTES = 64 * 1024;

export async function sendChunks(ctx: Context, type: string, chunks: AsyncGenerator<string>): Promise<void> {
  const first = await chunks.next();
  async function* body(): AsyncGenerator<string> {
    if (first.done) return;
    yield first.value;
    try {
      yield* chunks;
    } catch (err) {
      throw new LateFailure(err);
    }
  }
  const stream = Readable.from(body(), { objectMode: false, highWaterMark: BUFFERED_BYTES });
  // A client that goes away stops the work: the source learns it through return().
  stream.once('close', () => void chunks.return(undefined));
  ctx.type = type;
  ctx.body = stream;
}
