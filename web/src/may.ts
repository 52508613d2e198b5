// What the logged-in user may do, so the console shows only the actions the service would allow.
// Each rule mirrors the check the service makes (src/services/permissions.ts and the service named at
// each rule); change them together. A permission is a list of role names: `superadmin` holds every
// permission, the role `user` is every logged-in user, and an empty list means superadmins only.
// Hiding a button is a courtesy: the service still checks every request.
import type { DataPoint, User } from './api.js';

export const SUPERADMIN = 'superadmin';
const EVERY_USER = 'user';

/** The roles a permission check looks at (Principal in permissions.ts): the user's `permissions`. */
export type Who = Pick<User, 'permissions'> | undefined;

/** Roles of a resource that guards its reading and editing (points, sources, detectors). */
export interface Guarded {
  readPermission?: readonly string[];
  editPermission?: readonly string[];
}

export function isSuperadmin(user: Who): boolean {
  return user?.permissions.includes(SUPERADMIN) ?? false;
}

/** permissions.ts hasPermission: superadmin, or any of the roles is `user` or one the user holds. */
export function holds(user: Who, roles: readonly string[] | undefined): boolean {
  if (!user) return false;
  if (isSuperadmin(user)) return true;
  return (roles ?? []).some((role) => role === EVERY_USER || user.permissions.includes(role));
}

/** DataSourceService.create, copySource, the Users, Event handlers and Configuration views: superadmin. */
export const mayCreateSource = isSuperadmin;
export const mayManageUsers = isSuperadmin;

/**
 * DataSourceService.getForEdit (update, enable-disable, delete, discover): read and edit permission
 * on the source. Adding a point to it asks the same (DataPointService.newRecord: edit on its source).
 */
export function mayEditSource(user: Who, ds: Guarded): boolean {
  return holds(user, ds.readPermission) && holds(user, ds.editPermission);
}

export const mayAddPointTo = mayEditSource;

/**
 * DataPointService.checkEdit (update, enable-disable, delete, the point's settings, deleting its
 * history, making a detector on it): read permission on the point, and edit permission on the point
 * or on its source. `source`: the point's source as the user can read it, undefined when unknown (a
 * source the user cannot read shows no roles here, so only the point's own edit roles count).
 */
export function mayEditPoint(user: Who, dp: Guarded, source: Guarded | undefined): boolean {
  if (!holds(user, dp.readPermission)) return false;
  return holds(user, dp.editPermission) || (source !== undefined && holds(user, source.editPermission));
}

/** PointValueService.delete (DELETE /point-values/<xid>): exactly the point's edit rule. */
export const mayDeleteHistory = mayEditPoint;

/** PointValueService maySet (PUT /point-values/<xid>): a settable point, read and set permission. */
export function maySetPoint(user: Who, dp: Guarded & { setPermission?: readonly string[]; pointLocator: Pick<DataPoint['pointLocator'], 'settable'> }): boolean {
  return dp.pointLocator.settable === true && holds(user, dp.readPermission) && holds(user, dp.setPermission);
}

/** EventDetectorService.checkEdit: edit permission on the detector, or the point's edit rule. */
export function mayEditDetector(user: Who, detector: Guarded, pointEditable: boolean): boolean {
  return pointEditable || holds(user, detector.editPermission);
}

/**
 * EventService.acknowledge and addComment ask only that the user may read the event, and the alarm
 * list shows only events the user may read: whoever sees an alarm may acknowledge and comment on it.
 */
export function mayAcknowledge(user: Who): boolean {
  return user !== undefined;
}

/** UserService.delete: superadmin, never one's own account. */
export function mayDeleteUser(user: Pick<User, 'permissions' | 'username'> | undefined, username: string): boolean {
  return isSuperadmin(user) && user?.username !== username;
}
