// The console shows each user only what it may do, in Chromium: an admin sees every action; a plain
// user made through the API (role "operators") sees New, Edit, Delete and Add point only where the
// service would let it edit, and Set only where it may set, which the API confirms request by request.
// The Users view (superadmin) lists, filters, creates, edits, sets a password, revokes tokens and
// deletes; My account changes one's own password (then the login takes only the new one) and makes and
// revokes API tokens. No view is wider than the screen at 400 px. Screenshots: test/artifacts/console-users-*.png.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { ApiClient, type List } from './helpers/client.js';
import { ARTIFACTS, assertPageClean, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { eventually } from './helpers/wait.js';

const OLGA = { username: 'olga', password: 'olga-first-1', roles: ['operators'] };

interface PointBody {
  xid: string;
  name: string;
  [field: string]: unknown;
}

describe('web console: permissions, users and own account (Chromium)', function () {
  this.timeout(120_000);
  let session: ConsoleSession;
  let admin: ApiClient;
  let page: Page;
  const contexts: BrowserContext[] = [];

  before(async function () {
    session = await openConsole(this, 'the console users browser suite');
    ({ api: admin, page } = session);
    const created = (res: { status: number; text: string }) => assert.equal(res.status, 201, res.text);
    // Plant: only superadmins edit it or set its points, unless a point says otherwise.
    created(await admin.post('/rest/latest/data-sources', { xid: 'plant', name: 'Plant', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' }));
    // The operators' rig: its editors edit every point of it.
    created(
      await admin.post('/rest/latest/data-sources', {
        xid: 'rig',
        name: 'Operators rig',
        modelType: 'VIRTUAL',
        enabled: true,
        updatePeriods: 1,
        updatePeriodType: 'HOURS',
        editPermission: ['operators'],
      }),
    );
    const point = (xid: string, name: string, source: string, extra: Record<string, unknown>) =>
      admin.post('/rest/latest/data-points', { xid, name, dataSourceXid: source, pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE', settable: true, startValue: 1 }, ...extra });
    created(await point('p-locked', 'Locked temperature', 'plant', {}));
    created(await point('p-setpoint', 'Operator setpoint', 'plant', { setPermission: ['operators'] }));
    created(await point('p-tuned', 'Tuned flow', 'plant', { editPermission: ['operators'] }));
    created(await point('p-rig', 'Rig pressure', 'rig', {}));
    created(await admin.post('/rest/latest/users', { username: OLGA.username, password: OLGA.password, permissions: OLGA.roles, name: 'Olga Operator' }));
  });

  after(async () => {
    for (const ctx of contexts) await ctx.close();
    await session?.close();
  });

  afterEach(() => assertPageClean(session));

  /** A page of its own (cookies apart from the admin's page), logged in through the login form. */
  async function pageAs(username: string, password: string): Promise<Page> {
    const ctx = await session.browser.newContext({ viewport: { width: 1280, height: 1000 }, timezoneId: 'Europe/Berlin' });
    contexts.push(ctx);
    const p = await ctx.newPage();
    p.setDefaultTimeout(20_000);
    p.on('pageerror', (err) => session.pageErrors.push(err.message));
    p.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) session.cspViolations.push(msg.text());
    });
    p.on('dialog', (d) => void d.accept());
    await p.goto(session.app.url);
    await logIn(p, username, password);
    await p.getByRole('button', { name: 'Log out' }).waitFor();
    return p;
  }

  async function logIn(p: Page, username: string, password: string): Promise<void> {
    const form = p.locator('#login-form');
    await form.getByLabel('Username').fill(username);
    await form.getByLabel('Password').fill(password);
    await form.getByRole('button', { name: 'Log in' }).click();
  }

  async function apiAs(username: string, password: string): Promise<ApiClient> {
    const client = new ApiClient(session.app.url);
    await client.login(username, password);
    return client;
  }

  const pointRow = (p: Page, xid: string) => p.locator(`#points-table tr[data-xid="${xid}"]`);
  const sourceRow = (p: Page, xid: string) => p.locator(`#sources-table tr[data-xid="${xid}"]`);
  /** The names of a row's buttons, as a screen reader reads them. */
  async function buttons(row: Locator): Promise<string[]> {
    await row.waitFor();
    return (await row.getByRole('button').allTextContents()).map((t) => t.trim());
  }
  const firstWords = (names: string[]) => names.map((n) => n.split(' ')[0]);

  async function noWiderThanScreen(p: Page, what: string): Promise<void> {
    const [scrollWidth, innerWidth] = await p.evaluate<[number, number]>('[document.documentElement.scrollWidth, window.innerWidth]');
    assert.ok(scrollWidth <= innerWidth, `${what}: page ${scrollWidth} px wide at ${innerWidth} px`);
  }

  async function screenshots(p: Page, name: string): Promise<void> {
    await p.setViewportSize({ width: 1280, height: 1000 });
    await p.screenshot({ path: join(ARTIFACTS, `console-users-${name}-1280.png`), fullPage: true });
    await p.setViewportSize({ width: 400, height: 900 });
    await noWiderThanScreen(p, name);
    await p.screenshot({ path: join(ARTIFACTS, `console-users-${name}-400.png`), fullPage: true });
    await p.setViewportSize({ width: 1280, height: 1000 });
  }

  it('shows an admin every action: New, Edit, Delete, Add point, Set, Users', async () => {
    await page.reload();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'New data source' }).isVisible(), true);
    assert.equal(await page.getByRole('button', { name: 'New data point' }).isVisible(), true);
    assert.deepEqual(firstWords(await buttons(sourceRow(page, 'plant'))), ['Points', 'Disable', 'Edit', 'Delete', 'Add']);
    assert.deepEqual(firstWords(await buttons(pointRow(page, 'p-locked'))), ['Trend', 'Settings', 'Edit', 'Detectors', 'Delete', 'Set']);
    assert.equal(await page.getByRole('button', { name: 'Users', exact: true }).isVisible(), true);
  });

  it('shows a plain user only what it may do, and the API agrees with every button shown or left out', async () => {
    const p = await pageAs(OLGA.username, OLGA.password);
    await pointRow(p, 'p-rig').waitFor();
    assert.equal(await p.getByRole('button', { name: 'New data source' }).isVisible(), false, 'only a superadmin creates sources');
    assert.equal(await p.getByRole('button', { name: 'New data point' }).isVisible(), true, 'olga may add points to the rig');
    assert.equal(await p.getByRole('button', { name: 'Users', exact: true }).isVisible(), false);
    assert.equal(await p.getByRole('button', { name: 'Configuration' }).isVisible(), false);
    assert.equal(await p.getByRole('button', { name: 'My account' }).isVisible(), true);

    assert.deepEqual(firstWords(await buttons(sourceRow(p, 'plant'))), ['Points']);
    assert.deepEqual(firstWords(await buttons(sourceRow(p, 'rig'))), ['Points', 'Disable', 'Edit', 'Delete', 'Add']);
    const shown = {
      'p-locked': firstWords(await buttons(pointRow(p, 'p-locked'))),
      'p-setpoint': firstWords(await buttons(pointRow(p, 'p-setpoint'))),
      'p-tuned': firstWords(await buttons(pointRow(p, 'p-tuned'))),
      'p-rig': firstWords(await buttons(pointRow(p, 'p-rig'))),
    };
    assert.deepEqual(shown, {
      'p-locked': ['Trend', 'Settings', 'Detectors'],
      'p-setpoint': ['Trend', 'Settings', 'Detectors', 'Set'],
      'p-tuned': ['Trend', 'Settings', 'Edit', 'Detectors', 'Delete'],
      'p-rig': ['Trend', 'Settings', 'Edit', 'Detectors', 'Delete'],
    });

    // The service's own answer for each: an edit (the stored point PUT back) and a set.
    const olga = await apiAs(OLGA.username, OLGA.password);
    for (const [xid, names] of Object.entries(shown)) {
      const stored = await olga.get<PointBody>(`/rest/latest/data-points/${xid}`);
      assert.equal(stored.status, 200, stored.text);
      // Sent back as the console sends it: without the read-only fields.
      const body = Object.fromEntries(Object.entries(stored.body).filter(([k]) => !['id', 'dataSourceName', 'dataSourceType'].includes(k)));
      const edit = await olga.put(`/rest/latest/data-points/${xid}`, body);
      assert.equal(edit.status, names.includes('Edit') ? 200 : 403, `edit ${xid}: ${edit.text}`);
      const set = await olga.put(`/rest/latest/point-values/${xid}`, { dataType: 'NUMERIC', value: 7 });
      assert.equal(set.status, names.includes('Set') ? 200 : 403, `set ${xid}: ${set.text}`);
    }
    const edit = await olga.put('/rest/latest/data-sources/plant', (await olga.get('/rest/latest/data-sources/plant')).body);
    assert.equal(edit.status, 403, 'the plant source is not hers to edit');

    // A point she may not edit: its settings read only, no new detector.
    await p.getByRole('button', { name: 'Settings of Locked temperature' }).click();
    await p.locator('#settings-status').filter({ hasText: 'Read only' }).waitFor();
    assert.equal(await p.getByRole('button', { name: 'Save settings' }).isVisible(), false);
    assert.equal(await p.locator('#settings-form').getByLabel('Logging type').isDisabled(), true);
    await p.locator('#settings-close').click();
    await p.getByRole('button', { name: 'Detectors of Locked temperature' }).click();
    await p.locator('#detectors-title').filter({ hasText: 'Locked temperature' }).waitFor();
    assert.equal(await p.getByRole('button', { name: 'New detector' }).isVisible(), false);
    await p.getByRole('button', { name: 'Detectors of Tuned flow' }).click();
    await p.locator('#detectors-title').filter({ hasText: 'Tuned flow' }).waitFor();
    assert.equal(await p.getByRole('button', { name: 'New detector' }).isVisible(), true);
    await p.locator('#detector-editor-close').click();

    // The new point's source choice holds only the rig.
    await p.getByRole('button', { name: 'New data point' }).click();
    // The editor opens once it has read the sources.
    await p.locator('#point-editor-title').filter({ hasText: 'New data point' }).waitFor();
    const options = await eventually('the source choices', async () => {
      const values = await p.locator('#point-editor-form select[name="dataSourceXid"] option').evaluateAll((els) => els.map((e) => e.getAttribute('value')));
      return values.length > 0 ? values : undefined;
    });
    assert.deepEqual(options, ['rig']);
    await p.locator('#point-editor-close').click();

    // Set where she may: the service writes it.
    await p.getByRole('button', { name: 'Set Operator setpoint', exact: true }).click();
    await p.locator('#set-form').getByLabel(/New value/).fill('42');
    await p.locator('#set-form').getByRole('button', { name: 'Set', exact: true }).click();
    await p.locator('#set-status').filter({ hasText: 'Set Operator setpoint to 42' }).waitFor();
    await p.locator('#set-close').click();
    await screenshots(p, 'plain-user-points');
  });

  it('lists, filters, creates, edits, sets a password for, revokes the tokens of and deletes users (superadmin)', async () => {
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Users', exact: true }).click();
    const table = page.locator('#users-table');
    await table.locator('tr[data-username="olga"]').waitFor();
    assert.deepEqual(firstWords(await buttons(table.locator('tr[data-username="admin"]'))), ['Edit', 'Revoke'], 'no Delete nor Set password on oneself');
    assert.deepEqual(firstWords(await buttons(table.locator('tr[data-username="olga"]'))), ['Edit', 'Set', 'Revoke', 'Delete']);

    const filter = page.locator('#users-filter');
    await filter.getByLabel('User filter (RQL)').fill('match(username,olg*)');
    await filter.getByRole('button', { name: 'Apply' }).click();
    await page.locator('#users-status').filter({ hasText: '1 of 1 users' }).waitFor();
    assert.equal(await table.locator('tbody tr').count(), 1);
    await filter.getByLabel('User filter (RQL)').fill('sort(username)');
    await filter.getByRole('button', { name: 'Apply' }).click();

    // Create: a refusal (short password) says why; then pete with two roles.
    await page.getByRole('button', { name: 'New user' }).click();
    const editor = page.locator('#user-editor-form');
    await editor.getByLabel('Username').fill('pete');
    await editor.getByLabel('Full name').fill('Pete Night');
    await editor.getByLabel('Roles (comma-separated)').fill('operators, night shift');
    await editor.getByLabel(/^Initial password/).fill('short');
    await editor.getByRole('button', { name: 'Save user' }).click();
    await page.locator('#user-editor-status').filter({ hasText: 'Not created' }).waitFor();
    assert.equal((await admin.get('/rest/latest/users/pete')).status, 404);
    await editor.getByLabel(/^Initial password/).fill('pete-first-1');
    await editor.getByRole('button', { name: 'Save user' }).click();
    await page.locator('#user-editor-status').filter({ hasText: 'Created user pete' }).waitFor();
    const pete = await admin.get<{ name: string; permissions: string[]; disabled: boolean }>('/rest/latest/users/pete');
    assert.deepEqual([pete.body.name, pete.body.permissions, pete.body.disabled], ['Pete Night', ['operators', 'night shift'], false]);
    await table.locator('tr[data-username="pete"]').waitFor();

    // A password set by the admin: pete logs in with it.
    await page.getByRole('button', { name: 'Set password of pete' }).click();
    await page.locator('#user-password-form').getByLabel('New password for the user').fill('pete-second-2');
    await page.locator('#user-password-form').getByRole('button', { name: 'Save password' }).click();
    await page.locator('#user-password-status').filter({ hasText: 'Set a new password for pete' }).waitFor();
    await page.locator('#user-password-close').click();
    const peteApi = await apiAs('pete', 'pete-second-2');
    assert.equal((await peteApi.get('/rest/latest/users/current')).status, 200);

    // Edit: roles and disabled; a disabled user cannot log in.
    await page.getByRole('button', { name: 'Edit user pete' }).click();
    await editor.getByLabel('Roles (comma-separated)').fill('viewers');
    await editor.getByLabel(/Disabled/).check();
    await editor.getByRole('button', { name: 'Save user' }).click();
    await page.locator('#user-editor-status').filter({ hasText: 'Saved user pete' }).waitFor();
    const edited = await admin.get<{ permissions: string[]; disabled: boolean }>('/rest/latest/users/pete');
    assert.deepEqual([edited.body.permissions, edited.body.disabled], [['viewers'], true]);
    const stranger = new ApiClient(session.app.url);
    stranger.seedCsrf();
    const refused = await stranger.post('/rest/latest/login', { username: 'pete', password: 'pete-second-2' });
    assert.equal(refused.status, 401);
    await table.locator('tr[data-username="pete"] td', { hasText: 'viewers' }).waitFor();
    await page.locator('#user-editor-close').click();

    // Revoke olga's tokens: one that worked stops working.
    const token = (await admin.post<{ token: string }>('/rest/latest/auth-tokens/create', { username: 'olga', expiry: Date.now() + 3_600_000 })).body.token;
    const byToken = new ApiClient(session.app.url);
    byToken.authorization = `Bearer ${token}`;
    assert.equal((await byToken.get('/rest/latest/users/current')).status, 200);
    await page.getByRole('button', { name: 'Revoke tokens of olga' }).click();
    await page.locator('#users-status').filter({ hasText: 'Revoked the API tokens of olga' }).waitFor();
    await eventually('the revoked token refused', async () => ((await byToken.get('/rest/latest/users/current')).status === 401 ? true : undefined));

    await page.getByRole('button', { name: 'Edit user pete' }).click();
    await screenshots(page, 'users');
    await page.locator('#user-editor-close').click();

    await page.getByRole('button', { name: 'Delete user pete' }).click();
    await page.locator('#users-status').filter({ hasText: 'Deleted user pete' }).waitFor();
    assert.equal(await table.locator('tr[data-username="pete"]').count(), 0);
    assert.equal((await admin.get('/rest/latest/users/pete')).status, 404);
  });

  it('changes one’s own password (the current one asked), then the login takes only the new one; makes and revokes an API token', async () => {
    const p = await pageAs(OLGA.username, OLGA.password);
    await p.getByRole('button', { name: 'My account' }).click();
    const who = p.locator('#account-who');
    await who.filter({ hasText: 'Olga Operator' }).waitFor();
    assert.match((await who.textContent()) ?? '', /operators/);

    const form = p.locator('#own-password-form');
    await form.getByLabel('Current password').fill('not-her-password');
    await form.getByLabel('New password (8 characters or more)').fill('olga-second-2');
    await form.getByLabel('New password again').fill('olga-second-2');
    await form.getByRole('button', { name: 'Change password' }).click();
    await p.locator('#own-password-status[data-kind="error"]').filter({ hasText: 'Current password is missing or wrong' }).waitFor();
    await form.getByLabel('Current password').fill(OLGA.password);
    await form.getByLabel('New password again').fill('olga-other-3');
    await form.getByRole('button', { name: 'Change password' }).click();
    await p.locator('#own-password-status').filter({ hasText: 'differ' }).waitFor();
    await form.getByLabel('New password again').fill('olga-second-2');
    await form.getByRole('button', { name: 'Change password' }).click();
    await p.locator('#own-password-status[data-kind="ok"]').filter({ hasText: 'Password changed' }).waitFor();

    // A token for scripts, shown once; it works until revoked.
    await p.locator('#token-form').getByLabel('Valid for').selectOption({ label: '1 day' });
    await p.getByRole('button', { name: 'Create token' }).click();
    const tokenBox = p.locator('#token-out textarea');
    await tokenBox.waitFor();
    const byToken = new ApiClient(session.app.url);
    byToken.authorization = `Bearer ${await tokenBox.inputValue()}`;
    const current = await byToken.get<{ username: string }>('/rest/latest/users/current');
    assert.equal(current.body.username, 'olga', current.text);
    await screenshots(p, 'account');
    await p.getByRole('button', { name: 'Revoke all my tokens' }).click();
    await p.locator('#token-status').filter({ hasText: 'Revoked all your API tokens' }).waitFor();
    await eventually('her revoked token refused', async () => ((await byToken.get('/rest/latest/users/current')).status === 401 ? true : undefined));

    // Log out; the old password is refused, the new one logs in.
    await p.getByRole('button', { name: 'Log out' }).click();
    await logIn(p, OLGA.username, OLGA.password);
    await p.locator('#login-status').filter({ hasText: /wrong|invalid|bad/i }).waitFor();
    await logIn(p, OLGA.username, 'olga-second-2');
    await p.getByRole('button', { name: 'Log out' }).waitFor();
    assert.equal(await p.locator('#username').textContent(), 'Olga Operator (olga)');
    const list = await (await apiAs(OLGA.username, 'olga-second-2')).get<List<{ username: string }>>('/rest/latest/users');
    assert.deepEqual(
      list.body.items.map((u) => u.username),
      ['olga'],
      'a plain user sees only itself',
    );
  });
});
