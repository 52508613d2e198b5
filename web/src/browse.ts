// Data sources and points: lists filtered by RQL. A source row edits, deletes, enables or disables
// its source and shows its last error with its time and whether it has cleared; a point row shows the
// live value (point-values-live.ts), sets it (set-value.ts), opens the trend, the logging and
// retention settings (point-settings.ts), the editor and the event detectors (editors.ts).
import { get, put, rqlQuery, type DataPoint, type DataSource, type List, type User } from './api.js';
import { byId, field, formatTime, h, labelCells, say, sayError } from './dom.js';
import { editors } from './editors.js';
import { pointSettings } from './point-settings.js';
import { PointValuesLive } from './point-values-live.js';
import { canSet, setValuePanel } from './set-value.js';

export interface BrowseView {
  refresh(): Promise<void>;
  stop(): void;
}

export function browseView(openTrend: (xids: string[]) => void, user: () => User | undefined): BrowseView {
  const sourcesFilter = byId<HTMLFormElement>('sources-filter');
  const pointsFilter = byId<HTMLFormElement>('points-filter');
  const sourcesBody = byId<HTMLTableElement>('sources-table').tBodies[0]!;
  const pointsBody = byId<HTMLTableElement>('points-table').tBodies[0]!;
  const sourcesStatus = byId('sources-status');
  const pointsStatus = byId('points-status');
  const settings = pointSettings(() => void loadPoints());
  const liveValues = new PointValuesLive(byId('points-table'));
  const setValue = setValuePanel(
    (xid, v) => liveValues.show(xid, v),
    (xid) => liveValues.current(xid),
  );
  const edit = editors(async () => {
    await Promise.all([loadSources(), loadPoints()]);
  });
  const act = (what: string, run: () => Promise<void>, status: HTMLElement) =>
    run().catch((err: unknown) => sayError(status, err instanceof Error ? new Error(`${what}: ${err.message}`) : err));

  async function loadSources(): Promise<void> {
    try {
      const list = await get<List<DataSource>>('/data-sources' + rqlQuery(field(sourcesFilter, 'rql')));
      sourcesBody.replaceChildren(...list.items.map(sourceRow));
      labelCells(byId<HTMLTableElement>('sources-table'));
      say(sourcesStatus, `${list.items.length} of ${list.total} data sources`);
    } catch (err) {
      sayError(sourcesStatus, err);
    }
  }

  function sourceRow(ds: DataSource): HTMLTableRowElement {
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
        ' ',
        h('button', { type: 'button', onclick: () => void setEnabled(ds, !ds.enabled) }, ds.enabled ? 'Disable' : 'Enable', h('span', { class: 'sr-only' }, ` ${ds.name}`)),
        ' ',
        h('button', { type: 'button', onclick: () => edit.editSource(ds) }, 'Edit', h('span', { class: 'sr-only' }, ` ${ds.name}`)),
        ' ',
        h('button', { type: 'button', onclick: () => void act('Delete', () => edit.deleteSource(ds), sourcesStatus) }, 'Delete', h('span', { class: 'sr-only' }, ` ${ds.name}`)),
        ' ',
        h('button', { type: 'button', onclick: () => void edit.newPoint(ds.xid) }, 'Add point', h('span', { class: 'sr-only' }, ` to ${ds.name}`)),
      ),
    );
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
      pointsBody.replaceChildren(...list.items.map(pointRow));
      labelCells(byId<HTMLTableElement>('points-table'));
      liveValues.follow(list.items.map((p) => ({ xid: p.xid, unit: p.unit, dataType: p.pointLocator.dataType })));
      say(pointsStatus, `${list.items.length} of ${list.total} data points`);
    } catch (err) {
      sayError(pointsStatus, err);
    }
  }

  function pointRow(dp: DataPoint): HTMLTableRowElement {
    return h(
      'tr',
      { 'data-xid': dp.xid },
      h('td', {}, h('input', { type: 'checkbox', name: 'trend', value: dp.xid, 'aria-label': `Select ${dp.name} for the trend` })),
      h('td', {}, dp.name, warningMarker(dp)),
      h('td', { class: 'value', 'data-live-xid': dp.xid, 'aria-live': 'off' }, dp.enabled ? '…' : '—'),
      h('td', {}, dp.xid),
      h('td', {}, dp.deviceName),
      h('td', {}, dp.pointLocator.dataType),
      h('td', {}, dp.dataSourceXid),
      h('td', {}, dp.enabled ? 'yes' : 'no'),
      h(
        'td',
        {},
        h('button', { type: 'button', onclick: () => openTrend([dp.xid]) }, 'Trend', h('span', { class: 'sr-only' }, ` of ${dp.name}`)),
        ' ',
        h('button', { type: 'button', onclick: () => void settings.open(dp.xid) }, 'Settings', h('span', { class: 'sr-only' }, ` of ${dp.name}`)),
        ' ',
        h('button', { type: 'button', onclick: () => void act('Edit', () => edit.editPoint(dp), pointsStatus) }, 'Edit', h('span', { class: 'sr-only' }, ` ${dp.name}`)),
        ' ',
        h('button', { type: 'button', onclick: () => void edit.detectors(dp) }, 'Detectors', h('span', { class: 'sr-only' }, ` of ${dp.name}`)),
        ' ',
        h('button', { type: 'button', onclick: () => void act('Delete', () => edit.deletePoint(dp), pointsStatus) }, 'Delete', h('span', { class: 'sr-only' }, ` ${dp.name}`)),
        canSet(user(), dp) && dp.enabled ? ' ' : null,
        canSet(user(), dp) && dp.enabled ? h('button', { type: 'button', class: 'set', onclick: () => setValue.open(dp) }, 'Set', h('span', { class: 'sr-only' }, ` ${dp.name}`)) : null,
      ),
    );
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
    const xids = [...pointsBody.querySelectorAll<HTMLInputElement>('input[name="trend"]:checked')].map((c) => c.value);
    if (xids.length === 0) say(pointsStatus, 'Select one or more points first', 'error');
    else openTrend(xids);
  });

  byId('source-new').addEventListener('click', () => edit.newSource());
  byId('point-new').addEventListener('click', () => void act('New point', () => edit.newPoint(), pointsStatus));

  return {
    async refresh() {
      await Promise.all([loadSources(), loadPoints()]);
    },
    stop() {
      liveValues.stop();
    },
  };
}
