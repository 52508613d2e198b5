// Point values by data type (src/values/ingest/types.ts): what coerceValue accepts and how
// it stores it, and how apiValue shapes stored values for the API.
import assert from 'node:assert/strict';
import { apiValue, coerceValue, type StorableValue } from '../src/values/ingest/types.js';
import type { DataType } from '../src/store/metadata/data-points.js';
import type { StoredValue } from '../src/store/values/types.js';

type Case = [raw: unknown, expected: StorableValue | 'error'];

const ERRORS: Record<DataType, string> = {
  NUMERIC: 'must be a number',
  MULTISTATE: 'must be an integer',
  BINARY: 'must be true or false',
  ALPHANUMERIC: 'must be a string',
};

const num = (value: number): StorableValue => ({ value, text: null });
const text = (t: string): StorableValue => ({ value: NaN, text: t });

const CASES: Record<DataType, Case[]> = {
  NUMERIC: [
    [0, num(0)],
    [1.5, num(1.5)],
    [-273.15, num(-273.15)],
    [1e300, num(1e300)],
    [Number.MAX_VALUE, num(Number.MAX_VALUE)],
    ['2.5', num(2.5)],
    [' 3 ', num(3)],
    ['-4e2', num(-400)],
    [true, num(1)],
    [false, num(0)],
    ['', 'error'],
    ['   ', 'error'],
    ['abc', 'error'],
    ['1.2.3', 'error'],
    ['Infinity', 'error'],
    [NaN, 'error'],
    [Infinity, 'error'],
    [-Infinity, 'error'],
    [null, 'error'],
    [undefined, 'error'],
    [{}, 'error'],
    [[], 'error'],
    [[1], 'error'],
  ],
  MULTISTATE: [
    [0, num(0)],
    [3, num(3)],
    [-2, num(-2)],
    [Number.MAX_SAFE_INTEGER, num(Number.MAX_SAFE_INTEGER)],
    ['4', num(4)],
    [' -7 ', num(-7)],
    [1.5, 'error'],
    ['1.5', 'error'],
    ['1e3', 'error'],
    ['', 'error'],
    ['x', 'error'],
    [2 ** 53, 'error'],
    [NaN, 'error'],
    [Infinity, 'error'],
    [true, 'error'],
    [false, 'error'],
    [null, 'error'],
    [{}, 'error'],
    [[2], 'error'],
  ],
  BINARY: [
    [true, num(1)],
    [false, num(0)],
    [1, num(1)],
    [0, num(0)],
    ['true', num(1)],
    ['false', num(0)],
    [2, 'error'],
    [-1, 'error'],
    [0.5, 'error'],
    ['1', 'error'],
    ['0', 'error'],
    ['TRUE', 'error'],
    ['yes', 'error'],
    ['', 'error'],
    [null, 'error'],
    [{}, 'error'],
  ],
  ALPHANUMERIC: [
    ['hello', text('hello')],
    ['', text('')],
    ['with, comma and "quotes"\nand a newline', text('with, comma and "quotes"\nand a newline')],
    ['ü€😀', text('ü€😀')],
    ['x'.repeat(65_535), text('x'.repeat(65_535))],
    ['x'.repeat(65_536), 'error'],
    [42, text('42')],
    [1.5, text('1.5')],
    [true, text('true')],
    [false, text('false')],
    [null, 'error'],
    [undefined, 'error'],
    [{}, 'error'],
    [['a'], 'error'],
  ],
};

function describeRaw(raw: unknown): string {
  if (typeof raw === 'string') return raw.length > 40 ? `string(${raw.length})` : JSON.stringify(raw);
  if (typeof raw === 'number') return String(raw);
  if (raw === undefined) return 'undefined';
  return JSON.stringify(raw);
}

describe('point value types', () => {
  describe('coerceValue', () => {
    for (const [dataType, cases] of Object.entries(CASES) as [DataType, Case[]][]) {
      describe(dataType, () => {
        for (const [raw, expected] of cases) {
          const title = expected === 'error' ? `refuses ${describeRaw(raw)}` : `accepts ${describeRaw(raw)}`;
          it(title, () => {
            const got = coerceValue(dataType, raw);
            if (expected === 'error') {
              assert.equal(got, dataType === 'ALPHANUMERIC' && typeof raw === 'string' ? 'must be at most 65535 characters' : ERRORS[dataType]);
            } else {
              assert.equal(typeof got, 'object', `got ${String(got)}`);
              const v = got as StorableValue;
              assert.equal(v.text, expected.text);
              if (Number.isNaN(expected.value)) assert.ok(Number.isNaN(v.value), 'ALPHANUMERIC stores NaN as its numeric value');
              else assert.equal(v.value, expected.value);
            }
          });
        }
      });
    }

    it('accepts a value of every type for a matching data type only where the rules say so', () => {
      // The same raw value across data types: one row per raw value.
      const table: [unknown, boolean, boolean, boolean, boolean][] = [
        // raw          NUMERIC MULTISTATE BINARY ALPHANUMERIC
        [1, true, true, true, true],
        [2, true, true, false, true],
        [0.5, true, false, false, true],
        [true, true, false, true, true],
        ['true', false, false, true, true],
        ['7', true, true, false, true],
        [null, false, false, false, false],
      ];
      const types: DataType[] = ['NUMERIC', 'MULTISTATE', 'BINARY', 'ALPHANUMERIC'];
      for (const [raw, ...ok] of table) {
        types.forEach((t, i) => assert.equal(typeof coerceValue(t, raw) === 'object', ok[i], `${t} ${describeRaw(raw)}`));
      }
    });
  });

  describe('apiValue', () => {
    const stored = (value: number | null, text: string | null = null): StoredValue => ({ ts: 1, value, text, annotation: null });
    const rows: [string, StoredValue, unknown][] = [
      ['NUMERIC', stored(1.25), 1.25],
      ['NUMERIC', stored(0), 0],
      ['NUMERIC', stored(null), null],
      ['MULTISTATE', stored(3), 3],
      ['MULTISTATE', stored(null), null],
      ['BINARY', stored(1), true],
      ['BINARY', stored(0), false],
      ['BINARY', stored(null), null],
      ['ALPHANUMERIC', stored(null, 'abc'), 'abc'],
      ['ALPHANUMERIC', stored(null, ''), ''],
      ['ALPHANUMERIC', stored(null, null), null],
    ];
    for (const [dataType, v, expected] of rows) {
      it(`${dataType} ${JSON.stringify(v.value)}/${JSON.stringify(v.text)} → ${JSON.stringify(expected)}`, () => {
        assert.equal(apiValue(dataType, v), expected);
      });
    }

    it('round-trips every accepted value through coerceValue and apiValue to the type the API shows', () => {
      const round = (dataType: DataType, raw: unknown) => {
        const c = coerceValue(dataType, raw) as StorableValue;
        return apiValue(dataType, { ts: 0, value: dataType === 'ALPHANUMERIC' ? null : c.value, text: c.text, annotation: null });
      };
      assert.equal(round('NUMERIC', '12.5'), 12.5);
      assert.equal(round('MULTISTATE', '4'), 4);
      assert.equal(round('BINARY', 'true'), true);
      assert.equal(round('BINARY', 0), false);
      assert.equal(round('ALPHANUMERIC', 17), '17');
    });
  });
});
