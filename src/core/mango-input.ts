// Mango's input forms, read into ours before a body is validated (API-DECISIONS "Mango clients"):
// Mango clients (node-mango-client's default objects, Mango 3 and 4 scripts) name some settings
// differently. Only input is translated; answers keep this service's shapes. Each function returns
// a new object (or the body itself when there is nothing to translate) and never judges a value:
// what it leaves is validated exactly as a body in our own form would be.
import { DomainError, validationMessage } from './errors.js';
import { periodMs } from './time.js';

const HOUR_MS = 3_600_000;

type Body = Record<string, unknown>;

const isObject = (v: unknown): v is Body => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A permission as given: an array of roles stays; a comma-separated string ("user,operators") is
 * split, "" and null are no roles; Mango 4's sets (`[["user"], ["operators"]]`: any of the sets,
 * each of all its roles) are taken when every set is one role. A set of several roles that must all
 * be held cannot be said here, and is refused rather than widened to any of them.
 */
export function rolesInput(value: unknown, property: string): unknown {
  if (value === null) return [];
  if (typeof value === 'string') {
    return value
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r !== '');
  }
  if (!Array.isArray(value) || !value.some(Array.isArray)) return value;
  return value.flatMap((set: unknown) => {
    if (!Array.isArray(set)) return [set];
    if (set.length > 1) {
      throw DomainError.validation([
        validationMessage(property, 'a set of roles that must all be held is not supported: give the roles as one list, any of which grants the permission'),
      ]);
    }
    return set;
  });
}

/**
 * A data source: Mango's `pollPeriod {periods, type}` is our update period (DAYS and longer as
 * hours, the longest unit the runtime takes); the Modbus `timeout` is `timeoutMs`.
 */
export function dataSourceFromMango(body: unknown): unknown {
  if (!isObject(body)) return body;
  const out: Body = { ...body };
  const poll = body.pollPeriod;
  if (isObject(poll) && out.updatePeriods === undefined && out.updatePeriodType === undefined) {
    const type = typeof poll.type === 'string' ? poll.type.toUpperCase() : poll.type;
    const hours = typeof type === 'string' && ['DAYS', 'WEEKS'].includes(type) && typeof poll.periods === 'number';
    out.updatePeriods = hours ? periodMs(poll)! / HOUR_MS : poll.periods;
    out.updatePeriodType = hours ? 'HOURS' : type;
  }
  if (out.timeoutMs === undefined && typeof body.timeout === 'number') out.timeoutMs = body.timeout;
  return out;
}

/** Mango's virtual change types → ours (ANALOG_ATTRACTOR has none: it stays, and is refused by name). */
const VIRTUAL_CHANGE_TYPES: Record<string, string> = {
  BROWNIAN: 'RANDOM_WALK',
  SINUSOIDAL: 'SINE',
  INCREMENT_ANALOG: 'INCREMENT',
  INCREMENT_MULTISTATE: 'INCREMENT',
  RANDOM_ANALOG: 'RANDOM',
  RANDOM_BOOLEAN: 'RANDOM',
  RANDOM_MULTISTATE: 'RANDOM',
  ALTERNATE_BOOLEAN: 'ALTERNATE',
};

/**
 * A VIRTUAL point locator with Mango's change type names and fields: BROWNIAN's `maxChange` and
 * INCREMENT_ANALOG's `change` are our `step`; SINUSOIDAL (`offset ± amplitude`, a `period` counted
 * in the source's polls) is our SINE between min and max over `period × pollMs`. Mango's sine starts
 * at its offset and ours at the middle of min–max: the same curve, so only a phase shift other than
 * 0 cannot be said, and is refused.
 */
export function virtualLocatorFromMango(loc: Body, sourcePeriodMs: number): Body {
  const mango = typeof loc.changeType === 'string' ? VIRTUAL_CHANGE_TYPES[loc.changeType] : undefined;
  if (mango === undefined) return loc;
  const out: Body = { ...loc, changeType: mango };
  if (loc.changeType === 'BROWNIAN' && typeof loc.maxChange === 'number' && loc.step === undefined) out.step = loc.maxChange;
  if (loc.changeType === 'INCREMENT_ANALOG' && typeof loc.change === 'number' && loc.step === undefined) out.step = loc.change;
  if (loc.changeType === 'SINUSOIDAL') {
    if (typeof loc.phaseShift === 'number' && loc.phaseShift !== 0) {
      throw DomainError.validation([validationMessage('pointLocator.phaseShift', 'must be 0: a SINUSOIDAL phase shift is not supported')], 'DataPointVO');
    }
    if (typeof loc.amplitude === 'number' && typeof loc.offset === 'number' && out.min === undefined && out.max === undefined) {
      out.min = loc.offset - Math.abs(loc.amplitude);
      out.max = loc.offset + Math.abs(loc.amplitude);
    }
    if (typeof loc.period === 'number' && loc.period > 0 && out.periodMs === undefined) out.periodMs = Math.max(1, Math.round(loc.period * sourcePeriodMs));
  }
  return out;
}

/** A detector's point as Mango names it: `sourceId` (the point's id) with `detectorSourceType`. */
export interface MangoDetectorSource {
  sourceId: number;
}

/**
 * An event detector: `duration {periods, type}` (Mango 4) or `duration` with `durationType`
 * (Mango 3) is `durationMs`; `useResetLimit: false` drops `resetLimit`; Mango's inverted limits
 * (`notHigher`, `notLower`) have no equivalent here and are refused. Returns the body and, when the
 * point is named Mango's way, its id for the caller to look up.
 */
export function detectorFromMango(body: unknown): { body: unknown; source?: MangoDetectorSource } {
  if (!isObject(body)) return { body };
  const out: Body = { ...body };
  if (out.durationMs === undefined && body.duration !== undefined) {
    const ms = isObject(body.duration)
      ? periodMs(body.duration)
      : typeof body.duration === 'number'
        ? periodMs({ periods: body.duration, type: body.durationType ?? 'SECONDS' })
        : undefined;
    if (ms === undefined) throw DomainError.validation([validationMessage('duration', 'must be {"periods": <integer>, "type": "SECONDS"|"MINUTES"|...}')], 'EventDetectorVO');
    out.durationMs = ms;
  }
  if (body.useResetLimit === false) delete out.resetLimit;
  for (const inverted of ['notHigher', 'notLower'] as const) {
    if (body[inverted] === true) {
      throw DomainError.validation([validationMessage(inverted, 'must be false: a limit detector that is active on the other side of its limit is not supported')], 'EventDetectorVO');
    }
  }
  if (out.dataPointXid !== undefined || body.sourceId === undefined) return { body: out };
  if (body.detectorSourceType !== undefined && body.detectorSourceType !== 'DATA_POINT') {
    throw DomainError.validation([validationMessage('detectorSourceType', 'must be DATA_POINT: only data point detectors are supported')], 'EventDetectorVO');
  }
  if (typeof body.sourceId !== 'number' || !Number.isSafeInteger(body.sourceId)) {
    throw DomainError.validation([validationMessage('sourceId', "must be an integer: the data point's id")], 'EventDetectorVO');
  }
  return { body: out, source: { sourceId: body.sourceId } };
}

/** Mango's text renderer types (node-mango-client, Mango 3 and 4 exports) → ours (core/text-renderer.ts). */
const MANGO_TEXT_RENDERERS: Record<string, (r: Body) => Body> = {
  textRendererPlain: () => ({ type: 'PLAIN' }),
  textRendererAnalog: (r) => ({ type: 'ANALOG', format: r.format }),
  textRendererBinary: (r) => ({ type: 'BINARY', zeroLabel: r.zeroLabel, oneLabel: r.oneLabel }),
  textRendererMultistate: (r) => ({
    type: 'MULTISTATE',
    values: Array.isArray(r.multistateValues) ? r.multistateValues.map((v: unknown) => (isObject(v) ? { key: v.key, text: v.text } : v)) : r.multistateValues,
  }),
};

/**
 * A data point: Mango's `textRenderer` (`{type: "textRendererAnalog", format, suffix, ...}`) in our
 * form; Mango's renderers without an equivalent here (range, time, none) are left out, as if not
 * given: the stored renderer stays. Its suffix and colours are Mango's own and are dropped.
 */
export function dataPointFromMango(body: unknown): unknown {
  if (!isObject(body) || !isObject(body.textRenderer) || typeof body.textRenderer.type !== 'string' || !body.textRenderer.type.startsWith('textRenderer')) return body;
  const { textRenderer, ...rest } = body;
  const ours = MANGO_TEXT_RENDERERS[textRenderer.type as string];
  return ours ? { ...rest, textRenderer: ours(textRenderer) } : rest;
}
