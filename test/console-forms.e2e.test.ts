// What the API accepts, made through the console's forms in Chromium and read back through the API:
// an ALPHANUMERIC_REGEX_STATE detector (its pattern kept as text, even one that looks like a number)
// with its roles, the detector types offered by the point's data type, a virtual INCREMENT point
// that turns back at its ends (roll false) with its default chart rollup, and a computed (META)
// point whose context is picked by point name, its variables put into the script by button, and
// whose run-time warning (a division by zero) the editor then shows, and a SET_POINT handler whose
// target box suggests points by name. Screenshots:
// test/artifacts/console-forms-*.png.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { ApiClient, List } from './helpers/client.js';
import { applyFilter, ARTIFACTS, assertPageClean, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { eventually } from './helpers/wait.js';

interface Point {
  xid: string;
  name: string;
  dataSourceXid: string;
  rollup: string;
  pointLocator: Record<string, unknown>;
  lastWarning: string | null;
}

interface Detector {
  xid: string;
  detectorType: string;
  state: unknown;
  readPermission: string[];
  editPermission: string[];
}

describe('web console: forms for every type the API accepts (Chromium)', function () {
  this.timeout(120_000);
  let session: ConsoleSession;
  let api: ApiClient;
  let page: Page;
  let sourceXid: string;

  before(async function () {
    session = await openConsole(this, 'the console forms suite');
    ({ api, page } = session);
    const ds = await api.post<{ xid: string }>('/rest/latest/data-sources', { name: 'Forms virtual', modelType: 'VIRTUAL', enabled: true });
    assert.equal(ds.status, 201, ds.text);
    sourceXid = ds.body.xid;
  });

  after(async () => {
    await session?.close();
  });

  afterEach(() => assertPageClean(session));

  async function showPoints(rql: string): Promise<void> {
    await applyFilter(page, '#points-filter', rql);
  }

  /** The sources list again (sources made through the API after the page loaded). */
  async function showSources(name: string): Promise<void> {
    await applyFilter(page, '#sources-filter', `eq(name,${name})`);
    await page.getByRole('button', { name: `Add point to ${name}` }).waitFor();
  }

  async function point(body: Record<string, unknown>): Promise<Point> {
    const res = await api.post<Point>('/rest/latest/data-points', { dataSourceXid: sourceXid, setPermission: ['user'], ...body });
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  const options = (select: Locator) => select.locator('option').evaluateAll((os) => os.map((o) => o.getAttribute('value') ?? ''));

  it('creates and edits an ALPHANUMERIC_REGEX_STATE detector, its pattern kept as text', async () => {
    const dp = await point({ name: 'Pump status text', pointLocator: { dataType: 'ALPHANUMERIC', settable: true, changeType: 'NO_CHANGE' } });
    await showPoints(`eq(xid,${dp.xid})`);
    await page.getByRole('button', { name: 'Detectors of Pump status text' }).click();
    const panel = page.locator('#detector-editor-panel');
    await panel.getByRole('button', { name: 'New detector' }).click();
    const form = page.locator('#detector-editor-form');
    assert.deepEqual(await options(form.getByLabel('Type')), ['ALPHANUMERIC_REGEX_STATE', 'NO_UPDATE'], 'the types a text point takes');
    assert.equal(await form.getByLabel('State (true/false or an integer)').isVisible(), false);
    await form.getByLabel('Name', { exact: true }).fill('Pump fault text');
    await form.getByLabel('Alarm level').selectOption('WARNING');
    // A pattern that reads as a number stays a pattern (the true/false-or-integer box would make it 42).
    await form.getByLabel('Pattern (regular expression)').fill('42');
    await form.getByLabel('Read roles').fill('user, operators');
    await form.getByRole('button', { name: 'Save detector' }).click();
    await page.locator('#detector-editor-status').filter({ hasText: 'Created detector Pump fault text' }).waitFor();
    const stored = async () => (await api.get<List<Detector>>(`/rest/latest/event-detectors?eq(dataPointXid,${dp.xid})`)).body.items;
    const [created] = await stored();
    assert.deepEqual([created!.detectorType, created!.state, [...created!.readPermission].sort()], ['ALPHANUMERIC_REGEX_STATE', '42', ['operators', 'user']]);

    // A bad pattern is refused at its field; a good one is saved over it.
    await form.getByLabel('Pattern (regular expression)').fill('FAULT(');
    await form.getByRole('button', { name: 'Save detector' }).click();
    await form.locator('[data-error-for="state"]').filter({ hasText: /./ }).first().waitFor();
    assert.equal(await form.getByLabel('Pattern (regular expression)').isVisible(), true);
    await form.getByLabel('Pattern (regular expression)').fill('FAULT|TRIP');
    await form.getByRole('button', { name: 'Save detector' }).click();
    await page.locator('#detector-editor-status').filter({ hasText: 'Saved detector Pump fault text' }).waitFor();
    assert.equal((await stored())[0]!.state, 'FAULT|TRIP');
    await panel.locator('#detectors-table tbody tr').filter({ hasText: 'state FAULT|TRIP' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'console-forms-regex-detector.png'), fullPage: true });

    // The detector is live: a matching value raises its event.
    assert.equal((await api.put(`/rest/latest/point-values/${dp.xid}`, { dataType: 'ALPHANUMERIC', value: 'MOTOR TRIP' })).status, 200);
    await eventually('the detector event', async () => {
      const res = await api.get<List<{ active: boolean }>>(`/rest/latest/events?eq(dataPointXid,${dp.xid})`);
      return res.body.items.some((e) => e.active) ? true : undefined;
    }, 15_000);
    await panel.locator('#detector-editor-close').click();

    // A numeric point is offered the limit types, not the pattern.
    const numeric = await point({ name: 'Forms numeric', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
    await showPoints(`eq(xid,${numeric.xid})`);
    await page.getByRole('button', { name: 'Detectors of Forms numeric' }).click();
    await panel.getByRole('button', { name: 'New detector' }).click();
    assert.deepEqual(await options(form.getByLabel('Type')), ['HIGH_LIMIT', 'LOW_LIMIT', 'RANGE', 'NO_UPDATE']);
    await panel.locator('#detector-editor-close').click();
  });

  it('creates a virtual INCREMENT point that turns back at its ends, with its default chart rollup', async () => {
    await showSources('Forms virtual');
    await page.getByRole('button', { name: 'Add point to Forms virtual' }).click();
    const pf = page.locator('#point-editor-form');
    await pf.getByLabel('Name', { exact: true }).fill('Forms counter');
    await pf.getByLabel('Change type').selectOption('INCREMENT');
    const roll = pf.getByLabel('Start again after the end (else turn back)');
    assert.equal(await roll.isChecked(), true, 'rolling over is the default');
    await roll.uncheck();
    await pf.getByLabel('Step').fill('5');
    await pf.getByLabel('Default chart rollup').selectOption('AVERAGE');
    await pf.getByRole('button', { name: 'Save point' }).click();
    const status = page.locator('#point-editor-status');
    await status.filter({ hasText: 'Created point Forms counter' }).waitFor();
    const xid = /\(([^)]+)\)$/.exec((await status.textContent()) ?? '')![1]!;
    const saved = (await api.get<Point>(`/rest/latest/data-points/${xid}`)).body;
    assert.deepEqual([saved.pointLocator.changeType, saved.pointLocator.roll, saved.pointLocator.step, saved.rollup], ['INCREMENT', false, 5, 'AVERAGE']);
    // The editor shows what is stored.
    assert.equal(await roll.isChecked(), false);
    assert.equal(await pf.getByLabel('Default chart rollup').inputValue(), 'AVERAGE');
    await page.locator('#point-editor-close').click();
  });

  it("picks a computed point's context by name, puts its variables into the script, and shows its run-time warning", async () => {
    const energy = await point({ name: 'Forms energy', pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
    const hours = await point({ name: 'Forms run hours', pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
    const meta = await api.post<{ xid: string }>('/rest/latest/data-sources', { name: 'Forms computed', modelType: 'META', enabled: true });
    assert.equal(meta.status, 201, meta.text);

    await showSources('Forms computed');
    await page.getByRole('button', { name: 'Add point to Forms computed' }).click();
    const pf = page.locator('#point-editor-form');
    await pf.getByLabel('Name', { exact: true }).fill('Forms energy per hour');
    const picker = page.locator('#point-editor-context');
    await picker.getByLabel('Find a context point').fill('forms energy');
    const choice = picker.getByLabel('Point to add to the context');
    assert.deepEqual(await options(choice), [energy.xid], 'the search narrows the choice by name');
    assert.equal(await picker.getByLabel('Variable name for it').inputValue(), 'forms_energy', 'a variable name from the point name');
    await picker.getByLabel('Variable name for it').fill('energy');
    await picker.getByRole('button', { name: 'Add to context' }).click();
    assert.equal(await picker.getByLabel('Find a context point').inputValue(), '', 'the search starts again');
    const offered = await options(choice);
    assert.ok(offered.includes(hours.xid) && !offered.includes(energy.xid), 'a point in the context is not offered again');
    await choice.selectOption(hours.xid);
    await picker.getByRole('button', { name: 'Add to context' }).click();
    assert.equal(await pf.getByLabel(/^Context/).inputValue(), `energy=${energy.xid}, forms_run_hours=${hours.xid}`);
    await picker.locator('li[data-var="forms_run_hours"]').filter({ hasText: 'Forms run hours' }).waitFor();

    // The script from the variables' buttons and typed operators.
    const script = pf.getByLabel('Script');
    await picker.getByRole('button', { name: 'Insert energy into the script' }).click();
    await script.press('End');
    await script.pressSequentially(' / ');
    await picker.getByRole('button', { name: 'Insert forms_run_hours into the script' }).click();
    assert.equal(await script.inputValue(), 'energy / forms_run_hours');
    await page.locator('#point-editor-panel').screenshot({ path: join(ARTIFACTS, 'console-forms-meta-context.png') });
    await pf.getByRole('button', { name: 'Save point' }).click();
    const status = page.locator('#point-editor-status');
    await status.filter({ hasText: 'Created point Forms energy per hour' }).waitFor();
    const xid = /\(([^)]+)\)$/.exec((await status.textContent()) ?? '')![1]!;
    const saved = (await api.get<Point>(`/rest/latest/data-points/${xid}`)).body;
    assert.equal(saved.pointLocator.script, 'energy / forms_run_hours');
    assert.deepEqual(saved.pointLocator.context, [{ var: 'energy', xid: energy.xid }, { var: 'forms_run_hours', xid: hours.xid }]);
    assert.equal(await page.locator('#point-editor-warning').isVisible(), false, 'no warning yet');

    // Removing a context entry from the list takes it out of the field.
    await picker.getByRole('button', { name: 'Remove forms_run_hours from the context' }).click();
    assert.equal(await pf.getByLabel(/^Context/).inputValue(), `energy=${energy.xid}`);
    await page.locator('#point-editor-close').click();

    // A division by zero at run time is a warning on the point, shown when the editor opens it.
    for (const [p, value] of [[hours, 0], [energy, 12]] as const) {
      assert.equal((await api.put(`/rest/latest/point-values/${p.xid}`, { dataType: 'NUMERIC', value })).status, 200);
    }
    const warning = await eventually('the division by zero warned', async () => {
      const text = (await api.get<Point>(`/rest/latest/data-points/${xid}`)).body.lastWarning;
      return text?.includes('division by zero') ? text : undefined;
    }, 15_000);
    await showPoints(`eq(xid,${xid})`);
    await page.getByRole('button', { name: 'Edit Forms energy per hour', exact: true }).click();
    const line = page.locator('#point-editor-warning');
    await line.filter({ hasText: warning }).waitFor();
    assert.match((await line.textContent()) ?? '', /^Last run-time warning/);
    await page.locator('#point-editor-panel').screenshot({ path: join(ARTIFACTS, 'console-forms-meta-warning.png') });
    await page.locator('#point-editor-close').click();
  });

  it("suggests a SET_POINT handler's points by name and saves the one picked", async () => {
    const valve = await point({ name: 'Forms bypass valve', pointLocator: { dataType: 'BINARY', settable: true, changeType: 'NO_CHANGE' } });
    await page.locator('#nav').getByRole('button', { name: 'Event handlers' }).click();
    await page.locator('#handler-new').click();
    const form = page.locator('#handler-editor-form');
    await form.getByLabel('Handler type').selectOption('SET_POINT');
    await form.getByLabel('Name', { exact: true }).fill('Forms open the bypass');
    const target = form.getByLabel('Target point XID');
    const list = await target.getAttribute('list');
    assert.ok(list, 'the target box has suggestions');
    const suggestion = page.locator(`datalist#${list} option[value="${valve.xid}"]`);
    await eventually('the valve suggested by name', async () => ((await suggestion.textContent({ timeout: 1_000 }).catch(() => ''))?.startsWith('Forms bypass valve') ? true : undefined), 10_000);
    await target.fill(valve.xid);
    await form.locator('select[name="activeAction"]').selectOption('STATIC_VALUE');
    await form.getByLabel('Value when raised').fill('true');
    await form.getByRole('button', { name: 'Save event handler' }).click();
    await page.locator('#handler-editor-status').filter({ hasText: 'Created event handler Forms open the bypass' }).waitFor();
    const saved = await api.get<List<{ targetPointXid: string; activeAction: string; activeValue: unknown }>>('/rest/latest/event-handlers?eq(name,Forms%20open%20the%20bypass)');
    assert.deepEqual(saved.body.items.map((x) => [x.targetPointXid, x.activeAction, x.activeValue]), [[valve.xid, 'STATIC_VALUE', true]]);
    await page.locator('#handler-editor-close').click();
    await page.locator('#nav').getByRole('button', { name: 'Sources and points' }).click();
  });
});
