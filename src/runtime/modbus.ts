// MODBUS_IP data sources: a Modbus TCP client (modbus-serial over a socket this module owns) that polls
// the planned read requests every period and writes set values. One request is on the wire at a time
// (many devices answer only one), so a write waits for the current read, not for the whole poll.
// Device trouble is reported through ctx.fault and retried with backoff; nothing here throws out of
// the poll loop. The points a poll could not read (their request failed, or the connection failed
// before it) are marked unreliable with the failure's text; their next value clears that.
import { Socket } from 'node:net';
import modbusSerial from 'modbus-serial';
import { FifoLock } from '../core/fifo-lock.js';
import type { DataPointRecord } from '../store/metadata/data-points.js';
import type { DataSourceRecord } from '../store/metadata/data-sources.js';
import { backoffMs, sleep, type DriverContext, type DriverFactory, type ProducedValue, type SourceDriver } from './driver.js';
import {
  DEFAULT_PLAN,
  describeRange,
  encodeWrite,
  isBitType,
  modbusLocator,
  planReads,
  valueFromBit,
  valueFromWords,
  widthOf,
  type PlanOptions,
  type ReadRequest,
  type WriteCommand,
} from './modbus-codec.js';

// modbus-serial is CommonJS: its default export is the module object, whose `default` is the client class.
const ModbusClient = modbusSerial.default;
type ModbusClient = InstanceType<typeof ModbusClient>;

export interface ModbusSettings {
  host: string;
  port: number;
  unitId: number;
  timeoutMs: number;
  /** Further attempts after a request timed out (or lost its connection). */
  retries: number;
}

/** The source's settings with the defaults of the data source service. */
export function modbusSettings(source: Pick<DataSourceRecord, 'settings'>): ModbusSettings {
  const s = source.settings;
  const int = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isInteger(value) ? value : fallback);
  return {
    host: typeof s.host === 'string' && s.host !== '' ? s.host : '127.0.0.1',
    port: int(s.port, 502),
    unitId: int(s.unitId, 1),
    timeoutMs: Math.max(1, int(s.timeoutMs, 1000)),
    retries: Math.max(0, int(s.retries, 2)),
  };
}

export interface ModbusDriverOptions {
  /** How reads are batched; `{ ...DEFAULT_PLAN, batching: false }` reads one point per request. */
  plan?: PlanOptions;
}

/** A driver factory with non-default options (the benchmark's unbatched baseline). */
export function modbusDriverFactory(options: ModbusDriverOptions = {}): DriverFactory {
  return (ctx) => new ModbusDriver(ctx, options.plan ?? DEFAULT_PLAN);
}

export const createModbusDriver: DriverFactory = modbusDriverFactory();

/**
 * How a request failed (device failures reject write() with a ModbusFailure). `link` failures (no connection, timeout, connection closed, a response that
 * does not parse) drop the connection and back off; an `exception` means the device is there and
 * refused this one request.
 */
type FailureKind = 'connect' | 'closed' | 'timeout' | 'invalid' | 'exception' | 'stopped';

export class ModbusFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'ModbusFailure';
  }

  get linkDown(): boolean {
    return this.kind !== 'exception';
  }
}

/** One open connection: the socket, the client speaking Modbus over it, and a signal for its loss. */
class Link {
  private readonly lostController = new AbortController();

  private constructor(
    readonly client: ModbusClient,
    private readonly socket: Socket,
  ) {
    // 'close' follows every socket error too; modbus-serial itself would only notice at the next timeout.
    socket.once('close', () => this.lostController.abort(new ModbusFailure('closed', 'connection closed by the device')));
  }

  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  static async open(settings: ModbusSettings, stopped: AbortSignal): Promise<Link> {
    const socket = new Socket();
    socket.on('error', () => undefined); // reported through 'close' (above) or the connect promise
    await connectSocket(socket, settings, stopped);
    socket.setNoDelay(true);
    const client = new ModbusClient();
    client.on('error', () => undefined);
    try {
      // With a connected socket of ours, connectTCP only wires the client to it.
      await client.connectTCP(settings.host, { port: settings.port, socket });
    } catch (err) {
      socket.destroy();
      throw err;
    }
    client.setID(settings.unitId);
    client.setTimeout(settings.timeoutMs);
    return new Link(client, socket);
  }

  close(): void {
    // destroy() also cancels modbus-serial's pending transaction timers (a plain close would leave them).
    this.client.destroy(() => undefined);
    this.socket.destroy();
  }
}

function connectSocket(socket: Socket, settings: ModbusSettings, stopped: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new ModbusFailure('connect', `not connected (timeout after ${settings.timeoutMs} ms connecting)`)), settings.timeoutMs);
    const onStop = () => fail(stopped.reason as Error);
    const onError = (err: NodeJS.ErrnoException) => fail(new ModbusFailure('connect', `not connected (${socketErrorText(err)})`));
    const cleanup = () => {
      clearTimeout(timer);
      stopped.removeEventListener('abort', onStop);
      socket.off('error', onError);
    };
    function fail(err: Error) {
      cleanup();
      socket.destroy();
      reject(err);
    }
    if (stopped.aborted) return reject(stopped.reason as Error);
    stopped.addEventListener('abort', onStop, { once: true });
    socket.once('error', onError);
    socket.once('connect', () => {
      cleanup();
      resolve();
    });
    socket.connect({ host: settings.host, port: settings.port });
  });
}

function socketErrorText(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return err.message;
  }
}

/** Settles like `op`, or rejects with the reason of the first signal that aborts. */
function unlessAborted<T>(op: Promise<T>, signals: readonly AbortSignal[]): Promise<T> {
  op.catch(() => undefined); // op may still reject after a signal won: never an unhandled rejection
  return new Promise((resolve, reject) => {
    const aborted = signals.find((s) => s.aborted);
    if (aborted) return reject(aborted.reason as Error);
    const onAbort = (event: Event) => {
      cleanup();
      reject((event.target as AbortSignal).reason as Error);
    };
    const cleanup = () => signals.forEach((s) => s.removeEventListener('abort', onAbort));
    signals.forEach((s) => s.addEventListener('abort', onAbort, { once: true }));
    op.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (err: unknown) => {
        cleanup();
        reject(err);
      },
    );
  });
}

/** modbus-serial rejects with plain objects as well as Errors: sort them by kind. */
function classify(err: unknown, timeoutMs: number): ModbusFailure {
  if (err instanceof ModbusFailure) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as { message?: unknown; errno?: unknown; modbusCode?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (typeof e.modbusCode === 'number') {
    // "Modbus exception 4: Slave device failure (device reports internal error)" → "Slave device failure"
    const text = message.replace(/^Modbus exception \d+: /, '').replace(/ \(.*\)$/, '');
    return new ModbusFailure('exception', `exception ${e.modbusCode} (${text})`);
  }
  if (e.errno === 'ETIMEDOUT') return new ModbusFailure('timeout', `timeout after ${timeoutMs} ms`);
  if (message === 'Port Not Open') return new ModbusFailure('closed', 'connection closed');
  return new ModbusFailure('invalid', `invalid response (${message})`);
}

interface PollResult {
  values: ProducedValue[];
  /** The first failed request of the poll, if any. */
  failure?: ModbusFailure;
  failed: number;
  /** The points the poll could not read, with the failure that kept each group from being read. */
  unread: { points: DataPointRecord[]; reason: string }[];
}

/** Why a point is unreliable from the start until its first read. */
const NOT_READ_YET = 'not read yet';

class ModbusDriver implements SourceDriver {
  private readonly settings: ModbusSettings;
  private readonly prefix: string;
  private readonly plan: readonly ReadRequest[];
  private readonly stopping = new AbortController();
  private link: Link | undefined;
  /** One request on the wire at a time, in call order. */
  private readonly onTheWire = new FifoLock();
  private running: Promise<void> = Promise.resolve();
  /** Whether recovered() was reported since the start or the last fault. */
  private healthy = false;

  constructor(
    private readonly ctx: DriverContext,
    planOptions: PlanOptions,
  ) {
    this.settings = modbusSettings(ctx.source);
    this.prefix = `Modbus ${this.settings.host}:${this.settings.port}`;
    this.plan = planReads(ctx.points, planOptions);
  }

  private get stopped(): AbortSignal {
    return this.stopping.signal;
  }

  start(): Promise<void> {
    if (this.ctx.unread.length > 0) this.ctx.unreliable(this.ctx.unread, `${this.prefix}: ${NOT_READ_YET}`);
    const halt = () => this.halt();
    if (this.ctx.signal.aborted) halt();
    else this.ctx.signal.addEventListener('abort', halt, { once: true });
    this.running = this.loop()
      .catch((err: unknown) => {
        // Unreachable by design (loop catches everything); kept so a bug cannot become an unhandled rejection.
        if (!this.stopped.aborted) this.ctx.fault(`${this.prefix}: poller ended: ${String(err)}`);
      })
      .finally(() => this.dropLink());
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.halt();
    await this.running;
  }

  /** Ends waits and the request on the wire at once; the loop then returns without handing anything on. */
  private halt(): void {
    if (!this.stopped.aborted) this.stopping.abort(new ModbusFailure('stopped', 'the data source is stopped'));
    this.dropLink();
  }

  /** Resolves to the value the registers now hold (12.7 written to an INT16 holds 13). */
  async write(point: DataPointRecord, value: number | boolean | string): Promise<number | boolean> {
    const locator = modbusLocator(point);
    const command = encodeWrite(locator, value);
    const what = `writing ${describeRange(locator.registerType, locator.offset, widthOf(locator))}`;
    await this.request(what, (client) => sendWrite(client, command));
    return command.kind === 'coil' ? valueFromBit(command.state, point.dataType) : valueFromWords(command.words, 0, locator, point.dataType);
  }

  private async loop(): Promise<void> {
    let failedPolls = 0;
    while (!this.stopped.aborted) {
      const started = Date.now();
      const outcome = await this.pollAndReport();
      if (outcome === 'stopped') return;
      // Down: reconnect after a growing pause. Otherwise the next poll at the period (at once if late).
      const wait = outcome === 'down' ? backoffMs(failedPolls++) : Math.max(0, this.ctx.periodMs - (Date.now() - started));
      if (outcome !== 'down') failedPolls = 0;
      await sleep(wait, this.stopped);
    }
  }

  /** One poll: hands what was read to the pipeline, then reports a fault or (once per episode) the recovery. */
  private async pollAndReport(): Promise<'ok' | 'refused' | 'down' | 'stopped'> {
    try {
      const result = await this.poll();
      if (this.stopped.aborted) return 'stopped';
      if (result.values.length > 0) await this.ctx.accept(result.values);
      if (this.stopped.aborted) return 'stopped';
      for (const { points, reason } of result.unread) this.ctx.unreliable(points, reason);
      if (!result.failure) {
        if (!this.healthy) this.ctx.recovered();
        this.healthy = true;
        return 'ok';
      }
      const more = result.failed > 1 ? ` (and ${result.failed - 1} more failed requests)` : '';
      this.reportFault(result.failure.message + more);
      if (!result.failure.linkDown) return 'refused';
      this.dropLink();
      return 'down';
    } catch (err) {
      if (this.stopped.aborted) return 'stopped';
      // Not a device failure (accepting or decoding misbehaved): report it and slow down rather than spin.
      this.reportFault(`${this.prefix}: ${err instanceof Error ? err.message : String(err)}`);
      return 'down';
    }
  }

  private reportFault(message: string): void {
    this.healthy = false;
    this.ctx.fault(message);
  }

  /**
   * Runs the plan once. A link failure ends the poll (the remaining requests would only time out
   * too); an exception response fails its own request and the others still deliver values.
   */
  private async poll(): Promise<PollResult> {
    const ts = Date.now();
    const result: PollResult = { values: [], failed: 0, unread: [] };
    for (const [i, request] of this.plan.entries()) {
      try {
        await this.read(request, ts, result.values);
      } catch (err) {
        const failure = classify(err, this.settings.timeoutMs);
        if (failure.kind === 'stopped') return result;
        result.failed++;
        result.failure ??= failure;
        // A link failure also leaves the requests after this one unread.
        const unread = failure.linkDown ? this.plan.slice(i) : [request];
        result.unread.push({ points: unread.flatMap((r) => r.points.map((p) => p.point)), reason: failure.message });
        if (failure.linkDown) return result;
      }
    }
    return result;
  }

  private async read(request: ReadRequest, ts: number, into: ProducedValue[]): Promise<void> {
    const { registerType: type, start, count } = request;
    const what = `reading ${describeRange(type, start, count)}`;
    if (isBitType(type)) {
      const bits = await this.request(what, (c) => (type === 'COIL' ? c.readCoils(start, count) : c.readDiscreteInputs(start, count)));
      this.expectLength(bits.data.length, count, 'bits', what);
      for (const p of request.points) into.push({ point: p.point, value: valueFromBit(bits.data[p.index] === true, p.point.dataType), ts });
      return;
    }
    const words = await this.request(what, (c) => (type === 'HOLDING' ? c.readHoldingRegisters(start, count) : c.readInputRegisters(start, count)));
    this.expectLength(words.data.length, count, 'registers', what);
    for (const p of request.points) into.push({ point: p.point, value: valueFromWords(words.data, p.index, p.locator, p.point.dataType), ts });
  }

  private expectLength(got: number, expected: number, unit: string, what: string): void {
    if (got < expected) throw new ModbusFailure('invalid', `${this.prefix}: invalid response ${what} (${got} ${unit} instead of ${expected})`);
  }

  /**
   * One Modbus request, queued behind the one on the wire, with `retries` further attempts after a
   * timeout or a lost connection. Rejects with a ModbusFailure whose message names device and request.
   */
  private request<T>(what: string, op: (client: ModbusClient) => Promise<T>): Promise<T> {
    return this.onTheWire.run(() => this.attempts(what, op));
  }

  private async attempts<T>(what: string, op: (client: ModbusClient) => Promise<T>): Promise<T> {
    const attempts = this.settings.retries + 1;
    let last: ModbusFailure | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const link = await this.connected();
        return await unlessAborted(op(link.client), [link.lost, this.stopped]);
      } catch (err) {
        last = classify(err, this.settings.timeoutMs);
        // Stopped, refused (the loop backs off instead) or refused by the device: trying again is pointless.
        if (last.kind === 'stopped' || last.kind === 'connect' || last.kind === 'exception') break;
        if (last.kind !== 'timeout') this.dropLink();
      }
    }
    const failure = last ?? new ModbusFailure('invalid', 'no attempt made');
    if (failure.kind === 'stopped') throw new ModbusFailure('stopped', `${this.prefix}: not connected (${failure.message}) ${what}`);
    const tries = failure.kind === 'timeout' && attempts > 1 ? ` (${attempts} attempts)` : '';
    throw new ModbusFailure(failure.kind, `${this.prefix}: ${failure.message} ${what}${tries}`);
  }

  private async connected(): Promise<Link> {
    if (this.link && !this.link.lost.aborted) return this.link;
    this.dropLink();
    const link = await Link.open(this.settings, this.stopped);
    if (this.stopped.aborted) {
      link.close();
      throw this.stopped.reason as Error;
    }
    this.link = link;
    return link;
  }

  private dropLink(): void {
    this.link?.close();
    this.link = undefined;
  }
}

function sendWrite(client: ModbusClient, command: WriteCommand): Promise<unknown> {
  if (command.kind === 'coil') return client.writeCoil(command.offset, command.state);
  const [only] = command.words;
  // FC6 for one register; FC16 for two, so a 32-bit value changes in one transaction.
  if (command.words.length === 1 && only !== undefined) return client.writeRegister(command.offset, only);
  return client.writeRegisters(command.offset, command.words);
}
