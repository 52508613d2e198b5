// Two instances on one PostgreSQL schema: each event's webhook is delivered once in the cluster,
// whichever instance raised the event and whichever claims the job.
import assert from 'node:assert/strict';
import { ApiClient, getList, loggedIn } from './helpers/client.js';
import { dropSchema, newSchemaName, testDatabaseUrl } from './helpers/engines.js';
import { HttpReceiver } from './helpers/http-receiver.js';
import { startInstance, stopInstance, type Instance } from './helpers/instances.js';
import { eventually } from './helpers/wait.js';

const API = '/rest/latest';
const describeCluster = testDatabaseUrl ? describe : describe.skip;

describeCluster('event handlers in a cluster (two instances, one PostgreSQL schema)', function () {
  this.timeout(120_000);
  const schema = newSchemaName();
  const receiver = new HttpReceiver();
  const instances: Instance[] = [];
  let admin: ApiClient;

  before(async () => {
    const port = await receiver.listen();
    // Short poll and retry periods: a claimed job is delivered within the test's waits.
    const env = { EVENT_HANDLER_POLL_MS: '100', EVENT_HANDLER_RETRY_MS: '100' };
    instances.push(await startInstance(schema, 'handlers-a', { env }));
    instances.push(await startInstance(schema, 'handlers-b', { env }));
    admin = await loggedIn(instances[0]!.service.url, 'admin', 'admin');
    const res = await admin.post(`${API}/event-handlers`, {
      xid: 'cluster-hook', name: 'Cluster', handlerType: 'WEBHOOK', url: `http://127.0.0.1:${port}/hook`, secret: 'cluster-secret',
      eventTypes: [{ eventType: 'SYSTEM' }, { eventType: 'DATA_POINT' }],
    });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    for (const i of instances) await stopInstance(i);
    await receiver.close();
    await dropSchema(schema);
  });

  it('delivers each event once, events raised on both instances at once', async () => {
    const perInstance = 15;
    const raised = await Promise.all(
      instances.flatMap((instance, n) =>
        Array.from({ length: perInstance }, (_, i) =>
          instance.service.services.events.raise({ alarmLevel: 'URGENT', eventType: 'SYSTEM', subType: 'TEST', message: `instance ${n} event ${i}` }),
        ),
      ),
    );
    const ids = raised.map((e) => e.id).sort((a, b) => a - b);
    assert.equal(new Set(ids).size, perInstance * 2);
    await eventually('every event delivered', async () => (receiver.requests.length >= ids.length ? true : undefined), 30_000);
    // Time for a second delivery of anything, were there one: several poll periods of both instances.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const delivered = receiver.bodies<{ action: string; event: { id: number } }>().map((b) => b.event.id).sort((a, b) => a - b);
    assert.deepEqual(delivered, ids, 'each event exactly once');
    const attempts = instances.map((i) => i.service.services.handlerJobs.attempts);
    assert.equal(attempts[0]! + attempts[1]!, ids.length, `one attempt per event in the cluster (${attempts.join(' + ')})`);
    assert.ok(attempts.every((n) => n > 0), `both instances delivered (${attempts.join(' + ')})`);
    const list = await getList<{ outcome: string; eventId: number }>(admin, `${API}/event-handlers/cluster-hook/deliveries?limit(1000)`);
    assert.equal(list.total, ids.length);
    assert.ok(list.items.every((d) => d.outcome === 'SENT'));
    const other = await loggedIn(instances[1]!.service.url, 'admin', 'admin');
    assert.equal((await getList(other, `${API}/event-handlers/cluster-hook/deliveries`)).total, ids.length, 'the other instance lists the same deliveries');
  });

  it('delivers the webhook of an event a detector raises once, whichever instance received the value', async () => {
    receiver.requests.length = 0;
    let res = await admin.post(`${API}/data-sources`, { xid: 'cl-src', name: 'Cluster source', modelType: 'VIRTUAL', enabled: true, updatePeriods: 1, updatePeriodType: 'HOURS' });
    assert.equal(res.status, 201, res.text);
    res = await admin.post(`${API}/data-points`, { xid: 'cl-p', name: 'P', dataSourceXid: 'cl-src', pointLocator: { dataType: 'NUMERIC', settable: true, changeType: 'NO_CHANGE' } });
    assert.equal(res.status, 201, res.text);
    res = await admin.post(`${API}/event-detectors`, { xid: 'cl-ed', dataPointXid: 'cl-p', detectorType: 'HIGH_LIMIT', alarmLevel: 'URGENT', limit: 80 });
    assert.equal(res.status, 201, res.text);
    const clients = [admin, await loggedIn(instances[1]!.service.url, 'admin', 'admin')];
    let ts = Date.now() - 60_000;
    for (let i = 0; i < 3; i++) {
      for (const [n, value] of [[0, 90], [1, 50]] as const) {
        const w = await clients[n]!.post(`${API}/point-values`, [{ xid: 'cl-p', value, timestamp: (ts += 100) }]);
        assert.equal(w.status, 200, w.text);
        await eventually('the detector saw it', async () => {
          const events = (await getList<{ active: boolean }>(admin, `${API}/events?dataPointXid=cl-p&sort(-id)&limit(1)`)).items;
          return events[0] && events[0].active === (value > 80) ? true : undefined;
        });
      }
    }
    const events = (await getList<{ id: number }>(admin, `${API}/events?dataPointXid=cl-p`)).items;
    assert.equal(events.length, 3);
    await eventually('RAISED and RETURN_TO_NORMAL of each delivered', async () => (receiver.requests.length >= 6 ? true : undefined), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const got = receiver.bodies<{ action: string; event: { id: number } }>().map((b) => `${b.event.id} ${b.action}`).sort();
    const expected = events.flatMap((e) => [`${e.id} RAISED`, `${e.id} RETURN_TO_NORMAL`]).sort();
    assert.deepEqual(got, expected);
  });
});
