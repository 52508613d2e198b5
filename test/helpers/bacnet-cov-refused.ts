// Run as a child process by test/bacnet.test.ts: a BACNET_IP driver with covSubscribe against a
// simulated device (in this same process, as in the service's tests) that refuses every SubscribeCOV.
// It prints one line of JSON: the values polled, the device's counts, and the longest stall of the
// event loop seen by a 20 ms timer. Run in a child so that a blocked event loop makes the test fail
// by the parent's time-out instead of freezing mocha (whose own time-outs are timers too).
import { exampleDevice, OBJECT } from '../../scripts/bacnet-device.js';
import { bacnetDriverFactory } from '../../src/runtime/bacnet.js';
import { pointRecord, sourceRecord } from './records.js';
import { recordingContext } from './recording-context.js';
import { eventually, freeUdpPort } from './wait.js';

let last = Date.now();
let maxLagMs = 0;
const lag = setInterval(() => {
  const now = Date.now();
  maxLagMs = Math.max(maxLagMs, now - last - 20);
  last = now;
}, 20);

const device = exampleDevice(await freeUdpPort(), 78);
device.refuseCov = true;
await device.start();
const periodMs = 100;
const point = (id: number, objectType: string) =>
  pointRecord({ id, xid: `p${id}`, name: `p${id}`, deviceName: 'd', dataSourceName: 'd', dataSourceType: 'BACNET_IP', pointLocator: { property: 'PRESENT_VALUE', writePriority: 16, objectType, objectInstance: 1 } });
const points = [point(1, 'ANALOG_VALUE'), point(2, 'ANALOG_INPUT')];
const source = sourceRecord({
  name: 'd',
  modelType: 'BACNET_IP',
  updatePeriods: periodMs,
  updatePeriodType: 'MILLISECONDS',
  settings: { localPort: await freeUdpPort(), deviceInstance: device.deviceInstance, address: `127.0.0.1:${device.port}`, timeoutMs: 500, covSubscribe: true },
});
const { ctx, values, faults, abort } = recordingContext(source, points, periodMs);
// A 2 s lifetime: the refused subscriptions are tried again every second, between the polls.
const driver = bacnetDriverFactory({ covLifetimeS: 2 })(ctx);
await driver.start();
const seen = (id: number, value: number) => async () => (values.some((v) => v.point.id === id && v.value === value) ? true : undefined);
let error: string | null = null;
try {
  await eventually('AV 1 polled', seen(1, 21.5), 5_000);
  await eventually('AI 1 polled', seen(2, 8.25), 5_000);
  device.set(OBJECT.AV, 1, 24.25);
  await eventually('the change polled', seen(1, 24.25), 5_000);
  await eventually('the refused subscriptions tried again', async () => (device.counts.covRefused >= 4 ? true : undefined), 5_000);
} catch (err) {
  error = String(err);
}
await driver.stop();
abort();
device.stop();
clearInterval(lag);
process.stdout.write(`${JSON.stringify({ error, values: values.length, counts: device.counts, subscriptions: device.subscriptions.length, faults, maxLagMs })}\n`);
