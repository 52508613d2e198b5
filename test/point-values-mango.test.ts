// Mango 4/5's POST point-value queries (/multiple-arrays/latest, /single-array/latest,
// /multiple-arrays/time-period[/<rollup>], /single-array/time-period[/<rollup>]) and the GET
// /point-values/<xid>/latest of node-mango-client, on the real service (PGlite or PostgreSQL
// metadata): the same values as the GET forms, in Mango's shapes, under the same bounds.
import assert from 'node:assert/strict';
import { assertError, assertHasMessage, assertValidation } from './helpers/assertions.js';
import type { ApiClient, Response } from './helpers/client.js';
import { parseCsv } from './helpers/csv.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { DAY, HOUR, MINUTE, PV, T0, usePointValuesApp } from './helpers/point-values-app.js';

/** A value as Mango writes it: members whose value is null left out. */
type Element = Record<string, unknown>;
type Arrays = Record<string, Element[]>;
type Row = Record<string, unknown> & { timestamp: unknown };

/** A GET answer's elements in Mango's shape (a null value is left out, as Mango's NON_NULL does). */
function mangoShape(values: readonly { timestamp: number; value: unknown }[]): Element[] {
  return values.map(({ timestamp, value }) => (value === null ? { timestamp } : { timestamp, value }));
}

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values API, Mango POST queries (${engine})`, function () {
    this.timeout(120_000);
    const pv = usePointValuesApp(engine);
    const { createPoint, seed } = pv;
    let admin: ApiClient;
    let viewer: ApiClient;
    let a: string;
    let b: string;
    let c: string;
    let s: string;
    const aValues: [number, number, string?][] = [];
    const bValues: [number, number][] = [];
    const END = T0 + 3 * DAY;

    const post = <T>(path: string, body: unknown, as = admin, accept?: string): Promise<Response<T>> =>
      as.post<T>(`${PV}${path}`, body, accept ? { headers: { accept } } : undefined);
    const get = async <T>(path: string, as = admin): Promise<T> => {
      const res = await as.get<T>(`${PV}${path}`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    };

    before(async () => {
      ({ admin, viewer } = pv);
      a = await createPoint('NUMERIC', { unit: 'kWh', rollup: 'AVERAGE' });
      b = await createPoint('NUMERIC');
      c = await createPoint('BINARY');
      s = await createPoint('ALPHANUMERIC');
      // a every 10 minutes, b every 15: they meet every 30 minutes.
      for (let t = T0; t < END; t += 10 * MINUTE) aValues.push([t, ((t - T0) / (10 * MINUTE)) % 7, t === T0 + HOUR ? 'calibrated' : undefined]);
      for (let t = T0; t < END; t += 15 * MINUTE) bValues.push([t, ((t - T0) / MINUTE) % 11]);
      await seed(a, aValues);
      await seed(b, bValues);
      await seed(c, [
        [T0 + 7 * MINUTE, true],
        [T0 + HOUR + 7 * MINUTE, false],
      ]);
      await seed(s, [
        [T0 + 5 * MINUTE, 'on'],
        [T0 + 2 * HOUR, '=cmd'],
      ]);
    });

    describe('POST /multiple-arrays/time-period[/<rollup>]', () => {
      it('answers {xid: [{timestamp, value}]} with the values GET /single answers', async () => {
        const res = await post<Arrays>('/multiple-arrays/time-period', { xids: [a, b, a], from: T0, to: T0 + 6 * HOUR });
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(Object.keys(res.body), [a, b], 'one key per point, in the order named, repeats once');
        for (const xid of [a, b]) {
          const raw = await pv.raw(xid, T0, T0 + 6 * HOUR);
          assert.deepEqual(res.body[xid], raw.map(({ timestamp, value }) => ({ timestamp, value })), xid);
        }
        // node-mango-client's body: ISO strings (moment's toISOString), the rollup also in the body.
        const client = await post<Arrays>('/multiple-arrays/time-period', { xids: [c], from: new Date(T0).toISOString(), to: new Date(T0 + DAY).toISOString(), rollup: 'none' });
        assert.deepEqual(client.body, {
          [c]: [
            { timestamp: T0 + 7 * MINUTE, value: true },
            { timestamp: T0 + HOUR + 7 * MINUTE, value: false },
          ],
        });
      });

      it('rolls up as the GET form does, over calendar periods in a time zone (AVERAGE, FIRST, COUNT, POINT_DEFAULT)', async () => {
        const from = T0 - 5 * HOUR;
        const to = END + 5 * HOUR;
        for (const rollup of ['AVERAGE', 'FIRST', 'COUNT', 'DELTA', 'POINT_DEFAULT']) {
          const body = { xids: [a, b], from, to, timePeriod: { periods: 1, type: 'DAYS' }, timezone: 'Europe/Berlin', truncate: true };
          const res = await post<Arrays>(`/multiple-arrays/time-period/${rollup}`, body);
          assert.equal(res.status, 200, res.text);
          const query = `from=${from}&to=${to}&timePeriodType=DAYS&timezone=Europe/Berlin&truncate=true`;
          const expected = await get<Record<string, { timestamp: number; value: unknown }[]>>(`/multiple-arrays/time-period/${a},${b}/${rollup}?${query}`);
          assert.equal(res.body[a]!.length, 5, 'Berlin days from Dec 31 to Jan 4');
          assert.equal(res.body[a]![0]!.timestamp, Date.UTC(2023, 11, 30, 23), 'a Berlin midnight');
          assert.deepEqual(res.body, { [a]: mangoShape(expected[a]!), [b]: mangoShape(expected[b]!) }, rollup);
        }
        // The rollup named only in the body applies when the path names none.
        const bodyRollup = await post<Arrays>('/multiple-arrays/time-period', { xids: [a], from: T0, to: T0 + 2 * HOUR, rollup: 'count', timePeriod: { type: 'HOURS' } });
        assert.deepEqual(bodyRollup.body, {
          [a]: [
            { timestamp: T0, value: 6 },
            { timestamp: T0 + HOUR, value: 6 },
          ],
        });
        // ... and the path's wins over the body's.
        const pathWins = await post<Arrays>('/multiple-arrays/time-period/FIRST', { xids: [a], from: T0, to: T0 + 2 * HOUR, rollup: 'COUNT', timePeriod: { periods: 1, type: 'HOURS' } });
        assert.deepEqual(pathWins.body[a], [
          { timestamp: T0, value: 0 },
          { timestamp: T0 + HOUR, value: 6 },
        ]);
      });

      it('answers ALL as Mango\'s flat object of statistics, each with its timestamp, equal to the GET form\'s', async () => {
        const body = { xids: [a, c], from: T0 + 5 * MINUTE, to: T0 + 3 * HOUR, timePeriod: { periods: 1, type: 'HOURS' } };
        const res = await post<Record<string, Record<string, { timestamp?: number; value?: unknown } | number>[]>>('/multiple-arrays/time-period/ALL', body);
        assert.equal(res.status, 200, res.text);
        const expected = await get<Record<string, { timestamp: number; value: Record<string, unknown> }[]>>(
          `/multiple-arrays/time-period/${a},${c}/ALL?from=${body.from}&to=${body.to}&timePeriodType=HOURS`,
        );
        for (const xid of [a, c]) {
          assert.equal(res.body[xid]!.length, expected[xid]!.length);
          res.body[xid]!.forEach((period, i) => {
            const want = expected[xid]![i]!;
            assert.equal(period.timestamp, want.timestamp);
            assert.deepEqual(Object.keys(period).sort(), ['timestamp', ...Object.keys(want.value)].sort(), `${xid}: the statistics its type has`);
            for (const [stat, value] of Object.entries(want.value)) {
              if (stat === 'count') {
                assert.equal(period.count, value);
                continue;
              }
              const member = period[stat] as { timestamp?: number; value?: unknown };
              assert.deepEqual(member.value, value ?? undefined, `${xid} ${stat}`);
            }
          });
        }
        // first and last carry the time of their value, the others the period start.
        const firstHour = res.body[a]![0]! as Record<string, { timestamp?: number }>;
        assert.equal(firstHour.first!.timestamp, T0 + 10 * MINUTE);
        assert.equal(firstHour.last!.timestamp, T0 + HOUR);
        assert.equal(firstHour.average!.timestamp, T0 + 5 * MINUTE);
        assert.equal(firstHour.start!.timestamp, T0 + 5 * MINUTE);
        const quietHour = res.body[c]![2]! as Record<string, { timestamp?: number; value?: unknown }>;
        assert.deepEqual(quietHour.first, {}, 'no first value: neither value nor timestamp');
        assert.deepEqual(quietHour.start, { timestamp: T0 + 2 * HOUR + 5 * MINUTE, value: false });
      });

      it('applies limit per point to values and to periods', async () => {
        const raw = await post<Arrays>('/multiple-arrays/time-period', { xids: [a, b], from: T0, to: END, limit: 3 });
        assert.deepEqual(raw.body[a], mangoShape((await pv.raw(a, T0, END)).slice(0, 3)));
        assert.equal(raw.body[b]!.length, 3);
        const rolled = await post<Arrays>('/multiple-arrays/time-period/COUNT', { xids: [a, b], from: T0, to: END, limit: 2, timePeriod: { periods: 1, type: 'HOURS' } });
        assert.deepEqual(rolled.body, {
          [a]: [
            { timestamp: T0, value: 6 },
            { timestamp: T0 + HOUR, value: 6 },
          ],
          [b]: [
            { timestamp: T0, value: 4 },
            { timestamp: T0 + HOUR, value: 4 },
          ],
        });
      });

      it('adds Mango\'s bookends when asked: the value in force at from (unless one is there) and at to', async () => {
        const from = T0 + 5 * MINUTE;
        const to = T0 + 25 * MINUTE;
        const res = await post<Arrays>('/multiple-arrays/time-period', { xids: [a], from, to, bookend: true, fields: ['TIMESTAMP', 'VALUE', 'BOOKEND'] });
        assert.deepEqual(res.body[a], [
          { timestamp: from, value: 0, bookend: true },
          { timestamp: T0 + 10 * MINUTE, value: 1, bookend: false },
          { timestamp: T0 + 20 * MINUTE, value: 2, bookend: false },
          { timestamp: to, value: 2, bookend: true },
        ]);
        const atFrom = await post<Arrays>('/multiple-arrays/time-period', { xids: [a], from: T0 + 10 * MINUTE, to, bookend: true, fields: ['TIMESTAMP', 'VALUE', 'BOOKEND'] });
        assert.equal(atFrom.body[a]![0]!.bookend, false, 'a value at from is no bookend');
        assert.equal(atFrom.body[a]!.length, 3);
        const before = await post<Arrays>('/multiple-arrays/time-period', { xids: [a], from: T0 - HOUR, to: T0 - MINUTE, bookend: true, fields: ['BOOKEND', 'VALUE', 'TIMESTAMP'] });
        assert.deepEqual(before.body[a], [
          { timestamp: T0 - HOUR, bookend: true },
          { timestamp: T0 - MINUTE, bookend: true },
        ]);
      });

      it('writes the fields asked for: annotation, rendered (with the unit), raw, cached, the point\'s names', async () => {
        const fields = ['TIMESTAMP', 'VALUE', 'ANNOTATION', 'RENDERED', 'RAW', 'CACHED', 'XID', 'NAME', 'DEVICE_NAME', 'DATA_SOURCE_NAME'];
        const res = await post<Arrays>('/multiple-arrays/time-period', { xids: [a, s], from: T0 + 50 * MINUTE, to: T0 + 61 * MINUTE, fields });
        assert.equal(res.status, 200, res.text);
        const names = { name: a, deviceName: 'Historian device', dataSourceName: 'Historian device' };
        assert.deepEqual(res.body[a], [
          { timestamp: T0 + 50 * MINUTE, value: 5, raw: 5, rendered: '5 kWh', cached: false, xid: a, ...names },
          { timestamp: T0 + HOUR, value: 6, raw: 6, rendered: '6 kWh', annotation: 'calibrated', cached: false, xid: a, ...names },
        ]);
        assert.deepEqual(res.body[s], []);
        const valueOnly = await post<Arrays>('/multiple-arrays/time-period', { xids: [s], from: T0, to: T0 + 3 * HOUR, fields: ['VALUE'] });
        assert.deepEqual(valueOnly.body[s], [{ value: 'on' }, { value: '=cmd' }]);
        const count = await post<Arrays>('/multiple-arrays/time-period/COUNT', { xids: [a], from: T0, to: T0 + HOUR, fields: ['RENDERED'] });
        assert.deepEqual(count.body[a], [{ rendered: '6' }], 'a count has no unit');
      });

      it('formats timestamps by dateTimeFormat (a Java pattern, or ISO) in the time zone', async () => {
        const body = { xids: [a], from: T0, to: T0 + 20 * MINUTE, timezone: 'America/New_York' };
        const java = await post<Arrays>('/multiple-arrays/time-period', { ...body, dateTimeFormat: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX" });
        assert.deepEqual(java.body[a], [
          { timestamp: '2023-12-31T19:00:00.000-05:00', value: 0 },
          { timestamp: '2023-12-31T19:10:00.000-05:00', value: 1 },
        ]);
        assert.equal(Date.parse(java.body[a]![1]!.timestamp as string), T0 + 10 * MINUTE);
        const iso = await post<Arrays>('/multiple-arrays/time-period', { ...body, timezone: undefined, dateTimeFormat: 'ISO' });
        assert.equal(iso.body[a]![0]!.timestamp, '2024-01-01T00:00:00.000Z');
        const words = await post<Arrays>('/multiple-arrays/time-period/FIRST', { ...body, dateTimeFormat: "EEE d MMM yy, h:mm a (VV)", timePeriod: { type: 'HOURS' } });
        assert.deepEqual(words.body[a], [{ timestamp: 'Sun 31 Dec 23, 7:00 PM (America/New_York)', value: 0 }]);
        for (const pattern of ['yyyy-MM-ddTHH', 'YYYY-ww', "yyyy'", '[yyyy]', '']) {
          assertHasMessage(assertValidation(await post('/multiple-arrays/time-period', { ...body, dateTimeFormat: pattern })), 'dateTimeFormat', /./);
        }
      });

      it('answers Accept: text/csv as Mango\'s table: each point\'s rows in turn', async () => {
        const res = await post('/multiple-arrays/time-period', { xids: [a, c], from: T0 + 50 * MINUTE, to: T0 + HOUR + 10 * MINUTE, fields: ['TIMESTAMP', 'VALUE', 'XID', 'ANNOTATION'] }, admin, 'text/csv');
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
        assert.deepEqual(parseCsv(res.text), [
          ['timestamp', 'value', 'annotation', 'xid'],
          [String(T0 + 50 * MINUTE), '5', '', a],
          [String(T0 + HOUR), '6', 'calibrated', a],
          [String(T0 + HOUR + 7 * MINUTE), 'false', '', c],
        ]);
        const all = parseCsv((await post('/multiple-arrays/time-period/ALL', { xids: [a], from: T0, to: T0 + HOUR }, admin, 'text/csv')).text);
        assert.equal(all[0]!.length, 12);
        assert.equal(all[1]![all[0]!.indexOf('count')], '6');
      });
    });

    describe('POST /single-array/time-period[/<rollup>]', () => {
      it('merges the points into rows keyed by timestamp, streamed, each row holding the points that have a value then', async () => {
        const res = await post<Row[]>('/single-array/time-period', { xids: [a, b, c], from: T0, to: T0 + 2 * HOUR });
        assert.equal(res.status, 200, res.text);
        const expected = new Map<number, Row>();
        for (const xid of [a, b, c]) {
          for (const v of await pv.raw(xid, T0, T0 + 2 * HOUR)) {
            const row = expected.get(v.timestamp) ?? { timestamp: v.timestamp };
            row[xid] = { timestamp: v.timestamp, value: v.value };
            expected.set(v.timestamp, row);
          }
        }
        assert.deepEqual(res.body, [...expected.values()].sort((x, y) => (x.timestamp as number) - (y.timestamp as number)));
        assert.deepEqual(res.body[0], { timestamp: T0, [a]: { timestamp: T0, value: 0 }, [b]: { timestamp: T0, value: 0 } }, 'a and b meet at T0');
        assert.deepEqual(res.body[1], { timestamp: T0 + 7 * MINUTE, [c]: { timestamp: T0 + 7 * MINUTE, value: true } });
        // limit: rows (and values per point).
        const limited = await post<Row[]>('/single-array/time-period', { xids: [a, b, c], from: T0, to: T0 + 2 * HOUR, limit: 4 });
        assert.deepEqual(limited.body, res.body.slice(0, 4));
      });

      it('rolls up, stamping rows with the period start and FIRST and LAST with their value\'s time (Mango\'s statistic timestamps)', async () => {
        const body = { xids: [c, a], from: T0, to: T0 + 3 * HOUR, timePeriod: { periods: 1, type: 'HOURS' } };
        const first = await post<Row[]>('/single-array/time-period/FIRST', body);
        assert.deepEqual(first.body, [
          { timestamp: T0, [c]: { timestamp: T0 + 7 * MINUTE, value: true }, [a]: { timestamp: T0, value: 0 } },
          { timestamp: T0 + HOUR, [c]: { timestamp: T0 + HOUR + 7 * MINUTE, value: false }, [a]: { timestamp: T0 + HOUR, value: 6 } },
          { timestamp: T0 + 2 * HOUR, [c]: {}, [a]: { timestamp: T0 + 2 * HOUR, value: 5 } },
        ]);
        const count = await post<Row[]>('/single-array/time-period/COUNT', { ...body, from: T0 - 2 * HOUR, to: T0 });
        assert.deepEqual(count.body, [
          { timestamp: T0 - 2 * HOUR, [c]: { timestamp: T0 - 2 * HOUR, value: 0 }, [a]: { timestamp: T0 - 2 * HOUR, value: 0 } },
          { timestamp: T0 - HOUR, [c]: { timestamp: T0 - HOUR, value: 0 }, [a]: { timestamp: T0 - HOUR, value: 0 } },
        ]);
        // POINT_DEFAULT: each point its own rollup (a: AVERAGE, b: NONE → raw values beside periods).
        const mixed = await post<Row[]>('/single-array/time-period/POINT_DEFAULT', { xids: [a, b], from: T0, to: T0 + 30 * MINUTE, timePeriod: { periods: 30, type: 'MINUTES' } });
        assert.deepEqual(mixed.body, [
          { timestamp: T0, [a]: { timestamp: T0, value: 1 }, [b]: { timestamp: T0, value: 0 } },
          { timestamp: T0 + 15 * MINUTE, [b]: { timestamp: T0 + 15 * MINUTE, value: 4 } },
        ]);
        // AVERAGE over calendar days in a zone: the same numbers as GET's, one row per day.
        const days = { xids: [a, b], from: T0, to: END, timePeriod: { type: 'DAYS' }, timezone: 'Asia/Tokyo', truncate: true };
        const avg = await post<Row[]>('/single-array/time-period/AVERAGE', days);
        const expected = await get<Record<string, { timestamp: number; value: unknown }[]>>(`/multiple-arrays/time-period/${a},${b}/AVERAGE?from=${T0}&to=${END}&timePeriodType=DAYS&timezone=Asia/Tokyo&truncate=true`);
        assert.deepEqual(
          avg.body,
          expected[a]!.map((v, i) => ({ timestamp: v.timestamp, [a]: mangoShape([v])[0], [b]: mangoShape([expected[b]![i]!])[0] })),
        );
      });

      it('answers Accept: text/csv as one table: timestamp, then <xid> and <xid>.<field> columns, empty where a point has no value', async () => {
        const res = await post('/single-array/time-period', { xids: [a, c], from: T0 + 50 * MINUTE, to: T0 + HOUR + 10 * MINUTE, fields: ['TIMESTAMP', 'VALUE', 'ANNOTATION'] }, admin, 'text/csv');
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(parseCsv(res.text), [
          ['timestamp', a, `${a}.annotation`, c, `${c}.annotation`],
          [String(T0 + 50 * MINUTE), '5', '', '', ''],
          [String(T0 + HOUR), '6', 'calibrated', '', ''],
          [String(T0 + HOUR + 7 * MINUTE), '', '', 'false', ''],
        ]);
        const text = await post('/single-array/time-period', { xids: [s], from: T0, to: T0 + 3 * HOUR, dateTimeFormat: 'HH:mm' }, admin, 'text/csv');
        assert.deepEqual(parseCsv(text.text), [['timestamp', s], ['00:05', 'on'], ['02:00', "'=cmd"]], 'formula cells defused as in every CSV answer');
      });
    });

    describe('latest values', () => {
      it('POST /multiple-arrays/latest answers each point\'s newest values, newest first, as GET /latest does', async () => {
        const res = await post<Arrays>('/multiple-arrays/latest', { xids: [a, c], limit: 3 });
        assert.equal(res.status, 200, res.text);
        for (const xid of [a, c]) assert.deepEqual(res.body[xid], mangoShape(await pv.latest(xid, 3)), xid);
        const one = await post<Arrays>('/multiple-arrays/latest', { xids: [b] });
        assert.deepEqual(one.body[b], [{ timestamp: bValues.at(-1)![0], value: bValues.at(-1)![1] }], 'limit 1 by default');
      });

      it('POST /single-array/latest merges them newest first, limit counting rows', async () => {
        const res = await post<Row[]>('/single-array/latest', { xids: [a, b], limit: 4 });
        assert.equal(res.status, 200, res.text);
        const lastA = aValues.slice(-4);
        const lastB = bValues.slice(-4);
        const rows = new Map<number, Row>();
        for (const [xid, list] of [[a, lastA], [b, lastB]] as const) {
          for (const [timestamp, value] of list) rows.set(timestamp, { ...(rows.get(timestamp) ?? { timestamp }), [xid]: { timestamp, value } });
        }
        assert.deepEqual(res.body, [...rows.values()].sort((x, y) => (y.timestamp as number) - (x.timestamp as number)).slice(0, 4));
      });

      it('GET /point-values/<xid>/latest answers as GET /latest/<xid> (node-mango-client\'s DataPoint.getValues)', async () => {
        const old = await get<unknown[]>(`/${encodeURIComponent(a)}/latest?limit=5`);
        assert.deepEqual(old, await get<unknown[]>(`/latest/${encodeURIComponent(a)}?limit=5`));
        assert.equal(old.length, 5);
        assertError(await admin.get(`${PV}/pv-no-such-point/latest`), 404, -1, 'NOT_FOUND');
      });
    });

    describe('size', () => {
      /** Points × values each: the large case holds 100 × the small one's values, five store pages (10,000) a point. */
      const POINTS = 4;
      const SMALL = 500;
      const PAGE = 10_000;
      const LARGE = 50_000;
      const BASE = T0 + 10 * DAY;
      const mb = (n: number) => (n / 1024 / 1024).toFixed(1);

      /** A full collection on demand (the process runs without --expose-gc): what the heap holds live. */
      async function collector(): Promise<() => void> {
        const v8 = await import('node:v8');
        const vm = await import('node:vm');
        v8.setFlagsFromString('--expose_gc');
        return vm.runInNewContext('gc') as () => void;
      }

      /** Streams one answer, counting bytes and objects without keeping them; `sample` runs every 100 ms meanwhile. */
      async function measure(path: string, body: unknown, sample?: () => void): Promise<{ ms: number; bytes: number; objects: number }> {
        const timer = sample && setInterval(sample, 100);
        const started = performance.now();
        const res = await fetch(`${pv.app.url}${PV}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'x-xsrf-token': admin.cookies.get('XSRF-TOKEN') ?? '' },
          body: JSON.stringify(body),
        });
        assert.equal(res.status, 200);
        let bytes = 0;
        let objects = 0;
        const decoder = new TextDecoder();
        const OPEN = '{"timestamp":';
        // The end of the previous chunk, too short to hold a whole OPEN: one split across chunks still counts once.
        let carry = '';
        for await (const chunk of res.body!) {
          bytes += chunk.length;
          const text = carry + decoder.decode(chunk, { stream: true });
          objects += text.split(OPEN).length - 1;
          carry = text.slice(-(OPEN.length - 1));
        }
        const ms = performance.now() - started;
        clearInterval(timer);
        return { ms, bytes, objects };
      }

      it('merges 100 × the values through a single array in about 100 × the time or less, its live memory bounded by store pages (no cliff)', async function () {
        this.timeout(300_000);
        const xids: string[] = [];
        for (let p = 0; p < POINTS; p++) {
          const xid = await createPoint('NUMERIC');
          xids.push(xid);
          // Half the points share timestamps, the other half are 1 ms later: rows of half the points each.
          const offset = p % 2;
          for (let first = 0; first < LARGE; first += 10_000) {
            const entries = Array.from({ length: 10_000 }, (_, k) => ({ xid, timestamp: BASE + (first + k) * 1000 + offset, value: (first + k) % 97 }));
            const res = await pv.bulk(entries);
            assert.equal(res.status, 200, res.text);
          }
        }
        const query = (n: number) => ({ xids, from: BASE, to: BASE + n * 1000 });
        const median = async (path: string, n: number, runs: number) => {
          const results = [];
          for (let i = 0; i < runs; i++) results.push(await measure(path, query(n)));
          return results.sort((x, y) => x.ms - y.ms)[Math.floor(runs / 2)]!;
        };
        const small = await median('/single-array/time-period', SMALL, 5);
        const large = await median('/single-array/time-period', LARGE, 3);
        const arrays = await median('/multiple-arrays/time-period', LARGE, 3);
        // Each row and each value in it opens with {"timestamp":.
        assert.equal(small.objects, 2 * SMALL + POINTS * SMALL);
        assert.equal(large.objects, 2 * LARGE + POINTS * LARGE);

        // Live heap (after a full collection) at its highest while the answer streams: one store page a point, then five.
        const gc = await collector();
        const livePeak = async (n: number) => {
          gc();
          const base = process.memoryUsage().heapUsed;
          let peak = 0;
          await measure('/single-array/time-period', query(n), () => {
            gc();
            peak = Math.max(peak, process.memoryUsage().heapUsed - base);
          });
          return peak;
        };
        const onePage = await livePeak(PAGE);
        const fivePages = await livePeak(LARGE);
        console.log(
          `      single array of ${POINTS} points: ${POINTS * SMALL} values ${small.ms.toFixed(0)} ms (${mb(small.bytes)} MiB); ` +
            `${POINTS * LARGE} values ${large.ms.toFixed(0)} ms (${mb(large.bytes)} MiB; several arrays ${arrays.ms.toFixed(0)} ms): time × ${(large.ms / small.ms).toFixed(0)} for × 100 values; ` +
            `live heap at most +${mb(onePage)} MiB for ${POINTS * PAGE} values, +${mb(fivePages)} MiB for ${POINTS * LARGE}`,
        );
        // Linear is × 100 at most (less: a request's fixed cost); a merge that rescanned its rows would be far beyond.
        assert.ok(large.ms / small.ms < 400, `time grew × ${(large.ms / small.ms).toFixed(0)} for × 100 values`);
        assert.ok(large.ms < 3 * arrays.ms + 500, 'the merge costs about what the several arrays of the same values cost');
        // Streamed: the server holds a store page or two a point, never the whole answer (five times the values).
        assert.ok(fivePages < 2 * onePage + 8 * 1024 * 1024, `live heap ${mb(fivePages)} MiB for 5 pages a point against ${mb(onePage)} MiB for one`);
      });
    });

    describe('bounds, permissions and bad bodies', () => {
      it('refuses more XIDs or rollup periods than the GET forms allow, and too many latest values, with 422 before any lookup', async () => {
        const many = Array.from({ length: 101 }, (_, i) => `pv-none-${i}`);
        assertHasMessage(assertValidation(await post('/multiple-arrays/time-period', { xids: many })), 'xids', /101 points named, at most 100/);
        const periods = await post('/multiple-arrays/time-period/AVERAGE', { xids: ['pv-none-1', 'pv-none-2'], from: T0, to: T0 + 100 * DAY, timePeriod: { periods: 1, type: 'MINUTES' } });
        assertHasMessage(assertValidation(periods), 'timePeriod', /144,000 periods × 2 points = 288,000 periods/);
        // A limit on periods counts: 2 points × 1,000 periods is within the bound.
        const limited = await post<Arrays>('/multiple-arrays/time-period/COUNT', { xids: [a, b], from: T0, to: T0 + 100 * DAY, limit: 1000, timePeriod: { periods: 1, type: 'MINUTES' } });
        assert.equal(limited.status, 200, limited.text);
        assert.equal(limited.body[a]!.length, 1000);
        assertHasMessage(assertValidation(await post('/multiple-arrays/latest', { xids: [a], limit: 10_001 })), 'limit', 'must be between 1 and 10,000');
        const wide = Array.from({ length: 21 }, (_, i) => `pv-none-${i}`);
        assertHasMessage(assertValidation(await post('/single-array/latest', { xids: wide, limit: 10_000 })), 'limit', /210,000 values held at once/);
      });

      it('refuses a rollup a point\'s type cannot have (422), and a rollup path Mango has that this service does not (400)', async () => {
        assertHasMessage(assertValidation(await post('/multiple-arrays/time-period/AVERAGE', { xids: [a, c], from: T0, to: T0 + HOUR })), 'rollup', /AVERAGE needs a NUMERIC point/);
        assertHasMessage(assertValidation(await post('/single-array/time-period', { xids: [s], from: T0, to: T0 + HOUR, rollup: 'sum' })), 'rollup', /SUM needs a NUMERIC point/);
        for (const rollup of ['FFT', 'ACCUMULATOR', 'average']) {
          const res = await post(`/single-array/time-period/${rollup}`, { xids: [a] });
          assert.ok(assertError(res, 400, 4005).message.includes('rollup'), res.text);
        }
      });

      it('checks permissions on every point: 404 unknown, 403 unreadable, 401 anonymous', async () => {
        const secret = await createPoint('NUMERIC', { readPermission: [] });
        assertError(await post('/multiple-arrays/time-period', { xids: [a, 'pv-no-such-point'] }), 404, -1, 'NOT_FOUND');
        assertError(await post('/single-array/time-period', { xids: [a, secret] }, viewer), 403, 4004);
        assertError(await post('/multiple-arrays/latest', { xids: [secret] }, viewer), 403, 4004);
        const ok = await post<Arrays>('/multiple-arrays/latest', { xids: [a] }, viewer);
        assert.equal(ok.status, 200, ok.text);
        const anonymous = await fetch(`${pv.app.url}${PV}/multiple-arrays/latest`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ xids: [a] }) });
        assert.equal(anonymous.status, 401);
      });

      it('refuses bad bodies: malformed JSON 400, a known field with a bad value 422 naming it; unknown fields are ignored', async () => {
        const malformed = await admin.post(`${PV}/multiple-arrays/time-period`, undefined, { rawBody: '{"xids": [' });
        assertError(malformed, 400, 4005);
        const cases: [unknown, string][] = [
          [{}, 'xids'],
          [{ xids: 'abc' }, 'xids'],
          [{ xids: [] }, 'xids'],
          [{ xids: [a], from: 'yesterday' }, 'from'],
          [{ xids: [a], from: T0 + 1, to: T0 }, 'from'],
          [{ xids: [a], limit: 0 }, 'limit'],
          [{ xids: [a], limit: 1.5 }, 'limit'],
          [{ xids: [a], fields: ['VALUE', 'COLOUR'] }, 'fields[1]'],
          [{ xids: [a], timePeriod: { periods: 1, type: 'FORTNIGHTS' } }, 'timePeriod.type'],
          [{ xids: [a], timePeriod: { periods: 0, type: 'HOURS' } }, 'timePeriod.periods'],
          [{ xids: [a], timezone: 'Mars/Olympus' }, 'timezone'],
          [{ xids: [a], rollup: 'MEDIAN' }, 'rollup'],
          [{ xids: [a], bookend: 'yes' }, 'bookend'],
          [{ xids: [a], simplifyTolerance: -1 }, 'simplifyTolerance'],
          [{ xids: [a], before: T0 }, 'before'],
        ];
        for (const [body, property] of cases) {
          const res = await post('/multiple-arrays/time-period', body);
          assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
          assertHasMessage(assertValidation(res), property, /./);
        }
        assertValidation(await post('/single-array/latest', { xids: [a], before: new Date(T0).toISOString() }));
        // Mango's other fields (and nulls) are accepted: simplify and useCache answered as without them.
        const lenient = await post<Arrays>('/multiple-arrays/time-period', {
          xids: [a],
          from: T0,
          to: T0 + 30 * MINUTE,
          simplifyTolerance: 10,
          simplifyTarget: 2,
          useCache: 'BOTH',
          dateTimeFormat: null,
          fields: null,
          colour: 'blue',
        });
        assert.equal(lenient.status, 200, lenient.text);
        assert.deepEqual(lenient.body[a], mangoShape((await pv.raw(a, T0, T0 + 30 * MINUTE)).map(({ timestamp, value }) => ({ timestamp, value }))));
      });
    });
  });
}
