// The matching statement alone, server time: a raise wrapped by HandlerJobsSql (the event insert, the
// handlers matched, their jobs inserted) under EXPLAIN ANALYZE on PostgreSQL (BENCH_DATABASE_URL, else
// TEST_DATABASE_URL, else the local test server; own schema), 40 raises each rolled back, with no
// handler, 10 handlers matching every event, and 1,000 handlers (11 matching each event): the median
// and p90 of PostgreSQL's "Execution Time", which the client's own load does not skew as much.
//   node --import tsx bench/handler-matching-explain.ts
import { openPostgres } from '../src/store/metadata/postgres.js';
import { migrate } from '../src/store/metadata/migrate.js';
import { HandlerJobsSql } from '../src/store/metadata/event-handlers.js';
const schema = `h2x_${process.pid}`;
const db = await openPostgres(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', 1, schema);
try {
  await migrate(db);
  await db.query(`insert into data_sources (xid, name, model_type) values ('bench-src', 'Bench', 'VIRTUAL')`, []);
  await db.query(`insert into data_points (xid, name, data_source_id, data_type, point_locator) select 'bench-p' || g, 'P' || g, (select id from data_sources), 'NUMERIC', '{}' from generate_series(1, 1000) g`, []);
  await db.query(`insert into event_detectors (xid, data_point_id, detector_type, alarm_level) select 'bench-ed' || g, (select id from data_points where xid = 'bench-p' || g), 'HIGH_LIMIT', 'URGENT' from generate_series(1, 1000) g`, []);
  const add = (catchAll: boolean) => db.query(`insert into event_handlers (xid, name, handler_type, event_types, config, actions)
     select 'bench-eh' || g, 'H' || g, 'WEBHOOK',
       case when g % 100 = 0 then '[{"eventType": "DATA_POINT", "minAlarmLevel": "URGENT"}]'::jsonb
            else jsonb_build_array(jsonb_build_object('eventType', 'DATA_POINT', 'referenceXid', 'bench-ed' || (1 + (g - 1) % 1000))) end,
       '{}', '{RAISED,RETURN_TO_NORMAL,ACKNOWLEDGED}' from generate_series(1, 1000) g where (g % 100 = 0) = $1`, [catchAll]);
  const sql = new HandlerJobsSql(10_000);
  const measure = async (label: string) => {
    await db.query('analyze', []);
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const d = 1 + (i * 37) % 1000;
      const q = sql.wrap('RAISED', `insert into events as t (alarm_level, active_ts, active, rtn_applicable, message, event_type, data_point_id, data_point_xid, detector_id)
        values ('URGENT', $1, true, true, 'm', 'DATA_POINT', $2, $3, $2) returning t.id as "id", t.event_type as "eventType", t.detector_id as "detectorId", t.data_source_xid as "dataSourceXid", t.rtn_applicable as "rtnApplicable", t.alarm_level as "alarmLevel"`, [i, d, `bench-p${d}`]);
      await db.transaction(async (tx) => {
        const rows = await tx.query<{ 'QUERY PLAN': [{ 'Execution Time': number }] }>(`explain (analyze, format json) ${q.text}`, q.values);
        times.push(rows[0]!['QUERY PLAN'][0]['Execution Time']);
        throw new Error('rollback');
      }).catch(() => undefined);
    }
    times.sort((a, b) => a - b);
    console.log(`${label}: statement execution median ${times[20]!.toFixed(2)} ms, p90 ${times[36]!.toFixed(2)} ms`);
  };
  await measure('no handler');
  await add(true);
  await measure('10 handlers (all match)');
  await add(false);
  await measure('1000 handlers (11 match)');
} finally {
  await db.query(`drop schema ${schema} cascade`, []);
  await db.close();
}
