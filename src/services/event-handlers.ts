// Event handlers: CRUD (superadmin only: a handler holds URLs, headers, recipients and acts with its
// owner's permissions), matchers checked against the detectors and sources they name, each type's
// fields checked and shown by its HandlerKind, and the deliveries list.
import { isDeepStrictEqual } from 'node:util';
import { DomainError, validationMessage, type ValidationMessage } from '../core/errors.js';
import { SqlParams, compileRql } from '../core/rql/index.js';
import type { Validator } from '../core/validation.js';
import {
  deliveryResource,
  eventHandlerResource,
  type DeliveriesRepository,
  type DeliveryRecord,
  type EventHandlerRecord,
  type EventHandlersRepository,
  type EventTypeMatcher,
} from '../store/metadata/event-handlers.js';
import { HANDLER_TYPES, type EventHandlerDefinition, type HandlerCheckLookups, type HandlerKind, type HandlerType } from './handler-kinds.js';
import { assertSuperadmin, type Principal } from './permissions.js';
import { generateXid, translateDuplicateXid, type ListResult } from './resources.js';

const OBJECT_TYPE = 'EventHandlerVO';
/** The fields every handler has; the rest of a body is its type's (`config`). */
const COMMON_FIELDS = new Set(['id', 'xid', 'name', 'disabled', 'handlerType', 'eventTypes']);

interface EventHandlerInput {
  [key: string]: unknown;
  xid?: string;
  name?: string;
  disabled?: boolean;
  handlerType: HandlerType;
  eventTypes: EventTypeMatcher[];
}

/** Who saves: the owner of the handler (SET_POINT acts with this user's permissions). */
export type HandlerSaver = Principal & { id?: number };

/** Does a matcher's referenceXid name something: a detector (DATA_POINT) or a data source (DATA_SOURCE). */
export interface ReferenceLookup {
  detectorExists(xid: string): Promise<boolean>;
  sourceExists(xid: string): Promise<boolean>;
}

/** A delivery as the API shows it: status and error only when there are some. */
export function deliveryView(d: DeliveryRecord): Record<string, unknown> {
  return {
    id: d.id,
    eventId: d.eventId,
    action: d.action,
    attempt: d.attempt,
    timestamp: d.timestamp,
    outcome: d.outcome,
    ...(d.status !== null ? { status: d.status } : {}),
    ...(d.error !== null ? { error: d.error } : {}),
  };
}

const notFound = () => DomainError.notFound('Event handler not found');

export class EventHandlerService {
  private readonly kinds = new Map<HandlerType, HandlerKind>();

  constructor(
    private readonly repo: EventHandlersRepository,
    private readonly deliveriesRepo: DeliveriesRepository,
    kinds: readonly HandlerKind[],
    private readonly validator: Validator,
    private readonly references: ReferenceLookup,
    /** Given to each kind's check (a configuration import's, in its transaction); none: the kinds' own. */
    private readonly checkLookups?: HandlerCheckLookups,
  ) {
    for (const kind of kinds) this.kinds.set(kind.type, kind);
  }

  /**
   * The same kinds and checks over other repositories and references: a configuration import's, all
   * in its transaction, so that a matcher finds a detector or source imported before it.
   */
  boundTo(repo: EventHandlersRepository, deliveriesRepo: DeliveriesRepository, references: ReferenceLookup, checkLookups: HandlerCheckLookups): EventHandlerService {
    return new EventHandlerService(repo, deliveriesRepo, [...this.kinds.values()], this.validator, references, checkLookups);
  }

  /** Adds (or replaces) the kind of a type: compose.ts gives the list; a test may add its own. */
  useKind(kind: HandlerKind): void {
    this.kinds.set(kind.type, kind);
  }

  /** The kinds this instance knows (the worker delivers through them). */
  kind(type: string): HandlerKind | undefined {
    return this.kinds.get(type as HandlerType);
  }

  /** The handler as the API shows it: its type's view of the config (no write-only fields). */
  view(h: EventHandlerRecord): Record<string, unknown> {
    const kind = this.kind(h.handlerType);
    return {
      id: h.id,
      xid: h.xid,
      name: h.name,
      disabled: h.disabled,
      handlerType: h.handlerType,
      eventTypes: h.eventTypes,
      ...(kind ? kind.view(h.config) : {}),
    };
  }

  async list(user: Principal, rawQuery: string): Promise<ListResult<EventHandlerRecord>> {
    assertSuperadmin(user);
    const q = compileRql(eventHandlerResource, rawQuery);
    return { total: await this.repo.count(q), batches: this.repo.page(q) };
  }

  async get(user: Principal, xid: string): Promise<EventHandlerRecord> {
    assertSuperadmin(user);
    const h = await this.repo.findOne('xid', xid);
    if (!h) throw notFound();
    return h;
  }

  async create(user: HandlerSaver, body: unknown): Promise<EventHandlerRecord> {
    assertSuperadmin(user);
    const record = await this.record(user, body, undefined);
    return this.repo.insert(record).catch((err: unknown) => {
      throw translateDuplicateXid(err);
    });
  }

  async update(user: HandlerSaver, xid: string, body: unknown): Promise<EventHandlerRecord> {
    const existing = await this.get(user, xid);
    const saved = await this.repo.update(existing.id, await this.record(user, body, existing)).catch((err: unknown) => {
      throw translateDuplicateXid(err);
    });
    if (!saved) throw notFound();
    return saved;
  }

  /**
   * A configuration import's item: created, or replaced by its XID, checked as a create or update is
   * (schema, matchers, its kind's check; a write-only field left out keeps its stored value). An item
   * equal to the stored handler is not written (its owner stays): undefined.
   */
  async importItem(user: HandlerSaver, body: unknown): Promise<{ saved: EventHandlerRecord; before: EventHandlerRecord | undefined } | undefined> {
    assertSuperadmin(user);
    const xid = (body as { xid?: unknown }).xid;
    const existing = typeof xid === 'string' ? await this.repo.findOne('xid', xid) : undefined;
    const record = await this.record(user, body, existing);
    if (existing && sameHandler(existing, record)) return undefined;
    const saved = existing ? await this.repo.update(existing.id, record) : await this.repo.insert(record);
    if (!saved) throw notFound();
    return { saved, before: existing };
  }

  /** Deleting a handler deletes its pending jobs and its deliveries. */
  async delete(user: Principal, xid: string): Promise<EventHandlerRecord> {
    const existing = await this.get(user, xid);
    await this.repo.delete(existing.id);
    return existing;
  }

  /** Every attempt of the handler, by RQL over id, eventId, action, attempt, timestamp, outcome, status, error. */
  async deliveries(user: Principal, xid: string, rawQuery: string): Promise<ListResult<DeliveryRecord>> {
    const h = await this.get(user, xid);
    const params = new SqlParams();
    const handler = params.add(h.id);
    const q = compileRql(deliveryResource, rawQuery, params);
    const scoped = { ...q, where: `t.handler_id = ${handler} and ${q.where}` };
    return { total: await this.deliveriesRepo.count(scoped), batches: this.deliveriesRepo.page(scoped) };
  }

  /** Jobs waiting in the cluster by handler type, every known type listed (0 when none). */
  async pendingJobs(): Promise<Map<string, number>> {
    const counts = new Map<string, number>([...this.kinds.keys()].map((type) => [type, 0]));
    for (const { handlerType, count } of await this.repo.pendingJobs()) counts.set(handlerType, count);
    return counts;
  }

  /** The handler as its kind sees it (the worker, at each attempt: edits apply to pending work). */
  async definition(id: number): Promise<EventHandlerDefinition | undefined> {
    const h = await this.repo.findOne('id', id);
    if (!h || !(HANDLER_TYPES as readonly string[]).includes(h.handlerType)) return undefined;
    return { id: h.id, xid: h.xid, name: h.name, disabled: h.disabled, handlerType: h.handlerType as HandlerType, config: h.config, ownerUserId: h.ownerUserId };
  }

  /** What is stored for `body`: checked by the schema, the matchers' references and the type's kind. */
  private async record(user: HandlerSaver, body: unknown, existing: EventHandlerRecord | undefined): Promise<Partial<EventHandlerRecord>> {
    const input = this.validator.validate<EventHandlerInput>('event-handler', body);
    const kind = this.kind(input.handlerType);
    if (!kind) throw DomainError.invalid('handlerType', `${input.handlerType} handlers are not available on this instance`, OBJECT_TYPE);
    const config: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(input)) if (!COMMON_FIELDS.has(field) && value !== undefined) config[field] = value;
    if (existing && existing.handlerType === input.handlerType) {
      // Write-only fields (those the type's view leaves out) keep their stored value when not sent.
      const shown = new Set(Object.keys(kind.view(existing.config)));
      for (const [field, value] of Object.entries(existing.config)) if (!shown.has(field) && !(field in config)) config[field] = value;
    }
    const problems = [...(await this.matcherProblems(input.eventTypes)), ...(await kind.check(config, this.checkLookups))];
    if (problems.length > 0) throw DomainError.validation(problems, OBJECT_TYPE);
    return {
      xid: input.xid ?? existing?.xid ?? generateXid('EH'),
      name: input.name ?? existing?.name ?? '',
      disabled: input.disabled ?? false,
      handlerType: input.handlerType,
      eventTypes: input.eventTypes.map(matcher),
      config,
      actions: [...kind.actions(config)],
      escalationDelayMs: kind.escalationDelayMs(config) ?? null,
      ownerUserId: user.id ?? existing?.ownerUserId ?? null,
    };
  }

  private async matcherProblems(matchers: readonly EventTypeMatcher[]): Promise<ValidationMessage[]> {
    const problems: ValidationMessage[] = [];
    for (const [i, m] of matchers.entries()) {
      if (m.referenceXid === undefined) continue;
      const at = `eventTypes[${i}].referenceXid`;
      if (m.eventType === 'SYSTEM') problems.push(validationMessage(at, 'SYSTEM events have no reference'));
      else if (m.eventType === 'DATA_POINT' && !(await this.references.detectorExists(m.referenceXid))) problems.push(validationMessage(at, 'Event detector not found'));
      else if (m.eventType === 'DATA_SOURCE' && !(await this.references.sourceExists(m.referenceXid))) problems.push(validationMessage(at, 'Data source not found'));
    }
    return problems;
  }
}

/** Stored and to be stored alike, but for the owner (whoever saves an equal handler changes nothing). */
function sameHandler(stored: EventHandlerRecord, next: Partial<EventHandlerRecord>): boolean {
  const fields = ['xid', 'name', 'disabled', 'handlerType', 'eventTypes', 'config', 'actions', 'escalationDelayMs'] as const;
  return fields.every((f) => isDeepStrictEqual(stored[f], next[f]));
}

/** A matcher with only its own fields (a body's extra ones are not stored). */
function matcher(m: EventTypeMatcher): EventTypeMatcher {
  return {
    eventType: m.eventType,
    ...(m.referenceXid !== undefined ? { referenceXid: m.referenceXid } : {}),
    ...(m.minAlarmLevel !== undefined ? { minAlarmLevel: m.minAlarmLevel } : {}),
  };
}
