// Writes a list response `{"items": [...], "total": N}` as a stream, one batch at a time: the next
// batch is read only as the client takes the previous ones, and the event loop is shared between
// batches (a metadata store may answer without any I/O in between).
import type { Context } from 'koa';
import { TimeSlice } from '../core/time-slice.js';
import { streamBody } from './stream.js';

export function sendList<R, V>(ctx: Context, total: number, batches: AsyncIterable<R[]>, view: (row: R) => V): void {
  async function* chunks(): AsyncGenerator<string> {
    const slice = new TimeSlice();
    yield '{"items":[';
    let first = true;
    for await (const batch of batches) {
      let text = '';
      for (const row of batch) {
        text += (first ? '' : ',') + JSON.stringify(view(row));
        first = false;
      }
      yield text;
      await slice.yieldIfExpired();
    }
    yield `],"total":${total}}`;
  }
  ctx.type = 'application/json';
  ctx.body = streamBody(chunks());
}
