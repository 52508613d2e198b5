// Per-period statistics of one series, column by column: period i is [start(i), end(i)). Numeric
// columns are typed arrays; stored values (non-numeric points) are kept only for first/last/start.
import type { StoredValue } from '../../store/values/types.js';

/** A value as stored: `text` for ALPHANUMERIC, else `value`. */
export type StoredScalar = number | string | null;

export function storedScalar(v: StoredValue): StoredScalar {
  return v.text !== null ? v.text : v.value;
}

/** A NUMERIC point rolls up as numbers; the others (BINARY, MULTISTATE, ALPHANUMERIC) as values as stored. */
export function rollsUpNumbers(dataType: string): boolean {
  return dataType === 'NUMERIC';
}

export class RollupResult {
  /** Number of periods. */
  readonly length: number;
  /** Values inside the period. */
  readonly count: Float64Array;
  readonly firstTs: Float64Array;
  readonly lastTs: Float64Array;
  /** 1 when a value was in force at the period start (the newest with ts <= start). */
  readonly hasStart: Uint8Array;

  // Numeric points only (empty otherwise). Entries without data are NaN.
  readonly sum: Float64Array;
  /** Over the inside values and the start value. */
  readonly minimum: Float64Array;
  readonly maximum: Float64Array;
  readonly first: Float64Array;
  readonly last: Float64Array;
  readonly startValue: Float64Array;
  /** ∫ value dt over the in-force window, in value × ms. */
  readonly integralMs: Float64Array;
  /** Length of the in-force window, ms. */
  readonly inForceMs: Float64Array;

  // Non-numeric points only (empty otherwise).
  readonly firstStored: StoredScalar[];
  readonly lastStored: StoredScalar[];
  readonly startStored: StoredScalar[];

  constructor(
    readonly bounds: Float64Array,
    readonly numeric: boolean,
  ) {
    const n = bounds.length - 1;
    const numericLength = numeric ? n : 0;
    const storedLength = numeric ? 0 : n;
    this.length = n;
    this.count = new Float64Array(n);
    this.firstTs = new Float64Array(n);
    this.lastTs = new Float64Array(n);
    this.hasStart = new Uint8Array(n);
    this.sum = new Float64Array(numericLength);
    this.minimum = new Float64Array(numericLength);
    this.maximum = new Float64Array(numericLength);
    this.first = new Float64Array(numericLength);
    this.last = new Float64Array(numericLength);
    this.startValue = new Float64Array(numericLength);
    this.integralMs = new Float64Array(numericLength);
    this.inForceMs = new Float64Array(numericLength);
    this.firstStored = new Array<StoredScalar>(storedLength).fill(null);
    this.lastStored = new Array<StoredScalar>(storedLength).fill(null);
    this.startStored = new Array<StoredScalar>(storedLength).fill(null);
  }

  /** Start of period i (inclusive). */
  start(i: number): number {
    return this.bounds[i] as number;
  }

  /** End of period i (exclusive). */
  end(i: number): number {
    return this.bounds[i + 1] as number;
  }
}
