// What the console shows is what was asked for, or the error: in Chromium, the Trend form's "Fit to
// history" fits the typed points' history (not the last hour); a trend request that fails (an unknown
// XID, AVERAGE of a BINARY point) leaves no earlier series on the chart and its error on screen, also
// when live values of a listed point keep arriving; the points list shown again (Apply) shows the
// values of points that do not change.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { ApiClient } from './helpers/client.js';
import { ARTIFACTS, assertPageClean, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { eventually } from './helpers/wait.js';

interface Created {
  xid: string;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;

/** The number of values on the chart (trend.ts keeps it in data-points for tests), 0 without a chart. */
const chartPoints = (page: Page) => page.evaluate<number>(`Number(document.getElementById('trend-chart').dataset.points ?? 0)`);
/** The series names in the chart's legend (none without a chart). */
const legendNames = (page: Page) => page.locator('#trend-chart .u-legend .u-series:not(:first-child) .u-label').allTextContents();

async function makePoint(api: ApiClient, name: string, dataType: 'NUMERIC' | 'BINARY'): Promise<string> {
  const source = await api.post<Created>('/rest/latest/data-sources', { name: unique('Virtual '), modelType: 'VIRTUAL', enabled: true });
  assert.equal(source.status, 201, source.text);
  const point = await api.post<Created>('/rest/latest/data-points', {
    name,
    dataSourceXid: source.body.xid,
    pointLocator: { dataType, settable: true, changeType: 'NO_CHANGE' },
    setPermission: ['user'],
  });
  assert.equal(point.status, 201, point.text);
  return point.body.xid;
}

/** `count` values one minute apart, the first `hoursAgo` hours ago. */
async function writeHistory(api: ApiClient, xid: string, hoursAgo: number, count: number, value: (i: number) => unknown): Promise<number> {
  const first = Date.now() - hoursAgo * 3_600_000;
  const res = await api.post('/rest/latest/point-values', Array.from({ length: count }, (_, i) => ({ xid, timestamp: first + i * 60_000, value: value(i) })));
  assert.equal(res.status, 200, res.text);
  return first;
}

describe('web console: trends and the points list show what was asked, or the error (Chromium)', function () {
  this.timeout(120_000);
  let session: ConsoleSession;
  let page: Page;
  let api: ApiClient;

  before(async function () {
    session = await openConsole(this, 'the console trend and points-list suite');
    ({ page, api } = session);
  });

  after(async () => {
    await session?.close();
  });

  afterEach(() => assertPageClean(session));

  async function showTrend(xids: string, range: string, rollup: string): Promise<void> {
    await page.locator('#nav').getByRole('button', { name: 'Trend' }).click();
    const form = page.locator('#trend-form');
    await form.getByLabel('Points (XIDs, comma-separated)').fill(xids);
    await form.getByLabel('Range').selectOption(range);
    await form.getByLabel('Rollup').selectOption(rollup);
    await form.getByRole('button', { name: 'Show trend' }).click();
  }

  const status = () => page.locator('#trend-status');

  it('fits the range to the history of points typed in the form when "Fit to history" is chosen there', async () => {
    const xid = await makePoint(api, 'Old flow', 'NUMERIC');
    // Five hours ago: the last hour holds none of it.
    await writeHistory(api, xid, 5, 30, (i) => 10 + i);
    await showTrend(xid, 'fit', 'NONE');
    await status().filter({ hasText: /^30 values, raw values/ }).waitFor();
    assert.equal(await chartPoints(page), 30);
    assert.deepEqual(await legendNames(page), ['Old flow']);
    await page.locator('#trend-chart').screenshot({ path: join(ARTIFACTS, 'console-trend-fit-form.png') });
  });

  it('clears the chart on a failed request and keeps the error on screen while live values of a listed point arrive', async () => {
    const xid = await makePoint(api, 'Boiler flow', 'NUMERIC');
    await writeHistory(api, xid, 0.5, 20, (i) => 40 + i);
    await showTrend(xid, '1h', 'NONE');
    await status().filter({ hasText: /^20 values, raw values, live/ }).waitFor();
    assert.deepEqual(await legendNames(page), ['Boiler flow']);

    // One XID of two does not exist: the request is refused as a whole.
    const missing = unique('NO_SUCH_POINT_');
    await showTrend(`${xid},${missing}`, '1h', 'NONE');
    await status().filter({ hasText: missing }).waitFor();
    assert.equal(await status().getAttribute('data-kind'), 'error');
    assert.equal(await chartPoints(page), 0, 'no values of the earlier request stay on the chart');
    assert.deepEqual(await legendNames(page), [], 'no series of the earlier request stays on the chart');

    // A new value of the listed point that exists: the error stays, the chart stays empty.
    assert.equal((await api.put(`/rest/latest/point-values/${xid}`, { dataType: 'NUMERIC', value: 99 })).status, 200);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(await status().getAttribute('data-kind'), 'error', `the error stays: ${await status().textContent()}`);
    assert.match((await status().textContent()) ?? '', new RegExp(missing));
    assert.equal(await chartPoints(page), 0);
    await page.locator('#trend-view').screenshot({ path: join(ARTIFACTS, 'console-trend-failed.png') });
  });

  it('shows no earlier series under the new names when AVERAGE of a BINARY point is refused', async () => {
    const numeric = await makePoint(api, 'Supply temperature', 'NUMERIC');
    const binary = await makePoint(api, 'Pump running', 'BINARY');
    await writeHistory(api, numeric, 0.5, 20, (i) => 60 + i);
    await writeHistory(api, binary, 0.5, 20, (i) => i % 2 === 0);
    await showTrend(numeric, '1h', 'AVERAGE');
    await status().filter({ hasText: /values, AVERAGE per 1 MINUTES, live/ }).waitFor();
    assert.ok((await chartPoints(page)) > 0);

    await showTrend(binary, '1h', 'AVERAGE');
    await eventually('the refusal on screen', async () => ((await status().getAttribute('data-kind')) === 'error' ? true : undefined));
    assert.match((await status().textContent()) ?? '', /AVERAGE|BINARY|rollup/i);
    assert.equal(await chartPoints(page), 0, 'the numeric point\'s averages are gone');
    assert.deepEqual(await legendNames(page), [], 'no series named "Pump running" with the other point\'s values');

    // The form asked again with a rollup the point takes draws it.
    await showTrend(binary, '1h', 'NONE');
    await status().filter({ hasText: /^20 values, raw values, live/ }).waitFor();
    assert.deepEqual(await legendNames(page), ['Pump running']);
  });

  it('shows the values of points that do not change after the points filter is applied again', async () => {
    const xid = await makePoint(api, 'Fixed setpoint', 'NUMERIC');
    assert.equal((await api.put(`/rest/latest/point-values/${xid}`, { dataType: 'NUMERIC', value: 21.5 })).status, 200);
    await page.locator('#nav').getByRole('button', { name: 'Sources and points' }).click();
    const filter = page.locator('#points-filter');
    const cell = page.locator(`td[data-live-xid="${xid}"]`);
    for (let round = 1; round <= 3; round++) {
      await filter.getByLabel('RQL filter').fill(`eq(xid,${xid})`);
      await filter.getByRole('button', { name: 'Apply' }).click();
      await page.locator('#points-status').filter({ hasText: /^1 of 1 data points$/ }).waitFor();
      await eventually(`the value after Apply #${round}`, async () => ((await cell.textContent())?.includes('21.5') ? true : undefined), 8_000, 100);
    }
  });
});
