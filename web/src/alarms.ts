// Active alarms, newest first (GET /events?eq(active,true)&sort(-activeTimestamp)), with an
// Acknowledge button per alarm (PUT /events/acknowledge/<id>). The events WebSocket keeps the list
// current (RAISED adds, ACKNOWLEDGED and RETURN_TO_NORMAL update or drop a row); while it is down
// the list is reloaded every 10 s.
import { get, put, type AlarmEvent, type List } from './api.js';
import { byId, formatTime, h, say, sayError } from './dom.js';
import { LiveSocket } from './live.js';

const QUERY = '/events?eq(active,true)&sort(-activeTimestamp)&limit(200)';
const POLL_MS = 10_000;

export interface AlarmsView {
  start(): void;
  stop(): void;
  refresh(): Promise<void>;
}

export function alarmsView(): AlarmsView {
  const body = byId<HTMLTableElement>('alarms-table').tBodies[0]!;
  const status = byId('alarms-status');
  const liveStatus = byId('alarms-live');
  const empty = byId('alarms-empty');
  const badge = byId('alarm-count');
  const events = new Map<number, AlarmEvent>();
  let pollTimer: number | undefined;
  let running = false;

  const live = new LiveSocket('events', {
    onMessage(msg) {
      if (typeof msg !== 'object' || msg === null) return;
      const { status: st, payload } = msg as { status?: string; payload?: { action?: string; event?: AlarmEvent } };
      if (st !== 'OK' || !payload?.event || typeof payload.event.id !== 'number') return;
      upsert(payload.event);
      render();
    },
    onState(state) {
      liveStatus.textContent = state === 'open' ? 'Live' : state === 'connecting' ? 'Connecting…' : `Live updates unavailable: reloading every ${POLL_MS / 1000} s`;
      if (state === 'open') {
        window.clearInterval(pollTimer);
        pollTimer = undefined;
        void refresh(); // what happened while the socket was down
      } else if (state === 'down' && pollTimer === undefined && running) {
        pollTimer = window.setInterval(() => void refresh(), POLL_MS);
      }
    },
  });

  function upsert(event: AlarmEvent): void {
    if (event.active) events.set(event.id, event);
    else events.delete(event.id);
  }

  async function refresh(): Promise<void> {
    try {
      const list = await get<List<AlarmEvent>>(QUERY);
      events.clear();
      for (const e of list.items) upsert(e);
      render();
      if (status.dataset.kind === 'error') say(status, '');
    } catch (err) {
      sayError(status, err);
    }
  }

  async function acknowledge(id: number, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const event = await put<AlarmEvent>(`/events/acknowledge/${id}`);
      upsert(event);
      render();
      say(status, `Alarm ${id} acknowledged`, 'ok');
    } catch (err) {
      button.disabled = false;
      sayError(status, err);
    }
  }

  function render(): void {
    const rows = [...events.values()].sort((a, b) => b.activeTimestamp - a.activeTimestamp || b.id - a.id).map(row);
    body.replaceChildren(...rows);
    empty.hidden = rows.length > 0;
    const unacknowledged = [...events.values()].filter((e) => !e.acknowledged).length;
    badge.textContent = unacknowledged > 0 ? String(unacknowledged) : '';
    badge.setAttribute('aria-label', `${unacknowledged} unacknowledged`);
  }

  function row(e: AlarmEvent): HTMLTableRowElement {
    const ack: HTMLButtonElement = h('button', { type: 'button', 'aria-label': `Acknowledge alarm ${e.id}: ${e.message}` }, 'Acknowledge');
    ack.addEventListener('click', () => void acknowledge(e.id, ack));
    return h(
      'tr',
      { 'data-event-id': e.id, 'data-acknowledged': String(e.acknowledged) },
      h('td', {}, formatTime(e.activeTimestamp)),
      h('td', {}, e.alarmLevel),
      h('td', {}, e.message),
      h('td', {}, e.dataPointXid ?? e.dataSourceXid ?? ''),
      h('td', {}, e.acknowledged ? `by ${e.acknowledgedByUsername ?? '?'}` : 'no'),
      h('td', {}, e.acknowledged ? '' : ack),
    );
  }

  byId('alarms-refresh').addEventListener('click', () => void refresh());

  return {
    start() {
      running = true;
      live.start();
      void refresh();
    },
    stop() {
      running = false;
      live.stop();
      window.clearInterval(pollTimer);
      pollTimer = undefined;
      events.clear();
      render();
    },
    refresh,
  };
}
