// BACNET_IP data sources: one remote device per source, read over BACnet/IP (UDP) through the
// endpoint of the source's local port (bacnet-link.ts). Every period the polled points are read
// with ReadPropertyMultiple, or ReadProperty each once the device refused RPM; with covSubscribe
// each point the device accepts a SubscribeCOV for gets its values by notification instead (the
// subscription renewed at half its lifetime, between polls when the period is longer), and a poll
// that has nothing left to read still reads one point, so a device that went away is noticed. A
// device that stops answering marks every point unreliable, the source faults, and the driver backs off and tries again (resubscribing).
// A set value is written with WriteProperty at the point's priority and answered with a read-back:
// what the device holds after the write (a higher priority may win).
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { DataSourceRecord } from '../store/metadata/data-sources.js';
import {
  bacnetLocator,
  DEVICE_OBJECT_TYPE,
  describeObject,
  encodeWrite,
  objectTypeName,
  OBJECT_TYPES,
  PROPERTY,
  TAG,
  valueFromBacnet,
  type AppValue,
  type BacnetLocator,
  type ObjectTypeName,
} from './bacnet-codec.js';
import { acquireEndpoint, BacnetFailure, classify, withTimeout, type BacnetEndpoint, type CovNotification, type IAm } from './bacnet-link.js';
import { backoffMs, sleep, type DriverContext, type DriverFactory, type ProducedValue, type SourceDriver } from './driver.js';

export interface BacnetSettings {
  localPort: number;
  broadcastAddress: string;
  deviceInstance: number;
  /** "host" or "host:port"; empty: found by a Who-Is for deviceInstance. */
  address: string;
  covSubscribe: boolean;
  timeoutMs: number;
}

export function bacnetSettings(source: Pick<DataSourceRecord, 'settings'>): BacnetSettings {
  const s = source.settings;
  const int = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isInteger(v) ? v : fallback);
  return {
    localPort: int(s.localPort, 47808),
    broadcastAddress: typeof s.broadcastAddress === 'string' && s.broadcastAddress !== '' ? s.broadcastAddress : '255.255.255.255',
    deviceInstance: int(s.deviceInstance, 0),
    address: typeof s.address === 'string' ? s.address : '',
    covSubscribe: s.covSubscribe === true,
    timeoutMs: Math.max(1, int(s.timeoutMs, 3000)),
  };
}

export interface BacnetDriverOptions {
  /** SubscribeCOV lifetime in seconds (renewed at half of it). */
  covLifetimeS?: number;
}

export const COV_LIFETIME_S = 300;
/** Objects per ReadPropertyMultiple: an answer fits an unsegmented APDU of 1476 bytes. */
const RPM_CHUNK = 40;

export function bacnetDriverFactory(options: BacnetDriverOptions = {}): DriverFactory {
  return (ctx) => new BacnetDriver(ctx, options.covLifetimeS ?? COV_LIFETIME_S);
}
export const createBacnetDriver: DriverFactory = bacnetDriverFactory();

/** Subscriber process ids: unique among the sources of this process. */
let nextProcessId = 1;

/** The points of one object (several points may read the same present value). */
interface ObjectPoints {
  type: number;
  instance: number;
  locator: BacnetLocator;
  points: DataPointRecord[];
}

const objectKey = (type: number, instance: number) => `${type}:${instance}`;

class BacnetDriver implements SourceDriver {
  private readonly settings: BacnetSettings;
  private readonly label: string;
  private readonly stopping = new AbortController();
  private readonly signal: AbortSignal;
  private readonly objects = new Map<string, ObjectPoints>();
  private readonly processId = nextProcessId++ % 0x3fffff;
  private endpoint: BacnetEndpoint | undefined;
  private stopCov: (() => void) | undefined;
  private address: string | undefined;
  /** Objects whose values come by COV notification, and when their subscriptions are due again. */
  private readonly subscribed = new Set<string>();
  private renewAt = 0;
  /** False once the device refused ReadPropertyMultiple: then ReadProperty per object. */
  private rpm = true;
  private healthy = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: DriverContext,
    private readonly covLifetimeS: number,
  ) {
    this.settings = bacnetSettings(ctx.source);
    this.label = `BACnet device ${this.settings.deviceInstance}`;
    this.signal = AbortSignal.any([ctx.signal, this.stopping.signal]);
    for (const point of ctx.points) {
      const locator = bacnetLocator(point);
      const type = OBJECT_TYPES[locator.objectType];
      const key = objectKey(type, locator.objectInstance);
      const entry = this.objects.get(key) ?? { type, instance: locator.objectInstance, locator, points: [] };
      entry.points.push(point);
      this.objects.set(key, entry);
    }
  }

  start(): Promise<void> {
    if (this.ctx.unread.length > 0) this.ctx.unreliable(this.ctx.unread, `${this.label}: not read yet`);
    this.running = this.loop().catch((err: unknown) => {
      if (!this.signal.aborted) this.ctx.fault(`${this.label}: poller ended: ${String(err)}`);
    });
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
    await this.unsubscribeAll();
    this.stopCov?.();
    this.endpoint?.release();
    this.endpoint = undefined;
  }

  async write(point: DataPointRecord, value: number | boolean | string): Promise<number | boolean | string> {
    const locator = bacnetLocator(point);
    const values = encodeWrite(locator, value);
    const what = `writing ${describeObject(locator)}`;
    const { endpoint, address } = await this.connected().catch((err: unknown) => {
      throw new Error(`${this.label}: ${classify(err, this.settings.timeoutMs).message} ${what}`, { cause: err });
    });
    const objectId = { type: OBJECT_TYPES[locator.objectType], instance: locator.objectInstance };
    try {
      await this.request(endpoint.client.writeProperty(
        { address },
        objectId,
        PROPERTY.PRESENT_VALUE,
        values as Parameters<typeof endpoint.client.writeProperty>[3],
        { priority: locator.writePriority },
      ));
      const read = await this.request(endpoint.client.readProperty({ address }, objectId, PROPERTY.PRESENT_VALUE));
      const held = valueFromBacnet(read.values, point.dataType);
      if (typeof held === 'object') throw new BacnetFailure('refused', `read-back: ${held.problem}`);
      return held;
    } catch (err) {
      throw new Error(`${this.label}: ${classify(err, this.settings.timeoutMs).message} ${what}`, { cause: err });
    }
  }

  private request<T>(op: Promise<T>): Promise<T> {
    return withTimeout(op, this.settings.timeoutMs, this.signal);
  }

  private async loop(): Promise<void> {
    let failures = 0;
    let nextPoll = 0;
    while (!this.signal.aborted) {
      const started = Date.now();
      // Woken before the poll is due: only the COV renewal, so a period longer than half the
      // lifetime cannot let the subscriptions lapse.
      const poll = started >= nextPoll;
      const ok = await this.cycle(poll);
      if (this.signal.aborted) return;
      if (!ok) {
        failures++;
        nextPoll = Date.now() + backoffMs(failures - 1);
      } else if (poll) {
        failures = 0;
        nextPoll = started + this.ctx.periodMs;
      }
      const renew = ok && this.settings.covSubscribe ? this.renewAt : Infinity;
      await sleep(Math.max(0, Math.min(nextPoll, renew) - Date.now()), this.signal);
    }
  }

  /**
   * One cycle: reach the device, (re)subscribe when due, and poll unless `poll` is false.
   * False: the device could not be reached.
   */
  private async cycle(poll = true): Promise<boolean> {
    try {
      const { endpoint, address } = await this.connected();
      if (this.settings.covSubscribe && Date.now() >= this.renewAt) await this.subscribeAll(endpoint, address);
      if (!poll) return true;
      const failures = await this.poll(endpoint, address);
      if (this.signal.aborted) return true;
      if (failures.length === 0) {
        if (!this.healthy) this.ctx.recovered();
        this.healthy = true;
      } else {
        const more = failures.length > 1 ? ` (and ${failures.length - 1} more objects)` : '';
        this.fault(`${failures[0]}${more}`);
      }
      return true;
    } catch (err) {
      if (this.signal.aborted) return true;
      const failure = classify(err, this.settings.timeoutMs);
      const message = `${this.label}: ${failure.message}`;
      this.fault(message);
      this.ctx.unreliable(this.ctx.points, message);
      // Subscriptions may be gone with the device, and its address may have changed.
      this.subscribed.clear();
      this.renewAt = 0;
      if (!this.settings.address) this.address = undefined;
      return false;
    }
  }

  private fault(message: string): void {
    this.healthy = false;
    this.ctx.fault(message);
  }

  /** The shared endpoint and the device's address (a Who-Is for deviceInstance when not configured). */
  private async connected(): Promise<{ endpoint: BacnetEndpoint; address: string }> {
    if (!this.endpoint) {
      const endpoint = await acquireEndpoint(this.settings.localPort);
      if (this.signal.aborted) {
        endpoint.release();
        throw new BacnetFailure('stopped', 'the data source is stopped');
      }
      this.endpoint = endpoint;
      this.stopCov = endpoint.onCov((n) => this.notified(n));
    }
    this.address ??= this.settings.address || (await this.whoIs(this.endpoint));
    return { endpoint: this.endpoint, address: this.address };
  }

  private whoIs(endpoint: BacnetEndpoint): Promise<string> {
    const instance = this.settings.deviceInstance;
    return withTimeout(
      new Promise<string>((resolve) => {
        const off = endpoint.onIAm((iAm: IAm) => {
          if (iAm.deviceInstance !== instance) return;
          off();
          resolve(iAm.address);
        });
        this.signal.addEventListener('abort', off, { once: true });
        endpoint.client.whoIs({ address: this.settings.broadcastAddress }, { lowLimit: instance, highLimit: instance });
      }),
      this.settings.timeoutMs,
      this.signal,
    ).catch((err: unknown) => {
      const f = classify(err, this.settings.timeoutMs);
      throw f.kind === 'link' ? new BacnetFailure('link', `no I-Am to a Who-Is sent to ${this.settings.broadcastAddress} within ${this.settings.timeoutMs} ms`) : f;
    });
  }

  /** Subscribes every object; those the device refuses stay polled. A link failure throws. */
  private async subscribeAll(endpoint: BacnetEndpoint, address: string): Promise<void> {
    for (const [key, o] of this.objects) {
      try {
        await this.request(endpoint.client.subscribeCov({ address }, { type: o.type, instance: o.instance }, this.processId, false, false, this.covLifetimeS));
        this.subscribed.add(key);
      } catch (err) {
        const f = classify(err, this.settings.timeoutMs);
        if (f.kind !== 'refused') throw f;
        this.subscribed.delete(key);
      }
    }
    this.renewAt = Date.now() + Math.max(1_000, (this.covLifetimeS * 1000) / 2);
  }

  private async unsubscribeAll(): Promise<void> {
    const endpoint = this.endpoint;
    const address = this.address;
    if (!endpoint || !address || this.subscribed.size === 0) return;
    const quick = AbortSignal.timeout(this.settings.timeoutMs);
    for (const key of this.subscribed) {
      const o = this.objects.get(key)!;
      await withTimeout(endpoint.client.subscribeCov({ address }, { type: o.type, instance: o.instance }, this.processId, true, false, 0), this.settings.timeoutMs, quick).catch(() => undefined);
    }
    this.subscribed.clear();
  }

  private notified(n: CovNotification): void {
    if (n.subscriberProcessId !== this.processId || this.signal.aborted) return;
    const o = this.objects.get(objectKey(n.objectType, n.objectInstance));
    if (!o || !n.presentValue) return;
    const values: ProducedValue[] = [];
    this.collect(o, n.presentValue, Date.now(), values);
    if (values.length > 0) void this.ctx.accept(values);
  }

  /** The values of an object's points, or a warning on each. */
  private collect(o: ObjectPoints, read: readonly AppValue[], ts: number, into: ProducedValue[]): string | undefined {
    let problem: string | undefined;
    for (const point of o.points) {
      const value = valueFromBacnet(read, point.dataType);
      if (typeof value === 'object') {
        problem = `${this.label}: ${describeObject(o.locator)}: ${value.problem}`;
        this.ctx.unreliable([point], problem);
      } else into.push({ point, value, ts });
    }
    return problem;
  }

  /** Reads the objects not subscribed (or one of them, to see that the device answers); returns the failures. */
  private async poll(endpoint: BacnetEndpoint, address: string): Promise<string[]> {
    let due = [...this.objects].filter(([key]) => !this.subscribed.has(key)).map(([, o]) => o);
    if (due.length === 0) due = [...this.objects.values()].slice(0, 1);
    if (due.length === 0) return [];
    const ts = Date.now();
    const values: ProducedValue[] = [];
    const failures: string[] = [];
    if (this.rpm) {
      try {
        for (let i = 0; i < due.length; i += RPM_CHUNK) await this.readMultiple(endpoint, address, due.slice(i, i + RPM_CHUNK), ts, values, failures);
      } catch (err) {
        const f = classify(err, this.settings.timeoutMs);
        if (f.kind !== 'refused') throw f;
        // The device does not do RPM: each object by ReadProperty from now on.
        this.rpm = false;
        values.length = 0;
        failures.length = 0;
      }
    }
    if (!this.rpm) {
      for (const o of due) {
        try {
          const read = await this.request(endpoint.client.readProperty({ address }, { type: o.type, instance: o.instance }, PROPERTY.PRESENT_VALUE));
          const problem = this.collect(o, read.values, ts, values);
          if (problem) failures.push(problem);
        } catch (err) {
          const f = classify(err, this.settings.timeoutMs);
          if (f.kind !== 'refused') throw f;
          const message = `${this.label}: ${describeObject(o.locator)}: ${f.message}`;
          this.ctx.unreliable(o.points, message);
          failures.push(message);
        }
      }
    }
    if (values.length > 0 && !this.signal.aborted) await this.ctx.accept(values);
    return failures;
  }

  private async readMultiple(endpoint: BacnetEndpoint, address: string, objects: readonly ObjectPoints[], ts: number, values: ProducedValue[], failures: string[]): Promise<void> {
    const spec = objects.map((o) => ({ objectId: { type: o.type, instance: o.instance }, properties: [{ id: PROPERTY.PRESENT_VALUE, index: 0xffffffff }] }));
    const answer = await this.request(endpoint.client.readPropertyMultiple({ address }, spec));
    const byKey = new Map<string, AppValue[]>();
    for (const r of answer.values) {
      const pv = r.values.find((v) => v.id === PROPERTY.PRESENT_VALUE);
      if (pv) byKey.set(objectKey(r.objectId.type, r.objectId.instance), pv.value);
    }
    for (const o of objects) {
      const problem = this.collect(o, byKey.get(objectKey(o.type, o.instance)) ?? [], ts, values);
      if (problem) failures.push(problem);
    }
  }
}

// Discovery: Who-Is on the source's port, then each answering device's objects of the supported types.

export interface DiscoveredObject {
  objectType: ObjectTypeName;
  objectInstance: number;
  name: string | null;
}
export interface DiscoveredDevice {
  deviceInstance: number;
  address: string;
  vendorId: number;
  name: string | null;
  objects: DiscoveredObject[];
}

/** The most objects listed per device (a large controller's list is read a page at a time by hand). */
const DISCOVER_OBJECTS = 1000;

/**
 * Sends a Who-Is to the source's broadcast address (and its device's address when configured),
 * waits `waitMs` for I-Am answers, and lists each device's objects of the supported types with their names.
 */
export async function discoverBacnet(source: Pick<DataSourceRecord, 'settings'>, waitMs = 2000): Promise<DiscoveredDevice[]> {
  const settings = bacnetSettings(source);
  const endpoint = await acquireEndpoint(settings.localPort);
  const signal = AbortSignal.timeout(waitMs + 30_000);
  const request = <T>(op: Promise<T>) => withTimeout(op, settings.timeoutMs, signal);
  try {
    const found = new Map<number, IAm>();
    const off = endpoint.onIAm((iAm) => found.set(iAm.deviceInstance, iAm));
    endpoint.client.whoIs({ address: settings.broadcastAddress });
    if (settings.address) endpoint.client.whoIs({ address: settings.address });
    await sleep(waitMs, AbortSignal.timeout(waitMs + 1000));
    off();
    const devices: DiscoveredDevice[] = [];
    for (const iAm of [...found.values()].sort((a, b) => a.deviceInstance - b.deviceInstance)) {
      const receiver = { address: iAm.address };
      const device = { type: DEVICE_OBJECT_TYPE, instance: iAm.deviceInstance };
      const nameOf = async (objectId: { type: number; instance: number }) => {
        const read = await request(endpoint.client.readProperty(receiver, objectId, PROPERTY.OBJECT_NAME)).catch(() => undefined);
        const v = read?.values[0];
        return v && v.type === TAG.CHARACTER_STRING && typeof v.value === 'string' ? v.value : null;
      };
      const entry: DiscoveredDevice = { deviceInstance: iAm.deviceInstance, address: iAm.address, vendorId: iAm.vendorId, name: await nameOf(device), objects: [] };
      const list = await request(endpoint.client.readProperty(receiver, device, PROPERTY.OBJECT_LIST)).catch(() => undefined);
      for (const item of list?.values ?? []) {
        if (entry.objects.length >= DISCOVER_OBJECTS) break;
        const id = item.value as { type?: unknown; instance?: unknown } | null;
        if (typeof id?.type !== 'number' || typeof id.instance !== 'number') continue;
        const objectType = objectTypeName(id.type);
        if (!objectType) continue;
        entry.objects.push({ objectType, objectInstance: id.instance, name: await nameOf({ type: id.type, instance: id.instance }) });
      }
      devices.push(entry);
    }
    return devices;
  } finally {
    endpoint.release();
  }
}
