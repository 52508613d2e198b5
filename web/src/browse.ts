// Data sources and points: lists filtered by RQL, and minimal forms to create a VIRTUAL source and
// a NUMERIC point on it. A point row's "Trend" button (or the selected rows) opens the trend view;
// its "Settings" button the logging and retention form (point-settings.ts).
import { get, post, put, rqlQuery, type DataPoint, type DataSource, type List } from './api.js';
import { byId, field, h, say, sayError } from './dom.js';
import { pointSettings } from './point-settings.js';

export interface BrowseView {
  refresh(): Promise<void>;
}

export function browseView(openTrend: (xids: string[]) => void): BrowseView {
  const sourcesFilter = byId<HTMLFormElement>('sources-filter');
  const pointsFilter = byId<HTMLFormElement>('points-filter');
  const sourcesBody = byId<HTMLTableElement>('sources-table').tBodies[0]!;
  const pointsBody = byId<HTMLTableElement>('points-table').tBodies[0]!;
  const sourcesStatus = byId('sources-status');
  const pointsStatus = byId('points-status');
  const sourceForm = byId<HTMLFormElement>('source-form');
  const pointForm = byId<HTMLFormElement>('point-form');
  const sourceFormStatus = byId('source-form-status');
  const pointFormStatus = byId('point-form-status');
  const pointSourceSelect = pointForm.elements.namedItem('dataSourceXid') as HTMLSelectElement;
  const settings = pointSettings(() => void loadPoints());

  async function loadSources(): Promise<void> {
    try {
      const list = await get<List<DataSource>>('/data-sources' + rqlQuery(field(sourcesFilter, 'rql')));
      sourcesBody.replaceChildren(...list.items.map(sourceRow));
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
      h('td', {}, ds.lastError ?? ''),
      h(
        'td',
        {},
        h('button', { type: 'button', onclick: () => void showPointsOf(ds.xid) }, 'Points', h('span', { class: 'sr-only' }, ` of ${ds.name}`)),
        ' ',
        h('button', { type: 'button', onclick: () => void setEnabled(ds, !ds.enabled) }, ds.enabled ? 'Disable' : 'Enable', h('span', { class: 'sr-only' }, ` ${ds.name}`)),
      ),
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
      h('td', {}, dp.name),
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
      ),
    );
  }

  /** The point form offers the VIRTUAL sources (the only kind it can create points for). */
  async function loadSourceChoices(selectXid?: string): Promise<void> {
    try {
      const list = await get<List<DataSource>>('/data-sources?eq(modelType,VIRTUAL)&sort(name)');
      const current = selectXid ?? pointSourceSelect.value;
      pointSourceSelect.replaceChildren(...list.items.map((ds) => h('option', { value: ds.xid, selected: ds.xid === current }, `${ds.name} (${ds.xid})`)));
    } catch (err) {
      sayError(pointFormStatus, err);
    }
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

  sourceForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const xid = field(sourceForm, 'xid').trim();
    const body = {
      ...(xid ? { xid } : {}),
      name: field(sourceForm, 'name').trim(),
      modelType: 'VIRTUAL',
      updatePeriods: Number(field(sourceForm, 'updatePeriods')),
      updatePeriodType: field(sourceForm, 'updatePeriodType'),
      enabled: field(sourceForm, 'enabled') === 'true',
    };
    void (async () => {
      try {
        const ds = await post<DataSource>('/data-sources', body);
        say(sourceFormStatus, `Created data source ${ds.name} (${ds.xid})`, 'ok');
        sourceForm.reset();
        await Promise.all([loadSources(), loadSourceChoices(ds.xid)]);
      } catch (err) {
        sayError(sourceFormStatus, err);
      }
    })();
  });

  pointForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const xid = field(pointForm, 'xid').trim();
    const unit = field(pointForm, 'unit').trim();
    const body = {
      ...(xid ? { xid } : {}),
      name: field(pointForm, 'name').trim(),
      dataSourceXid: field(pointForm, 'dataSourceXid'),
      pointLocator: {
        dataType: 'NUMERIC',
        changeType: field(pointForm, 'changeType'),
        min: Number(field(pointForm, 'min')),
        max: Number(field(pointForm, 'max')),
      },
      ...(unit ? { unit } : {}),
    };
    void (async () => {
      try {
        const dp = await post<DataPoint>('/data-points', body);
        say(pointFormStatus, `Created point ${dp.name} (${dp.xid})`, 'ok');
        const source = body.dataSourceXid;
        pointForm.reset();
        pointSourceSelect.value = source;
        await loadPoints();
      } catch (err) {
        sayError(pointFormStatus, err);
      }
    })();
  });

  return {
    async refresh() {
      await Promise.all([loadSources(), loadPoints(), loadSourceChoices()]);
    },
  };
}
