// Writes a list response `{"items": [...], "total": N}` as a stream, one batch at a time: the next
// batch is read only as the client takes the previous ones, and the event loop is shared between
// batches (a metadata store may answer without any I/O in between). The first batch is read before
// the answer starts (http/stream.ts), so a store that fails there still gets its error answer.
import type { Context } from 'koa';
import { TimeSlice } from '../core/time-slice.js';
import { sendChunks } from './stream.js';

export function sendList<R, V>(ctx: Context, total: number, batches: AsyncIterable<R[]>, view: (row: R) => V): Promise<void> {
  async function* chunks(): AsyncGenerator<string> {
    const slice = new TimeSlice();
    let text = '{"items":['; // goes out with the first batch, not before it
    let first = true;
    for await (const batch of batches) {
      for (const row of batch) {
        text += (first ? '' : ',') + JSON.stringify(view(row));
        first = false;
      }
      yield text;
      text = '';
      await slice.yieldIfExpired();
    }
    yield `${text}],"total":${total}}`;
  }
  return sendChunks(ctx, 'application/json', chunks());
}
