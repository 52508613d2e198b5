// The HTTP edge of the service's errors: the one place that maps a DomainError to a status line
// and renders the contract's error body, also for what fails after the middleware chain is done.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { DomainError, type ErrorKind, type ValidationMessage } from '../core/errors.js';
import { influxErrorFields, isInfluxWritePath } from './influx-errors.js';
import { NOSNIFF } from './security-headers.js';
import type { AppState } from './state.js';

const KIND_STATUS: Record<ErrorKind, number> = {
  'bad-request': 400,
  unauthenticated: 401,
  forbidden: 403,
  'not-found': 404,
  conflict: 409,
  'too-large': 413,
  invalid: 422,
  'rate-limited': 429,
  internal: 500,
  'device-failed': 502,
  unavailable: 503,
};

/** A failure only HTTP knows (405, 501, 414, 431…): its status is its own, its body a BAD_REQUEST. */
export class HttpStatusError extends DomainError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super('bad-request', message);
  }
}

export function httpStatus(err: DomainError): number {
  return err instanceof HttpStatusError ? err.status : KIND_STATUS[err.kind];
}

/** Headers the answer to this error carries (Retry-After on 429). */
export function errorHeaders(err: DomainError): Record<string, string> {
  return err.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(err.retryAfterSeconds) };
}

export interface ErrorBody {
  serviceStatusCode: number;
  serviceStatusName: string;
  message: string;
  localizedMessage: string;
  result?: { messages: ValidationMessage[] };
}

export function errorBody(err: DomainError): ErrorBody {
  const body: ErrorBody = {
    serviceStatusCode: err.serviceStatusCode,
    serviceStatusName: err.statusName,
    message: err.message,
    localizedMessage: err.message,
  };
  if (err.messages) body.result = { messages: err.messages };
  return body;
}

/** Errors thrown by Koa itself or by libraries (http-errors shape) become DomainErrors here. */
function toDomainError(err: unknown): DomainError | undefined {
  if (err instanceof DomainError) return err;
  const status = (err as { status?: unknown; expose?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404) return DomainError.notFound();
    if (status === 413) return DomainError.tooLarge('Request body too large');
    return new HttpStatusError(status, 'Bad request');
  }
  return undefined;
}

/**
 * Answers on a raw socket, where Koa never runs (a refused WebSocket upgrade, a request Node's
 * parser refused): a complete HTTP/1.1 response with the error body, then the connection closes.
 */
export function writeErrorToSocket(socket: Duplex, err: DomainError): void {
  if (socket.destroyed) return;
  const status = httpStatus(err);
  const body = JSON.stringify(errorBody(err));
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Connection: close',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries({ ...NOSNIFF, ...errorHeaders(err) }).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

export const internalError = new DomainError('internal', 'Internal server error');

/** A driver's error as one log field: its code and message, without a stack. */
function describeCause(cause: unknown): string | undefined {
  if (!(cause instanceof Error)) return cause === undefined ? undefined : String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  return code ? `${code}: ${cause.message}` : cause.message;
}

/** A body Koa would serialise with JSON.stringify after the middleware chain (a plain object or array). */
function isJsonValue(body: unknown): body is object {
  if (typeof body !== 'object' || body === null) return false;
  const proto = Object.getPrototypeOf(body) as unknown;
  return Array.isArray(body) || proto === Object.prototype || proto === null;
}

/** The failure as the client is to hear it; an unexpected one is logged (never answered) here. */
function failureOf(err: unknown, ctx: Context, log: Logger): DomainError {
  const failure = toDomainError(err);
  if (!failure) {
    log.error({ err, method: ctx.method, path: ctx.path }, 'unexpected error');
    return internalError;
  }
  if (failure.kind === 'unavailable') {
    // An operator's problem, not the client's: said once per request, without a stack.
    log.warn({ method: ctx.method, path: ctx.path, cause: describeCause(failure.cause) }, failure.message);
  }
  return failure;
}

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
        if (ctx.status === 404) throw DomainError.notFound();
        if (ctx.status === 405) throw new HttpStatusError(405, 'Method not allowed');
        if (ctx.status === 501) throw new HttpStatusError(501, 'Method not implemented');
      }
      // Serialised here rather than by Koa after the chain, so that a body JSON.stringify cannot
      // write (too deep, a BigInt) is an error answer like any other, and logged with its status.
      if (isJsonValue(ctx.body)) ctx.body = JSON.stringify(ctx.body);
    } catch (err) {
      const failure = failureOf(err, ctx, log);
      ctx.status = httpStatus(failure);
      ctx.set(errorHeaders(failure));
      ctx.body = isInfluxWritePath(ctx.path) ? { ...errorBody(failure), ...influxErrorFields(failure, ctx.status) } : errorBody(failure);
    }
  };
}

/** A streamed answer's source failed after the first byte had gone out (see http/stream.ts). */
export class LateFailure extends Error {
  override readonly name = 'LateFailure';

  constructor(readonly failure: unknown) {
    super('answer failed after it had started');
  }
}

/**
 * Koa's last resort (ctx.onerror), replaced: what fails once the middleware chain is done, such as a
 * body stream that breaks. Before anything went out the failure still gets the error body; after the
 * first byte the response is destroyed (the client sees a truncated body, never one closed as if
 * whole) and the request log records the failure's status (`failedStatus`) instead of the 200 the
 * client got. Anything else there is the connection's end: a client that went away. Koa calls this
 * only while the app has an 'error' listener, which it adds itself when there is none; with
 * `app.silent` that listener says nothing, and this handler emits nothing.
 */
export function answerLateFailures(app: Koa<AppState>, log: Logger): void {
  app.silent = true;
  app.context.onerror = function onLateFailure(this: Context & { state: AppState }, err: unknown): void {
    if (err === null || err === undefined) return;
    const where = { method: this.method, path: this.path };
    const cause = err instanceof LateFailure ? err.failure : err;
    if (!this.headerSent && this.writable) {
      const failure = failureOf(cause, this, log);
      const { res } = this;
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      const body = JSON.stringify(errorBody(failure));
      res.writeHead(httpStatus(failure), { ...NOSNIFF, ...errorHeaders(failure), 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    if (err instanceof LateFailure) {
      const failure = toDomainError(cause);
      this.state.failedStatus = failure ? httpStatus(failure) : 500;
      log.error({ err: cause, ...where }, 'answer failed after it had started; response destroyed');
      if (!this.res.destroyed) this.res.destroy();
    } else {
      log.debug({ code: (err as NodeJS.ErrnoException).code, ...where }, 'connection ended before the answer did');
    }
  };
}
