// A simulated BACnet/IP device on a UDP port, answered by @bacnet-js/client: Who-Is with I-Am,
// ReadProperty and ReadPropertyMultiple, WriteProperty into a priority array, SubscribeCOV with
// unconfirmed COV notifications. The tests use it, and anyone can run it to try a BACNET_IP source:
//   npx tsx scripts/bacnet-device.ts [port=47809] [deviceInstance=1234]
// It holds AV 1 "Zone temperature" (drifting every 2 s when run as a script), AO 1 "Damper", BV 1
// "Fan", BI 1 "Filter alarm", MSV 1 "Mode" and AI 1 "Outside air".
import BACnetStack from '@bacnet-js/client';
import { pathToFileURL } from 'node:url';

type ClientClass = typeof import('@bacnet-js/client/dist/lib/client.js').default;
type Client = InstanceType<ClientClass>;
interface Receiver {
  address?: string;
}

// CommonJS under ESM: the default import is module.exports, whose `default` is the client class.
const exported = BACnetStack as unknown as ClientClass | { default: ClientClass };
const BACnetClient = 'default' in exported ? exported.default : exported;

const T = { AI: 0, AO: 1, AV: 2, BI: 3, BO: 4, BV: 5, DEVICE: 8, MSI: 13, MSO: 14, MSV: 19 } as const;
const P = { OBJECT_IDENTIFIER: 75, OBJECT_LIST: 76, OBJECT_NAME: 77, OBJECT_TYPE: 79, PRESENT_VALUE: 85, PRIORITY_ARRAY: 87, RELINQUISH_DEFAULT: 104 } as const;
const TAG = { NULL: 0, UNSIGNED: 2, REAL: 4, CHARACTER_STRING: 7, ENUMERATED: 9, OBJECTIDENTIFIER: 12, ERROR: 105 } as const;
const SERVICE = { SUBSCRIBE_COV: 5, READ_PROPERTY: 12, READ_PROPERTY_MULTIPLE: 14, WRITE_PROPERTY: 15 } as const;
const ERROR_CLASS = { OBJECT: 1, PROPERTY: 2, SERVICES: 5 } as const;
const ERROR_CODE = { UNKNOWN_OBJECT: 31, UNKNOWN_PROPERTY: 32, WRITE_ACCESS_DENIED: 40, SERVICE_REQUEST_DENIED: 29 } as const;

export interface SimObject {
  type: number;
  instance: number;
  name: string;
  /** Inputs: the value itself; commandable objects: what they hold when no priority is set. */
  value: number;
  /** Commandable objects (outputs and values): 16 slots, null when relinquished. */
  priorities?: (number | null)[];
}

interface Subscription {
  address: string;
  processId: number;
  key: string;
  until: number;
}

const keyOf = (type: number, instance: number) => `${type}:${instance}`;
const tagOf = (type: number) => (type <= T.AV ? TAG.REAL : type <= T.BV ? TAG.ENUMERATED : TAG.UNSIGNED);

export class BacnetDevice {
  readonly objects = new Map<string, SimObject>();
  readonly subscriptions: Subscription[] = [];
  /** Requests answered, by service (rpm, rp, wp, cov, whoIs); covRefused: SubscribeCOVs refused. */
  readonly counts = { rpm: 0, rp: 0, wp: 0, cov: 0, covRefused: 0, whoIs: 0 };
  /** Answers nothing at all (a device switched off or unplugged). */
  silent = false;
  /** Refuses ReadPropertyMultiple as an older device does. */
  refuseRpm = false;
  /** Refuses SubscribeCOV. */
  refuseCov = false;
  private client: Client | undefined;

  constructor(
    readonly port: number,
    readonly deviceInstance = 1234,
  ) {}

  add(type: number, instance: number, name: string, value: number): SimObject {
    const commandable = type === T.AO || type === T.AV || type === T.BO || type === T.BV || type === T.MSO || type === T.MSV;
    const o: SimObject = { type, instance, name, value, ...(commandable ? { priorities: new Array<number | null>(16).fill(null) } : {}) };
    this.objects.set(keyOf(type, instance), o);
    return o;
  }

  /** The present value: the highest priority set, else the relinquish default (or the input's value). */
  presentValue(o: SimObject): number {
    return o.priorities?.find((v) => v !== null) ?? o.value;
  }

  /** Changes an object's value (an input's, or a commandable one's relinquish default) and tells its COV subscribers. */
  set(type: number, instance: number, value: number): void {
    const o = this.objects.get(keyOf(type, instance));
    if (!o) throw new Error(`no object ${type}:${instance}`);
    o.value = value;
    this.notify(o);
  }

  start(): Promise<void> {
    const client = new BACnetClient({ port: this.port, interface: '127.0.0.1', reuseAddr: false });
    this.client = client;
    client.on('error', () => undefined);
    client.on('whoIs', (c) => {
      if (this.silent) return;
      const { lowLimit, highLimit } = c.payload;
      if (lowLimit !== undefined && (this.deviceInstance < lowLimit || this.deviceInstance > (highLimit ?? lowLimit))) return;
      this.counts.whoIs++;
      client.iAmResponse({ address: c.header?.sender.address ?? c.payload.address }, this.deviceInstance, 3, 999);
    });
    client.on('readProperty', (c) => {
      if (this.silent) return;
      this.counts.rp++;
      const sender = { address: c.header?.sender.address };
      const { objectId, property } = c.payload;
      const read = this.read(objectId.type, objectId.instance, property.id);
      if ('errorClass' in read) client.errorResponse(sender, SERVICE.READ_PROPERTY, c.invokeId!, read.errorClass, read.errorCode);
      else client.readPropertyResponse(sender, c.invokeId!, objectId, property, read as never);
    });
    client.on('readPropertyMultiple', (c) => {
      if (this.silent) return;
      const sender = { address: c.header?.sender.address };
      if (this.refuseRpm) return client.errorResponse(sender, SERVICE.READ_PROPERTY_MULTIPLE, c.invokeId!, ERROR_CLASS.SERVICES, ERROR_CODE.SERVICE_REQUEST_DENIED);
      this.counts.rpm++;
      const values = c.payload.properties.map(({ objectId, properties }) => ({
        objectId,
        values: properties.map((property) => {
          const read = this.read(objectId.type, objectId.instance, property.id);
          return { property, value: 'errorClass' in read ? [{ type: TAG.ERROR, value: { type: 'BacnetError', ...read } }] : read };
        }),
      }));
      client.readPropertyMultipleResponse(sender, c.invokeId!, values);
    });
    client.on('writeProperty', (c) => {
      if (this.silent) return;
      this.counts.wp++;
      const sender = { address: c.header?.sender.address };
      const { objectId, value } = c.payload;
      const o = this.objects.get(keyOf(objectId.type, objectId.instance));
      const refuse = (errorClass: number, errorCode: number) => client.errorResponse(sender, SERVICE.WRITE_PROPERTY, c.invokeId!, errorClass, errorCode);
      if (!o) return refuse(ERROR_CLASS.OBJECT, ERROR_CODE.UNKNOWN_OBJECT);
      if (value.property.id !== P.PRESENT_VALUE || !o.priorities) return refuse(ERROR_CLASS.PROPERTY, ERROR_CODE.WRITE_ACCESS_DENIED);
      const priority = value.priority >= 1 && value.priority <= 16 ? value.priority : 16;
      const written = value.value[0];
      o.priorities[priority - 1] = !written || written.type === TAG.NULL ? null : Number(written.value);
      client.simpleAckResponse(sender, SERVICE.WRITE_PROPERTY, c.invokeId!);
      this.notify(o);
    });
    client.on('subscribeCov', (c) => {
      if (this.silent) return;
      const address = c.header?.sender.address ?? '';
      const p = c.payload as typeof c.payload & { cancellationRequest?: boolean };
      const key = keyOf(p.monitoredObjectId.type, p.monitoredObjectId.instance);
      const o = this.objects.get(key);
      if (this.refuseCov || !o) {
        this.counts.covRefused++;
        return client.errorResponse({ address }, SERVICE.SUBSCRIBE_COV, c.invokeId!, ERROR_CLASS.SERVICES, ERROR_CODE.SERVICE_REQUEST_DENIED);
      }
      this.counts.cov++;
      const same = (s: Subscription) => s.address === address && s.processId === p.subscriberProcessId && s.key === key;
      for (let i = this.subscriptions.length - 1; i >= 0; i--) if (same(this.subscriptions[i]!)) this.subscriptions.splice(i, 1);
      client.simpleAckResponse({ address }, SERVICE.SUBSCRIBE_COV, c.invokeId!);
      if (p.cancellationRequest) return;
      this.subscriptions.push({ address, processId: p.subscriberProcessId, key, until: p.lifetime > 0 ? Date.now() + p.lifetime * 1000 : Infinity });
      this.notify(o, address);
    });
    return new Promise((resolve, reject) => {
      client.once('listening', () => resolve());
      client.once('error', reject);
    });
  }

  stop(): void {
    this.client?.close();
    this.client = undefined;
  }

  private read(type: number, instance: number, property: number): { type: number; value: unknown }[] | { errorClass: number; errorCode: number } {
    if (type === T.DEVICE && instance === this.deviceInstance) {
      if (property === P.OBJECT_NAME) return [{ type: TAG.CHARACTER_STRING, value: `Simulated device ${this.deviceInstance}` }];
      if (property === P.OBJECT_LIST) {
        return [{ type: T.DEVICE, instance: this.deviceInstance }, ...[...this.objects.values()]].map((o) => ({ type: TAG.OBJECTIDENTIFIER, value: { type: o.type, instance: o.instance } }));
      }
      return { errorClass: ERROR_CLASS.PROPERTY, errorCode: ERROR_CODE.UNKNOWN_PROPERTY };
    }
    const o = this.objects.get(keyOf(type, instance));
    if (!o) return { errorClass: ERROR_CLASS.OBJECT, errorCode: ERROR_CODE.UNKNOWN_OBJECT };
    switch (property) {
      case P.PRESENT_VALUE:
        return [{ type: tagOf(type), value: this.presentValue(o) }];
      case P.OBJECT_NAME:
        return [{ type: TAG.CHARACTER_STRING, value: o.name }];
      case P.PRIORITY_ARRAY:
        if (!o.priorities) break;
        return o.priorities.map((v) => (v === null ? { type: TAG.NULL, value: null } : { type: tagOf(type), value: v }));
      case P.RELINQUISH_DEFAULT:
        if (!o.priorities) break;
        return [{ type: tagOf(type), value: o.value }];
    }
    return { errorClass: ERROR_CLASS.PROPERTY, errorCode: ERROR_CODE.UNKNOWN_PROPERTY };
  }

  /** Unconfirmed COV notifications to the object's live subscribers (or only to `to`). */
  private notify(o: SimObject, to?: string): void {
    const client = this.client;
    if (!client || this.silent) return;
    const key = keyOf(o.type, o.instance);
    const now = Date.now();
    for (const s of this.subscriptions) {
      if (s.key !== key || s.until < now || (to !== undefined && s.address !== to)) continue;
      const remaining = s.until === Infinity ? 0 : Math.round((s.until - now) / 1000);
      client.unconfirmedCOVNotification({ address: s.address } satisfies Receiver, s.processId, this.deviceInstance, { type: o.type, instance: o.instance }, remaining, [
        { property: { id: P.PRESENT_VALUE }, value: [{ type: tagOf(o.type), value: this.presentValue(o) }] as never },
        { property: { id: 111 }, value: [{ type: 8, value: { bitsUsed: 4, value: [0] } }] as never },
      ]);
    }
  }
}

/** The device of the README's example. */
export function exampleDevice(port: number, deviceInstance: number): BacnetDevice {
  const device = new BacnetDevice(port, deviceInstance);
  device.add(T.AV, 1, 'Zone temperature', 21.5);
  device.add(T.AO, 1, 'Damper', 40);
  device.add(T.BV, 1, 'Fan', 1);
  device.add(T.BI, 1, 'Filter alarm', 0);
  device.add(T.MSV, 1, 'Mode', 2);
  device.add(T.AI, 1, 'Outside air', 8.25);
  return device;
}

export const OBJECT = T;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const port = Number(process.argv[2] ?? 47809);
  const instance = Number(process.argv[3] ?? 1234);
  const device = exampleDevice(port, instance);
  await device.start();
  console.log(`BACnet device ${instance} on 127.0.0.1:${port} (Ctrl-C stops it)`);
  setInterval(() => {
    const o = device.objects.get(keyOf(T.AV, 1))!;
    device.set(T.AV, 1, Math.round((o.value + (Math.random() - 0.5)) * 100) / 100);
  }, 2000);
}
