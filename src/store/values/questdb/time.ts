// Timestamps between JS and QuestDB. QuestDB stores TIMESTAMP as microseconds since the epoch, UTC,
// and sends it over PG-wire as TIMESTAMP WITHOUT TIME ZONE, which pg would read in the local zone. So
// reads select cast(ts AS LONG) (epoch micros, an int8 that pg returns as a string) and convert with
// BigInt; bind parameters are ISO strings with microseconds and 'Z' ('2024-01-01T00:00:00.000000Z'),
// a format QuestDB parses as a timestamp.
import { bucketCeil, bucketOf } from '../aggregates.js';
import { BUCKET_MS, type TimeRange } from '../types.js';

/** Largest timestamp a bound is clamped to: 9999-12-31T23:59:59.999Z. */
export const MAX_TS_MS = 253_402_300_799_999;

/** What a designated timestamp can hold: from 1970 (never earlier) to the end of 9999. */
export const QUESTDB_TIME_RANGE: TimeRange = { min: 0, max: MAX_TS_MS };

/** Epoch micros (int8 text from pg, or bigint) → epoch ms, exactly (floor). */
export function microsToMs(us: string | number | bigint): number {
  const b = typeof us === 'bigint' ? us : BigInt(us);
  const q = b / 1000n;
  return Number(b < 0n && q * 1000n !== b ? q - 1n : q);
}

/** Epoch micros → the bind-parameter text QuestDB parses as a timestamp: 'YYYY-MM-DDTHH:mm:ss.ffffffZ'. */
export function microsParam(us: string | bigint): string {
  let b = typeof us === 'bigint' ? us : BigInt(us);
  if (b < 0n) b = 0n;
  const max = BigInt(MAX_TS_MS) * 1000n + 999n;
  if (b > max) b = max;
  const ms = b / 1000n;
  const rem = b - ms * 1000n;
  const iso = new Date(Number(ms)).toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ
  return `${iso.slice(0, -1)}${rem.toString().padStart(3, '0')}Z`;
}

/**
 * Epoch ms → a bound for `ts >= $n` / `ts < $n`. Stored timestamps are whole ms, so a fractional bound
 * rounds up (ts >= 1.5 ⇔ ts >= 2); bounds are clamped into QuestDB's designated-timestamp range.
 */
export function msParam(ms: number): string {
  if (Number.isNaN(ms)) throw new RangeError('timestamp bound is NaN');
  const whole = Math.min(MAX_TS_MS, Math.max(0, Math.ceil(ms)));
  return microsParam(BigInt(whole) * 1000n);
}

/** The start of the first bucket starting at or after ms. */
export function ceilToBucket(ms: number): number {
  return bucketCeil(ms) * BUCKET_MS;
}

export function floorToBucket(ms: number): number {
  return bucketOf(ms) * BUCKET_MS;
}
