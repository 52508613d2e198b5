// The REST client of the console: same-origin fetch with the session cookie, the double-submit CSRF
// header on writes, and the service's error envelope turned into an ApiError with its message.
//
// CSRF (README "Log in"): before the first login the client makes an XSRF-TOKEN cookie up itself;
// login answers with a NEW one. The header is read from the cookie at every write, so every write
// after login carries the new token without anyone having to remember it.

import type { TextRenderer } from '../../src/core/text-renderer.js';

export const API = '/rest/latest';
const CSRF_COOKIE = 'XSRF-TOKEN';

export interface ValidationMessage {
  property: string;
  level: string;
  message: string;
}

/** A failed request: HTTP status, the service's code and message (from the error body). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
    readonly messages: ValidationMessage[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface List<T> {
  items: T[];
  total: number;
}

export interface User {
  username: string;
  name: string;
  permissions: string[];
}

export interface DataSource {
  xid: string;
  name: string;
  enabled: boolean;
  modelType: string;
  updatePeriods?: number;
  updatePeriodType?: string;
  state: string;
  lastError: string | null;
  lastErrorTimestamp?: number | null;
  lastErrorCleared?: boolean;
  readPermission?: string[];
  editPermission?: string[];
  [field: string]: unknown;
}

export interface DataPoint {
  xid: string;
  name: string;
  enabled: boolean;
  deviceName: string;
  dataSourceXid: string;
  dataSourceName?: string;
  unit?: string;
  /** How its values are written (src/core/text-renderer.ts); PLAIN when the service has none. */
  textRenderer?: TextRenderer;
  tags?: Record<string, string>;
  pointLocator: { dataType: string; settable?: boolean; changeType?: string; [field: string]: unknown };
  readPermission?: string[];
  editPermission?: string[];
  setPermission?: string[];
  lastWarning?: string | null;
  lastWarningTimestamp?: number | null;
  lastWarningCleared?: boolean;
  loggingProperties: LoggingProperties;
  purgeOverride: boolean;
  purgePeriod: Period;
}

export interface Period {
  periods: number;
  type: string;
}

export interface LoggingProperties {
  loggingType: string;
  tolerance: number;
  intervalLoggingPeriod: Period;
  intervalLoggingType: string;
  discardExtremeValues: boolean;
  discardLowLimit: number;
  discardHighLimit: number;
}

export interface AlarmComment {
  username: string;
  timestamp: number;
  text: string;
}

export interface AlarmEvent {
  id: number;
  alarmLevel: string;
  activeTimestamp: number;
  active: boolean;
  rtnTimestamp: number | null;
  message: string;
  acknowledged: boolean;
  acknowledgedByUsername: string | null;
  dataPointXid: string | null;
  dataSourceXid: string | null;
  /** Oldest first. */
  comments: AlarmComment[];
}

export interface PointValue {
  timestamp: number;
  value: number | string | boolean | null;
}

/** Whether the point's source can read it now: on its current value (latest, WebSocket) and the point. */
export interface Reliability {
  unreliable?: boolean;
  unreliableSince?: number | null;
  unreliableReason?: string | null;
}

export function cookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** Makes up an XSRF-TOKEN cookie when there is none (the contract lets the client start with its own). */
export function ensureCsrfCookie(): void {
  if (cookie(CSRF_COOKIE)) return;
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  const token = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  document.cookie = `${CSRF_COOKIE}=${token}; Path=/; SameSite=Strict`;
}

/** Called on every 401: the page shows the login form. */
let onUnauthenticated: (err: ApiError) => void = () => undefined;
export function whenUnauthenticated(handler: (err: ApiError) => void): void {
  onUnauthenticated = handler;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function errorFrom(status: number, body: unknown): ApiError {
  if (isRecord(body) && typeof body.message === 'string') {
    const result = body.result;
    const messages = isRecord(result) && Array.isArray(result.messages) ? (result.messages as ValidationMessage[]) : [];
    return new ApiError(status, typeof body.serviceStatusCode === 'number' ? body.serviceStatusCode : undefined, body.message, messages);
  }
  return new ApiError(status, undefined, `HTTP ${status}`);
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** One API call; `path` is under /rest/latest. Resolves with the parsed JSON body (undefined for 204). */
export async function request<T>(method: string, path: string, body?: unknown, options: { quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (UNSAFE.has(method)) {
    ensureCsrfCookie();
    headers['x-xsrf-token'] = cookie(CSRF_COOKIE) ?? '';
  }
  let res: Response;
  try {
    res = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, undefined, 'The service cannot be reached');
  }
  const text = await res.text();
  let parsed: unknown;
  if (text !== '' && (res.headers.get('content-type') ?? '').includes('json')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!res.ok) {
    const err = errorFrom(res.status, parsed);
    if (res.status === 401 && !options.quiet401) onUnauthenticated(err);
    throw err;
  }
  return parsed as T;
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => request<T>('POST', path, body);
export const put = <T>(path: string, body?: unknown) => request<T>('PUT', path, body);
export const del = <T>(path: string) => request<T>('DELETE', path);

/**
 * An RQL query as typed by a user, made safe for a query string (the service decodes it). A %XX
 * escape is kept as it is: a value with RQL's own characters (a comma in a name) is written escaped
 * (rqlValue), and a user may type one too.
 */
export function rqlQuery(rql: string): string {
  const q = rql.trim().replace(/^\?/, '');
  if (q === '') return '';
  return '?' + q.split(/(%[0-9A-Fa-f]{2})/).map((part, i) => (i % 2 === 1 ? part : encodeURI(part).replace(/#/g, '%23'))).join('');
}

/** A value or property name inside an RQL query: everything but letters, digits and -_.~ escaped. */
export const rqlValue = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

/** One path segment (an XID). */
export const seg = (s: string) => encodeURIComponent(s);

export async function login(username: string, password: string): Promise<User> {
  ensureCsrfCookie();
  return request<User>('POST', '/login', { username, password }, { quiet401: true });
}

export async function logout(): Promise<void> {
  await request<undefined>('POST', '/logout', undefined, { quiet401: true });
}

export async function currentUser(): Promise<User | undefined> {
  try {
    return await request<User>('GET', '/users/current', undefined, { quiet401: true });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return undefined;
    throw err;
  }
}
