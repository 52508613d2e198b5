// Where a value stands, for the points list and the watch lists: the value written by its point's
// text renderer (the service's own rule, src/core/text-renderer.ts, bundled here so the console and
// the API's RENDERED field agree), the time it was taken, and whether it is stale.
//
// Stale: a value that should have been replaced by now.
// - Sources that poll on a period (VIRTUAL, MODBUS_IP, BACNET_IP): the newest value is older than
//   3 update periods, and at least 10 s (a poll answering late or a busy browser is not staleness).
//   Every poll gives a new value even when logging does not store it (the live values show them all).
// - Sources whose values are pushed or computed (MQTT_CLIENT and Sparkplug B, LINE_PROTOCOL, META,
//   OPC_UA's subscriptions, BACNET_IP with covSubscribe) and VIRTUAL points of change type NO_CHANGE
//   (they hold what is set): a value comes when it changes, so an old value may be the current one;
//   age alone says nothing. Such a value is stale only when nothing can bring a new one: its source is
//   disabled or not RUNNING (stopped, in ERROR). A lost connection marks the points unreliable instead.
// - Any source disabled or not RUNNING makes its points' values stale, whatever their age.
import { renderValue, type TextRenderer } from '../../src/core/text-renderer.js';
import { periodMs } from '../../src/core/time.js';
import type { DataSource, PointValue } from './api.js';

/** How many update periods a polled value may miss before it is stale, and the least age that is. */
export const STALE_PERIODS = 3;
export const STALE_MIN_MS = 10_000;

/** Types whose values are collected on a period (as editors.ts's source form shows the period). */
const POLLED = new Set(['VIRTUAL', 'MODBUS_IP', 'BACNET_IP']);

/** What the list needs of a point's source to judge its values. */
export interface SourceNote {
  /** Age past which a value is stale; undefined: age alone never is (pushed values). */
  staleAfterMs?: number;
  /** Why every value of the source is stale now (disabled, not running); undefined: none. */
  down?: string;
  /** How the source gets values, for the stale mark's title. */
  cadence: string;
}

/** `changeType`: the point's (a VIRTUAL NO_CHANGE point is never polled for a new value). */
export function sourceNote(ds: DataSource | undefined, changeType?: string): SourceNote {
  if (!ds) return { cadence: 'source unknown' };
  const down = !ds.enabled ? 'its source is disabled' : ds.state !== 'RUNNING' ? `its source is ${ds.state}` : undefined;
  // The service's one table of period lengths (src/core/time.ts, bundled here).
  const period = periodMs({ periods: ds.updatePeriods, type: ds.updatePeriodType });
  const polled = POLLED.has(ds.modelType) && ds.covSubscribe !== true && !(ds.modelType === 'VIRTUAL' && changeType === 'NO_CHANGE');
  if (polled && period !== undefined) {
    return { staleAfterMs: Math.max(STALE_PERIODS * period, STALE_MIN_MS), down, cadence: `polled every ${duration(period)}` };
  }
  return { down, cadence: 'sent when it changes' };
}

/** Why a value of `timestamp` is stale at `now`; undefined while it is not. */
export function staleReason(note: SourceNote | undefined, timestamp: number, now = Date.now()): string | undefined {
  if (!note) return undefined;
  if (note.down) return `Stale: ${note.down}`;
  if (note.staleAfterMs !== undefined && now - timestamp > note.staleAfterMs) return `Stale: no new value for ${duration(now - timestamp)} (${note.cadence})`;
  return undefined;
}

/** A length of time in the largest unit that reads well: "800 ms", "12 s", "5 min", "3 h", "2 d". */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/** The point's value as its renderer writes it, with its unit. */
export function formatPointValue(value: PointValue['value'], point: { unit?: string; textRenderer?: TextRenderer }): string {
  return renderValue(value, point.textRenderer, point.unit ?? '');
}

/** When a value was taken, shown beside it: the time of day today, else the date and time. */
export function formatValueTime(timestamp: number, now = Date.now()): string {
  const when = new Date(timestamp);
  const today = new Date(now).toDateString() === when.toDateString();
  return today ? when.toLocaleTimeString() : when.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}
