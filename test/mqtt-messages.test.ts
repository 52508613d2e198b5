import assert from 'node:assert/strict';
import {
  compileJsonPath, MAX_PAYLOAD_BYTES, Payload, readPayload, toPointValue, topicFilterProblem, topicMatches, TopicRouter, valueAt, writePayload,
} from '../src/runtime/mqtt-messages.js';

const payload = (text: string | Buffer) => new Payload(typeof text === 'string' ? Buffer.from(text) : text);

describe('MQTT messages', () => {
  describe('topic filters', () => {
    it('accepts topics and whole-level wildcards, refuses malformed ones', () => {
      for (const ok of ['a', 'a/b/c', '/a', 'a/+/c', '+', '#', 'a/#', '+/+/#', '$SYS/#']) assert.equal(topicFilterProblem(ok), null, ok);
      assert.match(topicFilterProblem('a/b#') ?? '', /'#'/);
      assert.match(topicFilterProblem('a/#/c') ?? '', /'#'/);
      assert.match(topicFilterProblem('a/b+/c') ?? '', /'\+'/);
      assert.equal(topicFilterProblem(''), 'is empty');
      assert.match(topicFilterProblem('a\u0000b') ?? '', /NUL/);
    });

    it('matches topics as a broker does', () => {
      assert.ok(topicMatches('a/b', 'a/b'));
      assert.ok(!topicMatches('a/b', 'a/b/c'));
      assert.ok(topicMatches('a/+/c', 'a/x/c'));
      assert.ok(!topicMatches('a/+/c', 'a/x/y/c'));
      assert.ok(topicMatches('a/+', 'a/'));
      assert.ok(topicMatches('a/#', 'a'));
      assert.ok(topicMatches('a/#', 'a/b/c'));
      assert.ok(!topicMatches('a/#', 'b/a'));
      assert.ok(topicMatches('#', 'anything/at/all'));
      assert.ok(!topicMatches('#', '$SYS/broker'));
      assert.ok(!topicMatches('+/broker', '$SYS/broker'));
      assert.ok(topicMatches('$SYS/#', '$SYS/broker'));
    });

    it('routes a topic to the items of every matching filter, exact ones first', () => {
      const router = new TopicRouter<string>();
      router.add('s/+/t', 'wild');
      router.add('s/1/t', 'exact1');
      router.add('s/1/t', 'exact2');
      router.add('other', 'none');
      assert.deepEqual(router.filters().sort(), ['other', 's/+/t', 's/1/t']);
      assert.deepEqual(router.route('s/1/t'), ['exact1', 'exact2', 'wild']);
      assert.deepEqual(router.route('s/2/t'), ['wild']);
      assert.deepEqual(router.route('s/2'), []);
    });
  });

  describe('jsonPath', () => {
    it('compiles the forms the schema allows', () => {
      assert.deepEqual(compileJsonPath('$.value'), ['value']);
      assert.deepEqual(compileJsonPath('data.temperature'), ['data', 'temperature']);
      assert.deepEqual(compileJsonPath('items[0].v'), ['items', 0, 'v']);
      assert.deepEqual(compileJsonPath('$[2][10]'), [2, 10]);
      assert.deepEqual(compileJsonPath('$'), []);
      assert.equal(compileJsonPath('a..b'), null);
      assert.equal(compileJsonPath('a[x]'), null);
    });

    it('finds values by key and index, and nothing where the document has none', () => {
      const doc = { a: { b: [10, { c: 'x' }] }, n: null };
      assert.equal(valueAt(doc, ['a', 'b', 1, 'c']), 'x');
      assert.equal(valueAt(doc, ['a', 'b', '0']), 10);
      assert.equal(valueAt(doc, ['n']), null);
      assert.equal(valueAt(doc, ['a', 'b', 5]), undefined);
      assert.equal(valueAt(doc, ['a', 0]), undefined);
      assert.equal(valueAt(doc, ['toString']), undefined);
      assert.equal(valueAt(doc, ['a', 'b', 'length']), undefined);
    });
  });

  describe('reading payloads', () => {
    it('reads each data type from plain text', () => {
      assert.deepEqual(readPayload(payload(' 1.5e3\n'), 'NUMERIC', null), { value: 1500 });
      assert.deepEqual(readPayload(payload('0x10'), 'NUMERIC', null), { error: 'payload is not a number' });
      assert.deepEqual(readPayload(payload('true'), 'NUMERIC', null), { error: 'payload is not a number' });
      assert.deepEqual(readPayload(payload('-4'), 'MULTISTATE', null), { value: -4 });
      assert.deepEqual(readPayload(payload('4.5'), 'MULTISTATE', null), { error: 'payload is not an integer' });
      for (const word of ['true', 'ON', '1', ' On\n']) assert.deepEqual(readPayload(payload(word), 'BINARY', null), { value: true }, word);
      for (const word of ['false', 'off', '0']) assert.deepEqual(readPayload(payload(word), 'BINARY', null), { value: false }, word);
      assert.deepEqual(readPayload(payload('2'), 'BINARY', null), { error: 'payload is not true/false, on/off or 1/0' });
      assert.deepEqual(readPayload(payload('{"a":1}'), 'ALPHANUMERIC', null), { value: '{"a":1}' });
    });

    it('reads typed JSON values at a path', () => {
      const doc = payload(JSON.stringify({ n: 2.5, b: true, s: '7', o: { x: 1 }, z: null }));
      assert.deepEqual(readPayload(doc, 'NUMERIC', ['n']), { value: 2.5 });
      assert.deepEqual(readPayload(doc, 'NUMERIC', ['b']), { value: 1 });
      assert.deepEqual(readPayload(doc, 'MULTISTATE', ['s']), { value: 7 });
      assert.deepEqual(readPayload(doc, 'BINARY', ['b']), { value: true });
      assert.deepEqual(readPayload(doc, 'ALPHANUMERIC', ['o']), { value: '{"x":1}' });
      assert.deepEqual(readPayload(doc, 'ALPHANUMERIC', ['n']), { value: '2.5' });
      assert.deepEqual(readPayload(doc, 'ALPHANUMERIC', ['z']), { error: 'value at $.z is null' });
      assert.deepEqual(readPayload(doc, 'NUMERIC', ['o']), { error: 'value at $.o is not a number' });
      assert.deepEqual(readPayload(doc, 'NUMERIC', ['missing', 0]), { error: 'payload has no value at $.missing[0]' });
    });

    it('turns garbage into errors, never exceptions, and ignores empty payloads', () => {
      assert.equal(readPayload(payload(''), 'ALPHANUMERIC', null), null);
      assert.deepEqual(readPayload(payload('{'), 'NUMERIC', ['a']), { error: 'payload is not valid JSON' });
      assert.deepEqual(readPayload(payload(Buffer.from([0xc3, 0x28])), 'ALPHANUMERIC', null), { error: 'payload is not UTF-8 text' });
      const huge = Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20);
      assert.match((readPayload(payload(huge), 'NUMERIC', ['a']) as { error: string }).error, /larger than/);
      const deep = '['.repeat(100_000) + ']'.repeat(100_000);
      const reading = readPayload(payload(deep), 'NUMERIC', [0]);
      assert.ok(reading !== null && 'error' in reading);
      // An ALPHANUMERIC point takes a document as its JSON text: a deep one is refused before JSON.stringify recurses.
      assert.deepEqual(readPayload(payload(`{"v":${deep}}`), 'ALPHANUMERIC', ['v']), { error: 'value at $.v nests deeper than 64 levels' });
      const shallow = '['.repeat(64) + ']'.repeat(64);
      assert.deepEqual(readPayload(payload(`{"v":${shallow}}`), 'ALPHANUMERIC', ['v']), { value: shallow });
      assert.deepEqual(readPayload(payload('x'.repeat(70_000)), 'ALPHANUMERIC', null), { error: 'payload is longer than 65535 characters' });
    });

    it('decodes a payload once for all the points that read it', () => {
      const p = payload('{"a": 1, "b": 2}');
      assert.equal(p.asJson(), p.asJson());
    });
  });

  describe('write payloads', () => {
    it('writes plain text without a path', () => {
      assert.deepEqual(writePayload('NUMERIC', 21.5, null), { value: '21.5' });
      assert.deepEqual(writePayload('BINARY', 1, null), { value: 'true' });
      assert.deepEqual(writePayload('BINARY', false, null), { value: 'false' });
      assert.deepEqual(writePayload('ALPHANUMERIC', 'on', null), { value: 'on' });
      assert.deepEqual(writePayload('NUMERIC', 'warm', null), { error: 'value is not a number' });
    });

    it('writes a JSON document that reads back at the same path', () => {
      for (const path of [['value'], ['data', 'temperature'], ['items', 2, 'v'], []]) {
        const written = writePayload('NUMERIC', 7, path);
        assert.ok('value' in written);
        assert.deepEqual(readPayload(payload(written.value), 'NUMERIC', path), { value: 7 }, JSON.stringify(path));
      }
      assert.deepEqual(writePayload('BINARY', 'true', ['on']), { value: '{"on":true}' });
      assert.deepEqual(writePayload('NUMERIC', 1, ['__proto__', 'x']), { value: '{"__proto__":{"x":1}}' });
      assert.match((writePayload('NUMERIC', 1, ['a', 5000]) as { error: string }).error, /index above/);
    });
  });

  it('toPointValue refuses what a data type cannot hold', () => {
    assert.deepEqual(toPointValue('NUMERIC', Infinity), { error: 'is not a number' });
    assert.deepEqual(toPointValue('MULTISTATE', 2 ** 60), { error: 'is not an integer' });
    assert.deepEqual(toPointValue('BINARY', null), { error: 'is not true/false, on/off or 1/0' });
  });
});
