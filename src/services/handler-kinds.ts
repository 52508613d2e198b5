// The contract between the event-handler framework (matching, durable jobs, once per cluster,
// retries, deliveries) and each handler type (EMAIL, WEBHOOK, SET_POINT): a type checks its own
// fields at save, says which actions it acts on, and performs one delivery attempt. The framework
// alone decides when an attempt runs again and records every attempt.
import type { ValidationMessage } from '../core/errors.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { EventRecord } from '../store/metadata/events.js';
import type { UserRecord } from '../store/metadata/users.js';

export const HANDLER_TYPES = ['EMAIL', 'WEBHOOK', 'SET_POINT'] as const;
export type HandlerType = (typeof HANDLER_TYPES)[number];

/** What happened to the event: its three changes, and an EMAIL escalation falling due. */
export const HANDLER_ACTIONS = ['RAISED', 'RETURN_TO_NORMAL', 'ACKNOWLEDGED', 'ESCALATED'] as const;
export type HandlerAction = (typeof HANDLER_ACTIONS)[number];

/** A handler as stored: the common fields, and its type's own fields in `config` (secrets included). */
export interface EventHandlerDefinition {
  id: number;
  xid: string;
  name: string;
  disabled: boolean;
  handlerType: HandlerType;
  /** The type's own fields as the API takes them (`recipients`, `url`, `targetPointXid`, ...). */
  config: Record<string, unknown>;
  /** The user who saved it last: SET_POINT acts with this user's permissions. */
  ownerUserId: number | null;
}

/** One attempt of one job: the handler, the action, and the event as stored when the job ran. */
export interface DeliveryAttempt {
  handler: EventHandlerDefinition;
  action: HandlerAction;
  event: EventRecord;
  /** The event as the API shows it (GET /events/<id>), comments included. */
  eventView: Record<string, unknown>;
  /** 1 for the first attempt. */
  attempt: number;
}

/**
 * SENT: done. FAILED with `retry`: the framework tries again on its schedule (first after ~10 s,
 * doubling, at most hourly, for up to 24 h, then GAVE_UP). FAILED without `retry`: recorded, never
 * tried again (a refusal that will not change: an unknown mailbox, a point that no longer exists).
 */
export type DeliveryResult =
  | { outcome: 'SENT'; status?: number }
  | { outcome: 'FAILED'; error: string; status?: number; retry: boolean };

/**
 * What a check may look up, when the framework gives it: a configuration import's lookups read the
 * import's transaction (points and users the same document brings; on PGlite a read outside the open
 * transaction would wait for it to end). Without them a kind uses its own services.
 */
export interface HandlerCheckLookups {
  point(xid: string): Promise<DataPointRecord | undefined>;
  user(username: string): Promise<Pick<UserRecord, 'email' | 'disabled' | 'timezone'> | undefined>;
}

export interface HandlerKind {
  readonly type: HandlerType;
  /** The type's fields checked at create/update (after the JSON Schema): problems become a 422. */
  check(config: Record<string, unknown>, lookups?: HandlerCheckLookups): Promise<ValidationMessage[]>;
  /** The actions this handler acts on, from its config (ESCALATED only when it escalates). */
  actions(config: Record<string, unknown>): readonly HandlerAction[];
  /** ms after RAISED when an ESCALATED job falls due (still active and unacknowledged then), or none. */
  escalationDelayMs(config: Record<string, unknown>): number | undefined;
  /** The type's fields as the API shows them: write-only secrets left out. */
  view(config: Record<string, unknown>): Record<string, unknown>;
  /** One attempt. Never throws: a failure is a FAILED result. */
  deliver(attempt: DeliveryAttempt): Promise<DeliveryResult>;
  /** Releases connections (SMTP pools, ...) when the instance stops. */
  close?(): Promise<void>;
}
