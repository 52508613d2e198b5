// Grafana's JSON datasource query body (simpod-json-datasource's /query) read into what the rollup
// read needs: the range, the zone the periods align in, the data points per target, each target's
// rollup and period (its payload's, else the defaults of API-DECISIONS "Grafana"), and the ad hoc
// filters on point tags. Every problem is a 422 naming the body field; nothing is looked up here.
import { DomainError } from '../core/errors.js';
import { compilePattern, isPatternError } from '../core/bounded-regex.js';
import { parseInstant } from '../core/time.js';
import { isTimeZone, type Validator } from '../core/validation.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { PERIOD_TYPES, type PeriodType } from '../values/read/periods.js';
import type { PeriodStep } from '../values/read/aligned-periods.js';
import { ROLLUPS, type StatisticRollup } from '../values/read/statistics.js';

/** maxDataPoints when the body has none. */
export const DEFAULT_MAX_DATA_POINTS = 1_000;

interface TargetBody {
  target?: string | null;
  refId?: string | null;
  hide?: boolean | null;
  payload?: Payload | string | null;
}

interface Payload {
  rollup?: unknown;
  timePeriod?: unknown;
}

interface FilterBody {
  key: string;
  operator: '=' | '!=' | '=~' | '!~' | '<' | '>';
  value: string;
}

/** The body as its schema lets it through (schemas/grafana-query.json). */
interface QueryBody {
  range: { from: string | number; to: string | number };
  maxDataPoints?: number | null;
  timezone?: string | null;
  targets: TargetBody[];
  filters?: FilterBody[] | null;
  adhocFilters?: FilterBody[] | null;
}

export interface GrafanaTarget {
  /** Where it sits in the body (targets[i]), for the messages. */
  index: number;
  /** As sent: an XID, or Grafana's regex form of a variable's values. */
  target: string;
  refId?: string;
  /** The payload's rollup; undefined: the point's default (defaultRollup). */
  rollup?: StatisticRollup;
  /** The payload's period; undefined: sized to maxDataPoints. */
  step?: PeriodStep;
}

/** A test of one point tag (name and device included). */
export interface TagFilter {
  key: string;
  matches(value: string | undefined): boolean;
}

export interface GrafanaQuery {
  from: number;
  to: number;
  zone: string;
  maxDataPoints: number;
  targets: GrafanaTarget[];
  filters: TagFilter[];
  /** When the request came: no value is in force after it. */
  now: number;
}

const invalid = (property: string, message: string) => DomainError.invalid(property, message, 'GrafanaQuery');

/** The rollups a target may name: one value per period (not NONE's raw values nor ALL's object). */
export const GRAFANA_ROLLUPS = ROLLUPS.filter((r) => r !== 'NONE' && r !== 'ALL');

/** Grafana's zone names that are not IANA zones; "browser" is the viewer's, unknown here. */
const UTC_NAMES = new Set(['', 'browser', 'utc', 'default']);

function zoneOf(body: QueryBody): string {
  const zone = body.timezone ?? '';
  if (UTC_NAMES.has(zone.toLowerCase())) return 'UTC';
  if (!isTimeZone(zone)) throw invalid('timezone', 'must be an IANA time zone such as Europe/Berlin, or browser or utc');
  return zone;
}

function instant(value: string | number, property: string): number {
  const ms = parseInstant(value);
  if (ms === undefined) throw invalid(property, 'must be an ISO 8601 date with offset (2024-01-01T00:00:00.000Z) or epoch milliseconds');
  return ms;
}

/** "15 MINUTES", "1 hour", "6h"-less: a count and one of the period types (plural or singular, case ignored). */
export function parseTimePeriod(text: string): PeriodStep | undefined {
  const m = /^\s*(\d{1,7})\s*([A-Za-z]+)\s*$/.exec(text);
  if (!m) return undefined;
  const count = Number(m[1]);
  const unit = m[2]!.toUpperCase();
  const type = PERIOD_TYPES.find((t) => t === unit || t === `${unit}S`);
  if (type === undefined || count < 1) return undefined;
  return { type: type as PeriodType, count };
}

/** The payload as an object: older plugin versions send its JSON text. */
function payloadOf(payload: TargetBody['payload'], index: number): Payload | undefined {
  if (typeof payload !== 'string') return payload ?? undefined;
  if (payload.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid(`targets[${index}].payload`, 'must be an object, or the JSON text of one');
  return parsed as Payload;
}

/** A payload member as trimmed text; undefined when absent, null or empty. */
function textOf(value: unknown, property: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(property, 'must be a string');
  return value.trim() || undefined;
}

function targetOf(t: TargetBody, index: number): GrafanaTarget | undefined {
  if (t.hide === true || t.target === undefined || t.target === null || t.target.trim() === '') return undefined;
  const target: GrafanaTarget = { index, target: t.target };
  if (t.refId) target.refId = t.refId;
  const payload = payloadOf(t.payload, index);
  const rollup = textOf(payload?.rollup, `targets[${index}].payload.rollup`);
  if (rollup) {
    const named = rollup.toUpperCase();
    if (!(GRAFANA_ROLLUPS as readonly string[]).includes(named)) throw invalid(`targets[${index}].payload.rollup`, `must be one of ${GRAFANA_ROLLUPS.join(', ')}`);
    // POINT_DEFAULT is the default: the point's rollup, or its type's.
    if (named !== 'POINT_DEFAULT') target.rollup = named as StatisticRollup;
  }
  const period = textOf(payload?.timePeriod, `targets[${index}].payload.timePeriod`);
  if (period) {
    const step = parseTimePeriod(period);
    if (!step) throw invalid(`targets[${index}].payload.timePeriod`, `must be a count and a unit, such as "15 MINUTES" (units: ${PERIOD_TYPES.join(', ')})`);
    target.step = step;
  }
  return target;
}

function filterOf(f: FilterBody, property: string): TagFilter {
  const { key, operator, value } = f;
  switch (operator) {
    case '=':
      return { key, matches: (v) => v === value };
    case '!=':
      return { key, matches: (v) => v !== value };
    case '<':
    case '>': {
      // Numbers as numbers when both are, else text in code-point order.
      const sign = operator === '<' ? -1 : 1;
      return { key, matches: (v) => v !== undefined && Math.sign(compare(v, value)) === sign };
    }
    case '=~':
    case '!~': {
      // Anchored, as Grafana's other sources read ad hoc regex filters.
      const pattern = compilePattern(`^(?:${value})$`);
      if (isPatternError(pattern)) throw invalid(`${property}.value`, pattern.error);
      const want = operator === '=~';
      return { key, matches: (v) => pattern.test(v ?? '') === want };
    }
  }
}

function compare(a: string, b: string): number {
  const x = Number(a);
  const y = Number(b);
  if (a.trim() !== '' && b.trim() !== '' && Number.isFinite(x) && Number.isFinite(y)) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Reads and checks a /query body before any point is looked up. */
export function grafanaQuery(validator: Validator, raw: unknown): GrafanaQuery {
  const body = validator.validate<QueryBody>('grafana-query', raw);
  const from = instant(body.range.from, 'range.from');
  const to = instant(body.range.to, 'range.to');
  if (from > to) throw invalid('range.from', 'must not be after range.to');
  const zone = zoneOf(body);
  const targets: GrafanaTarget[] = [];
  body.targets.forEach((t, i) => {
    const target = targetOf(t, i);
    if (target) targets.push(target);
  });
  const filterName = body.filters ? 'filters' : 'adhocFilters';
  const filters = (body.filters ?? body.adhocFilters ?? []).map((f, i) => filterOf(f, `${filterName}[${i}]`));
  const maxDataPoints = Math.max(1, Math.floor(body.maxDataPoints ?? DEFAULT_MAX_DATA_POINTS));
  return { from, to, zone, maxDataPoints, targets, filters, now: Date.now() };
}

/**
 * The XIDs a target names: itself, or, when Grafana formatted a variable's values as a regex (its
 * `regex` format, which this datasource's targets get), the values it escaped: `(a|b\.c)` → a, b.c.
 */
export function targetXids(target: string): string[] {
  const grouped = target.length >= 2 && target.startsWith('(') && target.endsWith(')') && !target.endsWith('\\)');
  const inner = grouped ? target.slice(1, -1) : target;
  const xids: string[] = [];
  let current = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === '\\' && i + 1 < inner.length) current += inner[++i];
    else if (c === '|' && grouped) {
      xids.push(current);
      current = '';
    } else current += c;
  }
  xids.push(current);
  return [...new Set(xids.filter((x) => x !== ''))];
}

/** A point's tag as the filters see it: Mango's implicit name and device, else its tags. */
export function pointTag(point: DataPointRecord, key: string): string | undefined {
  if (key === 'name') return point.name;
  if (key === 'device') return point.deviceName === '' ? undefined : point.deviceName;
  return Object.hasOwn(point.tags, key) ? point.tags[key] : undefined;
}

/** The rollup a target without one gets: the point's own unless NONE (or ALL), else AVERAGE for NUMERIC and LAST for the rest. */
export function defaultRollup(point: DataPointRecord): StatisticRollup {
  const own = point.rollup;
  if (own !== 'NONE' && own !== 'ALL' && own !== 'POINT_DEFAULT' && (ROLLUPS as readonly string[]).includes(own)) return own as StatisticRollup;
  return point.dataType === 'NUMERIC' ? 'AVERAGE' : 'LAST';
}
