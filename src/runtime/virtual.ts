// The VIRTUAL data source: generates a value for every point once per update period, by the point's
// changeType (RANDOM_WALK, SINE, INCREMENT, RANDOM within min/max; ALTERNATE/RANDOM for BINARY;
// INCREMENT/RANDOM over `values` for MULTISTATE). INCREMENT rolls over to the start, or with
// `roll: false` turns back at each end (Mango's INCREMENT_ANALOG and INCREMENT_MULTISTATE). NO_CHANGE points produce nothing by themselves:
// they hold what is set through the API (a manual or memory point). A value set on a generating
// point becomes the generator's current value, so a walk continues from it.
import { forEachLimited } from '../core/limited.js';
import { TimeSlice } from '../core/time-slice.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import { sleep, type DriverContext, type DriverFactory, type SourceDriver } from './driver.js';

type Scalar = number | boolean | string;

interface Generator {
  next(now: number): Scalar;
  set(value: Scalar): void;
}

const DEFAULT_SINE_PERIOD_MS = 60_000;

function numericGenerator(loc: Record<string, unknown>): Generator {
  const min = typeof loc.min === 'number' ? loc.min : 0;
  const max = typeof loc.max === 'number' ? loc.max : 100;
  const span = max - min;
  const changeType = loc.changeType;
  const step = typeof loc.step === 'number' ? loc.step : changeType === 'INCREMENT' ? 1 : span / 20;
  const periodMs = typeof loc.periodMs === 'number' ? loc.periodMs : DEFAULT_SINE_PERIOD_MS;
  let current = typeof loc.startValue === 'number' ? loc.startValue : changeType === 'INCREMENT' ? min : min + span / 2;
  const clamp = (v: number) => Math.min(max, Math.max(min, v));
  const roll = loc.roll !== false;
  let direction = 1;
  return {
    next(now) {
      if (changeType === 'RANDOM_WALK') current = clamp(current + (Math.random() * 2 - 1) * step);
      else if (changeType === 'SINE') current = min + (span * (1 + Math.sin((2 * Math.PI * now) / periodMs))) / 2;
      else if (changeType === 'RANDOM') current = min + Math.random() * span;
      else if (changeType === 'INCREMENT' && roll) current = current + step > max ? min : current + step;
      else if (changeType === 'INCREMENT') {
        current = clamp(current + direction * step);
        if (current === max) direction = -1;
        else if (current === min) direction = 1;
      }
      return current;
    },
    set(value) {
      if (typeof value === 'number') current = value;
    },
  };
}

function binaryGenerator(loc: Record<string, unknown>): Generator {
  let current = loc.startValue === true;
  return {
    next() {
      if (loc.changeType === 'ALTERNATE') current = !current;
      else if (loc.changeType === 'RANDOM') current = Math.random() < 0.5;
      return current;
    },
    set(value) {
      if (typeof value === 'boolean') current = value;
    },
  };
}

function multistateGenerator(loc: Record<string, unknown>): Generator {
  const values = Array.isArray(loc.values) && loc.values.length > 0 ? (loc.values as number[]) : [0];
  let index = typeof loc.startValue === 'number' ? Math.max(0, values.indexOf(loc.startValue)) : 0;
  let current = typeof loc.startValue === 'number' ? loc.startValue : values[0]!;
  const roll = loc.roll !== false;
  let direction = 1;
  return {
    next() {
      if (loc.changeType === 'INCREMENT') {
        // The first period shows the start value; each later one moves to the next state.
        current = values[index]!;
        if (roll) index = (index + 1) % values.length;
        else {
          if (index + direction < 0 || index + direction >= values.length) direction = -direction;
          index = Math.min(values.length - 1, Math.max(0, index + direction));
        }
      } else if (loc.changeType === 'RANDOM') current = values[Math.floor(Math.random() * values.length)]!;
      return current;
    },
    set(value) {
      if (typeof value !== 'number') return;
      current = value;
      const i = values.indexOf(value);
      if (i >= 0) index = (i + 1) % values.length;
    },
  };
}

function textGenerator(loc: Record<string, unknown>): Generator {
  let current = typeof loc.startValue === 'string' ? loc.startValue : '';
  return {
    next: () => current,
    set(value) {
      current = String(value);
    },
  };
}

export function generatorFor(point: Pick<DataPointRecord, 'dataType' | 'pointLocator'>): Generator {
  switch (point.dataType) {
    case 'NUMERIC':
      return numericGenerator(point.pointLocator);
    case 'BINARY':
      return binaryGenerator(point.pointLocator);
    case 'MULTISTATE':
      return multistateGenerator(point.pointLocator);
    case 'ALPHANUMERIC':
      return textGenerator(point.pointLocator);
  }
}

/** Latest values looked up at once when the source starts. */
const LOOKUPS_AT_ONCE = 8;

/** Values handed to the pipeline at once. */
const ACCEPT_PART = 5_000;

class VirtualDriver implements SourceDriver {
  private readonly generators = new Map<number, Generator>();
  private loop: Promise<void> | undefined;

  constructor(private readonly ctx: DriverContext) {}

  async start(): Promise<void> {
    // A restart (an edit of the source or of a point) continues where the values left off. A few
    // points' latest values are looked up at once (on a server store each is a round trip), and the
    // loop yields: many are answered from memory, and 200,000 points would hold the event loop.
    const slice = new TimeSlice();
    await forEachLimited(this.ctx.points, LOOKUPS_AT_ONCE, async (p) => {
      const generator = generatorFor(p);
      this.generators.set(p.id, generator);
      const last = await this.ctx.lastValue(p);
      if (last !== undefined) generator.set(last);
      await slice.yieldIfExpired();
    });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    await this.loop;
  }

  /** No device: the new value only steers the generator; the pipeline stores it. */
  async write(point: DataPointRecord, value: Scalar): Promise<void> {
    this.generators.get(point.id)?.set(value);
  }

  /** One tick per period on a fixed schedule (no drift); a slow store delays ticks, never stacks them. */
  private async run(): Promise<void> {
    const { ctx } = this;
    const generating = ctx.points.filter((p) => p.pointLocator.changeType !== 'NO_CHANGE');
    if (generating.length === 0) return;
    let due = Date.now();
    while (!ctx.signal.aborted) {
      const now = Date.now();
      // In parts: a source of 200,000 points would make one batch whose every step (logging, the
      // latest values, the write) holds the event loop for its whole length.
      for (let i = 0; i < generating.length && !ctx.signal.aborted; i += ACCEPT_PART) {
        await ctx.accept(generating.slice(i, i + ACCEPT_PART).map((point) => ({ point, value: this.generators.get(point.id)!.next(now), ts: now })));
      }
      ctx.recovered();
      due += ctx.periodMs;
      if (due < Date.now()) due = Date.now();
      await sleep(due - Date.now(), ctx.signal);
    }
  }
}

export const createVirtualDriver: DriverFactory = (ctx) => new VirtualDriver(ctx);
