// One open WebSocket: bounded sending (a slow consumer is dropped, never buffered without bound),
// the heartbeat, messages handled one at a time in arrival order, and closing with a reason.
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { SocketAuth } from './websocket-handshake.js';

/** Close codes: the contract's 4102–4104, Mango's 4101 for an ended session, and RFC 6455 codes. */
export const CloseCode = {
  GOING_AWAY: 1001,
  POLICY_VIOLATION: 1008,
  SERVER_ERROR: 1011,
  /** The client read too slowly: its send buffer passed the bound. It may reconnect later. */
  TRY_AGAIN_LATER: 1013,
  SESSION_ENDED: 4101,
  USER_CHANGED: 4102,
  TOKENS_REVOKED: 4103,
  TOKEN_EXPIRED: 4104,
} as const;

export type CloseCodeValue = (typeof CloseCode)[keyof typeof CloseCode];

const CLOSE_REASONS: Record<CloseCodeValue, string> = {
  1001: 'Service stopping',
  1008: 'Too many messages waiting to be handled',
  1011: 'Internal error',
  1013: 'Slow consumer: too much unsent data',
  4101: 'Session ended',
  4102: 'User changed or disabled',
  4103: 'Tokens revoked',
  4104: 'Token expired',
};

export interface ConnectionLimits {
  /** Bytes the socket may hold unsent before the client counts as a slow consumer. */
  maxBufferedBytes: number;
  /** Bytes of client messages waiting to be handled before the client counts as flooding. */
  maxPendingBytes: number;
  /** How long a closing socket may take to finish the closing handshake before it is cut. */
  closeGraceMs: number;
}

// setTimeout takes at most 2^31 - 1 ms; longer token lifetimes are caught by the heartbeat sweep.
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Connection {
  /** Cleared by each ping, set by each pong: a ping finding it cleared means no pong came back. */
  private answeredPing = true;
  private released = false;
  private pendingBytes = 0;
  private work: Promise<void> = Promise.resolve();
  private corked = false;
  private readonly expiryTimer: NodeJS.Timeout | undefined;
  private readonly releaseListeners: (() => void)[] = [];

  /** `socket` is the TCP (or TLS) socket under `ws`, held to batch writes. */
  constructor(
    readonly ws: WebSocket,
    private readonly socket: Duplex,
    readonly auth: SocketAuth,
    private readonly limits: ConnectionLimits,
  ) {
    ws.on('pong', () => (this.answeredPing = true));
    ws.on('close', () => this.release());
    ws.on('error', () => this.release());
    const expiresIn = auth.tokenExpiry === undefined ? undefined : auth.tokenExpiry - Date.now();
    if (expiresIn !== undefined && expiresIn <= MAX_TIMER_MS) {
      this.expiryTimer = setTimeout(() => this.close(CloseCode.TOKEN_EXPIRED), Math.max(0, expiresIn));
      this.expiryTimer.unref();
    }
  }

  get open(): boolean {
    return !this.released;
  }

  /** Runs once, when the connection stops being served (closed by either side, or dropped). */
  onRelease(listener: () => void): void {
    if (this.released) listener();
    else this.releaseListeners.push(listener);
  }

  /**
   * Queues a text message; a client whose unsent data passes the bound is dropped instead (1013).
   * A message for many connections comes as one UTF-8 Buffer, encoded once for all of them.
   */
  send(text: string | Buffer): void {
    if (this.released) return;
    if (this.ws.bufferedAmount + text.length > this.limits.maxBufferedBytes) {
      this.close(CloseCode.TRY_AGAIN_LATER);
      return;
    }
    // A bulk write publishes many values in one synchronous burst: the socket is corked until the
    // burst ends, so its messages leave in one write system call instead of one each.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      queueMicrotask(this.uncork);
    }
    this.ws.send(text, { binary: false });
  }

  private readonly uncork = (): void => {
    this.corked = false;
    this.socket.uncork();
  };

  /**
   * Handles client messages one at a time, in order (a subscribe must finish before the next
   * message changes it); a client that sends faster than it is served is closed (1008).
   */
  enqueue(bytes: number, handler: () => Promise<void>): void {
    if (this.released) return;
    this.pendingBytes += bytes;
    if (this.pendingBytes > this.limits.maxPendingBytes) {
      this.close(CloseCode.POLICY_VIOLATION);
      return;
    }
    this.work = this.work.then(async () => {
      try {
        if (!this.released) await handler();
      } finally {
        this.pendingBytes -= bytes;
      }
    });
  }

  /** One heartbeat: false when the previous ping went unanswered (the socket is cut) or the client reads too slowly (1013). */
  ping(): boolean {
    if (this.released) return true;
    if (!this.answeredPing) {
      this.terminate();
      return false;
    }
    // A client that reads too slowly is told so (1013) rather than cut without a word.
    if (this.ws.bufferedAmount > this.limits.maxBufferedBytes) {
      this.close(CloseCode.TRY_AGAIN_LATER);
      return false;
    }
    this.answeredPing = false;
    this.ws.ping();
    return true;
  }

  /**
   * Stops serving at once (subscriptions go, memory is freed), sends the close frame, and cuts the
   * socket if the client has not completed the closing handshake within the grace period.
   */
  close(code: CloseCodeValue): void {
    if (this.released) return;
    this.release();
    this.ws.close(code, CLOSE_REASONS[code]);
    setTimeout(() => this.ws.terminate(), this.limits.closeGraceMs).unref();
  }

  terminate(): void {
    this.release();
    this.ws.terminate();
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    for (const listener of this.releaseListeners.splice(0)) listener();
  }
}
