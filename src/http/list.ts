// Writes a list response `{"items": [...], "total": N}` as a stream, one batch at a time.
import { Readable } from 'node:stream';
import type { Context } from 'koa';

export function sendList<R, V>(ctx: Context, total: number, batches: AsyncIterable<R[]>, view: (row: R) => V): void {
  async function* chunks(): AsyncGenerator<string> {
    yield '{"items":[';
    let first = true;
    for await (const batch of batches) {
      let text = '';
      for (const row of batch) {
        text += (first ? '' : ',') + JSON.stringify(view(row));
        first = false;
      }
      yield text;
    }
    yield `],"total":${total}}`;
  }
  ctx.type = 'application/json';
  ctx.body = Readable.from(chunks());
}
