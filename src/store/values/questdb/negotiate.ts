// The ILP server check at open. A server announces the protocol versions it takes in GET /settings
// (`line.proto.support.versions`, under `config` on newer servers); one that announces none (QuestDB
// before 8.3, whose /settings has no such key) takes version 1. We speak version 1, which every
// server takes (2 only adds binary doubles, 3 arrays and decimals), so the check is that the server
// answers, accepts our credentials and still lists 1.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import { ConfigError } from '../../../config.js';
import { parseIlpConfig } from './config.js';

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
 * Checks the server the ILP configuration names: it answers /settings (with the configuration's
 * credentials) and takes protocol version 1, the one we speak (ilp.ts). Logs once what it announces.
 */
export async function checkIlpServer(ilp: string, log: Logger): Promise<void> {
  const announced = announcedVersions(await fetchSettings(ilp));
  if (announced.length > 0 && !announced.includes(1)) {
    throw new ConfigError(`QUESTDB_ILP: the QuestDB server takes ILP protocol versions ${announced.join(', ')}, not version 1, which this service speaks`);
  }
  log.info(
    announced.length === 0
      ? 'the QuestDB server announces no ILP protocol versions (it takes version 1): speaking version 1'
      : `the QuestDB server announces ILP protocol versions ${announced.join(', ')}: speaking version 1`,
  );
}
