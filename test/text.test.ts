// The one rule for client text (core/text.ts): what cannot be stored, the scan of JSON text that
// keeps the ingest path cheap, and the walk that names every offending string.
import assert from 'node:assert/strict';
import { DomainError } from '../src/core/errors.js';
import { assertStorableJson, badCharacterIn, badTextMessages, mayHoldBadText, textProblem } from '../src/core/text.js';

describe('badCharacterIn and textProblem', () => {
  it('finds U+0000 and unpaired surrogates, high or low, anywhere', () => {
    for (const s of ['\u0000', 'a\u0000', '\u0000b']) assert.equal(badCharacterIn(s), 'the character U+0000');
    for (const s of ['\ud800', '\udbff', '\udc00', '\udfff', 'a\ud83d', '\ude00b', '\ude00\ud83d']) {
      assert.equal(badCharacterIn(s), 'an unpaired surrogate (U+D800 to U+DFFF)', JSON.stringify(s));
    }
    assert.equal(textProblem('a\u0000b'), 'must not contain the character U+0000');
  });

  it('accepts every other character, surrogate pairs and other control characters included', () => {
    for (const s of ['', 'plain', 'é✓', '😀', '\ud83d\ude00', '\u0001\u001f\u007f', '\ufffd', '\ud7ff\ue000']) {
      assert.equal(badCharacterIn(s), undefined, JSON.stringify(s));
      assert.equal(textProblem(s), undefined);
    }
  });
});

describe('mayHoldBadText', () => {
  it('finds the escapes of U+0000 and of every surrogate, in either case', () => {
    for (const text of ['"\\u0000"', '"\\ud800"', '"\\uD800"', '"\\uDBFF"', '"\\udc00"', '"\\uDfFf"', '["a","\\uda12"]', '{"k\\u0000":1}']) {
      assert.equal(mayHoldBadText(text), true, text);
    }
  });

  it('finds a raw U+0000 (not JSON, but the bulk reader does not parse)', () => {
    assert.equal(mayHoldBadText('["a\u0000"]'), true);
  });

  it('passes other escapes and characters without a second look', () => {
    for (const text of ['"\\u0001"', '"\\u00e9"', '"\\ud7ff"', '"\\ue000"', '"\\uFFFD"', '"\\n\\t\\"\\\\"', '"😀"', '[1,2,3]', '"\\u000"', '"\\']) {
      assert.equal(mayHoldBadText(text), false, text);
    }
  });

  it('may answer true for an escaped backslash before u0000 (the walk then finds nothing)', () => {
    const text = '{"s":"\\\\u0000 is text"}';
    assert.equal(mayHoldBadText(text), true);
    assert.deepEqual(badTextMessages(JSON.parse(text)), []);
  });
});

describe('badTextMessages', () => {
  const messages = (value: unknown, verbatim?: ReadonlySet<string>) => badTextMessages(value, verbatim).map((m) => `${m.property}: ${m.message}`);

  it('names each bad string as the contract names properties', () => {
    const body = {
      name: 'a\u0000',
      tags: { site: '\udc00', '3': 'x\u0000' },
      pointLocator: { topic: 't\ud800' },
      readPermission: ['user', 'r\u0000'],
      ok: 'fine',
    };
    // In the body's order (JavaScript puts integer-like keys first), a digit-only key as ajv names it.
    assert.deepEqual(messages(body), [
      'name: must not contain the character U+0000',
      'tags[3]: must not contain the character U+0000',
      'tags.site: must not contain an unpaired surrogate (U+D800 to U+DFFF)',
      'pointLocator.topic: must not contain an unpaired surrogate (U+D800 to U+DFFF)',
      'readPermission[1]: must not contain the character U+0000',
    ]);
  });

  it('names array elements of a top-level array as [i].field', () => {
    assert.deepEqual(messages([{ xid: 'a' }, { xid: 'b', annotation: 'c\u0000' }]), ['[1].annotation: must not contain the character U+0000']);
    assert.deepEqual(messages('\u0000'), [': must not contain the character U+0000']);
  });

  it('names the object that holds a bad key, once however many', () => {
    assert.deepEqual(messages({ tags: { 'a\u0000': '1', 'b\u0000': '2' } }), ['tags: must not have a key that contains the character U+0000']);
    assert.deepEqual(messages({ '\udc00': 1 }), [': must not have a key that contains an unpaired surrogate (U+D800 to U+DFFF)']);
  });

  it('leaves the values of top-level verbatim members alone, but not their name nor deeper members of that name', () => {
    const verbatim = new Set(['jsonData']);
    assert.deepEqual(messages({ jsonData: { s: '\u0000', 'k\udc00': ['\ud800'] }, name: 'ok' }, verbatim), []);
    assert.deepEqual(messages({ jsonData: '\u0000', name: 'n\u0000' }, verbatim), ['name: must not contain the character U+0000']);
    assert.deepEqual(messages({ inner: { jsonData: '\u0000' } }, verbatim), ['inner.jsonData: must not contain the character U+0000']);
  });

  it('walks a document nested 200,000 levels deep without running out of stack', () => {
    const depth = 200_000;
    const deep = JSON.parse('['.repeat(depth) + '"\\u0000"' + ']'.repeat(depth)) as unknown;
    const [m] = badTextMessages(deep);
    assert.equal(m?.property, '[0]'.repeat(depth));
  });

  it('stops at 100 messages', () => {
    const rows = Array.from({ length: 1000 }, () => ({ annotation: '\u0000' }));
    const found = badTextMessages(rows);
    assert.equal(found.length, 100);
    assert.equal(found[99]?.property, '[99].annotation');
  });
});

describe('assertStorableJson', () => {
  it('throws a 422 naming the field', () => {
    assert.throws(
      () => assertStorableJson('{"name":"a\\u0000b"}'),
      (err: unknown) => err instanceof DomainError && err.kind === 'invalid' && err.messages?.[0]?.property === 'name',
    );
  });

  it('throws a 400 for text that is not JSON, and nothing for clean or verbatim text', () => {
    assert.throws(
      () => assertStorableJson('{"name":"\\u0000'),
      (err: unknown) => err instanceof DomainError && err.kind === 'bad-request',
    );
    assertStorableJson('{"name":"ok"}');
    assertStorableJson('{"not json, but nothing suspect');
    assertStorableJson('{"jsonData":"\\u0000"}', new Set(['jsonData']));
  });
});
