// The console in Debian's Chromium for browser suites: the service started on a fresh data dir, the
// console built when missing, a page logged in as admin, and the page's script errors and CSP
// violations collected (each suite asserts there are none). A missing browser skips the suite loudly,
// or fails it when TEST_REQUIRE_CHROMIUM is set (.ci/run sets it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WEB_CONSOLE_DIR } from '../../src/app.js';
import { projectRoot } from '../../src/paths.js';
import { startTestApp, type TestApp } from './app.js';
import { loggedIn, type ApiClient } from './client.js';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const REQUIRE_CHROMIUM = /^(1|true|yes|on)$/i.test(process.env.TEST_REQUIRE_CHROMIUM ?? '');
export const ARTIFACTS = join(projectRoot, 'test', 'artifacts');

export interface ConsoleSession {
  app: TestApp;
  /** The API as admin, for arranging what the page then shows. */
  api: ApiClient;
  browser: Browser;
  page: Page;
  /** Script errors thrown in the page. */
  pageErrors: string[];
  /** Console messages about Content-Security-Policy violations. */
  cspViolations: string[];
  close(): Promise<void>;
}

/**
 * Opens the console logged in as admin, or skips the calling suite (`ctx`) when there is no browser.
 * Time zone Europe/Berlin, 1280 × 1000 px.
 */
export async function openConsole(ctx: Mocha.Context, what: string): Promise<ConsoleSession> {
  if (!existsSync(CHROMIUM)) {
    const why = `Chromium not found at ${CHROMIUM}: install Debian's package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`;
    if (REQUIRE_CHROMIUM) throw new Error(`${why} (TEST_REQUIRE_CHROMIUM is set)`);
    console.log(`  !! skipped: ${what}. ${why}.`);
    ctx.skip();
  }
  if (!existsSync(join(WEB_CONSOLE_DIR, 'index.html'))) execFileSync(process.execPath, ['scripts/build-web.mjs'], { cwd: projectRoot, stdio: 'inherit' });
  const [app, browser] = await Promise.all([
    startTestApp(),
    chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] }),
  ]);
  const api = await loggedIn(app.url, 'admin', 'admin');
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, timezoneId: 'Europe/Berlin' });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
  await page.goto(app.url);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('admin');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    app,
    api,
    browser,
    page,
    pageErrors,
    cspViolations,
    async close() {
      await browser.close();
      await app.stop();
    },
  };
}

/** Each suite's afterEach: the page threw no script error and broke no Content-Security-Policy rule. */
export function assertPageClean(session: Pick<ConsoleSession, 'pageErrors' | 'cspViolations'>): void {
  assert.deepEqual(session.pageErrors, [], 'no script errors in the page');
  assert.deepEqual(session.cspViolations, [], 'no Content-Security-Policy violations');
}

/** Applies an RQL filter to a list of the data view (`#points-filter`, `#sources-filter`). */
export async function applyFilter(page: Page, form: '#points-filter' | '#sources-filter', rql: string): Promise<void> {
  const filter = page.locator(form);
  await filter.getByLabel('RQL filter').fill(rql);
  await filter.getByRole('button', { name: 'Apply' }).click();
}
