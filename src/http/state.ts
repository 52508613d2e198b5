// What the middleware chain learns about a request and hands to the routes.
import type { ParameterizedContext } from 'koa';
import type { UserRecord } from '../store/metadata/users.js';
import type { DomainError } from '../core/errors.js';

export type AuthMethod = 'session' | 'token' | 'basic';

export interface Authentication {
  user: UserRecord;
  method: AuthMethod;
  /** Present when authenticated by the session cookie. */
  sessionIdHash?: string;
}

export interface AppState {
  auth?: Authentication;
  /** Why presented credentials were refused; reported only where authentication is required. */
  authError?: DomainError;
  /** JSON_MAX_DEPTH, for the body readers (http/body.ts). */
  jsonMaxDepth?: number;
  /**
   * The status of a failure that came after the answer had started (its response destroyed): what
   * the request log records instead of the status line the client got (http/errors.ts).
   */
  failedStatus?: number;
  /** The alias prefix the request came under (/rest/v3), when not /rest/latest (http/api-alias.ts). */
  apiPrefix?: string;
}

export type AppContext = ParameterizedContext<AppState>;
