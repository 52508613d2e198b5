// Every view and every editor or dialog of the console at 1280 px and at 400 px: none is wider than
// the screen (the page does not scroll sideways, and no shown control or text reaches past the
// screen's right edge, not even inside a panel that scrolls; wide tables and charts scroll inside
// their panel). Each state is photographed: test/artifacts/layout-<width>-<state>.png; a finding in any of them fails
// the audit.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { ApiClient, List } from './helpers/client.js';
import { applyFilter, ARTIFACTS, assertPageClean, openConsole, type ConsoleSession } from './helpers/console-browser.js';
import { eventually } from './helpers/wait.js';

interface Overflow {
  scrollWidth: number;
  innerWidth: number;
  /** Shown elements whose right edge is past the screen's (not in a table or chart, not clipped away). */
  beyond: { element: string; right: number }[];
}

/**
 * Measured in the page (plain script text: the tests' TypeScript has no DOM types): see Overflow. Not
 * counted: what is clipped away (screen-reader text, a card table's head) and what is in a table or a
 * chart (wide tables and charts scroll inside their panel by design). A form control or text past the
 * edge counts, also inside a panel that scrolls: the operator would have to scroll sideways to reach it.
 */
const MEASURE = `(() => {
  const width = window.innerWidth;
  const beyond = [];
  const describe = (el) => {
    const path = [];
    for (let e = el; e && e !== document.body && path.length < 4; e = e.parentElement) {
      const cls = typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\\s+/).join('.') : '';
      path.unshift(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + cls);
      if (e.id) break;
    }
    return path.join(' > ');
  };
  for (const el of document.body.querySelectorAll('*')) {
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0 || rect.right <= width + 0.5) continue;
    let exempt = false;
    for (let a = el; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).clip !== 'auto' || a.tagName === 'TABLE' || a.classList.contains('chart')) exempt = true;
    }
    // One finding per branch: an element whose parent is already listed is not.
    if (!exempt && !beyond.some((b) => el.parentElement && describe(el.parentElement) === b.element)) beyond.push({ element: describe(el), right: Math.round(rect.right) });
  }
  return { scrollWidth: document.documentElement.scrollWidth, innerWidth: width, beyond };
})()`;

interface State {
  name: string;
  open(page: Page): Promise<void>;
}

const SOURCE_TYPES = ['VIRTUAL', 'MODBUS_IP', 'MQTT_CLIENT', 'SPARKPLUG_B', 'LINE_PROTOCOL', 'META', 'OPC_UA', 'BACNET_IP'] as const;
const LONG = 'Boiler house north – supply water temperature after the mixing valve';

describe('web console: no view wider than the screen, at 1280 px and 400 px (Chromium)', function () {
  this.timeout(300_000);
  let session: ConsoleSession;
  let api: ApiClient;
  const sourceOf: Record<string, string> = {};
  let pointXid = '';

  async function created<T>(path: string, body: Record<string, unknown>): Promise<T> {
    const res = await api.post<T>(`/rest/latest${path}`, body);
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  before(async function () {
    session = await openConsole(this, 'the console layout audit');
    ({ api } = session);
    // A source of each type (those that would connect somewhere disabled), with long names.
    const bodies: Record<(typeof SOURCE_TYPES)[number], Record<string, unknown>> = {
      VIRTUAL: { modelType: 'VIRTUAL', enabled: true },
      MODBUS_IP: { modelType: 'MODBUS_IP', host: '127.0.0.1', enabled: false },
      MQTT_CLIENT: { modelType: 'MQTT_CLIENT', brokerUrl: 'mqtt://127.0.0.1:1', enabled: false },
      SPARKPLUG_B: { modelType: 'MQTT_CLIENT', payloadFormat: 'SPARKPLUG_B', brokerUrl: 'mqtt://127.0.0.1:1', enabled: false },
      LINE_PROTOCOL: { modelType: 'LINE_PROTOCOL', enabled: true },
      META: { modelType: 'META', enabled: true },
      OPC_UA: { modelType: 'OPC_UA', endpointUrl: 'opc.tcp://127.0.0.1:1', enabled: false },
      BACNET_IP: { modelType: 'BACNET_IP', deviceInstance: 1, enabled: false },
    };
    for (const type of SOURCE_TYPES) sourceOf[type] = (await created<{ xid: string }>('/data-sources', { name: `Layout ${type} source of the north boiler house`, ...bodies[type] })).xid;
    const point = await created<{ xid: string }>('/data-points', {
      name: LONG,
      deviceName: 'North boiler house mixing circuit 2',
      dataSourceXid: sourceOf.VIRTUAL,
      unit: '°C',
      pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' },
      setPermission: ['user'],
    });
    pointXid = point.xid;
    await created('/event-detectors', { name: 'Supply water too hot for the floor heating', dataPointXid: pointXid, detectorType: 'HIGH_LIMIT', alarmLevel: 'CRITICAL', limit: 50 });
    await created('/event-handlers', { name: 'Night shift webhook for the boiler house alarms', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:1/hooks/boiler-house/alarms', secret: 'layout-audit-secret', eventTypes: [{ eventType: 'DATA_POINT', minAlarmLevel: 'URGENT' }] });
    for (const value of [40, 72.123456]) assert.equal((await api.put(`/rest/latest/point-values/${pointXid}`, { dataType: 'NUMERIC', value })).status, 200);
    await eventually('the alarm', async () => ((await api.get<List<unknown>>(`/rest/latest/events?eq(dataPointXid,${pointXid})`)).body.total > 0 ? true : undefined), 15_000);
  });

  after(async function () {
    await session?.close();
  });

  afterEach(() => assertPageClean(session));

  const view = (name: string) => async (page: Page) => {
    await page.locator('#nav').getByRole('button', { name, exact: false }).first().click();
  };
  const showPoint = async (page: Page) => {
    await view('Sources and points')(page);
    await applyFilter(page, '#points-filter', `eq(xid,${pointXid})`);
    await page.locator(`#points-table tr[data-xid="${pointXid}"], #points-table tbody tr`).first().waitFor();
    // At 400 px a point's other actions are behind its More button.
    const more = page.locator(`#points-table tr[data-xid="${pointXid}"] button.row-more`);
    if ((await more.isVisible()) && (await more.getAttribute('aria-expanded')) !== 'true') await more.click();
  };
  const closeAll = async (page: Page) => {
    for (const id of ['source-editor-close', 'point-editor-close', 'detector-editor-close', 'set-close', 'settings-close', 'handler-editor-close', 'deliveries-close']) {
      const b = page.locator(`#${id}`);
      if (await b.isVisible()) await b.click();
    }
  };

  const states: State[] = [
    {
      // The sources list with its rows, and the point list.
      name: 'sources-and-points',
      async open(page) {
        await closeAll(page);
        await view('Sources and points')(page);
        await page.locator('#sources-filter').getByRole('button', { name: 'Apply' }).click();
        await page.locator('#sources-table tbody tr').nth(SOURCE_TYPES.length - 1).waitFor();
      },
    },

    ...SOURCE_TYPES.filter((t) => t !== 'SPARKPLUG_B').map(
      (type): State => ({
        name: `source-editor-${type}`,
        async open(page) {
          await closeAll(page);
          await view('Sources and points')(page);
          await page.getByRole('button', { name: 'New data source' }).click();
          await page.locator('#source-editor-form').getByLabel('Type').selectOption(type);
          if (type === 'MQTT_CLIENT') await page.locator('#source-editor-form').getByLabel('Payload format').selectOption('SPARKPLUG_B');
          if (type === 'OPC_UA') await page.locator('#source-editor-form').getByLabel('Security mode').selectOption('SignAndEncrypt');
        },
      }),
    ),
    ...SOURCE_TYPES.map(
      (type): State => ({
        name: `point-editor-${type}`,
        async open(page) {
          await closeAll(page);
          await view('Sources and points')(page);
          await page.getByRole('button', { name: 'New data point' }).click();
          await page.locator('#point-editor-form select[name="dataSourceXid"]').selectOption(sourceOf[type]!);
          if (type === 'META') await page.locator('#point-editor-context').getByRole('button', { name: 'Add to context' }).click();
          if (type === 'OPC_UA') await page.locator('#point-editor-browse-button').click();
        },
      }),
    ),
    {
      name: 'point-editor-existing',
      async open(page) {
        await closeAll(page);
        await showPoint(page);
        await page.getByRole('button', { name: `Edit ${LONG}`, exact: true }).click();
        await page.locator('#point-editor-panel').waitFor();
      },
    },
    {
      name: 'detector-editor',
      async open(page) {
        await closeAll(page);
        await showPoint(page);
        await page.getByRole('button', { name: `Detectors of ${LONG}` }).click();
        await page.locator('#detectors-table tbody tr').first().waitFor();
        await page.locator('#detector-new').click();
      },
    },
    {
      name: 'set-value',
      async open(page) {
        await closeAll(page);
        await showPoint(page);
        await page.getByRole('button', { name: `Set ${LONG}`, exact: true }).click();
        await page.locator('#set-panel').waitFor();
      },
    },
    {
      name: 'point-settings',
      async open(page) {
        await closeAll(page);
        await showPoint(page);
        await page.getByRole('button', { name: `Settings of ${LONG}` }).click();
        await page.locator('#settings-panel').waitFor();
      },
    },
    {
      name: 'trend',
      async open(page) {
        await closeAll(page);
        await showPoint(page);
        await page.getByRole('button', { name: `Trend of ${LONG}` }).click();
        await page.locator('#trend-view').waitFor();
      },
    },
    {
      name: 'alarms',
      async open(page) {
        await view('Alarms')(page);
        await page.locator('#alarms-table tbody tr').first().waitFor();
      },
    },
    {
      name: 'alarm-comments',
      async open(page) {
        await view('Alarms')(page);
        await page.locator('#alarms-table tbody tr').first().getByRole('button', { name: /Comment/ }).first().click();
        await page.locator('#alarm-comments-panel').waitFor();
      },
    },
    { name: 'handlers', open: view('Event handlers') },
    ...['WEBHOOK', 'EMAIL', 'SET_POINT'].map(
      (type): State => ({
        name: `handler-editor-${type}`,
        async open(page) {
          await closeAll(page);
          await view('Event handlers')(page);
          await page.locator('#handler-new').click();
          const form = page.locator('#handler-editor-form');
          await form.getByLabel('Handler type').selectOption(type);
          if (type === 'EMAIL') await form.getByLabel('Escalate while active and unacknowledged').check();
          if (type === 'SET_POINT') await form.locator('select[name="inactiveAction"]').selectOption('POINT_VALUE');
          await page.locator('#handler-matcher-add').click();
        },
      }),
    ),
    {
      name: 'handler-deliveries',
      async open(page) {
        await closeAll(page);
        await view('Event handlers')(page);
        await page.locator('#handlers-table tbody tr').first().getByRole('button', { name: /^Deliveries/ }).click();
        await page.locator('#deliveries-panel').waitFor();
      },
    },
    { name: 'configuration', open: view('Configuration') },
    {
      name: 'users',
      async open(page) {
        await view('Users')(page);
        await page.locator('#users-view table tbody tr').first().waitFor();
      },
    },
    {
      name: 'account',
      async open(page) {
        await page.locator('#account-nav').click();
        await page.locator('#account-content').getByRole('button').first().waitFor();
      },
    },
  ];

  for (const width of [1280, 400]) {
    it(`keeps every view and editor within ${width} px`, async () => {
      const { page } = session;
      await page.setViewportSize({ width, height: 900 });
      const failures: string[] = [];
      for (const state of states) {
        await state.open(page);
        // Layout settles after the last click (a list filled by a request): measure twice, the same.
        const found = await eventually(`a settled layout of ${state.name}`, async () => {
          const a = await page.evaluate<Overflow>(MEASURE);
          await page.waitForTimeout(50);
          const b = await page.evaluate<Overflow>(MEASURE);
          return JSON.stringify(a) === JSON.stringify(b) ? b : undefined;
        }, 10_000, 100);
        await page.screenshot({ path: join(ARTIFACTS, `layout-${width}-${state.name}.png`), fullPage: true });
        const problems = [
          ...(found.scrollWidth > found.innerWidth ? [`the page is ${found.scrollWidth} px wide`] : []),
          ...found.beyond.slice(0, 5).map((b) => `${b.element} reaches ${b.right} px`),
        ];
        if (problems.length === 0) continue;
        const line = `${width} px, ${state.name}: ${problems.join('; ')}${found.beyond.length > 5 ? ` (and ${found.beyond.length - 5} more)` : ''}`;
        failures.push(line);
      }
      await closeAll(page);
      assert.deepEqual(failures, [], 'no view or editor wider than the screen');
    });
  }
});
