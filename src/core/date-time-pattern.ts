// Timestamps as text by a Java DateTimeFormatter pattern (what Mango's `dateTimeFormat` is), for the
// common subset: years, months, days, weekdays, hours, minutes, seconds, fractions, AM/PM, offsets
// and zone ids, quoted literals. A pattern is compiled once per request; anything outside the
// subset is refused by name rather than printed wrongly. "ISO" (this service's own name) is ISO 8601
// with milliseconds and the zone's offset (Z for UTC).
import { IANAZone } from 'luxon';

/** Epoch ms → text in the zone of the compiled pattern. */
export type TimestampFormatter = (ms: number) => string;

export class DateTimePatternError extends Error {}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** The local fields of one instant, computed once and shared by a pattern's parts. */
interface Local {
  ms: number;
  /** UTC fields of (instant + offset): the wall clock in the zone. */
  wall: Date;
  /** Offset from UTC in minutes. */
  offset: number;
}

type Part = (t: Local, zone: IANAZone) => string;

const pad = (n: number, width: number): string => {
  const text = String(Math.abs(n)).padStart(width, '0');
  return n < 0 ? `-${text}` : text;
};

function number(count: number, max: number, of: (t: Local) => number, letter: string): Part {
  if (count > max) throw new DateTimePatternError(`too many pattern letters: ${letter.repeat(count)}`);
  return (t) => pad(of(t), count);
}

function year(count: number): Part {
  if (count === 2) return (t) => pad(((t.wall.getUTCFullYear() % 100) + 100) % 100, 2);
  // Java prints a sign when a padded year of 4 or more letters has more digits than letters.
  return (t) => {
    const y = t.wall.getUTCFullYear();
    const text = pad(y, count);
    return count >= 4 && y > 0 && String(y).length > count ? `+${text}` : text;
  };
}

function month(count: number): Part {
  if (count <= 2) return (t) => pad(t.wall.getUTCMonth() + 1, count);
  if (count === 3) return (t) => MONTHS[t.wall.getUTCMonth()]!.slice(0, 3);
  if (count === 4) return (t) => MONTHS[t.wall.getUTCMonth()]!;
  if (count === 5) return (t) => MONTHS[t.wall.getUTCMonth()]!.slice(0, 1);
  throw new DateTimePatternError('too many pattern letters: M');
}

function weekday(count: number): Part {
  if (count <= 3) return (t) => WEEKDAYS[t.wall.getUTCDay()]!.slice(0, 3);
  if (count === 4) return (t) => WEEKDAYS[t.wall.getUTCDay()]!;
  if (count === 5) return (t) => WEEKDAYS[t.wall.getUTCDay()]!.slice(0, 1);
  throw new DateTimePatternError('too many pattern letters: E');
}

function fraction(count: number): Part {
  if (count > 9) throw new DateTimePatternError('too many pattern letters: S');
  return (t) => {
    const millis = pad(((t.ms % 1000) + 1000) % 1000, 3);
    return count <= 3 ? millis.slice(0, count) : millis.padEnd(count, '0');
  };
}

/** +HH, +HHMM or +HH:MM (minutes only when not zero for the one-letter form); `zero` for no offset. */
function offsetText(offset: number, style: 'H' | 'HHMM' | 'HH:MM', zero: string | undefined): string {
  if (offset === 0 && zero !== undefined) return zero;
  const sign = offset < 0 ? '-' : '+';
  const hours = pad(Math.trunc(Math.abs(offset) / 60), 2);
  // Whole minutes: a local mean time's offset has seconds, which these forms leave out (as Java's do).
  const minutes = pad(Math.trunc(Math.abs(offset) % 60), 2);
  if (style === 'H') return minutes === '00' ? `${sign}${hours}` : `${sign}${hours}${minutes}`;
  return style === 'HHMM' ? `${sign}${hours}${minutes}` : `${sign}${hours}:${minutes}`;
}

function localizedOffset(offset: number, full: boolean): string {
  if (offset === 0) return 'GMT';
  const sign = offset < 0 ? '-' : '+';
  const hours = Math.trunc(Math.abs(offset) / 60);
  const minutes = Math.trunc(Math.abs(offset) % 60);
  if (full) return `GMT${sign}${pad(hours, 2)}:${pad(minutes, 2)}`;
  return minutes === 0 ? `GMT${sign}${hours}` : `GMT${sign}${hours}:${pad(minutes, 2)}`;
}

function offsetPart(letter: 'X' | 'x' | 'Z' | 'O', count: number): Part {
  const zero = letter === 'X' ? 'Z' : undefined;
  if (letter === 'O') {
    if (count !== 1 && count !== 4) throw new DateTimePatternError('pattern letter O takes 1 or 4 letters');
    return (t) => localizedOffset(t.offset, count === 4);
  }
  if (letter === 'Z') {
    if (count <= 3) return (t) => offsetText(t.offset, 'HHMM', undefined);
    if (count === 4) return (t) => localizedOffset(t.offset, true);
    if (count === 5) return (t) => offsetText(t.offset, 'HH:MM', 'Z');
    throw new DateTimePatternError('too many pattern letters: Z');
  }
  if (count === 1) return (t) => offsetText(t.offset, 'H', zero);
  if (count === 2 || count === 4) return (t) => offsetText(t.offset, 'HHMM', zero);
  if (count === 3 || count === 5) return (t) => offsetText(t.offset, 'HH:MM', zero);
  throw new DateTimePatternError(`too many pattern letters: ${letter}`);
}

/** One run of a pattern letter (`yyyy` is y × 4). */
function letterPart(letter: string, count: number): Part {
  switch (letter) {
    case 'y':
    case 'u':
      return year(count);
    case 'M':
    case 'L':
      return month(count);
    case 'd':
      return number(count, 2, (t) => t.wall.getUTCDate(), letter);
    case 'D':
      return number(count, 3, (t) => Math.floor((t.wall.getTime() - Date.UTC(t.wall.getUTCFullYear(), 0, 1)) / 86_400_000) + 1, letter);
    case 'E':
      return weekday(count);
    case 'Q':
    case 'q':
      if (count === 3) return (t) => `Q${Math.floor(t.wall.getUTCMonth() / 3) + 1}`;
      return number(count, 2, (t) => Math.floor(t.wall.getUTCMonth() / 3) + 1, letter);
    case 'a':
      if (count !== 1) throw new DateTimePatternError('too many pattern letters: a');
      return (t) => (t.wall.getUTCHours() < 12 ? 'AM' : 'PM');
    case 'H':
      return number(count, 2, (t) => t.wall.getUTCHours(), letter);
    case 'k':
      return number(count, 2, (t) => t.wall.getUTCHours() || 24, letter);
    case 'h':
      return number(count, 2, (t) => t.wall.getUTCHours() % 12 || 12, letter);
    case 'K':
      return number(count, 2, (t) => t.wall.getUTCHours() % 12, letter);
    case 'm':
      return number(count, 2, (t) => t.wall.getUTCMinutes(), letter);
    case 's':
      return number(count, 2, (t) => t.wall.getUTCSeconds(), letter);
    case 'S':
      return fraction(count);
    case 'A':
      return number(count, 19, (t) => ((t.ms % 86_400_000) + 86_400_000 + t.offset * 60_000) % 86_400_000, letter);
    case 'X':
    case 'x':
    case 'Z':
    case 'O':
      return offsetPart(letter, count);
    case 'V':
      if (count !== 2) throw new DateTimePatternError('pattern letter V takes exactly 2 letters (VV: the zone id)');
      return (_t, zone) => zone.name;
    case 'z':
      if (count > 4) throw new DateTimePatternError('too many pattern letters: z');
      return (t, zone) => zone.offsetName(t.ms, { format: count === 4 ? 'long' : 'short', locale: 'en-US' }) ?? zone.name;
    default:
      throw new DateTimePatternError(`pattern letter ${letter} is not supported (supported: y u M L d D E Q q a H k h K m s S A X x Z O VV z, 'quoted text')`);
  }
}

/** Splits a pattern into parts: letter runs, quoted text, other characters as they are. */
function compileParts(pattern: string): Part[] {
  const parts: Part[] = [];
  let i = 0;
  const literal = (text: string) => parts.push(() => text);
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        literal("'");
        i += 2;
        continue;
      }
      let text = '';
      let j = i + 1;
      for (;;) {
        if (j >= pattern.length) throw new DateTimePatternError('a quoted text is not closed');
        if (pattern[j] === "'") {
          if (pattern[j + 1] === "'") {
            text += "'";
            j += 2;
            continue;
          }
          break;
        }
        text += pattern[j];
        j++;
      }
      literal(text);
      i = j + 1;
    } else if (/[A-Za-z]/.test(c)) {
      let j = i;
      while (pattern[j] === c) j++;
      parts.push(letterPart(c, j - i));
      i = j;
    } else if ('[]{}#'.includes(c)) {
      throw new DateTimePatternError(`${c} (optional sections and reserved characters) is not supported`);
    } else {
      literal(c);
      i++;
    }
  }
  return parts;
}

/** ISO 8601 with milliseconds and the zone's offset, Z for UTC. */
export const ISO_PATTERN = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX";

/** Compiles `pattern` ("ISO" or a Java DateTimeFormatter pattern) for `zone`; throws DateTimePatternError. */
export function compileDateTimePattern(pattern: string, zone: string): TimestampFormatter {
  const iana = IANAZone.create(zone);
  if (!iana.isValid) throw new DateTimePatternError(`unknown time zone ${zone}`);
  const parts = compileParts(pattern === 'ISO' ? ISO_PATTERN : pattern);
  if (parts.length === 0) throw new DateTimePatternError('the pattern is empty');
  const offsetAt = zoneOffsets(iana);
  const general: TimestampFormatter = (ms) => {
    const offset = offsetAt(ms);
    const t: Local = { ms, wall: new Date(ms + offset * 60_000), offset };
    let text = '';
    for (const part of parts) text += part(t, iana);
    return text;
  };
  return pattern === 'ISO' ? isoFormatter(offsetAt, general) : general;
}

/** Wall-clock years whose ISO text Date#toISOString writes exactly as the pattern does (4 digits). */
const ISO_FAST_FROM = Date.UTC(1000, 0, 1) + 86_400_000;
const ISO_FAST_TO = Date.UTC(9999, 11, 31) - 86_400_000;

/**
 * ISO 8601 from the wall clock's day (its date text kept while the day lasts) and the time of day by
 * arithmetic: the pattern's output, several times cheaper, for a history of millions of values.
 * Years outside 1000–9999 and offsets with seconds (local mean times) take the pattern.
 */
function isoFormatter(offsetAt: (ms: number) => number, general: TimestampFormatter): TimestampFormatter {
  let day = Number.NaN;
  let date = '';
  let suffixOffset = 0;
  let suffix = 'Z';
  return (ms) => {
    if (!(ms >= ISO_FAST_FROM && ms <= ISO_FAST_TO)) return general(ms);
    const offset = offsetAt(ms);
    if (!Number.isInteger(offset)) return general(ms);
    if (offset !== suffixOffset) {
      suffixOffset = offset;
      suffix = offset === 0 ? 'Z' : offsetText(offset, 'HH:MM', undefined);
    }
    const wall = ms + offset * 60_000;
    const d = Math.floor(wall / 86_400_000);
    if (d !== day) {
      day = d;
      date = new Date(d * 86_400_000).toISOString().slice(0, 11);
    }
    const t = wall - d * 86_400_000;
    const h = Math.trunc(t / 3_600_000);
    const m = Math.trunc(t / 60_000) % 60;
    const sec = Math.trunc(t / 1000) % 60;
    const milli = t % 1000;
    return `${date}${h < 10 ? '0' : ''}${h}:${m < 10 ? '0' : ''}${m}:${sec < 10 ? '0' : ''}${sec}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}${suffix}`;
  };
}

/** Width of the spans whose offset is remembered (a span a transition cuts is never remembered). */
const OFFSET_SPAN_MS = 900_000;

/**
 * The zone's offset (minutes) at an instant. Asking Intl costs microseconds, so the offset of the
 * last quarter hour asked is kept when it holds from its first to its last millisecond (a span a
 * transition cuts is asked per instant): a sorted series asks about once per 15 minutes of it.
 */
function zoneOffsets(iana: IANAZone): (ms: number) => number {
  if (iana.isUniversal) {
    const fixed = iana.offset(0);
    return () => fixed;
  }
  let span = Number.NaN;
  let spanOffset = 0;
  return (ms) => {
    const key = Math.floor(ms / OFFSET_SPAN_MS);
    if (key === span) return spanOffset;
    const offset = iana.offset(ms);
    const start = key * OFFSET_SPAN_MS;
    if (iana.offset(start) === offset && iana.offset(start + OFFSET_SPAN_MS - 1) === offset) {
      span = key;
      spanOffset = offset;
    }
    return offset;
  };
}
