// The cluster's parts on a real PostgreSQL: the NOTIFY channel (batching under the payload limit,
// order, own messages ignored, resync after a lost connection) and the leases (one holder, freed
// when its connection ends, onLost when this instance loses it).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { channelName, packPayloads, postgresChannel, RESYNC, type ClusterChannel } from '../src/store/cluster/channel.js';
import { postgresLeases, type Leases } from '../src/store/cluster/leases.js';
import { testDatabaseUrl } from './helpers/engines.js';
import { eventually } from './helpers/wait.js';

const log = pino({ level: 'silent' });

describe('cluster channel: payloads', () => {
  it('packs messages into payloads under 8,000 bytes, in order, and drops (only) a message too long alone', () => {
    const messages = Array.from({ length: 500 }, (_, i) => `live\t{"i":${i},"pad":"${'x'.repeat(i % 90)}"}`);
    const payloads = packPayloads('sender', [...messages.slice(0, 250), 'big\t' + 'y'.repeat(9_000), ...messages.slice(250)]);
    assert.ok(payloads.length > 1);
    for (const p of payloads) {
      assert.ok(Buffer.byteLength(p) < 8_000, `${Buffer.byteLength(p)} bytes`);
      assert.ok(p.startsWith('sender\n'));
    }
    assert.deepEqual(payloads.flatMap((p) => p.split('\n').slice(1)), messages);
  });

  it('names the channel after the installation, as a plain identifier', () => {
    assert.equal(channelName('5F0C1E3A-9B2D-4C1E-8F00-1234567890AB'), 'dds_5f0c1e3a9b2d4c1e8f001234567890ab');
  });
});

const describePg = testDatabaseUrl ? describe : describe.skip;
if (!testDatabaseUrl) console.log('  skipped: the cluster channel and lease cases need TEST_DATABASE_URL (PostgreSQL)');

describePg('cluster channel and leases on PostgreSQL', function () {
  this.timeout(30_000);
  const url = testDatabaseUrl!;
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });

  async function channel(installation: string): Promise<ClusterChannel> {
    const c = await postgresChannel({ url, installation, instanceId: randomUUID(), log });
    opened.push(c);
    return c;
  }

  async function leases(installation: string): Promise<Leases> {
    const l = await postgresLeases({ url, installation, log });
    opened.push(l);
    return l;
  }

  it('carries 10,000 messages a second to the other instance, in order, and not to the sender', async () => {
    const installation = randomUUID();
    const [a, b] = [await channel(installation), await channel(installation)];
    const other = await channel(randomUUID());
    const atB: number[] = [];
    const atA: number[] = [];
    const atOther: number[] = [];
    b.subscribe('live', (body) => atB.push(Number(body)));
    a.subscribe('live', (body) => atA.push(Number(body)));
    other.subscribe('live', (body) => atOther.push(Number(body)));
    const started = performance.now();
    // 10,000 values over one second, in ticks of 10 ms, each message the size of a relayed value.
    for (let tick = 0; tick < 100; tick++) {
      for (let i = 0; i < 100; i++) a.tell('live', String(tick * 100 + i).padEnd(140, ' '));
      await new Promise((r) => setTimeout(r, 10));
    }
    await eventually('all 10,000 at B', async () => (atB.length >= 10_000 ? true : undefined), 10_000, 10);
    const seconds = (performance.now() - started) / 1000;
    console.log(`      10,000 messages delivered in ${seconds.toFixed(2)} s`);
    assert.ok(seconds < 2, `kept up: ${seconds} s`);
    assert.deepEqual(atB, Array.from({ length: 10_000 }, (_, i) => i));
    assert.equal(atA.length, 0, 'the sender does not hear itself');
    assert.equal(atOther.length, 0, 'another installation hears nothing');
  });

  it('tells its subscribers to resync once its connection is back', async () => {
    const installation = randomUUID();
    const c = await channel(installation);
    let resyncs = 0;
    c.subscribe(RESYNC, () => resyncs++);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const { rows } = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where query = $1`, [`LISTEN ${channelName(installation)}`]);
    assert.equal(rows.length, 1, 'its listening connection');
    await admin.end();
    await eventually('a resync', async () => (resyncs > 0 ? true : undefined), 10_000);
  });

  it('grants a lease to one instance at a time; it is freed when its holder closes, and lost with its connection', async () => {
    const installation = randomUUID();
    const a = await leases(installation);
    const b = await leases(installation);
    assert.equal(await a.tryAcquire('source', 7), true);
    assert.equal(await a.tryAcquire('source', 7), true, 'held already');
    assert.equal(await b.tryAcquire('source', 7), false);
    assert.equal(await b.tryAcquire('source', 8), true, 'another id');
    assert.equal(await (await leases(randomUUID())).tryAcquire('source', 7), true, 'another installation');
    await a.release('source', 7);
    assert.equal(await b.tryAcquire('source', 7), true);

    let lost = 0;
    b.onLost(() => lost++);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, [`device-data-service leases ${process.pid}`]);
    await admin.end();
    await eventually('onLost', async () => (lost > 0 ? true : undefined), 10_000);
    const c = await leases(installation);
    assert.equal(await c.tryAcquire('source', 7), true, 'freed with the connection');
  });
});
