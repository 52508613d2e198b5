// The ingest pipeline (src/values/ingest/pipeline.ts) runs its steps in the order its header states:
// accept → coerce → logging decides → newer values on the bus → write buffer (durable) → newest
// stored → listeners told. Over the real DuckDB store, its appends held at a gate by the test.
import assert from 'node:assert/strict';
import { DEFAULT_POINT_SETTINGS } from '../src/services/data-points.js';
import type { DataPointRecord, LoggingProperties } from '../src/store/metadata/data-points.js';
import type { StoredValue } from '../src/store/values/types.js';
import { PointValueBus } from '../src/values/live/bus.js';
import { NewestValues } from '../src/values/live/newest.js';
import { IngestPipeline } from '../src/values/ingest/pipeline.js';
import { gate, openTempDuckDb, readAll, settle, SpyStore, track, type TempStore } from './helpers/duckdb-temp.js';
import { pointRecord } from './helpers/records.js';

let nextId = 1;

function pointOf(logging: Partial<LoggingProperties> = {}): DataPointRecord {
  return pointRecord({ id: nextId++, settable: true, loggingProperties: { ...DEFAULT_POINT_SETTINGS.loggingProperties, ...logging } });
}

describe('ingest pipeline (DuckDB store)', function () {
  this.timeout(60_000);
  let temp: TempStore;
  let spy: SpyStore;
  let bus: PointValueBus;
  let newest: NewestValues;
  let pipeline: IngestPipeline;
  /** What happened, in order. */
  let steps: string[];
  let points: Map<number, DataPointRecord>;

  before(async () => {
    temp = await openTempDuckDb();
  });
  after(() => temp.dispose());
  beforeEach(() => {
    spy = new SpyStore(temp.store);
    bus = new PointValueBus();
    newest = new NewestValues(spy, 100);
    points = new Map();
    pipeline = new IngestPipeline(spy, { bus, newest, point: async (id) => points.get(id) }, { writeBufferValues: 10_000, zone: 'UTC' });
    steps = [];
    bus.subscribe((v) => steps.push(`bus ${v.value.ts}`));
    pipeline.onWritten((earliest) => steps.push(`told ${[...earliest].join(' ')}`));
  });
  afterEach(() => pipeline.close());

  function add(point: DataPointRecord): DataPointRecord {
    points.set(point.id, point);
    return point;
  }

  it('puts a value on the bus before its write is durable, updates the newest stored after, then tells the listeners', async () => {
    const p = add(pointOf());
    const held = gate();
    spy.beforeAppend = async () => {
      steps.push('append');
      await held.opened;
      steps.push('durable');
    };
    let newestWhenTold: Promise<StoredValue[]> | undefined;
    pipeline.onWritten(() => (newestWhenTold = newest.latest(p.id, 1)));
    const accepting = track(pipeline.acceptFromSource([{ point: p, value: 1.5, ts: 1_000 }]));
    await settle();
    assert.deepEqual(steps, ['bus 1000', 'append'], 'live while the write waits');
    assert.equal(accepting.settled(), false, 'not answered before the write is durable');
    assert.deepEqual(await newest.latest(p.id, 1), [], 'the newest stored waits for the store');
    held.open();
    await accepting.promise;
    assert.deepEqual(steps, ['bus 1000', 'append', 'durable', `told ${p.id},1000`]);
    const calls = spy.latestCalls;
    assert.deepEqual((await newestWhenTold!).map((v) => v.ts), [1_000], 'the newest stored before the listeners were told');
    assert.equal(spy.latestCalls, calls, 'updated from the batch, not read again');
  });

  it('lets logging decide before the bus: a value not to be stored is still live and the latest', async () => {
    const p = add(pointOf({ loggingType: 'NONE' }));
    await pipeline.acceptFromSource([{ point: p, value: 7, ts: 2_000 }]);
    assert.deepEqual(steps, ['bus 2000'], 'on the bus; nothing stored, nobody told');
    assert.equal(spy.appendCalls, 0);
    assert.deepEqual((await newest.latest(p.id, 1)).map((v) => v.value), [7], 'the newest accepted');
  });

  it('drops an extreme value before the bus', async () => {
    const p = add(pointOf({ discardExtremeValues: true, discardLowLimit: 0, discardHighLimit: 10 }));
    await pipeline.acceptFromSource([{ point: p, value: 50, ts: 3_000 }, { point: p, value: 5, ts: 3_001 }]);
    assert.deepEqual(steps, ['bus 3001', `told ${p.id},3001`]);
    assert.deepEqual((await readAll(temp.store, p.id)).map((v) => v.value), [5]);
  });

  it('a failed write tells nobody and leaves the newest stored to the store', async () => {
    const p = add(pointOf());
    spy.beforeAppend = () => {
      throw new Error('disk full');
    };
    await assert.rejects(pipeline.acceptFromSource([{ point: p, value: 1, ts: 4_000 }]), /disk full/);
    assert.deepEqual(steps, ['bus 4000']);
    assert.deepEqual(await newest.latest(p.id, 1), []);
  });

  it('stores an import as given, past logging, through the same steps', async () => {
    const p = add(pointOf({ loggingType: 'NONE' }));
    const batch = { length: 1, series: Int32Array.of(p.id), ts: Float64Array.of(5_000), value: Float64Array.of(2), text: null, annotation: null };
    await pipeline.acceptBulk(batch, new Map([[p.id, p]]));
    assert.deepEqual(steps, ['bus 5000', `told ${p.id},5000`]);
    assert.deepEqual((await readAll(temp.store, p.id)).map((v) => v.ts), [5_000]);
  });

  it("enters INTERVAL logging's values made on the clock at the write buffer: stored and told, not live", async () => {
    const p = add(pointOf({ loggingType: 'INTERVAL', intervalLoggingType: 'INSTANT', intervalLoggingPeriod: { periods: 1, type: 'MINUTES' } }));
    const now = Date.now();
    const minute = Math.floor(now / 60_000) * 60_000;
    await pipeline.acceptFromSource([{ point: p, value: 3, ts: now }]);
    steps = [];
    await pipeline.tick(minute + 60_000);
    assert.deepEqual(steps, [`told ${p.id},${minute + 60_000}`], 'the next period opened with the value in force, on nobody’s bus');
    assert.deepEqual((await newest.latest(p.id, 1)).map((v) => [v.ts, v.value]), [[minute + 60_000, 3]]);
  });
});
