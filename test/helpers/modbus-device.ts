// An in-memory Modbus TCP device for tests: modbus-serial's ServerTCP over maps the test changes,
// counting the requests it answers.
import modbusSerial, { type IServiceVector } from 'modbus-serial';

type ServerTCP = InstanceType<typeof modbusSerial.ServerTCP>;
type Callback<T> = (err: Error | null, value: T) => void;

/** An in-memory Modbus device served by ServerTCP; counts the requests it answers. */
export class Device {
  readonly holding = new Map<number, number>();
  readonly input = new Map<number, number>();
  readonly coils = new Map<number, boolean>();
  readonly discrete = new Map<number, boolean>();
  readonly requests = { holding: 0, input: 0, coil: 0, discrete: 0, fc6: 0, fc16: 0, fc5: 0 };
  /** Answer reads this late (ms). */
  delayMs = 0;
  /** Never answer reads. */
  hang = false;
  refuseWrites = false;
  refuseInputReads = false;
  private server: ServerTCP | undefined;

  constructor(readonly port: number) {}

  start(): Promise<void> {
    const server = new modbusSerial.ServerTCP(this.vector(), { host: '127.0.0.1', port: this.port, unitID: 1 });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.on('initialized', () => resolve());
      server.on('serverError', (err) => reject(err ?? new Error('server error')));
    });
  }

  stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  setWords(offset: number, words: readonly number[]): void {
    words.forEach((w, i) => this.holding.set(offset + i, w));
  }

  private answer<T>(value: () => T, cb: Callback<T>): void {
    if (this.hang) return;
    const send = () => {
      try {
        cb(null, value());
      } catch (err) {
        cb(err as Error, undefined as T);
      }
    };
    if (this.delayMs > 0) setTimeout(send, this.delayMs);
    else send();
  }

  private vector(): IServiceVector {
    const words = (map: Map<number, number>, addr: number, length: number) => Array.from({ length }, (_, i) => map.get(addr + i) ?? 0);
    const refuse = (what: string) => {
      throw new Error(`device refuses ${what}`);
    };
    // Arity matters to ServerTCP: a trailing callback parameter selects its callback style. A request
    // of more than one register goes to getMultiple…, a single register to get…Register.
    return {
      getMultipleHoldingRegisters: (addr: number, length: number, _unit: number, cb: Callback<number[]>) => {
        this.requests.holding++;
        this.answer(() => words(this.holding, addr, length), cb);
      },
      getHoldingRegister: (addr: number, _unit: number, cb: Callback<number>) => {
        this.requests.holding++;
        this.answer(() => this.holding.get(addr) ?? 0, cb);
      },
      getMultipleInputRegisters: (addr: number, length: number, _unit: number, cb: Callback<number[]>) => {
        this.requests.input++;
        this.answer(() => (this.refuseInputReads ? refuse('input reads') : words(this.input, addr, length)), cb);
      },
      getInputRegister: (addr: number, _unit: number, cb: Callback<number>) => {
        this.requests.input++;
        this.answer(() => (this.refuseInputReads ? refuse('input reads') : (this.input.get(addr) ?? 0)), cb);
      },
      getCoil: (addr: number, _unit: number) => {
        this.requests.coil++;
        return this.coils.get(addr) ?? false;
      },
      getDiscreteInput: (addr: number, _unit: number) => {
        this.requests.discrete++;
        return this.discrete.get(addr) ?? false;
      },
      setRegister: (addr: number, value: number, _unit: number) => {
        this.requests.fc6++;
        if (this.refuseWrites) refuse('writes');
        this.holding.set(addr, value);
      },
      setRegisterArray: (addr: number, values: number[], _unit: number) => {
        this.requests.fc16++;
        if (this.refuseWrites) refuse('writes');
        this.setWords(addr, values);
      },
      setCoil: (addr: number, value: boolean, _unit: number) => {
        this.requests.fc5++;
        if (this.refuseWrites) refuse('writes');
        this.coils.set(addr, value);
      },
    };
  }
}
