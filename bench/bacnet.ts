// The BACnet/IP driver (src/runtime/bacnet.ts) polling as fast as it can: 200 ANALOG_VALUE points of
// a simulated device (scripts/bacnet-device.ts, in this process, over UDP on 127.0.0.1), period 1 ms,
// a recording context that counts the values handed on. Figure: values per second through one
// source with ReadPropertyMultiple (5 requests of 40 objects per poll). Baseline, in the same run: the
// same device refusing RPM, so one ReadProperty per point.
//   npm run bench -- bacnet
//   BENCH_SECONDS=3 node --import tsx bench/bacnet.ts
import { pathToFileURL } from 'node:url';
import { BacnetDevice, OBJECT } from '../scripts/bacnet-device.js';
import { createBacnetDriver } from '../src/runtime/bacnet.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../src/store/metadata/data-sources.js';
import { freeUdpPort } from '../test/helpers/wait.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { benchPoints, benchSource, runDriver } from './lib/driver-run.js';
import { loadSeconds } from './lib/load.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';

const POINTS = 200;

function points(): DataPointRecord[] {
  return benchPoints(POINTS, 'BACNET_IP', (i) => ({ name: `AV ${i}`, pointLocator: { objectType: 'ANALOG_VALUE', objectInstance: i, property: 'PRESENT_VALUE', writePriority: 16 } }));
}

function source(localPort: number, devicePort: number): DataSourceRecord {
  const settings = { localPort, broadcastAddress: `127.0.0.1:${devicePort}`, deviceInstance: 1, address: `127.0.0.1:${devicePort}`, covSubscribe: false, timeoutMs: 5_000 };
  return benchSource('BACNET_IP', settings, { updatePeriodType: 'MILLISECONDS' });
}

interface PollRun {
  valuesPerSecond: number;
  polls: number;
  faults: string[];
  seconds: number;
}

async function measure(refuseRpm: boolean, seconds: number): Promise<PollRun> {
  const device = new BacnetDevice(await freeUdpPort(), 1);
  for (let i = 0; i < POINTS; i++) device.add(OBJECT.AV, i, `AV ${i}`, i / 4);
  device.refuseRpm = refuseRpm;
  await device.start();
  const { values, polls, faults, elapsedMs } = await runDriver(createBacnetDriver, source(await freeUdpPort(), device.port), points(), seconds);
  const elapsed = elapsedMs / 1000;
  device.stop();
  return { valuesPerSecond: values / elapsed, polls, faults, seconds: elapsed };
}

export const bacnet: Benchmark = {
  name: 'bacnet',
  description: `BACnet/IP driver, ${POINTS} ANALOG_VALUE points of a simulated device polled as fast as possible, ReadPropertyMultiple vs ReadProperty`,
  async run(): Promise<Figure[]> {
    const seconds = loadSeconds(5);
    await measure(false, 1); // warm-up (JIT, the stack's first load)
    const rpm = await measure(false, seconds);
    progress(`RPM: ${rpm.valuesPerSecond.toFixed(0)} values/s, ${rpm.polls} polls in ${rpm.seconds.toFixed(1)} s${rpm.faults.length ? `, faults: ${rpm.faults[0]}` : ''}`);
    const rp = await measure(true, seconds);
    progress(`ReadProperty: ${rp.valuesPerSecond.toFixed(0)} values/s, ${rp.polls} polls in ${rp.seconds.toFixed(1)} s${rp.faults.length ? `, faults: ${rp.faults[0]}` : ''}`);
    const note = `${POINTS} points, ${seconds} s each, device in-process on 127.0.0.1; ${rpm.polls} vs ${rp.polls} polls`;
    return [figure('bacnet', 'values through one source, ReadPropertyMultiple', rpm.valuesPerSecond, 'values/s', 'one ReadProperty per point, values/s', rp.valuesPerSecond, note)];
  },
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`## ${bacnet.name}: ${bacnet.description}`);
  const figures = await bacnet.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
