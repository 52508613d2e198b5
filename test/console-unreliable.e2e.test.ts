// The console's points list marks a value its source cannot read now, in Chromium: a real Modbus TCP
// device switched off greys the value with an "unreliable" badge whose title says why and since when;
// switched on, the next value clears it. Screenshot: test/artifacts/console-unreliable.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { projectRoot } from '../src/paths.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { Device } from './helpers/modbus-device.js';
import { freePort } from './helpers/wait.js';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const REQUIRE_CHROMIUM = /^(1|true|yes|on)$/i.test(process.env.TEST_REQUIRE_CHROMIUM ?? '');
const ARTIFACTS = join(projectRoot, 'test', 'artifacts');

describe('web console: unreliable values (Chromium)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let api: ApiClient;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      const why = `Chromium not found at ${CHROMIUM}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH`;
      if (REQUIRE_CHROMIUM) throw new Error(`${why} (TEST_REQUIRE_CHROMIUM is set)`);
      console.log(`  !! skipped: the console unreliable-value browser suite. ${why}.`);
      this.skip();
    }
    // Always built: a console bundle left from before would not show the mark.
    execFileSync(process.execPath, ['scripts/build-web.mjs'], { cwd: projectRoot, stdio: 'inherit' });
    [app, browser] = await Promise.all([startTestApp(), chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })]);
    api = await loggedIn(app.url, 'admin', 'admin');
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    await page.goto(app.url);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill('admin');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await app?.stop();
  });

  it('greys the value of a device switched off with an "unreliable" badge saying why and since when, and clears it with the next value', async () => {
    const device = new Device(await freePort());
    device.setWords(0, [215]);
    await device.start();
    try {
      const source = await api.post('/rest/latest/data-sources', {
        xid: `DS_unrel_${process.pid}`,
        name: 'Boiler PLC',
        modelType: 'MODBUS_IP',
        enabled: true,
        host: '127.0.0.1',
        port: device.port,
        timeoutMs: 300,
        retries: 0,
        updatePeriods: 200,
        updatePeriodType: 'MILLISECONDS',
      });
      assert.equal(source.status, 201, source.text);
      const xid = `DP_unrel_${process.pid}`;
      const point = await api.post('/rest/latest/data-points', {
        xid,
        name: 'Supply',
        dataSourceXid: `DS_unrel_${process.pid}`,
        unit: '°C',
        pointLocator: { dataType: 'NUMERIC', offset: 0, multiplier: 0.1 },
      });
      assert.equal(point.status, 201, point.text);

      const filter = page.locator('#points-filter');
      await filter.getByLabel('RQL filter').fill(`eq(xid,${xid})`);
      await filter.getByRole('button', { name: 'Apply' }).click();
      const cell = page.locator(`td[data-live-xid="${xid}"]`);
      const badge = cell.locator('.unreliable-badge');
      await cell.filter({ hasText: '21.5 °C' }).waitFor();
      await badge.waitFor({ state: 'detached' });

      await device.stop();
      await badge.waitFor();
      assert.equal(await badge.textContent(), 'unreliable');
      assert.match((await badge.getAttribute('title')) ?? '', new RegExp(`^Unreliable since .+: Modbus 127\\.0\\.0\\.1:${device.port}: .* reading HOLDING 0$`));
      assert.match((await cell.getAttribute('title')) ?? '', /^Unreliable since .+\nvalue of .+/);
      assert.match((await cell.textContent()) ?? '', /^21\.5 °C unreliable$/, 'the last value stays, marked');
      assert.equal(await cell.evaluate((el) => el.classList.contains('unreliable')), true);
      const grey = await cell.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).color);
      assert.equal(grey, 'rgb(138, 147, 158)', 'greyed');
      await page.screenshot({ path: join(ARTIFACTS, 'console-unreliable.png'), fullPage: true });

      device.setWords(0, [220]);
      await device.start();
      await cell.filter({ hasText: '22 °C' }).waitFor();
      await badge.waitFor({ state: 'detached' });
      assert.equal(await cell.evaluate((el) => el.classList.contains('unreliable')), false);
      assert.deepEqual(pageErrors, []);
    } finally {
      await device.stop();
    }
  });
});
