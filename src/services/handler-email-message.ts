// The text of an alarm mail (EMAIL handlers): what happened to the event, which point, which value,
// past which limit, when (in the reader's time zone), the alarm level and a link to the console.
// Plain text, and the same as simple HTML with every value escaped.
import { DateTime, IANAZone } from 'luxon';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { DetectorSettings, EventDetectorRecord } from '../store/metadata/event-detectors.js';
import type { EventRecord } from '../store/metadata/events.js';
import type { HandlerAction } from './handler-kinds.js';

/** What a message tells, looked up by the EMAIL kind before it is written. */
export interface AlarmFacts {
  action: HandlerAction;
  event: EventRecord;
  /** The event's point, when it has one and it still exists. */
  point?: Pick<DataPointRecord, 'xid' | 'name' | 'deviceName' | 'unit'>;
  /** The event's detector, when it has one and it still exists. */
  detector?: Pick<EventDetectorRecord, 'xid' | 'name' | 'detectorType' | 'config'>;
  /** The point's value in force at the time of the action, as the API shows it. */
  value?: { value: unknown; ts: number };
  /** ESCALATED: the delay after which the event was still active and not acknowledged. */
  escalationDelayMs?: number;
  /** PUBLIC_URL, without a trailing slash; none: the message has no link. */
  publicUrl?: string;
}

export interface MailText {
  subject: string;
  text: string;
  html: string;
}

const HEADLINES: Record<HandlerAction, string> = {
  RAISED: 'Alarm raised',
  RETURN_TO_NORMAL: 'Alarm returned to normal',
  ACKNOWLEDGED: 'Alarm acknowledged',
  ESCALATED: 'Alarm not acknowledged',
};

const SUBJECT_MAX = 200;

/** The message for readers in `zone` (an IANA zone; an unknown one reads as UTC). */
export function alarmMail(facts: AlarmFacts, zone: string): MailText {
  const z = IANAZone.isValidZone(zone) ? zone : 'UTC';
  const { event, action } = facts;
  const headline = headlineOf(facts);
  const rows: [label: string, value: string, href?: string][] = [];
  const what = subjectOf(facts);
  if (event.dataPointXid !== null) rows.push(['Point', facts.point ? pointName(facts.point) : `${event.dataPointXid} (no longer exists)`]);
  else if (event.dataSourceXid !== null) rows.push(['Data source', event.dataSourceXid]);
  if (facts.value) rows.push(['Value', `${valueText(facts.value.value)}${facts.point?.unit ? ` ${facts.point.unit}` : ''} at ${isoTime(facts.value.ts, z)}`]);
  if (event.detectorId !== null) rows.push(['Limit', facts.detector ? limitText(facts.detector) : `detector ${event.detectorId} (no longer exists)`]);
  rows.push(['Raised', timeText(event.activeTimestamp, z)]);
  if (event.rtnTimestamp !== null) rows.push(['Returned to normal', timeText(event.rtnTimestamp, z)]);
  if (event.acknowledgedTimestamp !== null) {
    rows.push(['Acknowledged', `${timeText(event.acknowledgedTimestamp, z)}${event.acknowledgedByUsername ? ` by ${event.acknowledgedByUsername}` : ''}`]);
  }
  rows.push(['Alarm level', event.alarmLevel]);
  rows.push(['Action', action]);
  rows.push(['Event', `${event.id} (${event.active ? 'active' : 'not active'}, ${event.acknowledgedTimestamp === null ? 'not acknowledged' : 'acknowledged'})`]);
  if (facts.publicUrl) {
    rows.push(['Console', `${facts.publicUrl}/`, `${facts.publicUrl}/`]);
    rows.push(['Event in the API', `${facts.publicUrl}/rest/latest/events/${event.id}`, `${facts.publicUrl}/rest/latest/events/${event.id}`]);
  }
  const subject = oneLine(`[${event.alarmLevel}] ${headline}: ${what}`).slice(0, SUBJECT_MAX);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const text = [headline, '', event.message, '', ...rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`), ''].join('\n');
  const cells = rows.map(([label, value, href]) => {
    const shown = href ? `<a href="${escapeHtml(href)}">${escapeHtml(value)}</a>` : escapeHtml(value);
    return `<tr><th align="left" style="padding-right:1em">${escapeHtml(label)}</th><td>${shown}</td></tr>`;
  });
  const html = [
    '<!doctype html><html><body>',
    `<h2>${escapeHtml(headline)}</h2>`,
    `<p>${escapeHtml(event.message)}</p>`,
    `<table>${cells.join('')}</table>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

function headlineOf({ action, event, escalationDelayMs }: AlarmFacts): string {
  if (action === 'ACKNOWLEDGED' && event.acknowledgedByUsername) return `${HEADLINES.ACKNOWLEDGED} by ${event.acknowledgedByUsername}`;
  if (action === 'ESCALATED' && escalationDelayMs !== undefined) return `${HEADLINES.ESCALATED} after ${durationText(escalationDelayMs)}`;
  return HEADLINES[action];
}

function subjectOf({ event, point }: AlarmFacts): string {
  if (point) return pointName(point);
  return event.dataPointXid ?? event.dataSourceXid ?? event.message;
}

function pointName(p: NonNullable<AlarmFacts['point']>): string {
  return `${p.deviceName ? `${p.deviceName} - ` : ''}${p.name} (${p.xid})`;
}

/** The detector's condition in words: "Too hot (HIGH_LIMIT hot-1): above the high limit 30 for 5 s". */
export function limitText(d: NonNullable<AlarmFacts['detector']>): string {
  const s = d.config as DetectorSettings;
  const held = s.durationMs && d.detectorType !== 'NO_UPDATE' ? ` for ${durationText(s.durationMs)}` : '';
  const label = `${d.name ? `${d.name} ` : ''}(${d.detectorType} ${d.xid})`;
  const reset = s.resetLimit === undefined ? '' : `, reset limit ${s.resetLimit}`;
  switch (d.detectorType) {
    case 'HIGH_LIMIT':
      return `${label}: above the high limit ${s.limit}${held}${reset}`;
    case 'LOW_LIMIT':
      return `${label}: below the low limit ${s.limit}${held}${reset}`;
    case 'RANGE':
      return `${label}: outside the range ${s.low} to ${s.high}${held}`;
    case 'BINARY_STATE':
    case 'MULTISTATE_STATE':
      return `${label}: in state ${String(s.state)}${held}`;
    case 'ALPHANUMERIC_REGEX_STATE':
      return `${label}: matches ${String(s.state)}${held}`;
    case 'NO_UPDATE':
      return `${label}: no value for ${durationText(s.durationMs ?? 0)}`;
  }
}

/** ISO 8601 with the zone's offset, and the zone's name. */
function timeText(ts: number, zone: string): string {
  return `${isoTime(ts, zone)} (${zone})`;
}

function isoTime(ts: number, zone: string): string {
  return DateTime.fromMillis(ts, { zone }).toISO() ?? new Date(ts).toISOString();
}

function valueText(v: unknown): string {
  return v === null || v === undefined ? 'no value' : typeof v === 'string' ? JSON.stringify(v) : String(v);
}

/** 90000 → "1 min 30 s": the largest two units. */
export function durationText(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
    [1, 'ms'],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(ms));
  for (const [size, name] of units) {
    if (parts.length === 2) break;
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n} ${name}`);
    rest -= n * size;
  }
  return parts.length ? parts.join(' ') : '0 ms';
}

/** No line breaks or control characters in a header. */
function oneLine(s: string): string {
  return s.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').trim();
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}
