// The WebSocket endpoints on the service's HTTP server: the upgrade (path, handshake
// authentication, refusal as an HTTP error), the heartbeat, and closing every socket on stop.
//   /rest/latest/websocket/point-value   live point values (websocket-point-values.ts)
//   /rest/latest/websocket/events        events (websocket-events.ts)
// Where the contract is silent:
// - Refusals are HTTP responses with the error body: 401 (no or bad credentials), 403 (session cookie
//   from a foreign Origin, websocket-handshake.ts), 404 (another path), 429 (an address whose
//   upgrades keep failing: the anonymous rate limit, in buckets of its own), 503 (stopping).
// - Close codes: 4101 session ended (logout or expiry, noticed at the next heartbeat; Mango's code),
//   4102 user deleted, disabled, renamed, or its password or permissions changed, 4103 tokens revoked
//   or signing keys reset (token sockets only), 4104 the handshake token expired, 1013 slow consumer
//   (more than maxBufferedBytes unsent; reconnect later), 1008 a client whose unhandled messages
//   pass maxPendingBytes, 1001 service stopping. A ping goes out every 10 s; no pong by the next
//   one cuts the socket (1006 at the client).
// - Each heartbeat also rechecks every socket's credentials against the store (one lookup per user,
//   session or token per sweep), which catches what another instance changed.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { API_PREFIX, canonicalApiPath } from '../core/api-paths.js';
import { DomainError } from '../core/errors.js';
import { DEFAULT_JSON_MAX_DEPTH } from '../core/json.js';
import { TimeSlice } from '../core/time-slice.js';
import { httpStatus, internalError, writeErrorToSocket } from '../http/errors.js';
import type { EventService } from '../services/events.js';
import type { Channel } from './websocket-channel.js';
import { CloseCode, Connection, type ConnectionLimits } from './websocket-connection.js';
import { CredentialWatch, type CredentialDeps } from './websocket-credentials.js';
import { EventChannel } from './websocket-events.js';
import { Handshake, type HandshakeDeps, type SocketAuth } from './websocket-handshake.js';
import { PointValueChannel, type PointValueChannelDeps, type PointValueLimits } from './websocket-point-values.js';

export interface WebSocketOptions extends ConnectionLimits, PointValueLimits {
  /** Pings every this often; a socket that has not answered the previous ping is cut. */
  pingIntervalMs: number;
  /** The largest message a client may send (subscriptions are small). */
  maxPayloadBytes: number;
}

/** The heartbeat's work (pings, credential checks) runs in slices of this many ms, a live value's fan-out between. */
export const HEARTBEAT_SLICE_MS = 3;

export const DEFAULT_WEBSOCKET_OPTIONS: WebSocketOptions = {
  pingIntervalMs: 10_000,
  maxBufferedBytes: 1024 * 1024,
  // A client may subscribe to all its points at once: 1,000 subscriptions are ~100 KiB.
  maxPendingBytes: 1024 * 1024,
  closeGraceMs: 5_000,
  maxSubscriptions: 1_000,
  maxPayloadBytes: 16 * 1024,
  maxJsonDepth: DEFAULT_JSON_MAX_DEPTH, // service.ts passes JSON_MAX_DEPTH
};

/** The services the WebSocket endpoints use. */
export type WebSocketDeps = HandshakeDeps & CredentialDeps & PointValueChannelDeps & { events: EventService };

/** Builds the channel of one endpoint. */
export type ChannelFactory = (s: WebSocketDeps, log: Logger, options: WebSocketOptions) => Channel;

export const WEBSOCKET_CHANNELS: Record<string, ChannelFactory> = {
  'point-value': (s, log, options) => new PointValueChannel(s, log, options),
  events: (s, log) => new EventChannel(s.events, log),
};

export class WebSocketHub {
  private readonly wss: WebSocketServer;
  private readonly handshake: Handshake;
  private readonly credentials: CredentialWatch;
  private readonly channels = new Map<string, Channel>();
  private readonly connections = new Set<Connection>();
  private readonly heartbeatTimer: NodeJS.Timeout;
  private stopping = false;

  constructor(
    s: WebSocketDeps,
    private readonly log: Logger,
    readonly options: WebSocketOptions = DEFAULT_WEBSOCKET_OPTIONS,
    channels: Record<string, ChannelFactory> = WEBSOCKET_CHANNELS,
  ) {
    // Compression would cost a deflate per socket for each message serialised once for all.
    this.wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: options.maxPayloadBytes });
    this.handshake = new Handshake(s);
    this.credentials = new CredentialWatch(s);
    for (const [name, factory] of Object.entries(channels)) this.channels.set(`${API_PREFIX}/websocket/${name}`, factory(s, log, options));
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), options.pingIntervalMs);
    this.heartbeatTimer.unref();
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  channel(name: string): Channel | undefined {
    return this.channels.get(`${API_PREFIX}/websocket/${name}`);
  }

  /**
   * The HTTP server's 'upgrade' event. Never throws: a refused upgrade gets an HTTP error response.
   * One log line per upgrade, like the request log's (path, status, user, ip; never headers).
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy()); // a client gone mid-handshake is not our failure
    const ip = this.handshake.clientAddress(req);
    const path = (req.url ?? '/').split('?')[0]; // never the query string, which may carry values
    this.accept(req, socket, head, ip).then(
      (user) => this.log.info({ path, status: 101, user, ip }, 'websocket upgrade'),
      (err: unknown) => {
        if (!(err instanceof DomainError)) this.log.error({ err, path }, 'websocket: upgrade failed');
        const refusal = err instanceof DomainError ? err : internalError;
        this.log.info({ path, status: httpStatus(refusal), ip }, 'websocket upgrade');
        writeErrorToSocket(socket, refusal);
      },
    );
  }

  /**
   * One heartbeat: pings every socket (cutting those that did not answer the last) and rechecks
   * credentials. A ping is a write of its own: a thousand held the event loop ~30 ms in one go,
   * in the middle of live values' fan-out, so the pings go out in short slices.
   */
  async heartbeat(): Promise<void> {
    const slice = new TimeSlice(HEARTBEAT_SLICE_MS);
    for (const conn of [...this.connections]) {
      conn.ping();
      await slice.yieldIfExpired();
    }
    await this.credentials.sweep(this.connections).catch((err: unknown) => this.log.warn({ err }, 'websocket: credential sweep failed'));
  }

  /** Closes every socket (1001), cutting those that do not finish the closing handshake in time. */
  async close(): Promise<void> {
    this.stopping = true;
    clearInterval(this.heartbeatTimer);
    const open = [...this.connections];
    const closing = open.map(
      (conn) =>
        new Promise<void>((resolve) => {
          conn.ws.once('close', () => resolve());
          conn.close(CloseCode.GOING_AWAY);
        }),
    );
    const grace = new Promise<void>((resolve) => setTimeout(resolve, Math.min(1_000, this.options.closeGraceMs)).unref());
    await Promise.race([Promise.all(closing), grace]);
    for (const conn of open) conn.terminate();
    for (const channel of this.channels.values()) channel.close();
    this.credentials.close();
    this.wss.close();
  }

  /** Authenticates and opens the socket; returns the user's name (undefined when the client left meanwhile). */
  private async accept(req: IncomingMessage, socket: Duplex, head: Buffer, ip: string): Promise<string | undefined> {
    const asked = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '').toLowerCase();
    const channel = this.channels.get(canonicalApiPath(asked)?.path ?? asked); // /rest/v3/websocket/... too
    if (!channel) throw DomainError.notFound();
    if (this.stopping) throw new DomainError('unavailable', 'Service stopping');
    const auth = await this.handshake.authenticate(req, ip);
    if (socket.destroyed || this.stopping) {
      socket.destroy();
      return undefined;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.open(ws, socket, channel, auth));
    return auth.user.username;
  }

  private open(ws: WebSocket, socket: Duplex, channel: Channel, auth: SocketAuth): void {
    const conn = new Connection(ws, socket, auth, this.options);
    this.connections.add(conn);
    conn.onRelease(() => this.connections.delete(conn));
    this.credentials.add(conn);
    channel.open(conn);
  }
}

/** Serves the WebSocket endpoints on the server; other upgrade paths are refused with 404. */
export function attachWebSockets(server: Server, s: WebSocketDeps, log: Logger, options?: WebSocketOptions): WebSocketHub {
  const hub = new WebSocketHub(s, log, options);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => hub.upgrade(req, socket, head));
  return hub;
}
