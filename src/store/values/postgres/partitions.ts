// Monthly (UTC) range partitions of point_values: which month a timestamp falls in, the month's
// bounds and its partition's name. Any instant a Date can hold (±8.64e15 ms, years −271821 to
// 275760) has a month here, so no DEFAULT partition is needed. Date.UTC cannot be used for the
// bounds: it returns NaN past ±8.64e15, and the month after the last instant starts beyond it.

/** A month as one integer: year × 12 + month (0-based), so consecutive months differ by one. */
export type MonthIndex = number;

const DAY_MS = 86_400_000;

/** Days from 1970-01-01 to the given proleptic Gregorian date (month 1–12), for any year. */
function daysFromCivil(year: number, month: number, day: number): number {
  // Howard Hinnant's days_from_civil: exact integer arithmetic, no Date involved.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The month (UTC) holding ts, which must be within ±8.64e15. */
export function monthOf(ts: number): MonthIndex {
  const d = new Date(ts);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

/** The first instant (epoch ms) of a month. */
export function monthStart(month: MonthIndex): number {
  const year = Math.floor(month / 12);
  return daysFromCivil(year, month - year * 12 + 1, 1) * DAY_MS;
}

/**
 * The partition of a month: point_values_p197001, point_values_p27576009; a year before 0 is
 * written with n instead of p (point_values_n27182104). The last two digits are always the month,
 * so every month has its own name.
 */
export function partitionName(table: string, month: MonthIndex): string {
  const year = Math.floor(month / 12);
  const mm = String(month - year * 12 + 1).padStart(2, '0');
  return `${table}_${year < 0 ? 'n' : 'p'}${String(Math.abs(year)).padStart(4, '0')}${mm}`;
}

/** The months a set of timestamps falls in; consecutive rows in one month cost one comparison. */
export function monthsOf(ts: ArrayLike<number>, length = ts.length): Set<MonthIndex> {
  const months = new Set<MonthIndex>();
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < length; i++) {
    const t = ts[i]!;
    if (t >= lo && t < hi) continue;
    const m = monthOf(t);
    months.add(m);
    lo = monthStart(m);
    hi = monthStart(m + 1);
  }
  return months;
}

/** CREATE TABLE for a month's partition; the bounds are integers we computed, so spliced in. */
export function createPartitionSql(table: string, month: MonthIndex): string {
  const from = monthStart(month);
  const to = monthStart(month + 1);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new RangeError(`no partition bounds for month ${month}`);
  return `CREATE TABLE IF NOT EXISTS ${partitionName(table, month)} PARTITION OF ${table} FOR VALUES FROM (${from}) TO (${to})`;
}

/** The month of a partition name made by partitionName, or undefined for any other name. */
export function monthOfPartition(table: string, name: string): MonthIndex | undefined {
  const match = new RegExp(`^${table}_([pn])(\\d{4,})(\\d\\d)$`).exec(name);
  if (!match) return undefined;
  const year = Number(match[2]) * (match[1] === 'n' ? -1 : 1);
  const month = year * 12 + Number(match[3]) - 1;
  // Month 00 or 13, a year −0 or a year with one leading zero too many match too: not names of ours.
  return partitionName(table, month) === name ? month : undefined;
}
