// The console's OPC_UA forms in Chromium against a real node-opcua server started here: a source made
// with its endpoint and security fields, a point whose node is picked with the browse picker (open the
// Plant object, use its Temperature), and the value that then arrives. Screenshot:
// test/artifacts/console-opcua-browse.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/paths.js';
import { ARTIFACTS, assertPageClean, CHROMIUM, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { OpcuaTestServer } from './helpers/opcua-server.js';
import { eventually, freePort } from './helpers/wait.js';

interface PointBody {
  xid: string;
  dataSourceXid: string;
  pointLocator: Record<string, unknown>;
}

describe('web console: OPC_UA source and browse picker (Chromium)', function () {
  this.timeout(120_000);
  let s: ConsoleSession;
  let server: OpcuaTestServer;

  before(async function () {
    if (existsSync(CHROMIUM)) execFileSync(process.execPath, ['scripts/build-web.mjs'], { cwd: projectRoot, stdio: 'inherit' });
    s = await openConsole(this, 'the console OPC UA browser suite');
    server = new OpcuaTestServer(await freePort());
    await server.start();
  });

  after(async () => {
    await s?.close();
    await server?.dispose();
  });

  afterEach(() => assertPageClean(s));

  it('makes an OPC_UA source, picks a node by browsing, and stores its values', async () => {
    const { api, page } = s;
    const name = `Plant server ${process.pid}`;
    await page.getByRole('button', { name: 'New data source' }).click();
    const form = page.locator('#source-editor-form');
    await form.getByLabel('Type').selectOption('OPC_UA');
    assert.equal(await form.getByLabel('Update period').isVisible(), false, 'an OPC UA source does not poll');
    assert.equal(await form.getByLabel('Security policy').isVisible(), false, 'no policy with security None');
    await form.getByLabel('Security mode').selectOption('SignAndEncrypt');
    assert.equal(await form.getByLabel('Security policy').isVisible(), true);
    await form.getByLabel('Security mode').selectOption('None');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Endpoint URL').fill(server.endpointUrl);
    await form.getByLabel('Publishing interval (ms)').fill('100');
    await form.getByLabel('Enabled').check();
    await form.getByRole('button', { name: 'Save data source' }).click();
    await page.locator('#source-editor-status').filter({ hasText: `Created data source ${name}` }).waitFor();
    await page.locator('#source-editor-close').click();

    await page.getByRole('button', { name: `Add point to ${name}` }).click();
    const pf = page.locator('#point-editor-form');
    await pf.getByLabel('Name', { exact: true }).fill('Plant temperature');
    await pf.getByRole('button', { name: 'Browse the OPC UA server' }).click();
    await pf.getByRole('button', { name: 'Open 1:Plant' }).click();
    await pf.getByRole('button', { name: 'Use 1:Temperature' }).click();
    assert.equal(await pf.getByLabel('Node id').inputValue(), 'ns=1;s=Temperature');
    await pf.getByLabel('Sampling interval (ms)').fill('50');
    await page.screenshot({ path: join(ARTIFACTS, 'console-opcua-browse.png'), fullPage: true });
    await pf.getByRole('button', { name: 'Save point' }).click();
    await page.locator('#point-editor-status').filter({ hasText: 'Created point Plant temperature' }).waitFor();
    const list = await api.get<{ items: PointBody[] }>(`/rest/latest/data-points?eq(name,Plant%20temperature)`);
    const point = list.body.items[0]!;
    assert.deepEqual(point.pointLocator, { dataType: 'NUMERIC', settable: false, nodeId: 'ns=1;s=Temperature', samplingIntervalMs: 50 });
    await eventually('a stored temperature', async () => {
      const res = await api.get<{ value: number }[]>(`/rest/latest/point-values/latest/${point.xid}`);
      return typeof res.body[0]?.value === 'number' ? true : undefined;
    }, 20_000);
    await page.locator('#point-editor-close').click();
  });
});
