// Modbus TCP without the network: a point's locator, the read requests a set of points needs, and the
// conversion between register words / bits and point values (both directions). Pure functions, so the
// driver (modbus.ts) only deals with connections, timing and faults.
import type { DataPointRecord, DataType } from '../store/metadata/data-points.js';

export const REGISTER_TYPES = ['HOLDING', 'INPUT', 'COIL', 'DISCRETE_INPUT'] as const;
export type RegisterType = (typeof REGISTER_TYPES)[number];
export const DATA_ENCODINGS = ['INT16', 'UINT16', 'INT32', 'UINT32', 'FLOAT32'] as const;
export type DataEncoding = (typeof DATA_ENCODINGS)[number];
export type WordOrder = 'BIG' | 'LITTLE';

export interface ModbusLocator {
  offset: number;
  registerType: RegisterType;
  dataEncoding: DataEncoding;
  /** BIG: the high word is at `offset`, the low word at `offset + 1`. */
  wordOrder: WordOrder;
  multiplier: number;
  additive: number;
}

/** Protocol limits per read request (FC3/FC4: 125 registers; FC1/FC2: 2000 bits). */
export const MAX_REGISTERS_PER_READ = 125;
export const MAX_BITS_PER_READ = 2000;

export interface PlanOptions {
  /** false: one request per point (the benchmark's baseline). */
  batching: boolean;
  /** Unused registers a request may span to join two ranges (a small gap is cheaper than a round trip). */
  maxGapRegisters: number;
  maxGapBits: number;
}

/**
 * Gaps stay small: reading a register nobody configured is cheap, but some devices answer "illegal data
 * address" for unmapped registers, which would fail the points around the gap too.
 */
export const DEFAULT_PLAN: PlanOptions = { batching: true, maxGapRegisters: 16, maxGapBits: 256 };

/** One point inside a read request: where its words / bit start in the response. */
export interface PlannedPoint {
  point: DataPointRecord;
  locator: ModbusLocator;
  /** Word (registers) or bit (coils, discrete inputs) index into the response. */
  index: number;
}

export interface ReadRequest {
  registerType: RegisterType;
  start: number;
  /** Registers or bits. */
  count: number;
  points: PlannedPoint[];
}

/** The locator as stored, with the defaults of the data point service filled in for older records. */
export function modbusLocator(point: Pick<DataPointRecord, 'pointLocator'>): ModbusLocator {
  const loc = point.pointLocator;
  return {
    offset: typeof loc.offset === 'number' ? loc.offset : 0,
    registerType: oneOf(loc.registerType, REGISTER_TYPES, 'HOLDING'),
    dataEncoding: oneOf(loc.dataEncoding, DATA_ENCODINGS, 'UINT16'),
    wordOrder: loc.wordOrder === 'LITTLE' ? 'LITTLE' : 'BIG',
    multiplier: typeof loc.multiplier === 'number' && loc.multiplier !== 0 ? loc.multiplier : 1,
    additive: typeof loc.additive === 'number' ? loc.additive : 0,
  };
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return allowed.includes(value as T) ? (value as T) : fallback;
}

export function isBitType(type: RegisterType): boolean {
  return type === 'COIL' || type === 'DISCRETE_INPUT';
}

export function isReadOnly(type: RegisterType): boolean {
  return type === 'INPUT' || type === 'DISCRETE_INPUT';
}

/** Registers (or bits) a point occupies. */
export function widthOf(locator: ModbusLocator): number {
  if (isBitType(locator.registerType)) return 1;
  return locator.dataEncoding === 'INT16' || locator.dataEncoding === 'UINT16' ? 1 : 2;
}

/** "HOLDING 0..9": what a request or point covers, for messages. */
export function describeRange(type: RegisterType, start: number, count: number): string {
  return count <= 1 ? `${type} ${start}` : `${type} ${start}..${start + count - 1}`;
}

/**
 * The read requests for a set of points: per register type, sorted by offset, ranges merged while the
 * gap between them is small and the request stays within the protocol limit. Computed once per start.
 */
export function planReads(points: readonly DataPointRecord[], options: PlanOptions = DEFAULT_PLAN): ReadRequest[] {
  const byType = new Map<RegisterType, PlannedPoint[]>();
  for (const point of points) {
    const locator = modbusLocator(point);
    const list = byType.get(locator.registerType) ?? [];
    list.push({ point, locator, index: 0 });
    byType.set(locator.registerType, list);
  }
  const requests: ReadRequest[] = [];
  for (const type of REGISTER_TYPES) {
    const planned = byType.get(type);
    if (!planned) continue;
    planned.sort((a, b) => a.locator.offset - b.locator.offset);
    for (const r of options.batching ? mergeRanges(type, planned, options) : planned.map((p) => single(type, p))) requests.push(r);
  }
  return requests;
}

function single(type: RegisterType, p: PlannedPoint): ReadRequest {
  return { registerType: type, start: p.locator.offset, count: widthOf(p.locator), points: [{ ...p, index: 0 }] };
}

function mergeRanges(type: RegisterType, sorted: readonly PlannedPoint[], options: PlanOptions): ReadRequest[] {
  const limit = isBitType(type) ? MAX_BITS_PER_READ : MAX_REGISTERS_PER_READ;
  const maxGap = isBitType(type) ? options.maxGapBits : options.maxGapRegisters;
  const requests: ReadRequest[] = [];
  let current: ReadRequest | undefined;
  for (const p of sorted) {
    const end = p.locator.offset + widthOf(p.locator);
    const joins =
      current !== undefined &&
      p.locator.offset - (current.start + current.count) <= maxGap &&
      Math.max(end, current.start + current.count) - current.start <= limit;
    if (current && joins) {
      current.count = Math.max(current.count, end - current.start);
      current.points.push({ ...p, index: p.locator.offset - current.start });
    } else {
      current = single(type, p);
      requests.push(current);
    }
  }
  return requests;
}

// One scratch view for the float and 32-bit conversions (decode and encode run synchronously).
const scratch = new DataView(new ArrayBuffer(4));

/** The raw integer or float a register point holds, from the response's register words. */
export function rawFromWords(words: ArrayLike<number>, index: number, locator: ModbusLocator): number {
  const first = words[index] ?? 0;
  if (widthOf(locator) === 1) return locator.dataEncoding === 'INT16' ? (first << 16) >> 16 : first;
  const second = words[index + 1] ?? 0;
  const [high, low] = locator.wordOrder === 'BIG' ? [first, second] : [second, first];
  scratch.setUint16(0, high);
  scratch.setUint16(2, low);
  if (locator.dataEncoding === 'INT32') return scratch.getInt32(0);
  if (locator.dataEncoding === 'UINT32') return scratch.getUint32(0);
  return scratch.getFloat32(0);
}

/** A register point's value: raw × multiplier + additive, shaped for the point's data type. */
export function valueFromWords(words: ArrayLike<number>, index: number, locator: ModbusLocator, dataType: DataType): number | boolean {
  const raw = rawFromWords(words, index, locator);
  if (dataType === 'BINARY') return raw !== 0;
  const scaled = raw * locator.multiplier + locator.additive;
  // Scaling an integer register by a decimal multiplier leaves binary noise (234 × 0.1 =
  // 23.400000000000002): 15 significant digits are more than any register holds, and drop it.
  const value = locator.dataEncoding === 'FLOAT32' ? scaled : Number(scaled.toPrecision(15));
  // A multistate point takes integers; a fractional multiplier would otherwise leave e.g. 2.0000000001.
  return dataType === 'MULTISTATE' ? Math.round(value) : value;
}

/** A coil or discrete input's value (a BINARY point; 0/1 for any other type). */
export function valueFromBit(bit: boolean, dataType: DataType): number | boolean {
  return dataType === 'BINARY' ? bit : bit ? 1 : 0;
}

export type WriteCommand = { kind: 'coil'; offset: number; state: boolean } | { kind: 'registers'; offset: number; words: number[] };

const INTEGER_RANGES: Record<Exclude<DataEncoding, 'FLOAT32'>, readonly [number, number]> = {
  INT16: [-0x8000, 0x7fff],
  UINT16: [0, 0xffff],
  INT32: [-0x80000000, 0x7fffffff],
  UINT32: [0, 0xffffffff],
};
const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * What to send to set a point to `value`: a coil state, or the register words after inverting
 * multiplier and additive (rounded for integer encodings). Throws, before any I/O, an Error for a
 * read-only register type, a TypeError for a value of the wrong type, a RangeError for one out of range.
 */
export function encodeWrite(locator: ModbusLocator, value: number | boolean | string): WriteCommand {
  const where = describeRange(locator.registerType, locator.offset, widthOf(locator));
  if (isReadOnly(locator.registerType)) throw new Error(`cannot write ${where}: ${locator.registerType} registers are read-only`);
  if (locator.registerType === 'COIL') return { kind: 'coil', offset: locator.offset, state: coilState(value, where) };
  const number = typeof value === 'boolean' ? (value ? 1 : 0) : typeof value === 'number' ? value : NaN;
  if (!Number.isFinite(number)) throw new TypeError(`cannot write ${JSON.stringify(value)} to ${where}: a finite number is required`);
  const raw = (number - locator.additive) / locator.multiplier;
  const shown = raw === number ? String(number) : `${number} (raw ${raw})`;
  return { kind: 'registers', offset: locator.offset, words: wordsFromRaw(raw, locator, `${shown} to ${where}`) };
}

function coilState(value: number | boolean | string, where: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  throw new TypeError(`cannot write ${JSON.stringify(value)} to ${where}: a coil takes true or false`);
}

/** `what` names value and target for messages ("70000 to HOLDING 3"). */
function wordsFromRaw(raw: number, locator: ModbusLocator, what: string): number[] {
  const encoding = locator.dataEncoding;
  if (encoding === 'FLOAT32') {
    if (Math.abs(raw) > FLOAT32_MAX) throw new RangeError(`cannot write ${what}: out of range for FLOAT32`);
    scratch.setFloat32(0, raw);
  } else {
    const rounded = Math.round(raw);
    const [min, max] = INTEGER_RANGES[encoding];
    if (rounded < min || rounded > max) throw new RangeError(`cannot write ${what}: out of range for ${encoding} (${min}..${max})`);
    if (widthOf(locator) === 1) return [rounded & 0xffff];
    if (encoding === 'INT32') scratch.setInt32(0, rounded);
    else scratch.setUint32(0, rounded);
  }
  const high = scratch.getUint16(0);
  const low = scratch.getUint16(2);
  return locator.wordOrder === 'BIG' ? [high, low] : [low, high];
}
