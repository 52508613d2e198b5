// A point's text renderer (core/text-renderer.ts): the rule itself, then on the real service: validated
// by the data-point schema and the point's data type (422 naming the field), stored, shown, exported
// and imported with the point, and used by the RENDERED field of Mango's point-value queries.
import assert from 'node:assert/strict';
import { plainNumber, renderValue, textRendererProblems, type TextRenderer } from '../src/core/text-renderer.js';
import { assertHasMessage, assertValidation } from './helpers/assertions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loggedIn, type ApiClient } from './helpers/client.js';
import { announceEngines, metadataEngines } from './helpers/engines.js';

const DS = '/rest/latest/data-sources';
const DP = '/rest/latest/data-points';
const PV = '/rest/latest/point-values';
const CFG = '/rest/latest/configuration';

describe('text renderer rule', () => {
  it('PLAIN: 6 significant digits, the integer part kept, the unit after numbers only', () => {
    assert.equal(renderValue(75.21472877765548, undefined, '°C'), '75.2147 °C');
    assert.equal(plainNumber(1234567.89), '1234568');
    assert.equal(plainNumber(0.000123456789), '0.000123457');
    assert.equal(plainNumber(21.5), '21.5');
    assert.equal(plainNumber(-3), '-3');
    assert.equal(renderValue(true, { type: 'PLAIN' }, 'x'), 'true');
    assert.equal(renderValue('open', undefined, 'x'), 'open');
    assert.equal(renderValue(null, undefined, 'x'), '—');
  });

  it('ANALOG: a decimal pattern, rounding half away from zero on the decimal text', () => {
    const r = (format: string): TextRenderer => ({ type: 'ANALOG', format });
    assert.equal(renderValue(75.21472877765548, r('0.00'), '°C'), '75.21 °C');
    assert.equal(renderValue(1.005, r('0.00')), '1.01');
    assert.equal(renderValue(-0.001, r('0.00')), '0.00', 'no negative zero');
    assert.equal(renderValue(1234567.891, r('#,##0.0')), '1,234,567.9');
    assert.equal(renderValue(2.5, r('0.###')), '2.5');
    assert.equal(renderValue(2, r('000')), '002');
    assert.equal(renderValue(0.5, r('#')), '1');
    assert.equal(renderValue(-1234.5, r('#,##0')), '-1,235');
  });

  it('BINARY and MULTISTATE: labels, a state without one as its number', () => {
    const binary: TextRenderer = { type: 'BINARY', zeroLabel: 'Stopped', oneLabel: 'Running' };
    assert.equal(renderValue(true, binary, 'x'), 'Running');
    assert.equal(renderValue(false, binary), 'Stopped');
    const states: TextRenderer = { type: 'MULTISTATE', values: [{ key: 0, text: 'Off' }, { key: 2, text: 'Auto' }] };
    assert.equal(renderValue(2, states), 'Auto');
    assert.equal(renderValue(1, states), '1');
  });

  it('names what does not fit: a type for another data type, a bad pattern, a state named twice', () => {
    assert.deepEqual(textRendererProblems({ type: 'ANALOG', format: '0.0' }, 'BINARY').map((p) => p.field), ['type']);
    for (const bad of ['0.0.0', 'abc', ',##0', '0.' + '0'.repeat(16), '.']) {
      assert.deepEqual(textRendererProblems({ type: 'ANALOG', format: bad }, 'NUMERIC').map((p) => p.field), ['format'], bad);
    }
    assert.deepEqual(textRendererProblems({ type: 'ANALOG', format: '#,##0.00' }, 'NUMERIC'), []);
    assert.deepEqual(
      textRendererProblems({ type: 'MULTISTATE', values: [{ key: 1, text: 'a' }, { key: 1, text: 'b' }] }, 'MULTISTATE').map((p) => p.field),
      ['values[1].key'],
    );
  });
});

announceEngines();
for (const engine of metadataEngines()) {
  describe(`data point text renderer API (${engine})`, function () {
    this.timeout(60_000);
    let app: TestApp;
    let admin: ApiClient;
    const SOURCE = `tr-src-${engine}`;
    let seq = 0;
    const xid = (prefix: string) => `tr-${prefix}-${++seq}`;

    async function create(body: Record<string, unknown>): Promise<Record<string, unknown>> {
      const res = await admin.post<Record<string, unknown>>(DP, { dataSourceXid: SOURCE, ...body });
      assert.equal(res.status, 201, res.text);
      return res.body;
    }

    before(async () => {
      app = await startTestApp(engine);
      admin = await loggedIn(app.url, 'admin', 'admin');
      const res = await admin.post(DS, { xid: SOURCE, name: 'Renderer device', modelType: 'VIRTUAL', enabled: false });
      assert.equal(res.status, 201, res.text);
    });
    after(() => app.stop());

    it('defaults to PLAIN and keeps only the fields of the given type', async () => {
      const plain = await create({ xid: xid('plain'), name: 'Plain', pointLocator: { dataType: 'NUMERIC' } });
      assert.deepEqual(plain.textRenderer, { type: 'PLAIN' });
      const analog = await create({ xid: xid('analog'), name: 'Analog', pointLocator: { dataType: 'NUMERIC' }, textRenderer: { type: 'ANALOG', format: '0.0', zeroLabel: 'ignored' } });
      assert.deepEqual(analog.textRenderer, { type: 'ANALOG', format: '0.0' });
      const fetched = await admin.get<Record<string, unknown>>(`${DP}/${String(analog.xid)}`);
      assert.deepEqual(fetched.body.textRenderer, { type: 'ANALOG', format: '0.0' });
    });

    it('refuses a renderer that does not fit: 422 naming the field, nothing stored', async () => {
      const cases: [Record<string, unknown>, string, string, RegExp][] = [
        [{ type: 'ANALOG', format: '0.0' }, 'BINARY', 'textRenderer.type', /BINARY/],
        [{ type: 'ANALOG', format: 'x.00' }, 'NUMERIC', 'textRenderer.format', /decimal pattern/],
        [{ type: 'ANALOG' }, 'NUMERIC', 'textRenderer.format', /required/],
        [{ type: 'BINARY', zeroLabel: 'Off' }, 'BINARY', 'textRenderer.oneLabel', /required/],
        [{ type: 'MULTISTATE', values: [{ key: 1, text: 'a' }, { key: 1, text: 'b' }] }, 'MULTISTATE', 'textRenderer.values[1].key', /twice/],
        [{ type: 'FANCY' }, 'NUMERIC', 'textRenderer.type', /.+/],
        [{ type: 'MULTISTATE', values: [{ key: 1.5, text: 'a' }] }, 'MULTISTATE', 'textRenderer.values[0].key', /.+/],
      ];
      for (const [textRenderer, dataType, property, message] of cases) {
        const body = { xid: xid('bad'), name: 'Bad', dataSourceXid: SOURCE, pointLocator: { dataType }, textRenderer };
        const messages = assertValidation(await admin.post(DP, body));
        assertHasMessage(messages, property, message);
        assert.equal((await admin.get(`${DP}/${body.xid}`)).status, 404, 'nothing stored');
      }
    });

    it('an edit changing the data type drops a renderer that no longer fits; one given is checked', async () => {
      const p = await create({ xid: xid('change'), name: 'Change', pointLocator: { dataType: 'BINARY' }, textRenderer: { type: 'BINARY', zeroLabel: 'Off', oneLabel: 'On' } });
      const rest = Object.fromEntries(Object.entries(p).filter(([k]) => k !== 'textRenderer'));
      const changed = await admin.put<Record<string, unknown>>(`${DP}/${String(p.xid)}`, { ...rest, pointLocator: { dataType: 'NUMERIC' } });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual(changed.body.textRenderer, { type: 'PLAIN' });
      const refused = await admin.put(`${DP}/${String(p.xid)}`, { ...rest, pointLocator: { dataType: 'MULTISTATE', values: [0, 1, 2] }, textRenderer: { type: 'BINARY', zeroLabel: 'a', oneLabel: 'b' } });
      assertHasMessage(assertValidation(refused), 'textRenderer.type', /MULTISTATE/);
    });

    it("reads Mango's renderer forms (node-mango-client, Mango exports) into ours; one without an equivalent keeps the stored one", async () => {
      const analog = await create({ xid: xid('mango-a'), name: 'A', pointLocator: { dataType: 'NUMERIC' }, textRenderer: { type: 'textRendererAnalog', format: '0.0', useUnitAsSuffix: true, suffix: '' } });
      assert.deepEqual(analog.textRenderer, { type: 'ANALOG', format: '0.0' });
      const binary = await create({ xid: xid('mango-b'), name: 'B', pointLocator: { dataType: 'BINARY' }, textRenderer: { type: 'textRendererBinary', zeroLabel: 'Off', zeroColour: 'red', oneLabel: 'On', oneColour: 'green' } });
      assert.deepEqual(binary.textRenderer, { type: 'BINARY', zeroLabel: 'Off', oneLabel: 'On' });
      const multi = await create({
        xid: xid('mango-m'),
        name: 'M',
        pointLocator: { dataType: 'MULTISTATE', values: [0, 1, 2] },
        textRenderer: { type: 'textRendererMultistate', multistateValues: [{ key: 1, text: 'Manual', colour: 'blue' }] },
      });
      assert.deepEqual(multi.textRenderer, { type: 'MULTISTATE', values: [{ key: 1, text: 'Manual' }] });
      const range = await admin.put<Record<string, unknown>>(`${DP}/${String(analog.xid)}`, { ...analog, textRenderer: { type: 'textRendererRange', rangeValues: [] } });
      assert.equal(range.status, 200, range.text);
      assert.deepEqual(range.body.textRenderer, { type: 'ANALOG', format: '0.0' });
    });

    it('goes out with an export and comes back with an import', async () => {
      const p = await create({ xid: xid('export'), name: 'Export', pointLocator: { dataType: 'MULTISTATE', values: [0, 1, 2] }, textRenderer: { type: 'MULTISTATE', values: [{ key: 0, text: 'Off' }, { key: 1, text: 'Auto' }] } });
      const doc = await admin.get<{ dataPoints: Record<string, unknown>[] }>(`${CFG}/export?include=dataPoints`);
      assert.equal(doc.status, 200, doc.text);
      const exported = doc.body.dataPoints.find((d) => d.xid === p.xid)!;
      assert.deepEqual(exported.textRenderer, p.textRenderer);
      const edited = { ...exported, textRenderer: { type: 'MULTISTATE', values: [{ key: 0, text: 'Stopped' }] } };
      const imported = await admin.post(`${CFG}/import`, { dataPoints: [edited] });
      assert.equal(imported.status, 200, imported.text);
      const after = await admin.get<Record<string, unknown>>(`${DP}/${String(p.xid)}`);
      assert.deepEqual(after.body.textRenderer, { type: 'MULTISTATE', values: [{ key: 0, text: 'Stopped' }] });
      const bad = await admin.post(`${CFG}/import`, { dataPoints: [{ ...exported, textRenderer: { type: 'ANALOG', format: '0' } }] });
      assert.equal(bad.status, 422, bad.text);
    });

    it('renders values through it in the RENDERED field of the point-value queries', async () => {
      const analog = await create({ xid: xid('rv-analog'), name: 'Boiler', unit: '°C', pointLocator: { dataType: 'NUMERIC' }, textRenderer: { type: 'ANALOG', format: '0.00' } });
      const plain = await create({ xid: xid('rv-plain'), name: 'Raw', unit: 'bar', pointLocator: { dataType: 'NUMERIC' } });
      const pump = await create({ xid: xid('rv-binary'), name: 'Pump', pointLocator: { dataType: 'BINARY' }, textRenderer: { type: 'BINARY', zeroLabel: 'Stopped', oneLabel: 'Running' } });
      const mode = await create({ xid: xid('rv-multi'), name: 'Mode', pointLocator: { dataType: 'MULTISTATE', values: [0, 1, 2] }, textRenderer: { type: 'MULTISTATE', values: [{ key: 2, text: 'Auto' }] } });
      const t = Date.UTC(2026, 0, 5, 12);
      const written = await admin.post(PV, [
        { xid: analog.xid, timestamp: t, value: 75.21472877765548 },
        { xid: plain.xid, timestamp: t, value: 75.21472877765548 },
        { xid: pump.xid, timestamp: t, value: true },
        { xid: mode.xid, timestamp: t, value: 2 },
      ]);
      assert.equal(written.status, 200, written.text);
      const res = await admin.post<Record<string, { rendered: string; value: unknown }[]>>(`${PV}/multiple-arrays/latest`, {
        xids: [analog.xid, plain.xid, pump.xid, mode.xid],
        limit: 1,
        fields: ['VALUE', 'RENDERED'],
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body[String(analog.xid)], [{ value: 75.21472877765548, rendered: '75.21 °C' }]);
      assert.deepEqual(res.body[String(plain.xid)], [{ value: 75.21472877765548, rendered: '75.2147 bar' }]);
      assert.deepEqual(res.body[String(pump.xid)], [{ value: true, rendered: 'Running' }]);
      assert.deepEqual(res.body[String(mode.xid)], [{ value: 2, rendered: 'Auto' }]);
      const csv = await admin.post(`${PV}/multiple-arrays/latest`, { xids: [analog.xid], limit: 1, fields: ['RENDERED'] }, { headers: { accept: 'text/csv' } });
      assert.equal(csv.status, 200, csv.text);
      assert.match(csv.text, /75\.21 °C/);
    });
  });
}
