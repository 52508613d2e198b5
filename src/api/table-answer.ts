// Answers a table of typed columns as Arrow or Parquet, streamed: the first batch is read and
// encoded before the answer starts (sendChunks), so a failure there is still an error answer.
import type { Context } from 'koa';
import { sendChunks } from '../http/stream.js';
import { CONTENT_TYPES } from './answer-format.js';
import { arrowStream } from './arrow-stream.js';
import type { ColumnBatch, TableEncoder, TableSchema } from './column-table.js';
import { parquetFile } from './parquet-stream.js';

const ENCODERS: Record<'arrow' | 'parquet', TableEncoder> = { arrow: arrowStream, parquet: parquetFile };

export async function sendTable(ctx: Context, format: 'arrow' | 'parquet', schema: TableSchema, batches: AsyncIterable<ColumnBatch>): Promise<void> {
  await sendChunks(ctx, CONTENT_TYPES[format], ENCODERS[format](schema, batches));
}
