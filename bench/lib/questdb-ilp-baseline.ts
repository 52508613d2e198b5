// The baseline of the historian bench's ingest on QuestDB: what QuestDB itself takes over ILP/HTTP from a
// bare client, into a fresh table of the service's raw-table shape (the statement the store runs,
// store/values/questdb/sql.ts: same columns, SYMBOL CAPACITY … CACHE INDEX, PARTITION BY MONTH, WAL,
// DEDUP UPSERT KEYS), with the same values, batches and concurrency as the service's load: each client
// POSTs its next batch (one point's consecutive minutes as ILP lines) once the previous one is answered
// (204: committed to the table's WAL). No hourly rows, no intents, no read-your-writes: QuestDB alone.
import { Agent, request } from 'node:http';
import pg from 'pg';
import { parseIlpConfig } from '../../src/store/values/questdb/config.js';
import { createTableStatements } from '../../src/store/values/questdb/sql.js';
import { msSince } from './stats.js';

export interface IlpBaselineJob {
  /** The series (data point id) the rows carry as their symbol. */
  series: number;
  /** First row's epoch ms; rows are `stepMs` apart. */
  firstMs: number;
  stepMs: number;
  /** Each row's value as the decimal text the service's clients send. */
  values: readonly Buffer[];
}

export interface IlpBaselineResult {
  values: number;
  seconds: number;
  rps: number;
  /** Bytes of ILP posted. */
  bytes: number;
  /** Seconds from the last answer until QuestDB had applied every row (visible to reads). */
  applySeconds: number;
}

/**
 * Creates `table` as the service's raw table, runs one queue of jobs per client (one request at a time
 * each), waits for the rows to be applied (so its background work does not weigh on what follows),
 * then drops the table.
 */
export async function ilpBaseline(ilp: string, pgUrl: string, table: string, queues: readonly (readonly IlpBaselineJob[])[]): Promise<IlpBaselineResult> {
  const { schema, settings } = parseIlpConfig(ilp);
  if (schema !== 'http') throw new Error('the bare ILP baseline speaks plain http only');
  const addr = settings.get('addr')!;
  const url = new URL(`http://${addr.includes(':') ? addr : `${addr}:9000`}/write?precision=u`);
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  const agent = new Agent({ keepAlive: true, maxSockets: queues.length });
  try {
    const [rawTable] = createTableStatements(table);
    await client.query(rawTable!);
    const post = (body: Buffer) =>
      new Promise<void>((resolve, reject) => {
        const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'text/plain', 'content-length': String(body.length) } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`ILP baseline: HTTP ${res.statusCode} ${text.slice(0, 300)}`))));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      });
    let values = 0;
    let bytes = 0;
    const start = process.hrtime.bigint();
    await Promise.all(
      queues.map(async (jobs) => {
        const encoder = new LineEncoder(table);
        let inFlight: Promise<void> | undefined;
        for (const job of jobs) {
          const body = encoder.encode(job);
          await inFlight;
          inFlight = post(body).then(() => {
            values += job.values.length;
            bytes += body.length;
          });
        }
        await inFlight;
      }),
    );
    const seconds = msSince(start) / 1000;
    const answered = process.hrtime.bigint();
    for (;;) {
      const { rows } = await client.query<{ writerTxn: string; sequencerTxn: string }>(`SELECT writerTxn, sequencerTxn FROM wal_tables() WHERE name = '${table}'`);
      if (rows[0] && Number(rows[0].writerTxn) >= Number(rows[0].sequencerTxn)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const applySeconds = msSince(answered) / 1000;
    const { rows } = await client.query<{ n: string }>(`SELECT count() AS n FROM ${table}`);
    if (Number(rows[0]?.n) !== values) throw new Error(`ILP baseline: ${rows[0]?.n} rows in ${table}, ${values} written`);
    return { values, seconds, rps: values / seconds, bytes, applySeconds };
  } finally {
    agent.destroy();
    await client.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    await client.end();
  }
}

/** `<table>,series=<id> value=<text> <µs>\n` per row, into one of two reused buffers (one may be in flight). */
class LineEncoder {
  private readonly buffers: Buffer[] = [Buffer.alloc(0), Buffer.alloc(0)];
  private turn = 0;
  private readonly valueField = Buffer.from(' value=', 'latin1');

  constructor(private readonly table: string) {}

  encode(job: IlpBaselineJob): Buffer {
    const prefix = Buffer.from(`${this.table},series=${job.series}`, 'latin1');
    const maxValue = Math.max(...job.values.map((v) => v.length));
    const need = job.values.length * (prefix.length + this.valueField.length + maxValue + 1 + 19 + 1);
    if (this.buffers[this.turn]!.length < need) this.buffers[this.turn] = Buffer.allocUnsafe(need);
    const buf = this.buffers[this.turn]!;
    this.turn ^= 1;
    let pos = 0;
    for (let k = 0; k < job.values.length; k++) {
      pos += prefix.copy(buf, pos);
      pos += this.valueField.copy(buf, pos);
      pos += job.values[k]!.copy(buf, pos);
      pos += buf.write(` ${job.firstMs + k * job.stepMs}000\n`, pos, 'latin1');
    }
    return buf.subarray(0, pos);
  }
}
