#!/usr/bin/env node
// A Sparkplug B edge node to try the SPARKPLUG_B source with (README, "Sparkplug B"): edge node
// <edge> of group <group> with one device, Pump1. It publishes NBIRTH and DBIRTH, then NDATA and
// DDATA every interval (metrics by alias, as real nodes do), answers a rebirth request (NCMD Node
// Control/Rebirth) with new BIRTHs, prints the DCMDs it receives and applies them, and leaves with
// an NDEATH (also its MQTT will, as Sparkplug has it).
//   node scripts/sparkplug-edge.mjs [--broker mqtt://127.0.0.1:1883] [--group Plant1] [--edge Line1] [--interval 1000]
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { get } from 'sparkplug-payload';

const { values: opts } = parseArgs({
  options: {
    broker: { type: 'string', default: 'mqtt://127.0.0.1:1883' },
    group: { type: 'string', default: 'Plant1' },
    edge: { type: 'string', default: 'Line1' },
    interval: { type: 'string', default: '1000' },
  },
});
const codec = get('spBv1.0');
const topic = (type, device) => `spBv1.0/${opts.group}/${type}/${opts.edge}${device ? `/${device}` : ''}`;
const bdSeq = Math.floor(Date.now() / 1000) % 256;
const encode = (payload) => Buffer.from(codec.encodePayload({ timestamp: Date.now(), ...payload }));
let seq = 0;
const next = () => {
  const s = seq;
  seq = (seq + 1) % 256;
  return s;
};
const state = { temperature: 20, running: true, speed: 1200, setpoint: 50 };

const client = mqtt.connect(opts.broker, {
  clientId: `edge-${opts.group}-${opts.edge}`,
  clean: true,
  will: { topic: topic('NDEATH'), payload: encode({ metrics: [{ name: 'bdSeq', type: 'UInt64', value: bdSeq }] }), qos: 1, retain: false },
});

function births() {
  seq = 0;
  client.publish(
    topic('NBIRTH'),
    encode({
      seq: next(),
      metrics: [
        { name: 'bdSeq', type: 'UInt64', value: bdSeq },
        { name: 'Node Control/Rebirth', type: 'Boolean', value: false },
        { name: 'Temperature', alias: 1, type: 'Double', value: state.temperature },
        { name: 'Running', alias: 2, type: 'Boolean', value: state.running },
      ],
    }),
  );
  client.publish(
    topic('DBIRTH', 'Pump1'),
    encode({
      seq: next(),
      metrics: [
        { name: 'Speed', alias: 10, type: 'Int32', value: state.speed },
        { name: 'Setpoint', alias: 11, type: 'Float', value: state.setpoint },
      ],
    }),
  );
  console.log(`NBIRTH and DBIRTH of ${opts.group}/${opts.edge} (bdSeq ${bdSeq})`);
}

client.on('connect', async () => {
  await client.subscribeAsync([topic('NCMD'), topic('DCMD', '+')]);
  births();
});

client.on('message', (t, bytes) => {
  const { metrics = [] } = codec.decodePayload(bytes);
  for (const m of metrics) {
    console.log(`${t}: ${m.name} = ${m.value}`);
    if (m.name === 'Node Control/Rebirth' && m.value === true) births();
    if (m.name === 'Setpoint') {
      state.setpoint = Number(m.value);
      client.publish(topic('DDATA', 'Pump1'), encode({ seq: next(), metrics: [{ alias: 11, type: 'Float', value: state.setpoint, timestamp: Date.now() }] }));
    }
  }
});

const timer = setInterval(() => {
  if (!client.connected) return;
  state.temperature = Math.round((state.temperature + (Math.random() - 0.5)) * 10) / 10;
  state.speed += Math.round((Math.random() - 0.5) * 20);
  const now = Date.now();
  client.publish(topic('NDATA'), encode({ seq: next(), metrics: [{ alias: 1, type: 'Double', value: state.temperature, timestamp: now }] }));
  client.publish(topic('DDATA', 'Pump1'), encode({ seq: next(), metrics: [{ alias: 10, type: 'Int32', value: state.speed, timestamp: now }] }));
}, Number(opts.interval));

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    clearInterval(timer);
    client.publish(topic('NDEATH'), encode({ metrics: [{ name: 'bdSeq', type: 'UInt64', value: bdSeq }] }), { qos: 1 }, () => client.end(false, () => process.exit(0)));
  });
}
