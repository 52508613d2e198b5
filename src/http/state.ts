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
}

export type AppContext = ParameterizedContext<AppState>;
