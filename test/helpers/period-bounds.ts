// Every bound of a period plan in one array: the tests' view of planPeriods (the service reads the
// bounds a chunk at a time).
import { planPeriods, type PeriodSpec } from '../../src/values/read/periods.js';

/** Period starts followed by the end of the last period: n periods → n + 1 increasing numbers. */
export function allBounds(spec: PeriodSpec): Float64Array {
  return planPeriods(spec).chunks(Number.MAX_SAFE_INTEGER).next().value as Float64Array;
}
