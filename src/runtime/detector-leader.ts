// Each value is judged once in a cluster: the event detectors run on the one instance holding their
// lease (the others relay the values of points with detectors to it);
// an instance without it looks every sweep whether their instance is gone. Alone, they just run.
import type { Logger } from 'pino';
import { FifoLock } from '../core/fifo-lock.js';

/** What the election needs of the detectors: start (rejects when they could not load) and stop. */
export interface LedDetectors {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The detectors' lease (kind `detectors`, id 0) in the cluster's leases. */
export interface DetectorLease {
  /** False for a single instance: nothing to elect. */
  readonly shared: boolean;
  tryAcquire(): Promise<boolean>;
  release(): Promise<void>;
  /** Told when the leases' connection is lost (every lease with it). */
  onLost(listener: () => void): void;
}

/** How often an instance without the detectors looks whether their instance is gone. */
export const DETECTOR_LEASE_SWEEP_MS = 2_000;

/** Runs the detectors here while this instance holds their lease; resolves after the first try. */
export async function runDetectorsOnOneInstance(detectors: LedDetectors, lease: DetectorLease, log: Logger, sweepMs = DETECTOR_LEASE_SWEEP_MS): Promise<{ stop(): Promise<void> }> {
  if (!lease.shared) {
    await detectors.start();
    return { stop: () => detectors.stop() };
  }
  let running = false;
  let stopped = false;
  // A lead, a loss and the stop change `running` one at a time, in the order they came.
  const turns = new FifoLock();
  const inTurn = (fn: () => Promise<void>) => turns.run(fn).catch((err: unknown) => log.warn({ err }, 'event detector lease failed'));
  const tryLead = () =>
    inTurn(async () => {
      if (stopped || running || !(await lease.tryAcquire())) return;
      running = true;
      try {
        await detectors.start();
      } catch (err) {
        // Not started (a store unavailable a moment): let the lease go for the next sweep, here or elsewhere.
        running = false;
        await detectors.stop();
        await lease.release();
        throw err;
      }
      log.info('event detectors run on this instance');
    });
  lease.onLost(
    () =>
      void inTurn(async () => {
        if (!running) return;
        running = false;
        await detectors.stop();
      }),
  );
  await tryLead();
  const sweep = setInterval(() => void tryLead(), sweepMs);
  sweep.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(sweep);
      await inTurn(async () => {
        if (!running) return;
        running = false;
        await detectors.stop();
        await lease.release();
      });
    },
  };
}
