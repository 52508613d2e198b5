// The points list's Value column: each listed point's current value with its unit and time, kept
// live by the point-value WebSocket (REGISTERED brings the current value, UPDATE the next ones),
// or by polling /point-values/latest while the socket is down. Cells are found by data-live-xid.
import { get, seg, type PointValue } from './api.js';
import { LiveSocket, type LiveState } from './live.js';

const POLL_MS = 5_000;
/** Polling reads at most this many points (the socket has no such limit). */
const POLL_MAX = 50;

export interface LivePoint {
  xid: string;
  unit?: string;
  dataType: string;
}

export function formatValue(value: PointValue['value'], unit: string | undefined): string {
  if (value === null) return '—';
  const text = typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toPrecision(6).replace(/\.?0+$/, '')) : String(value);
  return unit ? `${text} ${unit}` : text;
}

export class PointValuesLive {
  private points = new Map<string, LivePoint>();
  private readonly subscribed = new Set<string>();
  private pollTimer: number | undefined;
  private readonly socket = new LiveSocket('point-value', {
    onMessage: (msg) => this.onMessage(msg),
    onState: (state) => this.onState(state),
  });

  constructor(private readonly table: HTMLElement) {}

  /** Follows these points (the list just shown); forgets the others. */
  follow(points: LivePoint[]): void {
    this.points = new Map(points.map((p) => [p.xid, p]));
    this.socket.start();
    this.sync();
    if (this.socket.state !== 'open') void this.poll();
  }

  stop(): void {
    this.socket.stop();
    this.subscribed.clear();
    this.points.clear();
    window.clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  /** Shows a value that was just set (before the socket reports it). */
  show(xid: string, v: PointValue): void {
    this.render(xid, v);
  }

  private sync(): void {
    for (const xid of this.subscribed) {
      if (!this.points.has(xid) && this.socket.send({ xid, eventTypes: [] })) this.subscribed.delete(xid);
    }
    for (const xid of this.points.keys()) {
      if (!this.subscribed.has(xid) && this.socket.send({ xid, eventTypes: ['REGISTERED', 'UPDATE'] })) this.subscribed.add(xid);
    }
  }

  private onState(state: LiveState): void {
    if (state === 'open') {
      this.subscribed.clear();
      this.sync();
      window.clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    } else if (state === 'down' && this.pollTimer === undefined && this.points.size > 0) {
      this.pollTimer = window.setInterval(() => void this.poll(), POLL_MS);
    }
  }

  private onMessage(msg: unknown): void {
    if (typeof msg !== 'object' || msg === null) return;
    const { status, payload } = msg as { status?: string; payload?: { xid?: string; event?: string; value?: PointValue | null } };
    if (status !== 'OK' || typeof payload?.xid !== 'string') return;
    if (payload.value && typeof payload.value.timestamp === 'number') this.render(payload.xid, payload.value);
  }

  private async poll(): Promise<void> {
    await Promise.all(
      [...this.points.keys()].slice(0, POLL_MAX).map(async (xid) => {
        try {
          const [newest] = await get<PointValue[]>(`/point-values/latest/${seg(xid)}`);
          if (newest) this.render(xid, newest);
        } catch {
          // a point that cannot be read keeps its empty cell
        }
      }),
    );
  }

  private render(xid: string, v: PointValue): void {
    const point = this.points.get(xid);
    const cell = this.table.querySelector<HTMLElement>(`[data-live-xid="${CSS.escape(xid)}"]`);
    if (!point || !cell) return;
    cell.textContent = formatValue(v.value, point.unit);
    cell.title = new Date(v.timestamp).toLocaleString();
    cell.dataset.value = String(v.value);
    cell.dataset.timestamp = String(v.timestamp);
  }
}
