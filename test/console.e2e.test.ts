// The web console end to end: the real service serves the built console (dist/web, built here when
// missing), Debian's Chromium drives it through playwright-core. One user story: log in through the
// form, create a VIRTUAL source and a NUMERIC point with the console's forms, open the point's
// trend and see uPlot draw it (pixels of the series colour on the canvas, values arriving live),
// then raise an alarm (detector through the API) and acknowledge it in the alarms list.
// A screenshot of the chart goes to test/artifacts/console-trend.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Koa from 'koa';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { WEB_CONSOLE_DIR, webConsole } from '../src/app.js';
import { projectRoot } from '../src/paths.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loggedIn, type ApiClient, type List } from './helpers/client.js';
import { HttpReceiver } from './helpers/http-receiver.js';
import { eventually } from './helpers/wait.js';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** CI sets this (.ci/run): there a missing browser fails the suite instead of skipping it. */
const REQUIRE_CHROMIUM = /^(1|true|yes|on)$/i.test(process.env.TEST_REQUIRE_CHROMIUM ?? '');
const ARTIFACTS = join(projectRoot, 'test', 'artifacts');
const SCREENSHOT = join(ARTIFACTS, 'console-trend.png');
/** uPlot draws the first series in this colour (web/src/trend.ts COLORS[0]). */
const SERIES_RGB = [0x1f, 0x77, 0xb4];

interface EventView {
  id: number;
  active: boolean;
  acknowledged: boolean;
  acknowledgedByUsername: string | null;
  dataPointXid: string | null;
  message: string;
}

/** Runs in the page (kept as source text: the root tsconfig has no DOM types, and tsx would add helpers). */
const PROBE_CANVAS = `(() => {
  const canvas = document.querySelector('#trend-chart canvas');
  if (!canvas) return null;
  const ctx = canvas.getContext('2d');
  const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
  let opaque = 0, series = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] === 0) continue;
    opaque++;
    if (Math.abs(data[i] - ${SERIES_RGB[0]}) < 24 && Math.abs(data[i + 1] - ${SERIES_RGB[1]}) < 24 && Math.abs(data[i + 2] - ${SERIES_RGB[2]}) < 24) series++;
  }
  return { width: canvas.width, height: canvas.height, opaque, series };
})()`;

const chartPoints = (page: Page) => page.evaluate<number>(`Number(document.getElementById('trend-chart').dataset.points ?? 0)`);


describe('web console (Chromium)', function () {
  this.timeout(90_000);
  let app: TestApp;
  let api: ApiClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      const why = `Chromium not found at ${CHROMIUM}: install Debian's package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`;
      if (REQUIRE_CHROMIUM) throw new Error(`${why} (TEST_REQUIRE_CHROMIUM is set)`);
      // A fresh machine without a browser still passes `npm test`, but says so loudly.
      console.log(`  !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n  !! skipped: the web console browser suite. ${why}.\n  !! Set TEST_REQUIRE_CHROMIUM=1 to make a missing browser a failure.\n  !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!`);
      this.skip();
    }
    if (!existsSync(join(WEB_CONSOLE_DIR, 'index.html'))) {
      execFileSync(process.execPath, ['scripts/build-web.mjs'], { cwd: projectRoot, stdio: 'inherit' });
    }
    [app, browser] = await Promise.all([
      startTestApp(),
      chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] }),
    ]);
    api = await loggedIn(app.url, 'admin', 'admin');
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });

  after(async () => {
    await browser?.close();
    await app?.stop();
  });

  it('serves the console at / with its security headers, leaving /health and /rest to the API', async () => {
    const index = await fetch(app.url + '/');
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-type') ?? '', /text\/html/);
    const csp = index.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(index.headers.get('x-content-type-options'), 'nosniff');
    assert.match(await index.text(), /<form id="login-form"/);
    const script = await fetch(app.url + '/app.js');
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);

    const health = await fetch(app.url + '/health');
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
    const anonymous = await fetch(app.url + '/rest/latest/users/current');
    assert.equal(anonymous.status, 401);
    assert.equal(((await anonymous.json()) as { serviceStatusCode: number }).serviceStatusCode, 4008);
    const missing = await fetch(app.url + '/no-such-file.js');
    assert.equal(missing.status, 404);
  });

  it('answers / with 503 and how to build the console when the build folder is missing', async () => {
    const koa = new Koa().use(webConsole(join(ARTIFACTS, 'no-such-build')));
    const server = createServer(koa.callback()).listen(0, '127.0.0.1');
    try {
      await new Promise((r) => server.once('listening', r));
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.equal(res.status, 503);
      assert.match(await res.text(), /npm run build:web/);
    } finally {
      server.close();
    }
  });

  it('logs in, creates a point, draws its trend live, acknowledges an alarm, logs out', async () => {
    await page.goto(app.url + '/');
    const login = page.locator('#login-form');
    await login.getByLabel('Username').fill('admin');
    await login.getByLabel('Password').fill('wrong-password');
    await login.getByRole('button', { name: 'Log in' }).click();
    // The error envelope's message, shown as is.
    await page.locator('#login-status').filter({ hasText: /username or password/i }).waitFor();
    const tokenBefore = (await context.cookies()).find((c) => c.name === 'XSRF-TOKEN')?.value;
    assert.ok(tokenBefore, 'the console makes up an XSRF-TOKEN cookie before logging in');

    await login.getByLabel('Password').fill('admin');
    await login.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    const tokenAfter = (await context.cookies()).find((c) => c.name === 'XSRF-TOKEN')?.value;
    assert.ok(tokenAfter && tokenAfter !== tokenBefore, 'login issues a new XSRF-TOKEN, which later writes use');

    // A VIRTUAL source producing a value every 300 ms, through the form.
    await page.getByRole('button', { name: 'New data source' }).click();
    const sourceForm = page.locator('#source-editor-form');
    await sourceForm.getByLabel('Name', { exact: true }).fill('Boiler room');
    await sourceForm.getByLabel('Update period').fill('300');
    await sourceForm.getByLabel('Period unit').selectOption('MILLISECONDS');
    await sourceForm.getByRole('button', { name: 'Save data source' }).click();
    await page.locator('#source-editor-status').filter({ hasText: 'Created data source Boiler room' }).waitFor();
    await page.getByRole('button', { name: 'Close' }).first().click();

    // The RQL filter box.
    const sourcesFilter = page.locator('#sources-filter');
    await sourcesFilter.getByLabel('RQL filter').fill('match(name,*boil*)&sort(name)');
    await sourcesFilter.getByRole('button', { name: 'Apply' }).click();
    await page.locator('#sources-status').filter({ hasText: '1 of 1 data sources' }).waitFor();
    await page.locator('#sources-table tbody tr', { hasText: 'Boiler room' }).waitFor();

    // A NUMERIC point on it, through the form opened from the source's row.
    await page.getByRole('button', { name: 'Add point to Boiler room' }).click();
    const pointForm = page.locator('#point-editor-form');
    await pointForm.getByLabel('Name', { exact: true }).fill('Boiler temperature');
    await pointForm.getByLabel('Change type').selectOption('RANDOM_WALK');
    await pointForm.getByLabel('Min').fill('20');
    await pointForm.getByLabel('Max').fill('80');
    await pointForm.getByRole('button', { name: 'Save point' }).click();
    await page.locator('#point-editor-status').filter({ hasText: 'Created point Boiler temperature' }).waitFor();
    const points = await api.get<List<{ xid: string; dataSourceXid: string }>>('/rest/latest/data-points?eq(name,Boiler%20temperature)');
    assert.equal(points.body.total, 1);
    const xid = points.body.items[0]!.xid;
    const source = await api.get<{ name: string; enabled: boolean }>(`/rest/latest/data-sources/${points.body.items[0]!.dataSourceXid}`);
    assert.equal(source.body.name, 'Boiler room');
    assert.equal(source.body.enabled, true);

    // Ten minutes of history before the live values (bulk ingest), so the chart has a shape to draw.
    const now = Date.now();
    const history = Array.from({ length: 120 }, (_, i) => ({ xid, timestamp: now - 600_000 + i * 5_000, value: 50 + 20 * Math.sin(i / 10) }));
    const written = await api.post<{ written: number }>('/rest/latest/point-values', history);
    assert.equal(written.status, 200, written.text);

    // Its trend: uPlot draws the series, and values keep arriving over the WebSocket.
    await page.getByRole('button', { name: 'Trend of Boiler temperature' }).click();
    await page.locator('#trend-status').filter({ hasText: /live/ }).waitFor();
    // A freshly created point has seconds of history: the shortest range shows them best.
    const trendForm = page.locator('#trend-form');
    assert.equal(await trendForm.getByLabel('Points (XIDs, comma-separated)').inputValue(), xid);
    await trendForm.getByLabel('Range').selectOption('10m');
    await trendForm.getByRole('button', { name: 'Show trend' }).click();
    await page.locator('#trend-status').filter({ hasText: /raw values, live/ }).waitFor();
    // (Polled from here: waitForFunction would eval in the page, which the console's CSP forbids.)
    const before = await eventually('the history on the chart', async () => ((await chartPoints(page)) >= 120 ? chartPoints(page) : undefined));
    await eventually('a live value appended', async () => ((await chartPoints(page)) > before ? true : undefined));
    const canvas = await eventually('the series drawn on the canvas', async () => {
      const probe = await page.evaluate<{ width: number; height: number; opaque: number; series: number } | null>(PROBE_CANVAS);
      return probe && probe.series > 20 ? probe : undefined;
    });
    assert.ok(canvas.width > 0 && canvas.height > 0);
    assert.ok(canvas.opaque > canvas.series, 'axes and grid are drawn too');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator('#trend-chart').screenshot({ path: SCREENSHOT });

    // The automatic rollup keeps raw values while they are fewer than the plot has pixels (this
    // point's ~125 values over 24 hours; console-trend-tools rolls up thousands); an explicit rollup
    // is honoured.
    await trendForm.getByLabel('Range').selectOption('24h');
    await trendForm.getByRole('button', { name: 'Show trend' }).click();
    await page.locator('#trend-status').filter({ hasText: /raw values, live/ }).waitFor();
    assert.ok(Number(await page.locator('#trend-chart').getAttribute('data-from')) < Date.now() - 23 * 3_600_000, 'the 24-hour range');
    await trendForm.getByLabel('Rollup').selectOption('MAXIMUM');
    await trendForm.getByLabel(/^Period/).selectOption('HOURS');
    await trendForm.getByRole('button', { name: 'Show trend' }).click();
    await page.locator('#trend-status').filter({ hasText: /MAXIMUM per 1 HOURS, live/ }).waitFor();
    await eventually('hourly maxima on the chart', async () => ((await chartPoints(page)) >= 1 ? true : undefined));

    // An alarm: a detector that the next value crosses, staying active until acknowledged.
    const detector = await api.post('/rest/latest/event-detectors', {
      name: 'Boiler check',
      dataPointXid: xid,
      detectorType: 'HIGH_LIMIT',
      alarmLevel: 'URGENT',
      limit: 0,
      rtnApplicable: false,
    });
    assert.equal(detector.status, 201, detector.text);
    await page.locator('#nav').getByRole('button', { name: /Alarms/ }).click();
    const row = page.locator('#alarms-table tbody tr', { hasText: 'Boiler temperature' });
    await row.waitFor();
    const id = Number(await row.getAttribute('data-event-id'));
    await row.getByRole('button', { name: /Acknowledge/ }).click();
    await page.locator('#alarms-status').filter({ hasText: `Alarm ${id} acknowledged` }).waitFor();
    const event = await api.get<EventView>(`/rest/latest/events/${id}`);
    assert.equal(event.status, 200);
    assert.equal(event.body.dataPointXid, xid);
    assert.equal(event.body.acknowledged, true);
    assert.equal(event.body.acknowledgedByUsername, 'admin');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.locator('#login-form').waitFor();
    const afterLogout = await page.evaluate<number>(`fetch('/rest/latest/users/current').then((r) => r.status)`);
    assert.equal(afterLogout, 401);

    assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violations');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });

  it('falls back to polling when the WebSockets fail', async () => {
    const ds = await api.post<{ xid: string }>('/rest/latest/data-sources', { name: 'Polled', modelType: 'VIRTUAL', enabled: true, updatePeriods: 200, updatePeriodType: 'MILLISECONDS' });
    assert.equal(ds.status, 201, ds.text);
    const dp = await api.post<{ xid: string }>('/rest/latest/data-points', { name: 'Polled value', dataSourceXid: ds.body.xid, pointLocator: { dataType: 'NUMERIC', changeType: 'INCREMENT', min: 0, max: 1000 } });
    assert.equal(dp.status, 201, dp.text);

    // A browser whose WebSockets open and are closed at once (a proxy that does not pass them on).
    const polled = await browser.newContext();
    try {
      await polled.routeWebSocket(/\/websocket\//, (ws) => ws.close({ code: 1011, reason: 'test: no WebSockets' }));
      const url = new URL(app.url);
      await polled.addCookies([...api.cookies].map(([name, value]) => ({ name, value, domain: url.hostname, path: '/' })));
      const p = await polled.newPage();
      p.setDefaultTimeout(20_000);
      await p.goto(app.url + '/');
      await p.locator('#nav').getByRole('button', { name: 'Trend' }).click();
      const trendForm = p.locator('#trend-form');
      await trendForm.getByLabel('Points (XIDs, comma-separated)').fill(dp.body.xid);
      await trendForm.getByLabel('Range').selectOption('10m');
      await trendForm.getByRole('button', { name: 'Show trend' }).click();
      await p.locator('#trend-status').filter({ hasText: /polling every 5 s/ }).waitFor();
      const first = await eventually('values on the chart', async () => ((await chartPoints(p)) >= 1 ? chartPoints(p) : undefined));
      await eventually('a poll adding values', async () => ((await chartPoints(p)) > first ? true : undefined), 20_000);
      await p.locator('#nav').getByRole('button', { name: /Alarms/ }).click();
      await p.locator('#alarms-live').filter({ hasText: /reloading every 10 s/ }).waitFor();
    } finally {
      await polled.close();
    }
  });

  /** A second browser context logged in as `api` (its session cookies), on the console. */
  async function consolePage(): Promise<{ ctx: BrowserContext; p: Page }> {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const url = new URL(app.url);
    await ctx.addCookies([...api.cookies].map(([name, value]) => ({ name, value, domain: url.hostname, path: '/' })));
    const p = await ctx.newPage();
    p.setDefaultTimeout(20_000);
    p.on('pageerror', (err) => pageErrors.push(err.message));
    p.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await p.goto(app.url + '/');
    return { ctx, p };
  }

  it("edits a point's logging and retention settings, showing the field messages of a refusal", async () => {
    const ds = await api.post<{ xid: string }>('/rest/latest/data-sources', { name: 'Settings device', modelType: 'VIRTUAL', enabled: false });
    assert.equal(ds.status, 201, ds.text);
    const dp = await api.post<{ xid: string }>('/rest/latest/data-points', { name: 'Tank level', dataSourceXid: ds.body.xid, pointLocator: { dataType: 'NUMERIC', changeType: 'SINE' } });
    assert.equal(dp.status, 201, dp.text);
    const { ctx, p } = await consolePage();
    try {
      await p.getByRole('button', { name: 'Settings of Tank level' }).click();
      const form = p.locator('#settings-form');
      await p.locator('#settings-point').filter({ hasText: 'Tank level' }).waitFor();
      assert.equal(await form.getByLabel('Logging type').inputValue(), 'ON_CHANGE');
      assert.equal(await form.getByLabel('Interval unit').isVisible(), false, 'interval fields only for INTERVAL');
      await form.getByLabel('Logging type').selectOption('INTERVAL');
      await form.getByLabel('Interval', { exact: true }).fill('5');
      await form.getByLabel('Interval unit').selectOption('MINUTES');
      await form.getByLabel('Value per interval').selectOption('AVERAGE');
      await form.getByLabel('Discard extreme values').check();
      await form.getByLabel('Discard below').fill('0');
      await form.getByLabel('Discard above').fill('100');
      await form.getByLabel('Own retention period').check();
      await form.getByLabel('Keep history for').fill('30');
      await form.getByLabel('Retention unit').selectOption('DAYS');
      await form.getByRole('button', { name: 'Save settings' }).click();
      await p.locator('#settings-status').filter({ hasText: 'Saved the settings of Tank level' }).waitFor();
      const saved = await api.get<Record<string, unknown>>(`/rest/latest/data-points/${dp.body.xid}`);
      assert.deepEqual(saved.body.loggingProperties, {
        loggingType: 'INTERVAL',
        tolerance: 0,
        intervalLoggingPeriod: { periods: 5, type: 'MINUTES' },
        intervalLoggingType: 'AVERAGE',
        discardExtremeValues: true,
        discardLowLimit: 0,
        discardHighLimit: 100,
      });
      assert.equal(saved.body.purgeOverride, true);
      assert.deepEqual(saved.body.purgePeriod, { periods: 30, type: 'DAYS' });

      // A refusal names the field, in the list under the form; nothing is saved.
      await form.getByLabel('Discard below').fill('50');
      await form.getByLabel('Discard above').fill('10');
      await form.getByRole('button', { name: 'Save settings' }).click();
      await p.locator('#settings-messages li').filter({ hasText: 'loggingProperties.discardHighLimit must be greater than discardLowLimit' }).waitFor();
      assert.equal(await p.locator('#settings-status').getAttribute('data-kind'), 'error');
      const unchanged = await api.get<{ loggingProperties: { discardLowLimit: number } }>(`/rest/latest/data-points/${dp.body.xid}`);
      assert.equal(unchanged.body.loggingProperties.discardLowLimit, 0);
      mkdirSync(ARTIFACTS, { recursive: true });
      await p.locator('#settings-panel').screenshot({ path: join(ARTIFACTS, 'console-point-settings.png') });
    } finally {
      await ctx.close();
    }
    assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violations');
  });

  it("writes a computed point's script and context in the point editor, shows the 422 messages, and the point computes", async () => {
    const ds = await api.post<{ xid: string }>('/rest/latest/data-sources', { xid: 'plant', name: 'Plant meters', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
    assert.equal(ds.status, 201, ds.text);
    for (const xid of ['plant-heat', 'plant-power']) {
      const res = await api.post('/rest/latest/data-points', { xid, name: xid, dataSourceXid: 'plant', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
      assert.equal(res.status, 201, res.text);
    }
    const { ctx, p } = await consolePage();
    try {
      await p.getByRole('button', { name: 'New data source' }).click();
      const sf = p.locator('#source-editor-form');
      await sf.getByLabel('Type').selectOption('META');
      assert.equal(await sf.getByLabel('Update period').isVisible(), false, 'a computed source does not poll');
      await sf.getByLabel('Name', { exact: true }).fill('Computed');
      await sf.getByRole('button', { name: 'Save data source' }).click();
      await p.locator('#source-editor-status').filter({ hasText: 'Created data source Computed' }).waitFor();
      await p.locator('#source-editor-close').click();

      await p.getByRole('button', { name: 'Add point to Computed' }).click();
      const pf = p.locator('#point-editor-form');
      assert.equal(await pf.getByLabel('Settable').isVisible(), false, 'a computed point is not settable');
      assert.equal(await pf.getByLabel('Change type').isVisible(), false);
      await pf.getByLabel('Name', { exact: true }).fill('COP');
      await pf.getByLabel('XID (empty: generated)').fill('plant-cop');
      await pf.getByLabel(/^Context/).fill('heat=plant-heat, power=plant-nope');
      await pf.getByLabel('Script').fill('heat / power.value');
      await pf.getByRole('button', { name: 'Save point' }).click();
      // Each refusal next to its field: the script's with its reason, the context item's naming the item.
      await p.locator('[data-error-for="pointLocator.script"]').filter({ hasText: 'property access (. or []) is not allowed' }).waitFor();
      await pf.getByLabel('Script').fill('heat / power');
      await pf.getByRole('button', { name: 'Save point' }).click();
      await p.locator('[data-error-for="pointLocator.context"]').filter({ hasText: 'context[1].xid: Data point not found: plant-nope' }).waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      await p.locator('#point-editor-panel').screenshot({ path: join(ARTIFACTS, 'console-computed-point-refused.png') });
      await pf.getByLabel(/^Context/).fill('heat=plant-heat, power=plant-power');
      await pf.getByLabel('Update on').selectOption('CRON');
      await pf.getByLabel(/^Cron pattern/).fill('every minute');
      assert.equal(await pf.getByLabel(/^Delay after a context update/).isVisible(), false, 'no delay on a cron');
      await pf.getByRole('button', { name: 'Save point' }).click();
      await p.locator('[data-error-for="pointLocator.cronPattern"]').filter({ hasText: 'is not a cron pattern' }).waitFor();
      await pf.getByLabel('Update on').selectOption('CONTEXT_UPDATE');
      await pf.getByLabel(/^Delay after a context update/).fill('0');
      await pf.getByRole('button', { name: 'Save point' }).click();
      await p.locator('#point-editor-status').filter({ hasText: 'Created point COP' }).waitFor();
      const saved = await api.get<{ pointLocator: Record<string, unknown> }>('/rest/latest/data-points/plant-cop');
      assert.deepEqual(saved.body.pointLocator, {
        dataType: 'NUMERIC',
        settable: false,
        script: 'heat / power',
        context: [{ xid: 'plant-heat', var: 'heat' }, { xid: 'plant-power', var: 'power' }],
        updateEvent: 'CONTEXT_UPDATE',
        executionDelayMs: 0,
      });
      await p.locator('#point-editor-panel').screenshot({ path: join(ARTIFACTS, 'console-computed-point.png') });

      // Values of the context points make the COP.
      const t = Date.now() - 2_000;
      const written = await api.post('/rest/latest/point-values', [{ xid: 'plant-power', value: 2, timestamp: t }, { xid: 'plant-heat', value: 7, timestamp: t + 1 }]);
      assert.equal(written.status, 200, written.text);
      const cop = await eventually('the COP', async () => {
        const res = await api.get<{ value: number; timestamp: number }[]>('/rest/latest/point-values/latest/plant-cop?limit=1');
        return res.body[0]?.timestamp === t + 1 ? res.body[0] : undefined;
      });
      assert.equal(cop.value, 3.5);
    } finally {
      await ctx.close();
    }
    assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violations');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });

  it("shows an alarm's comments, adds one, shows a refusal's field message, acknowledges with a comment; others' comments arrive live", async () => {
    const ds = await api.post<{ xid: string; id: number }>('/rest/latest/data-sources', { name: 'Pump station', modelType: 'VIRTUAL', enabled: false });
    assert.equal(ds.status, 201, ds.text);
    const dp = await api.post<{ xid: string; id: number }>('/rest/latest/data-points', { name: 'Pump pressure', dataSourceXid: ds.body.xid, pointLocator: { dataType: 'NUMERIC' } });
    assert.equal(dp.status, 201, dp.text);
    const source = (await app.service.services.dataSources.findByXid(ds.body.xid))!;
    const { id } = await app.service.services.events.raise({
      alarmLevel: 'CRITICAL', eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', message: 'Pump pressure above 8 bar', referenceId1: dp.body.id,
      dataPointId: dp.body.id, dataPointXid: dp.body.xid, dataSourceId: source.id, dataSourceXid: source.xid,
    });
    const first = await api.post(`/rest/latest/events/${id}/comments`, { text: 'Seen on the SCADA screen too' });
    assert.equal(first.status, 201, first.text);

    const { ctx, p } = await consolePage();
    try {
      await p.locator('#nav').getByRole('button', { name: /Alarms/ }).click();
      const row = p.locator(`#alarms-table tbody tr[data-event-id="${id}"]`);
      await row.filter({ hasText: 'admin: Seen on the SCADA screen too' }).waitFor();
      await row.getByRole('button', { name: `Comments on alarm ${id}: Pump pressure above 8 bar` }).click();
      const panel = p.locator('#alarm-comments-panel');
      await panel.locator('#alarm-comments-list li').filter({ hasText: 'Seen on the SCADA screen too' }).waitFor();
      const form = panel.locator('#alarm-comment-form');

      // A blank comment is the service's 422, its field message listed under the form; nothing stored.
      await form.getByLabel('Comment').fill('   ');
      await form.getByRole('button', { name: 'Add comment' }).click();
      await panel.locator('#alarm-comment-messages li').filter({ hasText: 'text must not be blank' }).waitFor();
      assert.equal(await panel.locator('#alarm-comment-status').getAttribute('data-kind'), 'error');
      mkdirSync(ARTIFACTS, { recursive: true });
      await panel.screenshot({ path: join(ARTIFACTS, 'console-alarm-comment-refused.png') });

      await form.getByLabel('Comment').fill('Valve V3 stuck, maintenance called');
      await form.getByRole('button', { name: 'Add comment' }).click();
      await panel.locator('#alarm-comment-status').filter({ hasText: `Comment added to alarm ${id}` }).waitFor();
      assert.equal(await panel.locator('#alarm-comment-messages li').count(), 0);
      await panel.locator('#alarm-comments-list li').nth(1).filter({ hasText: 'Valve V3 stuck, maintenance called' }).waitFor();
      await row.locator('button', { hasText: 'Comments (2)' }).waitFor();

      // Another user's comment arrives over the events WebSocket while the panel is open.
      const other = await loggedIn(app.url, 'admin', 'admin');
      assert.equal((await other.post(`/rest/latest/events/${id}/comments`, { text: 'Technician on the way' })).status, 201);
      await panel.locator('#alarm-comments-list li').nth(2).filter({ hasText: 'Technician on the way' }).waitFor();

      await form.getByLabel('Comment').fill('Valve replaced, pressure back to 6 bar');
      await form.getByRole('button', { name: 'Acknowledge with comment' }).click();
      await panel.locator('#alarm-comment-status').filter({ hasText: `Alarm ${id} acknowledged with your comment` }).waitFor();
      await panel.locator('#alarm-comments-list li').nth(3).filter({ hasText: 'Valve replaced, pressure back to 6 bar' }).waitFor();
      assert.equal(await panel.getByRole('button', { name: 'Acknowledge with comment' }).isHidden(), true);
      await row.filter({ hasText: 'by admin' }).waitFor();

      const event = await api.get<{ acknowledged: boolean; acknowledgedTimestamp: number; comments: { username: string; timestamp: number; text: string }[] }>(`/rest/latest/events/${id}`);
      assert.equal(event.body.acknowledged, true);
      assert.deepEqual(event.body.comments.map((c) => c.text), ['Seen on the SCADA screen too', 'Valve V3 stuck, maintenance called', 'Technician on the way', 'Valve replaced, pressure back to 6 bar']);
      assert.equal(event.body.comments[3]!.timestamp, event.body.acknowledgedTimestamp);
      await p.locator('#alarms-view').screenshot({ path: join(ARTIFACTS, 'console-alarm-comments.png') });
      await p.setViewportSize({ width: 400, height: 900 });
      await p.locator('#alarms-view').screenshot({ path: join(ARTIFACTS, 'console-alarm-comments-narrow.png') });
    } finally {
      await ctx.close();
    }
    assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violations');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });

  it('creates a WEBHOOK event handler with the form (a refused URL shown at its field), sees its deliveries after an alarm, edits and deletes it; EMAIL and SET_POINT forms send their fields', async () => {
    const receiver = new HttpReceiver();
    const port = await receiver.listen();
    const ds = await api.post<{ xid: string; id: number }>('/rest/latest/data-sources', { name: 'Chiller plant', modelType: 'VIRTUAL', enabled: false });
    assert.equal(ds.status, 201, ds.text);
    const dp = await api.post<{ xid: string; id: number }>('/rest/latest/data-points', { name: 'Chiller outlet', dataSourceXid: ds.body.xid, pointLocator: { dataType: 'NUMERIC' } });
    assert.equal(dp.status, 201, dp.text);
    const { ctx, p } = await consolePage();
    try {
      await p.locator('#nav').getByRole('button', { name: 'Event handlers' }).click();
      await p.locator('#handlers-empty').waitFor();
      await p.getByRole('button', { name: 'New event handler' }).click();
      const form = p.locator('#handler-editor-form');
      assert.equal(await form.getByLabel('Handler type').inputValue(), 'WEBHOOK');
      await form.getByLabel('Name', { exact: true }).fill('Ops webhook');
      await form.getByLabel('XID (empty: generated)').fill('EH_ops');
      await form.getByLabel('URL').fill('ftp://127.0.0.1/alarms');
      await form.getByLabel('Headers (Name=value, comma-separated)').fill('X-Site=North');
      await form.getByLabel(/^Signing secret/).fill('s3cret-key');
      // The default matcher: DATA_POINT events of level URGENT or above.
      assert.equal(await form.getByLabel('Matcher 1: event type').inputValue(), 'DATA_POINT');
      assert.equal(await form.getByLabel('Level at least').inputValue(), 'URGENT');
      await form.getByRole('button', { name: 'Save event handler' }).click();
      await form.locator('[data-error-for="url"]').filter({ hasText: 'must be an http or https URL' }).waitFor();
      assert.equal(await p.locator('#handler-editor-status').getAttribute('data-kind'), 'error');
      mkdirSync(ARTIFACTS, { recursive: true });
      await p.locator('#handler-editor-panel').screenshot({ path: join(ARTIFACTS, 'console-handler-refused.png') });
      assert.equal((await api.get('/rest/latest/event-handlers/EH_ops')).status, 404);

      await form.getByLabel('URL').fill(`http://127.0.0.1:${port}/hook`);
      await form.getByRole('button', { name: 'Save event handler' }).click();
      await p.locator('#handler-editor-status').filter({ hasText: 'Created event handler Ops webhook (EH_ops)' }).waitFor();
      const row = p.locator('#handlers-table tbody tr[data-xid="EH_ops"]');
      await row.filter({ hasText: `POST http://127.0.0.1:${port}/hook` }).waitFor();
      await row.filter({ hasText: 'DATA_POINT ≥ URGENT' }).waitFor();
      const stored = await api.get<Record<string, unknown>>('/rest/latest/event-handlers/EH_ops');
      assert.equal(stored.status, 200, stored.text);
      assert.deepEqual(
        { ...stored.body, id: 0 },
        { id: 0, xid: 'EH_ops', name: 'Ops webhook', disabled: false, handlerType: 'WEBHOOK', eventTypes: [{ eventType: 'DATA_POINT', minAlarmLevel: 'URGENT' }], url: `http://127.0.0.1:${port}/hook`, headers: { 'X-Site': 'North' } },
      );

      // An alarm of the point: the handler POSTs it, signed; the delivery shows in its list.
      const source = (await app.service.services.dataSources.findByXid(ds.body.xid))!;
      const { id } = await app.service.services.events.raise({
        alarmLevel: 'CRITICAL', eventType: 'DATA_POINT', subType: 'HIGH_LIMIT', message: 'Chiller outlet above 12 °C', referenceId1: dp.body.id,
        dataPointId: dp.body.id, dataPointXid: dp.body.xid, dataSourceId: source.id, dataSourceXid: source.xid,
      });
      await eventually('the webhook request', async () => (receiver.requests.length >= 1 ? true : undefined), 10_000);
      const [request] = receiver.requests;
      assert.equal(request!.headers['x-site'], 'North');
      assert.equal(request!.headers['x-signature-256'], `sha256=${createHmac('sha256', 's3cret-key').update(request!.body).digest('hex')}`);
      assert.equal(receiver.bodies<{ action: string; event: { id: number } }>()[0]!.action, 'RAISED');
      await row.getByRole('button', { name: 'Deliveries of event handler Ops webhook' }).click();
      const deliveries = p.locator('#deliveries-table tbody tr');
      await eventually('the delivery listed', async () => {
        await p.locator('#deliveries-refresh').click();
        return (await deliveries.count()) >= 1 ? true : undefined;
      }, 10_000, 300);
      const delivered = deliveries.first();
      assert.equal(await delivered.getAttribute('data-event-id'), String(id));
      await delivered.filter({ hasText: 'RAISED' }).filter({ hasText: 'SENT' }).filter({ hasText: '200' }).waitFor();

      // Acknowledged with a comment: the ACKNOWLEDGED delivery carries the event with it.
      assert.equal((await api.put(`/rest/latest/events/acknowledge/${id}`, { comment: 'Condenser fan replaced' })).status, 200);
      const acked = await eventually('the ACKNOWLEDGED request', async () => receiver.bodies<{ action: string; event: { comments: { text: string }[] } }>().find((b) => b.action === 'ACKNOWLEDGED'), 10_000);
      assert.deepEqual(acked.event.comments.map((c) => c.text), ['Condenser fan replaced']);
      await eventually('two deliveries listed', async () => {
        await p.locator('#deliveries-refresh').click();
        return (await deliveries.count()) >= 2 ? true : undefined;
      }, 10_000, 300);
      await deliveries.first().filter({ hasText: 'ACKNOWLEDGED' }).waitFor();
      await p.locator('#handlers-view').screenshot({ path: join(ARTIFACTS, 'console-handlers.png') });
      // At 400 px the list, the form and the deliveries are cards and rows that wrap: nothing scrolls sideways.
      await p.setViewportSize({ width: 400, height: 900 });
      const width = await p.evaluate<number>('document.documentElement.scrollWidth');
      assert.ok(width <= 400, `the handlers view is ${width} px wide`);
      await p.locator('#handlers-view').screenshot({ path: join(ARTIFACTS, 'console-handlers-400px.png') });
      await p.setViewportSize({ width: 1280, height: 900 });

      // Edit: disabled, and a second matcher; the secret left empty keeps its value.
      await row.getByRole('button', { name: 'Edit event handler Ops webhook' }).click();
      assert.equal(await form.getByLabel(/^Signing secret/).inputValue(), '');
      await form.getByLabel('Disabled').check();
      await form.getByRole('button', { name: 'Add matcher' }).click();
      await form.getByLabel('Matcher 2: event type').selectOption('DATA_SOURCE');
      await form.getByLabel('Detector or source XID').nth(1).fill(ds.body.xid);
      await form.getByRole('button', { name: 'Save event handler' }).click();
      await p.locator('#handler-editor-status').filter({ hasText: 'Saved event handler Ops webhook (EH_ops)' }).waitFor();
      await row.filter({ hasText: 'disabled' }).filter({ hasText: `DATA_SOURCE ${ds.body.xid}` }).waitFor();
      const edited = await api.get<{ disabled: boolean; eventTypes: unknown[] }>('/rest/latest/event-handlers/EH_ops');
      assert.equal(edited.body.disabled, true);
      assert.deepEqual(edited.body.eventTypes, [{ eventType: 'DATA_POINT', minAlarmLevel: 'URGENT' }, { eventType: 'DATA_SOURCE', referenceXid: ds.body.xid }]);

      p.once('dialog', (dialog) => void dialog.accept());
      await row.getByRole('button', { name: 'Delete event handler Ops webhook' }).click();
      await p.locator('#handlers-status').filter({ hasText: 'Deleted event handler Ops webhook' }).waitFor();
      assert.equal((await api.get('/rest/latest/event-handlers/EH_ops')).status, 404);
      await p.locator('#handlers-empty').waitFor();

      // EMAIL and SET_POINT: what the form sends (each type's fields only, recipients read from text, the
      // escalation only when ticked); the service's answer is shown whichever it is (no SMTP here: a 422).
      const sent = async (): Promise<Record<string, unknown>> => {
        const request = p.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/rest/latest/event-handlers'));
        await form.getByRole('button', { name: 'Save event handler' }).click();
        return (await request).postDataJSON() as Record<string, unknown>;
      };
      await p.getByRole('button', { name: 'New event handler' }).click();
      await form.getByLabel('Handler type').selectOption('EMAIL');
      await form.getByLabel('Name', { exact: true }).fill('Night shift mail');
      await form.getByLabel(/^Recipients/).fill('admin, ops@example.com, user:x@y');
      await form.getByLabel('Send when back to normal').check();
      await form.getByLabel('Escalate while active and unacknowledged').check();
      await form.getByLabel('Escalate after (ms)').fill('600000');
      await form.getByLabel('Escalate to').fill('chief@example.com');
      assert.deepEqual(await sent(), {
        handlerType: 'EMAIL', name: 'Night shift mail', disabled: false,
        recipients: [{ type: 'USER', username: 'admin' }, { type: 'ADDRESS', address: 'ops@example.com' }, { type: 'USER', username: 'x@y' }],
        sendOnActive: true, sendOnInactive: true, sendOnAcknowledge: false,
        escalation: { delayMs: 600000, recipients: [{ type: 'ADDRESS', address: 'chief@example.com' }] },
        eventTypes: [{ eventType: 'DATA_POINT', minAlarmLevel: 'URGENT' }],
      });
      await p.locator('#handler-editor-status[data-kind="error"]').waitFor();
      await form.getByLabel('Handler type').selectOption('SET_POINT');
      await form.getByLabel('Target point XID').fill(dp.body.xid);
      await form.getByLabel('Value when raised', { exact: true }).fill('42');
      await form.locator('select[name="inactiveAction"]').selectOption('POINT_VALUE');
      await form.getByLabel('Point whose value to set when back to normal (XID)').fill('DP_setpoint');
      assert.deepEqual(await sent(), {
        handlerType: 'SET_POINT', name: 'Night shift mail', disabled: false,
        targetPointXid: dp.body.xid, activeAction: 'STATIC_VALUE', activeValue: 42, inactiveAction: 'POINT_VALUE', inactivePointXid: 'DP_setpoint',
        eventTypes: [{ eventType: 'DATA_POINT', minAlarmLevel: 'URGENT' }],
      });
    } finally {
      await ctx.close();
      await receiver.close();
    }
    assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violations');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });

  it('exports the configuration as a file and imports one, listing the problems of a refused document', async () => {
    const { ctx, p } = await consolePage();
    try {
      await p.locator('#nav').getByRole('button', { name: 'Configuration' }).click();
      const [download] = await Promise.all([p.waitForEvent('download'), p.locator('#export-form').getByRole('button', { name: 'Export' }).click()]);
      assert.match(download.suggestedFilename(), /^configuration-.*\.json$/);
      const file = await download.path();
      const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { xid?: string; username?: string }[]>;
      assert.ok(doc.dataPoints!.some((d) => d.xid !== undefined), 'the points are in the file');
      assert.ok(doc.users!.some((u) => u.username === 'admin'));
      await p.locator('#export-status').filter({ hasText: /Exported \d+ dataSources/ }).waitFor();

      const dir = mkdtempSync(join(tmpdir(), 'dds-console-'));
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, JSON.stringify({ dataPoints: [{ xid: 'ui-orphan', name: 'Orphan', dataSourceXid: 'no-such-source', pointLocator: { dataType: 'NUMERIC' } }] }));
      const form = p.locator('#import-form');
      await form.getByLabel('Configuration file (JSON)').setInputFiles(bad);
      await form.getByRole('button', { name: 'Import' }).click();
      await p.locator('#import-messages li').filter({ hasText: 'dataPoints[0].dataSourceXid' }).waitFor();
      assert.equal(await p.locator('#import-status').getAttribute('data-kind'), 'error');
      await p.locator('#import-status').filter({ hasText: 'Nothing imported' }).waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      await p.locator('#config-view').screenshot({ path: join(ARTIFACTS, 'console-configuration.png') });

      const good = join(dir, 'good.json');
      writeFileSync(good, JSON.stringify({ dataSources: [{ xid: 'ui-imported', name: 'From a file', modelType: 'VIRTUAL', enabled: false }] }));
      await form.getByLabel('Configuration file (JSON)').setInputFiles(good);
      await form.getByRole('button', { name: 'Import' }).click();
      await p.locator('#import-status').filter({ hasText: 'Imported good.json: 1 created, 0 updated' }).waitFor();
      assert.equal(await p.locator('#import-messages li').count(), 0);
      const source = await api.get<{ name: string }>('/rest/latest/data-sources/ui-imported');
      assert.equal(source.body.name, 'From a file');
    } finally {
      await ctx.close();
    }
    assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violations');
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });

  it('renders Swagger UI under its Content-Security-Policy, never framed, and "Try it out" calls the API', async () => {
    const res = await fetch(app.url + '/swagger-ui/');
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/, 'no inline or eval scripts allowed');
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    await res.text();

    const swagger = await browser.newContext();
    const violations: string[] = [];
    const errors: string[] = [];
    try {
      const p = await swagger.newPage();
      p.setDefaultTimeout(20_000);
      p.on('console', (msg) => {
        if (/Content Security Policy|Refused to/i.test(msg.text())) violations.push(msg.text());
      });
      p.on('pageerror', (err) => errors.push(err.message));
      await p.goto(app.url + '/swagger-ui/');
      // The document is fetched and rendered: one operation block per route.
      const health = p.locator('.opblock', { hasText: '/auth-tokens/public-key' }).first();
      await health.waitFor();
      assert.ok((await p.locator('.opblock').count()) > 30, 'every operation rendered');
      await health.locator('.opblock-summary').click();
      await health.getByRole('button', { name: 'Try it out' }).click();
      await health.getByRole('button', { name: 'Execute' }).click();
      const status = health.locator('.live-responses-table .response .response-col_status').first();
      await status.filter({ hasText: '200' }).waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      await p.screenshot({ path: join(ARTIFACTS, 'swagger-ui.png') });

      assert.deepEqual(violations, [], 'no Content-Security-Policy violations while it renders and runs');
      assert.deepEqual(errors, [], 'no uncaught errors in the page');

      // A page elsewhere that frames it gets nothing (frame-ancestors 'none').
      const framer = createServer((_, out) => {
        out.writeHead(200, { 'Content-Type': 'text/html' });
        out.end(`<!doctype html><iframe id="f" src="${app.url}/swagger-ui/"></iframe>`);
      }).listen(0, '127.0.0.1');
      try {
        await new Promise((r) => framer.once('listening', r));
        await p.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`);
        const frame = p.frames().find((f) => f.url().includes('/swagger-ui/'));
        const rendered = frame ? await frame.locator('#swagger-ui').count().catch(() => 0) : 0;
        assert.equal(rendered, 0, 'Swagger UI rendered inside a foreign frame');
        assert.ok(violations.some((v) => /frame-ancestors 'none'/.test(v)), `the browser blocked the frame: ${violations.join(' | ')}`);
      } finally {
        framer.close();
      }
    } finally {
      await swagger.close();
    }
  });

  it("typechecks the console's TypeScript with its own tsconfig (DOM types)", function () {
    this.timeout(60_000);
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'web/tsconfig.json', '--noEmit'], { cwd: projectRoot, stdio: 'pipe' });
  });
});
