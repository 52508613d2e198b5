// Issue 30 items 1 and 5 in Chromium, on the real service: where a value stands (the point's text
// renderer, its unit, the time it was taken, unreliable and stale marks; the renderer edited in the
// point editor), finding points in a tree by source, device and tag, and watch lists kept in the
// JSON store; at 1280 and 400 px. Screenshots: test/artifacts/console-values-*.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { projectRoot } from '../src/paths.js';
import { applyFilter, ARTIFACTS, assertPageClean, CHROMIUM, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { createUser, loggedIn } from './helpers/client.js';
import { Device } from './helpers/modbus-device.js';
import { eventually, freePort } from './helpers/wait.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';

interface StoreItem {
  xid: string;
  name: string;
  readPermission: string[];
  editPermission: string[];
  jsonData: { points: string[] };
}

async function noSidewaysScroll(page: Page, what: string): Promise<void> {
  const { scroll, inner } = await page.evaluate<{ scroll: number; inner: number }>('({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })');
  assert.ok(scroll <= inner, `${what}: the page is ${scroll} px wide in a ${inner} px window`);
}

describe('web console: values, finding and watching (Chromium)', function () {
  this.timeout(180_000);
  let s: ConsoleSession;
  let device: Device;
  const pid = process.pid;
  const xids = { supply: `DP_supply_${pid}`, pump: `DP_pump_${pid}`, ret: `DP_return_${pid}`, flow: `DP_flow_${pid}`, mode: `DP_mode_${pid}` };

  before(async function () {
    // Built afresh: a console bundle left from before would not have these views.
    if (existsSync(CHROMIUM)) execFileSync(process.execPath, ['scripts/build-web.mjs'], { cwd: projectRoot, stdio: 'inherit' });
    s = await openConsole(this, 'the console values browser suite');
    const { api } = s;
    const created = async (path: string, body: Record<string, unknown>) => {
      const res = await api.post(path, body);
      assert.equal(res.status, 201, res.text);
    };
    // A running source whose points hold what is written (NO_CHANGE: never stale by age).
    await created(DS, { xid: `DS_house_${pid}`, name: 'Boiler house', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'SECONDS' });
    await created(DP, {
      xid: xids.supply,
      name: 'Supply temperature',
      dataSourceXid: `DS_house_${pid}`,
      deviceName: 'Boiler 1',
      unit: '°C',
      tags: { site: 'north', loop: 'heating' },
      textRenderer: { type: 'ANALOG', format: '0.00' },
      pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' },
    });
    await created(DP, {
      xid: xids.pump,
      name: 'Circulation pump',
      dataSourceXid: `DS_house_${pid}`,
      deviceName: 'Boiler 1',
      tags: { site: 'north' },
      textRenderer: { type: 'BINARY', zeroLabel: 'Stopped', oneLabel: 'Running' },
      pointLocator: { dataType: 'BINARY', changeType: 'NO_CHANGE' },
    });
    await created(DP, {
      xid: xids.mode,
      name: 'Burner mode',
      dataSourceXid: `DS_house_${pid}`,
      deviceName: 'Burner',
      tags: { site: 'south' },
      textRenderer: { type: 'MULTISTATE', values: [{ key: 0, text: 'Off' }, { key: 2, text: 'Auto' }] },
      pointLocator: { dataType: 'MULTISTATE', changeType: 'NO_CHANGE', values: [0, 1, 2] },
    });
    // A source switched off: its point's last value is stale whatever its age.
    await created(DS, { xid: `DS_old_${pid}`, name: 'Old PLC', modelType: 'VIRTUAL', enabled: false });
    await created(DP, { xid: xids.ret, name: 'Return temperature', dataSourceXid: `DS_old_${pid}`, unit: '°C', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
    const now = Date.now();
    const written = await api.post('/rest/latest/point-values', [
      { xid: xids.supply, timestamp: now - 1_000, value: 75.21472877765548 },
      { xid: xids.pump, timestamp: now - 1_000, value: true },
      { xid: xids.mode, timestamp: now - 1_000, value: 2 },
      { xid: xids.ret, timestamp: now - 3_600_000, value: 61.83333 },
    ]);
    assert.equal(written.status, 200, written.text);
    // A Modbus device polled every 200 ms: switched off, its value turns unreliable, then stale.
    device = new Device(await freePort());
    device.setWords(0, [123]);
    await device.start();
    await created(DS, {
      xid: `DS_plc_${pid}`,
      name: 'Pump PLC',
      modelType: 'MODBUS_IP',
      enabled: true,
      host: '127.0.0.1',
      port: device.port,
      timeoutMs: 300,
      retries: 0,
      updatePeriods: 200,
      updatePeriodType: 'MILLISECONDS',
    });
    await created(DP, { xid: xids.flow, name: 'Flow', dataSourceXid: `DS_plc_${pid}`, unit: 'm³/h', pointLocator: { dataType: 'NUMERIC', offset: 0, multiplier: 0.1 } });
    await s.page.reload();
    await s.page.getByRole('button', { name: 'Log out' }).waitFor();
  });

  after(async () => {
    await device?.stop().catch(() => undefined);
    await s?.close();
  });

  afterEach(() => assertPageClean(s));

  const cell = (xid: string) => s.page.locator(`#points-table td[data-live-xid="${xid}"]`);

  it('shows each value through its renderer, with its unit and the time it was taken, and marks unreliable and stale values', async () => {
    const { page } = s;
    await cell(xids.supply).locator('.reading').filter({ hasText: '75.21 °C' }).waitFor();
    assert.match((await cell(xids.supply).locator('time.taken').textContent()) ?? '', /^\d{1,2}:\d{2}:\d{2}/, 'the time of day is shown, not only in a tooltip');
    assert.equal(await cell(xids.supply).locator('.stale-badge').count(), 0, 'a NO_CHANGE point is not stale by age');
    await cell(xids.pump).locator('.reading').filter({ hasText: 'Running' }).waitFor();
    await cell(xids.mode).locator('.reading').filter({ hasText: 'Auto' }).waitFor();
    // PLAIN: 6 significant digits.
    await cell(xids.ret).locator('.reading').filter({ hasText: '61.8333 °C' }).waitFor();
    const retBadge = cell(xids.ret).locator('.stale-badge');
    await retBadge.waitFor();
    assert.equal(await retBadge.getAttribute('title'), 'Stale: its source is disabled');
    assert.match((await cell(xids.ret).locator('time.taken').textContent()) ?? '', /\d{1,2}:\d{2}:\d{2}/);

    await cell(xids.flow).locator('.reading').filter({ hasText: '12.3 m³/h' }).waitFor();
    assert.equal(await cell(xids.flow).locator('.stale-badge').count(), 0, 'a fresh polled value is not stale');
    await device.stop();
    await cell(xids.flow).locator('.unreliable-badge').waitFor();
    // 3 periods of 200 ms, but at least 10 s; the ages are looked at every 5 s.
    const flowStale = cell(xids.flow).locator('.stale-badge');
    await flowStale.waitFor({ timeout: 30_000 });
    assert.match((await flowStale.getAttribute('title')) ?? '', /^Stale: no new value for \d+ s \(polled every 200 ms\)$/);
    assert.equal(await cell(xids.flow).locator('.reading').textContent(), '12.3 m³/h', 'the last value stays, marked');
    await page.locator('#points-table').screenshot({ path: join(ARTIFACTS, 'console-values-1280.png') });
  });

  it('edits the renderer in the point editor: the pattern applies to the shown value, a bad one is named at its field', async () => {
    const { page, api } = s;
    await page.getByRole('button', { name: 'Edit Supply temperature' }).click();
    const pf = page.locator('#point-editor-form');
    await eventually('the stored renderer in the form', async () => ((await pf.getByLabel('Show values as').inputValue()) === 'ANALOG' ? true : undefined));
    assert.deepEqual(await pf.getByLabel('Show values as').locator('option').allTextContents(), ['PLAIN', 'ANALOG'], 'only the renderers of a NUMERIC point');
    await pf.getByLabel('Decimal pattern').fill('0.0.0');
    await pf.getByRole('button', { name: 'Save point' }).click();
    await pf.locator('[data-error-for="textRenderer.format"]').filter({ hasText: /decimal pattern/ }).waitFor();
    await pf.getByLabel('Decimal pattern').fill('#,##0.0');
    await pf.getByRole('button', { name: 'Save point' }).click();
    await page.locator('#point-editor-status').filter({ hasText: /Saved|Updated/ }).waitFor();
    const stored = await api.get<{ textRenderer: unknown }>(`${DP}/${xids.supply}`);
    assert.deepEqual(stored.body.textRenderer, { type: 'ANALOG', format: '#,##0.0' });
    await page.locator('#point-editor-close').click();
    await cell(xids.supply).locator('.reading').filter({ hasText: '75.2 °C' }).waitFor();

    await page.getByRole('button', { name: 'Edit Burner mode' }).click();
    // The editor fills its form once it has read the point's source.
    await eventually('the stored state texts in the form', async () => ((await pf.getByLabel('Text of each state').inputValue()) === '0=Off, 2=Auto' ? true : undefined));
    await pf.getByLabel('Text of each state').fill('0=Off, 1=Manual, 2=Automatic');
    await pf.getByRole('button', { name: 'Save point' }).click();
    await page.locator('#point-editor-status').filter({ hasText: /Saved|Updated/ }).waitFor();
    await page.locator('#point-editor-close').click();
    await cell(xids.mode).locator('.reading').filter({ hasText: 'Automatic' }).waitFor();
  });

  it('finds points in a tree by source and device, and by tag', async () => {
    const { page } = s;
    const finder = page.locator('#finder-panel');
    await finder.locator('summary', { hasText: 'Boiler house' }).click();
    await finder.locator('summary', { hasText: 'Boiler 1' }).click();
    await finder.getByRole('button', { name: 'List all 2 of Boiler 1' }).click();
    const rows = page.locator('#points-table tbody tr');
    await page.locator('#points-status').filter({ hasText: '2 of 2 data points' }).waitFor();
    assert.deepEqual((await rows.locator('td.name').allTextContents()).sort(), ['Circulation pump', 'Supply temperature']);
    assert.match(await page.locator('#points-filter input[name="rql"]').inputValue(), /^eq\(dataSourceXid,DS_house_\d+\)&eq\(deviceName,Boiler%201\)&sort\(name\)$/);
    await finder.getByRole('button', { name: 'Burner mode (Burner)' }).waitFor({ state: 'hidden' });
    await finder.locator('summary', { hasText: 'Burner' }).click();
    await finder.getByRole('button', { name: 'Burner mode (Burner)' }).click();
    await page.locator('#points-status').filter({ hasText: '1 of 1 data points' }).waitFor();

    await finder.getByRole('button', { name: 'By tag' }).click();
    assert.equal(await finder.getByRole('button', { name: 'By tag' }).getAttribute('aria-pressed'), 'true');
    await finder.locator('summary', { hasText: /^site/ }).click();
    await finder.locator('summary', { hasText: /^north/ }).click();
    await finder.getByRole('button', { name: 'List all 2 of north' }).click();
    await page.locator('#points-status').filter({ hasText: '2 of 2 data points' }).waitFor();
    assert.deepEqual((await rows.locator('td.name').allTextContents()).sort(), ['Circulation pump', 'Supply temperature']);
    await finder.screenshot({ path: join(ARTIFACTS, 'console-values-tree-1280.png') });
  });

  it('keeps watch lists in the JSON store: create from the selected points, live values, rename and share, add, remove, delete', async () => {
    const { page, api } = s;
    await applyFilter(page, '#points-filter', 'sort(name)');
    await page.locator('#points-status').filter({ hasText: '5 of 5 data points' }).waitFor();
    await page.getByLabel('Select Supply temperature for the trend').check();
    await page.getByLabel('Select Circulation pump for the trend').check();
    const panel = page.locator('#watch-panel');
    await panel.getByRole('button', { name: 'New watch list' }).click();
    await panel.getByLabel('Watch list name').fill('Boiler watch');
    assert.equal(await panel.getByLabel('Readable by roles').inputValue(), 'user');
    await panel.getByRole('button', { name: 'Save watch list' }).click();
    await page.locator('#watch-status').filter({ hasText: 'Saved watch list Boiler watch' }).waitFor();
    const wcell = (xid: string) => page.locator(`#watch-table td[data-live-xid="${xid}"]`);
    await wcell(xids.supply).locator('.reading').filter({ hasText: '75.2 °C' }).waitFor();
    await wcell(xids.pump).locator('.reading').filter({ hasText: 'Running' }).waitFor();

    const listed = await api.get<{ items: StoreItem[] }>('/rest/latest/json-store?match(xid,watchlist-*)');
    assert.equal(listed.body.items.length, 1);
    const xid = listed.body.items[0]!.xid;
    const item = await api.get<StoreItem>(`/rest/latest/json-store/${xid}`);
    assert.deepEqual(item.body.jsonData, { points: [xids.pump, xids.supply] }, 'in the order of the points list');

    // Rename and share: read by every user, edited by operators only.
    await panel.getByRole('button', { name: 'Rename or share' }).click();
    await panel.getByLabel('Watch list name').fill('Boiler room');
    await panel.getByLabel('Editable by roles').fill('operators');
    await panel.getByRole('button', { name: 'Save watch list' }).click();
    await page.locator('#watch-status').filter({ hasText: 'Saved watch list Boiler room' }).waitFor();
    assert.equal(await page.locator('#watch-select option:checked').textContent(), 'Boiler room');
    await createUser(api, 'watcher', 'watcher-password-1', { permissions: ['user'] });
    const watcher = await loggedIn(s.app.url, 'watcher', 'watcher-password-1');
    const shared = await watcher.get<StoreItem>(`/rest/latest/json-store/${xid}`);
    assert.equal(shared.status, 200, 'a user reads the shared list');
    assert.equal(shared.body.name, 'Boiler room');
    const refused = await watcher.put(`/rest/latest/json-store/${xid}`, { name: 'Mine now', jsonData: { points: [] } });
    assert.equal(refused.status, 403, 'only operators edit it');
    // In the watcher's own console: the shared list with its live values, and no buttons that would be refused.
    const watcherContext = await s.browser.newContext({ viewport: { width: 1280, height: 1000 } });
    try {
      const wp = await watcherContext.newPage();
      wp.setDefaultTimeout(20_000);
      await wp.goto(s.app.url);
      await wp.getByLabel('Username').fill('watcher');
      await wp.getByLabel('Password').fill('watcher-password-1');
      await wp.getByRole('button', { name: 'Log in' }).click();
      await wp.locator(`#watch-table td[data-live-xid="${xids.supply}"] .reading`).filter({ hasText: '75.2 °C' }).waitFor();
      assert.equal(await wp.locator('#watch-select option:checked').textContent(), 'Boiler room');
      for (const name of ['Rename or share', 'Delete watch list', 'Add selected points']) {
        assert.equal(await wp.getByRole('button', { name }).isVisible(), false, `${name} is not offered to a reader`);
      }
      assert.equal(await wp.locator('#watch-table').getByRole('button', { name: /^Remove / }).count(), 0);
      assert.equal(await wp.getByRole('button', { name: 'Trend the watch list' }).isVisible(), true);
    } finally {
      await watcherContext.close();
    }

    // Add the selected points (the return temperature joins; the two already there stay once), remove one.
    await page.getByLabel('Select Return temperature for the trend').check();
    await panel.getByRole('button', { name: 'Add selected points' }).click();
    await page.locator('#watch-status').filter({ hasText: 'Added 1 point(s)' }).waitFor();
    await wcell(xids.ret).locator('.stale-badge').waitFor();
    assert.deepEqual((await api.get<StoreItem>(`/rest/latest/json-store/${xid}`)).body.jsonData, { points: [xids.pump, xids.supply, xids.ret] });
    await panel.getByRole('button', { name: 'Remove Circulation pump from the watch list' }).click();
    await page.locator('#watch-status').filter({ hasText: 'Removed Circulation pump' }).waitFor();
    assert.deepEqual((await api.get<StoreItem>(`/rest/latest/json-store/${xid}`)).body.jsonData, { points: [xids.supply, xids.ret] });
    assert.equal(await page.locator('#watch-table tbody tr').count(), 2);
    await panel.screenshot({ path: join(ARTIFACTS, 'console-values-watch-1280.png') });
  });

  it('works at 400 px: compact point rows with Trend, Set and More on screen, the tree and the watch list fit', async () => {
    const { page } = s;
    await page.setViewportSize({ width: 400, height: 900 });
    try {
      await noSidewaysScroll(page, 'data view');
      const rows = page.locator('#points-table tbody tr');
      await page.locator('#points-status').filter({ hasText: '5 of 5 data points' }).waitFor();
      const heights = await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
      assert.ok(heights.every((h) => h < 110), `compact rows: ${heights.join(', ')} px`);
      const supply = page.locator(`#points-table tr[data-xid="${xids.supply}"]`);
      for (const name of ['Trend of Supply temperature', 'Set Supply temperature', 'More about Supply temperature']) {
        const box = await supply.getByRole('button', { name }).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 400, `${name} is on screen`);
      }
      assert.equal(await supply.getByRole('button', { name: 'Edit Supply temperature' }).isVisible(), false, 'the other actions wait behind More');
      assert.equal(await supply.locator('.reading').textContent(), '75.2 °C');
      assert.equal(await supply.locator('time.taken').isVisible(), true, 'the time is shown at 400 px too');
      await page.screenshot({ path: join(ARTIFACTS, 'console-values-400.png'), fullPage: true });
      await supply.getByRole('button', { name: 'More about Supply temperature' }).click();
      assert.equal(await supply.getByRole('button', { name: 'Edit Supply temperature' }).isVisible(), true);
      const editBox = await supply.getByRole('button', { name: 'Edit Supply temperature' }).boundingBox();
      assert.ok(editBox && editBox.x + editBox.width <= 400, 'Edit is on screen once More is pressed');
      await noSidewaysScroll(page, 'an expanded row');
      await page.locator('#points-table').screenshot({ path: join(ARTIFACTS, 'console-values-400-expanded.png') });
      await page.locator('#finder-panel').screenshot({ path: join(ARTIFACTS, 'console-values-tree-400.png') });
      const watchHeights = await page.locator('#watch-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
      assert.ok(watchHeights.length === 2 && watchHeights.every((h) => h < 100), `compact watch rows: ${watchHeights.join(', ')} px`);
      await page.locator('#watch-panel').screenshot({ path: join(ARTIFACTS, 'console-values-watch-400.png') });
    } finally {
      await page.setViewportSize({ width: 1280, height: 1000 });
    }
  });

  it('deletes a watch list after asking', async () => {
    const { page, api } = s;
    const panel = page.locator('#watch-panel');
    page.once('dialog', (d) => void d.accept());
    await panel.getByRole('button', { name: 'Delete watch list' }).click();
    await page.locator('#watch-status').filter({ hasText: 'Deleted watch list Boiler room' }).waitFor();
    const listed = await api.get<{ items: StoreItem[] }>('/rest/latest/json-store?match(xid,watchlist-*)');
    assert.equal(listed.body.items.length, 0);
    await page.locator('#watch-empty').filter({ hasText: 'No watch lists yet' }).waitFor();
  });
});
