// The Modbus TCP driver (src/runtime/modbus.ts) polling as fast as it can: 2,000 UINT16 HOLDING points
// on contiguous registers of a local ServerTCP (in this process, answering from an array), period 1 ms,
// a recording context that counts what is published. Figure: registers read per second with batching
// (16 requests of at most 125 registers per poll), counted where the device serves them, so a poll cut
// off by the end of the run counts its finished requests (an unbatched poll takes seconds). Baseline, in
// the same run: the same points with batching off (one request per point).
//   npm run bench -- modbus
//   node --import tsx bench/modbus.ts                       (this benchmark alone)
//   BENCH_SECONDS=3 npm run bench -- modbus                 (shorter runs)
import { pathToFileURL } from 'node:url';
import modbusSerial from 'modbus-serial';
import type { DriverFactory } from '../src/runtime/driver.js';
import { createModbusDriver, modbusDriverFactory } from '../src/runtime/modbus.js';
import { DEFAULT_PLAN } from '../src/runtime/modbus-codec.js';
import type { DataPointRecord } from '../src/store/metadata/data-points.js';
import type { DataSourceRecord } from '../src/store/metadata/data-sources.js';
import type { Benchmark } from './lib/benchmark.js';
import { progress } from './lib/benchmark.js';
import { loadSeconds } from './lib/load.js';
import { figure, printJsonLines, printTable, type Figure } from './lib/report.js';
import { benchPoints, benchSource, runDriver } from './lib/driver-run.js';
import { freePort } from './lib/server.js';

const POINTS = 2_000;

interface Device {
  port: number;
  /** Requests the server answered. */
  requests(): number;
  /** Registers the server read out. */
  registers(): number;
  close(): Promise<void>;
}

async function startDevice(): Promise<Device> {
  const port = await freePort();
  const registers = Array.from({ length: POINTS }, (_, i) => i);
  let requests = 0;
  let served = 0;
  // Synchronous vector functions (no callback parameter): ServerTCP answers from the array at once.
  const server = new modbusSerial.ServerTCP(
    {
      getMultipleHoldingRegisters: (addr: number, length: number, _unit: number) => {
        requests++;
        served += length;
        return registers.slice(addr, addr + length);
      },
      getHoldingRegister: (addr: number, _unit: number) => {
        requests++;
        served++;
        return registers[addr] ?? 0;
      },
    },
    { host: '127.0.0.1', port, unitID: 1 },
  );
  await new Promise<void>((resolve, reject) => {
    server.on('initialized', () => resolve());
    server.on('serverError', (err) => reject(err ?? new Error('server error')));
  });
  return { port, requests: () => requests, registers: () => served, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function points(): DataPointRecord[] {
  return benchPoints(POINTS, 'MODBUS_IP', (i) => ({ name: `register ${i}`, pointLocator: { offset: i, registerType: 'HOLDING', dataEncoding: 'UINT16', wordOrder: 'BIG', multiplier: 1, additive: 0 } }));
}

function source(port: number): DataSourceRecord {
  return benchSource('MODBUS_IP', { host: '127.0.0.1', port, unitId: 1, timeoutMs: 5_000, retries: 0 }, { updatePeriodType: 'MILLISECONDS' });
}

interface PollRun {
  registersPerSecond: number;
  /** Polls published (complete). */
  polls: number;
  valuesPublished: number;
  requests: number;
  faults: string[];
  seconds: number;
}

/** Runs one driver for `seconds` against a fresh device and counts what it published. */
async function measure(factory: DriverFactory, seconds: number): Promise<PollRun> {
  const device = await startDevice();
  const { values, polls, faults, elapsedMs } = await runDriver(factory, source(device.port), points(), seconds);
  const requests = device.requests();
  const registers = device.registers();
  await device.close();
  return { registersPerSecond: registers / (elapsedMs / 1000), polls, valuesPublished: values, requests, faults, seconds: elapsedMs / 1000 };
}

function summary(label: string, run: PollRun): string {
  const faults = run.faults.length > 0 ? `, ${run.faults.length} faults (${run.faults[0]})` : '';
  return (
    `${label}: ${run.registersPerSecond.toFixed(0)} registers/s, ${run.requests} requests in ${run.seconds.toFixed(1)} s, ` +
    `${run.polls} complete polls (${run.valuesPublished} values) published${faults}`
  );
}

export const modbus: Benchmark = {
  name: 'modbus',
  description: `Modbus TCP driver, ${POINTS.toLocaleString('en-US')} HOLDING points polled as fast as possible, batched vs one request per point`,
  async run(): Promise<Figure[]> {
    const seconds = loadSeconds(10);
    await measure(createModbusDriver, 1); // warm-up (JIT, first connection)
    const batched = await measure(createModbusDriver, seconds);
    progress(summary('batched', batched));
    const unbatched = await measure(modbusDriverFactory({ plan: { ...DEFAULT_PLAN, batching: false } }), seconds);
    progress(summary('one request per point', unbatched));
    const problems = [...batched.faults, ...unbatched.faults].length;
    const note = `${POINTS} points, ${seconds} s each, in-process ServerTCP; ${batched.polls} vs ${unbatched.polls} polls published${problems ? `; ${problems} faults` : ''}`;
    return [
      figure('modbus', 'registers read, batched', batched.registersPerSecond, 'registers/s', 'one request per point, registers/s', unbatched.registersPerSecond, note),
    ];
  },
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`## ${modbus.name}: ${modbus.description}`);
  const figures = await modbus.run();
  console.log('');
  printTable(figures);
  console.log('');
  printJsonLines(figures);
}
