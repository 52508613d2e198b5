// Requests Node refuses before Koa sees them, answered with the contract's error body instead of
// Node's bare status line: a request target over the URL limit gets 414, a request line plus
// headers over the header limit (Node's maxHeaderSize) 431, other parse failures 400 (408 for a
// request timeout, 413 for oversized chunk extensions, as Node would choose). All carry 4005 BAD_REQUEST.
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, httpStatus, HttpStatusError, writeErrorToSocket } from './errors.js';
import { NOSNIFF } from './security-headers.js';

export interface ClientLimits {
  /** Request line plus headers, in bytes: the server's maxHeaderSize (MAX_HEADER_BYTES). */
  maxHeaderBytes: number;
  /** Request target (path and query), in bytes (MAX_URL_BYTES); at most maxHeaderBytes. */
  maxUrlBytes: number;
}

/** How long a refused connection may keep sending before it is destroyed. */
const LINGER_MS = 1_000;

/** Node's parser error codes (err.code on a clientError) and what each is answered with. */
function refusal(code: string | undefined, limits: ClientLimits): HttpStatusError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      // Node's parser counts the request line in the same budget and cannot say which part overflowed.
      return new HttpStatusError(431, `Request line and headers exceed ${limits.maxHeaderBytes} bytes`);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpStatusError(408, 'Request timeout');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new HttpStatusError(413, 'Chunk extensions too large');
    default:
      return new HttpStatusError(400, 'Malformed HTTP request');
  }
}

/** Node's own guard (socketOnError): never write into a response that has already started. */
function responseInFlight(socket: Duplex): boolean {
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  return current?.headersSent === true;
}

function refuseUrl(res: ServerResponse, limits: ClientLimits): void {
  const err = new HttpStatusError(414, `Request URL exceeds ${limits.maxUrlBytes} bytes`);
  const body = JSON.stringify(errorBody(err));
  // The body of such a request is not read: close rather than parse what follows it.
  res.writeHead(httpStatus(err), {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...NOSNIFF,
    Connection: 'close',
  });
  res.end(body);
}

/**
 * Answers client errors on `server` with the error body (call once, after createServer with
 * maxHeaderSize = limits.maxHeaderBytes): installs the clientError handler and puts the URL
 * length check in front of the server's request listeners.
 */
export function answerClientErrors(server: Server, limits: ClientLimits): void {
  // http.Server offers no URL limit of its own: the app's listeners run behind this check.
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // req.url holds the raw target, one character per byte (latin1).
    if ((req.url?.length ?? 0) > limits.maxUrlBytes) refuseUrl(res, limits);
    else for (const listener of listeners) listener.call(server, req, res);
  });

  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // The parser reports again for every chunk that arrives after its first error: answer once.
    if (socket.destroyed || socket.writableEnded) return;
    if (err.code === 'ECONNRESET' || !socket.writable || responseInFlight(socket)) {
      socket.destroy();
      return;
    }
    writeErrorToSocket(socket, refusal(err.code, limits));
    // Destroying at once would reset the connection while the client is still sending its oversized
    // headers, and a reset can discard our answer before the client reads it: let the client read it,
    // discard what it still sends, and destroy when it closes or after a short linger.
    socket.resume();
    socket.once('end', () => socket.destroy());
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
