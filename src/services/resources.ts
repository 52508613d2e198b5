// What every permission-guarded, XID-named resource shares: generated XIDs, the read filter for
// lists, and the translation of a duplicate XID into 409.
import { randomBytes } from 'node:crypto';
import { DomainError } from '../core/errors.js';
import { SqlParams, compileRql, type ResourceDef, type SqlQueryParts } from '../core/rql/index.js';
import { PgErrorCode, pgErrorCode } from '../store/metadata/db.js';
import { isSuperadmin, USER_ROLE, type Principal } from './permissions.js';

/** DS_, DP_, ED_ ... followed by 12 random upper-case letters and digits. */
export function generateXid(prefix: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const bytes = randomBytes(12);
  let id = '';
  for (const b of bytes) id += alphabet[b % alphabet.length];
  return `${prefix}_${id}`;
}

/**
 * Compiles a list request: the RQL string, narrowed for non-superadmins to rows where every one of
 * the read permission columns (role arrays: the row's own, and those it inherits) shares a role with
 * the user.
 */
export function listQuery(user: Principal, resource: ResourceDef, rawQuery: string, readPermissionColumns: string | readonly string[]): SqlQueryParts {
  if (isSuperadmin(user)) return compileRql(resource, rawQuery);
  const params = new SqlParams();
  const roles = `${params.add([...user.permissions, USER_ROLE])}::text[]`;
  const columns = typeof readPermissionColumns === 'string' ? [readPermissionColumns] : readPermissionColumns;
  const scope = columns.map((column) => `${column} && ${roles}`).join(' and ');
  const q = compileRql(resource, rawQuery, params);
  return { ...q, where: `(${scope}) and ${q.where}` };
}

export function translateDuplicateXid(err: unknown): unknown {
  return pgErrorCode(err) === PgErrorCode.UNIQUE_VIOLATION ? DomainError.conflict('XID is already in use') : err;
}

/** A page of a list: the total of all matches and the rows of the window, in batches. */
export interface ListResult<T> {
  total: number;
  batches: AsyncIterable<T[]>;
}

/**
 * A PATCH body over the stored resource's API view: each top-level field given replaces the view's, the
 * others keep theirs, and the result goes through PUT unchanged (its validation and permission checks),
 * so a PATCH can do nothing a PUT could not. Shallow, as Mango's (Jackson's readerForUpdating without
 * @JsonMerge): a nested object given (pointLocator, loggingProperties, tags, purgePeriod) replaces the
 * stored one whole. A body that is not an object is handed on as it is, for PUT to refuse.
 */
export function mergePatch(view: Record<string, unknown>, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  return { ...view, ...(patch as Record<string, unknown>) };
}
