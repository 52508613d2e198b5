// One BACnet/IP endpoint (a UDP socket of @bacnet-js/client) per local port, shared by every source
// and discovery on that port: a port can be bound once, and BACnet matches answers by invoke id, so
// several sources on one port simply take turns of ids. The stack is imported on first use, so
// the service's start and other sources never load it. Requests get our own time-out (the stack's
// is per socket) and errors become BacnetFailure with a kind the driver acts on.
import type { AppValue } from './bacnet-codec.js';

type ClientClass = typeof import('@bacnet-js/client/dist/lib/client.js').default;
type BACnetClient = InstanceType<ClientClass>;

/** `link`: no answer, nothing to reach; `refused`: the device answered with an error, reject or abort. */
export type FailureKind = 'link' | 'refused' | 'stopped';

export class BacnetFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'BacnetFailure';
  }
}

/** The stack's error texts ("BacnetError - Class:2 - Code:32", "BacnetAbort - Reason:9", "ERR_TIMEOUT") sorted. */
export function classify(err: unknown, timeoutMs: number): BacnetFailure {
  if (err instanceof BacnetFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  const error = /^BacnetError - Class:(\d+) - Code:(\d+)/.exec(message);
  if (error) return new BacnetFailure('refused', `error class ${error[1]}, code ${error[2]}`);
  const abort = /^BacnetAbort - Reason:(\d+)/.exec(message);
  if (abort) return new BacnetFailure('refused', `rejected or aborted (reason ${abort[1]})`);
  if (message === 'ERR_TIMEOUT') return new BacnetFailure('link', `no answer within ${timeoutMs} ms`);
  return new BacnetFailure('link', message);
}

export interface IAm {
  deviceInstance: number;
  address: string;
  vendorId: number;
}

export interface CovNotification {
  subscriberProcessId: number;
  objectType: number;
  objectInstance: number;
  presentValue: AppValue[] | undefined;
}

/** A shared endpoint as its users see it. */
export interface BacnetEndpoint {
  readonly client: BACnetClient;
  /** Listeners of I-Am and COV notifications; each returns its own removal. */
  onIAm(listener: (iAm: IAm) => void): () => void;
  onCov(listener: (n: CovNotification) => void): () => void;
  release(): void;
}

interface Shared {
  client: BACnetClient;
  refs: number;
  iAm: Set<(iAm: IAm) => void>;
  cov: Set<(n: CovNotification) => void>;
}

const endpoints = new Map<number, Promise<Shared>>();
const PRESENT_VALUE = 85;
/** The stack's own time-out only cleans its table: ours (per request) is what callers see. */
const STACK_TIMEOUT_MS = 30_000;

/** The endpoint on this UDP port (bound on all interfaces), opened by the first user; rejects when the port cannot be bound. */
export async function acquireEndpoint(localPort: number): Promise<BacnetEndpoint> {
  let pending = endpoints.get(localPort);
  if (!pending) {
    pending = open(localPort);
    endpoints.set(localPort, pending);
    pending.catch(() => endpoints.delete(localPort));
  }
  const shared = await pending;
  shared.refs++;
  let released = false;
  return {
    client: shared.client,
    onIAm(listener) {
      shared.iAm.add(listener);
      return () => shared.iAm.delete(listener);
    },
    onCov(listener) {
      shared.cov.add(listener);
      return () => shared.cov.delete(listener);
    },
    release() {
      if (released) return;
      released = true;
      if (--shared.refs > 0) return;
      endpoints.delete(localPort);
      shared.client.close();
    },
  };
}

async function open(localPort: number): Promise<Shared> {
  const stack = await import('@bacnet-js/client');
  // CommonJS under ESM: the default import is module.exports, whose `default` is the client class.
  const exported = stack.default as unknown as ClientClass | { default: ClientClass };
  const Client = 'default' in exported ? exported.default : exported;
  // reuseAddr off: a port another process holds is an error here, not a socket that hears half the answers.
  const client = new Client({ port: localPort, reuseAddr: false, apduTimeout: STACK_TIMEOUT_MS });
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => {
      client.close();
      reject(new BacnetFailure('link', `cannot use local UDP port ${localPort} (${(err as NodeJS.ErrnoException).code ?? err.message})`));
    };
    client.once('error', onError);
    client.once('listening', () => {
      client.off('error', onError);
      resolve();
    });
  });
  const shared: Shared = { client, refs: 0, iAm: new Set(), cov: new Set() };
  client.on('error', () => undefined); // a send that failed surfaces as its request's time-out
  client.on('iAm', (content) => {
    const p = content.payload;
    const address = content.header?.sender.address ?? p.address;
    for (const l of shared.iAm) l({ deviceInstance: p.deviceId, address, vendorId: p.vendorId });
  });
  client.on('covNotifyUnconfirmed', (content) => {
    const p = content.payload;
    const pv = p.values.find((v: { property: { id: number } }) => v.property.id === PRESENT_VALUE);
    const n: CovNotification = {
      subscriberProcessId: p.subscriberProcessId,
      objectType: p.monitoredObjectId.type,
      objectInstance: p.monitoredObjectId.instance,
      presentValue: pv?.value,
    };
    for (const l of shared.cov) l(n);
  });
  return shared;
}

/** Settles like `op`, or rejects after timeoutMs (a link failure) or when the signal aborts. */
export function withTimeout<T>(op: Promise<T>, timeoutMs: number, signal: AbortSignal): Promise<T> {
  op.catch(() => undefined);
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new BacnetFailure('stopped', 'the data source is stopped'));
    const onAbort = () => finish(() => reject(new BacnetFailure('stopped', 'the data source is stopped')));
    const timer = setTimeout(() => finish(() => reject(new BacnetFailure('link', `no answer within ${timeoutMs} ms`))), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    function finish(then: () => void) {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      then();
    }
    op.then(
      (v) => finish(() => resolve(v)),
      (err: unknown) => finish(() => reject(classify(err, timeoutMs))),
    );
  });
}
