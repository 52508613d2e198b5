// The points list's Value column: each listed point's current value with its unit and its age
// ("12 s ago", the time in full on hover), kept live by the point-value WebSocket (REGISTERED
// brings the current value, UPDATE the next ones), or by polling /point-values/latest while the
// socket is down. Cells are found by data-live-xid. A value its source cannot read now is greyed
// with an "unreliable" badge saying why and since when (ATTRIBUTE_CHANGE brings that without a value).
// Values are written by the point's text renderer with the time they were taken, and a value that
// should have been replaced by now gets a "stale" badge (value-format.ts says when).
import type { TextRenderer } from '../../src/core/text-renderer.js';
import { get, seg, type PointValue, type Reliability } from './api.js';
import { h } from './dom.js';
import { LiveSocket, type LiveState } from './live.js';
import { formatPointValue, formatValueTime, staleReason, type SourceNote } from './value-format.js';

const POLL_MS = 5_000;
/** How often the ages ("12 s ago") are written again. */
const AGE_MS = 5_000;
/** Polling reads at most this many points (the socket has no such limit). */
const POLL_MAX = 50;

export interface LivePoint {
  xid: string;
  unit?: string;
  dataType: string;
  textRenderer?: TextRenderer;
  /** Its source's cadence and state, for the stale mark (none: never marked stale). */
  source?: SourceNote;
}

/** How long ago a value was taken: "just now", "12 s ago", "5 min ago", "3 h ago", else its date and time. */
export function formatAge(timestamp: number, now = Date.now()): string {
  const s = Math.round((now - timestamp) / 1000);
  if (s < 2) return 'just now';
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 24 * 3600) return `${Math.round(s / 3600)} h ago`;
  return new Date(timestamp).toLocaleString();
}

export class PointValuesLive {
  private points = new Map<string, LivePoint>();
  private readonly subscribed = new Set<string>();
  /** The newest value seen per followed point (null: it has none): a list shown again starts from it. */
  private readonly last = new Map<string, PointValue | null>();
  /** Whether each followed point's source can read it now, as the socket or /latest said last. */
  private readonly reliability = new Map<string, Reliability>();
  private pollTimer: number | undefined;
  private ageTimer: number | undefined;
  private readonly socket = new LiveSocket('point-value', {
    onMessage: (msg) => this.onMessage(msg),
    onState: (state) => this.onState(state),
  });

  constructor(private readonly table: HTMLElement) {}

  /** Whether a point is followed (a list may show a point twice only once it is). */
  follows(xid: string): boolean {
    return this.points.has(xid);
  }

  /** Follows these points (the list just shown); forgets the others. */
  follow(points: LivePoint[]): void {
    this.points = new Map(points.map((p) => [p.xid, p]));
    for (const xid of this.last.keys()) if (!this.points.has(xid)) this.last.delete(xid);
    for (const xid of this.reliability.keys()) if (!this.points.has(xid)) this.reliability.delete(xid);
    // Points still subscribed get no new REGISTERED: their new cells show what is known.
    for (const [xid, v] of this.last) {
      if (v) this.render(xid, v);
      else this.noValue(xid);
    }
    this.socket.start();
    this.sync();
    if (this.socket.state !== 'open') void this.poll();
    this.ageTimer ??= window.setInterval(() => this.refreshAges(), AGE_MS);
  }

  stop(): void {
    this.socket.stop();
    this.subscribed.clear();
    this.points.clear();
    this.last.clear();
    this.reliability.clear();
    window.clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    window.clearInterval(this.ageTimer);
    this.ageTimer = undefined;
  }

  /** The value shown for a point, as text (undefined before one arrived). */
  current(xid: string): string | undefined {
    return this.cell(xid)?.dataset.value;
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
      if (!this.subscribed.has(xid) && this.socket.send({ xid, eventTypes: ['REGISTERED', 'UPDATE', 'ATTRIBUTE_CHANGE'] })) this.subscribed.add(xid);
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
    const { status, payload } = msg as { status?: string; payload?: Reliability & { xid?: string; event?: string; value?: PointValue | null } };
    if (status !== 'OK' || typeof payload?.xid !== 'string') return;
    this.noteReliability(payload.xid, payload);
    if (payload.value && typeof payload.value.timestamp === 'number') this.render(payload.xid, payload.value);
    else if (payload.event === 'REGISTERED') this.noValue(payload.xid);
    else this.markCell(payload.xid); // ATTRIBUTE_CHANGE
  }

  /** Remembers whether the source can read the point now, when the message says (a set value's answer does not). */
  private noteReliability(xid: string, r: Reliability): void {
    if (typeof r.unreliable === 'boolean') this.reliability.set(xid, { unreliable: r.unreliable, unreliableSince: r.unreliableSince ?? null, unreliableReason: r.unreliableReason ?? null });
  }

  /** Greys the value of a point its source cannot read now, with a badge whose title says why and since when. */
  private markCell(xid: string): void {
    const cell = this.cell(xid);
    if (!cell) return;
    const r = this.reliability.get(xid);
    const why = r?.unreliable ? `Unreliable since ${r.unreliableSince ? new Date(r.unreliableSince).toLocaleString() : '?'}: ${r.unreliableReason ?? 'its source cannot read it'}` : undefined;
    const when = cell.dataset.timestamp ? new Date(Number(cell.dataset.timestamp)).toLocaleString() : '';
    cell.title = why ? `${why}\nvalue of ${when}` : when;
    cell.classList.toggle('unreliable', why !== undefined);
    cell.querySelector('.unreliable-badge')?.remove();
    if (why) cell.append(' ', h('span', { class: 'badge unreliable-badge', title: why }, 'unreliable'));
    this.markStale(cell, Date.now());
  }

  /** A value that should have been replaced by now: a "stale" badge whose title says why. */
  private markStale(cell: HTMLElement, now: number): void {
    const point = this.points.get(cell.dataset.liveXid ?? '');
    const ts = cell.dataset.timestamp;
    const why = point && ts !== undefined ? staleReason(point.source, Number(ts), now) : undefined;
    cell.classList.toggle('stale', why !== undefined);
    const badge = cell.querySelector<HTMLElement>('.stale-badge');
    if (!why) badge?.remove();
    else if (badge) badge.title = why;
    else cell.append(' ', h('span', { class: 'badge stale-badge', title: why, role: 'img', 'aria-label': why }, 'stale'));
  }

  /** A point without any value yet says so (instead of "…" for ever). */
  private noValue(xid: string): void {
    if (!this.last.get(xid)) this.last.set(xid, null);
    const cell = this.cell(xid);
    if (cell && cell.dataset.timestamp === undefined) cell.replaceChildren(h('span', { class: 'muted' }, 'no value yet'));
    this.markCell(xid);
  }

  private cell(xid: string): HTMLElement | null {
    return this.table.querySelector<HTMLElement>(`[data-live-xid="${CSS.escape(xid)}"]`);
  }

  private async poll(): Promise<void> {
    await Promise.all(
      [...this.points.keys()].slice(0, POLL_MAX).map(async (xid) => {
        try {
          const [newest] = await get<(PointValue & Reliability)[]>(`/point-values/latest/${seg(xid)}`);
          if (newest) {
            this.noteReliability(xid, newest);
            this.render(xid, newest);
          } else {
            this.noValue(xid);
          }
        } catch {
          // a point that cannot be read keeps its empty cell
        }
      }),
    );
  }

  private render(xid: string, v: PointValue): void {
    const point = this.points.get(xid);
    const cell = this.cell(xid);
    if (!point) return;
    // A value older than the one known (a slow poll answering after the socket's UPDATE) is not shown.
    const known = this.last.get(xid);
    if (known && known.timestamp > v.timestamp) return this.markCell(xid);
    this.last.set(xid, v);
    if (!cell) return;
    const when = new Date(v.timestamp);
    cell.replaceChildren(
      h('span', { class: 'reading' }, formatPointValue(v.value, point)),
      h(
        'span',
        { class: 'when' },
        h('time', { class: 'taken', datetime: when.toISOString() }, formatValueTime(v.timestamp)),
        ' · ',
        h('time', { class: 'age', datetime: when.toISOString() }, formatAge(v.timestamp)),
      ),
    );
    cell.title = when.toLocaleString();
    cell.dataset.value = String(v.value);
    cell.dataset.timestamp = String(v.timestamp);
    this.markCell(xid);
  }

  private refreshAges(): void {
    const now = Date.now();
    for (const cell of this.table.querySelectorAll<HTMLElement>('[data-live-xid][data-timestamp]')) {
      const age = cell.querySelector('.age');
      if (age) age.textContent = formatAge(Number(cell.dataset.timestamp), now);
      this.markStale(cell, now);
    }
  }
}
