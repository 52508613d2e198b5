// A WebSocket to one of the service's endpoints that reconnects by itself (backoff 1 s doubling to
// 30 s, back to 1 s once a socket stayed open a while) and says whether it is up, so a view can poll instead while it is not. The session cookie
// authenticates the handshake (same origin).
import { API } from './api.js';

const STABLE_MS = 10_000;

export type LiveState = 'connecting' | 'open' | 'down';

export interface LiveOptions {
  /** Every message the server sends, parsed. */
  onMessage(msg: unknown): void;
  /** Each change of state; on 'open' the view (re)sends its subscriptions. */
  onState(state: LiveState): void;
}

export class LiveSocket {
  private ws: WebSocket | undefined;
  private retryMs = 1_000;
  private openedAt = 0;
  private timer: number | undefined;
  private stopped = false;
  state: LiveState = 'down';

  constructor(
    private readonly endpoint: 'point-value' | 'events',
    private readonly options: LiveOptions,
  ) {}

  start(): void {
    this.stopped = false;
    if (!this.ws) this.connect();
  }

  stop(): void {
    this.stopped = true;
    window.clearTimeout(this.timer);
    this.ws?.close(1000);
    this.ws = undefined;
    this.setState('down');
  }

  /** Sends when open; returns false when the socket is not (the caller polls instead). */
  send(msg: unknown): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  private connect(): void {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${API}/websocket/${this.endpoint}`;
    this.setState('connecting');
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.openedAt = Date.now();
      this.setState('open');
    };
    ws.onmessage = (ev: MessageEvent) => {
      if (typeof ev.data !== 'string') return;
      let msg: unknown;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      this.options.onMessage(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.retry();
    };
  }

  private retry(): void {
    // A socket that closes right after opening (a proxy, a refusing server) must not reconnect in a loop.
    if (this.openedAt > 0 && Date.now() - this.openedAt > STABLE_MS) this.retryMs = 1_000;
    this.openedAt = 0;
    this.setState('down');
    if (this.stopped) return;
    this.timer = window.setTimeout(() => this.connect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, 30_000);
  }

  private setState(state: LiveState): void {
    if (state === this.state) return;
    this.state = state;
    this.options.onState(state);
  }
}
