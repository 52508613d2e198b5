// Environment → one typed, validated config object. Every variable is listed in README.md.
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseProxyEntry, type TrustProxy } from './core/client-address.js';
import { DEFAULT_JSON_MAX_DEPTH } from './core/json.js';
import { MIN_PASSWORD_LENGTH } from './core/password-policy.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface TokenBucketConfig {
  /** Tokens available at once. */
  burst: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

export interface Config {
  port: number;
  host: string;
  /** INSTANCE_NAME: this instance among the installation's (data sources' runningOn, logs, /metrics). */
  instanceName: string;
  dataDir: string;
  /** PostgreSQL server URL; undefined means embedded PGlite under dataDir. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** PostgreSQL schema to use (tests isolate themselves with one schema each). */
  databaseSchema: string | undefined;
  /**
   * STORE_TIMEOUT_MS: the longest one call to a store server (PostgreSQL, QuestDB) may take before the
   * request that made it is answered 503; a frozen server holds a request no longer.
   */
  storeTimeoutMs: number;
  logLevel: LogLevel;
  /** Which X-Forwarded-* headers to believe (core/client-address.ts). */
  trustProxy: TrustProxy;
  /** Request size limits enforced before the app sees a request (414 / 431 with the error body). */
  http: { maxHeaderBytes: number; maxUrlBytes: number };
  session: { idleMinutes: number; maxDays: number; cookieSecure: boolean };
  jwt: { defaultExpiryMinutes: number; maxExpiryDays: number };
  basicAuthEnabled: boolean;
  /** GET /metrics without authentication (for a Prometheus scraper inside a trusted network). */
  metricsPublic: boolean;
  passwordMaxAgeDays: number;
  adminPassword: string | undefined;
  values: {
    /**
     * The point-value engine (VALUE_STORE): duckdb embedded under DATA_DIR, questdb (QUESTDB_ILP and
     * QUESTDB_PG), or postgres (the DATABASE_URL server, DATABASE_SCHEMA when set).
     */
    engine: ValueEngineName;
    /** QuestDB ILP/HTTP config string (http::addr=host:9000); with questdbPg, switches to QuestDB. */
    questdbIlp: string | undefined;
    questdbPg: string | undefined;
    /** The QuestDB table of point values (its companion tables take it as a prefix). */
    questdbTable: string;
    /** Values that may wait in the write buffer before writers are held back. */
    writeBufferValues: number;
    /** Points whose newest values the latest-value cache keeps. */
    latestCachePoints: number;
    /** DuckDB's memory limit (its buffer pool), e.g. 768MB. */
    duckdbMemoryLimit: string;
  };
  /** Bounds on the work one point-value read may ask for (refused with 400 beyond them). */
  pointValueReads: PointValueReadLimits;
  /** JSON_MAX_DEPTH: levels of nesting a JSON body (and stored jsonData) may have; deeper is a 422. */
  jsonMaxDepth: number;
  rateLimit: {
    enabled: boolean;
    anonymous: TokenBucketConfig;
    loginPerIp: TokenBucketConfig;
    loginPerUser: TokenBucketConfig;
    /** Failed logins per (username, client address). */
    loginPerUserIp: TokenBucketConfig;
    user: TokenBucketConfig;
  };
  /**
   * An address that logged in as a user within this many days is not charged to, nor held by, that
   * username's failed-login limit; 0 turns the exemption off.
   */
  loginKnownAddressDays: number;
  /** Event handlers' worker and queue (runtime/handler-jobs.ts). */
  eventHandlers: EventHandlerSettings;
  /** WEBHOOK_ALLOWED_HOSTS: the hosts (or host:port) WEBHOOK handlers may call; undefined: any. */
  webhookAllowedHosts: AllowedHost[] | undefined;
  /** HISTORY_RETENTION: how long values of points without a purge override are kept; undefined: forever. */
  historyRetention: RetentionPeriod | undefined;
  /** SMTP_URL and SMTP_FROM, set together: how EMAIL handlers send; unset, EMAIL handlers are refused. */
  mail: MailConfig | undefined;
  /** PUBLIC_URL: the console's address as its users reach it (links in mail); unset, mail has no link. */
  publicUrl: string | undefined;
}

export interface MailConfig {
  /** smtp://user:password@host:587 or smtps://user:password@host:465 (credentials in the URL). */
  smtpUrl: string;
  /** The From of every message: `alarms@example.com` or `"Alarms" <alarms@example.com>`. */
  from: string;
}

export interface EventHandlerSettings {
  /** EVENT_HANDLER_MAX_PENDING: jobs one handler may have waiting; beyond, the work is recorded GAVE_UP. */
  maxPending: number;
  /** EVENT_HANDLER_CONCURRENCY: deliveries under way at once on one instance. */
  concurrency: number;
  /** EVENT_HANDLER_POLL_MS: how often an instance looks for jobs made elsewhere and for retries. */
  pollMs: number;
  /** EVENT_HANDLER_RETRY_MS: the first retry's delay (doubling, at most hourly, for 24 h). */
  retryFirstMs: number;
  /** EVENT_HANDLER_DELIVERY_RETENTION: deliveries older than this are purged by the daily retention run. */
  deliveryRetention: RetentionPeriod;
}

/** One WEBHOOK_ALLOWED_HOSTS entry: a host (any port) or host:port. */
export interface AllowedHost {
  host: string;
  port?: number;
}

/** "a.example, b.example:8443, [::1]:9000": hosts (lower case) and ports; unset or empty: any host. */
function allowedHosts(env: Env, name: string): AllowedHost[] | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const hosts: AllowedHost[] = [];
  for (const entry of raw.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\s@]+)(?::(\d{1,5}))?$/.exec(entry);
    const port = m?.[2] === undefined ? undefined : Number(m[2]);
    if (!m || (port !== undefined && (port < 1 || port > 65535))) throw new ConfigError(`${name} must be a comma-separated list of hosts or host:port, got "${entry}"`);
    hosts.push({ host: m[1]!.toLowerCase(), ...(port !== undefined ? { port } : {}) });
  }
  return hosts;
}

export const RETENTION_UNITS = ['DAYS', 'WEEKS', 'MONTHS', 'YEARS'] as const;
/** A data point's purgePeriod shape: {"periods": 2, "type": "YEARS"}. */
export interface RetentionPeriod {
  periods: number;
  type: (typeof RETENTION_UNITS)[number];
}

export interface PointValueReadLimits {
  /** XIDs in one request (after removing repeats). */
  maxXids: number;
  /** Rollup periods in one request, all XIDs together. */
  maxRollupPeriods: number;
}

export class ConfigError extends Error {}

export const VALUE_ENGINES = ['duckdb', 'questdb', 'postgres'] as const;
export type ValueEngineName = (typeof VALUE_ENGINES)[number];

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`${name} must be a number greater than 0, got "${raw}"`);
  return n;
}

/** "2 YEARS", "90 days", "1 week": a count and a unit; unset or empty means keep forever. */
function retention(env: Env, name: string): RetentionPeriod | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const match = /^(\d{1,6})\s*([a-z]+?)s?$/i.exec(raw);
  const type = match && `${match[2]!.toUpperCase()}S`;
  const periods = match ? Number(match[1]) : 0;
  if (!match || !(RETENTION_UNITS as readonly string[]).includes(type!) || periods < 1) {
    throw new ConfigError(`${name} must be a count and a unit (DAYS, WEEKS, MONTHS or YEARS) such as "2 YEARS" or "90 DAYS", got "${raw}"`);
  }
  return { periods, type: type as RetentionPeriod['type'] };
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase() as T;
  if (!allowed.includes(v)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return v;
}

function postgresUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL such as postgres://user@host:5432/db`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`${name} must start with postgres:// or postgresql://, got "${url.protocol}"`);
  }
  return raw;
}

function schemaName(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) throw new ConfigError(`${name} must be a lower-case SQL identifier, got "${raw}"`);
  return raw;
}

/** A QuestDB table name: it becomes a directory name and is spliced into SQL, so a plain identifier. */
function tableName(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) throw new ConfigError(`${name} must be a lower-case identifier ([a-z_][a-z0-9_]*, at most 63 characters), got "${raw}"`);
  return raw;
}

/** Longest INSTANCE_NAME: a label, not a document (a host name is at most 253 characters). */
export const INSTANCE_NAME_MAX = 100;

/** INSTANCE_NAME, or `<host name>:<pid>`: printable characters only (it appears in logs, answers and metric labels). */
function instanceName(env: Env): string {
  const raw = env.INSTANCE_NAME?.trim();
  if (raw === undefined || raw === '') {
    const pid = `:${process.pid}`;
    return hostname().slice(0, INSTANCE_NAME_MAX - pid.length) + pid;
  }
  // Control, format and unassigned characters, lone surrogates and line separators are not printable.
  if ([...raw].length > INSTANCE_NAME_MAX || /[\p{C}\p{Zl}\p{Zp}]/u.test(raw)) {
    throw new ConfigError(`INSTANCE_NAME must be 1 to ${INSTANCE_NAME_MAX} printable characters, got ${JSON.stringify(raw.slice(0, 120))}`);
  }
  return raw;
}

function bucket(env: Env, prefix: string, burst: number, perSecond: number): TokenBucketConfig {
  return {
    burst: integer(env, `${prefix}_BURST`, burst, 1, 1_000_000_000),
    refillPerSecond: positiveNumber(env, `${prefix}_PER_SECOND`, perSecond),
  };
}

function memorySize(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(raw)) throw new ConfigError(`${name} must be a size such as 768MB or 2GB, got "${raw}"`);
  return raw;
}

const MAX_PROXY_HOPS = 32;

/** `false`/`0`, `true` (one hop), a number of hops, or a comma-separated list of proxy addresses and CIDR ranges. */
function trustProxy(env: Env): TrustProxy {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  const word = raw.toLowerCase();
  if (['', 'false', '0', 'no', 'off'].includes(word)) return { mode: 'off' };
  if (['true', 'yes', 'on'].includes(word)) return { mode: 'hops', hops: 1 };
  if (/^\d+$/.test(raw)) return { mode: 'hops', hops: integer(env, 'TRUST_PROXY', 1, 1, MAX_PROXY_HOPS) };
  const proxies = raw.split(',').map((entry) => entry.trim());
  for (const entry of proxies) {
    if (!parseProxyEntry(entry)) {
      throw new ConfigError(`TRUST_PROXY must be false, true, a number of proxy hops (1-${MAX_PROXY_HOPS}) or a comma-separated list of proxy addresses and CIDR ranges; "${entry}" is none of these`);
    }
  }
  return { mode: 'list', proxies };
}

/** SMTP_URL and SMTP_FROM: both or neither (one alone is a mistake, told at start). */
function mail(env: Env): MailConfig | undefined {
  const smtpUrl = env.SMTP_URL?.trim() || undefined;
  const from = env.SMTP_FROM?.trim() || undefined;
  if (smtpUrl === undefined && from === undefined) return undefined;
  if (smtpUrl === undefined || from === undefined) throw new ConfigError('SMTP_URL and SMTP_FROM must be set together');
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    throw new ConfigError('SMTP_URL must be a URL such as smtp://user:password@mail.example.com:587');
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname) {
    throw new ConfigError(`SMTP_URL must start with smtp:// or smtps:// and name a host, got "${url.protocol}//${url.host}"`);
  }
  if (!/@[^@\s>]+/.test(from) || /[\r\n]/.test(from)) throw new ConfigError('SMTP_FROM must be an address such as alarms@example.com or "Alarms" <alarms@example.com>');
  return { smtpUrl, from };
}

/** PUBLIC_URL: an http(s) URL, kept without a trailing slash (paths are appended to it). */
function publicUrl(env: Env): string | undefined {
  const raw = env.PUBLIC_URL?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be a URL such as https://scada.example.com, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`PUBLIC_URL must start with http:// or https://, got "${raw}"`);
  if (url.search || url.hash) throw new ConfigError(`PUBLIC_URL must not have a query or a fragment, got "${raw}"`);
  return url.href.replace(/\/+$/, '');
}

function httpLimits(env: Env): Config['http'] {
  const maxHeaderBytes = integer(env, 'MAX_HEADER_BYTES', 64 * 1024, 8 * 1024, 1024 * 1024);
  // A longer URL could never arrive: it is part of the header block.
  const maxUrlBytes = integer(env, 'MAX_URL_BYTES', 16 * 1024, 1024, maxHeaderBytes);
  return { maxHeaderBytes, maxUrlBytes };
}

/**
 * VALUE_STORE, checked against the settings the engine needs. Unset keeps the behaviour from before
 * the variable existed: QuestDB when its settings are there, else DuckDB.
 */
function valueEngine(env: Env, questdbSet: boolean): ValueEngineName {
  const engine = oneOf<ValueEngineName>(env, 'VALUE_STORE', questdbSet ? 'questdb' : 'duckdb', VALUE_ENGINES);
  if (engine === 'questdb' && !questdbSet) throw new ConfigError('VALUE_STORE=questdb needs QUESTDB_ILP and QUESTDB_PG');
  if (engine === 'postgres' && postgresUrl(env, 'DATABASE_URL') === undefined) {
    throw new ConfigError('VALUE_STORE=postgres needs DATABASE_URL (the values live in that PostgreSQL server)');
  }
  return engine;
}

function questdbSettings(env: Env): Config['values'] {
  const ilp = env.QUESTDB_ILP?.trim() || undefined;
  const pg = postgresUrl(env, 'QUESTDB_PG');
  if ((ilp === undefined) !== (pg === undefined)) throw new ConfigError('QUESTDB_ILP and QUESTDB_PG must be set together');
  // ILP over HTTP only: TCP reports no errors and has no transactions, so we could not ack durably.
  if (ilp !== undefined && !/^https?::addr=[^;]+/.test(ilp)) {
    throw new ConfigError('QUESTDB_ILP must look like http::addr=host:9000 (http or https)');
  }
  const version = env.QUESTDB_PROTOCOL_VERSION?.trim();
  // The service speaks ILP version 1, which every QuestDB server takes (store/values/questdb/ilp.ts).
  if (version !== undefined && version !== '' && version !== '1') {
    throw new ConfigError(`QUESTDB_PROTOCOL_VERSION must be 1 (the ILP version this service speaks, which every QuestDB server takes), got "${version}"`);
  }
  return {
    engine: valueEngine(env, ilp !== undefined && pg !== undefined),
    questdbIlp: ilp,
    questdbPg: pg,
    questdbTable: tableName(env, 'QUESTDB_TABLE', 'point_values'),
    writeBufferValues: integer(env, 'WRITE_BUFFER_VALUES', 500_000, 1_000, 100_000_000),
    latestCachePoints: integer(env, 'LATEST_CACHE_POINTS', 100_000, 100, 100_000_000),
    duckdbMemoryLimit: memorySize(env, 'DUCKDB_MEMORY_LIMIT', '768MB'),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const adminPassword = env.ADMIN_PASSWORD === '' ? undefined : env.ADMIN_PASSWORD;
  if (adminPassword !== undefined && adminPassword.length < MIN_PASSWORD_LENGTH) {
    throw new ConfigError(`ADMIN_PASSWORD must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const dataDir = env.DATA_DIR?.trim() || './data';
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST?.trim() || '0.0.0.0',
    instanceName: instanceName(env),
    dataDir: resolve(dataDir),
    databaseUrl: postgresUrl(env, 'DATABASE_URL'),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseSchema: schemaName(env, 'DATABASE_SCHEMA'),
    storeTimeoutMs: integer(env, 'STORE_TIMEOUT_MS', 10_000, 500, 3_600_000),
    logLevel: oneOf<LogLevel>(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    trustProxy: trustProxy(env),
    http: httpLimits(env),
    session: {
      idleMinutes: integer(env, 'SESSION_IDLE_MINUTES', 24 * 60, 1, 525_600),
      maxDays: integer(env, 'SESSION_MAX_DAYS', 7, 1, 3650),
      cookieSecure: boolean(env, 'COOKIE_SECURE', false),
    },
    jwt: {
      defaultExpiryMinutes: integer(env, 'JWT_DEFAULT_EXPIRY_MINUTES', 5, 1, 525_600),
      maxExpiryDays: integer(env, 'JWT_MAX_EXPIRY_DAYS', 365, 1, 3650),
    },
    basicAuthEnabled: boolean(env, 'BASIC_AUTH_ENABLED', false),
    metricsPublic: boolean(env, 'METRICS_PUBLIC', false),
    passwordMaxAgeDays: integer(env, 'PASSWORD_MAX_AGE_DAYS', 0, 0, 36500),
    adminPassword,
    values: questdbSettings(env),
    pointValueReads: {
      maxXids: integer(env, 'POINT_VALUES_MAX_XIDS', 100, 1, 10_000),
      maxRollupPeriods: integer(env, 'ROLLUP_MAX_PERIODS', 200_000, 1_000, 10_000_000),
    },
    // Above 1,000 levels the recursive parts of the stack (V8's JSON.stringify, Node's deep
    // equality, PostgreSQL's JSON parser) are no longer sure to have room.
    jsonMaxDepth: integer(env, 'JSON_MAX_DEPTH', DEFAULT_JSON_MAX_DEPTH, 8, 1000),
    rateLimit: {
      enabled: boolean(env, 'RATE_LIMIT_ENABLED', true),
      anonymous: bucket(env, 'RATE_LIMIT_ANON', 40, 5),
      loginPerIp: bucket(env, 'RATE_LIMIT_LOGIN_IP', 5, 1 / 60),
      loginPerUser: bucket(env, 'RATE_LIMIT_LOGIN_USER', 5, 1 / 60),
      loginPerUserIp: bucket(env, 'RATE_LIMIT_LOGIN_USER_IP', 5, 1 / 60),
      user: bucket(env, 'RATE_LIMIT_USER', 1000, 500),
    },
    loginKnownAddressDays: integer(env, 'LOGIN_KNOWN_ADDRESS_DAYS', 30, 0, 3650),
    historyRetention: retention(env, 'HISTORY_RETENTION'),
    eventHandlers: {
      maxPending: integer(env, 'EVENT_HANDLER_MAX_PENDING', 10_000, 1, 10_000_000),
      concurrency: integer(env, 'EVENT_HANDLER_CONCURRENCY', 8, 1, 1000),
      pollMs: integer(env, 'EVENT_HANDLER_POLL_MS', 2_000, 50, 600_000),
      retryFirstMs: integer(env, 'EVENT_HANDLER_RETRY_MS', 10_000, 10, 3_600_000),
      deliveryRetention: retention(env, 'EVENT_HANDLER_DELIVERY_RETENTION') ?? { periods: 30, type: 'DAYS' },
    },
    webhookAllowedHosts: allowedHosts(env, 'WEBHOOK_ALLOWED_HOSTS'),
    mail: mail(env),
    publicUrl: publicUrl(env),
  };
}
