// The detectors' leader election (runtime/detector-leader.ts) over a lease the test holds in hand:
// the detectors run only while this instance holds the lease, a failed start gives it back, a lost
// connection stops them, and stop() releases it.
import assert from 'node:assert/strict';
import pino from 'pino';
import { runDetectorsOnOneInstance, type DetectorLease, type LedDetectors } from '../src/runtime/detector-leader.js';

const log = pino({ level: 'silent' });

class HandLease implements DetectorLease {
  readonly shared = true;
  free = true;
  held = false;
  private readonly lost: (() => void)[] = [];
  async tryAcquire(): Promise<boolean> {
    if (this.held) return true;
    if (!this.free) return false;
    this.free = false;
    return (this.held = true);
  }
  async release(): Promise<void> {
    if (this.held) this.free = true;
    this.held = false;
  }
  onLost(listener: () => void): void {
    this.lost.push(listener);
  }
  loseConnection(): void {
    this.held = false;
    this.free = true;
    for (const l of this.lost) l();
  }
}

class CountingDetectors implements LedDetectors {
  running = false;
  starts = 0;
  failNextStart = false;
  /** start() and stop() in the order they were called. */
  readonly calls: string[] = [];
  /** When set, start() waits for it (a slow load). */
  gate?: Promise<void>;
  async start(): Promise<void> {
    this.starts++;
    this.calls.push('start');
    await this.gate;
    if (this.failNextStart) {
      this.failNextStart = false;
      throw new Error('store unavailable');
    }
    this.running = true;
  }
  async stop(): Promise<void> {
    this.calls.push('stop');
    this.running = false;
  }
}

const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok(), what);
};

describe('detector leader election', () => {
  it('runs the detectors at once when nothing is shared', async () => {
    const detectors = new CountingDetectors();
    const leader = await runDetectorsOnOneInstance(detectors, { shared: false, tryAcquire: async () => false, release: async () => undefined, onLost: () => undefined }, log);
    assert.equal(detectors.running, true);
    await leader.stop();
    assert.equal(detectors.running, false);
  });

  it('leads only with the lease, takes over when it frees, and releases it on stop', async () => {
    const lease = new HandLease();
    lease.free = false; // held by another instance
    const detectors = new CountingDetectors();
    const leader = await runDetectorsOnOneInstance(detectors, lease, log, 10);
    assert.equal(detectors.running, false);
    lease.free = true; // that instance is gone
    await until('the sweep takes the lease over', () => detectors.running);
    assert.equal(lease.held, true);
    await leader.stop();
    assert.equal(detectors.running, false);
    assert.equal(lease.held, false, 'the lease went back');
    assert.equal(lease.free, true);
  });

  it('gives the lease back when the detectors cannot start, and tries again at the next sweep', async () => {
    const lease = new HandLease();
    const detectors = new CountingDetectors();
    detectors.failNextStart = true;
    const leader = await runDetectorsOnOneInstance(detectors, lease, log, 10);
    assert.equal(detectors.running, false);
    await until('started at a later sweep', () => detectors.running);
    assert.ok(detectors.starts >= 2);
    await leader.stop();
  });

  it('stops the detectors when the lease connection is lost, and leads again once it can', async () => {
    const lease = new HandLease();
    const detectors = new CountingDetectors();
    const leader = await runDetectorsOnOneInstance(detectors, lease, log, 10);
    assert.equal(detectors.running, true);
    lease.free = false; // someone else takes it the moment it is lost
    lease.loseConnection();
    lease.free = false;
    await until('stopped on the loss', () => !detectors.running);
    lease.free = true;
    await until('leading again', () => detectors.running);
    await leader.stop();
  });

  it('takes a loss during a start in its turn: the detectors stop once that start is over', async () => {
    const lease = new HandLease();
    lease.free = false;
    const detectors = new CountingDetectors();
    const leader = await runDetectorsOnOneInstance(detectors, lease, log, 10);
    let open!: () => void;
    detectors.gate = new Promise<void>((r) => (open = r));
    lease.free = true;
    await until('a sweep starts the detectors', () => detectors.calls.length === 1);
    lease.loseConnection();
    lease.free = false; // taken elsewhere at once: no sweep leads here again
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(detectors.calls, ['start'], 'the stop waits for the start under way');
    open();
    await until('stopped after the start', () => detectors.calls.length === 2);
    assert.deepEqual(detectors.calls, ['start', 'stop']);
    assert.equal(detectors.running, false);
    await leader.stop();
    assert.deepEqual(detectors.calls, ['start', 'stop'], 'nothing left to stop');
  });
});
