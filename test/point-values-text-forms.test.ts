// dateTimeFormat (ISO or a pattern, in `timezone`) and header=name on the GET point-value reads, JSON and
// CSV, on the real service; the ISO text checked against Luxon, an independent formatter.
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { compileDateTimePattern } from '../src/core/date-time-pattern.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';
import { parseCsv } from './helpers/csv.js';
import type { ApiClient } from './helpers/client.js';
import { assertBadParam, DP, HOUR, MINUTE, PV, T0, usePointValuesApp } from './helpers/point-values-app.js';

/** Luxon's ISO text with milliseconds and the offset (Z for UTC). */
function luxonIso(ms: number, zone: string): string {
  const text = DateTime.fromMillis(ms, { zone }).toISO({ suppressMilliseconds: false, includeOffset: true })!;
  return text.replace(/\+00:00$/, 'Z');
}

describe('ISO timestamps (core/date-time-pattern.ts)', () => {
  it('writes what Luxon writes, in every zone, around DST changes and across many instants', () => {
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/St_Johns', 'Pacific/Chatham'];
    // Each zone's instants: every 7 minutes over the two days around each DST change of 2024, and random ones over 1900–2100.
    const instants: number[] = [];
    for (const day of [Date.UTC(2024, 2, 9), Date.UTC(2024, 2, 30), Date.UTC(2024, 3, 6), Date.UTC(2024, 8, 28), Date.UTC(2024, 9, 27), Date.UTC(2024, 10, 2)]) {
      for (let t = day; t < day + 2 * 24 * HOUR; t += 7 * MINUTE + 123) instants.push(t);
    }
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 5_000; i++) instants.push(Math.round(Date.UTC(1900, 0, 1) + random() * 200 * 365.25 * 24 * HOUR));
    for (const zone of zones) {
      const iso = compileDateTimePattern('ISO', zone);
      for (const ms of instants) assert.equal(iso(ms), luxonIso(ms, zone), `${zone} at ${ms}`);
      // The same instants out of order: the remembered quarter hour must not leak into another.
      for (const ms of [...instants].reverse()) assert.equal(iso(ms), luxonIso(ms, zone), `${zone} at ${ms} (descending)`);
    }
  });

  it('takes the general path outside years 1000–9999 and agrees with the pattern there', () => {
    const iso = compileDateTimePattern('ISO', 'Europe/Paris');
    const pattern = compileDateTimePattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 'Europe/Paris');
    for (const ms of [Date.UTC(999, 5, 1), Date.UTC(-5, 0, 1), Date.UTC(10_000, 0, 2), 8.64e15, -8.64e15]) assert.equal(iso(ms), pattern(ms));
    assert.equal(compileDateTimePattern('ISO', 'UTC')(Date.UTC(2024, 0, 1, 12)), '2024-01-01T12:00:00.000Z');
  });
});

announceEngines();
for (const engine of metadataEngines()) {
  describe(`point values: dateTimeFormat and header (${engine})`, function () {
    this.timeout(60_000);
    const pv = usePointValuesApp(engine);
    let admin: ApiClient;
    let point: string;
    let other: string;
    before(async () => {
      admin = pv.admin;
      point = await pv.createPoint('NUMERIC');
      let res = await admin.put(`${DP}/${point}`, { ...(await admin.get<Record<string, unknown>>(`${DP}/${point}`)).body, name: 'Boiler, supply', unit: '°C' });
      assert.equal(res.status, 200, res.text);
      other = await pv.createPoint('ALPHANUMERIC');
      res = await admin.put(`${DP}/${other}`, { ...(await admin.get<Record<string, unknown>>(`${DP}/${other}`)).body, name: 'State' });
      assert.equal(res.status, 200, res.text);
      await pv.seed(point, [
        [T0, 1],
        [T0 + 30 * MINUTE, 2, 'noted'],
        [T0 + HOUR, 3],
      ]);
      await pv.seed(other, [[T0 + 30 * MINUTE, 'on']]);
    });

    it('JSON raw values, rollups and several points carry ISO text in the zone', async () => {
      const raw = await pv.single(point, { from: T0, to: T0 + 2 * HOUR, dateTimeFormat: 'ISO', timezone: 'Europe/Berlin' });
      assert.equal(raw.status, 200, raw.text);
      assert.deepEqual(raw.body, [
        { timestamp: '2024-01-01T01:00:00.000+01:00', value: 1 },
        { timestamp: '2024-01-01T01:30:00.000+01:00', value: 2, annotation: 'noted' },
        { timestamp: '2024-01-01T02:00:00.000+01:00', value: 3 },
      ]);
      const utc = await pv.single(point, { from: T0, to: T0 + HOUR, dateTimeFormat: 'ISO' });
      assert.deepEqual(
        (utc.body as { timestamp: string }[]).map((v) => v.timestamp),
        ['2024-01-01T00:00:00.000Z', '2024-01-01T00:30:00.000Z'],
        'UTC by default, Z for its offset',
      );
      const rolled = await pv.single(point, { from: T0, to: T0 + 2 * HOUR, rollup: 'COUNT', timePeriodType: 'HOURS', dateTimeFormat: 'ISO', timezone: 'Asia/Kathmandu' });
      assert.equal(rolled.status, 200, rolled.text);
      assert.deepEqual(
        (rolled.body as { timestamp: string }[]).map((v) => v.timestamp),
        ['2024-01-01T05:45:00.000+05:45', '2024-01-01T06:45:00.000+05:45'],
      );
      const many = await admin.get<Record<string, { timestamp: string }[]>>(`${PV}/multiple-arrays/time-period/${point},${other}?from=${T0}&to=${T0 + HOUR}&dateTimeFormat=ISO`);
      assert.equal(many.status, 200, many.text);
      assert.deepEqual(many.body[other]!.map((v) => v.timestamp), ['2024-01-01T00:30:00.000Z']);
      const latest = await admin.get<{ timestamp: string }[]>(`${PV}/latest/${point}?limit=2&dateTimeFormat=ISO&timezone=America/New_York`);
      assert.equal(latest.status, 200, latest.text);
      assert.deepEqual(latest.body.map((v) => v.timestamp), ['2023-12-31T20:00:00.000-05:00', '2023-12-31T19:30:00.000-05:00']);
    });

    it('a pattern is taken too, and epoch milliseconds stay the default', async () => {
      const res = await pv.single(point, { from: T0, to: T0 + 1, dateTimeFormat: 'yyyy-MM-dd HH:mm', timezone: 'Europe/Berlin' });
      assert.deepEqual(res.body, [{ timestamp: '2024-01-01 01:00', value: 1 }]);
      const plain = await pv.single(point, { from: T0, to: T0 + 1 });
      assert.deepEqual(plain.body, [{ timestamp: T0, value: 1 }]);
    });

    it('CSV: ISO timestamps, and header=name titles the value columns name (unit)', async () => {
      const csv = { headers: { accept: 'text/csv' } };
      let res = await admin.request('GET', `${PV}/single/${point}?from=${T0}&to=${T0 + HOUR}&dateTimeFormat=ISO&header=name`, csv);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(parseCsv(res.text), [
        ['timestamp', 'Boiler, supply (°C)', 'annotation'],
        ['2024-01-01T00:00:00.000Z', '1', ''],
        ['2024-01-01T00:30:00.000Z', '2', 'noted'],
      ]);
      res = await admin.request('GET', `${PV}/multiple-arrays/time-period/${point},${other}?from=${T0}&to=${T0 + HOUR}&dateTimeFormat=ISO&timezone=Europe/Berlin&header=name`, csv);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(parseCsv(res.text), [
        ['timestamp', 'Boiler, supply (°C)', 'State'],
        ['2024-01-01T01:00:00.000+01:00', '1', ''],
        ['2024-01-01T01:30:00.000+01:00', '2', 'on'],
      ]);
      res = await admin.request('GET', `${PV}/multiple-arrays/time-period/${point},${other}/ALL?from=${T0}&to=${T0 + HOUR}&timePeriodType=HOURS&header=name`, csv);
      assert.equal(res.status, 200, res.text);
      const header = parseCsv(res.text)[0]!;
      assert.ok(header.includes('Boiler, supply (°C).average'), header.join('|'));
      assert.ok(header.includes('State.first'), header.join('|'));
      res = await admin.request('GET', `${PV}/time-period/${point}/AVERAGE?from=${T0}&to=${T0 + 2 * HOUR}&timePeriodType=HOURS&header=name&dateTimeFormat=ISO`, csv);
      assert.deepEqual(parseCsv(res.text)[0], ['timestamp', 'Boiler, supply (°C)']);
      assert.equal(parseCsv(res.text)[1]![0], '2024-01-01T00:00:00.000Z');
      res = await admin.request('GET', `${PV}/latest/${point}?header=name&dateTimeFormat=ISO`, csv);
      assert.deepEqual(parseCsv(res.text), [
        ['timestamp', 'Boiler, supply (°C)', 'annotation'],
        ['2024-01-01T01:00:00.000Z', '3', ''],
      ]);
      res = await admin.request('GET', `${PV}/multiple-arrays/time-period/${point},${other}?from=${T0}&to=${T0 + HOUR}`, csv);
      assert.deepEqual(parseCsv(res.text)[0], ['timestamp', point, other], 'XIDs by default');
    });

    it('refuses a bad dateTimeFormat, timezone or header with a 400 naming it', async () => {
      assertBadParam(await pv.single(point, { from: T0, to: T0 + HOUR, dateTimeFormat: 'yyyy-[MM]' }), 'dateTimeFormat');
      assertBadParam(await pv.single(point, { from: T0, to: T0 + HOUR, dateTimeFormat: 'ISO', timezone: 'Mars/Olympus' }), 'timezone');
      assertBadParam(await pv.single(point, { from: T0, to: T0 + HOUR, header: 'label' }), 'header');
      assertBadParam(await admin.get(`${PV}/latest/${point}?dateTimeFormat=QQQQQQ`), 'dateTimeFormat');
    });
  });
}
