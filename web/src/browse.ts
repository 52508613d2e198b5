// Data sources and points: lists filtered by RQL. A source row edits, deletes, enables or disables
// its source and shows its last error with its time and whether it has cleared; a point row shows the
// live value (point-values-live.ts), sets it (set-value.ts), opens the trend, the logging and
// retention settings (point-settings.ts), the editor and the event detectors (editors.ts).
// Above them: watch lists (watch-lists.ts) and the tree that finds points by source, device or tag
// (point-tree.ts). On a narrow screen a point row is compact: name, value, Trend and Set, the rest
// behind its "More" button (console.css, #points-table).
import { get, put, rqlQuery, type DataPoint, type DataSource, type List, type User } from './api.js';
import { byId, field, formatTime, h, labelCells, say, sayError } from './dom.js';
import { editors } from './editors.js';
import { pointSettings } from './point-settings.js';
import { livePoints } from './point-sources.js';
import { pointTree } from './point-tree.js';
import { PointValuesLive } from './point-values-live.js';
import { canSet, setValuePanel } from './set-value.js';
import { mayCreateSource, mayEditPoint, mayEditSource } from './may.js';
import type { SourceRoles } from './source-roles.js';
import { watchLists } from './watch-lists.js';

export interface BrowseView {
  refresh(): Promise<void>;
  stop(): void;
}

/** `roles`: the sources' roles, shared with the trend (read again at each refresh). */
export function browseView(openTrend: (xids: string[]) => void, user: () => User | undefined, roles: SourceRoles): BrowseView {
  const sourcesFilter = byId<HTMLFormElement>('sources-filter');
  const pointsFilter = byId<HTMLFormElement>('points-filter');
  const sourcesBody = byId<HTMLTableElement>('sources-table').tBodies[0]!;
  const pointsBody = byId<HTMLTableElement>('points-table').tBodies[0]!;
  const sourcesStatus = byId('sources-status');
  const pointsStatus = byId('points-status');
  const settings = pointSettings(() => void loadPoints());
  // Which sources the user may edit: a point may be edited through its source (may.ts).
  const liveValues = new PointValuesLive(byId('points-table'));
  const setValue = setValuePanel(
    (xid, v) => liveValues.show(xid, v),
    (xid) => liveValues.current(xid),
  );
  const edit = editors(async () => {
    await Promise.all([loadSources(), loadPoints(), tree.refresh()]);
  }, user);
  const selectedPoints = () => [...pointsBody.querySelectorAll<HTMLInputElement>('input[name="trend"]:checked')].map((c) => c.value);
  const watch = watchLists(selectedPoints, openTrend, user);
  const tree = pointTree(byId('finder-panel'), byId('finder-status'), (rql) => void showPoints(rql));
  const act = (what: string, run: () => Promise<void>, status: HTMLElement) =>
    run().catch((err: unknown) => sayError(status, err instanceof Error ? new Error(`${what}: ${err.message}`) : err));

  async function loadSources(): Promise<void> {
    try {
      const list = await get<List<DataSource>>('/data-sources' + rqlQuery(field(sourcesFilter, 'rql')));
      roles.remember(list.items);
      byId('source-new').hidden = !mayCreateSource(user());
      sourcesBody.replaceChildren(...list.items.map(sourceRow));
      labelCells(byId<HTMLTableElement>('sources-table'));
      say(sourcesStatus, `${list.items.length} of ${list.total} data sources`);
    } catch (err) {
      sayError(sourcesStatus, err);
    }
  }

  function sourceRow(ds: DataSource): HTMLTableRowElement {
    const editable = mayEditSource(user(), ds);
    return h(
      'tr',
      { 'data-xid': ds.xid },
      h('td', {}, ds.name),
      h('td', {}, ds.xid),
      h('td', {}, ds.modelType),
      h('td', {}, ds.enabled ? 'yes' : 'no'),
      h('td', { class: `state-${ds.state}` }, ds.state),
      lastErrorCell(ds),
      h(
        'td',
        {},
        h('button', { type: 'button', onclick: () => void showPointsOf(ds.xid) }, 'Points', h('span', { class: 'sr-only' }, ` of ${ds.name}`)),
        ...(editable ? sourceActions(ds) : []),
      ),
    );
  }

  /** Enable or disable, edit, delete, add a point: for a source the user may edit. */
  function sourceActions(ds: DataSource): (Node | string)[] {
    return [
      ' ',
      h('button', { type: 'button', onclick: () => void setEnabled(ds, !ds.enabled) }, ds.enabled ? 'Disable' : 'Enable', h('span', { class: 'sr-only' }, ` ${ds.name}`)),
      ' ',
      h('button', { type: 'button', onclick: () => edit.editSource(ds) }, 'Edit', h('span', { class: 'sr-only' }, ` ${ds.name}`)),
      ' ',
      h('button', { type: 'button', onclick: () => void act('Delete', () => edit.deleteSource(ds), sourcesStatus) }, 'Delete', h('span', { class: 'sr-only' }, ` ${ds.name}`)),
      ' ',
      h('button', { type: 'button', onclick: () => void edit.newPoint(ds.xid) }, 'Add point', h('span', { class: 'sr-only' }, ` to ${ds.name}`)),
    ];
  }

  /** The last error with its time; muted and marked cleared once the source recovered. */
  function lastErrorCell(ds: DataSource): HTMLTableCellElement {
    if (!ds.lastError) return h('td', {});
    const when = typeof ds.lastErrorTimestamp === 'number' ? formatTime(ds.lastErrorTimestamp) : '';
    const cleared = ds.lastErrorCleared === true;
    return h(
      'td',
      { class: cleared ? 'error-cleared' : 'state-ERROR', 'data-cleared': String(cleared) },
      ds.lastError,
      when || cleared ? h('div', { class: 'muted' }, [when, cleared ? 'cleared' : ''].filter((t) => t !== '').join(' · ')) : null,
    );
  }

  async function showPointsOf(xid: string): Promise<void> {
    (pointsFilter.elements.namedItem('rql') as HTMLInputElement).value = `eq(dataSourceXid,${xid})&sort(name)`;
    await loadPoints();
  }

  /** Lists the points a filter selects (from the tree) and brings the list into view. */
  async function showPoints(rql: string): Promise<void> {
    (pointsFilter.elements.namedItem('rql') as HTMLInputElement).value = rql;
    await loadPoints();
    pointsFilter.scrollIntoView({ block: 'start' });
  }

  async function setEnabled(ds: DataSource, enabled: boolean): Promise<void> {
    try {
      await put<DataSource>(`/data-sources/enable-disable/${encodeURIComponent(ds.xid)}`, { enabled });
      await loadSources();
    } catch (err) {
      sayError(sourcesStatus, err);
    }
  }

  async function loadPoints(): Promise<void> {
    try {
      const list = await get<List<DataPoint>>('/data-points' + rqlQuery(field(pointsFilter, 'rql')));
      await roles.learn(list.items.map((p) => p.dataSourceXid));
      byId('point-new').hidden = !roles.anyEditable();
      pointsBody.replaceChildren(...list.items.map(pointRow));
      labelCells(byId<HTMLTableElement>('points-table'));
      liveValues.follow(await livePoints(list.items));
      say(pointsStatus, `${list.items.length} of ${list.total} data points`);
    } catch (err) {
      sayError(pointsStatus, err);
    }
  }

  function pointRow(dp: DataPoint): HTMLTableRowElement {
    const editable = mayEditPoint(user(), dp, roles.of(dp.dataSourceXid));
    // Cells and buttons classed "more" are what a narrow screen shows only after the row's More button.
    return h(
      'tr',
      { 'data-xid': dp.xid },
      h('td', { class: 'pick' }, h('input', { type: 'checkbox', name: 'trend', value: dp.xid, 'aria-label': `Select ${dp.name} for the trend` })),
      h('td', { class: 'name' }, dp.name, warningMarker(dp)),
      h('td', { class: 'value', 'data-live-xid': dp.xid, 'aria-live': 'off' }, dp.enabled ? '…' : '—'),
      h('td', { class: 'more' }, dp.xid),
      h('td', { class: 'more' }, dp.deviceName),
      h('td', { class: 'more' }, dp.pointLocator.dataType),
      h('td', { class: 'more' }, dp.dataSourceName ?? dp.dataSourceXid),
      h('td', { class: 'more' }, dp.enabled ? 'yes' : 'no'),
      h(
        'td',
        { class: 'actions' },
        h('button', { type: 'button', onclick: () => openTrend([dp.xid]) }, 'Trend', h('span', { class: 'sr-only' }, ` of ${dp.name}`)),
        ' ',
        h('button', { type: 'button', class: 'more', onclick: () => void settings.open(dp.xid, editable) }, 'Settings', h('span', { class: 'sr-only' }, ` of ${dp.name}`)),
        editable ? ' ' : null,
        editable ? h('button', { type: 'button', class: 'more', onclick: () => void act('Edit', () => edit.editPoint(dp), pointsStatus) }, 'Edit', h('span', { class: 'sr-only' }, ` ${dp.name}`)) : null,
        ' ',
        h('button', { type: 'button', class: 'more', onclick: () => void edit.detectors(dp, editable) }, 'Detectors', h('span', { class: 'sr-only' }, ` of ${dp.name}`)),
        editable ? ' ' : null,
        editable ? h('button', { type: 'button', class: 'more', onclick: () => void act('Delete', () => edit.deletePoint(dp), pointsStatus) }, 'Delete', h('span', { class: 'sr-only' }, ` ${dp.name}`)) : null,
        canSet(user(), dp) && dp.enabled ? ' ' : null,
        canSet(user(), dp) && dp.enabled ? h('button', { type: 'button', class: 'set', onclick: () => setValue.open(dp) }, 'Set', h('span', { class: 'sr-only' }, ` ${dp.name}`)) : null,
        ' ',
        moreButton(dp),
      ),
    );
  }

  /** Narrow screens only (console.css): shows or hides the row's other cells and actions. */
  function moreButton(dp: DataPoint): HTMLButtonElement {
    const button = h('button', { type: 'button', class: 'row-more', 'aria-expanded': 'false' }, 'More', h('span', { class: 'sr-only' }, ` about ${dp.name}`));
    button.addEventListener('click', () => {
      const open = button.closest('tr')!.classList.toggle('expanded');
      button.setAttribute('aria-expanded', String(open));
      button.firstChild!.textContent = open ? 'Less' : 'More';
    });
    return button;
  }

  /** A point whose source could not read its last message (MQTT): a marker with the text and time. */
  function warningMarker(dp: DataPoint): HTMLElement | null {
    if (!dp.lastWarning || dp.lastWarningCleared) return null;
    const when = dp.lastWarningTimestamp ? ` (${formatTime(dp.lastWarningTimestamp)})` : '';
    return h('span', { class: 'warning', title: `${dp.lastWarning}${when}`, role: 'img', 'aria-label': `Warning: ${dp.lastWarning}${when}` }, ' ⚠');
  }

  sourcesFilter.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void loadSources();
  });
  pointsFilter.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void loadPoints();
  });
  byId('trend-selected').addEventListener('click', () => {
    const xids = selectedPoints();
    if (xids.length === 0) say(pointsStatus, 'Select one or more points first', 'error');
    else openTrend(xids);
  });

  byId('source-new').addEventListener('click', () => edit.newSource());
  byId('point-new').addEventListener('click', () => void act('New point', () => edit.newPoint(), pointsStatus));

  return {
    async refresh() {
      await roles.reload().catch((err: unknown) => sayError(sourcesStatus, err));
      await Promise.all([loadSources(), loadPoints(), tree.refresh(), watch.refresh()]);
    },
    stop() {
      liveValues.stop();
      watch.stop();
    },
  };
}
