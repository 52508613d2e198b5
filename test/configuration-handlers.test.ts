// Event handlers in the configuration export and import: exported as GET /event-handlers shows them
// (no id, no WEBHOOK secret), imported after the detectors and sources their matchers name (those of
// the same document found), checked by their kind, in the one transaction of the import.
import assert from 'node:assert/strict';
import { assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { created, exported, imported, type Doc, type Item } from './helpers/configuration.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const API = '/rest/latest';
const CFG = `${API}/configuration`;
const EH = `${API}/event-handlers`;


announceEngines();
for (const engine of metadataEngines()) {
  describe(`configuration export and import of event handlers (${engine})`, function () {
    this.timeout(120_000);
    let a: TestApp;
    let b: TestApp;
    let adminA: ApiClient;
    let adminB: ApiClient;

    /** The handlers as the API lists them, without ids. */
    async function handlers(client: ApiClient): Promise<Item[]> {
      const res = await client.get<{ items: Item[] }>(`${EH}?sort(xid)`);
      assert.equal(res.status, 200, res.text);
      return res.body.items.map(({ id: _id, ...rest }) => rest);
    }

    /** The document with the secret of each WEBHOOK handler (write-only: the export leaves it out). */
    const withSecrets = (doc: Doc): Doc => ({ ...doc, eventHandlers: doc.eventHandlers!.map((h) => (h.handlerType === 'WEBHOOK' ? { ...h, secret: `secret-of-${String(h.xid)}` } : h)) });

    before(async () => {
      // EMAIL handlers need SMTP settings to be saved (none is sent here).
      const mail = { SMTP_URL: 'smtp://127.0.0.1:2525', SMTP_FROM: 'alarms@example.com' };
      [a, b] = await Promise.all([startTestApp(engine, mail), startTestApp(engine, mail)]);
      [adminA, adminB] = await Promise.all([loggedIn(a.url, 'admin', 'admin'), loggedIn(b.url, 'admin', 'admin')]);
      await created(adminA, `${API}/data-sources`, { xid: 'cfgh-src', name: 'Plant', modelType: 'VIRTUAL', enabled: false, updatePeriods: 1, updatePeriodType: 'HOURS' });
      await created(adminA, `${API}/data-points`, { xid: 'cfgh-temp', name: 'Temperature', dataSourceXid: 'cfgh-src', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
      await created(adminA, `${API}/data-points`, { xid: 'cfgh-valve', name: 'Valve', dataSourceXid: 'cfgh-src', pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
      await created(adminA, `${API}/event-detectors`, { xid: 'cfgh-high', dataPointXid: 'cfgh-temp', detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 28 });
      await created(adminA, EH, {
        xid: 'cfgh-hook-1', name: 'Detector hook', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/alarm', headers: { Authorization: 'Bearer t-1' }, secret: 'secret-of-cfgh-hook-1',
        eventTypes: [{ eventType: 'DATA_POINT', referenceXid: 'cfgh-high', minAlarmLevel: 'WARNING' }, { eventType: 'DATA_SOURCE', referenceXid: 'cfgh-src' }],
      });
      // A SET_POINT handler whose target is a point of the same document, and an EMAIL one.
      await created(adminA, EH, {
        xid: 'cfgh-set', name: 'Close valve', handlerType: 'SET_POINT', targetPointXid: 'cfgh-valve', activeAction: 'STATIC_VALUE', activeValue: 0, inactiveAction: 'NONE',
        eventTypes: [{ eventType: 'DATA_POINT', referenceXid: 'cfgh-high' }],
      });
      await created(adminA, EH, {
        xid: 'cfgh-mail', name: 'Mail', handlerType: 'EMAIL', recipients: [{ type: 'ADDRESS', address: 'ops@example.com' }], sendOnInactive: true,
        eventTypes: [{ eventType: 'DATA_POINT', minAlarmLevel: 'URGENT' }],
      });
      await created(adminA, EH, { xid: 'cfgh-hook-2', name: 'System hook', disabled: true, handlerType: 'WEBHOOK', url: 'https://127.0.0.1:8443/sys', secret: 'secret-of-cfgh-hook-2', eventTypes: [{ eventType: 'SYSTEM' }] });
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
    });

    it('exports the handlers as the API shows them, by XID, without id or secret', async () => {
      const doc = await exported(adminA);
      assert.deepEqual(doc.eventHandlers, await handlers(adminA));
      assert.deepEqual(doc.eventHandlers!.map((h) => h.xid), ['cfgh-hook-1', 'cfgh-hook-2', 'cfgh-mail', 'cfgh-set']);
      for (const h of doc.eventHandlers!) {
        assert.equal(h.id, undefined);
        assert.equal(h.secret, undefined, 'the secret is write-only, as a source\'s password');
        assert.equal(JSON.stringify(h).includes('secret-of'), false);
      }
      assert.deepEqual(Object.keys(await exported(adminA, '?include=eventHandlers')), ['eventHandlers']);
    });

    it('round trip: export → import into a fresh instance gives the same handlers, matchers resolved to the document\'s detector and source', async () => {
      const doc = withSecrets(await exported(adminA, '?include=dataSources,dataPoints,eventDetectors,eventHandlers'));
      // Handlers come first in the document's text here: the import still applies them after the detectors.
      const reordered = { eventHandlers: doc.eventHandlers!, dataSources: doc.dataSources!, dataPoints: doc.dataPoints!, eventDetectors: doc.eventDetectors! };
      assert.deepEqual(await imported(adminB, reordered), { created: 1 + 2 + 1 + 4, updated: 0 });
      assert.deepEqual(await handlers(adminB), await handlers(adminA));
      const again = await exported(adminB, '?include=dataSources,dataPoints,eventDetectors,eventHandlers');
      assert.deepEqual(again, await exported(adminA, '?include=dataSources,dataPoints,eventDetectors,eventHandlers'));
      // The secret the document gave is the one B signs with.
      const id = (await adminB.get<{ id: number }>(`${EH}/cfgh-hook-1`)).body.id;
      assert.equal((await b.service.services.eventHandlers.definition(id))!.config.secret, 'secret-of-cfgh-hook-1');
    });

    it('importing the same handlers again changes nothing; without its secret a stored handler keeps it; a changed one is replaced', async () => {
      const doc = await exported(adminB, '?include=eventHandlers');
      assert.deepEqual(await imported(adminB, withSecrets(doc)), { created: 0, updated: 0 });
      assert.deepEqual(await imported(adminB, doc), { created: 0, updated: 0 }, 'no secret: the stored one is kept, nothing changes');
      const renamed = { eventHandlers: doc.eventHandlers!.map((h) => (h.xid === 'cfgh-hook-2' ? { ...h, name: 'System hook (renamed)', disabled: false } : h)) };
      assert.deepEqual(await imported(adminB, renamed), { created: 0, updated: 1 });
      const got = (await adminB.get<Item>(`${EH}/cfgh-hook-2`)).body;
      assert.deepEqual([got.name, got.disabled], ['System hook (renamed)', false]);
      const id = got.id as number;
      assert.equal((await b.service.services.eventHandlers.definition(id))!.config.secret, 'secret-of-cfgh-hook-2');
    });

    it('a bad handler is a 422 naming its place, and nothing of the document is written', async () => {
      const before = await exported(adminB);
      const doc: Doc = {
        dataSources: [{ xid: 'cfgh-new-src', name: 'New', modelType: 'VIRTUAL', enabled: false, updatePeriods: 1, updatePeriodType: 'HOURS' }],
        eventHandlers: [
          { xid: 'cfgh-new-1', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/a', secret: 's', eventTypes: [{ eventType: 'DATA_SOURCE', referenceXid: 'cfgh-new-src' }] },
          // Its kind's check: not an http(s) URL.
          { xid: 'cfgh-new-2', handlerType: 'WEBHOOK', url: 'ftp://127.0.0.1/a', secret: 's', eventTypes: [{ eventType: 'SYSTEM' }] },
          // A matcher naming a detector neither stored nor in the document.
          { xid: 'cfgh-new-3', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/c', secret: 's', eventTypes: [{ eventType: 'DATA_POINT', referenceXid: 'no-such-detector' }] },
          // A new WEBHOOK without its secret (the export leaves it out).
          { xid: 'cfgh-new-4', handlerType: 'WEBHOOK', url: 'http://127.0.0.1:9/d', eventTypes: [{ eventType: 'SYSTEM' }] },
          // The schema: an unknown type.
          { xid: 'cfgh-new-5', handlerType: 'PIGEON', eventTypes: [{ eventType: 'SYSTEM' }] },
          // SET_POINT's check, in the import's transaction: a target neither stored nor in the document.
          { xid: 'cfgh-new-6', handlerType: 'SET_POINT', targetPointXid: 'no-such-point', activeAction: 'STATIC_VALUE', activeValue: 1, eventTypes: [{ eventType: 'SYSTEM' }] },
        ],
      };
      const messages = assertValidation(await adminB.post(`${CFG}/import`, doc));
      const places = messages.map((m) => m.property);
      for (const p of ['eventHandlers[1].url', 'eventHandlers[2].eventTypes[0].referenceXid', 'eventHandlers[3].secret', 'eventHandlers[5].targetPointXid']) assert.ok(places.includes(p), `${p} in ${JSON.stringify(messages)}`);
      assert.ok(places.some((p) => p.startsWith('eventHandlers[4]')), JSON.stringify(messages));
      assert.equal(places.some((p) => p.startsWith('eventHandlers[0]')), false, 'the handler naming the document\'s new source is fine');
      assert.deepEqual(await exported(adminB), before, 'nothing written');
      assert.equal((await adminB.get(`${EH}/cfgh-new-1`)).status, 404);
      assert.equal((await adminB.get(`${API}/data-sources/cfgh-new-src`)).status, 404);
    });
  });
}
