// The alarms view for an operator in Chromium: a chattering limit's 100 CRITICAL alarms selected with
// one tick and acknowledged with one comment (shown on each alarm afterwards), a few picked by hand and
// acknowledged without one, the opt-in beep and tab-title count on a new CRITICAL, and the list at
// 400 px with every message and button on screen. Screenshots: test/artifacts/console-alarms-*.png.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { RaiseInput } from '../src/services/events.js';
import { ARTIFACTS, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { loggedIn, type List } from './helpers/client.js';
import { eventually } from './helpers/wait.js';

interface EventView {
  id: number;
  alarmLevel: string;
  acknowledged: boolean;
  acknowledgedByUsername: string | null;
  comments: { username: string; text: string }[];
}

const TITLE = 'Device-data console';

describe('console alarms: many at once, comments, alerts, 400 px (Chromium)', function () {
  this.timeout(120_000);
  let s: ConsoleSession;
  let page: Page;
  let point: { id: number; xid: string; sourceId: number; sourceXid: string };

  before(async function () {
    s = await openConsole(this, 'the console alarms suite');
    page = s.page;
    const ds = await s.api.post<{ xid: string }>('/rest/latest/data-sources', { name: 'Boiler house', modelType: 'VIRTUAL', enabled: false });
    assert.equal(ds.status, 201, ds.text);
    const dp = await s.api.post<{ xid: string; id: number }>('/rest/latest/data-points', { name: 'Flue gas temperature', dataSourceXid: ds.body.xid, pointLocator: { dataType: 'NUMERIC' } });
    assert.equal(dp.status, 201, dp.text);
    const source = (await s.app.service.services.dataSources.findByXid(ds.body.xid))!;
    point = { id: dp.body.id, xid: dp.body.xid, sourceId: source.id, sourceXid: source.xid };
  });

  after(async () => {
    await s?.close();
  });

  afterEach(() => {
    assert.deepEqual(s.cspViolations, [], 'no Content-Security-Policy violations');
    assert.deepEqual(s.pageErrors, [], 'no uncaught errors in the page');
  });

  /** An alarm of the point, as a detector raises it (straight through the service: no waiting for a limit). */
  function raise(alarmLevel: RaiseInput['alarmLevel'], message: string, activeTimestamp?: number) {
    return s.app.service.services.events.raise({
      alarmLevel, eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', message, referenceId1: point.id, activeTimestamp,
      dataPointId: point.id, dataPointXid: point.xid, dataSourceId: point.sourceId, dataSourceXid: point.sourceXid,
    });
  }

  async function events(rql: string): Promise<EventView[]> {
    const res = await s.api.get<List<EventView>>(`/rest/latest/events?${rql}`);
    assert.equal(res.status, 200, res.text);
    return res.body.items;
  }

  async function showAlarms(): Promise<void> {
    await page.locator('#nav').getByRole('button', { name: /Alarms/ }).click();
    await page.locator('#alarms-refresh').click();
  }

  const rows = () => page.locator('#alarms-table tbody tr');
  const bulk = () => page.locator('#alarms-bulk');

  it('acknowledges 100 CRITICAL alarms of a chattering limit with one tick, one click and one comment, shown on each', async () => {
    const start = Date.now() - 100 * 60_000;
    const critical: number[] = [];
    for (let i = 0; i < 100; i++) critical.push((await raise('CRITICAL', `Flue gas above 250 °C (${i + 1})`, start + i * 60_000)).id);
    assert.equal(new Set(critical).size, 100, 'each raise is its own alarm');
    const warning = (await raise('WARNING', 'Flue gas above 200 °C', start)).id;

    await showAlarms();
    await page.locator('#alarms-filter').getByLabel('Level at least').selectOption('CRITICAL');
    await eventually('the 100 CRITICAL alarms listed', async () => ((await rows().count()) === 100 ? true : undefined));
    assert.equal(await page.locator(`#alarms-table tbody tr[data-event-id="${warning}"]`).count(), 0, 'the WARNING is filtered out');
    assert.equal(await bulk().getByRole('button', { name: 'Acknowledge selected' }).isDisabled(), true, 'nothing selected yet');

    await bulk().getByLabel('Select all shown').check();
    await page.locator('#alarms-selected').filter({ hasText: '100 of 100 selected' }).waitFor();
    assert.equal(await page.locator('#alarms-table input[data-select-alarm]:checked').count(), 100);
    await page.screenshot({ path: join(ARTIFACTS, 'console-alarms-selected-1280.png') });

    const began = Date.now();
    await bulk().getByLabel('Comment for the selected').fill('Burner 2 air damper stuck; limit chatters until it is fixed');
    await bulk().getByRole('button', { name: 'Acknowledge selected' }).click();
    await page.locator('#alarms-bulk-status').filter({ hasText: '100 alarms acknowledged with your comment' }).waitFor({ timeout: 60_000 });
    const took = Date.now() - began;

    const after = await events(`in(id,${critical.join(',')})&limit(200)`);
    assert.equal(after.length, 100);
    for (const e of after) {
      assert.equal(e.acknowledged, true, `alarm ${e.id} acknowledged`);
      assert.equal(e.acknowledgedByUsername, 'admin');
      assert.deepEqual(e.comments.map((c) => c.text), ['Burner 2 air damper stuck; limit chatters until it is fixed'], `alarm ${e.id}'s comment`);
    }
    const [warned] = await events(`eq(id,${warning})`);
    assert.equal(warned!.acknowledged, false, 'the filtered-out WARNING was not selected, so not acknowledged');

    // Still active, so still listed: each shows who acknowledged it and the comment; nothing is left to select.
    await eventually('every row acknowledged', async () => ((await page.locator('#alarms-table tbody tr[data-acknowledged="true"]').count()) === 100 ? true : undefined));
    const first = page.locator(`#alarms-table tbody tr[data-event-id="${critical[99]}"]`);
    await first.filter({ hasText: 'by admin' }).filter({ hasText: 'admin: Burner 2 air damper stuck' }).waitFor();
    assert.equal(await first.getByRole('button', { name: /Acknowledge/ }).count(), 0, 'no Acknowledge button on an acknowledged alarm');
    assert.equal(await page.locator('#alarms-table input[data-select-alarm]').count(), 0);
    assert.equal(await bulk().getByLabel('Select all shown').isDisabled(), true);
    console.log(`      (100 alarms acknowledged with a comment in ${took} ms)`);
    await page.screenshot({ path: join(ARTIFACTS, 'console-alarms-acknowledged-1280.png') });
    await page.setViewportSize({ width: 400, height: 900 });
    try {
      assert.ok(await page.evaluate<boolean>('document.documentElement.scrollWidth <= innerWidth'), 'nothing wider than 400 px');
      await page.screenshot({ path: join(ARTIFACTS, 'console-alarms-acknowledged-400.png') });
    } finally {
      await page.setViewportSize({ width: 1280, height: 1000 });
    }
  });

  it('acknowledges alarms ticked one by one without a comment, leaving the others; Select all shown goes part-ticked', async () => {
    const ids: number[] = [];
    for (const n of [1, 2, 3]) ids.push((await raise('URGENT', `Feed pump ${n} tripped`)).id);
    await showAlarms();
    await page.locator('#alarms-filter').getByLabel('Level at least').selectOption('URGENT');
    await page.locator('#alarms-filter').getByLabel('State').selectOption('unacknowledged');
    for (const id of ids) await page.locator(`#alarms-table tbody tr[data-event-id="${id}"]`).waitFor();
    const all = bulk().getByLabel('Select all shown');
    await page.getByLabel(`Select alarm ${ids[0]}: Feed pump 1 tripped`).check();
    await page.getByLabel(`Select alarm ${ids[2]}: Feed pump 3 tripped`).check();
    assert.equal(await all.evaluate((el) => (el as unknown as { indeterminate: boolean }).indeterminate), true, 'some of the shown are selected');
    assert.equal(await all.isChecked(), false);
    await bulk().getByRole('button', { name: 'Acknowledge selected' }).click();
    await page.locator('#alarms-bulk-status').filter({ hasText: /^2 alarms acknowledged$/ }).waitFor();
    await page.locator(`#alarms-table tbody tr[data-event-id="${ids[0]}"]`).waitFor({ state: 'detached' });
    await page.locator(`#alarms-table tbody tr[data-event-id="${ids[2]}"]`).waitFor({ state: 'detached' });
    const left = page.locator(`#alarms-table tbody tr[data-event-id="${ids[1]}"]`);
    assert.equal(await left.count(), 1, 'the unticked one is still unacknowledged');
    const state = await events(`in(id,${ids.join(',')})&sort(id)`);
    assert.deepEqual(state.map((e) => [e.acknowledged, e.comments.length]), [[true, 0], [false, 0], [true, 0]]);
    assert.equal(await all.evaluate((el) => (el as unknown as { indeterminate: boolean }).indeterminate), false);
    await page.locator('#alarms-selected').filter({ hasText: /^0 of \d+ selected$/ }).waitFor();
  });

  it('beeps and counts unacknowledged CRITICAL alarms in the tab title only when ticked, and keeps the choice', async () => {
    await showAlarms();
    await page.locator('#alarms-filter').getByLabel('Level at least').selectOption('NONE');
    await page.locator('#alarms-filter').getByLabel('State').selectOption('all');
    const alerts = page.locator('#alarm-alerts');
    assert.equal(await alerts.getByLabel('Beep').isChecked(), false, 'off until ticked');
    const quiet = await raise('CRITICAL', 'Drum level low low');
    await page.locator(`#alarms-table tbody tr[data-event-id="${quiet.id}"]`).waitFor();
    assert.equal(await page.title(), TITLE, 'no count while not ticked');
    assert.equal(await alerts.getAttribute('data-beeps'), null, 'no beep while not ticked');

    await alerts.getByLabel('Beep').check();
    await alerts.getByLabel('Count in the tab title').check();
    await eventually('the count in the title', async () => ((await page.title()) === `(1) ${TITLE}` ? true : undefined));
    assert.equal(await alerts.getAttribute('data-beeps'), null, 'ticking does not beep for what is already listed');

    // A new CRITICAL (over the events WebSocket): one beep, the count goes up. A WARNING: neither.
    const loud = await raise('CRITICAL', 'Drum pressure high high');
    await eventually('a beep', async () => ((await alerts.getAttribute('data-beeps')) === '1' ? true : undefined));
    await eventually('2 in the title', async () => ((await page.title()) === `(2) ${TITLE}` ? true : undefined));
    const warning = await raise('WARNING', 'Drum pressure high');
    await page.locator(`#alarms-table tbody tr[data-event-id="${warning.id}"]`).waitFor();
    assert.equal(await page.title(), `(2) ${TITLE}`);
    assert.equal(await alerts.getAttribute('data-beeps'), '1');
    // A storm of them within seconds: one more beep at most, not one each.
    for (let i = 0; i < 5; i++) await raise('CRITICAL', `Drum pressure trip ${i}`);
    await eventually('7 in the title', async () => ((await page.title()) === `(7) ${TITLE}` ? true : undefined));
    assert.equal(await alerts.getAttribute('data-beeps'), '1', 'at most one beep every few seconds');

    // Acknowledged ones leave the count.
    await page.getByRole('button', { name: `Acknowledge alarm ${loud.id}: Drum pressure high high` }).click();
    await eventually('6 in the title', async () => ((await page.title()) === `(6) ${TITLE}` ? true : undefined));

    // The choice outlives the page.
    await page.reload();
    await page.locator('#nav').getByRole('button', { name: /Alarms/ }).click();
    await eventually('the count after a reload', async () => ((await page.title()) === `(6) ${TITLE}` ? true : undefined));
    assert.equal(await page.locator('#alarm-alerts').getByLabel('Beep').isChecked(), true);
    await page.locator('#alarm-alerts').getByLabel('Count in the tab title').uncheck();
    assert.equal(await page.title(), TITLE);
    await page.locator('#alarm-alerts').getByLabel('Beep').uncheck();
  });

  it('names an alarm the service refuses and acknowledges the others of the selection', async () => {
    const password = 'operator-password-1';
    const user = await s.api.post('/rest/latest/users', { username: 'nightshift', password, permissions: ['boiler-operators'] });
    assert.equal(user.status, 201, user.text);
    const pointFor = async (name: string) => {
      const res = await s.api.post<{ xid: string; id: number }>('/rest/latest/data-points', { name, dataSourceXid: point.sourceXid, readPermission: ['boiler-operators'], pointLocator: { dataType: 'NUMERIC' } });
      assert.equal(res.status, 201, res.text);
      return res.body;
    };
    const [kept, withdrawn] = [await pointFor('Economiser outlet'), await pointFor('Stack damper')];
    const alarmOn = async (p: { xid: string; id: number }, message: string) =>
      (await s.app.service.services.events.raise({
        alarmLevel: 'URGENT', eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', message, referenceId1: p.id,
        dataPointId: p.id, dataPointXid: p.xid, dataSourceId: point.sourceId, dataSourceXid: point.sourceXid,
      })).id;
    const a = await alarmOn(kept, 'Economiser outlet above 180 °C');
    const b = await alarmOn(withdrawn, 'Stack damper not open');

    const ctx = await s.browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const errors: string[] = [];
    try {
      const p = await ctx.newPage();
      p.setDefaultTimeout(20_000);
      p.on('pageerror', (err) => errors.push(err.message));
      await p.goto(s.app.url);
      await p.getByLabel('Username').fill('nightshift');
      await p.getByLabel('Password').fill(password);
      await p.getByRole('button', { name: 'Log in' }).click();
      await p.locator('#nav').getByRole('button', { name: /Alarms/ }).click();
      await p.getByLabel(`Select alarm ${a}: Economiser outlet above 180 °C`).check();
      await p.getByLabel(`Select alarm ${b}: Stack damper not open`).check();
      await p.locator('#alarms-selected').filter({ hasText: /^2 of / }).waitFor();

      // Meanwhile the second alarm's point is taken from the operator's role.
      assert.equal((await s.api.patch(`/rest/latest/data-points/${withdrawn.xid}`, { readPermission: ['superadmin'] })).status, 200);
      const operator = await loggedIn(s.app.url, 'nightshift', password);
      await eventually('the operator may no longer read the second alarm', async () => ((await operator.get(`/rest/latest/events/${b}`)).status === 403 ? true : undefined));

      await p.locator('#alarms-bulk').getByLabel('Comment for the selected').fill('Shift handover: checked on site');
      await p.locator('#alarms-bulk').getByRole('button', { name: 'Acknowledge selected' }).click();
      const status = p.locator('#alarms-bulk-status');
      await status.filter({ hasText: `1 of 2 alarms acknowledged; 1 refused (alarm ${b}: ` }).waitFor();
      assert.equal(await status.getAttribute('data-kind'), 'error');
      assert.equal(await p.locator('#alarms-bulk').getByLabel('Comment for the selected').inputValue(), 'Shift handover: checked on site', 'the comment stays for another try');
      await p.screenshot({ path: join(ARTIFACTS, 'console-alarms-refused.png') });
    } finally {
      await ctx.close();
    }
    const [first] = await events(`eq(id,${a})`);
    assert.equal(first!.acknowledged, true);
    assert.deepEqual(first!.comments.map((c) => [c.username, c.text]), [['nightshift', 'Shift handover: checked on site']]);
    const [second] = await events(`eq(id,${b})`);
    assert.equal(second!.acknowledged, false);
    assert.equal(second!.comments.length, 0);
    assert.deepEqual(errors, [], 'no uncaught errors in the operator page');
  });

  it('shows every message, comment and button at 400 px, nothing wider than the screen', async () => {
    const long = (await raise('LIFE_SAFETY', 'Gas detector GD-14 in boiler room 2 above 20 % LEL: ventilation started, burners 1 to 3 locked out automatically')).id;
    const comment = await s.api.post(`/rest/latest/events/${long}/comments`, { text: 'Fire brigade informed at 10:42, area evacuated, waiting for the all clear before anyone goes back in' });
    assert.equal(comment.status, 201, comment.text);
    await showAlarms();
    await page.locator('#alarms-filter').getByLabel('Level at least').selectOption('LIFE_SAFETY');
    const row = page.locator(`#alarms-table tbody tr[data-event-id="${long}"]`);
    await row.waitFor();
    const fits = await page.locator('#alarms-view').evaluate((v) => ({ scroll: v.scrollWidth, client: v.clientWidth, cells: [...v.querySelectorAll('#alarms-table tbody tr:first-child td')].map((td) => Math.round(td.getBoundingClientRect().width)) }));
    assert.ok(fits.scroll <= fits.client, `the alarms table fits 1280 px: ${JSON.stringify(fits)}`);
    const comments = await row.getByRole('button', { name: /^Comments on alarm/ }).boundingBox();
    assert.ok(comments && comments.x + comments.width <= 1280, 'the last button of the row is on screen');
    await page.screenshot({ path: join(ARTIFACTS, 'console-alarms-1280.png') });
    await page.locator('#alarms-filter').getByLabel('Level at least').selectOption('NONE');
    await page.setViewportSize({ width: 400, height: 900 });
    try {
      await row.waitFor();
      assert.ok(await page.evaluate<boolean>('document.documentElement.scrollWidth <= innerWidth'), 'the page is no wider than the screen');
      // Each of these whole on screen: neither clipped nor behind a sideways scroll.
      const whole = async (what: string, box: { x: number; width: number } | null) => {
        assert.ok(box, `${what} is shown`);
        assert.ok(box.x >= 0 && box.x + box.width <= 400, `${what} within 400 px: ${box.x}+${box.width}`);
      };
      await whole('the Acknowledge button', await row.getByRole('button', { name: /^Acknowledge alarm/ }).boundingBox());
      await whole('the Comments button', await row.getByRole('button', { name: /^Comments on alarm/ }).boundingBox());
      await whole('the checkbox', await row.getByRole('checkbox').boundingBox());
      await whole('the bulk button', await bulk().getByRole('button', { name: 'Acknowledge selected' }).boundingBox());
      const message = row.locator('td', { hasText: 'Gas detector GD-14' });
      await whole('the message', await message.boundingBox());
      assert.ok(await message.evaluate((td) => td.scrollWidth <= td.clientWidth && (td.textContent ?? '').endsWith('locked out automatically')), 'the whole message shows');
      assert.ok(await row.locator('.last-comment').evaluate((el) => el.scrollWidth <= el.clientWidth), 'the comment wraps rather than overflowing');
      await page.screenshot({ path: join(ARTIFACTS, 'console-alarms-400.png'), fullPage: false });
      await row.getByRole('checkbox').check();
      await bulk().getByLabel('Comment for the selected').fill('Evacuated');
      await bulk().getByRole('button', { name: 'Acknowledge selected' }).click();
      await page.locator('#alarms-bulk-status').filter({ hasText: '1 alarm acknowledged with your comment' }).waitFor();
      await row.filter({ hasText: 'admin: Evacuated' }).waitFor();
      assert.ok(await page.evaluate<boolean>('document.documentElement.scrollWidth <= innerWidth'));
    } finally {
      await page.setViewportSize({ width: 1280, height: 1000 });
    }
  });
});
