// OPC_UA driver: one client session per source with one subscription; each point is a monitored item
// on its node's Value at the point's sampling interval, and a write sets the node's Value and reads it
// back. Reconnection is ours (node-opcua's own is off), with the usual backoff; connection failures
// are faults, a node the server refuses (unknown, not readable, an array or a structure) a warning and
// unreliable mark on its point. Unreliable points: all from the start until their first value, all
// again when the session is lost (cleared by each one's next value).
// The service's application certificate and the trusted server certificates live in a PKI folder
// under DATA_DIR (node-opcua's certificate manager creates the certificate on first use). node-opcua is
// imported only when an OPC UA source starts or is browsed.
import type { ClientSession, ClientSubscription, DataValue, MonitoringParametersOptions, OPCUACertificateManager, OPCUAClient, UserIdentityInfo, Variant } from 'node-opcua';
import type { DataPointRecord, DataType } from '../store/metadata/data-points.js';
import { backoffMs, sleep, type DriverContext, type DriverFactory, type ProducedValue, type SourceDriver } from './driver.js';

type NodeOpcua = typeof import('node-opcua');

export const SECURITY_MODES = ['None', 'Sign', 'SignAndEncrypt'] as const;
export const SECURITY_POLICIES = ['None', 'Basic128Rsa15', 'Basic256', 'Basic256Sha256', 'Aes128_Sha256_RsaOaep', 'Aes256_Sha256_RsaPss'] as const;
type SecurityModeName = (typeof SECURITY_MODES)[number];
type SecurityPolicyName = (typeof SECURITY_POLICIES)[number];

export interface OpcuaSettings {
  endpointUrl: string;
  securityMode: SecurityModeName;
  securityPolicy: SecurityPolicyName;
  username: string;
  password: string;
  publishingIntervalMs: number;
}

export interface OpcuaOptions {
  /** The PKI folder: own certificate and key, trusted and rejected peers (DATA_DIR/opcua-pki). */
  pkiDir: string;
}

/** One child of a browsed node, as GET /data-sources/<xid>/browse answers it. */
export interface BrowsedNode {
  nodeId: string;
  browseName: string;
  nodeClass: string;
  /** The Value's data type of a Variable (its name for the standard types, else its node id); null for other node classes. */
  dataType: string | null;
}

/** Where a browse starts when no node is given: the Objects folder. */
export const OBJECTS_FOLDER = 'ns=0;i=85';
const CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_SAMPLING_MS = 1_000;
const STOP_GRACE_MS = 2_000;
/** Values waiting for the pipeline beyond this are dropped, oldest first (as the MQTT driver does). */
const QUEUE_LIMIT = 10_000;

let library: Promise<NodeOpcua> | null = null;
const loadLibrary = (): Promise<NodeOpcua> =>
  (library ??= import('node-opcua').then((ua) => {
    // node-opcua prints its warnings and errors to the console; what matters reaches the source's
    // state and its points' warnings through the driver instead.
    ua.setWarningLogger(() => undefined);
    ua.setErrorLogger(() => undefined);
    return ua;
  }));

/** One certificate manager per PKI folder, initialised once (it creates the folder and, with the first client, the certificate). */
const managers = new Map<string, Promise<OPCUACertificateManager>>();
function certificateManager(ua: NodeOpcua, pkiDir: string): Promise<OPCUACertificateManager> {
  let manager = managers.get(pkiDir);
  if (!manager) {
    manager = (async () => {
      // Servers' certificates are trusted on first use and kept under trusted/ (move one to rejected/ to refuse it).
      const cm = new ua.OPCUACertificateManager({ rootFolder: pkiDir, automaticallyAcceptUnknownCertificate: true });
      await cm.initialize();
      return cm;
    })();
    managers.set(pkiDir, manager);
    manager.catch(() => managers.delete(pkiDir)); // tried again at the next connect
  }
  return manager;
}

export function opcuaSettings(settings: Record<string, unknown>): OpcuaSettings {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const mode = SECURITY_MODES.find((m) => m === settings.securityMode) ?? 'None';
  const policy = SECURITY_POLICIES.find((p) => p === settings.securityPolicy) ?? 'Basic256Sha256';
  const interval = typeof settings.publishingIntervalMs === 'number' && settings.publishingIntervalMs > 0 ? settings.publishingIntervalMs : 1_000;
  return { endpointUrl: text(settings.endpointUrl), securityMode: mode, securityPolicy: mode === 'None' ? 'None' : policy, username: text(settings.username), password: text(settings.password), publishingIntervalMs: interval };
}

/** A connected client and session; close() ends both. */
interface Connection {
  client: OPCUAClient;
  session: ClientSession;
  close(): Promise<void>;
}

/** Connects and opens a session with the source's security and identity; rejects with a short message. */
async function connectSession(ua: NodeOpcua, settings: OpcuaSettings, options: OpcuaOptions): Promise<Connection> {
  const cm = await certificateManager(ua, options.pkiDir);
  const client = ua.OPCUAClient.create({
    applicationName: 'dds',
    securityMode: ua.MessageSecurityMode[settings.securityMode],
    securityPolicy: ua.SecurityPolicy[settings.securityPolicy],
    endpointMustExist: false,
    // One attempt per connect: the driver's loop reconnects with its own backoff.
    connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    clientCertificateManager: cm,
    keepSessionAlive: true,
    requestedSessionTimeout: 60_000,
    transportTimeout: CONNECT_TIMEOUT_MS,
  });
  try {
    await client.connect(settings.endpointUrl);
    const identity: UserIdentityInfo = settings.username
      ? { type: ua.UserTokenType.UserName, userName: settings.username, password: settings.password }
      : { type: ua.UserTokenType.Anonymous };
    const session = await client.createSession(identity);
    return {
      client,
      session,
      async close() {
        await session.close().catch(() => undefined);
        await client.disconnect().catch(() => undefined);
      },
    };
  } catch (err) {
    await client.disconnect().catch(() => undefined);
    throw new Error(describeError(err), { cause: err });
  }
}

/** node-opcua's errors as short texts (its messages can span many lines). */
function describeError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/ECONNREFUSED/.test(message)) return 'connection refused';
  if (/BadUserAccessDenied|BadIdentityTokenRejected|BadIdentityTokenInvalid/.test(message)) return 'user name or password refused';
  if (/BadSecurityPolicyRejected|BadSecurityModeRejected/.test(message)) return 'the server refused the security mode or policy';
  if (/BadCertificate/.test(message)) return `the server refused the service's certificate (${/BadCertificate\w*/.exec(message)?.[0]})`;
  if (/ENOTFOUND|EAI_AGAIN/.test(message)) return 'host not found';
  if (/timeout|timed out/i.test(message)) return 'no answer from the server in time';
  return message.split('\n')[0]!.slice(0, 300);
}

export function opcuaDriverFactory(options: OpcuaOptions): DriverFactory {
  return (ctx) => new OpcuaDriver(ctx, options);
}

/** A point's node and sampling interval. */
interface OpcuaPoint {
  record: DataPointRecord;
  nodeId: string;
  samplingIntervalMs: number;
}

class OpcuaDriver implements SourceDriver {
  private readonly settings: OpcuaSettings;
  private readonly label: string;
  private readonly points: OpcuaPoint[];
  private readonly stopper = new AbortController();
  private readonly signal: AbortSignal;
  private connection: Connection | null = null;
  private loop: Promise<void> | null = null;
  private faulty: string | null = null;
  /** Each point's last warning, so a warning repeats only when it changes. */
  private readonly warned = new Map<number, string>();
  /** Node data types of settable points, read once per session. */
  private readonly nodeTypes = new Map<string, number>();
  /** Values received while the previous batch is being accepted, handed over together. */
  private queue: ProducedValue[] = [];
  private draining = false;
  private dropped = 0;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: OpcuaOptions,
  ) {
    this.settings = opcuaSettings(ctx.source.settings);
    this.label = `OPC UA ${this.settings.endpointUrl}`;
    this.signal = AbortSignal.any([ctx.signal, this.stopper.signal]);
    this.points = ctx.points.map((record) => ({ record, nodeId: String(record.pointLocator.nodeId ?? ''), samplingIntervalMs: samplingOf(record) }));
  }

  start(): Promise<void> {
    if (this.loop || this.signal.aborted) return Promise.resolve();
    if (this.ctx.unread.length > 0) this.ctx.unreliable(this.ctx.unread, `${this.label}: no value yet`);
    this.loop = this.run().catch((err: unknown) => this.fail(`${this.label}: ${describeError(err)}`));
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    const connection = this.connection;
    this.connection = null;
    if (connection) await within(connection.close(), STOP_GRACE_MS);
    if (this.loop) await within(this.loop, STOP_GRACE_MS);
  }

  /** Writes the node's Value and answers with what the server holds after it (read back). */
  async write(record: DataPointRecord, value: number | boolean | string): Promise<number | boolean | string> {
    const connection = this.connection;
    if (this.signal.aborted || !connection) throw new Error(`${this.label}: not connected`);
    const ua = await loadLibrary();
    const nodeId = String(record.pointLocator.nodeId ?? '');
    const session = connection.session;
    let dataType = this.nodeTypes.get(nodeId);
    if (dataType === undefined) {
      const read = await session.read({ nodeId, attributeId: ua.AttributeIds.DataType });
      if (read.statusCode.isNotGood()) throw new RangeError(`${this.label}: node '${nodeId}': ${read.statusCode.name}`);
      dataType = builtInType(ua, read.value.value);
      this.nodeTypes.set(nodeId, dataType);
    }
    const variant = variantFor(ua, dataType, value, nodeId);
    const status = await session.write({ nodeId, attributeId: ua.AttributeIds.Value, value: { value: variant } });
    if (status.isNotGood()) {
      const refused = ['BadNotWritable', 'BadUserAccessDenied', 'BadTypeMismatch', 'BadOutOfRange', 'BadWriteNotSupported', 'BadNodeIdUnknown'];
      const message = `${this.label}: the server refused the write to '${nodeId}': ${status.name}${status.name === 'BadNotWritable' ? ' (the node is read-only)' : ''}`;
      throw refused.includes(status.name) ? new RangeError(message) : new Error(message);
    }
    const back = await session.read({ nodeId, attributeId: ua.AttributeIds.Value });
    if (back.statusCode.isNotGood()) return value;
    const held = valueFor(ua, back.value, record.dataType);
    return 'error' in held ? value : held.value;
  }

  private fail(message: string): void {
    if (this.faulty === message) return;
    this.faulty = message;
    this.ctx.fault(message);
  }

  private recover(): void {
    if (this.faulty === null) return;
    this.faulty = null;
    this.ctx.recovered();
  }

  private warn(point: OpcuaPoint, message: string): void {
    this.ctx.unreliable([point.record], message);
    if (this.warned.get(point.record.id) === message) return;
    this.warned.set(point.record.id, message);
    this.ctx.warn(point.record, message);
  }

  /** Connects, subscribes, and after each lost session or failed attempt waits (1 s, 2 s, 4 s …) and reconnects. */
  private async run(): Promise<void> {
    const ua = await loadLibrary();
    let attempt = 0;
    while (!this.signal.aborted) {
      const end = await this.session(ua);
      if (this.signal.aborted) break;
      this.fail(`${this.label}: ${end.reason}`);
      this.ctx.unreliable(this.points.map((p) => p.record), `${this.label}: ${end.reason}`);
      if (end.established) attempt = 0;
      await sleep(backoffMs(attempt++), this.signal);
    }
  }

  /** One session, from connecting to its loss; resolves with why it ended, never rejects. */
  private async session(ua: NodeOpcua): Promise<{ established: boolean; reason: string }> {
    let connection: Connection;
    try {
      connection = await connectSession(ua, this.settings, this.options);
    } catch (err) {
      return { established: false, reason: describeError(err) };
    }
    if (this.signal.aborted) {
      await connection.close();
      return { established: false, reason: 'stopped' };
    }
    this.connection = connection;
    this.nodeTypes.clear();
    let lostWith: (reason: string) => void = () => undefined;
    const lost = new Promise<string>((resolve) => {
      lostWith = resolve;
      connection.client.once('connection_lost', () => resolve('connection lost'));
      connection.client.once('close', () => resolve('connection closed'));
      connection.session.once('keepalive_failure', () => resolve('the server stopped answering'));
      connection.session.once('session_closed', () => resolve('session closed by the server'));
      this.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
    });
    try {
      const subscription = await this.subscribe(ua, connection.session);
      subscription.once('terminated', () => lostWith('the server ended the subscription'));
      this.recover();
    } catch (err) {
      if (this.connection === connection) this.connection = null;
      await connection.close();
      return { established: false, reason: `subscription failed: ${describeError(err)}` };
    }
    const reason = await lost;
    if (this.connection === connection) this.connection = null;
    await within(connection.close(), STOP_GRACE_MS);
    return { established: true, reason };
  }

  /** One subscription; a monitored-item group per sampling interval (one request each, not one per point). */
  private async subscribe(ua: NodeOpcua, session: ClientSession): Promise<ClientSubscription> {
    const publishing = this.settings.publishingIntervalMs;
    const subscription = await session.createSubscription2({
      requestedPublishingInterval: publishing,
      // Keep-alives at least every 10 s, the lifetime three of them.
      requestedMaxKeepAliveCount: Math.max(1, Math.ceil(10_000 / publishing)),
      requestedLifetimeCount: Math.max(3, Math.ceil(30_000 / publishing)),
      maxNotificationsPerPublish: 0,
      publishingEnabled: true,
      priority: 1,
    });
    const byInterval = new Map<number, OpcuaPoint[]>();
    for (const point of this.points) {
      const problem = nodeIdProblem(ua, point.nodeId);
      if (problem) {
        this.warn(point, `${this.label}: ${problem}`);
        continue;
      }
      byInterval.set(point.samplingIntervalMs, [...(byInterval.get(point.samplingIntervalMs) ?? []), point]);
    }
    for (const [samplingInterval, points] of byInterval) {
      const parameters: MonitoringParametersOptions = { samplingInterval, discardOldest: true, queueSize: Math.max(1, Math.ceil(publishing / Math.max(1, samplingInterval))) };
      const group = await subscription.monitorItems(
        points.map((p) => ({ nodeId: p.nodeId, attributeId: ua.AttributeIds.Value })),
        parameters,
        ua.TimestampsToReturn.Both,
      );
      group.monitoredItems.forEach((item, index) => {
        const point = points[index]!;
        const status = item.statusCode;
        if (status && status.isNotGood()) this.warn(point, `${this.label}: node '${point.nodeId}': ${status.name}`);
      });
      group.on('changed', (item, dataValue, index) => this.receive(ua, points[index]!, dataValue));
    }
    return subscription;
  }

  private receive(ua: NodeOpcua, point: OpcuaPoint, dataValue: DataValue): void {
    if (this.signal.aborted) return;
    if (dataValue.statusCode.isNotGood()) return this.warn(point, `${this.label}: node '${point.nodeId}': ${dataValue.statusCode.name}`);
    const reading = valueFor(ua, dataValue.value, point.record.dataType);
    if ('error' in reading) return this.warn(point, `${this.label}: node '${point.nodeId}' ${reading.error}`);
    this.warned.delete(point.record.id);
    const ts = dataValue.sourceTimestamp?.getTime() ?? dataValue.serverTimestamp?.getTime() ?? Date.now();
    this.queue.push({ point: point.record, value: reading.value, ts: Number.isFinite(ts) && ts > 0 ? ts : Date.now() });
    if (this.queue.length > QUEUE_LIMIT) {
      this.queue.shift();
      this.dropped++;
    }
    if (!this.draining) {
      this.draining = true;
      setImmediate(() => void this.drain());
    }
  }

  /**
   * Hands what arrived (one publish response's notifications, usually) to the pipeline in one batch,
   * one accept at a time; what arrives meanwhile waits (at most QUEUE_LIMIT values, oldest dropped).
   */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.signal.aborted) {
        const batch = this.queue;
        this.queue = [];
        await this.ctx.accept(batch);
        if (this.dropped > 0) {
          this.fail(`${this.label}: ${this.dropped} values dropped: they arrive faster than they are stored`);
          this.dropped = 0;
        }
      }
      // Drained without drops: an overload fault (and only that) is over.
      if (this.faulty?.includes('values dropped') && this.connection) this.recover();
    } finally {
      this.draining = false;
    }
  }
}

function samplingOf(record: DataPointRecord): number {
  const v = record.pointLocator.samplingIntervalMs;
  return typeof v === 'number' && v >= 0 ? v : DEFAULT_SAMPLING_MS;
}

/** Why a node id cannot be used, or null (`ns=2;s=Tag1`, `i=2258`, `ns=1;g=…`, `ns=1;b=…`). */
export function nodeIdProblem(ua: Pick<NodeOpcua, 'resolveNodeId'>, nodeId: string): string | null {
  if (!nodeId) return 'the point has no nodeId';
  try {
    ua.resolveNodeId(nodeId);
    return null;
  } catch {
    return `'${nodeId}' is not a node id such as ns=2;s=Tag1 or ns=0;i=2258`;
  }
}

/** The built-in type (node-opcua's DataType number) of a DataType attribute's node id: standard types are ns=0;i=1…25. */
function builtInType(ua: NodeOpcua, dataTypeNode: unknown): number {
  const id = dataTypeNode as { namespace?: number; value?: unknown } | null;
  if (id && id.namespace === 0 && typeof id.value === 'number' && id.value >= 1 && id.value <= 25) return id.value;
  return ua.DataType.ExtensionObject;
}

const INTEGER_RANGES: Record<string, [bigint, bigint]> = {
  SByte: [-128n, 127n],
  Byte: [0n, 255n],
  Int16: [-32768n, 32767n],
  UInt16: [0n, 65535n],
  Int32: [-2147483648n, 2147483647n],
  UInt32: [0n, 4294967295n],
  Int64: [-(2n ** 63n), 2n ** 63n - 1n],
  UInt64: [0n, 2n ** 64n - 1n],
};

/** A set value as a Variant of the node's type; TypeError or RangeError (422) when the type cannot take it. */
function variantFor(ua: NodeOpcua, dataType: number, value: number | boolean | string, nodeId: string): Variant {
  const name = ua.DataType[dataType] ?? String(dataType);
  const refuse = (why: string) => new TypeError(`node '${nodeId}' holds ${name}: ${why}`);
  const make = (v: unknown) => new ua.Variant({ dataType, value: v });
  if (name === 'Boolean') {
    if (typeof value === 'boolean') return make(value);
    if (value === 0 || value === 1) return make(value === 1);
    throw refuse('the value must be true or false');
  }
  if (name === 'Float' || name === 'Double') {
    const n = typeof value === 'boolean' ? Number(value) : Number(value);
    if (typeof value === 'string' || !Number.isFinite(n)) throw refuse('the value must be a number');
    return make(n);
  }
  const range = INTEGER_RANGES[name];
  if (range) {
    const n = typeof value === 'boolean' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n)) throw refuse('the value must be an integer');
    if (BigInt(n) < range[0] || BigInt(n) > range[1]) throw new RangeError(`node '${nodeId}' holds ${name}: ${n} is out of its range ${range[0]}…${range[1]}`);
    if (name === 'Int64' || name === 'UInt64') return make(ua.coerceInt64 ? ua.coerceInt64(n) : n);
    return make(n);
  }
  if (name === 'String') return make(String(value));
  throw refuse('only Boolean, integer, Float, Double and String nodes can be written');
}

/** A node's Value as our point type takes it, or why not (arrays, structures, a type the point cannot hold). */
export function valueFor(ua: NodeOpcua, variant: Variant, pointType: DataType): { value: number | boolean | string } | { error: string } {
  const name = ua.DataType[variant.dataType] ?? String(variant.dataType);
  if (variant.arrayType !== ua.VariantArrayType.Scalar) return { error: `holds an array of ${name}: arrays are not supported` };
  if (name === 'Null') return { error: 'holds no value (Null)' };
  let raw: number | boolean | string;
  if (name === 'Boolean') raw = variant.value === true;
  else if (name === 'Float' || name === 'Double') raw = Number(variant.value);
  else if (name === 'Int64' || name === 'UInt64') raw = Number(int64Of(variant.value as [number, number], name === 'Int64'));
  else if (name in INTEGER_RANGES) raw = Number(variant.value);
  else if (name === 'String') raw = String(variant.value ?? '');
  else if (name === 'LocalizedText') raw = String((variant.value as { text?: string } | null)?.text ?? '');
  else if (name === 'DateTime') raw = (variant.value as Date).getTime();
  else return { error: `holds ${name}: only Boolean, integers, Float, Double and String are supported (no structures)` };
  const integer = typeof raw === 'number' && Number.isInteger(raw);
  switch (pointType) {
    case 'BINARY':
      if (typeof raw === 'boolean') return { value: raw };
      if (raw === 0 || raw === 1) return { value: raw === 1 };
      return { error: `holds ${name} ${String(raw)}: a BINARY point takes Boolean` };
    case 'MULTISTATE':
      if (integer) return { value: raw };
      if (typeof raw === 'boolean') return { value: raw ? 1 : 0 };
      return { error: `holds ${name}: a MULTISTATE point takes integers` };
    case 'NUMERIC':
      if (typeof raw === 'number') return { value: raw };
      if (typeof raw === 'boolean') return { value: raw ? 1 : 0 };
      return { error: `holds ${name}: a NUMERIC point takes numbers` };
    case 'ALPHANUMERIC':
      return { value: String(raw) };
  }
}

function int64Of(pair: [number, number], signed: boolean): bigint {
  const unsigned = (BigInt(pair[0] >>> 0) << 32n) | BigInt(pair[1] >>> 0);
  return signed ? BigInt.asIntN(64, unsigned) : unsigned;
}

/** The children of a node (hierarchical references, forward), each Variable with its Value's data type. */
export async function browseNodes(rawSettings: Record<string, unknown>, nodeId: string, options: OpcuaOptions): Promise<BrowsedNode[]> {
  const ua = await loadLibrary();
  const problem = nodeIdProblem(ua, nodeId);
  if (problem) throw new TypeError(problem);
  const settings = opcuaSettings(rawSettings);
  const connection = await connectSession(ua, settings, options);
  try {
    const result = await connection.session.browse({
      nodeId,
      browseDirection: ua.BrowseDirection.Forward,
      referenceTypeId: 'HierarchicalReferences',
      includeSubtypes: true,
      nodeClassMask: 0,
      resultMask: 63,
    });
    if (result.statusCode.name === 'BadNodeIdUnknown') throw new RangeError(`node '${nodeId}' does not exist on the server`);
    if (result.statusCode.isNotGood()) throw new Error(`browse of '${nodeId}' failed: ${result.statusCode.name}`);
    const references = result.references ?? [];
    const variables = references.filter((r) => r.nodeClass === ua.NodeClass.Variable);
    const types = variables.length
      ? await connection.session.read(variables.map((r) => ({ nodeId: r.nodeId, attributeId: ua.AttributeIds.DataType })))
      : [];
    const typeOf = new Map(variables.map((r, i) => [r.nodeId.toString(), types[i]]));
    return references.map((r) => {
      const type = typeOf.get(r.nodeId.toString());
      let dataType: string | null = null;
      if (type && type.statusCode.isGood()) {
        const id = type.value.value as { namespace: number; value: unknown; toString(): string };
        dataType = id.namespace === 0 && typeof id.value === 'number' && ua.DataType[id.value] ? ua.DataType[id.value]! : id.toString();
      }
      return { nodeId: r.nodeId.toString(), browseName: r.browseName.toString(), nodeClass: ua.NodeClass[r.nodeClass] ?? String(r.nodeClass), dataType };
    });
  } finally {
    await within(connection.close(), STOP_GRACE_MS);
  }
}

/** Resolves when the promise settles or after ms, whichever is first. */
function within(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
