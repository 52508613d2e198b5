// The doors of issue 27 under store faults, with metadata and point values on PostgreSQL
// (VALUE_STORE=postgres): line-protocol writes while the server ends the service's connections and
// while the server is unreachable (a TCP relay in front of it cut, then restored); Arrow, Parquet and
// Grafana reads while it is unreachable, before the first byte and mid-stream. Every answer is 2xx
// or 503 (never a 500, never a wait beyond the store time-out), every value answered 204 reads back,
// and an answer that breaks after its first byte is cut, so that a reader fails rather than taking
// fewer rows for all of them.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { RecordBatchReader, tableFromIPC } from 'apache-arrow';
import pg from 'pg';
import { startTestApp, type TestApp } from './helpers/app.js';
import { assertError } from './helpers/assertions.js';
import { ApiClient, loggedIn } from './helpers/client.js';
import { testDatabaseUrl } from './helpers/engines.js';
import { capturingLogger, flushed, type LogLine } from './helpers/log.js';
import { Relay } from './helpers/relay.js';
import { eventually } from './helpers/wait.js';

const API = '/rest/latest';
const STORE_TIMEOUT_MS = 1_500;
/** What a request may take beyond STORE_TIMEOUT_MS on this busy machine (queued store calls, the round trip). */
const MARGIN_MS = 3_000;
const STORM_MS = 12_000;
/** Between two rounds of pg_terminate_backend. */
const ROUND_MS = 700;
const CLIENTS = 4;
/** Lines per write (TEST_LP_LINES to try bigger writes). */
const LINES_PER_WRITE = Number(process.env.TEST_LP_LINES ?? 200);
const T0 = Date.UTC(2022, 0, 1);
/** Values in the point read mid-stream: 10 pages of the PostgreSQL store. */
const BULK = 100_000;
/** The Arrow IPC stream's end-of-stream marker: continuation and a zero length. */
const EOS = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];

/** What the clients were answered: statuses, and anything that was not 2xx or 503 (or no answer in time). */
class Outcomes {
  readonly statuses = new Map<number, number>();
  readonly wrong: string[] = [];
  slowest = 0;

  count(what: string, status: number, text: string, ms: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    this.slowest = Math.max(this.slowest, ms);
    if ((status < 200 || status > 299) && status !== 503) this.wrong.push(`${what}: ${status} ${text.slice(0, 300)}`);
    if (ms > STORE_TIMEOUT_MS + MARGIN_MS) this.wrong.push(`${what}: answered ${status} after ${ms} ms`);
  }

  summary(): string {
    return [...this.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ');
  }
}

const describePg = testDatabaseUrl ? describe : describe.skip;
if (!testDatabaseUrl) console.log('  skipped: the new doors fault suite needs TEST_DATABASE_URL');

describePg('the new doors (line protocol, Arrow, Parquet, Grafana) under PostgreSQL faults', function () {
  this.timeout(240_000);
  let relay: Relay;
  let app: TestApp;
  let admin: ApiClient;
  let token: string;
  let control: pg.Client;
  /** The service's log lines (info and above): the request log and what went wrong. */
  let logged: LogLine[];
  let checkedLines = 0;

  before(async () => {
    let viaRelay: string;
    ({ relay, url: viaRelay } = await Relay.forUrl(testDatabaseUrl!, 5432));
    const captured = capturingLogger('info');
    logged = captured.lines;
    app = await startTestApp('postgresql', { DATABASE_URL: viaRelay, VALUE_STORE: 'postgres', STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS) }, captured.log);
    admin = await loggedIn(app.url, 'admin', 'admin');
    const created = await admin.post<{ token: string }>(`${API}/auth-tokens/create`, {});
    assert.equal(created.status, 201, created.text);
    token = created.body.token;
    control = new pg.Client({ connectionString: testDatabaseUrl });
    await control.connect();
  });

  after(async () => {
    await relay?.open().catch(() => undefined);
    await app?.stop();
    await relay?.cut();
    await control?.end();
  });

  // Nothing the service did was a 500 or an unexpected failure, streamed answers cut short included
  // (the request log gives those the failure's status, not the 200 the client had).
  afterEach(async () => {
    await flushed();
    const lines = logged.slice(checkedLines);
    checkedLines = logged.length;
    const wrong = lines.filter((l) => {
      const err = l.err as { kind?: string } | undefined;
      return (typeof l.status === 'number' && l.status >= 500 && l.status !== 503) || ((l.level as number) >= 50 && err?.kind !== 'unavailable');
    });
    assert.deepEqual(wrong.map((l) => JSON.stringify(l).slice(0, 500)), [], 'no 500 and no unexpected failure logged');
  });

  /** Ends every connection the service holds (through the relay); returns how many. */
  async function terminate(): Promise<number> {
    const ports = relay.upstreamPorts();
    if (ports.length === 0) return 0;
    const { rows } = await control.query<{ n: number }>('select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where client_port = any($1::int[])', [ports]);
    return rows[0]!.n;
  }

  /** The server unreachable: the relay cut (connections reset, new ones refused) until `restore`. */
  async function unreachable<T>(work: () => Promise<T>): Promise<T> {
    await relay.cut();
    try {
      return await work();
    } finally {
      await relay.open();
    }
  }

  async function healthy(): Promise<void> {
    await eventually('/health says ok', async () => ((await fetch(`${app.url}/health`)).status === 200 ? true : undefined), 20_000, 200);
  }

  /** POST /write?db=`source`&precision=ms of `body`, timed; no answer within the limit counts as a hang. */
  async function lineWrite(source: string, body: string): Promise<{ status: number; text: string; ms: number }> {
    const started = Date.now();
    try {
      const res = await fetch(`${app.url}${API}/write?db=${source}&precision=ms`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain; charset=utf-8' },
        body,
        signal: AbortSignal.timeout(STORE_TIMEOUT_MS + MARGIN_MS + 5_000),
      });
      return { status: res.status, text: await res.text(), ms: Date.now() - started };
    } catch (err) {
      return { status: 0, text: `no answer: ${(err as Error).message}`, ms: Date.now() - started };
    }
  }

  async function source(xid: string, createPoints: boolean): Promise<void> {
    const res = await admin.post(`${API}/data-sources`, { xid, name: xid, modelType: 'LINE_PROTOCOL', enabled: true, createPoints });
    assert.equal(res.status, 201, res.text);
  }

  /** Every stored value of a point from T0 on, by timestamp. */
  async function stored(xid: string): Promise<Map<number, number>> {
    const res = await admin.get<{ timestamp: number; value: number }[]>(`${API}/point-values/single/${xid}?from=${T0}&to=${T0 + 10 * 365 * 86_400_000}&limit=1000000`);
    assert.equal(res.status, 200, res.text);
    return new Map(res.body.map((v) => [v.timestamp, v.value]));
  }

  /**
   * Runs `step` in a loop per client while the service's connections are ended every ROUND_MS, and in
   * the middle of the storm the server is unreachable for 2 s (`cut`: the relay cut) or silent for
   * 4 s (`freeze`: the relay frozen); returns how many connections each round ended.
   */
  async function storm(clients: number, step: (k: number, seq: number) => Promise<void>, fault: 'cut' | 'freeze' = 'cut'): Promise<{ rounds: number[]; cuts: number }> {
    let over = false;
    const loops = Array.from({ length: clients }, async (_, k) => {
      for (let seq = 0; !over; seq++) await step(k, seq);
    });
    const rounds: number[] = [];
    let cuts = 0;
    const started = Date.now();
    try {
      while (Date.now() - started < STORM_MS) {
        await new Promise((r) => setTimeout(r, ROUND_MS));
        const at = Date.now() - started;
        if (cuts === 0 && at > STORM_MS / 2) {
          cuts++;
          if (fault === 'cut') await unreachable(() => new Promise((r) => setTimeout(r, 2_000)));
          else {
            relay.freeze();
            await new Promise((r) => setTimeout(r, 4_000)).finally(() => relay.thaw());
          }
          continue;
        }
        rounds.push(await terminate());
      }
    } finally {
      over = true;
      await Promise.all(loops);
    }
    return { rounds, cuts };
  }

  for (const fault of ['cut', 'freeze'] as const) {
    it(`line protocol: concurrent writes through connection ends and the server ${fault === 'cut' ? 'unreachable' : 'frozen'} are answered 204 or 503 in time, and every 204 reads back`, async () => {
      const lp = `lp-storm-${fault}`;
      await source(lp, false);
      for (let k = 0; k < CLIENTS; k++) {
        const res = await admin.post(`${API}/data-points`, { xid: `${lp}-${k}`, name: `${lp}-${k}`, dataSourceXid: lp, pointLocator: { dataType: 'NUMERIC', measurement: 'plant', tags: { client: `c${k}` }, field: 'v' } });
        assert.equal(res.status, 201, res.text);
      }
      const tsOf = (seq: number, i: number) => T0 + (seq * LINES_PER_WRITE + i) * 1_000;
      const valueOf = (k: number, seq: number, i: number) => Math.sin(k * 1e6 + seq * LINES_PER_WRITE + i) * 1e3;
      const acked: number[][] = Array.from({ length: CLIENTS }, () => []);
      const unknown: number[][] = Array.from({ length: CLIENTS }, () => []);
      const outcomes = new Outcomes();
      const { rounds, cuts } = await storm(CLIENTS, async (k, seq) => {
        const lines: string[] = [];
        for (let i = 0; i < LINES_PER_WRITE; i++) lines.push(`plant,client=c${k},gateway=g1 v=${valueOf(k, seq, i)} ${tsOf(seq, i)}`);
        const res = await lineWrite(lp, lines.join('\n'));
        outcomes.count('POST /write', res.status, res.text, res.ms);
        if (res.status === 204) acked[k]!.push(seq);
        else {
          unknown[k]!.push(seq);
          if (res.status === 503) assert.equal(JSON.parse(res.text).code, 'unavailable', `InfluxDB's code beside ours: ${res.text}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }, fault);
      const writes = acked.flat().length + unknown.flat().length;
      console.log(`      ${writes} writes of ${LINES_PER_WRITE} lines from ${CLIENTS} clients: ${outcomes.summary()}; slowest ${outcomes.slowest} ms; ${rounds.length} rounds ended ${rounds.join(',')} connections, ${cuts} ${fault === 'cut' ? 'outage of 2 s' : 'freeze of 4 s'}`);
      assert.deepEqual(outcomes.wrong, [], 'every write answered 204 or 503 within the store time-out');
      assert.ok(rounds.filter((n) => n > 0).length >= rounds.length / 2, `rounds ended connections: ${rounds.join(',')}`);
      assert.ok((outcomes.statuses.get(503) ?? 0) > 0, 'some writes met the faults (503)');
      assert.ok(acked.flat().length > 0, 'some writes were acknowledged');

      await healthy();
      let verified = 0;
      for (let k = 0; k < CLIENTS; k++) {
        const values = await stored(`${lp}-${k}`);
        for (const seq of acked[k]!) {
          for (let i = 0; i < LINES_PER_WRITE; i++) {
            const ts = tsOf(seq, i);
            assert.ok(values.has(ts), `${lp}-${k}: the value at ${ts} of write ${seq}, answered 204, is missing`);
            assert.ok(Object.is(values.get(ts), valueOf(k, seq, i)), `${lp}-${k} at ${ts}: ${values.get(ts)} ≠ ${valueOf(k, seq, i)}`);
            verified++;
          }
        }
        // Anything else stored came from a write answered 503 (its outcome unknown to the client).
        for (const ts of values.keys()) {
          const seq = Math.floor((ts - T0) / 1_000 / LINES_PER_WRITE);
          assert.ok(acked[k]!.includes(seq) || unknown[k]!.includes(seq), `${lp}-${k}: a value at ${ts} nobody wrote`);
        }
      }
      console.log(`      ${verified} values answered 204 read back exactly`);
    });
  }

  it('line protocol with createPoints: a first write cut by the faults is 503, never 500; its retry succeeds and makes no point twice', async () => {
    await source('lp-auto', true);
    /** Each write names a new series with FIELDS fields: FIELDS points made on its first success. */
    const FIELDS = 4;
    const bodyOf = (k: number, seq: number) =>
      Array.from({ length: 20 }, (_, i) => `fresh,client=c${k},seq=s${seq} ${Array.from({ length: FIELDS }, (_, f) => `f${f}=${seq * 100 + i + f}`).join(',')} ${T0 + i * 1_000}`).join('\n');
    const outcomes = new Outcomes();
    /** Per client, the series (seq) whose write was finally answered 204. */
    const done: number[][] = Array.from({ length: CLIENTS }, () => []);
    let failedFirst = 0;
    let createdBeforeA503 = 0;
    let retries = 0;
    /** How many of the series' points exist (-1: could not tell, the store being away). */
    const pointsOf = async (k: number, seq: number) => {
      let n = 0;
      for (let f = 0; f < FIELDS; f++) {
        const res = await admin.get(`${API}/data-points/LP_fresh_c${k}_s${seq}_f${f}`);
        if (res.status === 200) n++;
        else if (res.status !== 404) return -1;
      }
      return n;
    };
    const { rounds } = await storm(CLIENTS, async (k, seq) => {
      const body = bodyOf(k, seq);
      let res = await lineWrite('lp-auto', body);
      outcomes.count('POST /write (new series)', res.status, res.text, res.ms);
      if (res.status === 204) {
        done[k]!.push(seq);
        return;
      }
      failedFirst++;
      // Retried as a client would, the same request, until it is answered 204.
      const started = Date.now();
      let sawCreated = false;
      while (res.status !== 204 && Date.now() - started < 30_000) {
        await new Promise((r) => setTimeout(r, 200));
        if (!sawCreated && (await pointsOf(k, seq).catch(() => -1)) > 0) sawCreated = true;
        res = await lineWrite('lp-auto', body);
        outcomes.count('POST /write (retry)', res.status, res.text, res.ms);
        retries++;
      }
      if (sawCreated) createdBeforeA503++;
      assert.equal(res.status, 204, `the retry of write ${k}/${seq} succeeded: ${res.text}`);
      done[k]!.push(seq);
    });
    const series = done.flat().length;
    console.log(
      `      ${series} new series written (${series * FIELDS} points made): ${outcomes.summary()}; ${failedFirst} first writes refused, ` +
        `${createdBeforeA503} of them after some of their points were made, ${retries} retries; ${rounds.length} rounds`,
    );
    assert.deepEqual(outcomes.wrong, [], 'every write answered 204 or 503 within the store time-out');
    assert.ok(failedFirst > 0, 'some first writes met the faults');

    await healthy();
    const all = await admin.get<{ total: number; items: { xid: string; pointLocator: { tags: Record<string, string>; field: string } }[] }>(`${API}/data-points?dataSourceXid=lp-auto&limit(10000)`);
    assert.equal(all.status, 200, all.text);
    const locators = all.body.items.map((p) => `${p.pointLocator.tags.client}/${p.pointLocator.tags.seq}/${p.pointLocator.field}`);
    assert.equal(new Set(locators).size, locators.length, 'no series got two points');
    assert.equal(all.body.total, series * FIELDS, 'one point per series and field, none left over');
    // Every point made has its values.
    let verified = 0;
    for (const [k, seqs] of done.entries()) {
      for (const seq of seqs) {
        for (let f = 0; f < FIELDS; f++) {
          const values = await stored(`LP_fresh_c${k}_s${seq}_f${f}`);
          assert.equal(values.size, 20);
          for (let i = 0; i < 20; i++) assert.equal(values.get(T0 + i * 1_000), seq * 100 + i + f);
          verified += 20;
        }
      }
    }
    console.log(`      ${verified} values read back; ${all.body.total} points, each once`);
  });

  describe('reads while the store is unreachable', () => {
    const PATH = `${API}/point-values/single/bulk-dp?from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&limit=${BULK}`;
    let dir: string;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'dds-doors-faults-'));
      assert.equal((await admin.post(`${API}/data-sources`, { xid: 'bulk-ds', name: 'Bulk', modelType: 'VIRTUAL' })).status, 201);
      const dp = await admin.post(`${API}/data-points`, { xid: 'bulk-dp', name: 'Bulk', dataSourceXid: 'bulk-ds', pointLocator: { dataType: 'NUMERIC', changeType: 'NO_CHANGE' } });
      assert.equal(dp.status, 201, dp.text);
      for (let off = 0; off < BULK; off += 10_000) {
        const batch = Array.from({ length: 10_000 }, (_, i) => ({ xid: 'bulk-dp', timestamp: Date.UTC(2025, 0, 1) + (off + i) * 1000, value: off + i }));
        const res = await admin.post(`${API}/point-values`, batch);
        assert.equal(res.status, 200, res.text);
      }
    });

    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    const cookie = () => ({ cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ') });

    /** 503 with the error body and Retry-After. */
    function assertUnavailable(res: Awaited<ReturnType<ApiClient['get']>>): void {
      assertError(res, 503, 5000);
      assert.ok(res.headers.get('retry-after'), 'Retry-After');
    }

    it('Arrow and Parquet: the error body with 503 when the store fails before the first byte (raw, rollups, several points); whole again once it is back', async () => {
      // Rollups over periods not asked for before: computed from the store, not a cache.
      const rollup = `${API}/point-values/time-period/bulk-dp/AVERAGE?from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z&timePeriodType=MINUTES&timePeriods=7`;
      const several = `${API}/point-values/multiple-arrays/time-period/bulk-dp?from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z&rollup=MAXIMUM&timePeriodType=MINUTES&timePeriods=11`;
      let refused = 0;
      for (const format of ['arrow', 'parquet']) {
        await unreachable(async () => {
          for (const path of [`${PATH}&format=${format}`, `${rollup}&format=${format}`, `${several}&format=${format}`]) {
            const started = Date.now();
            assertUnavailable(await admin.get(path));
            assert.ok(Date.now() - started <= STORE_TIMEOUT_MS + MARGIN_MS);
            refused++;
          }
        });
        await healthy();
        const res = await fetch(`${app.url}${PATH}&format=${format}`, { headers: cookie() });
        assert.equal(res.status, 200);
        const bytes = new Uint8Array(await res.arrayBuffer());
        if (format === 'arrow') {
          assert.equal(tableFromIPC(bytes).numRows, BULK);
          assert.deepEqual([...bytes.subarray(-8)], EOS, 'a whole stream ends with the end-of-stream marker');
        } else assert.equal(await parquetRows(bytes, 'whole.parquet'), BULK);
        const periods = await fetch(`${app.url}${rollup}&format=${format}`, { headers: cookie() });
        assert.equal(periods.status, 200);
        const periodBytes = new Uint8Array(await periods.arrayBuffer());
        const expected = Math.ceil((24 * 60) / 7);
        assert.equal(format === 'arrow' ? tableFromIPC(periodBytes).numRows : await parquetRows(periodBytes, 'periods.parquet'), expected);
      }
      console.log(`      ${refused} Arrow and Parquet reads answered 503 with the error body while the store was unreachable`);
    });

    /** Rows DuckDB's read_parquet reads from `bytes`. */
    async function parquetRows(bytes: Uint8Array, name: string): Promise<number> {
      const file = join(dir, name);
      await writeFile(file, bytes);
      const duck = await (await DuckDBInstance.create(':memory:')).connect();
      try {
        const read = await duck.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${file}')`);
        return read.getRowObjectsJson()[0]!.n as number;
      } finally {
        duck.closeSync();
      }
    }

    /**
     * Reads `format` of the bulk point and cuts the relay once the first bytes are in: returns what
     * came and how the body ended (a fetch body whose answer is cut rejects).
     */
    async function cutMidStream(format: string): Promise<{ bytes: Uint8Array; error: Error | undefined }> {
      const res = await fetch(`${app.url}${PATH}&format=${format}`, { headers: cookie() });
      assert.equal(res.status, 200);
      const chunks: Uint8Array[] = [];
      let error: Error | undefined;
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          if (chunks.length === 0) await relay.cut();
          chunks.push(chunk);
        }
      } catch (err) {
        error = err as Error;
      } finally {
        await relay.open();
      }
      return { bytes: Buffer.concat(chunks), error };
    }

    it('Arrow: a failure mid-stream cuts the answer, and a reader reading the answer fails rather than taking fewer rows', async () => {
      const { bytes, error } = await cutMidStream('arrow');
      assert.ok(error, 'the body is cut, not ended as if whole');
      assert.ok(bytes.length > 0);
      // What a reader makes of the bytes that came: the stream lacks its end-of-stream marker, which
      // the Arrow format makes optional, so apache-arrow takes the whole batches before the cut as
      // the whole table. The cut is told by the HTTP answer (and by the missing marker), not the reader.
      assert.notDeepEqual([...bytes.subarray(-8)], EOS, 'no end-of-stream marker on the cut stream');
      let offline: string;
      try {
        offline = `reads ${tableFromIPC(bytes).numRows} of ${BULK} rows without complaint`;
      } catch (err) {
        offline = `fails: ${(err as Error).message}`;
      }
      console.log(`      Arrow cut after ${bytes.length} bytes (${error.message}); apache-arrow's tableFromIPC on those bytes ${offline}`);
      await healthy();
      // A reader on the live answer, given the body as an async iterable that fails when it does, fails.
      // (Given the WHATWG ReadableStream itself, apache-arrow 21.2 cancels it on the error and ends as
      // if the stream were whole: io/adapters fromDOMStream does not rethrow.)
      const res = await fetch(`${app.url}${PATH}&format=arrow`, { headers: cookie() });
      const body = res.body!;
      let rows = 0;
      let cutAt = 0;
      await assert.rejects(async () => {
        try {
          const reader = await RecordBatchReader.from((async function* () {
            yield* body;
          })());
          for await (const batch of reader) {
            if (rows === 0) await relay.cut();
            rows += batch.numRows;
            cutAt = rows;
          }
        } finally {
          await relay.open();
        }
      }, /terminated/, 'the reader on the cut answer rejects');
      assert.ok(cutAt < BULK, `the reader had ${cutAt} rows when the answer was cut`);
      await flushed();
      const cut = logged.filter((l) => l.msg === 'request' && typeof l.path === 'string' && l.path.endsWith('/bulk-dp') && l.status === 503);
      assert.ok(cut.length >= 2, 'the request log has the cut answers as 503, not 200');
      await healthy();
    });

    it('Parquet: a failure mid-stream cuts the answer, and DuckDB\'s read_parquet fails on what came', async () => {
      const { bytes, error } = await cutMidStream('parquet');
      assert.ok(error, 'the body is cut, not ended as if whole');
      assert.ok(bytes.length > 0);
      await assert.rejects(parquetRows(bytes, 'cut.parquet'), /parquet|magic|footer|metadata|file/i);
      console.log(`      Parquet cut after ${bytes.length} bytes (${error.message}); read_parquet refuses them`);
      await healthy();
    });

    it('Grafana /query: 503 with the error body while the store is unreachable, never a 500; answers again once it is back', async () => {
      // A range not read before: the rollup comes from the store, not a cache.
      const body = { range: { from: '2025-01-01T03:00:00.000Z', to: '2025-01-02T05:00:00.000Z' }, maxDataPoints: 100, targets: [{ target: 'bulk-dp', refId: 'A' }] };
      // The point is known (cached) before the outage, so the values are what fails.
      assert.equal((await admin.get(`${API}/data-points/bulk-dp`)).status, 200);
      await unreachable(async () => {
        const started = Date.now();
        assertUnavailable(await admin.post(`${API}/grafana/query`, body));
        assert.ok(Date.now() - started <= STORE_TIMEOUT_MS + MARGIN_MS);
        assertUnavailable(await admin.post(`${API}/grafana/metrics`, {}));
      });
      await healthy();
      const after = await admin.post<{ datapoints: [number, number][] }[]>(`${API}/grafana/query`, body);
      assert.equal(after.status, 200, after.text);
      assert.equal(after.body[0]!.datapoints.length, 26);
      // A silent server: the query waits no longer than the store time-out.
      relay.freeze();
      try {
        const started = Date.now();
        assertUnavailable(await admin.post(`${API}/grafana/query`, { ...body, range: { from: '2025-01-01T01:00:00.000Z', to: '2025-01-02T01:00:00.000Z' }, maxDataPoints: 37 }));
        const ms = Date.now() - started;
        assert.ok(ms <= STORE_TIMEOUT_MS + MARGIN_MS, `answered after ${ms} ms`);
      } finally {
        relay.thaw();
      }
      await healthy();
    });
  });
});
