// /point-values: latest, ranges and rollups (JSON or CSV, streamed), set, bulk ingest, delete.
import { Readable } from 'node:stream';
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { parseJson } from '../core/json.js';
import { MiB, readJson, readJsonText } from '../http/body.js';
import { readBulkColumns } from '../core/bulk-values.js';
import { DomainError } from '../core/errors.js';
import type { AppContext, AppState } from '../http/state.js';
import { parseInstant } from '../core/time.js';
import { isTimeZone } from '../core/validation.js';
import { apiStatistic, apiValue } from '../services/point-value-types.js';
import { MAX_LATEST_LIMIT, type PointValueService } from '../services/point-values.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { PERIOD_TYPES, periodBounds, type PeriodType } from '../store/values/periods.js';
import { NUMERIC_ONLY, ROLLUPS, statisticOf, type Rollup, type RollupResult } from '../store/values/rollup.js';
import type { StoredValue } from '../store/values/types.js';

const BULK_LIMIT = 16 * MiB;
const DAY_MS = 86_400_000;

interface ReadQuery {
  from: number;
  to: number;
  limit?: number;
  rollup?: Rollup;
  periodType?: PeriodType;
  periods: number;
  zone: string;
  truncate: boolean;
}

const READ_PARAMS = new Set(['from', 'to', 'limit', 'rollup', 'timePeriodType', 'timePeriods', 'timezone', 'truncate']);

function badParam(name: string, message: string): DomainError {
  return DomainError.badRequest(`Invalid query parameter ${name}: ${message}`);
}

function single(ctx: AppContext, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw badParam(name, 'given more than once');
  return v;
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
  const limitText = single(ctx, 'limit');
  if (limitText !== undefined) limit = positiveInteger('limit', limitText, Number.MAX_SAFE_INTEGER);

  const now = Date.now();
  const instant = (name: string, fallback: number) => {
    const text = single(ctx, name);
    if (text === undefined || text === '') return fallback;
    const ms = parseInstant(text);
    if (ms === undefined) throw badParam(name, 'must be an ISO 8601 date with offset (2024-01-01T00:00:00.000Z) or epoch milliseconds');
    return ms;
  };
  const to = instant('to', now);
  const from = instant('from', to - DAY_MS);
  if (from > to) throw badParam('from', 'must not be after to');

  const rollupText = pathRollup ?? single(ctx, 'rollup');
  if (rollupText !== undefined && !(ROLLUPS as readonly string[]).includes(rollupText)) throw badParam('rollup', `must be one of ${ROLLUPS.join(', ')}`);
  const typeText = single(ctx, 'timePeriodType');
  if (typeText !== undefined && !(PERIOD_TYPES as readonly string[]).includes(typeText)) throw badParam('timePeriodType', `must be one of ${PERIOD_TYPES.join(', ')}`);
  const periodsText = single(ctx, 'timePeriods');
  const zone = single(ctx, 'timezone') ?? 'UTC';
  if (zone === '' || !isTimeZone(zone)) throw badParam('timezone', 'must be an IANA time zone such as Europe/Berlin');
  const truncateText = single(ctx, 'truncate');
  if (truncateText !== undefined && truncateText !== 'true' && truncateText !== 'false') throw badParam('truncate', 'must be true or false');
  return {
    from,
    to,
    limit,
    rollup: rollupText as Rollup | undefined,
    periodType: typeText as PeriodType | undefined,
    periods: periodsText === undefined ? 1 : positiveInteger('timePeriods', periodsText, 1_000_000),
    zone,
    truncate: truncateText === 'true',
  };
}

function wantsCsv(ctx: AppContext): boolean {
  return ctx.accepts('application/json', 'text/csv') === 'text/csv';
}

function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function rawJson(point: DataPointRecord, v: StoredValue): string {
  const value = JSON.stringify(apiValue(point.dataType, v));
  return v.annotation === null ? `{"timestamp":${v.ts},"value":${value}}` : `{"timestamp":${v.ts},"value":${value},"annotation":${JSON.stringify(v.annotation)}}`;
}

/** Raw values of one point as JSON array text chunks or CSV rows. */
async function* rawChunks(values: PointValueService, point: DataPointRecord, q: ReadQuery, csv: boolean): AsyncGenerator<string> {
  if (csv) yield 'timestamp,value,annotation\r\n';
  else yield '[';
  let first = true;
  for await (const batch of values.range(point, q.from, q.to, q.limit)) {
    let text = '';
    for (const v of batch) {
      if (csv) text += `${v.ts},${csvField(apiValue(point.dataType, v))},${csvField(v.annotation)}\r\n`;
      else text += (first ? '' : ',') + rawJson(point, v);
      first = false;
    }
    yield text;
  }
  if (!csv) yield ']';
}

const ALL_FIELDS = ['average', 'arithmeticMean', 'minimum', 'maximum', 'sum', 'first', 'last', 'start', 'count', 'delta', 'integral'] as const;

/** Periods written per chunk of a streamed rollup. */
const PERIODS_PER_CHUNK = 2_000;

/**
 * Rolled-up values of one point, one element per period. The statistics are computed (and any
 * error raised) before the first byte; the text is then produced chunk by chunk.
 */
async function rollupChunks(values: PointValueService, point: DataPointRecord, q: ReadQuery, rollup: Rollup, csv: boolean): Promise<Iterable<string>> {
  const numeric = point.dataType === 'NUMERIC';
  if (!numeric && NUMERIC_ONLY.has(rollup)) {
    throw badParam('rollup', `${rollup} needs a NUMERIC point; ${point.dataType} points allow NONE, FIRST, LAST, START, COUNT, ALL`);
  }
  // An empty range has no periods (only from after to is an error, checked in readQuery).
  if (q.from === q.to) return [csv ? '' : '[]'];
  let bounds: Float64Array;
  try {
    bounds = periodBounds({ from: q.from, to: q.to, type: q.periodType, count: q.periods, zone: q.zone, truncate: q.truncate });
  } catch (err) {
    if (err instanceof RangeError) throw badParam(q.periodType ? 'timePeriodType' : 'from', err.message);
    throw err;
  }
  const result = await values.rollup(point, bounds);
  return rollupText(point, result, bounds, rollup, csv);
}

function* rollupText(point: DataPointRecord, result: RollupResult, bounds: Float64Array, rollup: Rollup, csv: boolean): Generator<string> {
  const numeric = point.dataType === 'NUMERIC';
  const n = bounds.length - 1;
  let text = csv ? (rollup === 'ALL' ? `timestamp,${ALL_FIELDS.join(',')}\r\n` : 'timestamp,value\r\n') : '[';
  for (let i = 0; i < n; i++) {
    const stat = statisticOf(result, i, rollup, numeric);
    const ts = bounds[i]!;
    const sep = csv || i === 0 ? '' : ',';
    if (rollup === 'ALL') {
      const all = shapeAll(point.dataType, stat as Record<string, number | string | null> | null);
      text += csv ? `${ts},${ALL_FIELDS.map((f) => csvField(all?.[f])).join(',')}\r\n` : `${sep}{"timestamp":${ts},"value":${JSON.stringify(all)}}`;
    } else {
      // COUNT is a number whatever the data type (a BINARY count is not a state).
      const value = rollup === 'COUNT' ? stat : apiStatistic(point.dataType, stat as number | string | null);
      text += csv ? `${ts},${csvField(value)}\r\n` : `${sep}{"timestamp":${ts},"value":${JSON.stringify(value)}}`;
    }
    if ((i + 1) % PERIODS_PER_CHUNK === 0) {
      yield text;
      text = '';
    }
  }
  yield csv ? text : `${text}]`;
}

function shapeAll(dataType: string, all: Record<string, number | string | null> | null): Record<string, unknown> | null {
  if (!all) return null;
  const shaped: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(all)) shaped[k] = k === 'count' ? v : apiStatistic(dataType, v);
  return shaped;
}

/** The effective rollup: POINT_DEFAULT takes the point's, NONE means raw values. */
function effectiveRollup(point: DataPointRecord, q: ReadQuery): Rollup | undefined {
  const r = q.rollup === 'POINT_DEFAULT' ? (point.rollup as Rollup) : q.rollup;
  return r === undefined || r === 'NONE' ? undefined : r;
}

async function valuesOf(values: PointValueService, point: DataPointRecord, q: ReadQuery, csv: boolean): Promise<AsyncIterable<string> | Iterable<string>> {
  const rollup = effectiveRollup(point, q);
  return rollup ? rollupChunks(values, point, q, rollup, csv) : rawChunks(values, point, q, csv);
}

function send(ctx: AppContext, csv: boolean, chunks: AsyncIterable<string> | Iterable<string>): void {
  ctx.type = csv ? 'text/csv; charset=utf-8' : 'application/json';
  ctx.body = Array.isArray(chunks) ? chunks.join('') : Readable.from(chunks);
}

export function pointValuesRouter(values: PointValueService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/point-values' });

  router.get('/latest/:xid', async (ctx) => {
    for (const key of Object.keys(ctx.query)) if (key !== 'limit') throw badParam(key, 'unknown parameter');
    const limitText = single(ctx, 'limit');
    const limit = limitText === undefined ? 1 : positiveInteger('limit', limitText, MAX_LATEST_LIMIT);
    const point = await values.readablePoint(caller(ctx).user, ctx.params.xid!);
    const newest = await values.latest(point, limit);
    const csv = wantsCsv(ctx);
    if (csv) send(ctx, true, ['timestamp,value,annotation\r\n', ...newest.map((v) => `${v.ts},${csvField(apiValue(point.dataType, v))},${csvField(v.annotation)}\r\n`)]);
    else send(ctx, false, ['[', newest.map((v) => rawJson(point, v)).join(','), ']']);
  });

  const readOne = async (ctx: AppContext, xid: string, pathRollup?: string) => {
    const q = readQuery(ctx, pathRollup);
    const point = await values.readablePoint(caller(ctx).user, xid);
    const csv = wantsCsv(ctx);
    send(ctx, csv, await valuesOf(values, point, q, csv));
  };
  router.get('/single/:xid', (ctx) => readOne(ctx, ctx.params.xid!));
  router.get('/time-period/:xid', (ctx) => readOne(ctx, ctx.params.xid!));
  router.get('/time-period/:xid/:rollup', (ctx) => readOne(ctx, ctx.params.xid!, ctx.params.rollup));

  const readMany = async (ctx: AppContext, xidList: string, pathRollup?: string) => {
    const q = readQuery(ctx, pathRollup);
    const user = caller(ctx).user;
    const xids = [...new Set(xidList.split(',').filter((x) => x !== ''))];
    if (xids.length === 0) throw badParam('xids', 'name at least one point');
    // Check every point first: an unknown or unreadable XID fails the whole request.
    const points: DataPointRecord[] = [];
    for (const xid of xids) points.push(await values.readablePoint(user, xid));
    // Rollups are computed (and parameter errors raised) for every point before the first byte.
    const bodies: (AsyncIterable<string> | Iterable<string>)[] = [];
    for (const point of points) bodies.push(await valuesOf(values, point, q, false));
    async function* chunks(): AsyncGenerator<string> {
      for (let i = 0; i < points.length; i++) {
        yield `${i === 0 ? '{' : ','}${JSON.stringify(points[i]!.xid)}:`;
        yield* bodies[i]!;
      }
      yield '}';
    }
    send(ctx, false, chunks());
  };
  router.get('/multiple-arrays/time-period/:xids', (ctx) => readMany(ctx, ctx.params.xids!));
  router.get('/multiple-arrays/time-period/:xids/:rollup', (ctx) => readMany(ctx, ctx.params.xids!, ctx.params.rollup));

  router.put('/:xid', async (ctx) => {
    ctx.body = await values.set(caller(ctx).user, ctx.params.xid!, await readJson(ctx));
  });

  router.post('/', async (ctx) => {
    const user = caller(ctx).user;
    const text = await readJsonText(ctx, { limit: BULK_LIMIT });
    // The usual body shape is read straight into columns; anything else takes the general path.
    const columns = text === undefined ? undefined : readBulkColumns(text);
    const fast = columns && columns.length > 0 ? await values.bulkColumns(user, columns) : undefined;
    ctx.body = { written: fast ?? (await values.bulk(user, text === undefined ? undefined : parseJson(text))) };
  });

  router.delete('/:xid', async (ctx) => {
    for (const key of Object.keys(ctx.query)) if (key !== 'from' && key !== 'to') throw badParam(key, 'unknown parameter');
    for (const name of ['from', 'to']) if (single(ctx, name) === undefined) throw badParam(name, 'is required to delete');
    const q = readQuery(ctx);
    ctx.body = { deleted: await values.delete(caller(ctx).user, ctx.params.xid!, q.from, q.to) };
  });

  return router;
}
