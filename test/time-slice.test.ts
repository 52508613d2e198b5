// Cooperative scheduling (src/core/time-slice.ts): a yield is a real turn of the event loop, and a
// slice yields only once it has run for its budget.
import assert from 'node:assert/strict';
import { TimeSlice, yieldToEventLoop } from '../src/core/time-slice.js';

describe('yieldToEventLoop', () => {
  it('lets a waiting setImmediate callback run before it resumes, which a settled promise does not', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('immediate'));
    await Promise.resolve();
    order.push('after microtask');
    await yieldToEventLoop();
    order.push('after yield');
    assert.deepEqual(order, ['after microtask', 'immediate', 'after yield']);
  });

  it('lets a timer that is due run before it resumes', async () => {
    let fired = false;
    setTimeout(() => (fired = true), 0);
    const until = Date.now() + 5;
    while (Date.now() < until); // the timer is due now
    await yieldToEventLoop();
    await yieldToEventLoop(); // a due timer runs in the next loop iteration at the latest
    assert.equal(fired, true);
  });
});

describe('TimeSlice', () => {
  /** A clock the test moves by hand. */
  function clock(): { now: () => number; advance(ms: number): void } {
    let t = 1000;
    return { now: () => t, advance: (ms) => (t += ms) };
  }

  it('is expired once its budget has passed, not before', () => {
    const c = clock();
    const slice = new TimeSlice(10, c.now);
    assert.equal(slice.expired, false);
    c.advance(9.9);
    assert.equal(slice.expired, false);
    c.advance(0.1);
    assert.equal(slice.expired, true);
  });

  it('yields only when expired, and starts a new slice after yielding', async () => {
    const c = clock();
    const slice = new TimeSlice(10, c.now);
    let immediates = 0;
    const count = () => immediates++;

    setImmediate(count);
    await slice.yieldIfExpired();
    assert.equal(immediates, 0, 'no yield within the budget');

    c.advance(15);
    await slice.yieldIfExpired();
    assert.equal(immediates, 1, 'yielded once expired');
    assert.equal(slice.expired, false, 'a new slice started');

    setImmediate(count);
    await slice.yield();
    assert.equal(immediates, 2, 'yield() always yields');
  });

  it('lets other work in while a long loop runs in slices', async () => {
    let ticks = 0;
    let running = true;
    const tick = () => {
      ticks++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const slice = new TimeSlice(2);
    const end = performance.now() + 30;
    while (performance.now() < end) await slice.yieldIfExpired();
    running = false;
    // 30 ms of work in 2 ms slices: about 15 turns; a loop that never yields would allow none.
    assert.ok(ticks >= 5, `only ${ticks} other turns ran during the loop`);
  });
});
