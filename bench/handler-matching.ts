// Event handler matching on the event path: each raise is one statement that also inserts the jobs
// of every matching handler (HandlerJobsSql.wrap), so the handlers table is read on every raise. In
// process on the metadata store (PGlite; with BENCH_DATABASE_URL or TEST_DATABASE_URL also PostgreSQL,
// own schema): 1,000 detectors, then BENCH_HANDLER_EVENTS (10,000) raises (each closed again, its
// return to normal not timed) with no handler, with the 10 handlers that match every event, and with
// 1,000 handlers (990 more, each on one detector: each event matches 11; the jobs are deleted after
// each event, as a worker would carry them out, so queues stay short). Figures: the raise's p50 and
// p99 with 1,000 handlers against 10 (the same work matched: the cost of the 989 that do not match;
// target ≤ 2×), and against none. BENCH_HANDLERS, BENCH_HANDLER_EVENTS and BENCH_HANDLER_ENGINES adjust it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MetadataDb } from '../src/store/metadata/db.js';
import { HandlerJobsSql } from '../src/store/metadata/event-handlers.js';
import { EventsRepository } from '../src/store/metadata/events.js';
import { migrate } from '../src/store/metadata/migrate.js';
import { openPglite } from '../src/store/metadata/pglite.js';
import { openPostgres } from '../src/store/metadata/postgres.js';
import { progress, type Benchmark } from './lib/benchmark.js';
import { figure, type Figure } from './lib/report.js';

const EVENTS = Number(process.env.BENCH_HANDLER_EVENTS ?? 10_000);
const HANDLERS = Number(process.env.BENCH_HANDLERS ?? 1_000);
const DETECTORS = 1_000;
/** BENCH_HANDLER_ENGINES=pglite or postgresql runs one engine. */
const ENGINES = (process.env.BENCH_HANDLER_ENGINES ?? 'pglite,postgresql').split(',');

/** The q-th percentile (nearest rank) of the times. */
function percentile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1))] ?? NaN;
}

async function setUp(db: MetadataDb): Promise<void> {
  await db.query(`insert into data_sources (xid, name, model_type) values ('bench-src', 'Bench', 'VIRTUAL')`, []);
  await db.query(
    `insert into data_points (xid, name, data_source_id, data_type, point_locator)
     select 'bench-p' || g, 'P' || g, (select id from data_sources where xid = 'bench-src'), 'NUMERIC', '{}' from generate_series(1, $1::int) g`,
    [DETECTORS],
  );
  await db.query(
    `insert into event_detectors (xid, data_point_id, detector_type, alarm_level)
     select 'bench-ed' || g, (select id from data_points where xid = 'bench-p' || g), 'HIGH_LIMIT', 'URGENT' from generate_series(1, $1::int) g`,
    [DETECTORS],
  );
}

/**
 * Handlers g = 1..HANDLERS whose number passes `which`: handler g on detector g (mod DETECTORS), every
 * 100th on all DATA_POINT events from URGENT.
 */
async function addHandlers(db: MetadataDb, which: 'catch-all' | 'the rest'): Promise<void> {
  await db.query(
    `insert into event_handlers (xid, name, handler_type, event_types, config, actions)
     select 'bench-eh' || g, 'H' || g, 'WEBHOOK',
       case when g % 100 = 0 then '[{"eventType": "DATA_POINT", "minAlarmLevel": "URGENT"}]'::jsonb
            else jsonb_build_array(jsonb_build_object('eventType', 'DATA_POINT', 'referenceXid', 'bench-ed' || (1 + (g - 1) % $2::int))) end,
       '{"url": "http://127.0.0.1:9/x", "secret": "s"}', '{RAISED,RETURN_TO_NORMAL,ACKNOWLEDGED}'
     from generate_series(1, $1::int) g where (g % 100 = 0) = $3`,
    [HANDLERS, DETECTORS, which === 'catch-all'],
  );
}

/** Raises EVENTS events over the detectors in turn, each closed after; returns each raise's time (ms). */
async function raises(db: MetadataDb, events: EventsRepository, from: number, jobs: { n: number }): Promise<number[]> {
  const detectors = await db.query<{ id: number; pointId: number; xid: string }>(
    `select d.id, d.data_point_id as "pointId", p.xid from event_detectors d join data_points p on p.id = d.data_point_id order by d.id`,
    [],
  );
  const times: number[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const d = detectors[i % detectors.length]!;
    const ts = from + i;
    const t0 = performance.now();
    const { event } = await events.raise({
      alarmLevel: 'URGENT', activeTimestamp: ts, rtnApplicable: true, message: 'bench', eventType: 'DATA_POINT',
      dataPointId: d.pointId, dataPointXid: d.xid, detectorId: d.id,
    });
    times.push(performance.now() - t0);
    await events.close(event.id, 'RETURN_TO_NORMAL', ts);
    // The worker carries jobs out as they come: the queues stay short (counted, not kept).
    const [done] = await db.query<{ n: number }>('with d as (delete from event_handler_jobs returning 1) select count(*)::int as n from d', []);
    jobs.n += done?.n ?? 0;
  }
  return times;
}

async function measure(engine: string, db: MetadataDb): Promise<Figure[]> {
  await migrate(db);
  await setUp(db);
  // A queue as large as the run: every matched job is inserted, none refused.
  const events = new EventsRepository(db, new HandlerJobsSql(10_000_000));
  progress(`${engine}: ${EVENTS} raises with no handler`);
  const jobs = { n: 0 };
  const none = await raises(db, events, 1_000_000, jobs);
  await addHandlers(db, 'catch-all');
  const catchAll = HANDLERS / 100;
  progress(`${engine}: ${EVENTS} raises with ${catchAll} handlers, each matching every event`);
  const few = await raises(db, events, 2_000_000, jobs);
  await addHandlers(db, 'the rest');
  progress(`${engine}: ${EVENTS} raises with ${HANDLERS} handlers, ${catchAll + 1} matching each event`);
  const many = await raises(db, events, 3_000_000, jobs);
  progress(`${engine}: ${jobs.n} jobs inserted`);
  const bench = 'handler-matching';
  return [
    figure(bench, `${engine} raise p50, ${catchAll} handlers matching`, percentile(few, 50), 'ms', `${engine} raise p50, no handler`, percentile(none, 50)),
    figure(bench, `${engine} raise p50, ${HANDLERS} handlers`, percentile(many, 50), 'ms', `${engine} raise p50, ${catchAll} handlers`, percentile(few, 50), `${catchAll + 1} of them matching each event; ${jobs.n} jobs in all`),
    figure(bench, `${engine} raise p99, ${HANDLERS} handlers`, percentile(many, 99), 'ms', `${engine} raise p99, ${catchAll} handlers`, percentile(few, 99)),
    figure(bench, `${engine} raise p50, ${HANDLERS} handlers`, percentile(many, 50), 'ms', `${engine} raise p50, no handler`, percentile(none, 50)),
  ];
}

export const handlerMatching: Benchmark = {
  name: 'handler-matching',
  description: `${EVENTS} event raises (each matched in SQL against the handlers and inserting their jobs) with ${HANDLERS} handlers vs none`,
  async run() {
    const figures: Figure[] = [];
    if (ENGINES.includes('pglite')) {
      const dir = await mkdtemp(join(tmpdir(), 'bench-handlers-'));
      const lite = await openPglite(dir);
      try {
        figures.push(...(await measure('PGlite', lite)));
      } finally {
        await lite.close();
        await rm(dir, { recursive: true, force: true });
      }
    }
    const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    if (url && ENGINES.includes('postgresql')) {
      const schema = `bench_handlers_${process.pid}`;
      const pgDb = await openPostgres(url, 2, schema);
      try {
        figures.push(...(await measure('PostgreSQL', pgDb)));
      } finally {
        await pgDb.query(`drop schema ${schema} cascade`, []);
        await pgDb.close();
      }
    }
    return figures;
  },
};
