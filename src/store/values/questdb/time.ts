// Timestamps between JS and QuestDB. QuestDB stores TIMESTAMP as microseconds since the epoch, UTC,
// and sends it over PG-wire as TIMESTAMP WITHOUT TIME ZONE, which pg would read in the local zone. So
// reads select cast(ts AS LONG) (epoch micros, an int8 that pg returns as a string) and convert with
// BigInt; bounds in SQL are literals (sql.ts tsLiteral), writes send µs (ilp.ts).
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

/** The start of the first bucket starting at or after ms. */
export function ceilToBucket(ms: number): number {
  return bucketCeil(ms) * BUCKET_MS;
}

export function floorToBucket(ms: number): number {
  return bucketOf(ms) * BUCKET_MS;
}
