// /grafana: the contract of Grafana's JSON datasource (simpod-json-datasource, its openapi.yaml).
// Metrics are the points the caller may read, a query's targets become rollups through the facade
// (the same read path, permissions and limits as /point-values), sized to maxDataPoints and aligned
// in the request's zone; tag keys and values are point tags (DataPointTagsService).
//
// Decisions where the contract leaves room (README "Grafana"):
// - /metrics lists at most METRICS_LIMIT points (device name, name, XID order): the contract has no
//   paging, and a longer list is no use in a drop-down; a target may name any readable XID.
// - A series is named "<device> - <name>" (the name alone without a device); values are numbers
//   (BINARY 0/1). An ALPHANUMERIC point's FIRST, LAST and START are text, answered in the contract's
//   table form (Time, then the text), since a time series' values are numbers.
// - Periods without a value (null) are left out; COUNT's 0 is a value.
import Router from '@koa/router';
import type { PointValueReadLimits } from '../config.js';
import { DomainError } from '../core/errors.js';
import { TimeSlice } from '../core/time-slice.js';
import type { Validator } from '../core/validation.js';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import type { AppState } from '../http/state.js';
import { sendChunks } from '../http/stream.js';
import type { DataPointService } from '../services/data-points.js';
import type { DataPointTagsService } from '../services/data-point-tags.js';
import type { Principal } from '../services/permissions.js';
import type { PointValueService } from '../services/point-values.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { alignedPlan, PERIOD_LADDER, periodCount, sizedStep, type PeriodStep } from '../values/read/aligned-periods.js';
import type { PeriodPlan } from '../values/read/periods.js';
import { allowsRollup, StatisticsPresenter, type StatisticRollup } from '../values/read/statistics.js';
import { defaultRollup, GRAFANA_ROLLUPS, grafanaQuery, pointTag, targetXids, type GrafanaQuery, type GrafanaTarget } from './grafana-query.js';
import { formatCount, JSON_TYPE, rollupProblem } from './point-value-reads.js';

/** Most points /metrics lists. */
export const METRICS_LIMIT = 10_000;

const invalid = (property: string, message: string) => DomainError.invalid(property, message, 'GrafanaQuery');

/** A series' name in Grafana. */
export function seriesName(point: DataPointRecord): string {
  return point.deviceName === '' ? point.name : `${point.deviceName} - ${point.name}`;
}

/** What a metric lets the query builder choose (options of rollup from /metric-payload-options). */
const METRIC_PAYLOADS = [
  { name: 'rollup', label: 'Rollup', type: 'select', placeholder: 'default: the point\'s rollup, else AVERAGE (NUMERIC) or LAST' },
  { name: 'timePeriod', label: 'Period', type: 'input', placeholder: 'default: sized to the panel, e.g. 15 MINUTES' },
];
const METRIC_PAYLOADS_JSON = JSON.stringify(METRIC_PAYLOADS);

/** One series to compute: a point of a target, its rollup and periods. */
interface Series {
  target: GrafanaTarget;
  point: DataPointRecord;
  rollup: StatisticRollup;
  step: PeriodStep;
  plan?: PeriodPlan;
}

/** Each target's points, looked up and checked (404, then 403), those the ad hoc filters leave out dropped. */
async function seriesOf(values: PointValueService, user: Principal, q: GrafanaQuery, limits: PointValueReadLimits): Promise<Omit<Series, 'step'>[]> {
  const found: Omit<Series, 'step'>[] = [];
  let named = 0;
  for (const target of q.targets) {
    // The target as sent first: an XID may hold characters Grafana's regex form escapes.
    const xids = (await values.point(target.target)) ? [target.target] : targetXids(target.target);
    for (const xid of xids) {
      // Counted before the lookup: the points the filters leave out cost a lookup too.
      if (++named > limits.maxXids) throw invalid('targets', `more than ${formatCount(limits.maxXids)} points named (POINT_VALUES_MAX_XIDS)`);
      const point = await values.readablePoint(user, xid);
      if (!q.filters.every((f) => f.matches(pointTag(point, f.key)))) continue;
      const problem = target.rollup && rollupProblem(point, target.rollup);
      if (problem) throw invalid(`targets[${target.index}].payload.rollup`, problem);
      const own = defaultRollup(point);
      found.push({ target, point, rollup: target.rollup ?? (allowsRollup(point.dataType, own) ? own : 'LAST') });
    }
  }
  return found;
}

/**
 * Every series' periods: the payload's, else the shortest ladder step giving at most maxDataPoints
 * (and no more than the series' share of ROLLUP_MAX_PERIODS); all of them together within the limit.
 */
function planned(found: Omit<Series, 'step'>[], q: GrafanaQuery, limits: PointValueReadLimits): Series[] {
  const share = Math.max(1, Math.floor(limits.maxRollupPeriods / Math.max(1, found.length)));
  const maxPeriods = Math.min(q.maxDataPoints, share);
  let total = 0;
  const series = found.map((s) => {
    const step = s.target.step ?? sizedStep(q.from, q.to, maxPeriods, q.zone);
    if (q.from < q.to) total += periodCount(q.from, q.to, step, q.zone);
    return { ...s, step };
  });
  if (total > limits.maxRollupPeriods) {
    const named = series.find((s) => s.target.step)?.target.index;
    throw invalid(
      named === undefined ? 'targets' : `targets[${named}].payload.timePeriod`,
      `${formatCount(total)} periods over all targets; a query may ask for at most ${formatCount(limits.maxRollupPeriods)} (ROLLUP_MAX_PERIODS). Ask for a longer period or a shorter range.`,
    );
  }
  for (const s of series) {
    if (q.from >= q.to) continue;
    try {
      s.plan = alignedPlan(q.from, q.to, s.step, q.zone);
    } catch (err) {
      if (err instanceof RangeError) throw invalid(s.target.step ? `targets[${s.target.index}].payload.timePeriod` : 'range', err.message);
      throw err;
    }
  }
  return series;
}

/** Whether the series' values are text (an ALPHANUMERIC point's stored values). */
const isText = (s: Series) => s.point.dataType === 'ALPHANUMERIC' && (s.rollup === 'FIRST' || s.rollup === 'LAST' || s.rollup === 'START');

/** One series as JSON text, a computed chunk of periods at a time; periods without a value left out. */
async function* seriesText(values: PointValueService, s: Series, now: number, slice: TimeSlice, first: boolean): AsyncGenerator<string> {
  const text = isText(s);
  const refId = s.target.refId === undefined ? '' : `,"refId":${JSON.stringify(s.target.refId)}`;
  const name = JSON.stringify(seriesName(s.point));
  let out = `${first ? '' : ','}${
    text ? `{"type":"table"${refId},"columns":[{"text":"Time","type":"time"},{"text":${name},"type":"string"}],"rows":[` : `{"target":${name}${refId},"datapoints":[`
  }`;
  let written = false;
  if (s.plan) {
    const presenter = new StatisticsPresenter(s.rollup, s.point.dataType);
    const field = presenter.columns[0]!;
    for await (const result of values.rollup(s.point, s.plan, now, slice)) {
      for (let i = 0; i < result.length; i++) {
        const v = presenter.value(result, i, field);
        let cell: string;
        if (v === null) continue;
        if (typeof v === 'boolean') cell = v ? '1' : '0';
        else if (typeof v === 'number') {
          if (!Number.isFinite(v)) continue;
          cell = String(v);
        } else cell = JSON.stringify(v);
        out += `${written ? ',' : ''}${text ? `[${result.start(i)},${cell}]` : `[${cell},${result.start(i)}]`}`;
        written = true;
      }
      yield out;
      out = '';
      await slice.yieldIfExpired();
    }
  }
  yield `${out}]}`;
}

async function* queryText(values: PointValueService, series: Series[], now: number): AsyncGenerator<string> {
  const slice = new TimeSlice();
  // '[' goes out with the first computed chunk, not before it: a store failing on the first read is
  // then still an error answer (sendChunks), not a 200 cut after its first byte.
  let head = '[';
  for (let i = 0; i < series.length; i++) {
    for await (const chunk of seriesText(values, series[i]!, now, slice, i === 0)) {
      yield head + chunk;
      head = '';
    }
  }
  yield `${head}]`;
}

/** A point's XID, name and device name, as DataPointService.labels answers them. */
type PointLabel = [xid: string, name: string, deviceName: string];

const labelOf = ([, name, device]: PointLabel) => (device === '' ? name : `${device} - ${name}`);

/** The points' labels (JSON text) as an array of items, each written by `item`. */
function labelsText(json: string, item: (xid: string, label: string) => string): string {
  const labels = JSON.parse(json) as PointLabel[];
  return `[${labels.map((l) => item(JSON.stringify(l[0]), JSON.stringify(labelOf(l)))).join(',')}]`;
}

export function grafanaRouter(
  values: PointValueService,
  points: DataPointService,
  tags: DataPointTagsService,
  validator: Validator,
  limits: PointValueReadLimits,
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/grafana' });

  // Grafana's "Save & test": the credentials are checked (requireAuthentication) before this answers.
  router.get('/', (ctx) => {
    ctx.body = { status: 'OK', username: caller(ctx).user.username };
  });

  router.post('/metrics', async (ctx) => {
    validator.validate('grafana-metrics', (await readJson(ctx, { optional: true })) ?? {});
    const labels = await points.labels(caller(ctx).user, `sort(deviceName,name,xid)&limit(${METRICS_LIMIT})`);
    ctx.type = JSON_TYPE;
    ctx.body = labelsText(labels, (xid, label) => `{"label":${label},"value":${xid},"payloads":${METRIC_PAYLOADS_JSON}}`);
  });

  router.post('/metric-payload-options', async (ctx) => {
    const body = validator.validate<{ metric: string; name: 'rollup' | 'timePeriod' }>('grafana-metric-payload-options', await readJson(ctx));
    // No metric chosen yet (the plugin then sends ''): every rollup, none marked.
    const point = body.metric === '' ? undefined : await values.readablePoint(caller(ctx).user, body.metric);
    if (body.name === 'timePeriod') {
      ctx.body = PERIOD_LADDER.map((s) => ({ label: `${s.count} ${s.type}`, value: `${s.count} ${s.type}` }));
      return;
    }
    const own = point && defaultRollup(point);
    ctx.body = GRAFANA_ROLLUPS.filter((r) => r !== 'POINT_DEFAULT' && (!point || allowsRollup(point.dataType, r))).map((r) => ({ label: r === own ? `${r} (default)` : r, value: r }));
  });

  router.post('/query', async (ctx) => {
    const q = grafanaQuery(validator, await readJson(ctx));
    const series = planned(await seriesOf(values, caller(ctx).user, q, limits), q, limits);
    await sendChunks(ctx, JSON_TYPE, queryText(values, series, q.now));
  });

  router.post('/variable', async (ctx) => {
    const body = validator.validate<{ payload: { target: string } }>('grafana-variable', await readJson(ctx));
    const labels = await points.labels(caller(ctx).user, body.payload.target.trim());
    ctx.type = JSON_TYPE;
    // __text/__value as the plugin reads them; text/value as its openapi.yaml requires.
    ctx.body = labelsText(labels, (value, text) => `{"__text":${text},"__value":${value},"text":${text},"value":${value}}`);
  });

  router.post('/tag-keys', async (ctx) => {
    validator.validate('grafana-tag-keys', (await readJson(ctx, { optional: true })) ?? {});
    const keys = JSON.parse(await tags.keys(caller(ctx).user)) as string[];
    ctx.body = keys.map((text) => ({ type: 'string', text }));
  });

  router.post('/tag-values', async (ctx) => {
    const body = validator.validate<{ key: string }>('grafana-tag-values', await readJson(ctx));
    const found = JSON.parse(await tags.values(caller(ctx).user, body.key, '')) as string[];
    ctx.body = found.map((text) => ({ text }));
  });

  return router;
}
