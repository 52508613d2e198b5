// Mango 4/5's point-value queries by POST (what node-mango-client's pointValues.latest and
// forTimePeriod send): /multiple-arrays/latest, /single-array/latest, /multiple-arrays/time-period[/<rollup>]
// and /single-array/time-period[/<rollup>], with Mango's bodies and answers. The same reads as the
// GET forms (the facade's range, rollup and latest; the same bounds before any work), streamed a chunk
// at a time: several arrays point after point, a single array as the points' sorted streams merged by
// timestamp (timestamp-merge.ts), never loaded whole.
import type Router from '@koa/router';
import type { PointValueReadLimits } from '../config.js';
import { DomainError } from '../core/errors.js';
import { readAhead } from '../core/read-ahead.js';
import { TimeSlice } from '../core/time-slice.js';
import type { Validator } from '../core/validation.js';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import type { AppContext, AppState } from '../http/state.js';
import { sendChunks } from '../http/stream.js';
import type { PointValueService } from '../services/point-values.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { StoredValue } from '../store/values/types.js';
import { ROLLUPS, type Rollup } from '../values/read/statistics.js';
import { csvHeader, MangoValueEncoder, timeText } from './mango-value-encoder.js';
import { CSV_TYPE, effectiveRollup, JSON_TYPE, readablePoints, rollupProblem, type ReadQuery } from './point-value-reads.js';
import { answerFormat, isColumnar } from './answer-format.js';
import type { ColumnBatch } from './column-table.js';
import { concatenated, mergedByTimestamp, rawBatch, rawBatches, rollupBatches, SHARED_TABLE_PROBLEM, tableSchema } from './point-value-columns.js';
import { sendTable } from './table-answer.js';
import { mangoQuery, type MangoQuery, type MangoReadShape } from './point-values-mango-query.js';
import { mergeByTimestamp, type TimedCells } from './timestamp-merge.js';

/** Values or periods encoded between looks at the time slice. */
const ELEMENTS_PER_CHUNK = 1_000;

/** One point's values in [from, to), with Mango's bookends when asked: the value in force at from (unless one is there) and at to. */
async function* rawElements(values: PointValueService, point: DataPointRecord, q: ReadQuery, bookend: boolean, enc: MangoValueEncoder, slice: TimeSlice): AsyncGenerator<TimedCells> {
  let chunk: TimedCells = { ts: [], cells: [] };
  let last: StoredValue | undefined;
  if (bookend) {
    last = await values.valueAt(point, q.from);
    if (last?.ts !== q.from) {
      chunk.ts.push(q.from);
      chunk.cells.push(enc.raw(q.from, last, true));
    }
  }
  for await (const batch of readAhead(values.range(point, q.from, q.to, q.limit))) {
    for (const v of batch) {
      chunk.ts.push(v.ts);
      chunk.cells.push(enc.raw(v.ts, v, false));
    }
    last = batch[batch.length - 1] ?? last;
    yield chunk;
    chunk = { ts: [], cells: [] };
    await slice.yieldIfExpired();
  }
  if (bookend) {
    chunk.ts.push(q.to);
    chunk.cells.push(enc.raw(q.to, last, true));
  }
  if (chunk.ts.length > 0) yield chunk;
}

/** One point's periods (at most `limit` of them), a computed chunk of periods at a time. */
async function* rollupElements(values: PointValueService, point: DataPointRecord, q: ReadQuery, enc: MangoValueEncoder, slice: TimeSlice): AsyncGenerator<TimedCells> {
  if (!q.plan) return;
  let left = q.limit ?? Infinity;
  for await (const result of values.rollup(point, q.plan, q.now, slice)) {
    const n = Math.min(result.length, left);
    for (let first = 0; first < n; first += ELEMENTS_PER_CHUNK) {
      const end = Math.min(n, first + ELEMENTS_PER_CHUNK);
      const chunk: TimedCells = { ts: new Array<number>(end - first), cells: new Array<string>(end - first) };
      for (let i = first; i < end; i++) {
        chunk.ts[i - first] = result.start(i);
        chunk.cells[i - first] = enc.period(result, i);
      }
      yield chunk;
      await slice.yieldIfExpired();
    }
    left -= n;
    if (left <= 0) return;
  }
}

/** One point's newest values, newest first. */
async function* latestElements(values: PointValueService, point: DataPointRecord, limit: number, enc: MangoValueEncoder): AsyncGenerator<TimedCells> {
  const newest = await values.latest(point, limit);
  yield { ts: newest.map((v) => v.ts), cells: newest.map((v) => enc.raw(v.ts, v, false)) };
}

interface PointRead {
  point: DataPointRecord;
  enc: MangoValueEncoder;
  /** Lazy: nothing is read before the first next(). */
  elements: () => AsyncGenerator<TimedCells>;
}

/** `{"<xid>": [...], ...}`: each point's elements in turn, its key going out with its first chunk. */
async function* keyedArrays(reads: readonly PointRead[]): AsyncGenerator<string> {
  for (let p = 0; p < reads.length; p++) {
    let text = `${p === 0 ? '{' : ','}${JSON.stringify(reads[p]!.point.xid)}:[`;
    let first = true;
    for await (const chunk of reads[p]!.elements()) {
      for (const cell of chunk.cells) {
        text += first ? cell : `,${cell}`;
        first = false;
      }
      yield text;
      text = '';
    }
    yield `${text}]`;
  }
  yield '}';
}

/** Several arrays as CSV: one table, each point's rows in turn (Mango's XID field says whose a row is). */
async function* concatenatedCsv(reads: readonly PointRead[], q: MangoQuery): AsyncGenerator<string> {
  const columns = [...(q.fields.has('TIMESTAMP') ? ['timestamp'] : []), ...csvHeader(undefined, q.fields, reads[0]!.enc.all)];
  let text = `${columns.join(',')}\r\n`;
  for (const read of reads) {
    for await (const chunk of read.elements()) {
      for (const cell of chunk.cells) text += `${cell}\r\n`;
      yield text;
      text = '';
    }
  }
  if (text !== '') yield text;
}

/** A single array: one row per distinct timestamp, each point's value at it under its XID. */
function mergedRows(reads: readonly PointRead[], q: MangoQuery, csv: boolean, descending: boolean, slice: TimeSlice): AsyncGenerator<string> {
  const streams = reads.map((r) => r.elements());
  const time = (ts: number) => timeText(q.format, csv, ts);
  const options = { descending, limit: q.read.limit, afterChunk: () => slice.yieldIfExpired() };
  if (csv) {
    const stamped = q.fields.has('TIMESTAMP');
    const header = [...(stamped ? ['timestamp'] : []), ...reads.flatMap((r) => csvHeader(r.point, q.fields, r.enc.all))];
    const row = (ts: number, cells: readonly (string | undefined)[]) => {
      const line: string[] = stamped ? [time(ts)] : [];
      for (let i = 0; i < cells.length; i++) if (reads[i]!.enc.csvColumns > 0) line.push(cells[i] ?? reads[i]!.enc.emptyCsv);
      return `${line.join(',')}\r\n`;
    };
    return mergeByTimestamp(streams, row, { ...options, head: `${header.join(',')}\r\n` });
  }
  const keys = reads.map((r) => `,${JSON.stringify(r.point.xid)}:`);
  let first = true;
  const row = (ts: number, cells: readonly (string | undefined)[]) => {
    let text = `${first ? '' : ','}{"timestamp":${time(ts)}`;
    first = false;
    for (let i = 0; i < cells.length; i++) if (cells[i] !== undefined) text += keys[i]! + cells[i]!;
    return `${text}}`;
  };
  return closed(mergeByTimestamp(streams, row, { ...options, head: '[' }), ']');
}

/** `text`'s chunks, then `end` (the merge always yields its head, so the opening goes out first). */
async function* closed(text: AsyncGenerator<string>, end: string): AsyncGenerator<string> {
  yield* text;
  yield end;
}

function pathRollupOf(text: string | undefined): Rollup | undefined {
  if (text === undefined) return undefined;
  if (!(ROLLUPS as readonly string[]).includes(text)) throw DomainError.badRequest(`Invalid path parameter rollup: must be one of ${ROLLUPS.join(', ')}`);
  return text as Rollup;
}

/**
 * A Mango read as one Arrow or Parquet table in long form (`xid` first), whatever `fields` asks:
 * several arrays point after point, a single array merged by timestamp (newest first for latest).
 * Bookends are left out: they are a chart's convenience, not stored values.
 */
async function answerTable(ctx: AppContext, format: 'arrow' | 'parquet', values: PointValueService, points: readonly DataPointRecord[], q: MangoQuery, shape: MangoReadShape): Promise<void> {
  const reads = points.map((point) => ({ point, rollup: shape.latest ? undefined : effectiveRollup(point, q.read.rollup) }));
  const schema = tableSchema(reads, true);
  if (!schema) throw DomainError.invalid('rollup', SHARED_TABLE_PROBLEM, 'PointValueQuery');
  const slice = new TimeSlice();
  const streams = reads.map(({ point, rollup }, i) => (): AsyncGenerator<ColumnBatch> => {
    if (shape.latest) return latestBatch(values, point, q.read.limit ?? 1, i);
    return rollup ? rollupBatches(values, point, q.read, rollup, i, slice, q.read.limit) : rawBatches(values, point, q.read, i, slice);
  });
  const batches = shape.single
    ? mergedByTimestamp(schema, streams.map((s) => s()), 1, { descending: shape.latest, limit: q.read.limit, afterBatch: () => slice.yieldIfExpired() })
    : concatenated(streams);
  await sendTable(ctx, format, schema, batches);
}

async function* latestBatch(values: PointValueService, point: DataPointRecord, limit: number, xid: number): AsyncGenerator<ColumnBatch> {
  yield rawBatch(point, await values.latest(point, limit), xid);
}

/** Adds Mango's POST reads to the /point-values router. */
export function mangoPointValueRoutes(router: Router<AppState>, values: PointValueService, limits: PointValueReadLimits, validator: Validator): void {
  const answer = async (ctx: AppContext, shape: MangoReadShape, pathRollup?: string) => {
    const rollup = pathRollupOf(pathRollup);
    const format = answerFormat(ctx);
    const q = mangoQuery(validator, await readJson(ctx), shape, rollup, limits);
    const points = await readablePoints(values, caller(ctx).user, q.xids);
    for (const point of points) {
      const problem = rollupProblem(point, q.read.rollup);
      if (problem) throw DomainError.invalid('rollup', problem, 'PointValueQuery');
    }
    if (isColumnar(format)) {
      await answerTable(ctx, format, values, points, q, shape);
      return;
    }
    const csv = format === 'csv';
    const slice = new TimeSlice();
    const reads: PointRead[] = points.map((point) => {
      const statistic = effectiveRollup(point, q.read.rollup);
      const enc = new MangoValueEncoder(point, { fields: q.fields, format: q.format, csv, statisticTimes: shape.single, csvTimestampCell: !shape.single }, statistic);
      const elements = shape.latest
        ? () => latestElements(values, point, q.read.limit ?? 1, enc)
        : statistic
          ? () => rollupElements(values, point, q.read, enc, slice)
          : () => rawElements(values, point, q.read, q.bookend, enc, slice);
      return { point, enc, elements };
    });
    if (csv && !shape.single && new Set(reads.map((r) => r.enc.all)).size > 1) {
      throw DomainError.invalid('rollup', 'ALL beside other rollups (POINT_DEFAULT) cannot share one CSV table: ask for JSON or a single array', 'PointValueQuery');
    }
    const body = shape.single ? mergedRows(reads, q, csv, shape.latest, slice) : csv ? concatenatedCsv(reads, q) : keyedArrays(reads);
    await sendChunks(ctx, csv ? CSV_TYPE : JSON_TYPE, body);
  };
  router.post('/multiple-arrays/latest', (ctx) => answer(ctx, { latest: true, single: false }));
  router.post('/single-array/latest', (ctx) => answer(ctx, { latest: true, single: true }));
  router.post('/multiple-arrays/time-period', (ctx) => answer(ctx, { latest: false, single: false }));
  router.post('/multiple-arrays/time-period/:rollup', (ctx) => answer(ctx, { latest: false, single: false }, ctx.params.rollup));
  router.post('/single-array/time-period', (ctx) => answer(ctx, { latest: false, single: true }));
  router.post('/single-array/time-period/:rollup', (ctx) => answer(ctx, { latest: false, single: true }, ctx.params.rollup));
}
