// Which ILP protocol version to speak. A server announces the versions it takes in GET /settings
// (`line.proto.support.versions`, under `config` on newer servers); a server that announces none
// (QuestDB before 8.3, whose /settings has no such key) speaks version 1. Version 2 sends doubles in
// binary; we speak 1 or 2 (3 adds arrays and decimals, which we do not write).
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import { parseIlpConfig } from './config.js';

export type ProtocolVersion = 1 | 2;

const SETTINGS_TIMEOUT_MS = 10_000;
const VERSIONS_KEY = 'line.proto.support.versions';

/** The versions /settings announces (empty when it announces none). */
export function announcedVersions(settings: unknown): number[] {
  if (typeof settings !== 'object' || settings === null) return [];
  const record = settings as Record<string, unknown>;
  const config = typeof record.config === 'object' && record.config !== null ? (record.config as Record<string, unknown>) : record;
  const versions = config[VERSIONS_KEY];
  return Array.isArray(versions) ? versions.map(Number).filter((v) => Number.isInteger(v)) : [];
}

/** The highest version both sides speak: 2 when announced, else 1. */
export function chooseVersion(announced: readonly number[]): ProtocolVersion {
  return announced.includes(2) ? 2 : 1;
}

/** GET /settings of the server the ILP configuration names, with its credentials and TLS options. */
export function fetchSettings(ilp: string, timeoutMs = SETTINGS_TIMEOUT_MS): Promise<unknown> {
  const { schema, settings } = parseIlpConfig(ilp);
  const addr = settings.get('addr')!;
  const url = new URL(`${schema}://${addr.includes(':') ? addr : `${addr}:9000`}/settings`);
  const headers: Record<string, string> = {};
  const token = settings.get('token');
  const username = settings.get('username');
  if (token) headers.authorization = `Bearer ${token}`;
  else if (username) headers.authorization = `Basic ${Buffer.from(`${username}:${settings.get('password') ?? ''}`).toString('base64')}`;
  const tls =
    schema === 'https'
      ? { rejectUnauthorized: settings.get('tls_verify') !== 'unsafe_off', ...(settings.get('tls_ca') ? { ca: readFileSync(settings.get('tls_ca')!) } : {}) }
      : {};
  const request = schema === 'https' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, timeout: timeoutMs, ...tls }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url.href} answered ${res.statusCode}${res.statusCode === 401 ? ' (check username/password or token)' : ''}`));
        try {
          resolve(JSON.parse(body));
        } catch {
          reject(new Error(`GET ${url.href} did not answer JSON: is this a QuestDB server?`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url.href} did not answer within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(err instanceof Error ? new Error(`GET ${url.href} failed: ${err.message}`, { cause: err }) : err));
    req.end();
  });
}

/**
 * The version to speak: `explicit` (QUESTDB_PROTOCOL_VERSION) or the configuration string's own, else
 * what the server announces, with one log line saying which and why.
 */
export async function negotiateProtocolVersion(ilp: string, explicit: ProtocolVersion | undefined, log: Logger): Promise<ProtocolVersion> {
  if (explicit !== undefined) return explicit;
  const configured = parseIlpConfig(ilp).settings.get('protocol_version');
  if (configured === '1' || configured === '2') return Number(configured) as ProtocolVersion;
  const announced = announcedVersions(await fetchSettings(ilp));
  const version = chooseVersion(announced);
  log.info(
    announced.length === 0
      ? 'the QuestDB server announces no ILP protocol versions: speaking version 1'
      : `the QuestDB server announces ILP protocol versions ${announced.join(', ')}: speaking version ${version}`,
  );
  return version;
}
