// The trend chart: one or several points drawn with uPlot over a time range, raw or rolled up, from
// GET /point-values/multiple-arrays/time-period/<xid,xid>[/<rollup>]. Over a "last …" range new
// values arrive on the point-value WebSocket (UPDATE events) and are appended; while the socket is
// down the chart polls instead. With a rollup, live values trigger a throttled reload (appending raw
// values to period statistics would mix two kinds of numbers). Opened from a point, the range fits
// the points' history (a new point fills the chart instead of being a sliver at its right edge);
// rollup periods start on clock boundaries in the browser's zone (truncate=true); a series with
// few values is drawn with dots, so a lone value shows; the y axis names the points' units. A
// request that fails leaves an empty chart and its error, never the series of an earlier request.
//
// Points are picked by searching (point-search.ts) or typed as XIDs; each unit gets its own y axis
// (trend-axes.ts). Dragging across the chart zooms in, Earlier/Later/Zoom out pan and widen: each
// loads the range again, with the automatic rollup sized to the plot's width (trend-rollup.ts: raw
// values when few enough). What is shown downloads as CSV or PNG (trend-export.ts), and values can
// be deleted from a point's history (trend-delete.ts).
import uPlot from 'uplot';
import '../trend.css';
import { get, seg, type DataPoint, type List, type PointValue } from './api.js';
import { byId, field, formatTime, h, say, sayError } from './dom.js';
import { LiveSocket, type LiveState } from './live.js';
import { pointSearch, type FoundPoint } from './point-search.js';
import { timeAxis, unitScales, X_AXIS_FONT } from './trend-axes.js';
import { deletePanel, localInput } from './trend-delete.js';
import { download, fileStamp, trendCsv, trendPng, type ExportSeries } from './trend-export.js';
import { rollupFor } from './trend-rollup.js';

const RANGES: Record<string, number> = { '10m': 600_000, '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 };
/** The fitted range: at least a minute, at most a week, a little wider than the history. */
const FIT_MIN_MS = 60_000;
const FIT_MAX_MS = 7 * 86_400_000;
const PERIOD_MS: Record<string, number> = { SECONDS: 1_000, MINUTES: 60_000, HOURS: 3_600_000 };
/** A series with at most this many values in the chart also gets a dot per value. */
const DOTS_UP_TO = 60;
/** Room after the newest value, as a share of the range. */
const EDGE_ROOM = 0.02;
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const POLL_MS = 5_000;
const ROLLUP_RELOAD_MS = 10_000;
const REDRAW_MS = 250;

/** What the form asks for, resolved to concrete times and a rollup. */
interface Query {
  xids: string[];
  /** The span of a "last …" range; undefined for a custom range (no live updates). */
  span: number | undefined;
  from: number;
  to: number;
  rollup: string;
  timePeriodType?: string;
  timePeriods?: number;
  /** Rollup "Automatic": chosen again at each load from the values in the range and the plot's width. */
  auto: boolean;
}

/** The shortest range a zoom goes to. */
const ZOOM_MIN_MS = 1_000;

function chartValue(v: PointValue['value']): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null; // text values and empty periods are not drawn
}

export interface TrendView {
  show(xids: string[]): void;
  stop(): void;
}

export interface TrendOptions {
  /** Whether the user may delete values of this point (edit permission); the service checks anyway. */
  mayDelete?: (point: DataPoint) => boolean;
}

export function trendView(options: TrendOptions = {}): TrendView {
  const form = byId<HTMLFormElement>('trend-form');
  const status = byId('trend-status');
  const chartEl = byId('trend-chart');
  let query: Query | undefined;
  let plot: uPlot | undefined;
  let plotXids = '';
  // uPlot's aligned data: timestamps (ms), then one array per point, null where it has no value.
  let xs: number[] = [];
  let ys: (number | null)[][] = [];
  let redrawTimer: number | undefined;
  let pollTimer: number | undefined;
  let reloadTimer: number | undefined;
  /** The load in flight, and for which query (a new query never waits for an old one's). */
  let loading: { query: Query; done: Promise<void> } | undefined;
  const subscribed = new Set<string>();
  /** The points' names for the legend, units for the axes, types for the rollup, by XID. */
  const names = new Map<string, string>();
  const units = new Map<string, string>();
  const points = new Map<string, DataPoint>();
  const tools = byId('trend-tools');
  const chosen = byId('trend-chosen');
  const xidsInput = form.elements.namedItem('xids') as HTMLInputElement;
  const deleter = deletePanel(() => void load());
  /** The span of the "Fit to history" range, fitted to the points asked for at each apply. */
  let fitSpan = RANGES['1h']!;

  const live = new LiveSocket('point-value', {
    onMessage: onLiveMessage,
    onState: onLiveState,
  });

  /** The XIDs named in the form, each once. */
  function readXids(): string[] {
    const xids = [...new Set(field(form, 'xids').split(',').map((x) => x.trim()).filter((x) => x !== ''))];
    if (xids.length === 0) throw new Error('Name at least one point XID');
    return xids;
  }

  function readForm(): Query {
    const xids = readXids();
    const range = field(form, 'range');
    let span: number | undefined;
    let from: number;
    let to: number;
    if (range === 'custom') {
      from = new Date(field(form, 'from')).getTime();
      to = new Date(field(form, 'to')).getTime();
      if (!Number.isFinite(from) || !Number.isFinite(to)) throw new Error('Enter both From and To for a custom range');
      if (from >= to) throw new Error('From must be before To');
    } else {
      span = range === 'fit' ? fitSpan : (RANGES[range] ?? RANGES['1h']!);
      to = Date.now();
      from = to - span;
    }
    return { xids, span, from, to, ...readRollup() };
  }

  function readRollup(): Pick<Query, 'rollup' | 'timePeriodType' | 'timePeriods' | 'auto'> {
    const rollup = field(form, 'rollup');
    if (rollup === 'AUTO') return { rollup: 'NONE', auto: true };
    if (rollup === 'NONE') return { rollup, auto: false };
    const timePeriods = Number(field(form, 'timePeriods'));
    return { rollup, timePeriodType: field(form, 'timePeriodType'), timePeriods: Number.isInteger(timePeriods) && timePeriods >= 1 ? timePeriods : 1, auto: false };
  }

  /** The plot area's width in CSS px (a guess from the chart's width before the first plot). */
  function plotWidth(): number {
    return plot?.over.clientWidth || Math.max(100, chartEl.clientWidth - 16 - 60 * new Set(query?.xids.map((x) => units.get(x) ?? '')).size);
  }

  /**
   * The automatic rollup for the query's range: raw when no point has more values in it than the
   * plot has pixels across (COUNT over the whole range, one request), else averages (LAST when a
   * point is not numeric) on a step that gives a few pixels per period.
   */
  async function resolveAuto(q: Query): Promise<void> {
    const params = new URLSearchParams({ from: String(q.from), to: String(q.to) });
    const counts = await get<Record<string, PointValue[]>>(`/point-values/multiple-arrays/time-period/${q.xids.map(seg).join(',')}/COUNT?${params}`);
    const most = Math.max(0, ...Object.values(counts).map((c) => Number(c[0]?.value ?? 0)));
    const numeric = q.xids.every((x) => (points.get(x)?.pointLocator.dataType ?? 'NUMERIC') === 'NUMERIC');
    const chosen = rollupFor(q.to - q.from, plotWidth(), most, numeric);
    q.rollup = chosen.rollup;
    q.timePeriodType = chosen.timePeriodType;
    q.timePeriods = chosen.timePeriods;
  }

  function url(q: Query): string {
    const params = new URLSearchParams({ from: String(q.from), to: String(q.to) });
    if (q.rollup !== 'NONE' && q.timePeriodType) {
      params.set('timePeriodType', q.timePeriodType);
      params.set('timePeriods', String(q.timePeriods ?? 1));
      params.set('timezone', Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
      // Periods on clock boundaries (…:00, :05, :10 for 5 minutes), not at now − span.
      params.set('truncate', 'true');
    }
    const rollup = q.rollup === 'NONE' ? '' : `/${q.rollup}`;
    return `/point-values/multiple-arrays/time-period/${q.xids.map(seg).join(',')}${rollup}?${params}`;
  }

  /**
   * Periods up to hours start on clock boundaries in the browser's zone (…:00, :05, :10 for 5 minutes):
   * the service's truncate only rounds to the unit. Days and longer are left to truncate=true.
   */
  function alignToPeriods(q: Query): void {
    const unit = q.rollup === 'NONE' || !q.timePeriodType ? undefined : PERIOD_MS[q.timePeriodType];
    if (!unit) return;
    const step = unit * (q.timePeriods ?? 1);
    const offset = -new Date(q.from).getTimezoneOffset() * 60_000;
    q.from = Math.floor((q.from + offset) / step) * step - offset;
  }

  /**
   * Fetches the whole range of the query shown again (a "last …" range moves to now first). A
   * failure of its first load clears the chart and stops following it: its error stays on screen
   * rather than earlier series under the new names; a failed reload keeps what is drawn.
   */
  function load(first = false): Promise<void> {
    const q = query;
    if (!q) return Promise.resolve();
    if (loading?.query === q) return loading.done;
    const done = (async () => {
      if (q.span !== undefined) {
        q.to = Date.now();
        q.from = q.to - q.span;
      }
      try {
        if (q.auto) await resolveAuto(q);
        if (q !== query) return;
        alignToPeriods(q);
        const result = await get<Record<string, PointValue[]>>(url(q));
        if (q !== query) return;
        align(q.xids.map((xid) => result[xid] ?? []));
        draw();
        if (first) follow(q);
        describe();
      } catch (err) {
        if (q !== query) return;
        if (first) {
          forget();
          clearChart();
        }
        sayError(status, err);
      }
    })().finally(() => {
      if (loading?.query === q) loading = undefined;
    });
    loading = { query: q, done };
    return done;
  }

  function align(series: PointValue[][]): void {
    const times = [...new Set(series.flatMap((s) => s.map((v) => v.timestamp)))].sort((a, b) => a - b);
    const index = new Map(times.map((t, i) => [t, i]));
    xs = times;
    ys = series.map((s) => {
      const column: (number | null)[] = new Array<number | null>(times.length).fill(null);
      for (const v of s) column[index.get(v.timestamp)!] = chartValue(v.value);
      return column;
    });
  }

  /** Adds one live value, keeping the timestamps sorted and the window at its span. */
  function append(seriesIndex: number, timestamp: number, value: number | null): void {
    let i = xs.length;
    while (i > 0 && xs[i - 1]! > timestamp) i--;
    if (i > 0 && xs[i - 1] === timestamp) {
      ys[seriesIndex]![i - 1] = value;
    } else {
      xs.splice(i, 0, timestamp);
      ys.forEach((column, s) => column.splice(i, 0, s === seriesIndex ? value : null));
    }
    if (query?.span !== undefined) {
      query.to = Math.max(query.to, timestamp, Date.now());
      query.from = query.to - query.span;
      let drop = 0;
      while (drop < xs.length && xs[drop]! < query.from) drop++;
      if (drop > 0) {
        xs.splice(0, drop);
        for (const column of ys) column.splice(0, drop);
      }
    }
    redrawTimer ??= window.setTimeout(() => {
      redrawTimer = undefined;
      draw();
      describe();
    }, REDRAW_MS);
  }

  function draw(): void {
    const q = query;
    if (!q) return;
    const data: uPlot.AlignedData = [xs, ...ys];
    const width = chartWidth();
    const key = q.xids.map((x) => `${x}\u0000${units.get(x) ?? ''}`).join(',');
    if (!plot || plotXids !== key) {
      plot?.destroy();
      plotXids = key;
      const byUnit = unitScales(
        q.xids.map((x) => units.get(x) ?? ''),
        q.xids.map((_x, i) => COLORS[i % COLORS.length]!),
      );
      const scales: uPlot.Scales = {
        // The x range follows the query (a "last …" range slides with live values).
        // A little room after the newest value, so that a dot there is not cut by the frame.
        x: { time: true, range: (): uPlot.Range.MinMax => (query ? [query.from, query.to + (query.to - query.from) * EDGE_ROOM] : [null, null]) },
      };
      for (const scale of byUnit.scaleOf) scales[scale] = { auto: true };
      const options: uPlot.Options = {
        width,
        height: chartHeight(),
        ms: 1,
        scales,
        // Dragging across the plot selects a time range, which zoom() loads (uPlot itself only rescales).
        cursor: { drag: { x: true, y: false, setScale: false } },
        hooks: { setSelect: [(u) => zoomToSelection(u)] },
        series: [
          { label: 'Time' },
          ...q.xids.map((xid, i) => ({
            label: names.get(xid) ?? xid,
            scale: byUnit.scaleOf[i]!,
            value: (_u: uPlot, v: number | null) => (v === null ? '--' : `${Number(v.toPrecision(6))}${units.has(xid) ? ` ${units.get(xid)}` : ''}`),
            stroke: COLORS[i % COLORS.length]!,
            width: 2,
            spanGaps: true,
            points: { show: (_u: uPlot, s: number) => countOf(ys[s - 1]) <= DOTS_UP_TO, size: 7, fill: COLORS[i % COLORS.length]! },
          })),
        ],
        axes: [timeAxis((ticks) => (chartEl.dataset.xTicks = JSON.stringify(ticks))), ...byUnit.axes],
      };
      chartEl.dataset.axes = JSON.stringify(byUnit.units);
      chartEl.dataset.xFont = X_AXIS_FONT;
      plot = new uPlot(options, data, chartEl);
    } else {
      plot.setData(data);
    }
    // For tests and curious users: how many values the chart holds.
    chartEl.dataset.points = String(ys.reduce((n, column) => n + column.filter((v) => v !== null).length, 0));
    chartEl.dataset.first = xs.length > 0 ? String(xs[0]) : '';
    chartEl.dataset.from = String(q.from);
    chartEl.dataset.to = String(q.to);
    tools.hidden = false;
    byId('trend-delete-open').hidden = deletable().length === 0;
  }

  function chartWidth(): number {
    return Math.max(240, chartEl.clientWidth - 16);
  }

  /** Lower on a phone, so the form and the chart fit on one screen. */
  function chartHeight(): number {
    return window.innerWidth < 560 ? 260 : 360;
  }

  function countOf(column: (number | null)[] | undefined): number {
    let n = 0;
    for (const v of column ?? []) if (v !== null) n++;
    return n;
  }

  /** The range selected by dragging across the plot, loaded (the selection box itself goes). */
  function zoomToSelection(u: uPlot): void {
    const { left, width } = u.select;
    if (width < 3) return;
    const from = u.posToVal(left, 'x');
    const to = u.posToVal(left + width, 'x');
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    showRange(from, to);
  }

  /**
   * Shows [from, to) of the points shown, as a fixed range (live updates stop; the form shows it as a
   * custom range) with the form's rollup, automatic sized to the new range.
   */
  function showRange(from: number, to: number): void {
    const q = query;
    if (!q) return;
    if (to - from < ZOOM_MIN_MS) {
      const middle = (from + to) / 2;
      from = middle - ZOOM_MIN_MS / 2;
      to = middle + ZOOM_MIN_MS / 2;
    }
    from = Math.round(from);
    to = Math.round(to);
    (form.elements.namedItem('range') as HTMLSelectElement).value = 'custom';
    (form.elements.namedItem('from') as HTMLInputElement).value = localInput(from);
    (form.elements.namedItem('to') as HTMLInputElement).value = localInput(to);
    syncControls();
    const next: Query = { xids: q.xids, span: undefined, from, to, ...readRollup() };
    forget();
    query = next;
    say(status, 'Loading…');
    void load(true);
  }

  /** Moves the range shown by `share` of its length (negative: earlier), up to now. */
  function pan(share: number): void {
    const q = query;
    if (!q) return;
    const span = q.to - q.from;
    const to = Math.min(Date.now(), q.to + span * share);
    showRange(to - span, to);
  }

  /** Doubles the range shown around its middle, up to now. */
  function zoomOut(): void {
    const q = query;
    if (!q) return;
    const span = q.to - q.from;
    const to = Math.min(Date.now(), q.to + span / 2);
    showRange(to - 2 * span, to);
  }

  /** Halves the range shown around its middle (dragging does it with the mouse; this, with the keyboard). */
  function zoomIn(): void {
    const q = query;
    if (!q) return;
    const span = q.to - q.from;
    showRange(q.from + span / 4, q.to - span / 4);
  }

  /** The plotted series as shown, for the downloads. */
  function shownSeries(): ExportSeries[] {
    const q = query;
    if (!q) return [];
    return q.xids.map((xid, i) => ({
      label: `${names.get(xid) ?? xid}${units.has(xid) ? ` (${units.get(xid)})` : ''}`,
      color: COLORS[i % COLORS.length]!,
      values: ys[i] ?? [],
    }));
  }

  function shownTitle(q: Query): string {
    const how = q.rollup === 'NONE' ? 'raw values' : `${q.rollup} per ${q.timePeriods ?? 1} ${q.timePeriodType ?? ''}`.trim();
    return `${formatTime(q.from)} – ${formatTime(q.to)}, ${how}`;
  }

  function downloadCsv(): void {
    const q = query;
    if (!q) return;
    download(new Blob([trendCsv(xs, shownSeries())], { type: 'text/csv' }), `trend-${fileStamp(q.from)}.csv`);
  }

  function downloadPng(): void {
    const q = query;
    const canvas = plot?.ctx.canvas;
    if (!q || !canvas) return;
    trendPng(canvas, shownTitle(q), shownSeries())
      .then((png) => download(png, `trend-${fileStamp(q.from)}.png`))
      .catch((err: unknown) => sayError(status, err));
  }

  /** The points shown whose values the user may delete. */
  function deletable(): { xid: string; name: string }[] {
    const may = options.mayDelete;
    return (query?.xids ?? [])
      .filter((xid) => {
        const point = points.get(xid);
        return !may || (point !== undefined && may(point));
      })
      .map((xid) => ({ xid, name: names.get(xid) ?? xid }));
  }

  /** The span that shows the points' whole history: at least a minute, at most a week. */
  async function fitSpanOf(xids: string[]): Promise<number> {
    const now = Date.now();
    let oldest = now;
    const from = new Date(now - FIT_MAX_MS).toISOString();
    await Promise.all(
      xids.map(async (xid) => {
        try {
          const first = await get<PointValue[]>(`/point-values/single/${seg(xid)}?from=${encodeURIComponent(from)}&limit=1`);
          if (first[0]) oldest = Math.min(oldest, first[0].timestamp);
        } catch {
          // the chart reports what is wrong with this XID
        }
      }),
    );
    return Math.min(FIT_MAX_MS, Math.max(FIT_MIN_MS, Math.ceil((now - oldest) * 1.05)));
  }

  function describe(): void {
    const q = query;
    if (!q) return;
    const how = q.rollup === 'NONE' ? 'raw values' : `${q.rollup} per ${q.timePeriods ?? 1} ${q.timePeriodType ?? ''}`.trim();
    chartEl.dataset.rollup = how;
    const liveText = q.span === undefined ? 'fixed range' : live.state === 'open' ? 'live' : `polling every ${POLL_MS / 1000} s (live updates unavailable)`;
    const count = Number(chartEl.dataset.points ?? 0);
    say(status, `${count} ${count === 1 ? 'value' : 'values'}, ${how}, ${liveText}`);
  }

  function onLiveMessage(msg: unknown): void {
    if (typeof msg !== 'object' || msg === null) return;
    const { status: st, payload } = msg as { status?: string; payload?: Record<string, unknown> };
    if (!payload) return;
    if (st === 'ERROR') {
      say(status, `Live updates: ${String(payload.message ?? payload.type)}`, 'error');
      return;
    }
    const q = query;
    const event = payload.event;
    if (!q || q.span === undefined || (event !== 'UPDATE' && event !== 'REGISTERED') || typeof payload.xid !== 'string') return;
    const index = q.xids.indexOf(payload.xid);
    const value = payload.value as PointValue | undefined | null;
    if (index < 0 || !value || typeof value.timestamp !== 'number') return;
    if (q.rollup === 'NONE') {
      if (value.timestamp >= q.from) append(index, value.timestamp, chartValue(value.value));
    } else if (event === 'UPDATE') reloadTimer ??= window.setTimeout(() => void load().finally(() => (reloadTimer = undefined)), ROLLUP_RELOAD_MS);
  }

  function onLiveState(state: LiveState): void {
    if (state === 'open') {
      subscribed.clear();
      syncSubscriptions();
      void load(); // fills what happened while the socket was down
    }
    updatePolling();
    describe();
  }

  function syncSubscriptions(): void {
    const wanted = new Set(query?.span !== undefined ? query.xids : []);
    for (const xid of subscribed) {
      if (!wanted.has(xid) && live.send({ xid, eventTypes: [] })) subscribed.delete(xid);
    }
    for (const xid of wanted) {
      if (!subscribed.has(xid) && live.send({ xid, eventTypes: ['REGISTERED', 'UPDATE'] })) subscribed.add(xid);
    }
  }

  function updatePolling(): void {
    const wantPoll = query?.span !== undefined && live.state !== 'open';
    if (wantPoll && pollTimer === undefined) pollTimer = window.setInterval(() => void load(), POLL_MS);
    if (!wantPoll && pollTimer !== undefined) {
      window.clearInterval(pollTimer);
      pollTimer = undefined;
    }
  }

  /** Looks up the names of points not seen yet (the legend shows names; XIDs when unreadable). */
  async function loadNames(xids: string[]): Promise<void> {
    const missing = xids.filter((x) => !names.has(x));
    if (missing.length === 0) return;
    try {
      const list = await get<List<DataPoint>>(`/data-points?in(xid,(${missing.map(seg).join(',')}))&limit(${missing.length})`);
      for (const p of list.items) remember(p);
    } catch {
      // the chart itself reports what is wrong with these XIDs
    }
  }

  function remember(p: DataPoint): void {
    names.set(p.xid, p.name);
    points.set(p.xid, p);
    if (p.unit) units.set(p.xid, p.unit);
    else units.delete(p.xid);
  }

  /** The XIDs in the form, as they stand (none is fine here). */
  function typedXids(): string[] {
    return [...new Set(xidsInput.value.split(',').map((x) => x.trim()).filter((x) => x !== ''))];
  }

  /** The points in the form as removable chips (names once known). */
  function renderChosen(): void {
    chosen.replaceChildren(
      ...typedXids().map((xid) => {
        const name = names.get(xid) ?? xid;
        return h(
          'li',
          { class: 'chip' },
          h('span', { title: xid }, name),
          h('button', { type: 'button', class: 'chip-remove', 'aria-label': `Remove ${name} from the trend`, onclick: () => removePoint(xid) }, '×'),
        );
      }),
    );
  }

  function setXids(xids: string[]): void {
    xidsInput.value = xids.join(',');
    renderChosen();
  }

  /** A point picked from the search: added to the trend, which is shown (fitted to history when it is the first). */
  function addPoint(p: FoundPoint): void {
    remember(p);
    const xids = typedXids();
    if (!xids.includes(p.xid)) xids.push(p.xid);
    setXids(xids);
    if (!query) (form.elements.namedItem('range') as HTMLSelectElement).value = 'fit';
    syncControls();
    void apply();
  }

  function removePoint(xid: string): void {
    const xids = typedXids().filter((x) => x !== xid);
    setXids(xids);
    if (xids.length > 0) void apply();
    else {
      forget();
      clearChart();
      say(status, '');
    }
  }

  async function apply(): Promise<void> {
    let q: Query;
    try {
      const wanted = readXids();
      // "Fit to history" is fitted to the points asked for now, however the form was filled.
      if (field(form, 'range') === 'fit') fitSpan = await fitSpanOf(wanted);
      q = readForm();
    } catch (err) {
      sayError(status, err);
      return;
    }
    query = q;
    // Nothing of an earlier query stays drawn under this one's names.
    clearChart();
    xs = [];
    ys = q.xids.map(() => []);
    say(status, 'Loading…');
    await loadNames(q.xids);
    renderChosen();
    if (query !== q) return;
    await load(true);
  }

  /**
   * Follows a query whose first load answered (so its points exist and may be read): live values of
   * a "last …" range, polling while the socket is down. REGISTERED brings each point's current value,
   * which covers what changed between the load and the subscription.
   */
  function follow(q: Query): void {
    if (q.span !== undefined) live.start();
    syncSubscriptions();
    updatePolling();
  }

  /** Stops following the query shown (its chart is already clear). */
  function forget(): void {
    query = undefined;
    syncSubscriptions();
    updatePolling();
    window.clearTimeout(reloadTimer);
    reloadTimer = undefined;
  }

  function clearChart(): void {
    window.clearTimeout(redrawTimer);
    redrawTimer = undefined;
    plot?.destroy();
    plot = undefined;
    plotXids = '';
    chartEl.replaceChildren();
    for (const key of ['points', 'first', 'from', 'to', 'xTicks', 'xFont', 'axes', 'rollup']) delete chartEl.dataset[key];
    tools.hidden = true;
    deleter.close();
  }

  function syncControls(): void {
    const custom = field(form, 'range') === 'custom';
    const rollup = field(form, 'rollup');
    for (const el of form.querySelectorAll<HTMLElement>('.custom')) el.hidden = !custom;
    for (const el of form.querySelectorAll<HTMLElement>('.period')) el.hidden = rollup === 'AUTO' || rollup === 'NONE';
  }

  form.addEventListener('change', syncControls);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void apply();
  });
  window.addEventListener('resize', () => plot?.setSize({ width: chartWidth(), height: chartHeight() }));
  xidsInput.addEventListener('input', renderChosen);
  pointSearch(byId<HTMLInputElement>('trend-find'), byId<HTMLUListElement>('trend-suggestions'), {
    onPick: addPoint,
    onError: (err) => sayError(status, err),
    isChosen: (xid) => typedXids().includes(xid),
  });
  byId('trend-earlier').addEventListener('click', () => pan(-0.5));
  byId('trend-later').addEventListener('click', () => pan(0.5));
  byId('trend-zoom-out').addEventListener('click', zoomOut);
  byId('trend-zoom-in').addEventListener('click', zoomIn);
  byId('trend-csv').addEventListener('click', downloadCsv);
  byId('trend-png').addEventListener('click', downloadPng);
  byId('trend-delete-open').addEventListener('click', () => {
    if (query) deleter.open(deletable(), query.from, query.to);
  });
  syncControls();

  return {
    show(xids) {
      setXids(xids);
      (form.elements.namedItem('range') as HTMLSelectElement).value = 'fit';
      syncControls();
      void apply();
    },
    stop() {
      forget();
      live.stop();
      subscribed.clear();
      clearChart();
    },
  };
}
