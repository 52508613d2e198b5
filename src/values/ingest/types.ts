// Point values by data type: checking and coercing what clients send, and shaping what they read.
import type { DataType } from '../../store/metadata/data-points.js';
import type { StoredValue } from '../../store/values/types.js';

/** What a value becomes in the store: a number (BINARY as 0/1) or a text. */
export interface StorableValue {
  value: number;
  text: string | null;
}

export type ApiValue = number | boolean | string;

/**
 * Coerces a client value to the point's data type, or returns why it cannot be.
 * NUMERIC: finite number or decimal numeric string (true/false as 1/0); MULTISTATE: integer or integer
 * string; BINARY: true/false, 0/1 or "true"/"false"; ALPHANUMERIC: string (numbers and booleans as text).
 */
export function coerceValue(dataType: DataType, raw: unknown): StorableValue | string {
  switch (dataType) {
    case 'NUMERIC': {
      // Decimal notation only: Number() would also read "0x10" and "0b11".
      const decimal = typeof raw === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(raw);
      const n = typeof raw === 'number' ? raw : typeof raw === 'boolean' ? Number(raw) : decimal ? Number(raw) : NaN;
      return Number.isFinite(n) ? { value: n, text: null } : 'must be a number';
    }
    case 'MULTISTATE': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
      return Number.isSafeInteger(n) ? { value: n, text: null } : 'must be an integer';
    }
    case 'BINARY': {
      if (raw === true || raw === 1 || raw === 'true') return { value: 1, text: null };
      if (raw === false || raw === 0 || raw === 'false') return { value: 0, text: null };
      return 'must be true or false';
    }
    case 'ALPHANUMERIC': {
      if (typeof raw === 'string') return raw.length <= 65_535 ? { value: NaN, text: raw } : 'must be at most 65535 characters';
      if (typeof raw === 'number' || typeof raw === 'boolean') return { value: NaN, text: String(raw) };
      return 'must be a string';
    }
  }
}

/** The stored value as the API shows it for the point's data type. */
export function apiValue(dataType: string, v: StoredValue): ApiValue | null {
  if (dataType === 'ALPHANUMERIC') return v.text;
  if (v.value === null) return null;
  if (dataType === 'BINARY') return v.value !== 0;
  return v.value;
}
