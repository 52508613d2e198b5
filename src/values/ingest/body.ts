// The bodies of POST /point-values and PUT /point-values/<xid> checked and read into a column batch
// (ValueBatch): the pipeline's accept and type-check steps for values that come over HTTP. The
// service decides who may write: it hands in the point lookup and a `mayWrite(point)` predicate.
import { DomainError, validationMessage, type ValidationMessage } from '../../core/errors.js';
import type { BulkColumns } from '../../core/bulk-values.js';
import { parseInstant } from '../../core/time.js';
import { TimeSlice } from '../../core/time-slice.js';
import type { DataPointRecord } from '../../store/metadata/data-points.js';
import type { TimeRange, ValueBatch } from '../../store/values/types.js';
import { emptyBatch, setRow } from '../batch.js';
import { isExtreme } from './logging.js';
import { coerceValue, type StorableValue } from './types.js';

/** Rows of a bulk body checked between looks at the time slice (a clock read per row would cost). */
const SLICE_CHECK_ROWS = 1024;

/** What a bulk body needs of the service: its points by XID, and whether the caller may write one. */
export interface WriterPorts {
  point(xid: string): Promise<DataPointRecord | undefined>;
  mayWrite(point: DataPointRecord): boolean;
}

/** A bulk body read into a batch, with the points its rows belong to. */
export interface BulkBatch {
  batch: ValueBatch;
  points: Map<number, DataPointRecord>;
}

/**
 * POST /point-values: validated as a whole (nothing is written unless every entry is good).
 * Values go straight into the batch's columns: this loop runs for every ingested value. Returns the
 * XIDs the caller may not write when there are any (their refusal comes before any other problem).
 */
export async function readBulkBody(body: unknown, ports: WriterPorts, range: TimeRange): Promise<BulkBatch | { denied: string[] }> {
  if (!Array.isArray(body)) throw DomainError.invalid('', 'must be an array of {xid, value, timestamp}');
  const problems: ValidationMessage[] = [];
  const denied = new Set<string>();
  const batch = emptyBatch(body.length);
  const points = new Map<number, DataPointRecord>();
  const byXid = new Map<string, DataPointRecord | null>();
  const { min, max } = range;
  const slice = new TimeSlice();
  let n = 0;
  for (let i = 0; i < body.length && problems.length < 100; i++) {
    // The lookups below are mostly cached: microtasks, which let no other request in.
    if (i % SLICE_CHECK_ROWS === 0) await slice.yieldIfExpired();
    const entry = body[i] as Record<string, unknown> | null;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(validationMessage(`[${i}]`, 'must be an object {xid, value, timestamp}'));
      continue;
    }
    const { xid, value, timestamp, dataType, annotation } = entry;
    if (typeof xid !== 'string') {
      problems.push(validationMessage(`[${i}].xid`, xid === undefined ? 'is required' : 'must be a string'));
      continue;
    }
    let point = byXid.get(xid);
    if (point === undefined) {
      point = (await ports.point(xid)) ?? null;
      byXid.set(xid, point);
      if (point && !ports.mayWrite(point)) denied.add(point.xid);
    }
    if (!point) {
      problems.push(validationMessage(`[${i}].xid`, 'Data point not found'));
      continue;
    }
    if (dataType !== undefined && dataType !== point.dataType) problems.push(validationMessage(`[${i}].dataType`, `must be ${point.dataType}, the point's data type`));
    const ts = typeof timestamp === 'number' && Number.isSafeInteger(timestamp) && timestamp >= min && timestamp <= max ? timestamp : toTimestamp(timestamp, range);
    if (ts === undefined) problems.push(validationMessage(`[${i}].timestamp`, timestamp === undefined ? 'is required' : timestampMessage(range)));
    // The common case, a finite number for a NUMERIC point, skips the general coercion.
    const coerced = point.dataType === 'NUMERIC' && typeof value === 'number' && Number.isFinite(value) ? value : value === undefined ? 'is required' : coerceValue(point.dataType, value);
    if (typeof coerced === 'string') problems.push(validationMessage(`[${i}].value`, coerced));
    if (annotation !== undefined && annotation !== null && typeof annotation !== 'string') problems.push(validationMessage(`[${i}].annotation`, 'must be a string'));
    if (problems.length > 0 || ts === undefined || typeof coerced === 'string') continue;
    batch.series[n] = point.id;
    batch.ts[n] = ts;
    if (typeof coerced === 'number') batch.value[n] = coerced;
    else setRow(batch, n, coerced);
    if (typeof annotation === 'string') (batch.annotation ??= new Array<string | null>(body.length).fill(null))[n] = annotation;
    points.set(point.id, point);
    n++;
  }
  if (denied.size > 0) return { denied: [...denied] };
  if (problems.length > 0) throw DomainError.validation(problems);
  batch.length = n;
  return { batch, points };
}

/**
 * The bulk fast path for bodies already read into columns (numbers for NUMERIC points). Returns
 * undefined whenever anything is unusual: the caller then takes the general path (readBulkBody),
 * which also words the errors.
 */
export async function readBulkColumns(c: BulkColumns, ports: WriterPorts, range: TimeRange): Promise<BulkBatch | undefined> {
  // The reader's value and timestamp columns become the batch's (they may be longer than it): only
  // the series column is new.
  const batch: ValueBatch = { length: c.length, series: new Int32Array(c.length), ts: c.timestamps, value: c.values, text: null, annotation: null };
  const points = new Map<number, DataPointRecord>();
  let xid: string | undefined;
  let point: DataPointRecord | undefined;
  const { min, max } = range;
  const slice = new TimeSlice();
  for (let i = 0; i < c.length; i++) {
    if (i % SLICE_CHECK_ROWS === 0) await slice.yieldIfExpired();
    if (c.xids[i] !== xid) {
      xid = c.xids[i]!;
      point = await ports.point(xid);
      if (!point || point.dataType !== 'NUMERIC' || !ports.mayWrite(point)) return undefined;
      points.set(point.id, point);
    }
    const value = c.values[i]!;
    const ts = c.timestamps[i]!;
    if (!Number.isFinite(value) || !Number.isSafeInteger(ts) || ts < min || ts > max) return undefined;
    batch.series[i] = point!.id;
  }
  return { batch, points };
}

/** A PUT body read for its point: the value coerced to the point's type, when and with what note. */
export interface SetBody {
  value: StorableValue;
  ts: number;
  annotation: string | null;
}

/**
 * PUT /point-values/<xid>: {dataType, value, timestamp?, annotation?} for a point the caller may set.
 * `sourceEnabled` is asked only once the body is an object. A value the point discards is refused
 * here: it would be dropped after reaching the device.
 */
export async function readSetBody(point: DataPointRecord, body: unknown, range: TimeRange, sourceEnabled: () => Promise<boolean>): Promise<SetBody> {
  const input = (body ?? {}) as Record<string, unknown>;
  const problems: ValidationMessage[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw DomainError.invalid('', 'must be an object {dataType, value}');
  if (input.dataType === undefined) problems.push(validationMessage('dataType', 'is required'));
  else if (input.dataType !== point.dataType) problems.push(validationMessage('dataType', `must be ${point.dataType}, the point's data type`));
  if (input.value === undefined) problems.push(validationMessage('value', 'is required'));
  if (!point.settable) problems.push(validationMessage('xid', 'Data point is not settable'));
  const sourceOn = await sourceEnabled();
  if (!point.enabled || !sourceOn) problems.push(validationMessage('xid', 'Data point is not enabled (the point and its data source must be enabled)'));
  const ts = input.timestamp === undefined ? Date.now() : toTimestamp(input.timestamp, range);
  if (ts === undefined) problems.push(validationMessage('timestamp', timestampMessage(range)));
  const annotation = input.annotation === undefined || input.annotation === null ? null : input.annotation;
  if (annotation !== null && typeof annotation !== 'string') problems.push(validationMessage('annotation', 'must be a string'));
  const coerced = input.value === undefined ? undefined : coerceValue(point.dataType, input.value);
  if (typeof coerced === 'string') problems.push(validationMessage('value', coerced));
  if (problems.length > 0 || coerced === undefined || typeof coerced === 'string' || ts === undefined) throw DomainError.validation(problems);
  if (isExtreme(point, coerced.value)) throw DomainError.invalid('value', `is outside the point's discard limits (discardLowLimit ${point.loggingProperties.discardLowLimit}, discardHighLimit ${point.loggingProperties.discardHighLimit})`);
  return { value: coerced, ts, annotation: annotation as string | null };
}

/** Epoch ms from a number or an ISO 8601 string with offset; undefined when neither or outside the store's range. */
function toTimestamp(raw: unknown, range: TimeRange): number | undefined {
  const ms = typeof raw === 'number' || typeof raw === 'string' ? parseInstant(raw) : undefined;
  // A store refuses another one with an error that would fail the whole write group (500).
  return ms !== undefined && ms >= range.min && ms <= range.max ? ms : undefined;
}

/** The validation message of a timestamp that is not one, or not one the store can hold. */
export function timestampMessage(range: TimeRange): string {
  return `must be epoch milliseconds or an ISO 8601 date with offset, from ${new Date(range.min).toISOString()} to ${new Date(range.max).toISOString()}`;
}
