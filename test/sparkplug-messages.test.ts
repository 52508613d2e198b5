// Sparkplug B topics, sequence numbers and metric types as points see them (runtime/sparkplug-messages.ts).
import assert from 'node:assert/strict';
import { get } from 'sparkplug-payload';
import { commandMetric, commandTopic, createdPointXid, dataTypeFor, nextSeq, parseTopic, readMetric, subscriptionFilter } from '../src/runtime/sparkplug-messages.js';

describe('Sparkplug B messages', () => {
  it('reads node and device topics, and ignores commands, STATE and malformed ones', () => {
    assert.deepEqual(parseTopic('spBv1.0/G/NDATA/E'), { group: 'G', type: 'NDATA', edge: 'E' });
    assert.deepEqual(parseTopic('spBv1.0/G/DBIRTH/E/D'), { group: 'G', type: 'DBIRTH', edge: 'E', device: 'D' });
    for (const t of ['spBv1.0/G/NCMD/E', 'spBv1.0/G/DCMD/E/D', 'spBv1.0/STATE/host', 'spBv1.0/G/NDATA/E/D', 'spBv1.0/G/DDATA/E', 'spAv1.0/G/NDATA/E', 'spBv1.0/G/NDATA/E/D/x']) {
      assert.equal(parseTopic(t), null, t);
    }
    assert.equal(subscriptionFilter('+', ''), 'spBv1.0/+/+/+/#');
    assert.equal(subscriptionFilter('G', 'E'), 'spBv1.0/G/+/E/#');
    assert.equal(commandTopic('G', 'E'), 'spBv1.0/G/NCMD/E');
    assert.equal(commandTopic('G', 'E', 'D'), 'spBv1.0/G/DCMD/E/D');
  });

  it('wraps sequence numbers at 256', () => {
    assert.equal(nextSeq(0), 1);
    assert.equal(nextSeq(255), 0);
  });

  it('maps metric types to data types and refuses the ones no point holds', () => {
    assert.equal(dataTypeFor('Boolean'), 'BINARY');
    for (const t of ['Int8', 'UInt64', 'Float', 'Double', 'DateTime']) assert.equal(dataTypeFor(t), 'NUMERIC', t);
    for (const t of ['String', 'Text', 'UUID']) assert.equal(dataTypeFor(t), 'ALPHANUMERIC', t);
    for (const t of ['DataSet', 'Template', 'Bytes', 'File', 'PropertySet', undefined]) assert.equal(dataTypeFor(t), null, String(t));
  });

  it('reads a metric as a point value: integers (also 64-bit Longs) as NUMERIC or MULTISTATE, type mismatches refused', () => {
    const codec = get('spBv1.0')!;
    const [int64] = codec.decodePayload(codec.encodePayload({ metrics: [{ name: 'n', type: 'Int64', value: 5 }] })).metrics!;
    assert.equal(typeof int64!.value, 'object', 'a Long, as the decoder gives 64-bit integers');
    assert.deepEqual(readMetric('NUMERIC', 'Int64', int64!.value), { value: 5 });
    assert.deepEqual(readMetric('MULTISTATE', 'UInt16', 3), { value: 3 });
    assert.deepEqual(readMetric('NUMERIC', 'Double', 1.5), { value: 1.5 });
    assert.deepEqual(readMetric('BINARY', 'Boolean', false), { value: false });
    assert.deepEqual(readMetric('ALPHANUMERIC', 'String', 'auto'), { value: 'auto' });
    assert.match((readMetric('MULTISTATE', 'Float', 1.5) as { error: string }).error, /not an integer/);
    assert.match((readMetric('NUMERIC', 'Boolean', true) as { error: string }).error, /is a Boolean, the point is NUMERIC/);
    assert.match((readMetric('NUMERIC', 'String', '1') as { error: string }).error, /is a String, the point is NUMERIC/);
    assert.match((readMetric('NUMERIC', 'DataSet', {}) as { error: string }).error, /is of type DataSet, which no point holds/);
  });

  it('types a written value as the BIRTH typed the metric, refusing what that type cannot hold', () => {
    const ok = commandMetric('S', 'Int32', 'NUMERIC', 12);
    assert.ok('value' in ok && ok.value.value === 12 && ok.value.type === 'Int32');
    assert.match((commandMetric('S', 'Int32', 'NUMERIC', 12.5) as { error: string }).error, /not an integer \(metric type Int32\)/);
    assert.match((commandMetric('S', 'UInt8', 'NUMERIC', -1) as { error: string }).error, /negative/);
    const b = commandMetric('On', undefined, 'BINARY', true);
    assert.ok('value' in b && b.value.type === 'Boolean' && b.value.value === true);
  });

  it('makes XIDs from edge node, device and metric name, cut with a digest when long', () => {
    assert.equal(createdPointXid('Line1', undefined, 'Inputs/Temp 1'), 'SPB_Line1_Inputs_Temp_1');
    assert.equal(createdPointXid('Line1', 'Pump1', 'Speed'), 'SPB_Line1_Pump1_Speed');
    const long = createdPointXid('E', undefined, 'x'.repeat(200));
    assert.equal(long.length, 100);
    assert.notEqual(long, createdPointXid('E', undefined, `${'x'.repeat(199)}y`));
  });
});
