import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readBulkColumns } from '../src/core/bulk-values.js';

describe('readBulkColumns (bulk ingest fast path)', () => {
  it('reads the common shape into columns, in any key order and with spaces', async () => {
    const c = await readBulkColumns(' [ {"xid":"a","value":1.5,"timestamp":1000} ,\n{"timestamp":2000, "value":-2e3, "xid":"a"},{"xid":"b","value":0,"timestamp":3000}] ');
    assert.ok(c);
    assert.equal(c.length, 3);
    assert.deepEqual(c.xids, ['a', 'a', 'b']);
    assert.deepEqual([...c.values.subarray(0, 3)], [1.5, -2000, 0]);
    assert.deepEqual([...c.timestamps.subarray(0, 3)], [1000, 2000, 3000]);
    assert.equal(c.xids[0], c.xids[1], 'one string for a run of the same XID');
  });

  it('reads the bytes of a body as it reads its text, decoding each new XID once (UTF-8 beyond ASCII too)', async () => {
    const text = '[{"xid":"Grüße-✓","value":2.25,"timestamp":5},{"xid":"Grüße-✓","value":-1e-3,"timestamp":6},{"xid":"😀","value":7,"timestamp":8}]';
    const c = await readBulkColumns(Buffer.from(text, 'utf8'));
    assert.ok(c);
    assert.deepEqual(c.xids, ['Grüße-✓', 'Grüße-✓', '😀']);
    assert.deepEqual([...c.values.subarray(0, 3)], [2.25, -0.001, 7]);
    assert.deepEqual([...c.timestamps.subarray(0, 3)], [5, 6, 8]);
    assert.deepEqual(await readBulkColumns(text), c);
  });

  it('reads an empty array', async () => {
    assert.equal((await readBulkColumns('[]'))?.length, 0);
  });

  it('declines anything unusual, so the general path decides (and words the errors)', async () => {
    for (const text of [
      '{}',
      '[{"xid":"a","value":1}]', // no timestamp
      '[{"xid":"a","value":"1","timestamp":1}]', // string value
      '[{"xid":"a","value":true,"timestamp":1}]',
      '[{"xid":"a","value":1,"timestamp":"2024-01-01T00:00:00Z"}]',
      '[{"xid":"a\\"b","value":1,"timestamp":1}]', // escape in the XID
      '[{"xid":"a\u0000b","value":1,"timestamp":1}]', // a raw control character in the XID (not JSON)
      '[{"xid":"a\tb","value":1,"timestamp":1}]',
      '[{"xid":"a","value":1,"timestamp":1},{"xid":"a\u0000","value":1,"timestamp":2}]', // after a row of another XID
      '[{"xid":"a","value":1e,"timestamp":1}]',
      '[{"xid":"a","value":1.5e+,"timestamp":1}]',
      '[{"xid":"a","value":1,"timestamp":1,"annotation":"x"}]', // another key
      '[{"xid":"a","value":1,"value":2,"timestamp":1}]', // repeated key
      '[{"xid":"a","value":1,"timestamp":1},]',
      '[{"xid":"a","value":1,"timestamp":1}] x',
      '[{"xid":"a","value":01,"timestamp":1}]',
      '[{"xid":"a","value":1,"timestamp":1}',
      '',
    ]) {
      assert.equal(await readBulkColumns(text), undefined, text);
    }
  });

  it('agrees with JSON.parse on every body it accepts', async () => {
    const row = fc.record({ xid: fc.string({ maxLength: 8 }), value: fc.double({ noNaN: true, noDefaultInfinity: true }), timestamp: fc.integer() });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 20 }), async (rows) => {
        const text = JSON.stringify(rows);
        const c = await readBulkColumns(text);
        if (!c) return; // declined (an escape in an XID): the general path handles it
        const parsed = JSON.parse(text) as typeof rows;
        assert.equal(c.length, parsed.length);
        for (let i = 0; i < c.length; i++) {
          assert.equal(c.xids[i], parsed[i]!.xid);
          assert.ok(Object.is(c.values[i], parsed[i]!.value) || c.values[i] === parsed[i]!.value);
          assert.equal(c.timestamps[i], parsed[i]!.timestamp);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('reads written-out decimals (the fast path: digits / 10^k) exactly as Number() does', async () => {
    const decimal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^(0|[1-9][0-9]{0,16})$/), fc.option(fc.stringMatching(/^[0-9]{1,17}$/), { nil: undefined }))
      .map(([negative, int, frac]) => `${negative ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}`);
    await fc.assert(
      fc.asyncProperty(fc.array(decimal, { minLength: 1, maxLength: 20 }), async (texts) => {
        const body = `[${texts.map((t, i) => `{"xid":"p","value":${t},"timestamp":${i}}`).join(',')}]`;
        const c = await readBulkColumns(body);
        assert.ok(c, body);
        texts.forEach((t, i) => assert.ok(Object.is(c.values[i], Number(t)), `${t}: ${c.values[i]} ≠ ${Number(t)}`));
      }),
      { numRuns: 3000 },
    );
    for (const t of ['0.1', '0.3', '123456.789', '9007199254740993', '1.7976931348623157', '-0', '-0.0', '99999999999999.9', '0.000000000000001']) {
      assert.ok(Object.is((await readBulkColumns(`[{"xid":"p","value":${t},"timestamp":1}]`))?.values[0], Number(t)), t);
    }
  });
});
