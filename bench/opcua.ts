// The OPC_UA driver (src/runtime/opcua.ts) through one source: a node-opcua server in this process with
// 500 Double variables whose value changes at every read, monitored at a 10 ms sampling interval and
// published every 50 ms, security None; a recording context counts the values accepted. Figure:
// values per second through the one source. Baseline: the samples the server took (each a new value),
// so the ratio is the share of the server's changes that reached the pipeline. Server and client share
// this process (and its 2 cores): the figure is a floor for a remote server.
//   npm run bench -- opcua
//   node --import tsx bench/opcua.ts                        (this benchmark alone)
//   BENCH_SECONDS=3 npm run bench -- opcua                  (shorter runs)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DriverContext, ProducedValue } from '../src/runtime/driver.js';
import { opcuaDriverFactory } from '../src/runtime/opcua.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../src/store/metadata/data-sources.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { benchPoints, benchSource } from './lib/driver-run.js';
import { loadSeconds } from './lib/load.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';
import { freePort } from './lib/server.js';
import { sleep } from './lib/stats.js';

const POINTS = 500;
const SAMPLING_MS = 10;
const PUBLISHING_MS = 50;

interface Server {
  port: number;
  /** Values the server sampled (each one new). */
  samples(): number;
  close(): Promise<void>;
}

async function startServer(pkiDir: string): Promise<Server> {
  const ua = await import('node-opcua');
  const port = await freePort();
  const serverCertificateManager = new ua.OPCUACertificateManager({ rootFolder: join(pkiDir, 'server'), automaticallyAcceptUnknownCertificate: true });
  await serverCertificateManager.initialize();
  const server = new ua.OPCUAServer({ port, hostname: '127.0.0.1', serverCertificateManager, allowAnonymous: true, serverCapabilities: { minSupportedSampleRate: SAMPLING_MS } });
  await server.initialize();
  const space = server.engine.addressSpace!;
  const ns = space.getOwnNamespace();
  const folder = ns.addObject({ organizedBy: space.rootFolder.objects, browseName: 'Bench' });
  let samples = 0;
  for (let i = 0; i < POINTS; i++) {
    ns.addVariable({
      componentOf: folder,
      browseName: `V${i}`,
      nodeId: `s=V${i}`,
      dataType: 'Double',
      minimumSamplingInterval: SAMPLING_MS,
      value: { get: () => new ua.Variant({ dataType: ua.DataType.Double, value: ++samples }) },
    });
  }
  await server.start();
  return { port, samples: () => samples, close: () => server.shutdown(0) };
}

function points(): DataPointRecord[] {
  return benchPoints(POINTS, 'OPC_UA', (i) => ({ name: `V${i}`, pointLocator: { nodeId: `ns=1;s=V${i}`, samplingIntervalMs: SAMPLING_MS } }));
}

function source(port: number): DataSourceRecord {
  return benchSource('OPC_UA', { endpointUrl: `opc.tcp://127.0.0.1:${port}`, securityMode: 'None', publishingIntervalMs: PUBLISHING_MS });
}

interface Run {
  valuesPerSecond: number;
  samplesPerSecond: number;
  batches: number;
  faults: string[];
  seconds: number;
}

async function measure(seconds: number): Promise<Run> {
  const pkiDir = mkdtempSync(join(tmpdir(), 'bench-opcua-'));
  const server = await startServer(pkiDir);
  const controller = new AbortController();
  let values = 0;
  let batches = 0;
  let counting = false;
  const faults: string[] = [];
  const ctx: DriverContext = {
    source: source(server.port), points: points(), unread: [], periodMs: 1_000, signal: controller.signal,
    accept(batch: readonly ProducedValue[]) {
      if (counting) {
        values += batch.length;
        batches++;
      }
      return Promise.resolve();
    },
    fault: (message) => faults.push(message),
    warn: (point, message) => faults.push(`${point.xid}: ${message}`),
    unreliable: () => undefined, recovered: () => undefined, lastValue: () => Promise.resolve(undefined),
  };
  const driver = opcuaDriverFactory({ pkiDir: join(pkiDir, 'client') })(ctx);
  await driver.start();
  await sleep(3_000); // connect, subscribe, first values (not counted)
  counting = true;
  const samplesBefore = server.samples();
  const started = performance.now();
  await sleep(seconds * 1000);
  counting = false;
  const elapsed = (performance.now() - started) / 1000;
  const samples = server.samples() - samplesBefore;
  controller.abort();
  await driver.stop();
  await server.close();
  rmSync(pkiDir, { recursive: true, force: true });
  return { valuesPerSecond: values / elapsed, samplesPerSecond: samples / elapsed, batches, faults, seconds: elapsed };
}

export const opcua: Benchmark = {
  name: 'opcua',
  description: `OPC UA driver, ${POINTS} changing Double nodes by subscription (sampling ${SAMPLING_MS} ms, publishing ${PUBLISHING_MS} ms), server in process`,
  async run(): Promise<Figure[]> {
    const seconds = loadSeconds(5);
    const run = await measure(seconds);
    const faults = run.faults.length > 0 ? `; ${run.faults.length} faults (${run.faults[0]})` : '';
    progress(`${run.valuesPerSecond.toFixed(0)} values/s accepted, ${run.samplesPerSecond.toFixed(0)} samples/s on the server, ${run.batches} batches in ${run.seconds.toFixed(1)} s${faults}`);
    return [figure('opcua', 'values accepted through one source', run.valuesPerSecond, 'values/s', 'server samples (changes), values/s', run.samplesPerSecond, `${POINTS} points, ${seconds} s, ${run.batches} batches${faults}`)];
  },
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`## ${opcua.name}: ${opcua.description}`);
  const figures = await opcua.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
