// BACnet/IP numbers and values without the stack: object types by name, a point's locator, a
// present value read into our data types, a set value encoded for WriteProperty. The numbers are
// the standard's (ANSI/ASHRAE 135), so this module never loads @bacnet-js/client.
import type { DataPointRecord } from '../store/metadata/data-points.js';

/** The object types a point may name, with their BACnet numbers. */
export const OBJECT_TYPES = {
  ANALOG_INPUT: 0,
  ANALOG_OUTPUT: 1,
  ANALOG_VALUE: 2,
  BINARY_INPUT: 3,
  BINARY_OUTPUT: 4,
  BINARY_VALUE: 5,
  MULTI_STATE_INPUT: 13,
  MULTI_STATE_OUTPUT: 14,
  MULTI_STATE_VALUE: 19,
} as const;
export type ObjectTypeName = keyof typeof OBJECT_TYPES;
export const DEVICE_OBJECT_TYPE = 8;

/** Property identifiers used here. */
export const PROPERTY = { OBJECT_LIST: 76, OBJECT_NAME: 77, PRESENT_VALUE: 85, UNITS: 117 } as const;
export type PropertyName = 'PRESENT_VALUE';

/** Application tags (the encodings of a written value). */
export const TAG = { NULL: 0, BOOLEAN: 1, UNSIGNED_INTEGER: 2, SIGNED_INTEGER: 3, REAL: 4, DOUBLE: 5, CHARACTER_STRING: 7, ENUMERATED: 9, ERROR: 105 } as const;

export type ObjectFamily = 'ANALOG' | 'BINARY' | 'MULTI_STATE';

export function familyOf(type: ObjectTypeName): ObjectFamily {
  return type.startsWith('ANALOG') ? 'ANALOG' : type.startsWith('BINARY') ? 'BINARY' : 'MULTI_STATE';
}

/** Inputs' present values are read-only (writable only out of service, which a point never asks for). */
export function isInput(type: ObjectTypeName): boolean {
  return type.endsWith('_INPUT');
}

const NAME_OF_TYPE = new Map<number, ObjectTypeName>(Object.entries(OBJECT_TYPES).map(([name, n]) => [n, name as ObjectTypeName]));

/** The name of a supported object type number, or undefined. */
export function objectTypeName(type: number): ObjectTypeName | undefined {
  return NAME_OF_TYPE.get(type);
}

export interface BacnetLocator {
  objectType: ObjectTypeName;
  objectInstance: number;
  property: PropertyName;
  writePriority: number;
}

/** A point's stored locator (defaults applied by the data point service). */
export function bacnetLocator(point: Pick<DataPointRecord, 'pointLocator'>): BacnetLocator {
  const l = point.pointLocator;
  return {
    objectType: l.objectType as ObjectTypeName,
    objectInstance: l.objectInstance as number,
    property: 'PRESENT_VALUE',
    writePriority: typeof l.writePriority === 'number' ? l.writePriority : 16,
  };
}

/** "ANALOG_VALUE 3": how messages name an object. */
export function describeObject(l: Pick<BacnetLocator, 'objectType' | 'objectInstance'>): string {
  return `${l.objectType} ${l.objectInstance}`;
}

/** One decoded application value as the stack gives it. */
export interface AppValue {
  type: number;
  value: unknown;
}

/**
 * A present value read into a raw value for the point's data type (the pipeline coerces it); a
 * string says why it cannot be (a warning on the point).
 */
export function valueFromBacnet(values: readonly AppValue[] | undefined, dataType: string): number | boolean | string | { problem: string } {
  const first = values?.[0];
  if (!first) return { problem: 'the device answered without a value' };
  if (first.type === TAG.ERROR) return { problem: `the device refused the read (${errorText(first.value)})` };
  if (first.type === TAG.NULL) return { problem: 'the device answered NULL' };
  const v = first.value;
  if (typeof v === 'boolean') return dataType === 'BINARY' ? v : v ? 1 : 0;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return { problem: `the device answered ${v}` };
    if (dataType === 'BINARY') return v !== 0;
    return first.type === TAG.REAL ? shortestFloat32(v) : v;
  }
  if (typeof v === 'string') return v;
  return { problem: `the device answered a value of application tag ${first.type}` };
}

/**
 * A REAL (32-bit) as the shortest decimal that is the same float32: 18.92, not the
 * 18.920000076293945 its widening to 64 bits reads as.
 */
export function shortestFloat32(v: number): number {
  const single = Math.fround(v);
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(single.toPrecision(digits));
    if (Math.fround(candidate) === single) return candidate;
  }
  return single;
}

/** The values WriteProperty sends for a set value of the point (TypeError: a value the object cannot take). */
export function encodeWrite(l: BacnetLocator, value: number | boolean | string): AppValue[] {
  const n = typeof value === 'boolean' ? (value ? 1 : 0) : typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) throw new TypeError(`cannot write ${JSON.stringify(value)} to ${describeObject(l)}`);
  switch (familyOf(l.objectType)) {
    case 'ANALOG':
      return [{ type: TAG.REAL, value: n }];
    case 'BINARY':
      if (n !== 0 && n !== 1) throw new RangeError(`${describeObject(l)} takes 0 or 1 (inactive or active), not ${n}`);
      return [{ type: TAG.ENUMERATED, value: n }];
    case 'MULTI_STATE':
      if (!Number.isInteger(n) || n < 1) throw new RangeError(`${describeObject(l)} takes a state number from 1, not ${n}`);
      return [{ type: TAG.UNSIGNED_INTEGER, value: n }];
  }
}

/** "class 2 code 32" from the stack's error object. */
export function errorText(value: unknown): string {
  const e = (typeof value === 'object' && value !== null ? value : {}) as { errorClass?: unknown; errorCode?: unknown };
  return `error class ${String(e.errorClass)}, code ${String(e.errorCode)}`;
}
