// The alarms an operator must see, newest first: every active one and every one nobody has
// acknowledged yet, also when it already returned to normal (Mango's "unacknowledged" list), with an
// Acknowledge button each (PUT /events/acknowledge/<id>) and filters by level and state. The badge
// counts the unacknowledged ones. The events WebSocket keeps the list current (an event leaves it
// once it is both inactive and acknowledged); while it is down the list is reloaded every 10 s.
// Each row shows how many comments the alarm has and its latest; *Comments* opens them
// (alarm-comments.ts: read, add, acknowledge with a comment). Rows can be selected and acknowledged
// together with one comment (alarm-selection.ts); new CRITICAL alarms can beep and count in the tab
// title (alarm-alerts.ts, opt-in).
import { ALERT_LEVELS, alarmAlerts } from './alarm-alerts.js';
import { alarmComments } from './alarm-comments.js';
import { alarmSelection } from './alarm-selection.js';
import { get, put, type AlarmComment, type AlarmEvent, type List, type User } from './api.js';
import { byId, formatTime, h, labelCells, say, sayError } from './dom.js';
import { LiveSocket } from './live.js';
import { mayAcknowledge } from './may.js';

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
/** Pushes and answers that arrive together (an alarm storm, a bulk acknowledgement) draw the list once. */
const RENDER_DELAY_MS = 100;


/** An alarm the opt-in alerts are about. */
const alerting = (e: AlarmEvent) => ALERT_LEVELS.has(e.alarmLevel) && !e.acknowledged;

export interface AlarmsView {
  start(): void;
  stop(): void;
  refresh(): Promise<void>;
}

/** `who`: the logged-in user, for what the console offers (may.ts). */
export function alarmsView(who: () => User | undefined): AlarmsView {
  const body = byId<HTMLTableElement>('alarms-table').tBodies[0]!;
  const status = byId('alarms-status');
  const liveStatus = byId('alarms-live');
  const empty = byId('alarms-empty');
  const badge = byId('alarm-count');
  const filters = byId<HTMLFormElement>('alarms-filter');
  const events = new Map<number, AlarmEvent>();
  // Pushes that arrive while a reload is under way: the list it gets back may predate them, so they
  // are applied again on top of it (each keeps the newest push per event).
  const reloads = new Set<Map<number, AlarmEvent>>();
  let pollTimer: number | undefined;
  let renderTimer: number | undefined;
  let running = false;
  /** False until the first list after start: what it holds is not news (no beep). */
  let loaded = false;
  /** Whether the console offers to acknowledge the alarm: its button and its checkbox. */
  const acknowledgeable = (e: AlarmEvent) => !e.acknowledged && mayAcknowledge(who());
  const comments = alarmComments((event) => {
    learn(event);
    render();
  });
  const alerts = alarmAlerts();
  const selection = alarmSelection({
    learned: (event) => {
      learn(event);
      renderSoon();
    },
    finished: () => refresh(),
  });

  const live = new LiveSocket('events', {
    onMessage(msg) {
      if (typeof msg !== 'object' || msg === null) return;
      const { status: st, payload } = msg as { status?: string; payload?: { action?: string; event?: AlarmEvent } };
      if (st !== 'OK' || !payload?.event || typeof payload.event.id !== 'number') return;
      if (payload.action === 'RAISED' && loaded && !events.has(payload.event.id) && alerting(payload.event)) alerts.raised(1);
      learn(payload.event);
      renderSoon();
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

  /** A state of an event newer than any list being reloaded. */
  function learn(event: AlarmEvent): void {
    upsert(event);
    comments.update(event);
    for (const pushed of reloads) pushed.set(event.id, event);
  }

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
    const pushed = new Map<number, AlarmEvent>();
    reloads.add(pushed);
    try {
      const list = await get<List<AlarmEvent>>(QUERY);
      // Polling (the socket down): alarms of an alert level this list holds for the first time.
      if (loaded) alerts.raised(list.items.filter((e) => alerting(e) && !events.has(e.id)).length);
      loaded = running;
      events.clear();
      for (const e of list.items) upsert(e);
      for (const e of pushed.values()) upsert(e);
      for (const e of events.values()) comments.update(e);
      render();
      if (status.dataset.kind === 'error') say(status, '');
    } catch (err) {
      sayError(status, err);
    } finally {
      reloads.delete(pushed);
    }
  }

  async function acknowledge(id: number, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const event = await put<AlarmEvent>(`/events/acknowledge/${id}`);
      learn(event);
      render();
      say(status, `Alarm ${id} acknowledged`, 'ok');
    } catch (err) {
      button.disabled = false;
      sayError(status, err);
    }
  }

  function renderSoon(): void {
    renderTimer ??= window.setTimeout(render, RENDER_DELAY_MS);
  }

  function render(): void {
    window.clearTimeout(renderTimer);
    renderTimer = undefined;
    const visible = [...events.values()].filter(shown).sort((a, b) => b.activeTimestamp - a.activeTimestamp || b.id - a.id);
    const rows = visible.map(row);
    body.replaceChildren(...rows);
    selection.shown(visible.filter(acknowledgeable));
    labelCells(byId<HTMLTableElement>('alarms-table'));
    empty.hidden = rows.length > 0;
    empty.textContent = events.size === 0 ? 'No active or unacknowledged alarms.' : 'No alarm matches the filter.';
    const unacknowledged = [...events.values()].filter((e) => !e.acknowledged).length;
    badge.textContent = unacknowledged > 0 ? String(unacknowledged) : '';
    badge.setAttribute('aria-label', `${unacknowledged} unacknowledged`);
    if (running) alerts.unacknowledged([...events.values()].filter(alerting).length);
  }

  function row(e: AlarmEvent): HTMLTableRowElement {
    const ack: HTMLButtonElement = h('button', { type: 'button', 'aria-label': `Acknowledge alarm ${e.id}: ${e.message}` }, 'Acknowledge');
    ack.addEventListener('click', () => void acknowledge(e.id, ack));
    const count = e.comments.length;
    const last = e.comments[count - 1];
    const open: HTMLButtonElement = h('button', { type: 'button', 'aria-label': `Comments on alarm ${e.id}: ${e.message}` }, count > 0 ? `Comments (${count})` : 'Comment');
    open.addEventListener('click', () => comments.open(e));
    const may = acknowledgeable(e);
    return h(
      'tr',
      { 'data-event-id': e.id, 'data-acknowledged': String(e.acknowledged), 'data-active': String(e.active) },
      h('td', { class: 'select' }, may ? selection.checkbox(e) : ''),
      h('td', { class: 'when' }, formatTime(e.activeTimestamp)),
      h('td', { class: `level-${e.alarmLevel}` }, e.alarmLevel),
      h('td', { class: e.active ? 'alarm-active' : 'muted' }, e.active ? 'active' : `returned to normal ${e.rtnTimestamp ? formatTime(e.rtnTimestamp) : ''}`.trim()),
      h('td', { class: 'message' }, e.message),
      h('td', {}, e.dataPointXid ?? e.dataSourceXid ?? ''),
      h('td', {}, e.acknowledged ? `by ${e.acknowledgedByUsername ?? '?'}` : 'no'),
      h('td', {}, last ? lastComment(last) : ''),
      h('td', { class: 'actions' }, may ? ack : '', ' ', open),
    );
  }

  /** The newest comment, whole (a few lines at most, all of it in the tooltip and under Comments). */
  function lastComment(c: AlarmComment): HTMLElement {
    return h(
      'span',
      { class: 'last-comment', title: `${c.username}, ${formatTime(c.timestamp)}: ${c.text}` },
      h('span', { class: 'comment-text' }, `${c.username}: ${c.text}`),
      h('time', { datetime: new Date(c.timestamp).toISOString(), class: 'muted' }, formatTime(c.timestamp)),
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
      loaded = false;
      live.stop();
      window.clearInterval(pollTimer);
      pollTimer = undefined;
      events.clear();
      comments.close();
      selection.clear();
      render();
      alerts.reset();
    },
    refresh,
  };
}
