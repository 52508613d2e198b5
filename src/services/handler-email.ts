// The EMAIL handler type: mail through SMTP (nodemailer, SMTP_URL and SMTP_FROM) to users (their
// email) and addresses, on the event's changes its handler asks for, and to the escalation's
// recipients when the event is still active and unacknowledged after the delay. The message is
// handler-email-message.ts; this module checks the fields, finds the recipients and the facts, sends,
// and tells a refusal that will not change (5xx) from one that may (4xx, no connection).
import { createTransport, type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { MailConfig } from '../config.js';
import { validationMessage, type ValidationMessage } from '../core/errors.js';
import { propertyName } from '../core/validation.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { EventDetectorRecord } from '../store/metadata/event-detectors.js';
import type { UserRecord } from '../store/metadata/users.js';
import type { StoredValue } from '../store/values/types.js';
import { apiValue } from '../values/ingest/types.js';
import { alarmMail, type AlarmFacts } from './handler-email-message.js';
import type { DeliveryAttempt, DeliveryResult, HandlerAction, HandlerKind } from './handler-kinds.js';

/** `{"type": "USER", "username"}` (the user's email) or `{"type": "ADDRESS", "address"}`. */
export type MailRecipient = { type: 'USER'; username: string } | { type: 'ADDRESS'; address: string };

/** An EMAIL handler's own fields, defaults filled in. */
export interface EmailHandlerConfig {
  recipients: MailRecipient[];
  sendOnActive: boolean;
  sendOnInactive: boolean;
  sendOnAcknowledge: boolean;
  escalation?: { delayMs: number; recipients: MailRecipient[] };
}

export interface EmailHandlerDeps {
  /** SMTP_URL and SMTP_FROM; none: EMAIL handlers are refused at save and fail at delivery. */
  mail: MailConfig | undefined;
  /** PUBLIC_URL (no trailing slash): the console's address in the message; none: no link. */
  publicUrl: string | undefined;
  users: { findByUsername(username: string): Promise<Pick<UserRecord, 'email' | 'disabled' | 'timezone'> | undefined> };
  detectors: { findById(id: number): Promise<EventDetectorRecord | undefined> };
  points: { findById(id: number): Promise<DataPointRecord | undefined> };
  values: { valueAt(point: DataPointRecord, ts: number): Promise<StoredValue | undefined> };
  /** The zone of the times for addresses and for users without a zone of their own; default the process's (TZ). */
  zone?: string;
  log?: Pick<Logger, 'warn' | 'info'>;
  /** How long to wait for the value that raised or ended an event to be stored (default 3 s). */
  valueWaitMs?: number;
  /** SMTP time-outs in ms (connection, greeting, socket); defaults suit a real server. */
  timeoutsMs?: { connection?: number; greeting?: number; socket?: number };
}

export const MAX_RECIPIENTS = 100;
/** Longest escalation delay: a year. */
export const MAX_ESCALATION_DELAY_MS = 366 * 86_400_000;
const ADDRESS_MAX = 254;
/** One @, no spaces, no characters that would make it more than one address or a display name. */
const ADDRESS = /^[^\s@<>()[\]",;:\\]+@[^\s@<>()[\]",;:\\]+\.[^\s@<>()[\]",;:\\]+$/;

/** SMTP_URL/SMTP_FROM missing: said where the handler type is. */
const NOT_CONFIGURED = 'EMAIL handlers need the server to be started with SMTP_URL and SMTP_FROM';

export function emailHandlerKind(deps: EmailHandlerDeps): HandlerKind {
  let transport: Transporter | undefined;
  const zone = deps.zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;

  function transporter(mail: MailConfig): Transporter {
    if (transport) return transport;
    const t = deps.timeoutsMs ?? {};
    transport = createTransport({
      url: mail.smtpUrl,
      pool: true,
      maxConnections: 2,
      connectionTimeout: t.connection ?? 10_000,
      greetingTimeout: t.greeting ?? 10_000,
      socketTimeout: t.socket ?? 60_000,
    });
    // A pooled connection that fails while idle is reported here; the next message opens another.
    transport.on('error', (err: unknown) => deps.log?.warn({ err }, 'SMTP connection failed'));
    return transport;
  }

  return {
    type: 'EMAIL',

    async check(config, lookups) {
      const problems: ValidationMessage[] = [];
      // In an import, its transaction's users (the document's own included).
      const checkDeps: EmailHandlerDeps = lookups ? { ...deps, users: { findByUsername: (username) => lookups.user(username) } } : deps;
      if (!deps.mail) problems.push(validationMessage('handlerType', NOT_CONFIGURED));
      const { recipients, escalation } = config;
      const anySend = readConfig(config).sendOnActive || config.sendOnInactive === true || config.sendOnAcknowledge === true;
      for (const key of ['sendOnActive', 'sendOnInactive', 'sendOnAcknowledge']) {
        if (config[key] !== undefined && typeof config[key] !== 'boolean') problems.push(validationMessage(key, 'must be true or false'));
      }
      problems.push(...(await checkRecipients(recipients, ['recipients'], anySend, checkDeps)));
      if (!anySend && (escalation === undefined || escalation === null)) {
        problems.push(validationMessage('sendOnActive', 'sends nothing: set sendOnActive, sendOnInactive, sendOnAcknowledge or an escalation'));
      }
      if (escalation !== undefined && escalation !== null) {
        if (typeof escalation !== 'object' || Array.isArray(escalation)) problems.push(validationMessage('escalation', 'must be an object {delayMs, recipients}'));
        else {
          const { delayMs, recipients: to } = escalation as Record<string, unknown>;
          if (!Number.isSafeInteger(delayMs) || (delayMs as number) < 1 || (delayMs as number) > MAX_ESCALATION_DELAY_MS) {
            problems.push(validationMessage('escalation.delayMs', `must be an integer from 1 to ${MAX_ESCALATION_DELAY_MS} (ms)`));
          }
          problems.push(...(await checkRecipients(to, ['escalation', 'recipients'], true, checkDeps)));
        }
      }
      return problems;
    },

    actions(config) {
      const c = readConfig(config);
      const actions: HandlerAction[] = [];
      if (c.sendOnActive) actions.push('RAISED');
      if (c.sendOnInactive) actions.push('RETURN_TO_NORMAL');
      if (c.sendOnAcknowledge) actions.push('ACKNOWLEDGED');
      if (c.escalation) actions.push('ESCALATED');
      return actions;
    },

    escalationDelayMs(config) {
      return readConfig(config).escalation?.delayMs;
    },

    view(config) {
      return { ...readConfig(config) };
    },

    async deliver(attempt) {
      try {
        return await deliver(attempt);
      } catch (err) {
        // A lookup failed (a store unavailable): the same attempt may well work later.
        return { outcome: 'FAILED', error: `Could not prepare the message: ${errorText(err)}`, retry: true };
      }
    },

    async close() {
      transport?.close();
      transport = undefined;
    },
  };

  async function deliver({ handler, action, event }: DeliveryAttempt): Promise<DeliveryResult> {
    const mail = deps.mail;
    if (!mail) return { outcome: 'FAILED', error: `SMTP is not configured: ${NOT_CONFIGURED}`, retry: false };
    const config = readConfig(handler.config);
    const to = action === 'ESCALATED' ? (config.escalation?.recipients ?? []) : config.recipients;
    const { byZone, skipped } = await resolveRecipients(to);
    if (byZone.size === 0) {
      return { outcome: 'FAILED', error: `No recipient to send to${skipped.length ? ` (skipped: ${skipped.join('; ')})` : ''}`, retry: false };
    }
    if (skipped.length) deps.log?.info({ handler: handler.xid, skipped }, 'EMAIL handler recipients skipped');
    const facts = await factsOf(action, event, config);
    const t = transporter(mail);
    let status: number | undefined;
    for (const [readerZone, addresses] of byZone) {
      const message = alarmMail(facts, readerZone);
      try {
        const info = (await t.sendMail({ from: mail.from, to: addresses, ...message })) as { response?: unknown };
        status = replyCode(info.response) ?? status;
      } catch (err) {
        return smtpFailure(err);
      }
    }
    return { outcome: 'SENT', ...(status === undefined ? {} : { status }) };
  }

  /** Addresses by the zone their reader reads times in; users gone, disabled or without email are skipped. */
  async function resolveRecipients(recipients: readonly MailRecipient[]): Promise<{ byZone: Map<string, string[]>; skipped: string[] }> {
    const byZone = new Map<string, string[]>();
    const seen = new Set<string>();
    const skipped: string[] = [];
    const add = (address: string, readerZone: string) => {
      const key = address.toLowerCase();
      if (seen.has(key)) return;
      seen.add(key);
      byZone.set(readerZone, [...(byZone.get(readerZone) ?? []), address]);
    };
    for (const r of recipients) {
      if (r.type === 'ADDRESS') {
        add(r.address, zone);
        continue;
      }
      const user = await deps.users.findByUsername(r.username);
      if (!user) skipped.push(`${r.username}: no such user`);
      else if (user.disabled) skipped.push(`${r.username}: disabled`);
      else if (!user.email) skipped.push(`${r.username}: no email address`);
      else add(user.email, user.timezone || zone);
    }
    return { byZone, skipped };
  }

  async function factsOf(action: HandlerAction, event: DeliveryAttempt['event'], config: EmailHandlerConfig): Promise<AlarmFacts> {
    const point = event.dataPointId === null ? undefined : await deps.points.findById(event.dataPointId);
    const detector = event.detectorId === null ? undefined : await deps.detectors.findById(event.detectorId);
    // The value in force when it happened: the one that raised the event, or the one that ended it.
    const ending = action === 'RETURN_TO_NORMAL' && event.rtnTimestamp !== null;
    const at = ending ? event.rtnTimestamp! : event.activeTimestamp;
    const stored = point ? await valueAt(point, at, detector ? stampedByValue(detector, ending ? event.rtnCause : null) : false) : undefined;
    return {
      action,
      event,
      ...(point ? { point } : {}),
      ...(detector ? { detector } : {}),
      ...(point && stored ? { value: { value: apiValue(point.dataType, stored), ts: stored.ts } } : {}),
      ...(action === 'ESCALATED' && config.escalation ? { escalationDelayMs: config.escalation.delayMs } : {}),
      ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
    };
  }

  /**
   * The value in force at `at`. A detector raises (and ends) an event on a value before that value is
   * durable, and its jobs may run first: when the event is stamped with the value's own time and the
   * point stores every value it changes to, wait a little for that value rather than show the one before.
   */
  async function valueAt(point: DataPointRecord, at: number, exact: boolean): Promise<StoredValue | undefined> {
    const wait = exact && STORES_EACH_CHANGE.has(point.loggingProperties.loggingType);
    const deadline = Date.now() + (wait ? (deps.valueWaitMs ?? VALUE_WAIT_MS) : 0);
    for (;;) {
      const v = await deps.values.valueAt(point, at);
      if (!wait || v?.ts === at || Date.now() >= deadline) return v;
      await new Promise((resolve) => setTimeout(resolve, VALUE_POLL_MS));
    }
  }
}

/** Logging types that store a value that differs from the one before (the one that crossed a limit). */
const STORES_EACH_CHANGE = new Set(['ALL', 'ON_CHANGE', 'ON_TS_CHANGE']);
const VALUE_WAIT_MS = 3_000;
const VALUE_POLL_MS = 50;

/**
 * Whether the event's time is a value's time: raised by a value (not by a timer: a duration held, no
 * update), or returned to normal by one (not by its source being disabled). `rtnCause` null: raised.
 */
function stampedByValue(detector: EventDetectorRecord, rtnCause: string | null): boolean {
  if (rtnCause !== null) return rtnCause === 'RETURN_TO_NORMAL';
  const durationMs = (detector.config as { durationMs?: unknown }).durationMs;
  return detector.detectorType !== 'NO_UPDATE' && !(typeof durationMs === 'number' && durationMs > 0);
}

/** The fields as stored, defaults filled in (sendOnActive true, the others false). */
export function readConfig(config: Record<string, unknown>): EmailHandlerConfig {
  const escalation = config.escalation as { delayMs?: unknown; recipients?: unknown } | null | undefined;
  return {
    recipients: recipientsOf(config.recipients),
    sendOnActive: config.sendOnActive !== false,
    sendOnInactive: config.sendOnInactive === true,
    sendOnAcknowledge: config.sendOnAcknowledge === true,
    ...(escalation && typeof escalation === 'object' && typeof escalation.delayMs === 'number'
      ? { escalation: { delayMs: escalation.delayMs, recipients: recipientsOf(escalation.recipients) } }
      : {}),
  };
}

function recipientsOf(raw: unknown): MailRecipient[] {
  if (!Array.isArray(raw)) return [];
  const out: MailRecipient[] = [];
  for (const r of raw as unknown[]) {
    if (!r || typeof r !== 'object') continue;
    const { type, username, address } = r as Record<string, unknown>;
    if (type === 'USER' && typeof username === 'string') out.push({ type, username });
    else if (type === 'ADDRESS' && typeof address === 'string') out.push({ type, address });
  }
  return out;
}

/** Each recipient well formed, each user known; at least one when `required`. */
async function checkRecipients(raw: unknown, at: string[], required: boolean, deps: EmailHandlerDeps): Promise<ValidationMessage[]> {
  const where = propertyName(at);
  if (raw === undefined || raw === null) return required ? [validationMessage(where, 'is required: at least one recipient')] : [];
  if (!Array.isArray(raw)) return [validationMessage(where, 'must be an array of {"type": "USER", "username"} or {"type": "ADDRESS", "address"}')];
  if (required && raw.length === 0) return [validationMessage(where, 'must have at least one recipient')];
  if (raw.length > MAX_RECIPIENTS) return [validationMessage(where, `must have at most ${MAX_RECIPIENTS} recipients`)];
  const problems: ValidationMessage[] = [];
  for (const [i, r] of (raw as unknown[]).entries()) {
    const path = (field?: string) => propertyName([...at, String(i), ...(field ? [field] : [])]);
    if (!r || typeof r !== 'object' || Array.isArray(r)) {
      problems.push(validationMessage(path(), 'must be {"type": "USER", "username"} or {"type": "ADDRESS", "address"}'));
      continue;
    }
    const { type, username, address } = r as Record<string, unknown>;
    if (type === 'USER') {
      if (typeof username !== 'string' || username === '') problems.push(validationMessage(path('username'), 'is required'));
      else if (!(await deps.users.findByUsername(username))) problems.push(validationMessage(path('username'), `User not found: ${username}`));
    } else if (type === 'ADDRESS') {
      if (typeof address !== 'string' || address.length > ADDRESS_MAX || !ADDRESS.test(address)) {
        problems.push(validationMessage(path('address'), 'must be an email address such as ops@example.com'));
      }
    } else problems.push(validationMessage(path('type'), 'must be one of: USER, ADDRESS'));
  }
  return problems;
}

interface SmtpError {
  code?: unknown;
  responseCode?: unknown;
  response?: unknown;
  message?: unknown;
}

/**
 * A refusal that will not change is not tried again: a 5xx reply (503, out of sequence, is only the
 * session's state), or a configuration the server cannot take. A 4xx reply or no connection is.
 */
function smtpFailure(err: unknown): DeliveryResult {
  const e = (err && typeof err === 'object' ? err : {}) as SmtpError;
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const reply = typeof e.response === 'string' ? e.response : undefined;
  const error = `SMTP: ${reply ?? errorText(err)}`.slice(0, 1000);
  if (code !== undefined) return { outcome: 'FAILED', error, status: code, retry: !(code >= 500 && code !== 503) };
  const permanent = e.code === 'ECONFIG' || e.code === 'ENOAUTH' || e.code === 'EENVELOPE';
  return { outcome: 'FAILED', error, retry: !permanent };
}

/** "250 2.0.0 OK ..." → 250. */
function replyCode(response: unknown): number | undefined {
  const m = typeof response === 'string' ? /^(\d{3})/.exec(response) : null;
  return m ? Number(m[1]) : undefined;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
