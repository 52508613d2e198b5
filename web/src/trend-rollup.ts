// The automatic rollup of a trend: raw values while each point has no more values in the range than
// the plot has pixels across, else one period per few pixels, on a "round" step (5 s, 1 min, 15 min,
// 6 h …) so period starts fall on clock boundaries. Zooming in therefore ends in raw values and
// zooming out in coarser periods, whatever the range.

export interface Rollup {
  rollup: string;
  timePeriodType?: string;
  timePeriods?: number;
}

/** Pixels per rolled-up period: fine enough to show the shape, coarse enough to stay fast. */
export const PX_PER_PERIOD = 4;

const STEPS: [ms: number, type: string, periods: number][] = [
  [1_000, 'SECONDS', 1],
  [2_000, 'SECONDS', 2],
  [5_000, 'SECONDS', 5],
  [10_000, 'SECONDS', 10],
  [15_000, 'SECONDS', 15],
  [30_000, 'SECONDS', 30],
  [60_000, 'MINUTES', 1],
  [2 * 60_000, 'MINUTES', 2],
  [5 * 60_000, 'MINUTES', 5],
  [10 * 60_000, 'MINUTES', 10],
  [15 * 60_000, 'MINUTES', 15],
  [30 * 60_000, 'MINUTES', 30],
  [3_600_000, 'HOURS', 1],
  [2 * 3_600_000, 'HOURS', 2],
  [3 * 3_600_000, 'HOURS', 3],
  [6 * 3_600_000, 'HOURS', 6],
  [12 * 3_600_000, 'HOURS', 12],
  [86_400_000, 'DAYS', 1],
  [7 * 86_400_000, 'DAYS', 7],
  [30 * 86_400_000, 'DAYS', 30],
];

/**
 * The rollup for `span` ms drawn `plotWidth` px wide when the busiest point has `mostValues` values in
 * it. `numeric`: all points are numeric (time-weighted AVERAGE); otherwise LAST, which every type takes.
 */
export function rollupFor(span: number, plotWidth: number, mostValues: number, numeric: boolean): Rollup {
  const width = Math.max(100, Math.floor(plotWidth));
  if (mostValues <= width) return { rollup: 'NONE' };
  const periods = width / PX_PER_PERIOD;
  const step = STEPS.find(([ms]) => span / ms <= periods) ?? STEPS[STEPS.length - 1]!;
  return { rollup: numeric ? 'AVERAGE' : 'LAST', timePeriodType: step[1], timePeriods: step[2] };
}
