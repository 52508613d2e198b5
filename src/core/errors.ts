// The service's one error type. Stores, services and the runtime say what went wrong in the
// contract's vocabulary (a kind, a service status name, validation messages); the HTTP edge
// (http/errors.ts) alone decides the status line and renders the body.

/** The contract's service status codes (spec: error responses). */
export const ServiceStatus = {
  NOT_FOUND: -1,
  RQL_PARSE_FAILURE: 4001,
  VALIDATION_FAILED: 4002,
  ALREADY_EXISTS: 4003,
  ACCESS_DENIED: 4004,
  BAD_REQUEST: 4005,
  IP_RATE_LIMITED: 4006,
  USER_RATE_LIMITED: 4007,
  GENERIC_AUTHENTICATION_FAILED: 4008,
  ACCOUNT_DISABLED: 4009,
  CREDENTIALS_EXPIRED: 4010,
  BAD_CREDENTIALS: 4011,
  PASSWORD_CHANGE_FAILED: 4012,
  RQL_VISIT_ERROR: 4013,
  GENERIC_500: 5000,
} as const;

export type ServiceStatusName = keyof typeof ServiceStatus;

/** What kind of failure: each maps to one HTTP status at the edge. */
export type ErrorKind =
  | 'bad-request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'conflict'
  | 'too-large'
  | 'invalid'
  | 'rate-limited'
  | 'device-failed'
  | 'unavailable'
  | 'internal';

const DEFAULT_STATUS_NAME: Record<ErrorKind, ServiceStatusName> = {
  'bad-request': 'BAD_REQUEST',
  unauthenticated: 'GENERIC_AUTHENTICATION_FAILED',
  forbidden: 'ACCESS_DENIED',
  'not-found': 'NOT_FOUND',
  conflict: 'ALREADY_EXISTS',
  'too-large': 'BAD_REQUEST',
  invalid: 'VALIDATION_FAILED',
  'rate-limited': 'IP_RATE_LIMITED',
  'device-failed': 'GENERIC_500',
  unavailable: 'GENERIC_500',
  internal: 'GENERIC_500',
};

export type ValidationLevel = 'ERROR' | 'WARNING' | 'INFO';

export interface ValidationMessage {
  property: string;
  level: ValidationLevel;
  message: string;
  localizedMessage: string;
}

export function validationMessage(property: string, message: string, level: ValidationLevel = 'ERROR'): ValidationMessage {
  return { property, level, message, localizedMessage: message };
}

export interface DomainErrorDetails {
  /** Overrides the kind's usual service status name (e.g. BAD_CREDENTIALS for 'unauthenticated'). */
  statusName?: ServiceStatusName;
  /** Per-property messages of a validation failure. */
  messages?: ValidationMessage[];
  /** For 'rate-limited' and 'unavailable': when the caller may try again (Retry-After). */
  retryAfterSeconds?: number;
  /** What went wrong underneath (logged, never answered). */
  cause?: unknown;
}

export class DomainError extends Error {
  readonly statusName: ServiceStatusName;
  readonly messages: ValidationMessage[] | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    details: DomainErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'DomainError';
    this.statusName = details.statusName ?? DEFAULT_STATUS_NAME[kind];
    this.messages = details.messages;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }

  get serviceStatusCode(): number {
    return ServiceStatus[this.statusName];
  }

  static notFound(message = 'Not found'): DomainError {
    return new DomainError('not-found', message);
  }
  static badRequest(message: string): DomainError {
    return new DomainError('bad-request', message);
  }
  static validation(messages: ValidationMessage[], objectType?: string): DomainError {
    const summary = messages.map((m) => (m.property ? `${m.property} ${m.message}` : m.message)).join('; ');
    return new DomainError('invalid', `Validation failed${objectType ? ` for ${objectType}` : ''}: ${summary}`, { messages });
  }
  static invalid(property: string, message: string, objectType?: string): DomainError {
    return DomainError.validation([validationMessage(property, message)], objectType);
  }
  static conflict(message = 'XID is already in use'): DomainError {
    return new DomainError('conflict', message);
  }
  static accessDenied(message = 'Access denied'): DomainError {
    return new DomainError('forbidden', message);
  }
  static unauthenticated(message = 'Authentication required', statusName?: ServiceStatusName): DomainError {
    return new DomainError('unauthenticated', message, { statusName });
  }
  static tooLarge(message: string): DomainError {
    return new DomainError('too-large', message);
  }
  static rateLimited(statusName: 'IP_RATE_LIMITED' | 'USER_RATE_LIMITED', seconds: number, what: string): DomainError {
    return new DomainError('rate-limited', `${what}; retry in ${seconds} seconds`, { statusName, retryAfterSeconds: seconds });
  }
}
