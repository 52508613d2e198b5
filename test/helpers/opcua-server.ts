// A real node-opcua server on 127.0.0.1 for the OPC_UA tests: a Plant object with a changing
// Temperature (Double), writable Setpoint (Double), Count (Int32), Running (Boolean), Label (String)
// and Ratio (Float), a read-only Serial (String) and an array node. It accepts anonymous sessions
// and the user operator/secret, with security None, Sign and SignAndEncrypt (any client certificate
// is trusted on first use). stop() and start() again on the same port stand for a restarted server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OPCUAServer } from 'node-opcua';

export const USER = 'operator';
export const PASSWORD = 'secret';

export class OpcuaTestServer {
  temperature = 20;
  setpoint = 1.5;
  count = 7;
  running = false;
  label = 'hello';
  ratio = 0.5;
  private server: OPCUAServer | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly pkiDir = mkdtempSync(join(tmpdir(), 'opcua-server-'));

  constructor(readonly port: number) {}

  get endpointUrl(): string {
    return `opc.tcp://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const ua = await import('node-opcua');
    const serverCertificateManager = new ua.OPCUACertificateManager({ rootFolder: this.pkiDir, automaticallyAcceptUnknownCertificate: true });
    await serverCertificateManager.initialize();
    const server = new ua.OPCUAServer({
      port: this.port,
      hostname: '127.0.0.1',
      serverCertificateManager,
      securityModes: [ua.MessageSecurityMode.None, ua.MessageSecurityMode.Sign, ua.MessageSecurityMode.SignAndEncrypt],
      securityPolicies: [ua.SecurityPolicy.None, ua.SecurityPolicy.Basic256Sha256],
      allowAnonymous: true,
      userManager: { isValidUser: (user: string, password: string) => user === USER && password === PASSWORD },
      // Samples as fast as the tests ask.
      serverCapabilities: { minSupportedSampleRate: 10 },
    });
    await server.initialize();
    const space = server.engine.addressSpace!;
    const ns = space.getOwnNamespace();
    const plant = ns.addObject({ organizedBy: space.rootFolder.objects, browseName: 'Plant', nodeId: 's=Plant' });
    const variable = (name: string, dataType: string, get: () => unknown, set?: (v: unknown) => void) =>
      ns.addVariable({
        componentOf: plant,
        browseName: name,
        nodeId: `s=${name}`,
        dataType,
        minimumSamplingInterval: 10,
        accessLevel: set ? 'CurrentRead | CurrentWrite' : 'CurrentRead',
        userAccessLevel: set ? 'CurrentRead | CurrentWrite' : 'CurrentRead',
        value: {
          get: () => new ua.Variant({ dataType: ua.DataType[dataType as keyof typeof ua.DataType] as number, value: get() }),
          ...(set
            ? {
                set: (variant: { value: unknown }) => {
                  set(variant.value);
                  return ua.StatusCodes.Good;
                },
              }
            : {}),
        },
      });
    variable('Temperature', 'Double', () => this.temperature);
    variable('Setpoint', 'Double', () => this.setpoint, (v) => (this.setpoint = Number(v)));
    variable('Count', 'Int32', () => this.count, (v) => (this.count = Number(v)));
    variable('Running', 'Boolean', () => this.running, (v) => (this.running = v === true));
    variable('Label', 'String', () => this.label, (v) => (this.label = String(v)));
    variable('Serial', 'String', () => 'SN-0001');
    variable('Ratio', 'Float', () => this.ratio, (v) => (this.ratio = Number(v)));
    ns.addVariable({
      componentOf: plant,
      browseName: 'Samples',
      nodeId: 's=Samples',
      dataType: 'Double',
      valueRank: 1,
      arrayDimensions: [3],
      minimumSamplingInterval: 10,
      value: { get: () => new ua.Variant({ dataType: ua.DataType.Double, arrayType: ua.VariantArrayType.Array, value: new Float64Array([1, 2, 3]) }) },
    });
    await server.start();
    this.server = server;
    // The temperature changes every 50 ms.
    this.timer = setInterval(() => (this.temperature = Math.round((this.temperature + 0.1) * 10) / 10), 50);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const server = this.server;
    this.server = null;
    await server?.shutdown(0);
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.pkiDir, { recursive: true, force: true });
  }
}
