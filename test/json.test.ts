// JSON depth without recursion (src/core/json.ts): the text scan that every body passes, the names
// it gives the field that is too deep, and the walk over parsed import items.
import assert from 'node:assert/strict';
import { DomainError } from '../src/core/errors.js';
import { assertJsonDepth, depthExceededAt, itemDepthProblem, pathAt, pathBeyondDepth } from '../src/core/json.js';

/** `levels` nested arrays around 1: [[...[1]...]]. */
const nested = (levels: number): string => '['.repeat(levels) + '1' + ']'.repeat(levels);
const nestedValue = (levels: number): unknown => JSON.parse(nested(levels));

/** The real depth of JSON text, by a parse and a recursive walk (fine for the small inputs here). */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

function refusal(fn: () => void): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  assert.fail('expected a DomainError');
}

describe('JSON depth (core/json.ts)', () => {
  describe('depthExceededAt', () => {
    it('finds the bracket that opens the first level beyond the limit, and nothing at the limit', () => {
      assert.equal(depthExceededAt(nested(64), 64), -1);
      assert.equal(depthExceededAt(nested(65), 64), 64);
      assert.equal(depthExceededAt('{"a":{"b":[{}]}}', 4), -1);
      assert.equal(depthExceededAt('{"a":{"b":[{}]}}', 3), 11);
      assert.equal(depthExceededAt('1', 0), -1);
      assert.equal(depthExceededAt('[]', 0), 0);
    });

    it('counts siblings once: depth is nesting, not the number of brackets', () => {
      const wide = `[${Array.from({ length: 10_000 }, () => '{"a":[1,{"b":2}]}').join(',')}]`;
      assert.equal(depthExceededAt(wide, 4), -1);
      assert.equal(depthExceededAt(wide, 3), 1 + '{"a":[1,'.length);
    });

    it('does not count brackets inside strings, escaped quotes and backslashes included', () => {
      const texts = [
        '["[[[[[[[[[["]',
        '{"k[{[{":"]]]}}}{{{{{{{{{"}',
        '["a\\"[[[[[[[[[[[[["]',
        '["\\\\",[[1]]]',
        '["\\\\\\"[[[[[[[[[[",[1]]',
        '{"a":"\\u005b\\u005b","b":[["}"]]}',
      ];
      for (const text of texts) {
        const depth = depthOf(JSON.parse(text));
        assert.equal(depthExceededAt(text, depth), -1, `${text} at its depth ${depth}`);
        assert.notEqual(depthExceededAt(text, depth - 1), -1, `${text} below its depth`);
      }
    });

    it('agrees with a parse on random documents', () => {
      let seed = 7;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      const make = (level: number): unknown => {
        const r = random();
        if (level > 12 || r < 0.3) return random() < 0.5 ? '"]{\\"[' : 42;
        const n = Math.floor(random() * 4);
        if (r < 0.65) return Array.from({ length: n }, () => make(level + 1));
        return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}[`, make(level + 1)]));
      };
      for (let i = 0; i < 300; i++) {
        const value = make(0);
        const text = JSON.stringify(value, null, random() < 0.5 ? 1 : 0);
        const depth = depthOf(value);
        assert.equal(depthExceededAt(text, depth), -1, text);
        if (depth > 0) assert.notEqual(depthExceededAt(text, depth - 1), -1, text);
      }
    });

    it('answers without an error for text that is not JSON (the parse after it says what is wrong)', () => {
      for (const text of ['[[["', '"\\', ']]]]', '{{{', '']) assert.equal(typeof depthExceededAt(text, 2), 'number');
      assert.equal(depthExceededAt('{{{', 2), 2);
    });

    it('scans a million levels without recursion', () => {
      assert.equal(depthExceededAt(nested(1_000_000), 1_000_000), -1);
      assert.equal(depthExceededAt(nested(1_000_000), 64), 64);
    });
  });

  describe('pathAt', () => {
    it('names the keys and indexes around an offset, at most the levels asked for', () => {
      const text = '{"a":1,"dataPoints":[{"xid":"p0"},{"xid":"p1","pointLocator":{"x":[[[[0]]]]}}]}';
      const at = text.indexOf('[[[[');
      assert.deepEqual(pathAt(text, at, 1), ['dataPoints']);
      assert.deepEqual(pathAt(text, at, 3), ['dataPoints', '1', 'pointLocator']);
      assert.deepEqual(pathAt(text, at, 9), ['dataPoints', '1', 'pointLocator', 'x']);
    });

    it('decodes escaped keys, skips brackets and commas in strings, and counts array elements', () => {
      const text = '[1,"a,[b",{"k":0},{"x\\"y":[9]}]';
      assert.deepEqual(pathAt(text, text.indexOf('[9]'), 2), ['3', 'x"y']);
    });
  });

  describe('assertJsonDepth', () => {
    it('names the top-level member of a body and says the limit', () => {
      const err = refusal(() => assertJsonDepth(`{"name":"n","pointLocator":{"extra":${nested(63)}}}`, 64));
      assert.equal(err.kind, 'invalid');
      assert.deepEqual(err.messages, [
        { property: 'pointLocator', level: 'ERROR', message: 'takes the body deeper than 64 levels (JSON_MAX_DEPTH)', localizedMessage: 'takes the body deeper than 64 levels (JSON_MAX_DEPTH)' },
      ]);
      assert.doesNotThrow(() => assertJsonDepth(`{"name":"n","pointLocator":{"extra":${nested(62)}}}`, 64));
      assert.equal(refusal(() => assertJsonDepth(`[{"xid":"a"},{"x":${nested(63)}}]`, 64)).messages![0]!.property, '[1]');
    });

    it('counts a carried document on its own: jsonData may nest the limit below its envelope', () => {
      assert.doesNotThrow(() => assertJsonDepth(`{"name":"n","jsonData":${nested(64)}}`, 64, 1));
      const err = refusal(() => assertJsonDepth(`{"name":"n","jsonData":${nested(65)}}`, 64, 1));
      assert.equal(err.messages![0]!.property, 'jsonData');
      assert.equal(err.messages![0]!.message, 'nests deeper than 64 levels (JSON_MAX_DEPTH)');
      const doc = `{"users":[],"jsonStore":[{"xid":"a","jsonData":1},{"xid":"b","jsonData":${nested(10_000)}}]}`;
      assert.equal(refusal(() => assertJsonDepth(doc, 64, 3)).messages![0]!.property, 'jsonStore[1].jsonData');
    });
  });

  describe('pathBeyondDepth and itemDepthProblem', () => {
    it('finds the first object or array below the limit, without recursion', () => {
      assert.equal(pathBeyondDepth(nestedValue(64), 64), undefined);
      assert.equal(pathBeyondDepth(nestedValue(65), 64)!.length, 64);
      assert.equal(pathBeyondDepth(nestedValue(100_000), 64)!.length, 64);
      assert.deepEqual(pathBeyondDepth({ a: 1, b: [2, { c: [[3]] }] }, 3), ['b', '1', 'c']);
      assert.equal(pathBeyondDepth('text', 0), undefined);
    });

    it('holds an import item to its route: the item within the limit, a JSON store item\'s jsonData on its own', () => {
      assert.equal(itemDepthProblem({ xid: 'p', pointLocator: { x: nestedValue(62) } }, 64, false), undefined);
      assert.deepEqual(itemDepthProblem({ xid: 'p', pointLocator: { x: nestedValue(63) } }, 64, false), {
        property: 'pointLocator',
        level: 'ERROR',
        message: 'takes the item deeper than 64 levels (JSON_MAX_DEPTH)',
        localizedMessage: 'takes the item deeper than 64 levels (JSON_MAX_DEPTH)',
      });
      assert.equal(itemDepthProblem({ xid: 'j', jsonData: nestedValue(64) }, 64, true), undefined);
      assert.equal(itemDepthProblem({ xid: 'j', jsonData: nestedValue(65) }, 64, true)?.property, 'jsonData');
      assert.equal(itemDepthProblem({ xid: 'j', jsonData: 1, extra: nestedValue(64) }, 64, true)?.property, 'extra');
    });
  });
});
