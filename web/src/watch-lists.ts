// Watch lists: saved sets of points with their live values, kept in the JSON store (/json-store, the
// same items as Mango's /json-data) so its read and edit permissions share them: an item whose XID
// starts with "watchlist-" and whose document is {"points": [xid, ...]} in the operator's order.
// Create, rename and share (the roles that may read and edit it), add the points selected in the
// points list, remove one, delete. A whole list is written back at each change (last write wins).
// The values are followed as the points list follows its own (point-values-live.ts).
import { del, get, post, put, rqlValue, seg, type DataPoint, type List, type User } from './api.js';
import { byId, field, h, say, sayError } from './dom.js';
import { livePoints } from './point-sources.js';
import { PointValuesLive } from './point-values-live.js';

export const WATCH_LIST_PREFIX = 'watchlist-';
const REMEMBERED = 'watch-list';

interface WatchListSummary {
  xid: string;
  name: string;
  readPermission: string[];
  editPermission: string[];
}

interface WatchListItem extends WatchListSummary {
  jsonData: unknown;
}

/** The XIDs a stored document lists (anything else in it is ignored; a document not of this shape lists none). */
export function watchedXids(doc: unknown): string[] {
  const points = typeof doc === 'object' && doc !== null ? (doc as { points?: unknown }).points : undefined;
  return Array.isArray(points) ? [...new Set(points.filter((x): x is string => typeof x === 'string'))] : [];
}

const roles = (text: string) =>
  text
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');

export interface WatchLists {
  refresh(): Promise<void>;
  stop(): void;
}

/** `selected()`: the XIDs picked in the points list; `openTrend` charts the list's points. */
export function watchLists(selected: () => string[], openTrend: (xids: string[]) => void, user: () => User | undefined): WatchLists {
  const select = byId<HTMLSelectElement>('watch-select');
  const form = byId<HTMLFormElement>('watch-form');
  const status = byId('watch-status');
  const table = byId<HTMLTableElement>('watch-table');
  const body = table.tBodies[0]!;
  const empty = byId('watch-empty');
  const live = new PointValuesLive(table);
  let lists: WatchListSummary[] = [];
  let current: WatchListItem | undefined;
  let editing: 'new' | 'rename' = 'new';

  async function refresh(): Promise<void> {
    try {
      const list = await get<List<WatchListSummary>>(`/json-store?match(xid,${rqlValue(WATCH_LIST_PREFIX)}*)&sort(name)&limit(1000)`);
      lists = list.items;
      const wanted = current?.xid ?? localStorage.getItem(REMEMBERED) ?? '';
      select.replaceChildren(...lists.map((l) => h('option', { value: l.xid }, l.name)));
      const chosen = lists.find((l) => l.xid === wanted) ?? lists[0];
      if (chosen) select.value = chosen.xid;
      await open(chosen?.xid);
    } catch (err) {
      sayError(status, err);
    }
  }

  async function open(xid: string | undefined): Promise<void> {
    if (xid === undefined) {
      current = undefined;
      showControls(false);
      body.replaceChildren();
      live.stop();
      empty.textContent = 'No watch lists yet: select points below and make one with New watch list.';
      empty.hidden = false;
      return;
    }
    localStorage.setItem(REMEMBERED, xid);
    current = await get<WatchListItem>(`/json-store/${seg(xid)}`);
    showControls(true);
    const xids = watchedXids(current.jsonData);
    const found = new Map<string, DataPoint>();
    if (xids.length > 0) {
      const points = await get<List<DataPoint>>(`/data-points?in(xid,${xids.map(rqlValue).join(',')})&limit(${xids.length})`);
      for (const p of points.items) found.set(p.xid, p);
    }
    body.replaceChildren(...xids.map((x) => row(x, found.get(x))));
    empty.textContent = 'This list has no points yet: select points below and press Add selected points.';
    empty.hidden = xids.length > 0;
    live.follow(await livePoints([...found.values()]));
    say(status, `${current.name}: ${xids.length} point${xids.length === 1 ? '' : 's'}`);
  }

  /** Whether the user may change the open list (its edit roles, as the store checks them): else its buttons are not shown. */
  function mayEdit(): boolean {
    const held = user()?.permissions ?? [];
    return current !== undefined && (held.includes('superadmin') || current.editPermission.some((r) => held.includes(r)));
  }

  function row(xid: string, p: DataPoint | undefined): HTMLTableRowElement {
    const name = p?.name ?? xid;
    return h(
      'tr',
      { 'data-xid': xid },
      h('td', { class: 'name', 'data-label': 'Name' }, name, p ? h('div', { class: 'muted' }, p.deviceName) : h('div', { class: 'muted' }, 'not found, or not yours to read')),
      h('td', { class: 'value', 'data-label': 'Value', 'data-live-xid': xid, 'aria-live': 'off' }, p ? (p.enabled ? '…' : '—') : ''),
      h(
        'td',
        { class: 'actions' },
        p ? h('button', { type: 'button', onclick: () => openTrend([xid]) }, 'Trend', h('span', { class: 'sr-only' }, ` of ${name} (watch list)`)) : null,
        ' ',
        mayEdit() && h('button', { type: 'button', onclick: () => void change(watchedXids(current?.jsonData).filter((x) => x !== xid), `Removed ${name}`) }, 'Remove', h('span', { class: 'sr-only' }, ` ${name} from the watch list`)),
      ),
    );
  }

  /** Writes the list's points back (name and permissions kept). */
  async function change(xids: string[], done: string): Promise<void> {
    if (!current) return;
    try {
      await put(`/json-store/${seg(current.xid)}`, { name: current.name, jsonData: { points: xids } });
      await open(current.xid);
      say(status, done, 'ok');
    } catch (err) {
      sayError(status, err);
    }
  }

  function showControls(has: boolean): void {
    for (const id of ['watch-rename', 'watch-delete', 'watch-add']) byId(id).hidden = !has || !mayEdit();
    byId('watch-trend').hidden = !has;
    select.closest('label')!.hidden = !has;
  }

  function openForm(mode: 'new' | 'rename'): void {
    editing = mode;
    const u = user();
    const own = (u?.permissions ?? []).filter((r) => r !== 'user' && r !== 'superadmin');
    const set = (name: string, value: string) => ((form.elements.namedItem(name) as HTMLInputElement).value = value);
    if (mode === 'rename' && current) {
      set('name', current.name);
      set('readPermission', current.readPermission.join(', '));
      set('editPermission', current.editPermission.join(', '));
    } else {
      set('name', '');
      set('readPermission', 'user');
      // Its maker must be able to change it later: one of their roles (a plain user has only "user").
      set('editPermission', own[0] ?? (u?.permissions.includes('superadmin') ? '' : 'user'));
    }
    byId('watch-form-title').textContent = mode === 'new' ? 'New watch list (with the points selected below)' : 'Rename or share the watch list';
    form.hidden = false;
    (form.elements.namedItem('name') as HTMLInputElement).focus();
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const fields = { name: field(form, 'name').trim(), readPermission: roles(field(form, 'readPermission')), editPermission: roles(field(form, 'editPermission')) };
    const save =
      editing === 'rename' && current
        ? put<WatchListItem>(`/json-store/${seg(current.xid)}`, { ...fields, jsonData: { points: watchedXids(current.jsonData) } })
        : post<WatchListItem>('/json-store', { ...fields, xid: `${WATCH_LIST_PREFIX}${crypto.randomUUID()}`, jsonData: { points: selected() } });
    save
      .then(async (item) => {
        form.hidden = true;
        current = item;
        await refresh();
        say(status, `Saved watch list ${item.name}`, 'ok');
      })
      .catch((err: unknown) => sayError(status, err));
  });

  select.addEventListener('change', () => void open(select.value).catch((err: unknown) => sayError(status, err)));
  byId('watch-new').addEventListener('click', () => openForm('new'));
  byId('watch-rename').addEventListener('click', () => openForm('rename'));
  byId('watch-form-close').addEventListener('click', () => (form.hidden = true));
  byId('watch-delete').addEventListener('click', () => {
    if (!current || !window.confirm(`Delete watch list ${current.name}? Its points stay.`)) return;
    const gone = current;
    del(`/json-store/${seg(gone.xid)}`)
      .then(async () => {
        current = undefined;
        localStorage.removeItem(REMEMBERED);
        await refresh();
        say(status, `Deleted watch list ${gone.name}`, 'ok');
      })
      .catch((err: unknown) => sayError(status, err));
  });
  byId('watch-add').addEventListener('click', () => {
    const picked = selected();
    if (picked.length === 0) return say(status, 'Select points in the points list first (their Chart boxes)', 'error');
    const before = watchedXids(current?.jsonData);
    void change([...new Set([...before, ...picked])], `Added ${picked.filter((x) => !before.includes(x)).length} point(s)`);
  });
  byId('watch-trend').addEventListener('click', () => {
    const xids = watchedXids(current?.jsonData);
    if (xids.length > 0) openTrend(xids);
  });

  return {
    refresh,
    stop() {
      live.stop();
      current = undefined;
    },
  };
}
