// The alarms an operator must see, newest first: every active one and every one nobody has
// acknowledged yet, also when it already returned to normal (Mango's "unacknowledged" list), with an
// Acknowledge button each (PUT /events/acknowledge/<id>) and filters by level and state. The badge
// counts the unacknowledged ones. The events WebSocket keeps the list current (an event leaves it
// once it is both inactive and acknowledged); while it is down the list is reloaded every 10 s.
import { get, put, type AlarmEvent, type List } from './api.js';
import { byId, formatTime, h, labelCells, say, sayError } from './dom.js';
import { LiveSocket } from './live.js';

const QUERY = '/events?or(eq(active,true),eq(acknowledged,false))&sort(-activeTimestamp)&limit(500)';
const LEVELS = ['NONE', 'INFORMATION', 'IMPORTANT', 'WARNING', 'URGENT', 'CRITICAL', 'LIFE_SAFETY'];

/** The state filter's choices: what an operator asks of an alarm. */
const STATES: Record<string, (e: AlarmEvent) => boolean> = {
  all: () => true,
  active: (e) => e.active,
  returned: (e) => !e.active,
  unacknowledged: (e) => !e.acknowledged,
  acknowledged: (e) => e.acknowledged,
};
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
  const filters = byId<HTMLFormElement>('alarms-filter');
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
    if (event.active || !event.acknowledged) events.set(event.id, event);
    else events.delete(event.id);
  }

  function shown(e: AlarmEvent): boolean {
    const level = (filters.elements.namedItem('level') as HTMLSelectElement).value;
    const state = (filters.elements.namedItem('state') as HTMLSelectElement).value;
    return LEVELS.indexOf(e.alarmLevel) >= LEVELS.indexOf(level) && (STATES[state] ?? STATES.all!)(e);
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
    const rows = [...events.values()].filter(shown).sort((a, b) => b.activeTimestamp - a.activeTimestamp || b.id - a.id).map(row);
    body.replaceChildren(...rows);
    labelCells(byId<HTMLTableElement>('alarms-table'));
    empty.hidden = rows.length > 0;
    empty.textContent = events.size === 0 ? 'No active or unacknowledged alarms.' : 'No alarm matches the filter.';
    const unacknowledged = [...events.values()].filter((e) => !e.acknowledged).length;
    badge.textContent = unacknowledged > 0 ? String(unacknowledged) : '';
    badge.setAttribute('aria-label', `${unacknowledged} unacknowledged`);
  }

  function row(e: AlarmEvent): HTMLTableRowElement {
    const ack: HTMLButtonElement = h('button', { type: 'button', 'aria-label': `Acknowledge alarm ${e.id}: ${e.message}` }, 'Acknowledge');
    ack.addEventListener('click', () => void acknowledge(e.id, ack));
    return h(
      'tr',
      { 'data-event-id': e.id, 'data-acknowledged': String(e.acknowledged), 'data-active': String(e.active) },
      h('td', {}, formatTime(e.activeTimestamp)),
      h('td', { class: `level-${e.alarmLevel}` }, e.alarmLevel),
      h('td', { class: e.active ? 'alarm-active' : 'muted' }, e.active ? 'active' : `returned to normal ${e.rtnTimestamp ? formatTime(e.rtnTimestamp) : ''}`.trim()),
      h('td', {}, e.message),
      h('td', {}, e.dataPointXid ?? e.dataSourceXid ?? ''),
      h('td', {}, e.acknowledged ? `by ${e.acknowledgedByUsername ?? '?'}` : 'no'),
      h('td', {}, e.acknowledged ? '' : ack),
    );
  }

  byId('alarms-refresh').addEventListener('click', () => void refresh());
  filters.addEventListener('change', render);

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
