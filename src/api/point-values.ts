// /point-values: latest, ranges and rollups (JSON or CSV, streamed), set, bulk ingest, delete.
// Reads are bounded before any work (XIDs and rollup periods per request, config.pointValueReads)
// and answered a chunk at a time: a chunk of periods or a batch of values is computed, written
// and let through to the socket, and the event loop is shared in between.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { parseJson } from '../core/json.js';
import { assertBodyDepth, jsonText, MiB, readJson, readJsonBytes } from '../http/body.js';
import { sendChunks } from '../http/stream.js';
import { readBulkColumns } from '../core/bulk-values.js';
import { DomainError } from '../core/errors.js';
import { readAhead } from '../core/read-ahead.js';
import { TimeSlice } from '../core/time-slice.js';
import type { PointValueReadLimits } from '../config.js';
import type { AppContext, AppState } from '../http/state.js';
import { parseInstant } from '../core/time.js';
import { isTimeZone, type Validator } from '../core/validation.js';
import { apiValue } from '../values/ingest/types.js';
import { MAX_LATEST_LIMIT, type PointValueService } from '../services/point-values.js';
import { unreliableJsonMembers } from '../values/live/reliability.js';
import type { RetentionService } from '../services/retention.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { MAX_PERIODS, PERIOD_TYPES, type PeriodPlan, type PeriodType } from '../values/read/periods.js';
import type { RollupResult } from '../values/read/rollup-result.js';
import { ROLLUPS, StatisticsPresenter, type Rollup, type StatisticRollup } from '../values/read/statistics.js';
import type { StoredValue } from '../store/values/types.js';
import { csvCell, csvRow } from './csv.js';
import { mergedCsv, type ColumnRows, type CsvColumn } from './csv-columns.js';
import {
  CSV_TYPE,
  DAY_MS,
  effectiveRollup,
  JSON_TYPE,
  jsonValue,
  periodCells,
  periodsProblem,
  planOf,
  readablePoints,
  rollupProblem,
  xidCountProblem,
  type ReadQuery,
} from './point-value-reads.js';
import { mangoPointValueRoutes } from './point-values-mango.js';
import { answerFormat, isColumnar } from './answer-format.js';
import { concatenated, rawBatch, rawBatches, rollupBatches, SHARED_TABLE_PROBLEM, tableSchema } from './point-value-columns.js';
import type { ColumnBatch } from './column-table.js';
import { sendTable } from './table-answer.js';
import { singleQuery } from './query-params.js';
import { compileDateTimePattern, DateTimePatternError, type TimestampFormatter } from '../core/date-time-pattern.js';

const BULK_LIMIT = 16 * MiB;

const LATEST_PARAMS = new Set(['limit', 'format', 'dateTimeFormat', 'timezone', 'header']);
const READ_PARAMS = new Set(['from', 'to', 'limit', 'rollup', 'timePeriodType', 'timePeriods', 'timezone', 'truncate', 'format', 'dateTimeFormat', 'header']);

function badParam(name: string, message: string): DomainError {
  return DomainError.badRequest(`Invalid query parameter ${name}: ${message}`);
}


function positiveInteger(name: string, text: string, max: number): number {
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1 || Number(text) > max) throw badParam(name, `must be an integer between 1 and ${max}`);
  return Number(text);
}

/**
 * How a JSON or CSV answer writes what is not a value: timestamps as epoch ms (`time` absent) or as
 * text (`dateTimeFormat`: ISO or a pattern, in `timezone`), and CSV column headers by XID or by
 * `name (unit)` (`header=name`).
 */
interface TextForm {
  time?: TimestampFormatter;
  names: boolean;
}

type GetQuery = ReadQuery & TextForm;

/** `dateTimeFormat` and `header`, read beside the other read parameters. */
function textForm(ctx: AppContext, zone: string): TextForm {
  const pattern = singleQuery(ctx, 'dateTimeFormat');
  let time: TimestampFormatter | undefined;
  if (pattern !== undefined && pattern !== '') {
    try {
      time = compileDateTimePattern(pattern, zone);
    } catch (err) {
      if (err instanceof DateTimePatternError) throw badParam('dateTimeFormat', `must be ISO or a date-time pattern such as yyyy-MM-dd HH:mm:ss: ${err.message}`);
      throw err;
    }
  }
  const header = singleQuery(ctx, 'header');
  if (header !== undefined && header !== 'xid' && header !== 'name') throw badParam('header', 'must be xid or name');
  return { time, names: header === 'name' };
}

/** A timestamp as a JSON value: the number, or its text. */
function jsonTime(q: TextForm, ts: number): string {
  return q.time ? JSON.stringify(q.time(ts)) : String(ts);
}

/** A timestamp as a CSV cell. */
function csvTime(q: TextForm, ts: number): string {
  return q.time ? csvCell(q.time(ts)) : String(ts);
}

/** A point's column header for `header=name`: its name, and its unit in parentheses when it has one. */
function pointTitle(point: DataPointRecord): string {
  return point.unit ? `${point.name} (${point.unit})` : point.name;
}

/** `timezone`, UTC when not given; empty is not given: Mango clients send `timezone=` when they have none. */
function zoneOf(ctx: AppContext): string {
  const zone = singleQuery(ctx, 'timezone') || 'UTC';
  if (!isTimeZone(zone)) throw badParam('timezone', 'must be an IANA time zone such as Europe/Berlin');
  return zone;
}

/** Parses and checks the read parameters; `pathRollup` comes from /time-period/<xid>/<rollup>. */
function readQuery(ctx: AppContext, pathRollup?: string): GetQuery {
  let limit: number | undefined;
  for (const key of Object.keys(ctx.query)) {
    const fn = /^limit\((\d+)\)$/.exec(key);
    if (fn) limit = positiveInteger('limit', fn[1]!, Number.MAX_SAFE_INTEGER);
    else if (!READ_PARAMS.has(key)) throw badParam(key, 'unknown parameter');
  }
  const limitText = singleQuery(ctx, 'limit');
  if (limitText !== undefined) limit = positiveInteger('limit', limitText, Number.MAX_SAFE_INTEGER);

  const now = Date.now();
  const instant = (name: string, fallback: number) => {
    const text = singleQuery(ctx, name);
    if (text === undefined || text === '') return fallback;
    const ms = parseInstant(text);
    if (ms === undefined) throw badParam(name, 'must be an ISO 8601 date with offset (2024-01-01T00:00:00.000Z) or epoch milliseconds');
    return ms;
  };
  const to = instant('to', now);
  const from = instant('from', to - DAY_MS);
  if (from > to) throw badParam('from', 'must not be after to');

  const rollupText = pathRollup ?? singleQuery(ctx, 'rollup');
  if (rollupText !== undefined && !(ROLLUPS as readonly string[]).includes(rollupText)) throw badParam('rollup', `must be one of ${ROLLUPS.join(', ')}`);
  const typeText = singleQuery(ctx, 'timePeriodType');
  if (typeText !== undefined && !(PERIOD_TYPES as readonly string[]).includes(typeText)) throw badParam('timePeriodType', `must be one of ${PERIOD_TYPES.join(', ')}`);
  const periodsText = singleQuery(ctx, 'timePeriods');
  const zone = zoneOf(ctx);
  const truncateText = singleQuery(ctx, 'truncate');
  if (truncateText !== undefined && truncateText !== 'true' && truncateText !== 'false') throw badParam('truncate', 'must be true or false');
  const q: GetQuery = {
    ...textForm(ctx, zone),
    from,
    to,
    limit,
    rollup: rollupText as Rollup | undefined,
    periodType: typeText as PeriodType | undefined,
    periods: periodsText === undefined ? 1 : positiveInteger('timePeriods', periodsText, MAX_PERIODS),
    zone,
    truncate: truncateText === 'true',
    now,
  };
  // POINT_DEFAULT counts as a rollup here: the points are not looked up yet.
  if (q.rollup !== undefined && q.rollup !== 'NONE' && from < to) q.plan = periodPlan(q);
  return q;
}

function periodPlan(q: ReadQuery): PeriodPlan {
  try {
    return planOf(q);
  } catch (err) {
    if (err instanceof RangeError) throw badParam(q.periodType ? 'timePeriodType' : 'from', err.message);
    throw err;
  }
}

/** Refuses, before any work, a rollup whose periods over all the points pass the limit. */
function checkPeriods(q: ReadQuery, points: number, limits: PointValueReadLimits): void {
  const problem = periodsProblem(q, points, limits, 'timePeriodType, timePeriods');
  if (problem) throw DomainError.badRequest(problem);
}

/** The XIDs of /multiple-arrays/...: repeats removed, refused beyond the limit before any lookup. */
function xidsOf(xidList: string, limits: PointValueReadLimits): string[] {
  const xids = [...new Set(xidList.split(',').filter((x) => x !== ''))];
  const problem = xidCountProblem(xids.length, limits);
  if (problem) throw DomainError.badRequest(`Invalid path parameter xids: ${problem}`);
  return xids;
}

/** `extra`: further members, each with a leading comma. */
function rawJson(point: DataPointRecord, v: StoredValue, form: TextForm, extra = ''): string {
  const value = jsonValue(apiValue(point.dataType, v));
  const ts = jsonTime(form, v.ts);
  return v.annotation === null
    ? `{"timestamp":${ts},"value":${value}${extra}}`
    : `{"timestamp":${ts},"value":${value},"annotation":${JSON.stringify(v.annotation)}${extra}}`;
}


function rawCsv(point: DataPointRecord, v: StoredValue, form: TextForm): string {
  return `${csvTime(form, v.ts)},${csvCell(apiValue(point.dataType, v))},${csvCell(v.annotation)}\r\n`;
}

/** The header of one point's raw values as CSV: its value column is `value`, or the point's title. */
function rawCsvHeader(point: DataPointRecord, form: TextForm): string {
  return csvRow(['timestamp', form.names ? pointTitle(point) : 'value', 'annotation']);
}

/**
 * Raw values of one point as JSON array text or CSV rows, a store batch at a time: the opening
 * goes out with the first batch, so reading that batch comes before the answer starts.
 */
async function* rawText(values: PointValueService, point: DataPointRecord, q: GetQuery, csv: boolean, slice: TimeSlice): AsyncGenerator<string> {
  let text = csv ? rawCsvHeader(point, q) : '[';
  let first = true;
  for await (const batch of readAhead(values.range(point, q.from, q.to, q.limit))) {
    for (const v of batch) {
      if (csv) text += rawCsv(point, v, q);
      else text += (first ? '' : ',') + rawJson(point, v, q);
      first = false;
    }
    yield text;
    text = '';
    await slice.yieldIfExpired();
  }
  if (!csv) yield `${text}]`;
  else if (text !== '') yield text;
}

/** Periods written between looks at the time slice (ALL writes some 250 bytes a period). */
const ENCODE_PERIODS = 1_000;

/**
 * Rolled-up values of one point, one element per period, a chunk of periods at a time: each chunk
 * is computed (PointValueService.rollup) and written as the presenter gives it, sharing the event
 * loop while it is written, and handed on before the next is computed.
 */
async function* rollupText(
  values: PointValueService,
  point: DataPointRecord,
  q: GetQuery,
  rollup: StatisticRollup,
  csv: boolean,
  slice: TimeSlice,
): AsyncGenerator<string> {
  const presenter = new StatisticsPresenter(rollup, point.dataType);
  const title = q.names ? pointTitle(point) : undefined;
  const columns = presenter.all ? presenter.columns.map((c) => (title ? `${title}.${c}` : c)) : [title ?? 'value'];
  let text = csv ? csvRow(['timestamp', ...columns]) : '[';
  const write = csv ? csvPeriods : jsonPeriods;
  let written = false;
  // An empty range has no periods (only from after to is an error, checked in readQuery).
  if (q.plan) {
    for await (const result of values.rollup(point, q.plan, q.now, slice)) {
      for (let i = 0; i < result.length; i += ENCODE_PERIODS) {
        text += write(presenter, result, i, Math.min(result.length, i + ENCODE_PERIODS), written, q);
        written = true;
        if (slice.expired) {
          yield text;
          text = '';
          await slice.yield();
        }
      }
      if (text !== '') yield text;
      text = '';
    }
  }
  if (!csv) yield `${text}]`;
  else if (text !== '') yield text;
}

/** JSON elements of periods [from, to) of one computed chunk; `after`: an element is written before them. */
function jsonPeriods(presenter: StatisticsPresenter, result: RollupResult, from: number, to: number, after: boolean, form: TextForm): string {
  let text = '';
  for (let i = from; i < to; i++) {
    text += `${!after && i === from ? '' : ','}{"timestamp":${jsonTime(form, result.start(i))},"value":${periodJson(presenter, result, i)}}`;
  }
  return text;
}

/** One period's value as JSON: the rollup's statistic, or ALL's as an object. */
function periodJson(presenter: StatisticsPresenter, result: RollupResult, i: number): string {
  if (!presenter.all) return jsonValue(presenter.value(result, i, presenter.columns[0]!));
  const members = presenter.members;
  let text = '{';
  for (let m = 0; m < members.length; m++) text += `${m === 0 ? '' : ','}"${members[m]!}":${jsonValue(presenter.value(result, i, members[m]!))}`;
  return `${text}}`;
}

/** CSV rows of periods [from, to) of one computed chunk. */
function csvPeriods(presenter: StatisticsPresenter, result: RollupResult, from: number, to: number, _after: boolean, form: TextForm): string {
  let text = '';
  for (let i = from; i < to; i++) text += `${csvTime(form, result.start(i))},${periodCells(presenter, result, i)}\r\n`;
  return text;
}

/** One point's column(s) of a multiple-arrays CSV table: raw values, or one row per period. */
function csvColumn(values: PointValueService, point: DataPointRecord, q: GetQuery, slice: TimeSlice): CsvColumn {
  const rollup = effectiveRollup(point, q.rollup);
  const presenter = rollup && new StatisticsPresenter(rollup, point.dataType);
  async function* rows(): AsyncGenerator<ColumnRows> {
    if (!presenter) {
      for await (const batch of readAhead(values.range(point, q.from, q.to, q.limit))) {
        yield { ts: batch.map((v) => v.ts), cells: batch.map((v) => csvCell(apiValue(point.dataType, v))) };
      }
      return;
    }
    if (!q.plan) return;
    for await (const result of values.rollup(point, q.plan, q.now, slice)) {
      const chunk: ColumnRows = { ts: new Array<number>(result.length), cells: new Array<string>(result.length) };
      for (let i = 0; i < result.length; i++) {
        chunk.ts[i] = result.start(i);
        chunk.cells[i] = periodCells(presenter, result, i);
      }
      yield chunk;
    }
  }
  const columns = presenter?.all ? presenter.columns : undefined;
  const title = q.names ? pointTitle(point) : point.xid;
  return {
    header: columns ? columns.map((f) => csvCell(`${title}.${f}`)).join(',') : csvCell(title),
    empty: columns ? ','.repeat(columns.length - 1) : '',
    rows: rows(),
  };
}

/** Refuses a rollup the point's data type cannot have (before any value is read). */
function checkRollupAllowed(point: DataPointRecord, q: ReadQuery): void {
  const problem = rollupProblem(point, q.rollup);
  if (problem) throw badParam('rollup', problem);
}

/** One point's values as text: rolled up or raw. Lazy: nothing is read before the first next(). */
function pointText(values: PointValueService, point: DataPointRecord, q: GetQuery, csv: boolean, slice: TimeSlice): AsyncGenerator<string> {
  const rollup = effectiveRollup(point, q.rollup);
  return rollup ? rollupText(values, point, q, rollup, csv, slice) : rawText(values, point, q, csv, slice);
}

/** One point's values as batches of columns (`xid`: its index in the long form's dictionary): rolled up or raw. */
function pointBatches(values: PointValueService, point: DataPointRecord, q: ReadQuery, xid: number | undefined, slice: TimeSlice): AsyncGenerator<ColumnBatch> {
  const rollup = effectiveRollup(point, q.rollup);
  return rollup ? rollupBatches(values, point, q, rollup, xid, slice) : rawBatches(values, point, q, xid, slice);
}

async function* oneBatch(batch: ColumnBatch): AsyncGenerator<ColumnBatch> {
  yield batch;
}

/** `{"<xid>": [...], ...}`: each point's text in turn, its key going out with its first chunk. */
async function* manyText(values: PointValueService, points: readonly DataPointRecord[], q: GetQuery, slice: TimeSlice): AsyncGenerator<string> {
  for (let i = 0; i < points.length; i++) {
    let key = `${i === 0 ? '{' : ','}${JSON.stringify(points[i]!.xid)}:`;
    for await (const text of pointText(values, points[i]!, q, false, slice)) {
      yield key + text;
      key = '';
    }
  }
  yield '}';
}

export function pointValuesRouter(values: PointValueService, retention: RetentionService, limits: PointValueReadLimits, validator: Validator): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/point-values' });

  const latest = async (ctx: AppContext, xid: string) => {
    for (const key of Object.keys(ctx.query)) if (!LATEST_PARAMS.has(key)) throw badParam(key, 'unknown parameter');
    const limitText = singleQuery(ctx, 'limit');
    const limit = limitText === undefined ? 1 : positiveInteger('limit', limitText, MAX_LATEST_LIMIT);
    const form = textForm(ctx, zoneOf(ctx));
    const format = answerFormat(ctx);
    const point = await values.readablePoint(caller(ctx).user, xid);
    const newest = await values.latest(point, limit);
    if (isColumnar(format)) {
      await sendTable(ctx, format, tableSchema([{ point, rollup: undefined }], false)!, oneBatch(rawBatch(point, newest, undefined)));
    } else if (format === 'csv') {
      ctx.type = CSV_TYPE;
      ctx.body = rawCsvHeader(point, form) + newest.map((v) => rawCsv(point, v, form)).join('');
    } else {
      ctx.type = JSON_TYPE;
      // The newest value is the point's current one: it says whether that is still what the device holds.
      const current = `,${unreliableJsonMembers(values.reliability.get(point.id))}`;
      ctx.body = `[${newest.map((v, i) => rawJson(point, v, form, i === 0 ? current : '')).join(',')}]`;
    }
  };
  router.get('/latest/:xid', (ctx) => latest(ctx, ctx.params.xid!));

  const readOne = async (ctx: AppContext, xid: string, pathRollup?: string) => {
    const q = readQuery(ctx, pathRollup);
    checkPeriods(q, 1, limits);
    const format = answerFormat(ctx);
    const point = await values.readablePoint(caller(ctx).user, xid);
    checkRollupAllowed(point, q);
    if (isColumnar(format)) {
      const rollup = effectiveRollup(point, q.rollup);
      await sendTable(ctx, format, tableSchema([{ point, rollup }], false)!, pointBatches(values, point, q, undefined, new TimeSlice()));
      return;
    }
    const csv = format === 'csv';
    await sendChunks(ctx, csv ? CSV_TYPE : JSON_TYPE, pointText(values, point, q, csv, new TimeSlice()));
  };
  router.get('/single/:xid', (ctx) => readOne(ctx, ctx.params.xid!));
  router.get('/time-period/:xid', (ctx) => readOne(ctx, ctx.params.xid!));
  router.get('/time-period/:xid/:rollup', (ctx) => readOne(ctx, ctx.params.xid!, ctx.params.rollup));

  const readMany = async (ctx: AppContext, xidList: string, pathRollup?: string) => {
    const q = readQuery(ctx, pathRollup);
    const xids = xidsOf(xidList, limits);
    checkPeriods(q, xids.length, limits);
    const format = answerFormat(ctx);
    // Every point is checked before anything is read: an unknown or unreadable XID, or a rollup a
    // point cannot have, fails the whole request.
    const points = await readablePoints(values, caller(ctx).user, xids);
    for (const point of points) checkRollupAllowed(point, q);
    const slice = new TimeSlice();
    if (isColumnar(format)) {
      const schema = tableSchema(points.map((point) => ({ point, rollup: effectiveRollup(point, q.rollup) })), true);
      if (!schema) throw DomainError.badRequest(SHARED_TABLE_PROBLEM);
      await sendTable(ctx, format, schema, concatenated(points.map((point, i) => () => pointBatches(values, point, q, i, slice))));
    } else if (format === 'csv') {
      const columns = points.map((p) => csvColumn(values, p, q, slice));
      await sendChunks(ctx, CSV_TYPE, mergedCsv(columns, () => slice.yieldIfExpired(), (ts) => csvTime(q, ts)));
    } else {
      await sendChunks(ctx, JSON_TYPE, manyText(values, points, q, slice));
    }
  };
  router.get('/multiple-arrays/time-period/:xids', (ctx) => readMany(ctx, ctx.params.xids!));
  router.get('/multiple-arrays/time-period/:xids/:rollup', (ctx) => readMany(ctx, ctx.params.xids!, ctx.params.rollup));
  // Mango's older form of latest, which node-mango-client's DataPoint.getValue(s) calls; after the
  // routes above, so /single/latest stays point "latest"'s values.
  router.get('/:xid/latest', (ctx) => latest(ctx, ctx.params.xid!));
  mangoPointValueRoutes(router, values, limits, validator);

  router.put('/:xid', async (ctx) => {
    ctx.body = await values.set(caller(ctx).user, ctx.params.xid!, await readJson(ctx));
  });

  router.post('/purge', async (ctx) => {
    ctx.body = await retention.purgeRequest(caller(ctx).user, await readJson(ctx));
  });

  router.post('/', async (ctx) => {
    const user = caller(ctx).user;
    const options = { limit: BULK_LIMIT, depthLater: true };
    const bytes = await readJsonBytes(ctx, options);
    // The usual body shape is read straight from its bytes into columns (2 levels deep, so its
    // depth needs no scan; no escapes, so no text the stores cannot hold: an XID with U+0000 names
    // no point); anything else takes the general path, which checks the text first.
    const columns = bytes === undefined ? undefined : await readBulkColumns(bytes);
    const fast = columns && columns.length > 0 ? await values.bulkColumns(user, columns) : undefined;
    if (fast !== undefined) {
      ctx.body = { written: fast };
      return;
    }
    const text = bytes === undefined ? undefined : jsonText(ctx, bytes, options);
    if (text !== undefined) assertBodyDepth(ctx, text);
    ctx.body = { written: await values.bulk(user, text === undefined ? undefined : parseJson(text)) };
  });

  router.delete('/:xid', async (ctx) => {
    // timezone: node-mango-client's purge sends it; from and to carry their offsets, so it only has to be a zone.
    for (const key of Object.keys(ctx.query)) if (!['from', 'to', 'timezone'].includes(key)) throw badParam(key, 'unknown parameter');
    for (const name of ['from', 'to']) if (singleQuery(ctx, name) === undefined) throw badParam(name, 'is required to delete');
    const q = readQuery(ctx);
    ctx.body = { deleted: await values.delete(caller(ctx).user, ctx.params.xid!, q.from, q.to) };
  });

  return router;
}
