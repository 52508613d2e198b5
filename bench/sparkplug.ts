// The Sparkplug B driver (src/runtime/sparkplug.ts) reading as fast as the broker delivers: an edge
// node in this process publishes an NBIRTH of 1,000 Double metrics (with aliases) to the Mosquitto on
// 127.0.0.1:1883, then NDATA messages of 100 metrics each by alias (QoS 1, 20 in flight), to one
// source with a point per metric and a recording context that counts what it accepts. Figure: values
// accepted per second through one source, from the first NDATA to the last value. Baseline, in the
// same run: sparkplug-payload decoding the same messages alone (the ceiling the decoder sets).
//   npm run bench -- sparkplug
//   node --import tsx bench/sparkplug.ts                     (this benchmark alone)
import { pathToFileURL } from 'node:url';
import mqtt from 'mqtt';
import { get } from 'sparkplug-payload';
import type { DriverContext, ProducedValue } from '../src/runtime/driver.js';
import { createSparkplugDriver } from '../src/runtime/sparkplug.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../src/store/metadata/data-sources.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { benchPoints, benchSource } from './lib/driver-run.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';
import { sleep } from './lib/stats.js';

const BROKER = 'mqtt://127.0.0.1:1883';
const METRICS = 1_000;
const PER_MESSAGE = 100;
const MESSAGES = 3_000;
const IN_FLIGHT = 20;
const codec = get('spBv1.0')!;

function points(): DataPointRecord[] {
  return benchPoints(METRICS, 'MQTT_CLIENT', (i) => ({ name: `m${i}`, pointLocator: { metricName: `m${i}` } }));
}

function source(group: string): DataSourceRecord {
  return benchSource('MQTT_CLIENT', { brokerUrl: BROKER, qos: 0, payloadFormat: 'SPARKPLUG_B', groupId: group, edgeNodeId: 'E', createPoints: false });
}

/** NDATA payloads: message k carries metrics (k × PER_MESSAGE … + PER_MESSAGE) mod METRICS by alias. */
function ndata(k: number): Uint8Array {
  const ts = Date.now();
  const metrics = Array.from({ length: PER_MESSAGE }, (_, j) => ({ alias: (k * PER_MESSAGE + j) % METRICS, type: 'Double' as const, value: k + j / 100, timestamp: ts }));
  return codec.encodePayload({ timestamp: ts, seq: (k + 1) % 256, metrics });
}

async function measure(): Promise<{ valuesPerSecond: number; accepted: number; faults: string[]; seconds: number }> {
  const group = `bench${process.pid}`;
  const controller = new AbortController();
  let accepted = 0;
  let last = 0;
  const faults: string[] = [];
  const ctx: DriverContext = {
    source: source(group), points: points(), unread: [], periodMs: 1_000, signal: controller.signal,
    accept(batch: readonly ProducedValue[]) {
      accepted += batch.length;
      last = performance.now();
      return Promise.resolve();
    },
    fault: (message) => faults.push(message),
    warn: (point, message) => faults.push(`${point.xid}: ${message}`),
    unreliable: () => undefined,
    recovered: () => undefined,
    lastValue: () => Promise.resolve(undefined),
  };
  const driver = createSparkplugDriver(ctx);
  await driver.start();
  const edge = await mqtt.connectAsync(BROKER, { clientId: `${group}-edge` });
  const birth = codec.encodePayload({
    timestamp: Date.now(), seq: 0,
    metrics: [{ name: 'bdSeq', type: 'UInt64', value: 0 }, ...Array.from({ length: METRICS }, (_, i) => ({ name: `m${i}`, alias: i, type: 'Double' as const, value: 0 }))],
  });
  // Until the driver has subscribed: its BIRTH values arrive.
  while (accepted < METRICS) {
    await edge.publishAsync(`spBv1.0/${group}/NBIRTH/E`, Buffer.from(birth), { qos: 1 });
    await sleep(200);
  }
  accepted = 0;
  const payloads = Array.from({ length: 256 }, (_, k) => Buffer.from(ndata(k)));
  const first = performance.now();
  const pending = new Set<Promise<unknown>>();
  for (let k = 0; k < MESSAGES; k++) {
    const p = edge.publishAsync(`spBv1.0/${group}/NDATA/E`, payloads[k % 256]!, { qos: 1 });
    pending.add(p);
    void p.finally(() => pending.delete(p));
    if (pending.size >= IN_FLIGHT) await Promise.race(pending);
  }
  await Promise.all(pending);
  for (let idle = 0; accepted < MESSAGES * PER_MESSAGE && idle < 20; idle++) {
    const before = accepted;
    await sleep(100);
    if (accepted !== before) idle = 0;
  }
  await edge.endAsync();
  await driver.stop();
  controller.abort();
  const seconds = (last - first) / 1000;
  return { valuesPerSecond: accepted / seconds, accepted, faults, seconds };
}

/** The same NDATA payloads decoded alone, values per second. */
function decodeOnly(): number {
  const payloads = Array.from({ length: 256 }, (_, k) => ndata(k));
  const started = performance.now();
  let values = 0;
  for (let k = 0; k < MESSAGES; k++) values += codec.decodePayload(payloads[k % 256]!).metrics?.length ?? 0;
  return values / ((performance.now() - started) / 1000);
}

export const sparkplug: Benchmark = {
  name: 'sparkplug',
  description: `Sparkplug B driver, NDATA of ${PER_MESSAGE} metrics by alias through one source (Mosquitto 127.0.0.1:1883) vs decoding alone`,
  async run(): Promise<Figure[]> {
    decodeOnly(); // warm-up
    const run = await measure();
    const decoded = decodeOnly();
    progress(`${run.accepted} of ${MESSAGES * PER_MESSAGE} values in ${run.seconds.toFixed(2)} s: ${run.valuesPerSecond.toFixed(0)} values/s; decoding alone ${decoded.toFixed(0)} values/s${run.faults.length ? `; ${run.faults.length} faults (${run.faults[0]})` : ''}`);
    const note = `${MESSAGES} NDATA × ${PER_MESSAGE} metrics, ${run.accepted} values accepted${run.faults.length ? `; ${run.faults.length} faults` : ''}`;
    return [figure('sparkplug', 'values accepted through one source', run.valuesPerSecond, 'values/s', 'decoding alone, values/s', decoded, note)];
  },
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`## ${sparkplug.name}: ${sparkplug.description}`);
  const figures = await sparkplug.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
