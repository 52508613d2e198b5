// /point-values: latest, ranges and rollups (JSON or CSV, streamed), set, bulk ingest, delete.
// Reads are bounded before any work (XIDs and rollup periods per request, config.pointValueReads)
// and answered a chunk at a time: a chunk of periods or a batch of values is computed, written
// and let through to the socket, and the event loop is shared in between.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { parseJson } from '../core/json.js';
import { assertBodyDepth, MiB, readJson, readJsonText } from '../http/body.js';
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
  wantsCsv,
  xidCountProblem,
  type ReadQuery,
} from './point-value-reads.js';
import { mangoPointValueRoutes } from './point-values-mango.js';
import { singleQuery } from './query-params.js';

const BULK_LIMIT = 16 * MiB;

const READ_PARAMS = new Set(['from', 'to', 'limit', 'rollup', 'timePeriodType', 'timePeriods', 'timezone', 'truncate']);

function badParam(name: string, message: string): DomainError {
  return DomainError.badRequest(`Invalid query parameter ${name}: ${message}`);
}


function positiveInteger(name: string, text: string, max: number): number {
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1 || Number(text) > max) throw badParam(name, `must be an integer between 1 and ${max}`);
  return Number(text);
}

/** Parses and checks the read parameters; `pathRollup` comes from /time-period/<xid>/<rollup>. */
function readQuery(ctx: AppContext, pathRollup?: string): ReadQuery {
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
  // Empty is not given: Mango clients send `timezone=` when they have none.
  const zone = singleQuery(ctx, 'timezone') || 'UTC';
  if (!isTimeZone(zone)) throw badParam('timezone', 'must be an IANA time zone such as Europe/Berlin');
  const truncateText = singleQuery(ctx, 'truncate');
  if (truncateText !== undefined && truncateText !== 'true' && truncateText !== 'false') throw badParam('truncate', 'must be true or false');
  const q: ReadQuery = {
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
function rawJson(point: DataPointRecord, v: StoredValue, extra = ''): string {
  const value = jsonValue(apiValue(point.dataType, v));
  return v.annotation === null
    ? `{"timestamp":${v.ts},"value":${value}${extra}}`
    : `{"timestamp":${v.ts},"value":${value},"annotation":${JSON.stringify(v.annotation)}${extra}}`;
}


function rawCsv(point: DataPointRecord, v: StoredValue): string {
  return `${v.ts},${csvCell(apiValue(point.dataType, v))},${csvCell(v.annotation)}\r\n`;
}

const RAW_CSV_HEADER = 'timestamp,value,annotation\r\n';

/**
 * Raw values of one point as JSON array text or CSV rows, a store batch at a time: the opening
 * goes out with the first batch, so reading that batch comes before the answer starts.
 */
async function* rawText(values: PointValueService, point: DataPointRecord, q: ReadQuery, csv: boolean, slice: TimeSlice): AsyncGenerator<string> {
  let text = csv ? RAW_CSV_HEADER : '[';
  let first = true;
  for await (const batch of readAhead(values.range(point, q.from, q.to, q.limit))) {
    for (const v of batch) {
      if (csv) text += rawCsv(point, v);
      else text += (first ? '' : ',') + rawJson(point, v);
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
  q: ReadQuery,
  rollup: StatisticRollup,
  csv: boolean,
  slice: TimeSlice,
): AsyncGenerator<string> {
  const presenter = new StatisticsPresenter(rollup, point.dataType);
  let text = csv ? csvRow(['timestamp', ...(presenter.all ? presenter.columns : ['value'])]) : '[';
  const write = csv ? csvPeriods : jsonPeriods;
  let written = false;
  // An empty range has no periods (only from after to is an error, checked in readQuery).
  if (q.plan) {
    for await (const result of values.rollup(point, q.plan, q.now, slice)) {
      for (let i = 0; i < result.length; i += ENCODE_PERIODS) {
        text += write(presenter, result, i, Math.min(result.length, i + ENCODE_PERIODS), written);
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
function jsonPeriods(presenter: StatisticsPresenter, result: RollupResult, from: number, to: number, after: boolean): string {
  let text = '';
  for (let i = from; i < to; i++) {
    text += `${!after && i === from ? '' : ','}{"timestamp":${result.start(i)},"value":${periodJson(presenter, result, i)}}`;
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
function csvPeriods(presenter: StatisticsPresenter, result: RollupResult, from: number, to: number): string {
  let text = '';
  for (let i = from; i < to; i++) text += `${result.start(i)},${periodCells(presenter, result, i)}\r\n`;
  return text;
}

/** One point's column(s) of a multiple-arrays CSV table: raw values, or one row per period. */
function csvColumn(values: PointValueService, point: DataPointRecord, q: ReadQuery, slice: TimeSlice): CsvColumn {
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
  return {
    header: columns ? columns.map((f) => csvCell(`${point.xid}.${f}`)).join(',') : csvCell(point.xid),
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
function pointText(values: PointValueService, point: DataPointRecord, q: ReadQuery, csv: boolean, slice: TimeSlice): AsyncGenerator<string> {
  const rollup = effectiveRollup(point, q.rollup);
  return rollup ? rollupText(values, point, q, rollup, csv, slice) : rawText(values, point, q, csv, slice);
}

/** `{"<xid>": [...], ...}`: each point's text in turn, its key going out with its first chunk. */
async function* manyText(values: PointValueService, points: readonly DataPointRecord[], q: ReadQuery, slice: TimeSlice): AsyncGenerator<string> {
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
    for (const key of Object.keys(ctx.query)) if (key !== 'limit') throw badParam(key, 'unknown parameter');
    const limitText = singleQuery(ctx, 'limit');
    const limit = limitText === undefined ? 1 : positiveInteger('limit', limitText, MAX_LATEST_LIMIT);
    const point = await values.readablePoint(caller(ctx).user, xid);
    const newest = await values.latest(point, limit);
    if (wantsCsv(ctx)) {
      ctx.type = CSV_TYPE;
      ctx.body = RAW_CSV_HEADER + newest.map((v) => rawCsv(point, v)).join('');
    } else {
      ctx.type = JSON_TYPE;
      // The newest value is the point's current one: it says whether that is still what the device holds.
      const current = `,${unreliableJsonMembers(values.reliability.get(point.id))}`;
      ctx.body = `[${newest.map((v, i) => rawJson(point, v, i === 0 ? current : '')).join(',')}]`;
    }
  };
  router.get('/latest/:xid', (ctx) => latest(ctx, ctx.params.xid!));

  const readOne = async (ctx: AppContext, xid: string, pathRollup?: string) => {
    const q = readQuery(ctx, pathRollup);
    checkPeriods(q, 1, limits);
    const point = await values.readablePoint(caller(ctx).user, xid);
    checkRollupAllowed(point, q);
    const csv = wantsCsv(ctx);
    await sendChunks(ctx, csv ? CSV_TYPE : JSON_TYPE, pointText(values, point, q, csv, new TimeSlice()));
  };
  router.get('/single/:xid', (ctx) => readOne(ctx, ctx.params.xid!));
  router.get('/time-period/:xid', (ctx) => readOne(ctx, ctx.params.xid!));
  router.get('/time-period/:xid/:rollup', (ctx) => readOne(ctx, ctx.params.xid!, ctx.params.rollup));

  const readMany = async (ctx: AppContext, xidList: string, pathRollup?: string) => {
    const q = readQuery(ctx, pathRollup);
    const xids = xidsOf(xidList, limits);
    checkPeriods(q, xids.length, limits);
    // Every point is checked before anything is read: an unknown or unreadable XID, or a rollup a
    // point cannot have, fails the whole request.
    const points = await readablePoints(values, caller(ctx).user, xids);
    for (const point of points) checkRollupAllowed(point, q);
    const slice = new TimeSlice();
    if (wantsCsv(ctx)) {
      const columns = points.map((p) => csvColumn(values, p, q, slice));
      await sendChunks(ctx, CSV_TYPE, mergedCsv(columns, () => slice.yieldIfExpired()));
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
    const text = await readJsonText(ctx, { limit: BULK_LIMIT, depthLater: true });
    // The usual body shape is read straight into columns (2 levels deep, so its depth needs no
    // scan); anything else takes the general path.
    const columns = text === undefined ? undefined : await readBulkColumns(text);
    const fast = columns && columns.length > 0 ? await values.bulkColumns(user, columns) : undefined;
    if (fast !== undefined) {
      ctx.body = { written: fast };
      return;
    }
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
