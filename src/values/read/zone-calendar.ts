// Calendar steps in an IANA zone with luxon's `DateTime.plus` semantics (month ends clamp, a skipped
// local time moves forward, a repeated one keeps the starting offset), without a DateTime per step:
// luxon takes ~17 µs a step and a rollup may ask for a million periods. Same algorithm as luxon
// (adjustTime, fixOffset, IANAZone.offset), on a cached Intl formatter; tests compare the two.
import { DateTime } from 'luxon';

export type CalendarUnit = 'days' | 'weeks' | 'months' | 'years';

/** Epoch ms → the zone's offset from UTC in minutes (luxon's IANAZone.offset, ~1 µs). */
export type OffsetFunction = (ts: number) => number;

/** `from` plus k units in the zone (k ≥ 0), as `DateTime.fromMillis(from, { zone }).plus({ [unit]: k })`. */
export function calendarSteps(from: number, zone: string, unit: CalendarUnit): (k: number) => number {
  const start = DateTime.fromMillis(from, { zone });
  if (!start.isValid) throw new RangeError(`Invalid instant or time zone: ${from} in ${zone}`);
  const { year, month, day, hour, minute, second, millisecond } = start;
  const startOffset = start.offset;
  const offsetAt = offsetFunction(zone);
  return (k) => {
    let y: number = year;
    let m: number = month;
    let d: number = day;
    if (unit === 'years') {
      y += k;
      d = Math.min(day, daysInMonth(y, m));
    } else if (unit === 'months') {
      m += k;
      d = Math.min(day, daysInMonth(y, m));
    } else {
      d += unit === 'weeks' ? 7 * k : k;
    }
    return instantOf(localTs(y, m, d, hour, minute, second, millisecond), startOffset, offsetAt);
  };
}

const WALL_CLOCK = /(\d+)\/(\d+)\/(\d+) (AD|BC),? (\d+):(\d+):(\d+)/;
const formatters = new Map<string, Intl.DateTimeFormat>();
// Zone names come from requests (any letter case is valid): bound the cache.
const MAX_FORMATTERS = 256;

export function offsetFunction(zone: string): OffsetFunction {
  let formatter = formatters.get(zone);
  if (!formatter) {
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  const format = formatter;
  return (ts) => {
    // Outside Date's range, as luxon does.
    if (!(Math.abs(ts) <= 8.64e15)) return NaN;
    const wall = WALL_CLOCK.exec(format.format(ts));
    if (!wall) throw new Error(`Unexpected wall-clock format in ${zone}`);
    const year = wall[4] === 'BC' ? 1 - Number(wall[3]) : Number(wall[3]);
    const hour = Number(wall[5]);
    const asUtc = localTs(year, Number(wall[1]), Number(wall[2]), hour === 24 ? 0 : hour, Number(wall[6]), Number(wall[7]), 0);
    const wholeSecond = ts - (((ts % 1000) + 1000) % 1000);
    return (asUtc - wholeSecond) / 60_000;
  };
}

/** Epoch ms of a local wall-clock time ("local ms"), guessing the offset first (luxon's fixOffset). */
function instantOf(local: number, guess: number, offsetAt: OffsetFunction): number {
  let utc = local - guess * 60_000;
  const o2 = offsetAt(utc);
  if (o2 === guess) return utc;
  utc -= (o2 - guess) * 60_000;
  const o3 = offsetAt(utc);
  if (o3 === o2) return utc;
  // A skipped local time: keep the wall-clock distance, i.e. move forward by the gap.
  return local - Math.min(o2, o3) * 60_000;
}

/** Wall-clock fields read as if UTC; months and days may overflow (luxon's objToLocalTS). */
function localTs(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (year < 0 || year >= 100) return t;
  // Date.UTC reads years 0–99 as 19xx.
  const d = new Date(t);
  d.setUTCFullYear(year, month - 1, day);
  return d.getTime();
}

function daysInMonth(year: number, month: number): number {
  const m = ((((month - 1) % 12) + 12) % 12) + 1;
  const y = year + (month - m) / 12;
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}
