// WEBHOOK handlers: the event POSTed as JSON to an http(s) URL, signed with HMAC-SHA256 of the exact
// body bytes (`X-Signature-256: sha256=<hex>`). A non-2xx answer, or none within 10 s, is a FAILED
// attempt the framework tries again; WEBHOOK_ALLOWED_HOSTS limits the targets at save and at delivery.
import { createHmac } from 'node:crypto';
import type { AllowedHost } from '../config.js';
import { validationMessage, type ValidationMessage } from '../core/errors.js';
import type { DeliveryAttempt, DeliveryResult, HandlerAction, HandlerKind } from './handler-kinds.js';

/** No answer within this is a failed attempt (retried). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
const ACTIONS: readonly HandlerAction[] = ['RAISED', 'RETURN_TO_NORMAL', 'ACKNOWLEDGED'];
/** Headers the handler sets itself (or the HTTP client does): a configured one may not replace them. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'x-signature-256', 'transfer-encoding', 'connection']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const MAX_HEADERS = 50;

export interface WebhookOptions {
  /** WEBHOOK_ALLOWED_HOSTS; undefined: any host. */
  allowedHosts: readonly AllowedHost[] | undefined;
  timeoutMs?: number;
}

interface WebhookConfig {
  url: string;
  headers: Record<string, string>;
  secret: string;
}

export class WebhookKind implements HandlerKind {
  readonly type = 'WEBHOOK' as const;
  private readonly timeoutMs: number;

  constructor(private readonly options: WebhookOptions) {
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  }

  check(config: Record<string, unknown>): Promise<ValidationMessage[]> {
    const problems: ValidationMessage[] = [];
    const { url, headers, secret } = config;
    if (typeof url !== 'string' || url === '') problems.push(validationMessage('url', 'is required'));
    else {
      const target = parseUrl(url);
      if (!target) problems.push(validationMessage('url', 'must be an http or https URL'));
      else if (target.username !== '' || target.password !== '') problems.push(validationMessage('url', 'must not hold credentials (send them in headers)'));
      else if (!this.allowed(target)) problems.push(validationMessage('url', `host ${target.host} is not in WEBHOOK_ALLOWED_HOSTS`));
    }
    if (headers !== undefined) {
      if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) problems.push(validationMessage('headers', 'must be an object of header names and values'));
      else {
        const entries = Object.entries(headers);
        if (entries.length > MAX_HEADERS) problems.push(validationMessage('headers', `must have at most ${MAX_HEADERS} headers`));
        for (const [name, value] of entries) {
          if (!HEADER_NAME.test(name)) problems.push(validationMessage(`headers.${name}`, 'is not a valid header name'));
          else if (RESERVED_HEADERS.has(name.toLowerCase())) problems.push(validationMessage(`headers.${name}`, 'is set by the handler itself'));
          else if (typeof value !== 'string' || /[\r\n\0]/.test(value) || value.length > 4096) problems.push(validationMessage(`headers.${name}`, 'must be text of one line, at most 4096 characters'));
        }
      }
    }
    if (typeof secret !== 'string' || secret === '') problems.push(validationMessage('secret', 'is required (the HMAC-SHA256 key of X-Signature-256)'));
    else if (secret.length > 1024) problems.push(validationMessage('secret', 'must be at most 1024 characters'));
    return Promise.resolve(problems);
  }

  actions(_config: Record<string, unknown>): readonly HandlerAction[] {
    return ACTIONS;
  }

  escalationDelayMs(_config: Record<string, unknown>): number | undefined {
    return undefined;
  }

  /** The secret is write-only. */
  view(config: Record<string, unknown>): Record<string, unknown> {
    return { url: config.url, headers: config.headers ?? {} };
  }

  async deliver(attempt: DeliveryAttempt): Promise<DeliveryResult> {
    const config = attempt.handler.config as unknown as WebhookConfig;
    const target = parseUrl(config.url);
    if (!target) return { outcome: 'FAILED', error: 'the URL is not an http or https URL', retry: false };
    if (!this.allowed(target)) return { outcome: 'FAILED', error: `host ${target.host} is not in WEBHOOK_ALLOWED_HOSTS`, retry: false };
    const body = Buffer.from(JSON.stringify({ action: attempt.action, handlerXid: attempt.handler.xid, event: attempt.eventView }));
    const signature = `sha256=${createHmac('sha256', config.secret).update(body).digest('hex')}`;
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: { ...config.headers, 'content-type': 'application/json', 'x-signature-256': signature },
        body,
        // A redirect could lead past WEBHOOK_ALLOWED_HOSTS: it is an answer that is not 2xx.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { outcome: 'SENT', status: res.status };
      return { outcome: 'FAILED', status: res.status, error: `the receiver answered ${res.status}`, retry: true };
    } catch (err) {
      return { outcome: 'FAILED', error: failure(err, this.timeoutMs), retry: true };
    }
  }

  private allowed(url: URL): boolean {
    const hosts = this.options.allowedHosts;
    if (!hosts) return true;
    const host = url.hostname.toLowerCase();
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    return hosts.some((h) => h.host === host && (h.port === undefined || h.port === port));
  }
}

function parseUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** What went wrong, in a line: no answer in time, or the network's error code. */
function failure(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${timeoutMs / 1000} s`;
  const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return `${cause.code}${typeof cause.message === 'string' ? `: ${cause.message}` : ''}`;
  return err instanceof Error ? err.message : String(err);
}
