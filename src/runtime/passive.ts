// A source whose values are pushed to the service (LINE_PROTOCOL: POST /write, /api/v2/write) runs no
// producer: its driver only lets the runtime show it RUNNING while it is enabled. The routes refuse
// writes to a disabled source themselves (services/line-protocol.ts).
import type { DriverFactory } from './driver.js';

export const createPassiveDriver: DriverFactory = () => ({
  start: () => Promise.resolve(),
  stop: () => Promise.resolve(),
});
