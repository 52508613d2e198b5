// Sparkplug B as points see it: topics (spBv1.0/<group>/<type>/<edge node>[/<device>]), sequence
// numbers, metric types mapped to our data types, a metric's value read as a point's value and a
// point's value written as a metric. Pure code; the driver (sparkplug.ts) owns the connection, and
// the payloads are encoded and decoded by Eclipse Tahu's sparkplug-payload (loaded there, lazily).
import { createHash } from 'node:crypto';
import type { DataType } from '../store/metadata/data-points.js';
import { toPointValue, type Outcome, type PointValue, type Reading } from './mqtt-messages.js';

export const NAMESPACE = 'spBv1.0';

/** The message types a host application reads (commands and STATE are its own kind: ignored). */
export type MessageType = 'NBIRTH' | 'NDEATH' | 'NDATA' | 'DBIRTH' | 'DDEATH' | 'DDATA';
const READ_TYPES = new Set<string>(['NBIRTH', 'NDEATH', 'NDATA', 'DBIRTH', 'DDEATH', 'DDATA']);

export interface SparkplugTopic {
  group: string;
  type: MessageType;
  edge: string;
  /** Absent on node messages (N…). */
  device?: string;
}

/** The topic filter a source subscribes to: every message type of its group(s) and edge node(s). */
export function subscriptionFilter(groupId: string, edgeNodeId: string): string {
  return `${NAMESPACE}/${groupId || '+'}/+/${edgeNodeId || '+'}/#`;
}

/** A message's topic, or null when it is no node or device message (a command, STATE, malformed). */
export function parseTopic(topic: string): SparkplugTopic | null {
  const levels = topic.split('/');
  if (levels[0] !== NAMESPACE || !READ_TYPES.has(levels[2] ?? '')) return null;
  const [, group, type, edge, device] = levels as [string, string, MessageType, string, string | undefined];
  const deviceMessage = type.startsWith('D');
  if (!group || !edge || levels.length !== (deviceMessage ? 5 : 4) || (deviceMessage && !device)) return null;
  return deviceMessage ? { group, type, edge, device: device! } : { group, type, edge };
}

/** The topic of a command to an edge node (NCMD) or one of its devices (DCMD). */
export function commandTopic(group: string, edge: string, device?: string): string {
  return device === undefined ? `${NAMESPACE}/${group}/NCMD/${edge}` : `${NAMESPACE}/${group}/DCMD/${edge}/${device}`;
}

/** Sequence numbers count 0–255 and wrap. */
export function nextSeq(seq: number): number {
  return (seq + 1) % 256;
}

/** A protobuf integer (a number, or a Long for 64-bit fields) as a number. */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'object' && v !== null && 'toNumber' in v && typeof v.toNumber === 'function') return (v as { toNumber(): number }).toNumber();
  return undefined;
}

const INTEGER_TYPES = new Set(['Int8', 'Int16', 'Int32', 'Int64', 'UInt8', 'UInt16', 'UInt32', 'UInt64']);
const NUMBER_TYPES = new Set([...INTEGER_TYPES, 'Float', 'Double', 'DateTime']);
const TEXT_TYPES = new Set(['String', 'Text', 'UUID']);

/**
 * The data type a metric of this Sparkplug type gives a point made for it; null for the types no
 * point holds (DataSet, Template, Bytes, File, PropertySet, arrays, unknown).
 */
export function dataTypeFor(metricType: string | undefined): DataType | null {
  if (metricType === 'Boolean') return 'BINARY';
  if (metricType !== undefined && NUMBER_TYPES.has(metricType)) return 'NUMERIC';
  if (metricType !== undefined && TEXT_TYPES.has(metricType)) return 'ALPHANUMERIC';
  return null;
}

/**
 * A metric's value as a point's value: Boolean for BINARY, integers for NUMERIC or MULTISTATE,
 * Float/Double for NUMERIC, String/Text/UUID for ALPHANUMERIC (DateTime: epoch ms, a number).
 */
export function readMetric(dataType: DataType, metricType: string | undefined, raw: unknown): Reading {
  if (dataTypeFor(metricType) === null) return { error: `is of type ${metricType ?? 'unknown'}, which no point holds` };
  const value = toNumber(raw) ?? raw;
  if (metricType === 'Boolean' ? dataType !== 'BINARY' : dataType === 'BINARY') return { error: `is a ${metricType}, the point is ${dataType}` };
  if (TEXT_TYPES.has(metricType!) !== (dataType === 'ALPHANUMERIC')) return { error: `is a ${metricType}, the point is ${dataType}` };
  const reading = toPointValue(dataType, value);
  return 'error' in reading ? { error: `value ${reading.error}` } : reading;
}

/** The Sparkplug type a write uses when no BIRTH named the metric's: from the point's data type. */
const TYPE_OF_DATA_TYPE: Record<DataType, string> = { BINARY: 'Boolean', NUMERIC: 'Double', MULTISTATE: 'Int32', ALPHANUMERIC: 'String' };

/** The metric a write sends (name, type and value), or why the value does not fit the metric's type. */
export function commandMetric(name: string, metricType: string | undefined, dataType: DataType, value: PointValue): Outcome<{ name: string; type: string; value: PointValue; timestamp: number }> {
  const type = metricType && dataTypeFor(metricType) !== null ? metricType : TYPE_OF_DATA_TYPE[dataType];
  const typed = toPointValue(dataType, value);
  if ('error' in typed) return { error: `value ${typed.error}` };
  let v = typed.value;
  if (type === 'Boolean') v = v === true || v === 1;
  else if (TEXT_TYPES.has(type)) v = String(v);
  else if (typeof v !== 'number') return { error: `value is not a number (metric type ${type})` };
  else if (INTEGER_TYPES.has(type) && !Number.isSafeInteger(v)) return { error: `value ${v} is not an integer (metric type ${type})` };
  else if (type.startsWith('UInt') && v < 0) return { error: `value ${v} is negative (metric type ${type})` };
  return { value: { name, type, value: v, timestamp: Date.now() } };
}

/** Whether a metric is Sparkplug's own (session and control), for which no point is made. */
export function isControlMetric(name: string): boolean {
  return name === 'bdSeq' || name.startsWith('Node Control/') || name.startsWith('Device Control/');
}

const XID_MAX = 100;

/** `SPB_` + edge node, device and metric name joined by `_`; other characters as `_`; a digest when too long. */
export function createdPointXid(edge: string, device: string | undefined, metricName: string): string {
  const xid = ['SPB', edge, ...(device === undefined ? [] : [device]), metricName].join('_').replace(/[^A-Za-z0-9_.-]/g, '_');
  if (xid.length <= XID_MAX) return xid;
  return `${xid.slice(0, XID_MAX - 13)}_${createHash('sha256').update(xid).digest('hex').slice(0, 12)}`;
}
