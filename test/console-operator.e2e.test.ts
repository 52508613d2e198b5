// The console as an operator's tool, in Chromium: make a Modbus TCP source and a FLOAT32 point with
// the forms (a refused port shows its message at the field), see the device's value live in the
// points list and set it; an MQTT source and point whose published values arrive live; event
// detectors made, edited and deleted; an alarm that returned to normal before anyone acknowledged it
// stays listed and filters by state and level; a LINE_PROTOCOL source and point whose written line shows; a lone value drawn as a dot on a trend fitted to the
// point's history, rollup periods on clock boundaries; and no horizontal overflow at 400 px.
// Screenshots go to test/artifacts/console-*.png.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import mqtt from 'mqtt';
import type { Locator, Page } from 'playwright-core';
import type { ApiClient, List } from './helpers/client.js';
import { applyFilter, ARTIFACTS, assertPageClean, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { Device } from './helpers/modbus-device.js';
import { eventually, freePort } from './helpers/wait.js';

const BROKER = 'mqtt://127.0.0.1:1883';
const SERIES_RGB = [0x1f, 0x77, 0xb4];
const PROBE_SERIES = `(() => {
  const canvas = document.querySelector('#trend-chart canvas');
  if (!canvas) return 0;
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let series = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] !== 0 && Math.abs(data[i] - ${SERIES_RGB[0]}) < 24 && Math.abs(data[i + 1] - ${SERIES_RGB[1]}) < 24 && Math.abs(data[i + 2] - ${SERIES_RGB[2]}) < 24) series++;
  }
  return series;
})()`;

interface PointBody {
  xid: string;
  name: string;
  unit: string;
  pointLocator: Record<string, unknown>;
}
interface SourceBody {
  xid: string;
  name: string;
  modelType: string;
  host?: string;
  port?: number;
  unitId?: number;
  timeoutMs?: number;
  retries?: number;
  brokerUrl?: string;
  state: string;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}-${++counter}`;

function floatWords(v: number, order: 'BIG' | 'LITTLE'): number[] {
  const b = Buffer.alloc(4);
  b.writeFloatBE(v);
  const words = [b.readUInt16BE(0), b.readUInt16BE(2)];
  return order === 'BIG' ? words : words.reverse();
}

describe('web console as an operator tool (Chromium)', function () {
  this.timeout(120_000);
  let session: ConsoleSession;
  let api: ApiClient;
  let page: Page;

  before(async function () {
    session = await openConsole(this, 'the console operator browser suite');
    ({ api, page } = session);
  });

  after(async () => {
    await session?.close();
  });

  afterEach(() => assertPageClean(session));

  async function showPoints(rql: string): Promise<void> {
    await applyFilter(page, '#points-filter', rql);
  }

  it('makes a Modbus TCP source and a FLOAT32 point with the forms, shows a refused field at the field, shows the device value live and sets it', async () => {
    const device = new Device(await freePort());
    device.setWords(2, floatWords(21.5, 'LITTLE'));
    await device.start();
    try {
      const name = unique('PLC ');
      await page.getByRole('button', { name: 'New data source' }).click();
      const form = page.locator('#source-editor-form');
      await form.getByLabel('Type').selectOption('MODBUS_IP');
      // The Modbus defaults fill the form. (/^Port/: BACnet's hidden 'Local UDP port' holds the word too, and a
      // field's message joins its label's text.)
      assert.equal(await form.getByLabel(/^Port/).inputValue(), '502');
      assert.equal(await form.getByLabel('Timeout (ms)').inputValue(), '1000');
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByLabel('Host').fill('127.0.0.1');
      await form.getByLabel(/^Port/).fill('70000');
      await form.getByLabel('Update period').fill('200');
      await form.getByLabel('Period unit').selectOption('MILLISECONDS');
      await form.getByRole('button', { name: 'Save data source' }).click();
      const portError = form.locator('[data-error-for="port"]');
      await portError.filter({ hasText: /65535/ }).waitFor();
      await form.getByLabel(/^Port/).fill(String(device.port));
      await form.getByLabel('Retries').fill('1');
      await form.getByRole('button', { name: 'Save data source' }).click();
      const status = page.locator('#source-editor-status');
      await status.filter({ hasText: `Created data source ${name}` }).waitFor();
      assert.equal(await portError.textContent(), '', 'the message is gone once the field is right');
      const xid = /\((DS_[A-Z0-9]+|[^)]+)\)/.exec((await status.textContent()) ?? '')![1]!;
      const stored = (await api.get<SourceBody>(`/rest/latest/data-sources/${xid}`)).body;
      assert.deepEqual([stored.modelType, stored.host, stored.port, stored.unitId, stored.timeoutMs, stored.retries], ['MODBUS_IP', '127.0.0.1', device.port, 1, 1000, 1]);
      await page.screenshot({ path: join(ARTIFACTS, 'console-modbus-form.png'), fullPage: true });
      await page.locator('#source-editor-close').click();

      await page.getByRole('button', { name: `Add point to ${name}` }).click();
      const pf = page.locator('#point-editor-form');
      await pf.getByLabel('Name', { exact: true }).fill('Flow');
      await pf.getByLabel('Unit').fill('m³/h');
      await pf.getByLabel('Offset').fill('2');
      await pf.getByLabel('Encoding').selectOption('FLOAT32');
      await pf.getByLabel('Word order').selectOption('LITTLE');
      await pf.getByLabel('Multiplier').fill('2');
      await pf.getByLabel('Settable').check();
      assert.equal(await pf.getByLabel('Topic').isVisible(), false, 'no MQTT fields on a Modbus point');
      await pf.getByRole('button', { name: 'Save point' }).click();
      const pStatus = page.locator('#point-editor-status');
      await pStatus.filter({ hasText: 'Created point Flow' }).waitFor();
      const points = await api.get<List<PointBody>>(`/rest/latest/data-points?eq(dataSourceXid,${xid})`);
      assert.equal(points.body.total, 1);
      const point = points.body.items[0]!;
      assert.deepEqual(
        { ...point.pointLocator, unit: point.unit },
        { dataType: 'NUMERIC', settable: true, offset: 2, registerType: 'HOLDING', dataEncoding: 'FLOAT32', wordOrder: 'LITTLE', multiplier: 2, additive: 0, unit: 'm³/h' },
      );
      await page.locator('#point-editor-close').click();

      // The live value column: 21.5 × 2 from the device, then what the device says next.
      await showPoints(`eq(xid,${point.xid})`);
      const cell = page.locator(`td[data-live-xid="${point.xid}"]`);
      await cell.filter({ hasText: '43 m³/h' }).waitFor();
      assert.match((await cell.locator('time.age').textContent()) ?? '', /^(just now|\d+ s ago)$/, 'the value says how old it is');
      device.setWords(2, floatWords(10.25, 'LITTLE'));
      await cell.filter({ hasText: '20.5 m³/h' }).waitFor();

      // Set it: the register holds the value / multiplier, and the cell shows it.
      await page.getByRole('button', { name: 'Set Flow' }).click();
      await page.locator('#set-form').getByLabel(/New value/).fill('30');
      await page.locator('#set-form').getByRole('button', { name: 'Set', exact: true }).click();
      await page.locator('#set-status').filter({ hasText: 'Set Flow to 30 m³/h' }).waitFor();
      assert.deepEqual([device.holding.get(2), device.holding.get(3)], floatWords(15, 'LITTLE'));
      await cell.filter({ hasText: '30 m³/h' }).waitFor();
      await page.screenshot({ path: join(ARTIFACTS, 'console-points-live.png'), fullPage: true });
      await page.locator('#set-close').click();
    } finally {
      await device.stop();
    }
  });

  it('sets values with a control fit for each data type, lists the field messages of a refusal, and offers Set only where it may', async () => {
    const source = await api.post<SourceBody>('/rest/latest/data-sources', { name: unique('Virtual '), modelType: 'VIRTUAL', enabled: true });
    assert.equal(source.status, 201, source.text);
    const make = async (name: string, pointLocator: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const res = await api.post<PointBody>('/rest/latest/data-points', { name, dataSourceXid: source.body.xid, pointLocator, setPermission: ['user'], ...extra });
      assert.equal(res.status, 201, res.text);
      return res.body.xid;
    };
    const valve = await make('Valve', { dataType: 'BINARY', settable: true, changeType: 'NO_CHANGE', startValue: true });
    const mode = await make('Mode', { dataType: 'MULTISTATE', settable: true, changeType: 'NO_CHANGE', values: [1, 2, 3], startValue: 1 });
    const setpoint = await make(
      'Setpoint',
      { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE', startValue: 20 },
      { unit: '°C', loggingProperties: { loggingType: 'ALL', discardExtremeValues: true, discardLowLimit: 0, discardHighLimit: 100 } },
    );
    const label = await make('Label', { dataType: 'ALPHANUMERIC', settable: true, changeType: 'NO_CHANGE', startValue: 'a' });
    const reading = await make('Reading', { dataType: 'NUMERIC', settable: false, changeType: 'NO_CHANGE', startValue: 1 });
    await showPoints(`eq(dataSourceXid,${source.body.xid})&sort(name)`);
    await page.getByRole('button', { name: 'Set Valve', exact: true }).waitFor();
    await page.locator(`td[data-live-xid="${reading}"]`).filter({ hasText: 'no value yet' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Set Reading' }).count(), 0, 'no Set on a point that is not settable');

    const form = page.locator('#set-form');
    const latest = async (xid: string) => (await api.get<{ value: unknown }[]>(`/rest/latest/point-values/latest/${xid}`)).body[0]?.value;
    const setTo = async (point: string, fill: (control: Locator) => Promise<unknown>, done: RegExp) => {
      await page.getByRole('button', { name: `Set ${point}`, exact: true }).click();
      await page.locator('#set-point').filter({ hasText: point }).waitFor();
      await fill(form.getByLabel(/New value/));
      await form.getByRole('button', { name: 'Set', exact: true }).click();
      await page.locator('#set-status').filter({ hasText: done }).waitFor();
    };

    await setTo('Valve', (c) => c.selectOption('false'), /^Set Valve to false$/);
    assert.equal(await latest(valve), false);
    await page.locator(`td[data-live-xid="${valve}"] .reading`).filter({ hasText: 'false' }).waitFor();

    assert.deepEqual(await form.getByLabel(/New value/).locator('option').allTextContents(), ['on (true)', 'off (false)']);
    await setTo('Mode', async (c) => assert.deepEqual(await c.locator('option').allTextContents(), ['1', '2', '3']), /^Set Mode to 1$/);
    await setTo('Mode', (c) => c.selectOption('3'), /^Set Mode to 3$/);
    assert.equal(await latest(mode), 3);

    await setTo('Label', (c) => c.fill('batch 42'), /^Set Label to batch 42$/);
    assert.equal(await latest(label), 'batch 42');

    // Refused (422): the field messages are listed by field, not the API's raw text.
    await setTo('Setpoint', (c) => c.fill('1000'), /Setpoint was not set: one problem below/);
    const messages = page.locator('#set-messages li');
    assert.equal(await messages.count(), 1);
    assert.equal(await messages.locator('code').textContent(), 'value');
    assert.match((await messages.textContent()) ?? '', /discard limits/);
    await page.screenshot({ path: join(ARTIFACTS, 'console-set-refused.png'), fullPage: true });
    await form.getByLabel(/New value/).fill('21.5');
    await form.getByRole('button', { name: 'Set', exact: true }).click();
    await page.locator('#set-status').filter({ hasText: 'Set Setpoint to 21.5 °C' }).waitFor();
    assert.equal(await messages.count(), 0, 'the messages are gone once the value is taken');
    assert.equal(await latest(setpoint), 21.5);
    await page.locator(`td[data-live-xid="${setpoint}"] .reading`).filter({ hasText: '21.5 °C' }).waitFor();
    await page.locator('#set-close').click();
  });

  it('makes an MQTT source and a point with topic and JSON path whose published values arrive live', async () => {
    const name = unique('Broker ');
    const topic = `dds-console/${unique('t')}/temp`;
    await page.getByRole('button', { name: 'New data source' }).click();
    const form = page.locator('#source-editor-form');
    await form.getByLabel('Type').selectOption('MQTT_CLIENT');
    assert.equal(await form.getByLabel('Update period').isVisible(), false, 'an MQTT source does not poll');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Broker URL').fill(BROKER);
    await form.getByLabel('QoS').selectOption('1');
    await form.getByRole('button', { name: 'Save data source' }).click();
    await page.locator('#source-editor-status').filter({ hasText: `Created data source ${name}` }).waitFor();
    await page.locator('#source-editor-close').click();

    await page.getByRole('button', { name: `Add point to ${name}` }).click();
    const pf = page.locator('#point-editor-form');
    await pf.getByLabel('Name', { exact: true }).fill('Room temperature');
    await pf.getByLabel('Topic').fill(topic);
    await pf.getByLabel(/JSON path/).fill('$.data.t');
    await pf.getByLabel('Unit').fill('°C');
    await pf.getByRole('button', { name: 'Save point' }).click();
    await page.locator('#point-editor-status').filter({ hasText: 'Created point Room temperature' }).waitFor();
    const list = await api.get<List<PointBody & { dataSourceXid: string }>>(`/rest/latest/data-points?eq(name,Room%20temperature)`);
    const point = list.body.items.find((p) => p.pointLocator.topic === topic)!;
    assert.deepEqual(point.pointLocator, { dataType: 'NUMERIC', settable: false, topic, jsonPath: '$.data.t' });
    const source = (await api.get<SourceBody & { qos: number }>(`/rest/latest/data-sources/${point.dataSourceXid}`)).body;
    assert.deepEqual([source.modelType, source.brokerUrl, source.qos], ['MQTT_CLIENT', BROKER, 1]);
    await page.screenshot({ path: join(ARTIFACTS, 'console-mqtt-point.png'), fullPage: true });
    await page.locator('#point-editor-close').click();

    await showPoints(`eq(xid,${point.xid})`);
    const client = await mqtt.connectAsync(BROKER);
    try {
      const cell = page.locator(`td[data-live-xid="${point.xid}"]`);
      await eventually('the published value in the list', async () => {
        // Published again until it arrives: the source may still be subscribing to the new point's topic.
        await client.publishAsync(topic, JSON.stringify({ data: { t: 22.5 } }));
        const reading = await cell.locator('.reading').textContent({ timeout: 1_000 }).catch(() => undefined);
        return reading === '22.5 °C' ? true : undefined;
      }, 30_000, 250);

      // A message the point cannot read: the row shows a warning marker with its text once listed again.
      await client.publishAsync(topic, 'not json');
      const marker = page.locator(`#points-table tr[data-xid="${point.xid}"] .warning`);
      await eventually('the warning marker', async () => {
        await showPoints(`eq(xid,${point.xid})`);
        return (await marker.count()) > 0 ? true : undefined;
      }, 15_000, 250);
      const warning = (await marker.getAttribute('title')) ?? '';
      assert.ok(warning.includes(topic), `the marker says what went wrong: ${warning}`);
      assert.equal(await cell.locator('.reading').textContent(), '22.5 °C', 'the last good value stays');
      await page.screenshot({ path: join(ARTIFACTS, 'console-points-warning.png'), fullPage: true });
    } finally {
      await client.endAsync();
    }
  });

  it('makes a Sparkplug B source (payloadFormat SPARKPLUG_B) and a point by metric name and device', async () => {
    const name = unique('Plant ');
    await page.getByRole('button', { name: 'New data source' }).click();
    const form = page.locator('#source-editor-form');
    await form.getByLabel('Type').selectOption('MQTT_CLIENT');
    assert.equal(await form.getByLabel(/Sparkplug group id/).isVisible(), false, 'JSON is the default format');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Broker URL').fill(BROKER);
    await form.getByLabel('Payload format').selectOption('SPARKPLUG_B');
    await form.getByLabel(/Sparkplug group id/).fill('Plant1');
    await form.getByLabel(/Edge node id/).fill('Line1');
    await form.getByLabel(/Create a point/).check();
    await form.getByRole('button', { name: 'Save data source' }).click();
    await page.locator('#source-editor-status').filter({ hasText: `Created data source ${name}` }).waitFor();
    await page.locator('#source-editor-close').click();

    await page.getByRole('button', { name: `Add point to ${name}` }).click();
    const pf = page.locator('#point-editor-form');
    assert.equal(await pf.getByLabel('Topic').isVisible(), false, 'a Sparkplug point names a metric, not a topic');
    await pf.getByLabel('Name', { exact: true }).fill('Pump speed');
    await pf.getByLabel('Metric name').fill('Speed');
    await pf.getByLabel(/Device id/).fill('Pump1');
    await pf.getByRole('button', { name: 'Save point' }).click();
    await page.locator('#point-editor-status').filter({ hasText: 'Created point Pump speed' }).waitFor();
    await page.locator('#point-editor-close').click();
    const list = await api.get<List<PointBody & { dataSourceXid: string }>>(`/rest/latest/data-points?eq(name,Pump%20speed)`);
    const point = list.body.items[0]!;
    assert.deepEqual(point.pointLocator, { dataType: 'NUMERIC', settable: false, metricName: 'Speed', deviceId: 'Pump1' });
    const source = (await api.get<Record<string, unknown>>(`/rest/latest/data-sources/${point.dataSourceXid}`)).body;
    assert.deepEqual([source.payloadFormat, source.groupId, source.edgeNodeId, source.createPoints], ['SPARKPLUG_B', 'Plant1', 'Line1', true]);
  });

  it('makes a LINE_PROTOCOL source and a point by measurement, tags and field; a line written to it shows in the list', async () => {
    const name = unique('Gateways ');
    await page.getByRole('button', { name: 'New data source' }).click();
    const form = page.locator('#source-editor-form');
    await form.getByLabel('Type').selectOption('LINE_PROTOCOL');
    assert.equal(await form.getByLabel('Update period').isVisible(), false, 'a pushed source does not poll');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Create a point for each new series').check();
    await form.getByRole('button', { name: 'Save data source' }).click();
    await page.locator('#source-editor-status').filter({ hasText: `Created data source ${name}` }).waitFor();
    await page.locator('#source-editor-close').click();

    await page.getByRole('button', { name: `Add point to ${name}` }).click();
    const pf = page.locator('#point-editor-form');
    await pf.getByLabel('Name', { exact: true }).fill('North temperature');
    await pf.getByLabel('Measurement').fill('weather');
    await pf.getByLabel(/Series tags/).fill('site=north, floor=2');
    await pf.getByLabel('Field').fill('temp');
    await pf.getByLabel('Unit').fill('°C');
    await pf.getByRole('button', { name: 'Save point' }).click();
    await page.locator('#point-editor-status').filter({ hasText: 'Created point North temperature' }).waitFor();
    const list = await api.get<List<PointBody & { dataSourceXid: string }>>(`/rest/latest/data-points?eq(name,North%20temperature)`);
    const point = list.body.items.find((p) => p.pointLocator.measurement === 'weather')!;
    assert.deepEqual(point.pointLocator, { dataType: 'NUMERIC', settable: false, measurement: 'weather', tags: { site: 'north', floor: '2' }, field: 'temp' });
    const source = (await api.get<SourceBody & { createPoints: boolean }>(`/rest/latest/data-sources/${point.dataSourceXid}`)).body;
    assert.deepEqual([source.modelType, source.createPoints], ['LINE_PROTOCOL', true]);
    await page.locator('#point-editor-close').click();

    // A gateway's line (an extra tag is ignored) reaches the point, and the list shows its value.
    const written = await api.request('POST', `/rest/latest/api/v2/write?bucket=${encodeURIComponent(source.xid)}&precision=ms`, {
      rawBody: `weather,site=north,floor=2,rack=7 temp=23.25 ${Date.now()}\n`,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    assert.equal(written.status, 204, written.text);
    await showPoints(`eq(xid,${point.xid})`);
    const reading = page.locator(`td[data-live-xid="${point.xid}"] .reading`);
    await eventually('the written value in the list', async () => ((await reading.textContent({ timeout: 1_000 }).catch(() => undefined)) === '23.25 °C' ? true : undefined), 15_000, 250);
    await page.screenshot({ path: join(ARTIFACTS, 'console-line-protocol.png'), fullPage: true });
  });

  it("creates, edits and deletes a point's event detectors", async () => {
    const dp = await api.post<PointBody>('/rest/latest/data-points', await virtualPoint('Tank level'));
    await showPoints(`eq(xid,${dp.body.xid})`);
    await page.getByRole('button', { name: 'Detectors of Tank level' }).click();
    const panel = page.locator('#detector-editor-panel');
    await panel.locator('#detectors-empty').waitFor();
    await panel.getByRole('button', { name: 'New detector' }).click();
    const form = page.locator('#detector-editor-form');
    await form.getByLabel('Name', { exact: true }).fill('Tank high');
    await form.getByLabel('Type').selectOption('HIGH_LIMIT');
    await form.getByLabel('Alarm level').selectOption('CRITICAL');
    await form.getByLabel('Limit', { exact: true }).fill('90');
    assert.equal(await form.getByLabel('Low', { exact: true }).isVisible(), false, 'RANGE fields hidden for HIGH_LIMIT');
    await form.getByRole('button', { name: 'Save detector' }).click();
    await page.locator('#detector-editor-status').filter({ hasText: 'Created detector Tank high' }).waitFor();
    const row = panel.locator('#detectors-table tbody tr', { hasText: 'Tank high' });
    await row.filter({ hasText: 'limit 90' }).waitFor();
    const detectors = () => api.get<List<{ xid: string; limit: number; alarmLevel: string; detectorType: string }>>(`/rest/latest/event-detectors?eq(dataPointXid,${dp.body.xid})`);
    assert.deepEqual((await detectors()).body.items.map((d) => [d.detectorType, d.alarmLevel, d.limit]), [['HIGH_LIMIT', 'CRITICAL', 90]]);

    // A refused edit shows the message at its field; a good one is saved.
    await row.getByRole('button', { name: /Edit/ }).click();
    await form.getByLabel('Type').selectOption('RANGE');
    await form.getByLabel('Low', { exact: true }).fill('50');
    await form.getByLabel('High', { exact: true }).fill('10');
    await form.getByRole('button', { name: 'Save detector' }).click();
    await page.locator('#detector-editor-status').filter({ hasText: 'Not saved' }).waitFor();
    assert.ok(((await form.locator('.field-error').allTextContents()).join('') + (await page.locator('#detector-editor-messages').textContent())).length > 0, 'the refusal is explained');
    await form.getByLabel('Type').selectOption('HIGH_LIMIT');
    await form.getByLabel('Limit', { exact: true }).fill('95');
    await form.getByRole('button', { name: 'Save detector' }).click();
    await page.locator('#detector-editor-status').filter({ hasText: 'Saved detector Tank high' }).waitFor();
    await row.filter({ hasText: 'limit 95' }).waitFor();
    assert.equal((await detectors()).body.items[0]!.limit, 95);
    await page.screenshot({ path: join(ARTIFACTS, 'console-detectors.png'), fullPage: true });

    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: /Delete/ }).click();
    await panel.locator('#detectors-empty').waitFor();
    assert.equal((await detectors()).body.total, 0);
    await panel.locator('#detector-editor-close').click();
  });

  it('keeps an alarm that returned to normal unacknowledged, filters alarms by state and level, and acknowledges it', async () => {
    const dp = await api.post<PointBody>('/rest/latest/data-points', await virtualPoint('Pressure'));
    const detector = await api.post('/rest/latest/event-detectors', { name: 'Pressure high', dataPointXid: dp.body.xid, detectorType: 'HIGH_LIMIT', alarmLevel: 'WARNING', limit: 10 });
    assert.equal(detector.status, 201, detector.text);
    for (const value of [20, 5]) assert.equal((await api.put(`/rest/latest/point-values/${dp.body.xid}`, { dataType: 'NUMERIC', value })).status, 200);
    const event = await eventually('the event returned to normal', async () => {
      const res = await api.get<List<{ id: number; active: boolean }>>(`/rest/latest/events?eq(dataPointXid,${dp.body.xid})`);
      return res.body.items[0] && !res.body.items[0].active ? res.body.items[0] : undefined;
    });
    await page.locator('#nav').getByRole('button', { name: /Alarms/ }).click();
    await page.locator('#alarms-refresh').click();
    const row = page.locator(`#alarms-table tbody tr[data-event-id="${event.id}"]`);
    await row.filter({ hasText: 'returned to normal' }).waitFor();
    assert.ok(Number(await page.locator('#alarm-count').textContent()) >= 1, 'the badge counts it');
    const filter = page.locator('#alarms-filter');
    await filter.getByLabel('State').selectOption('active');
    await row.waitFor({ state: 'detached' });
    await filter.getByLabel('State').selectOption('returned');
    await row.waitFor();
    await filter.getByLabel('Level at least').selectOption('URGENT');
    await row.waitFor({ state: 'detached' });
    await filter.getByLabel('Level at least').selectOption('WARNING');
    await row.waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'console-alarms.png'), fullPage: true });
    await row.getByRole('button', { name: /Acknowledge/ }).click();
    await row.waitFor({ state: 'detached' });
    await filter.getByLabel('State').selectOption('all');
    assert.equal(await row.count(), 0, 'acknowledged and back to normal: done');
  });

  it('fits a new point\'s trend to its history, draws a lone value as a dot, and starts rollup periods on the clock', async () => {
    const dp = await api.post<PointBody>('/rest/latest/data-points', { ...(await virtualPoint('Lone')), unit: 'kPa' });
    assert.equal((await api.put(`/rest/latest/point-values/${dp.body.xid}`, { dataType: 'NUMERIC', value: 42 })).status, 200);
    await page.locator('#nav').getByRole('button', { name: 'Sources and points' }).click();
    await showPoints(`eq(xid,${dp.body.xid})`);
    await page.getByRole('button', { name: 'Trend of Lone' }).click();
    const trendForm = page.locator('#trend-form');
    await page.locator('#trend-status').filter({ hasText: /^1 value, raw values/ }).waitFor();
    assert.equal(await trendForm.getByLabel('Range').inputValue(), 'fit');
    const dot = await eventually('the lone value drawn', async () => {
      const n = await page.evaluate<number>(PROBE_SERIES);
      return n > 10 ? n : undefined;
    });
    assert.ok(dot > 10);
    // The legend names the unit (the y axis too, drawn on the canvas: see the screenshot).
    await page.locator('#trend-chart .u-over').hover();
    await page.locator('#trend-chart .u-legend .u-series').nth(1).locator('.u-value').filter({ hasText: '42 kPa' }).waitFor();
    await page.locator('#trend-chart').screenshot({ path: join(ARTIFACTS, 'console-trend-dot.png') });

    await trendForm.getByLabel('Range').selectOption('24h');
    await trendForm.getByLabel('Rollup').selectOption('AVERAGE');
    await trendForm.getByLabel('Every').fill('5');
    await trendForm.getByLabel(/^Period/).selectOption('MINUTES');
    await trendForm.getByRole('button', { name: 'Show trend' }).click();
    await page.locator('#trend-status').filter({ hasText: /AVERAGE per 5 MINUTES/ }).waitFor();
    const first = Number(await page.locator('#trend-chart').getAttribute('data-first'));
    assert.ok(first > 0 && first % 300_000 === 0, `the first period starts on a 5-minute boundary: ${new Date(first).toISOString()}`);
  });

  it('works at 400 px wide: nothing overflows the page', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      for (const view of ['Sources and points', 'Trend', /Alarms/, 'Configuration'] as const) {
        await page.locator('#nav').getByRole('button', { name: view }).click();
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        assert.ok(width <= 400, `${String(view)}: the page is ${width} px wide`);
      }
      await page.locator('#nav').getByRole('button', { name: /Alarms/ }).click();
      await page.screenshot({ path: join(ARTIFACTS, 'console-400px-alarms.png'), fullPage: true });
      await page.locator('#nav').getByRole('button', { name: 'Sources and points' }).click();
      await showPoints('sort(name)&limit(6)');
      // The points are cards: each row's value and actions are on screen, nothing to scroll sideways.
      const table = page.locator('#points-table');
      await table.locator('tbody tr').first().waitFor();
      const fits = await table.evaluate((t) => t.scrollWidth <= t.clientWidth && t.getBoundingClientRect().right <= 400);
      assert.ok(fits, 'the points table fits the screen');
      const set = table.getByRole('button', { name: /^Set / }).first();
      const box = await set.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 400, 'a Set button is on screen');
      assert.equal(await table.locator('td.value').first().getAttribute('data-label'), 'Value');
      await page.screenshot({ path: join(ARTIFACTS, 'console-400px.png'), fullPage: true });
      await table.evaluate((t) => t.scrollIntoView());
      await page.screenshot({ path: join(ARTIFACTS, 'console-400px-points.png') });
    } finally {
      await page.setViewportSize({ width: 1280, height: 1000 });
    }
  });

  /** A settable NUMERIC point on a new VIRTUAL source that only holds what is set. */
  async function virtualPoint(name: string): Promise<Record<string, unknown>> {
    const ds = await api.post<SourceBody>('/rest/latest/data-sources', { name: unique('Virtual '), modelType: 'VIRTUAL', enabled: true });
    assert.equal(ds.status, 201, ds.text);
    return { name, dataSourceXid: ds.body.xid, pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' }, setPermission: ['user'] };
  }
});
