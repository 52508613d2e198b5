// The console's points list marks a value its source cannot read now, in Chromium: a real Modbus TCP
// device switched off greys the value with an "unreliable" badge whose title says why and since when;
// switched on, the next value clears it. Screenshot: test/artifacts/console-unreliable.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/paths.js';
import { applyFilter, ARTIFACTS, assertPageClean, CHROMIUM, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { Device } from './helpers/modbus-device.js';
import { freePort } from './helpers/wait.js';

describe('web console: unreliable values (Chromium)', function () {
  this.timeout(120_000);
  let s: ConsoleSession;

  before(async function () {
    // Built afresh: a console bundle left from before would not show the mark.
    if (existsSync(CHROMIUM)) execFileSync(process.execPath, ['scripts/build-web.mjs'], { cwd: projectRoot, stdio: 'inherit' });
    s = await openConsole(this, 'the console unreliable-value browser suite');
  });

  after(async () => {
    await s?.close();
  });

  afterEach(() => assertPageClean(s));

  it('greys the value of a device switched off with an "unreliable" badge saying why and since when, and clears it with the next value', async () => {
    const { api, page } = s;
    const device = new Device(await freePort());
    device.setWords(0, [215]);
    await device.start();
    try {
      const sourceXid = `DS_unrel_${process.pid}`;
      const source = await api.post('/rest/latest/data-sources', {
        xid: sourceXid,
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
      const point = await api.post('/rest/latest/data-points', { xid, name: 'Supply', dataSourceXid: sourceXid, unit: '°C', pointLocator: { dataType: 'NUMERIC', offset: 0, multiplier: 0.1 } });
      assert.equal(point.status, 201, point.text);

      await applyFilter(page, '#points-filter', `eq(xid,${xid})`);
      const cell = page.locator(`td[data-live-xid="${xid}"]`);
      const badge = cell.locator('.unreliable-badge');
      await cell.locator('.reading').filter({ hasText: '21.5 °C' }).waitFor();
      await badge.waitFor({ state: 'detached' });

      await device.stop();
      await badge.waitFor();
      assert.equal(await badge.textContent(), 'unreliable');
      assert.match((await badge.getAttribute('title')) ?? '', new RegExp(`^Unreliable since .+: Modbus 127\\.0\\.0\\.1:${device.port}: .* reading HOLDING 0$`));
      assert.match((await cell.getAttribute('title')) ?? '', /^Unreliable since .+\nvalue of .+/);
      assert.equal(await cell.locator('.reading').textContent(), '21.5 °C', 'the last value stays, marked');
      assert.equal(await cell.evaluate((el) => el.classList.contains('unreliable')), true);
      const color = await cell.locator('.reading').evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).color);
      assert.equal(color, 'rgb(138, 147, 158)', 'greyed');
      await page.screenshot({ path: join(ARTIFACTS, 'console-unreliable.png'), fullPage: true });

      device.setWords(0, [220]);
      await device.start();
      await cell.locator('.reading').filter({ hasText: '22 °C' }).waitFor();
      await badge.waitFor({ state: 'detached' });
      assert.equal(await cell.evaluate((el) => el.classList.contains('unreliable')), false);
    } finally {
      await device.stop();
    }
  });
});
