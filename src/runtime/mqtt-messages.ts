// How MQTT messages map to point values and back: topic filters and routing, reading a payload
// (plain or at a jsonPath) as a point's data type, and the payload a write publishes ("publish" is
// MQTT's word here: sent to the broker). Pure code; the driver (mqtt.ts) owns the connection.
import { DEFAULT_JSON_MAX_DEPTH, pathBeyondDepth } from '../core/json.js';
import type { DataType } from '../store/metadata/data-points.js';

export type PointValue = number | boolean | string;

/** A result, or why there is none. */
export type Outcome<T> = { value: T } | { error: string };

/** A point value, or why the payload gives none. */
export type Reading = Outcome<PointValue>;

/** One step of a compiled jsonPath: an object key or an array index. */
export type PathStep = string | number;

/** Larger payloads are refused unread: one reading never needs that much, and parsing it costs. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;
/** The longest text an ALPHANUMERIC point stores. */
const MAX_TEXT = 65_535;
/** A write at a larger array index would publish a document of mostly nulls. */
const MAX_WRITE_INDEX = 1_000;
// Decimal notation only: Number() would also read "0x10", "0b11" and "".
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
const INTEGER = /^\s*[+-]?\d+\s*$/;
const TRUE_WORDS = new Set(['true', 'on', '1']);
const FALSE_WORDS = new Set(['false', 'off', '0']);

// ---- Topic filters

/** Why a topic filter cannot be subscribed to, or null when it can. */
export function topicFilterProblem(filter: string): string | null {
  if (filter.length === 0) return 'is empty';
  if (filter.includes('\u0000')) return 'contains a NUL character';
  if (Buffer.byteLength(filter) > 65_535) return 'is longer than 65535 bytes';
  const levels = filter.split('/');
  for (const [i, level] of levels.entries()) {
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) return "uses '#' other than as the whole last level";
    if (level.includes('+') && level !== '+') return "uses '+' other than as a whole level";
  }
  return null;
}

/** Whether a (valid) topic filter has wildcards, so that it names no single topic to publish to. */
export function hasWildcards(filter: string): boolean {
  return filter.split('/').some((level) => level === '+' || level === '#');
}

/** Whether a topic matches a (valid) topic filter, as the broker decides it. */
export function topicMatches(filter: string, topic: string): boolean {
  if (filter === topic) return true;
  const f = filter.split('/');
  const t = topic.split('/');
  // Wildcards in the first level never match topics starting with '$' (MQTT 3.1.1, 4.7.2).
  if (topic.startsWith('$') && (f[0] === '+' || f[0] === '#')) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true; // also matches the parent level: 'a/#' matches 'a'
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

/** Finds the items subscribed to a message's topic: exact topics by lookup, wildcard filters by matching. */
export class TopicRouter<T> {
  private readonly exact = new Map<string, T[]>();
  private readonly wildcard = new Map<string, T[]>();

  add(filter: string, item: T): void {
    const map = hasWildcards(filter) ? this.wildcard : this.exact;
    const items = map.get(filter);
    if (items) items.push(item);
    else map.set(filter, [item]);
  }

  /** The distinct filters to subscribe to. */
  filters(): string[] {
    return [...this.exact.keys(), ...this.wildcard.keys()];
  }

  /** Items in the order they were added per filter; exact topics first. */
  route(topic: string): T[] {
    const found = [...(this.exact.get(topic) ?? [])];
    for (const [filter, items] of this.wildcard) if (topicMatches(filter, topic)) for (const item of items) found.push(item);
    return found;
  }
}

// ---- jsonPath

/** Compiles `$.a.b`, `a.b`, `items[0].v` or `$` (the whole document) into steps; null when malformed. */
export function compileJsonPath(path: string): PathStep[] | null {
  const body = path.startsWith('$') ? path.slice(1) : path;
  const steps: PathStep[] = [];
  const step = /\.?([^.[\]]+)|\[(\d+)\]/y;
  while (step.lastIndex < body.length) {
    const m = step.exec(body);
    if (!m) return null;
    steps.push(m[1] ?? Number(m[2]));
  }
  return steps;
}

/** The value at the path, or undefined when the document has none there. */
export function valueAt(doc: unknown, steps: readonly PathStep[]): unknown {
  let current = doc;
  for (const step of steps) {
    // 'items.0' reads an array element too, as most path dialects allow.
    const index = typeof step === 'number' ? step : Array.isArray(current) && /^\d+$/.test(step) ? Number(step) : null;
    if (index !== null) {
      if (!Array.isArray(current) || index >= current.length) return undefined;
      current = current[index];
    } else if (isRecord(current) && Object.hasOwn(current, step)) {
      current = current[step as string];
    } else {
      return undefined;
    }
  }
  return current;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A jsonPath as the user wrote it, for messages. */
export function pathText(steps: readonly PathStep[]): string {
  return '$' + steps.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('');
}

// ---- Reading payloads

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A message's payload, decoded at most once however many points read it. */
export class Payload {
  private text: Outcome<string> | undefined;
  private doc: Outcome<unknown> | undefined;

  constructor(readonly bytes: Buffer) {}

  /** The payload as UTF-8 text. */
  asText(): Outcome<string> {
    this.text ??= decode(this.bytes);
    return this.text;
  }

  /** The payload as a JSON document. */
  asJson(): Outcome<unknown> {
    if (this.doc) return this.doc;
    const text = this.asText();
    if ('error' in text) return (this.doc = text);
    try {
      this.doc = { value: JSON.parse(text.value) as unknown };
    } catch {
      this.doc = { error: 'payload is not valid JSON' };
    }
    return this.doc;
  }
}

function decode(bytes: Buffer): Outcome<string> {
  if (bytes.length > MAX_PAYLOAD_BYTES) return { error: `payload of ${bytes.length} bytes is larger than ${MAX_PAYLOAD_BYTES} bytes` };
  try {
    return { value: utf8.decode(bytes) };
  } catch {
    return { error: 'payload is not UTF-8 text' };
  }
}

/**
 * Reads a point's value from a payload: the whole payload as plain text, or the JSON document's value
 * at the path. Null for an empty payload, which MQTT uses to clear a retained message: not a reading.
 */
export function readPayload(payload: Payload, dataType: DataType, path: readonly PathStep[] | null): Reading | null {
  if (payload.bytes.length === 0) return null;
  if (path === null) {
    const text = payload.asText();
    if ('error' in text) return text;
    const reading = toPointValue(dataType, text.value);
    return 'error' in reading ? { error: `payload ${reading.error}` } : reading;
  }
  const doc = payload.asJson();
  if ('error' in doc) return doc;
  const raw = valueAt(doc.value, path);
  if (raw === undefined) return { error: `payload has no value at ${pathText(path)}` };
  const reading = toPointValue(dataType, raw);
  return 'error' in reading ? { error: `value at ${pathText(path)} ${reading.error}` } : reading;
}

/**
 * A raw value (payload text, JSON value, or a value to write) as the data type's value. NUMERIC: a
 * number, decimal text, or a JSON boolean as 1/0; MULTISTATE: an integer; BINARY: a boolean, 1/0, or
 * the words true/false, on/off (any case); ALPHANUMERIC: text, or any other JSON value as its JSON text.
 */
export function toPointValue(dataType: DataType, raw: unknown): Reading {
  switch (dataType) {
    case 'NUMERIC': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'boolean' ? Number(raw) : typeof raw === 'string' && DECIMAL.test(raw) ? Number(raw) : NaN;
      return Number.isFinite(n) ? { value: n } : { error: 'is not a number' };
    }
    case 'MULTISTATE': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && INTEGER.test(raw) ? Number(raw) : NaN;
      return Number.isSafeInteger(n) ? { value: n } : { error: 'is not an integer' };
    }
    case 'BINARY': {
      if (typeof raw === 'boolean') return { value: raw };
      const word = typeof raw === 'number' || typeof raw === 'string' ? String(raw).trim().toLowerCase() : '';
      if (TRUE_WORDS.has(word)) return { value: true };
      if (FALSE_WORDS.has(word)) return { value: false };
      return { error: 'is not true/false, on/off or 1/0' };
    }
    case 'ALPHANUMERIC': {
      if (raw === null) return { error: 'is null' };
      // A device's document is bounded before JSON.stringify, which recurses, writes it.
      if (pathBeyondDepth(raw, DEFAULT_JSON_MAX_DEPTH)) return { error: `nests deeper than ${DEFAULT_JSON_MAX_DEPTH} levels` };
      const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
      return text.length <= MAX_TEXT ? { value: text } : { error: `is longer than ${MAX_TEXT} characters` };
    }
  }
}

// ---- Writing

/**
 * The payload a write publishes: the value as plain text (BINARY as true/false), or, with a path, a
 * JSON document holding the typed value at that path (`data.t` → {"data":{"t":21.5}}), so that a
 * device reading the same point locator reads it back.
 */
export function writePayload(dataType: DataType, value: unknown, path: readonly PathStep[] | null): Outcome<string> {
  const typed = toPointValue(dataType, value);
  if ('error' in typed) return { error: `value ${typed.error}` };
  if (path === null) return { value: String(typed.value) };
  if (path.some((s) => typeof s === 'number' && s > MAX_WRITE_INDEX)) return { error: `jsonPath index above ${MAX_WRITE_INDEX} cannot be written` };
  let doc: unknown = typed.value;
  for (const step of [...path].reverse()) {
    if (typeof step === 'number') {
      const array: unknown[] = new Array<unknown>(step + 1).fill(null);
      array[step] = doc;
      doc = array;
    } else {
      doc = { [step]: doc }; // a computed key, so even "__proto__" becomes an own property
    }
  }
  return { value: JSON.stringify(doc) };
}
