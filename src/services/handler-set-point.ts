// The SET_POINT handler type: when the event is raised (active) or returns to normal (inactive), the
// target point is set to a static value or to another point's current value, through the same path
// as a user's PUT /point-values/<xid> (the device first, then stored), with the permissions of the
// handler's owner. A device that failed is tried again; a refusal that will not change is not.
import { DomainError, validationMessage, type ValidationMessage } from '../core/errors.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { UserRecord } from '../store/metadata/users.js';
import { coerceValue } from '../values/ingest/types.js';
import type { DeliveryAttempt, DeliveryResult, HandlerAction, HandlerKind } from './handler-kinds.js';
import type { Principal } from './permissions.js';
import type { SetValueResult } from './point-values.js';

export const SET_POINT_ACTIONS = ['NONE', 'STATIC_VALUE', 'POINT_VALUE'] as const;
export type SetPointAction = (typeof SET_POINT_ACTIONS)[number];

/** What one side (active or inactive) does. */
export type SetPointStep = { action: 'NONE' } | { action: 'STATIC_VALUE'; value: unknown } | { action: 'POINT_VALUE'; pointXid: string };

export interface SetPointHandlerConfig {
  targetPointXid: string;
  active: SetPointStep;
  inactive: SetPointStep;
}

export interface SetPointHandlerDeps {
  /** The handler's owner, whose permissions the set is made with. */
  users: { findById(id: number): Promise<Pick<UserRecord, 'username' | 'permissions' | 'disabled'> | undefined> };
  /** The point-value facade: the points by XID, a readable point's value, and the user's set path. */
  values: {
    point(xid: string): Promise<DataPointRecord | undefined>;
    readablePoint(user: Principal, xid: string): Promise<DataPointRecord>;
    lastValue(point: DataPointRecord): Promise<number | boolean | string | undefined>;
    set(user: Principal, xid: string, body: unknown): Promise<SetValueResult>;
  };
}

const SIDES = [
  { side: 'active', action: 'activeAction', value: 'activeValue', pointXid: 'activePointXid' },
  { side: 'inactive', action: 'inactiveAction', value: 'inactiveValue', pointXid: 'inactivePointXid' },
] as const;

export function setPointHandlerKind(deps: SetPointHandlerDeps): HandlerKind {
  return {
    type: 'SET_POINT',

    async check(config, lookups) {
      // In an import, its transaction's points (the document's own included).
      const point = (xid: string) => (lookups ?? deps.values).point(xid);
      const problems: ValidationMessage[] = [];
      const { targetPointXid } = config;
      let target: DataPointRecord | undefined;
      if (typeof targetPointXid !== 'string' || targetPointXid === '') problems.push(validationMessage('targetPointXid', 'is required'));
      else {
        target = await point(targetPointXid);
        if (!target) problems.push(validationMessage('targetPointXid', `Data point not found: ${targetPointXid}`));
        else if (!target.settable) problems.push(validationMessage('targetPointXid', `Data point is not settable: ${targetPointXid}`));
      }
      let acts = false;
      for (const s of SIDES) {
        const action = config[s.action] ?? 'NONE';
        if (!(SET_POINT_ACTIONS as readonly unknown[]).includes(action)) {
          problems.push(validationMessage(s.action, `must be one of: ${SET_POINT_ACTIONS.join(', ')}`));
          continue;
        }
        if (action !== 'NONE') acts = true;
        if (action === 'STATIC_VALUE') {
          const value = config[s.value];
          if (value === undefined || value === null) problems.push(validationMessage(s.value, 'is required with STATIC_VALUE'));
          else if (target) {
            const wrong = typeMismatch(target.dataType, value);
            if (wrong) problems.push(validationMessage(s.value, `${wrong} (the target ${target.xid} is ${target.dataType})`));
          }
        } else if (action === 'POINT_VALUE') {
          const xid = config[s.pointXid];
          if (typeof xid !== 'string' || xid === '') problems.push(validationMessage(s.pointXid, 'is required with POINT_VALUE'));
          else {
            const source = await point(xid);
            if (!source) problems.push(validationMessage(s.pointXid, `Data point not found: ${xid}`));
            else if (target && source.dataType !== target.dataType) {
              problems.push(validationMessage(s.pointXid, `must be a ${target.dataType} point like the target ${target.xid}, ${xid} is ${source.dataType}`));
            }
          }
        }
      }
      if (!acts) problems.push(validationMessage('activeAction', 'does nothing: activeAction or inactiveAction must be STATIC_VALUE or POINT_VALUE'));
      return problems;
    },

    actions(config) {
      const c = readConfig(config);
      const actions: HandlerAction[] = [];
      if (c.active.action !== 'NONE') actions.push('RAISED');
      if (c.inactive.action !== 'NONE') actions.push('RETURN_TO_NORMAL');
      return actions;
    },

    escalationDelayMs() {
      return undefined;
    },

    // Every field of the type that is stored is shown (none is write-only): a PUT that leaves one out drops it.
    view(config) {
      const c = readConfig(config);
      const out: Record<string, unknown> = { targetPointXid: c.targetPointXid };
      for (const s of SIDES) {
        out[s.action] = c[s.side].action;
        if (config[s.value] !== undefined) out[s.value] = config[s.value];
        if (config[s.pointXid] !== undefined) out[s.pointXid] = config[s.pointXid];
      }
      return out;
    },

    async deliver(attempt) {
      try {
        return await deliver(attempt);
      } catch (err) {
        return failure(err);
      }
    },
  };

  async function deliver({ handler, action, event }: DeliveryAttempt): Promise<DeliveryResult> {
    const c = readConfig(handler.config);
    const step = action === 'RAISED' ? c.active : action === 'RETURN_TO_NORMAL' ? c.inactive : undefined;
    if (!step || step.action === 'NONE') return { outcome: 'FAILED', error: `SET_POINT does nothing on ${action}`, retry: false };
    const owner = handler.ownerUserId === null ? undefined : await deps.users.findById(handler.ownerUserId);
    if (!owner) return { outcome: 'FAILED', error: 'The handler has no owner (its user no longer exists): save it again', retry: false };
    if (owner.disabled) return { outcome: 'FAILED', error: `The handler's owner ${owner.username} is disabled`, retry: false };
    const user: Principal = { username: owner.username, permissions: owner.permissions };
    let value: unknown;
    if (step.action === 'STATIC_VALUE') value = step.value;
    else {
      // Read with the owner's permissions too: the handler must not show what its owner may not see.
      const source = await deps.values.readablePoint(user, step.pointXid);
      value = await deps.values.lastValue(source);
      if (value === undefined) return { outcome: 'FAILED', error: `Data point ${step.pointXid} has no value to set`, retry: false };
    }
    const target = await deps.values.point(c.targetPointXid);
    if (!target) return { outcome: 'FAILED', error: `Data point not found: ${c.targetPointXid}`, retry: false };
    await deps.values.set(user, target.xid, {
      dataType: target.dataType,
      value,
      annotation: `Set by event handler ${handler.xid} (event ${event.id}, ${action})`,
    });
    return { outcome: 'SENT' };
  }
}

/** The fields as stored: each side's action (NONE when absent) with its value or point. */
export function readConfig(config: Record<string, unknown>): SetPointHandlerConfig {
  const step = (s: (typeof SIDES)[number]): SetPointStep => {
    const action = config[s.action];
    if (action === 'STATIC_VALUE') return { action, value: config[s.value] };
    if (action === 'POINT_VALUE' && typeof config[s.pointXid] === 'string') return { action, pointXid: config[s.pointXid] as string };
    return { action: 'NONE' };
  };
  return { targetPointXid: typeof config.targetPointXid === 'string' ? config.targetPointXid : '', active: step(SIDES[0]), inactive: step(SIDES[1]) };
}

/** A static value in the target's data type, as JSON gives it (no text for a number); why not, else undefined. */
function typeMismatch(dataType: DataPointRecord['dataType'], value: unknown): string | undefined {
  const json = { NUMERIC: 'number', MULTISTATE: 'number', BINARY: 'boolean', ALPHANUMERIC: 'string' }[dataType];
  if (typeof value !== json) return `must be a ${json}`;
  const coerced = coerceValue(dataType, value);
  return typeof coerced === 'string' ? coerced : undefined;
}

/**
 * The device or the store failed, or something unforeseen: try again. A refusal of the set itself (no
 * permission, a point gone, not settable or disabled, a value the point does not take) will not change.
 */
function failure(err: unknown): DeliveryResult {
  const error = err instanceof Error ? err.message : String(err);
  if (err instanceof DomainError) {
    const retry = err.kind === 'device-failed' || err.kind === 'unavailable' || err.kind === 'internal';
    return { outcome: 'FAILED', error, retry };
  }
  return { outcome: 'FAILED', error, retry: true };
}
