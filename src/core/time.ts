// Instants in requests: ISO 8601 with an explicit offset, or epoch milliseconds. And lengths of
// periods ({periods, type}), the one table of them for durations and update periods.
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** Epoch ms, or undefined when the value is neither a zoned ISO 8601 date nor an integer. */
export function parseInstant(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  const text = value.trim();
  if (/^-?\d{1,16}$/.test(text)) return Number(text);
  if (!ISO_WITH_OFFSET.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Period types → milliseconds (months and years as 30 and 365 days: lengths of durations, not calendar steps). */
const PERIOD_MS: Record<string, number> = {
  MILLISECONDS: 1,
  SECONDS: 1_000,
  MINUTES: 60_000,
  HOURS: 3_600_000,
  DAYS: 86_400_000,
  WEEKS: 7 * 86_400_000,
  MONTHS: 30 * 86_400_000,
  YEARS: 365 * 86_400_000,
};

/** `{periods, type}` in milliseconds, or undefined when it is not one (left for validation to name). */
export function periodMs(period: unknown): number | undefined {
  if (period === null || typeof period !== 'object' || Array.isArray(period)) return undefined;
  const { periods, type } = period as { periods?: unknown; type?: unknown };
  const unit = typeof type === 'string' ? PERIOD_MS[type.toUpperCase()] : undefined;
  return unit !== undefined && typeof periods === 'number' ? periods * unit : undefined;
}

/** A data source's update period in milliseconds (its runtime's tick; a Mango sine's poll). */
export function updatePeriodMs(source: { updatePeriods: number; updatePeriodType: string }): number {
  return periodMs({ periods: source.updatePeriods, type: source.updatePeriodType }) ?? source.updatePeriods * PERIOD_MS.SECONDS!;
}
