// The trend as an operator's tool, in Chromium: points found by name, device or tag from a search box
// (keyboard only), one y axis per unit, zoom by dragging and Earlier / Zoom out that reload the range
// with the rollup sized to the plot (raw values once few enough), x-axis labels that never overlap
// (measured with the axis font), CSV and PNG downloads of what is shown (the CSV compared with the
// API), and values deleted from a point's history after a confirmation naming point, count and range.
// Screenshots at 1280 and 400 px go to test/artifacts/console-trend-tools-*.png.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { ApiClient } from './helpers/client.js';
import { ARTIFACTS, assertPageClean, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { parseCsv } from './helpers/csv.js';
import { eventually } from './helpers/wait.js';

interface Created {
  xid: string;
}
interface Value {
  timestamp: number;
  value: number | null;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;

const chart = (page: Page) => page.locator('#trend-chart');
const dataset = (page: Page, key: string) => page.evaluate<string | undefined>(`document.getElementById('trend-chart').dataset[${JSON.stringify(key)}]`);
const legendNames = (page: Page) => page.locator('#trend-chart .u-legend .u-series:not(:first-child) .u-label').allTextContents();

/** The x-axis labels as drawn: centre (CSS px) and the width of the widest line in the axis font. */
const X_LABELS = `(() => {
  const el = document.getElementById('trend-chart');
  const ticks = JSON.parse(el.dataset.xTicks || '[]');
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = el.dataset.xFont;
  return ticks.map((t) => ({ x: t.x, label: t.label, width: Math.max(...t.label.split('\\n').map((l) => ctx.measureText(l).width)) }));
})()`;

async function assertLabelsApart(page: Page, where: string): Promise<void> {
  const labels = await page.evaluate<{ x: number; label: string; width: number }[]>(X_LABELS);
  assert.ok(labels.length >= 2, `${where}: at least two x labels (${JSON.stringify(labels)})`);
  for (let i = 1; i < labels.length; i++) {
    const a = labels[i - 1]!;
    const b = labels[i]!;
    assert.ok(a.x + a.width / 2 + 4 <= b.x - b.width / 2, `${where}: "${a.label}" at ${a.x} and "${b.label}" at ${b.x} overlap`);
  }
}

async function assertFitsWidth(page: Page, where: string): Promise<void> {
  const { scroll, inner } = await page.evaluate<{ scroll: number; inner: number }>(`({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })`);
  assert.ok(scroll <= inner, `${where}: the page is ${scroll} px wide in a ${inner} px window`);
}

async function makeSource(api: ApiClient): Promise<string> {
  const source = await api.post<Created>('/rest/latest/data-sources', { name: unique('Virtual '), modelType: 'VIRTUAL', enabled: true });
  assert.equal(source.status, 201, source.text);
  return source.body.xid;
}

async function makePoint(api: ApiClient, source: string, fields: { name: string; deviceName?: string; unit?: string; tags?: Record<string, string> }): Promise<string> {
  const point = await api.post<Created>('/rest/latest/data-points', {
    ...fields,
    dataSourceXid: source,
    pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' },
    setPermission: ['user'],
  });
  assert.equal(point.status, 201, point.text);
  return point.body.xid;
}

async function write(api: ApiClient, values: { xid: string; timestamp: number; value: number }[]): Promise<void> {
  for (let i = 0; i < values.length; i += 5_000) {
    const res = await api.post('/rest/latest/point-values', values.slice(i, i + 5_000));
    assert.equal(res.status, 200, res.text);
  }
}

async function rawValues(api: ApiClient, xid: string, from: number, to: number): Promise<Value[]> {
  const res = await api.get<Value[]>(`/rest/latest/point-values/single/${xid}?from=${from}&to=${to}&limit=10000`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

describe('web console: trend tools — search, axes by unit, zoom, downloads, deleting values (Chromium)', function () {
  this.timeout(180_000);
  let session: ConsoleSession;
  let page: Page;
  let api: ApiClient;
  const tag = unique('wing');
  let boiler: string;
  let chiller: string;
  let ret: string;
  const now = Date.now();
  // 3,000 values 2 s apart (100 minutes): more than the plot has pixels, so the range is rolled up.
  const first = now - 100 * 60_000;

  before(async function () {
    session = await openConsole(this, 'the console trend tools suite');
    ({ page, api } = session);
    const source = await makeSource(api);
    boiler = await makePoint(api, source, { name: 'Boiler flow temperature', deviceName: 'Boiler room', unit: '°C', tags: { building: `North ${tag}` } });
    chiller = await makePoint(api, source, { name: 'Chiller pressure', deviceName: unique('Roof '), unit: 'bar' });
    ret = await makePoint(api, source, { name: 'Boiler return, "east" loop', deviceName: 'Boiler room', unit: '°C' });
    const values: { xid: string; timestamp: number; value: number }[] = [];
    for (let i = 0; i < 3_000; i++) {
      values.push({ xid: boiler, timestamp: first + i * 2_000, value: 60 + (i % 100) / 4 });
      if (i % 10 === 0) values.push({ xid: chiller, timestamp: first + i * 2_000 + 500, value: 2 + (i % 7) / 10 });
      if (i % 20 === 0) values.push({ xid: ret, timestamp: first + i * 2_000, value: 40 + (i % 13) });
    }
    await write(api, values);
  });

  after(async () => {
    await session?.close();
  });

  afterEach(() => assertPageClean(session));

  const status = () => page.locator('#trend-status');
  const find = () => page.getByRole('combobox', { name: 'Find points by name, device or tag' });

  it('finds points by tag, device and name with the keyboard and gives each unit its own axis', async () => {
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.locator('#nav').getByRole('button', { name: 'Trend' }).click();
    // By tag value: only the boiler has "North <tag>".
    await find().focus();
    await page.keyboard.type(tag.toUpperCase());
    const suggestions = page.getByRole('listbox', { name: 'Matching points' });
    await suggestions.getByRole('option').first().waitFor();
    assert.deepEqual(await suggestions.getByRole('option').locator('.found-name').allTextContents(), ['Boiler flow temperature']);
    assert.match((await suggestions.getByRole('option').first().textContent()) ?? '', new RegExp(`building: North ${tag}`));
    assert.equal(await find().getAttribute('aria-expanded'), 'true');
    await page.screenshot({ path: join(ARTIFACTS, 'console-trend-tools-search-1280.png') });
    await page.keyboard.press('Enter');
    await status().filter({ hasText: /values, .*live/ }).waitFor();
    assert.deepEqual(await legendNames(page), ['Boiler flow temperature']);
    assert.equal(await page.locator('#trend-form').getByLabel('Points (XIDs, comma-separated)').inputValue(), boiler);
    assert.deepEqual(await page.locator('#trend-chosen .chip > span').allTextContents(), ['Boiler flow temperature']);

    // By device name (unique to the chiller), then by name: "boiler" offers both boilers; ↓ picks the second.
    await find().fill((await api.get<{ deviceName: string }>(`/rest/latest/data-points/${chiller}`)).body.deviceName);
    await suggestions.getByRole('option', { name: /Chiller pressure/ }).waitFor();
    await page.keyboard.press('Enter');
    await eventually('two series', async () => ((await legendNames(page)).length === 2 ? true : undefined));
    await find().fill('boiler');
    await suggestions.getByRole('option', { name: /Boiler return/ }).waitFor();
    assert.match((await suggestions.getByRole('option', { name: /Boiler flow temperature/ }).textContent()) ?? '', /on the trend/);
    assert.doesNotMatch((await suggestions.getByRole('option', { name: /Boiler return/ }).textContent()) ?? '', /on the trend/);
    await find().press('Escape');
    assert.equal(await suggestions.isHidden(), true, 'Escape closes the suggestions');
    // ↓ opens them again on the first (by name: Boiler flow …), ↓ moves to Boiler return.
    await find().press('ArrowDown');
    await suggestions.getByRole('option', { name: /Boiler return/ }).waitFor();
    await find().press('ArrowDown');
    const active = await find().getAttribute('aria-activedescendant');
    assert.match((await page.locator(`#${active}`).textContent()) ?? '', /^Boiler return/);
    assert.equal(await page.locator(`#${active}`).getAttribute('aria-selected'), 'true');
    await find().press('Enter');
    await eventually('three series', async () => ((await legendNames(page)).length === 3 ? true : undefined));
    assert.deepEqual(await legendNames(page), ['Boiler flow temperature', 'Chiller pressure', 'Boiler return, "east" loop']);
    // Two units, two axes: the °C points share one.
    await eventually('axes by unit', async () => ((await dataset(page, 'axes')) === JSON.stringify(['°C', 'bar']) ? true : undefined));
    await status().filter({ hasText: /^\d+ values, AVERAGE per \d+ (SECONDS|MINUTES)/ }).waitFor();
    await assertLabelsApart(page, '1280 px, fitted range');
    await page.screenshot({ path: join(ARTIFACTS, 'console-trend-tools-axes-1280.png'), fullPage: true });

    // A chip removes its point.
    await page.getByRole('button', { name: 'Remove Boiler return, "east" loop from the trend' }).click();
    await eventually('two series again', async () => ((await legendNames(page)).length === 2 ? true : undefined));
    assert.equal(await page.locator('#trend-form').getByLabel('Points (XIDs, comma-separated)').inputValue(), `${boiler},${chiller}`);
  });

  it('zooms into a dragged range down to raw values and pans and zooms out with the rollup following', async () => {
    const over = page.locator('#trend-chart .u-over');
    const box = (await over.boundingBox())!;
    const fromBefore = Number(await dataset(page, 'from'));
    const toBefore = Number(await dataset(page, 'to'));
    // A tenth of the width, in the middle: ~10 minutes of 100, about 300 boiler values: raw.
    await page.mouse.move(box.x + box.width * 0.45, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await status().filter({ hasText: /values, raw values, fixed range/ }).waitFor();
    const from = Number(await dataset(page, 'from'));
    const to = Number(await dataset(page, 'to'));
    assert.ok(from > fromBefore && to < toBefore && to - from < (toBefore - fromBefore) / 5, `zoomed: ${from}..${to} within ${fromBefore}..${toBefore}`);
    assert.equal(await page.locator('#trend-form').getByLabel('Range').inputValue(), 'custom');
    // Every raw value of both points in the range is on the chart.
    const expected = (await rawValues(api, boiler, from, to)).length + (await rawValues(api, chiller, from, to)).length;
    assert.ok(expected > 100);
    await eventually('all raw values drawn', async () => (Number(await dataset(page, 'points')) === expected ? true : undefined));
    await assertLabelsApart(page, '1280 px, zoomed');

    await page.getByRole('button', { name: /^Earlier/ }).click();
    await eventually('moved back by half', async () => (Number(await dataset(page, 'to')) === Math.round(to - (to - from) / 2) ? true : undefined));
    await page.getByRole('button', { name: 'Zoom out' }).click();
    await eventually('twice as long', async () => {
      const span = Number(await dataset(page, 'to')) - Number(await dataset(page, 'from'));
      return Math.abs(span - 2 * (to - from)) < 2 ? true : undefined;
    });
    for (let i = 0; i < 3; i++) {
      const span = Number(await dataset(page, 'to')) - Number(await dataset(page, 'from'));
      await page.getByRole('button', { name: 'Zoom out' }).click();
      await eventually(`zoomed out ${i + 1}`, async () => (Number(await dataset(page, 'to')) - Number(await dataset(page, 'from')) > span * 1.5 ? true : undefined));
    }
    // 16 × ~6 minutes is wider than the history: rolled up again.
    await status().filter({ hasText: /values, AVERAGE per/ }).waitFor();
    await assertLabelsApart(page, '1280 px, zoomed out');
    // Zoom in (the keyboard's way) halves the range around its middle (give or take the start of the
    // first rollup period, which is aligned to the clock).
    const [wideFrom, wideTo] = [Number(await dataset(page, 'from')), Number(await dataset(page, 'to'))];
    const wide = wideTo - wideFrom;
    await page.getByRole('button', { name: 'Zoom in' }).click();
    await eventually('half as long, same middle', async () => {
      const [f, t] = [Number(await dataset(page, 'from')), Number(await dataset(page, 'to'))];
      return Math.abs(t - f - wide / 2) < wide / 20 && Math.abs((f + t) / 2 - (wideFrom + wideTo) / 2) < wide / 20 ? true : undefined;
    });
  });

  it('downloads the plotted series as CSV (ISO times, as the API gives them) and the chart as PNG', async () => {
    // Zoom in again to raw values, the CSV then equals the API's raw values.
    const over = page.locator('#trend-chart .u-over');
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.6, box.y + 40);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.62, box.y + 40, { steps: 4 });
    await page.mouse.up();
    await status().filter({ hasText: /values, raw values, fixed range/ }).waitFor();
    const from = Number(await dataset(page, 'from'));
    const to = Number(await dataset(page, 'to'));

    const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    assert.match(csvDownload.suggestedFilename(), /^trend-.*\.csv$/);
    const [header, ...rows] = parseCsv((await readFile((await csvDownload.path())!, 'utf8')).trimEnd());
    assert.deepEqual(header, ['time', 'Boiler flow temperature (°C)', 'Chiller pressure (bar)']);
    const api = session.api;
    const boilerValues = await rawValues(api, boiler, from, to);
    const chillerValues = await rawValues(api, chiller, from, to);
    const times = [...new Set([...boilerValues, ...chillerValues].map((v) => v.timestamp))].sort((a, b) => a - b);
    assert.deepEqual(
      rows.map((r) => r[0]),
      times.map((t) => new Date(t).toISOString()),
    );
    const cell = (values: Value[], t: number) => {
      const v = values.find((x) => x.timestamp === t);
      return v ? String(v.value) : '';
    };
    assert.deepEqual(
      rows,
      times.map((t) => [new Date(t).toISOString(), cell(boilerValues, t), cell(chillerValues, t)]),
    );

    const [pngDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PNG' }).click()]);
    assert.match(pngDownload.suggestedFilename(), /^trend-.*\.png$/);
    const png = await readFile((await pngDownload.path())!);
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'the PNG signature');
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    const canvas = await page.evaluate<{ width: number; height: number }>(`(() => { const c = document.querySelector('#trend-chart canvas'); return { width: c.width, height: c.height }; })()`);
    assert.equal(width, canvas.width, 'as wide as the chart canvas');
    assert.ok(height > canvas.height + 40, `the title and legend below the chart: ${height} px for a ${canvas.height} px canvas`);
    assert.ok(png.length > 10_000, `a plausible size: ${png.length} bytes`);
    await writeFile(join(ARTIFACTS, 'console-trend-tools-download.png'), png);
  });

  it('deletes a bad value and a range from a point\'s history only after a confirmation, then reloads', async () => {
    // A bad value (a typo: 6500 for 65.00) written into the boiler's history, 30 minutes ago.
    const badAt = first + 70 * 60_000 + 1_000;
    await write(api, [{ xid: boiler, timestamp: badAt, value: 6_500 }]);
    await page.locator('#trend-form').getByLabel('Range').selectOption('fit');
    await page.locator('#trend-form').getByRole('button', { name: 'Show trend' }).click();
    await status().filter({ hasText: /values, AVERAGE per .*live/ }).waitFor();
    await page.getByRole('button', { name: 'Delete values…' }).click();
    const panel = page.locator('#trend-delete-panel');
    await panel.getByLabel('Point to delete values of').selectOption(boiler);
    const local = (ms: number) => page.evaluate<string>(`(() => { const d = new Date(${ms}); const p = (n) => String(n).padStart(2, '0'); return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()); })()`);
    await panel.getByLabel('Delete values from').fill(await local(badAt - 5_000));
    await panel.getByLabel('until (excluded)').fill(await local(badAt + 5_000));
    await panel.getByRole('button', { name: 'List values in this range' }).click();
    const bad = panel.getByRole('button', { name: /^Delete the value 6500 of / });
    await bad.waitFor();
    assert.equal(await panel.locator('#trend-delete-values li').count(), 6, 'the five boiler values in 10 s and the bad one');
    await page.setViewportSize({ width: 400, height: 800 });
    await assertFitsWidth(page, '400 px, values listed for deleting');
    await panel.screenshot({ path: join(ARTIFACTS, 'console-trend-tools-delete-list-400.png') });
    await page.setViewportSize({ width: 1280, height: 1000 });
    await bad.click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    const question = (await dialog.textContent()) ?? '';
    assert.match(question, new RegExp(`Delete 1 value of Boiler flow temperature \\(${boiler}\\) at .*value 6500`));
    await page.setViewportSize({ width: 400, height: 800 });
    await page.screenshot({ path: join(ARTIFACTS, 'console-trend-tools-confirm-400.png') });
    await assertFitsWidth(page, '400 px, confirmation');
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.screenshot({ path: join(ARTIFACTS, 'console-trend-tools-confirm-1280.png') });
    // Cancel first: nothing goes.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('#trend-delete-status').filter({ hasText: 'Nothing deleted' }).waitFor();
    assert.equal((await rawValues(api, boiler, badAt, badAt + 1)).length, 1);
    await bad.click();
    await dialog.getByRole('button', { name: 'Delete the value' }).click();
    await page.locator('#trend-delete-status').filter({ hasText: /^Deleted 1 value of Boiler flow temperature/ }).waitFor();
    assert.deepEqual(await rawValues(api, boiler, badAt, badAt + 1), []);

    // A range: the form's range, counted before asking; the chart loads again without those values.
    const rangeFrom = first + 10 * 60_000;
    const rangeTo = first + 12 * 60_000;
    const expected = (await rawValues(api, boiler, rangeFrom, rangeTo)).length;
    assert.equal(expected, 60);
    await panel.getByLabel('Delete values from').fill(await local(rangeFrom));
    await panel.getByLabel('until (excluded)').fill(await local(rangeTo));
    await panel.getByRole('button', { name: 'Delete values in this range…' }).click();
    await dialog.waitFor();
    assert.match((await dialog.textContent()) ?? '', new RegExp(`Delete 60 values of Boiler flow temperature \\(${boiler}\\) from .* to .*\\?`));
    const loadsBefore = await dataset(page, 'points');
    await dialog.getByRole('button', { name: 'Delete 60 values' }).click();
    await page.locator('#trend-delete-status').filter({ hasText: /^Deleted 60 values of Boiler flow temperature/ }).waitFor();
    assert.deepEqual(await rawValues(api, boiler, rangeFrom, rangeTo), []);
    assert.ok(loadsBefore !== undefined);
    // Nothing in the range any more: the same range again deletes nothing and asks nothing.
    await panel.getByRole('button', { name: 'Delete values in this range…' }).click();
    await page.locator('#trend-delete-status').filter({ hasText: /^No values of Boiler flow temperature/ }).waitFor();
    assert.equal(await dialog.isVisible(), false);
    await page.screenshot({ path: join(ARTIFACTS, 'console-trend-tools-delete-1280.png'), fullPage: true });
  });

  it('fits 400 px: no view wider than the screen, labels apart, suggestions usable', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    await page.locator('#trend-form').getByLabel('Range').selectOption('24h');
    await page.locator('#trend-form').getByRole('button', { name: 'Show trend' }).click();
    await status().filter({ hasText: /values, .*live/ }).waitFor();
    await eventually('the chart resized', async () => ((await chart(page).boundingBox())!.width <= 400 ? true : undefined));
    await assertLabelsApart(page, '400 px, 24 h');
    await assertFitsWidth(page, '400 px, trend');
    await page.screenshot({ path: join(ARTIFACTS, 'console-trend-tools-400.png'), fullPage: true });
    await find().fill('boiler');
    await page.getByRole('listbox', { name: 'Matching points' }).getByRole('option').first().waitFor();
    await assertFitsWidth(page, '400 px, suggestions open');
    await page.screenshot({ path: join(ARTIFACTS, 'console-trend-tools-search-400.png') });
    await find().press('Escape');
    await page.setViewportSize({ width: 1280, height: 1000 });
  });
});
