// The console's BACNET_IP forms in Chromium: a source made with the form against a simulated
// device (scripts/bacnet-device.ts), a point picked with "Discover BACnet objects" (the locator
// filled from the device's object list), and the device's value shown in the points list.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { exampleDevice, type BacnetDevice } from '../scripts/bacnet-device.js';
import type { ApiClient, List } from './helpers/client.js';
import { applyFilter, ARTIFACTS, assertPageClean, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { eventually, freeUdpPort } from './helpers/wait.js';

describe('web console: BACNET_IP source and discovery picker (Chromium)', function () {
  this.timeout(120_000);
  let session: ConsoleSession;
  let api: ApiClient;
  let page: Page;
  let device: BacnetDevice;

  before(async function () {
    session = await openConsole(this, 'the console BACnet browser suite');
    ({ api, page } = session);
    device = exampleDevice(await freeUdpPort(), 4321);
    await device.start();
  });

  after(async () => {
    device?.stop();
    await session?.close();
  });

  afterEach(() => assertPageClean(session));

  it('makes a BACNET_IP source with the form, picks a discovered object for a point and shows its value', async () => {
    const name = `AHU ${process.pid}`;
    await page.getByRole('button', { name: 'New data source' }).click();
    const form = page.locator('#source-editor-form');
    await form.getByLabel('Type').selectOption('BACNET_IP');
    assert.equal(await form.getByLabel('Local UDP port').inputValue(), '47808', 'the BACnet defaults fill the form');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Device instance').fill('4321');
    await form.getByLabel('Broadcast address (Who-Is)').fill(`127.0.0.1:${device.port}`);
    await form.getByLabel('Local UDP port').fill(String(await freeUdpPort()));
    await form.getByLabel('Update period').fill('1');
    await form.getByLabel('Enabled').check();
    await form.getByRole('button', { name: 'Save data source' }).click();
    await page.locator('#source-editor-status').filter({ hasText: `Created data source ${name}` }).waitFor();
    await page.locator('#source-editor-close').click();

    await page.getByRole('button', { name: `Add point to ${name}` }).click();
    const pf = page.locator('#point-editor-form');
    await pf.getByRole('button', { name: 'Discover BACnet objects' }).click();
    const picker = pf.getByLabel('Discovered BACnet objects');
    await picker.locator('option', { hasText: 'ANALOG_VALUE 1 (Zone temperature)' }).waitFor({ state: 'attached' });
    await picker.selectOption({ label: '4321 Simulated device 4321: ANALOG_VALUE 1 (Zone temperature)' });
    assert.equal(await pf.getByLabel('Name', { exact: true }).inputValue(), 'Zone temperature');
    assert.equal(await pf.getByLabel('Object type').inputValue(), 'ANALOG_VALUE');
    await pf.getByRole('button', { name: 'Save point' }).click();
    await page.locator('#point-editor-status').filter({ hasText: 'Created point Zone temperature' }).waitFor();
    const list = await api.get<List<{ xid: string; dataSourceName: string; pointLocator: Record<string, unknown> }>>('/rest/latest/data-points?eq(name,Zone%20temperature)');
    const point = list.body.items.find((p) => p.dataSourceName === name)!;
    assert.deepEqual(point.pointLocator, { dataType: 'NUMERIC', settable: false, objectType: 'ANALOG_VALUE', objectInstance: 1, property: 'PRESENT_VALUE', writePriority: 16 });
    await page.locator('#point-editor-close').click();

    await applyFilter(page, '#points-filter', `eq(xid,${point.xid})`);
    const reading = page.locator(`td[data-live-xid="${point.xid}"] .reading`);
    let shown: string | null | undefined;
    await eventually(
      'the device value in the list',
      async () => {
        shown = await reading.textContent({ timeout: 1_000 }).catch(() => undefined);
        return shown === '21.5' ? true : undefined;
      },
      15_000,
      250,
    ).catch((err: unknown) => {
      return page.screenshot({ path: join(ARTIFACTS, "console-bacnet-failed.png"), fullPage: true }).then(() => {
        throw new Error(`${String(err)}: shown ${JSON.stringify(shown)}`);
      });
    });
    await page.screenshot({ path: join(ARTIFACTS, 'console-bacnet.png'), fullPage: true });
  });
});
