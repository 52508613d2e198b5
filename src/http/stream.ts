// A response body streamed from text (or byte) chunks, with backpressure. The first chunk is computed before
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

/**
 * A body stream of `chunks`, pulled only as the socket drains. A failure of `chunks` is reported
 * as a LateFailure (the answer has started by then); a client that goes away stops `chunks`.
 */
export function streamBody(chunks: AsyncGenerator<string | Uint8Array>): Readable {
  async function* body(): AsyncGenerator<string | Uint8Array> {
    try {
      yield* chunks;
    } catch (err) {
      throw new LateFailure(err);
    }
  }
  const stream = Readable.from(body(), { objectMode: false, highWaterMark: BUFFERED_BYTES });
  stream.once('close', () => void chunks.return(undefined));
  return stream;
}

/** Answers `chunks`, the first one computed before the answer starts. */
export async function sendChunks(ctx: Context, type: string, chunks: AsyncGenerator<string | Uint8Array>): Promise<void> {
  const first = await chunks.next();
  async function* rest(): AsyncGenerator<string | Uint8Array> {
    if (first.done) return;
    yield first.value;
    yield* chunks;
  }
  const stream = streamBody(rest());
  stream.once('close', () => void chunks.return(undefined));
  ctx.type = type;
  ctx.body = stream;
}
