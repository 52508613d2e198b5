// Event handlers (superadmin): the list (GET /event-handlers), a spec form per type to create and
// edit one (WEBHOOK url, headers, write-only secret; EMAIL recipients, sendOn*, escalation;
// SET_POINT target and actions), its event-type matchers, delete, and its deliveries (GET
// /event-handlers/<xid>/deliveries, newest first). A refusal puts each field message next to its
// field (a matcher's beside its row); the rest are listed under the form.
import { ApiError, del, get, post, put, seg, type DataPoint, type List } from './api.js';
import { byId, formatTime, h, labelCells, say, sayError } from './dom.js';
import { specForm, type FieldSpec, type Values } from './spec-form.js';

const HANDLER_TYPES = ['WEBHOOK', 'EMAIL', 'SET_POINT'];
const EVENT_TYPES = ['DATA_POINT', 'DATA_SOURCE', 'SYSTEM'];
const ALARM_LEVELS = ['NONE', 'INFORMATION', 'IMPORTANT', 'WARNING', 'URGENT', 'CRITICAL', 'LIFE_SAFETY'];
const SET_ACTIONS = ['NONE', 'STATIC_VALUE', 'POINT_VALUE'];
// Ids grow in the order attempts are recorded: newest first, also within one millisecond.
const DELIVERIES_QUERY = 'sort(-id)&limit(200)';

export interface Matcher {
  eventType: string;
  referenceXid?: string;
  minAlarmLevel?: string;
}

export interface EventHandler {
  xid: string;
  name: string;
  disabled: boolean;
  handlerType: string;
  eventTypes: Matcher[];
  [field: string]: unknown;
}

export interface Delivery {
  id: number;
  eventId: number;
  action: string;
  attempt: number;
  timestamp: number;
  outcome: string;
  status?: number;
  error?: string;
}

const type =
  (...types: string[]) =>
  (v: Values) =>
    types.includes(String(v.handlerType));
const email = type('EMAIL');
const setPoint = type('SET_POINT');
const action = (path: string, wanted: string) => (v: Values) => setPoint(v) && v[path] === wanted;

const HANDLER_FIELDS: FieldSpec[] = [
  { path: 'handlerType', label: 'Handler type', kind: 'select', options: HANDLER_TYPES, fixedOnEdit: true },
  { path: 'name', label: 'Name', kind: 'text' },
  { path: 'xid', label: 'XID (empty: generated)', kind: 'text', fixedOnEdit: true, omitEmpty: true },
  { path: 'disabled', label: 'Disabled', kind: 'checkbox' },
  { path: 'url', label: 'URL', kind: 'text', placeholder: 'https://example.com/hooks/alarms', when: type('WEBHOOK') },
  { path: 'headers', label: 'Headers (Name=value, comma-separated)', kind: 'tags', when: type('WEBHOOK') },
  { path: 'secret', label: 'Signing secret (write-only; empty: unchanged)', kind: 'password', when: type('WEBHOOK'), hint: 'The HMAC-SHA256 key of X-Signature-256' },
  { path: 'recipients', label: 'Recipients (usernames or addresses, comma-separated)', kind: 'recipients', when: email, placeholder: 'admin, ops@example.com' },
  { path: 'sendOnActive', label: 'Send when raised', kind: 'checkbox', when: email },
  { path: 'sendOnInactive', label: 'Send when back to normal', kind: 'checkbox', when: email },
  { path: 'sendOnAcknowledge', label: 'Send when acknowledged', kind: 'checkbox', when: email },
  { path: 'escalate', label: 'Escalate while active and unacknowledged', kind: 'checkbox', when: email },
  { path: 'escalation.delayMs', label: 'Escalate after (ms)', kind: 'integer', when: (v) => email(v) && v.escalate === true },
  { path: 'escalation.recipients', label: 'Escalate to', kind: 'recipients', when: (v) => email(v) && v.escalate === true },
  { path: 'targetPointXid', label: 'Target point XID', kind: 'text', when: setPoint, suggestions: 'handler-points', placeholder: 'type a name or XID' },
  { path: 'activeAction', label: 'When raised', kind: 'select', options: SET_ACTIONS, when: setPoint },
  { path: 'activeValue', label: 'Value when raised', kind: 'scalar', when: action('activeAction', 'STATIC_VALUE') },
  { path: 'activePointXid', label: 'Point whose value to set when raised (XID)', kind: 'text', when: action('activeAction', 'POINT_VALUE'), suggestions: 'handler-points' },
  { path: 'inactiveAction', label: 'When back to normal', kind: 'select', options: SET_ACTIONS, when: setPoint },
  { path: 'inactiveValue', label: 'Value when back to normal', kind: 'scalar', when: action('inactiveAction', 'STATIC_VALUE') },
  { path: 'inactivePointXid', label: 'Point whose value to set when back to normal (XID)', kind: 'text', when: action('inactiveAction', 'POINT_VALUE'), suggestions: 'handler-points' },
];

/** What a new handler of each type starts with. */
const DEFAULTS: Record<string, Values> = {
  WEBHOOK: { headers: {} },
  EMAIL: { sendOnActive: true, sendOnInactive: false, sendOnAcknowledge: false, escalate: false, escalation: { delayMs: 900_000 } },
  SET_POINT: { activeAction: 'STATIC_VALUE', inactiveAction: 'NONE' },
};

/** Fields of each type: those of another type are dropped from a body (a form keeps no stale ones). */
const TYPE_FIELDS: Record<string, readonly string[]> = {
  WEBHOOK: ['url', 'headers', 'secret'],
  EMAIL: ['recipients', 'sendOnActive', 'sendOnInactive', 'sendOnAcknowledge', 'escalation'],
  SET_POINT: ['targetPointXid', 'activeAction', 'activeValue', 'activePointXid', 'inactiveAction', 'inactiveValue', 'inactivePointXid'],
};

/** "DATA_POINT det-1 ≥ URGENT, SYSTEM" */
export function describeMatchers(matchers: readonly Matcher[]): string {
  return matchers.map((m) => [m.eventType, m.referenceXid, m.minAlarmLevel ? `≥ ${m.minAlarmLevel}` : undefined].filter(Boolean).join(' ')).join(', ');
}

function recipientsText(list: unknown): string {
  return Array.isArray(list) ? list.map((r: Values) => String(r.address ?? r.username ?? '')).join(', ') : '';
}

/** What the handler does, in a line. */
export function describeHandler(handler: EventHandler): string {
  switch (handler.handlerType) {
    case 'WEBHOOK':
      return `POST ${String(handler.url ?? '')}`;
    case 'EMAIL': {
      const escalation = handler.escalation as Values | undefined;
      const to = `mail ${recipientsText(handler.recipients)}`;
      return escalation ? `${to}; after ${Number(escalation.delayMs) / 60_000} min to ${recipientsText(escalation.recipients)}` : to;
    }
    case 'SET_POINT':
      return `set ${String(handler.targetPointXid ?? '')}`;
    default:
      return '';
  }
}

export interface HandlersView {
  refresh(): Promise<void>;
}

export function handlersView(): HandlersView {
  const table = byId<HTMLTableElement>('handlers-table');
  const status = byId('handlers-status');
  const empty = byId('handlers-empty');
  const panel = byId('handler-editor-panel');
  const title = byId('handler-editor-title');
  const editorStatus = byId('handler-editor-status');
  const editorMessages = byId('handler-editor-messages');
  const matchers = byId('handler-matchers');
  const matchersError = byId('handler-matchers-set').querySelector<HTMLElement>('[data-error-for="eventTypes"]')!;
  const deliveriesPanel = byId('deliveries-panel');
  const deliveriesTable = byId<HTMLTableElement>('deliveries-table');
  const deliveriesStatus = byId('deliveries-status');
  let stored: EventHandler | undefined;
  let deliveriesOf: EventHandler | undefined;

  const form = specForm(byId('handler-editor-fields'), HANDLER_FIELDS, (path) => {
    if (path === 'handlerType' && !stored) form.fill(DEFAULTS[String(form.read().handlerType)] ?? {}, true);
  });

  // ---- matchers: one row each (event type, reference XID, minimum level) ----

  function matcherRow(m: Matcher): HTMLElement {
    const n = matchers.children.length + 1;
    const eventType = h('select', { name: 'eventType' }, ...EVENT_TYPES.map((t) => h('option', { value: t }, t)));
    eventType.value = m.eventType;
    const reference = h('input', { name: 'referenceXid', placeholder: 'any', value: m.referenceXid ?? '' });
    const level = h('select', { name: 'minAlarmLevel' }, h('option', { value: '' }, 'any'), ...ALARM_LEVELS.map((l) => h('option', { value: l }, l)));
    level.value = m.minAlarmLevel ?? '';
    const row = h(
      'div',
      { class: 'row matcher' },
      h('label', {}, `Matcher ${n}: event type`, eventType),
      h('label', { title: "A detector's XID (DATA_POINT) or a data source's (DATA_SOURCE); empty: any" }, 'Detector or source XID', reference),
      h('label', {}, 'Level at least', level),
      h('button', { type: 'button', onclick: () => row.remove() }, 'Remove', h('span', { class: 'sr-only' }, ` matcher ${n}`)),
      h('span', { class: 'field-error', role: 'alert' }),
    );
    return row;
  }

  function setMatchers(list: readonly Matcher[]): void {
    matchers.replaceChildren();
    for (const m of list) matchers.append(matcherRow(m));
  }

  function readMatchers(): Matcher[] {
    return [...matchers.children].map((row) => {
      const value = (name: string) => (row.querySelector<HTMLInputElement | HTMLSelectElement>(`[name="${name}"]`)?.value ?? '').trim();
      const m: Matcher = { eventType: value('eventType') };
      if (value('referenceXid') !== '') m.referenceXid = value('referenceXid');
      if (value('minAlarmLevel') !== '') m.minAlarmLevel = value('minAlarmLevel');
      return m;
    });
  }

  /** Puts `eventTypes…` messages beside their matcher; returns the others. */
  function showMatcherErrors(messages: readonly string[]): string[] {
    matchersError.textContent = '';
    for (const slot of matchers.querySelectorAll('.field-error')) slot.textContent = '';
    const rest: string[] = [];
    for (const text of messages) {
      const at = /^eventTypes(?:\[(\d+)\])?(?:\.(\w+))?: (.*)$/.exec(text);
      const slot = at ? (at[1] === undefined ? matchersError : matchers.children[Number(at[1])]?.querySelector('.field-error')) : undefined;
      if (!at || !slot) {
        rest.push(text);
        continue;
      }
      slot.textContent = (slot.textContent ? `${slot.textContent}; ` : '') + (at[2] ? `${at[2]} ${at[3]}` : at[3]);
    }
    return rest;
  }

  // ---- editor ----

  // The SET_POINT point boxes suggest points by name (the browser's list filters on name and XID).
  const pointChoices = h('datalist', { id: 'handler-points' });
  byId('handler-editor-form').append(pointChoices);
  async function loadPointChoices(): Promise<void> {
    try {
      const points = await get<List<DataPoint>>('/data-points?sort(name)&limit(1000)');
      pointChoices.replaceChildren(...points.items.map((p) => h('option', { value: p.xid }, `${p.name} · ${p.deviceName} (${p.pointLocator.dataType}${p.pointLocator.settable ? ', settable' : ''})`)));
    } catch {
      // Only suggestions: the boxes still take an XID typed in.
    }
  }

  function open(handler: EventHandler | undefined): void {
    void loadPointChoices();
    stored = handler;
    const values: Values = handler ? { ...handler, escalate: handler.escalation !== undefined && handler.escalation !== null } : { handlerType: 'WEBHOOK', disabled: false, ...DEFAULTS.WEBHOOK };
    form.render(values, handler !== undefined);
    setMatchers(handler?.eventTypes ?? [{ eventType: 'DATA_POINT', minAlarmLevel: 'URGENT' }]);
    showMatcherErrors([]);
    title.textContent = handler ? `Edit event handler ${handler.name}` : 'New event handler';
    say(editorStatus, '');
    editorMessages.replaceChildren();
    panel.hidden = false;
    panel.scrollIntoView({ block: 'nearest' });
  }

  /** The form's values over the stored handler, only the fields of its type, without the form's own keys. */
  function body(): Values {
    const edited = form.read();
    const handlerType = stored?.handlerType ?? String(edited.handlerType);
    const out: Values = { ...(stored ?? {}), ...edited, handlerType, eventTypes: readMatchers() };
    delete out.id;
    if (stored && out.xid === undefined) out.xid = stored.xid;
    for (const [t, fields] of Object.entries(TYPE_FIELDS)) if (t !== handlerType) for (const f of fields) delete out[f];
    if (handlerType === 'EMAIL' && edited.escalate !== true) delete out.escalation;
    // A SET_POINT action's value or point only with the action that uses it.
    for (const when of ['active', 'inactive']) {
      if (out[`${when}Action`] !== 'STATIC_VALUE') delete out[`${when}Value`];
      if (out[`${when}Action`] !== 'POINT_VALUE') delete out[`${when}PointXid`];
    }
    delete out.escalate;
    return out;
  }

  byId<HTMLFormElement>('handler-editor-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    form.clearErrors();
    const was = stored;
    const sent = body();
    void (async () => {
      try {
        const saved = was ? await put<EventHandler>(`/event-handlers/${seg(was.xid)}`, sent) : await post<EventHandler>('/event-handlers', sent);
        open(saved);
        say(editorStatus, `${was ? 'Saved' : 'Created'} event handler ${saved.name} (${saved.xid})`, 'ok');
        await refresh();
      } catch (err) {
        const rest = showMatcherErrors(form.showErrors(err));
        editorMessages.replaceChildren(...rest.map((m) => h('li', {}, m)));
        const what = was ? 'Not saved' : 'Not created';
        say(editorStatus, err instanceof ApiError && err.messages.length > 0 ? `${what}: ${err.messages.length === 1 ? 'one problem' : `${err.messages.length} problems`}, shown at the fields` : `${what}: ${err instanceof Error ? err.message : String(err)}`, 'error');
      }
    })();
  });
  byId('handler-matcher-add').addEventListener('click', () => matchers.append(matcherRow({ eventType: 'DATA_POINT' })));
  byId('handler-editor-close').addEventListener('click', () => (panel.hidden = true));
  byId('handler-new').addEventListener('click', () => open(undefined));

  // ---- list ----

  async function remove(handler: EventHandler): Promise<void> {
    if (!window.confirm(`Delete event handler ${handler.name}? Its pending deliveries and their record go with it.`)) return;
    try {
      await del(`/event-handlers/${seg(handler.xid)}`);
      if (stored?.xid === handler.xid) panel.hidden = true;
      if (deliveriesOf?.xid === handler.xid) deliveriesPanel.hidden = true;
      await refresh();
      say(status, `Deleted event handler ${handler.name}`, 'ok');
    } catch (err) {
      sayError(status, err);
    }
  }

  function row(handler: EventHandler): HTMLTableRowElement {
    const named = (of = '') => h('span', { class: 'sr-only' }, `${of} event handler ${handler.name}`);
    return h(
      'tr',
      { 'data-xid': handler.xid },
      h('td', {}, handler.name),
      h('td', {}, handler.handlerType),
      h('td', { class: handler.disabled ? 'muted' : undefined }, handler.disabled ? 'disabled' : 'enabled'),
      h('td', {}, describeMatchers(handler.eventTypes ?? [])),
      h('td', {}, describeHandler(handler)),
      h(
        'td',
        {},
        h('button', { type: 'button', onclick: () => open(handler) }, 'Edit', named()),
        ' ',
        h('button', { type: 'button', onclick: () => void showDeliveries(handler) }, 'Deliveries', named(' of')),
        ' ',
        h('button', { type: 'button', onclick: () => void remove(handler) }, 'Delete', named()),
      ),
    );
  }

  async function refresh(): Promise<void> {
    try {
      const list = await get<List<EventHandler>>('/event-handlers?sort(name)&limit(1000)');
      table.tBodies[0]!.replaceChildren(...list.items.map(row));
      labelCells(table);
      empty.hidden = list.items.length > 0;
      if (status.dataset.kind === 'error') say(status, '');
    } catch (err) {
      sayError(status, err);
    }
  }
  byId('handlers-refresh').addEventListener('click', () => void refresh());

  // ---- deliveries ----

  async function showDeliveries(handler: EventHandler): Promise<void> {
    deliveriesOf = handler;
    byId('deliveries-title').textContent = `Deliveries of ${handler.name}`;
    deliveriesPanel.hidden = false;
    deliveriesPanel.scrollIntoView({ block: 'nearest' });
    try {
      const list = await get<List<Delivery>>(`/event-handlers/${seg(handler.xid)}/deliveries?${DELIVERIES_QUERY}`);
      deliveriesTable.tBodies[0]!.replaceChildren(
        ...list.items.map((d) =>
          h(
            'tr',
            { 'data-delivery-id': d.id, 'data-event-id': d.eventId },
            h('td', {}, formatTime(d.timestamp)),
            h('td', {}, d.eventId),
            h('td', {}, d.action),
            h('td', {}, d.attempt),
            h('td', { class: `outcome-${d.outcome}` }, d.outcome),
            h('td', {}, d.status ?? ''),
            h('td', {}, d.error ?? ''),
          ),
        ),
      );
      labelCells(deliveriesTable);
      byId('deliveries-empty').hidden = list.items.length > 0;
      say(deliveriesStatus, list.total > list.items.length ? `The newest ${list.items.length} of ${list.total}` : `${list.total} deliveries`);
    } catch (err) {
      sayError(deliveriesStatus, err);
    }
  }
  byId('deliveries-refresh').addEventListener('click', () => {
    if (deliveriesOf) void showDeliveries(deliveriesOf);
  });
  byId('deliveries-close').addEventListener('click', () => {
    deliveriesOf = undefined;
    deliveriesPanel.hidden = true;
  });

  return { refresh };
}
