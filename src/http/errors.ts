// The one error type of the service and the one place that renders error bodies.
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';

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

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly statusName: ServiceStatusName,
    message: string,
    readonly messages?: ValidationMessage[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get serviceStatusCode(): number {
    return ServiceStatus[this.statusName];
  }

  static notFound(message = 'Not found'): ApiError {
    return new ApiError(404, 'NOT_FOUND', message);
  }
  static badRequest(message: string): ApiError {
    return new ApiError(400, 'BAD_REQUEST', message);
  }
  static validation(messages: ValidationMessage[], objectType?: string): ApiError {
    const summary = messages.map((m) => (m.property ? `${m.property} ${m.message}` : m.message)).join('; ');
    return new ApiError(422, 'VALIDATION_FAILED', `Validation failed${objectType ? ` for ${objectType}` : ''}: ${summary}`, messages);
  }
  static invalid(property: string, message: string, objectType?: string): ApiError {
    return ApiError.validation([validationMessage(property, message)], objectType);
  }
  static conflict(message = 'XID is already in use'): ApiError {
    return new ApiError(409, 'ALREADY_EXISTS', message);
  }
  static accessDenied(message = 'Access denied'): ApiError {
    return new ApiError(403, 'ACCESS_DENIED', message);
  }
  static unauthenticated(message = 'Authentication required'): ApiError {
    return new ApiError(401, 'GENERIC_AUTHENTICATION_FAILED', message);
  }
}

export interface ErrorBody {
  serviceStatusCode: number;
  serviceStatusName: string;
  message: string;
  localizedMessage: string;
  result?: { messages: ValidationMessage[] };
}

export function errorBody(err: ApiError): ErrorBody {
  const body: ErrorBody = {
    serviceStatusCode: err.serviceStatusCode,
    serviceStatusName: err.statusName,
    message: err.message,
    localizedMessage: err.message,
  };
  if (err.messages) body.result = { messages: err.messages };
  return body;
}

/** Errors thrown by Koa itself or by libraries (http-errors shape) become ApiErrors here. */
function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const status = (err as { status?: unknown; expose?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404) return ApiError.notFound();
    if (status === 413) return new ApiError(413, 'BAD_REQUEST', 'Request body too large');
    return new ApiError(status, 'BAD_REQUEST', 'Bad request');
  }
  return undefined;
}

const internalError = new ApiError(500, 'GENERIC_500', 'Internal server error');

/**
 * Outermost middleware: renders every failure, including routes that matched nothing,
 * as the contract's error body. Unexpected errors are logged and never leak internals.
 */
export function errorMiddleware(log: Logger) {
  return async function renderErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        // Routing outcomes that carry no body: no route (404), or a route without this method.
        if (ctx.status === 404) throw ApiError.notFound();
        if (ctx.status === 405) throw new ApiError(405, 'BAD_REQUEST', 'Method not allowed');
        if (ctx.status === 501) throw new ApiError(501, 'BAD_REQUEST', 'Method not implemented');
      }
    } catch (err) {
      let apiError = toApiError(err);
      if (!apiError) {
        log.error({ err, method: ctx.method, path: ctx.path }, 'unexpected error');
        apiError = internalError;
      }
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.headers ?? {})) ctx.set(name, value);
      ctx.body = errorBody(apiError);
    }
  };
}
