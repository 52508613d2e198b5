// The one place that decides whether a user holds a permission. Every resource reuses it.
// A permission is an array of role names; `superadmin` holds every permission, `user` is every
// logged-in user, and an empty array means superadmin only.
import { DomainError } from '../core/errors.js';

export const SUPERADMIN = 'superadmin';
export const USER_ROLE = 'user';

export interface Principal {
  username: string;
  permissions: readonly string[];
}

export function isSuperadmin(user: Principal): boolean {
  return user.permissions.includes(SUPERADMIN);
}

export function hasPermission(user: Principal, required: readonly string[]): boolean {
  if (isSuperadmin(user)) return true;
  return required.some((role) => role === USER_ROLE || user.permissions.includes(role));
}

export function assertPermission(user: Principal, required: readonly string[], message = 'Access denied'): void {
  if (!hasPermission(user, required)) throw DomainError.accessDenied(message);
}

export function assertSuperadmin(user: Principal): void {
  if (!isSuperadmin(user)) throw DomainError.accessDenied();
}

/** Role names are trimmed, non-empty and unique; order is kept for a stable round trip. */
export function normaliseRoles(roles: readonly string[]): string[] {
  return [...new Set(roles.map((r) => r.trim()).filter((r) => r.length > 0))];
}
