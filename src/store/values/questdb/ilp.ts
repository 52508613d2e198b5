// Writing rows over ILP (InfluxDB line protocol, @questdb/nodejs-client over HTTP): what the store
// needs of the Sender, the batch check done before anything is sent, the rows themselves, and the
// Sender's log routed to the store's logger.
import type { Logger } from 'pino';
import type { ValueBatch } from '../types.js';
import { MAX_TS_MS } from './time.js';

/** What writeRows needs of a Sender (or a SenderBuffer, in tests). */
export interface IlpRowSink {
  table(name: string): unknown;
  intColumn(name: string, value: number): unknown;
  floatColumn(name: string, value: number): unknown;
  stringColumn(name: string, value: string): unknown;
  booleanColumn(name: string, value: boolean): unknown;
  at(timestamp: number, unit: 'ms'): void | Promise<void>;
}

/** What the store needs of the ILP Sender. */
export interface IlpSender extends IlpRowSink {
  flush(): Promise<unknown>;
  reset(): unknown;
  close(): Promise<void>;
}

/**
 * Rejects a batch, before anything of it is sent, when a row cannot be stored as given: timestamps
 * must be whole ms between 1970 (QuestDB's designated timestamp cannot be earlier) and 9999, values
 * finite or NaN (NaN = no numeric value). The same RangeErrors as the DuckDB engine.
 */
export function validateBatch(batch: ValueBatch): void {
  const { length } = batch;
  if (batch.series.length < length || batch.ts.length < length || batch.value.length < length) {
    throw new RangeError('ValueBatch columns are shorter than its length');
  }
  for (let i = 0; i < length; i++) {
    const ts = batch.ts[i]!;
    if (!Number.isInteger(ts)) throw new RangeError(`row ${i}: timestamp ${ts} is not a whole number of ms`);
    if (ts < 0) throw new RangeError(`row ${i}: timestamp ${ts} is before 1970, which QuestDB cannot store`);
    if (ts > MAX_TS_MS) throw new RangeError(`row ${i}: timestamp ${ts} is after year 9999`);
    const v = batch.value[i]!;
    if (v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY) throw new RangeError(`row ${i}: value ${v} is not finite`);
  }
}

/**
 * Writes rows [start, end) of the batch; returns an estimate of the bytes written. Numeric rows put
 * `value`, ALPHANUMERIC rows (value NaN) `text`; a column left out is NULL. `deleted=false` is written
 * on every row so that rewriting a soft-deleted (series, ts) brings it back.
 */
export async function writeRows(sink: IlpRowSink, table: string, batch: ValueBatch, start: number, end: number): Promise<number> {
  let bytes = 0;
  for (let i = start; i < end; i++) {
    sink.table(table);
    sink.intColumn('series_id', batch.series[i]!);
    const v = batch.value[i]!;
    if (!Number.isNaN(v)) sink.floatColumn('value', v);
    const text = batch.text?.[i];
    if (text !== null && text !== undefined) {
      sink.stringColumn('text', text);
      bytes += text.length * 3;
    }
    const annotation = batch.annotation?.[i];
    if (annotation !== null && annotation !== undefined) {
      sink.stringColumn('annotation', annotation);
      bytes += annotation.length * 3;
    }
    sink.booleanColumn('deleted', false);
    await sink.at(batch.ts[i]!, 'ms');
    bytes += 64 + table.length;
  }
  return bytes;
}

export type SenderLogLevel = 'error' | 'warn' | 'info' | 'debug';

/** The Sender's `log` option: its messages at their own level on `log`. */
export function senderLog(log: Logger): (level: SenderLogLevel, message: string | Error) => void {
  return (level, message) => {
    if (message instanceof Error) log[level]({ err: message }, `ilp: ${message.message}`);
    else log[level](`ilp: ${message}`);
  };
}
