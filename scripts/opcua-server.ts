// A small OPC UA server to try the OPC_UA data source with (README, "OPC_UA"): node-opcua on
// opc.tcp://127.0.0.1:4840 (OPCUA_PORT to change), a Plant object with a Temperature that changes
// every second (Double, read-only), a writable Setpoint (Double) and Running (Boolean). Anonymous
// sessions, or the user operator / secret; security None, Sign and SignAndEncrypt (Basic256Sha256),
// any client certificate trusted on first use (its PKI folder: ./opcua-demo-pki).
//   node --import tsx scripts/opcua-server.ts
import { DataType, MessageSecurityMode, OPCUACertificateManager, OPCUAServer, SecurityPolicy, StatusCodes, Variant } from 'node-opcua';

const port = Number(process.env.OPCUA_PORT ?? 4840);
let temperature = 20;
let setpoint = 21.5;
let running = true;

const serverCertificateManager = new OPCUACertificateManager({ rootFolder: './opcua-demo-pki', automaticallyAcceptUnknownCertificate: true });
await serverCertificateManager.initialize();
const server = new OPCUAServer({
  port,
  hostname: '127.0.0.1',
  serverCertificateManager,
  securityModes: [MessageSecurityMode.None, MessageSecurityMode.Sign, MessageSecurityMode.SignAndEncrypt],
  securityPolicies: [SecurityPolicy.None, SecurityPolicy.Basic256Sha256],
  allowAnonymous: true,
  userManager: { isValidUser: (user: string, password: string) => user === 'operator' && password === 'secret' },
});
await server.initialize();
const space = server.engine.addressSpace!;
const ns = space.getOwnNamespace();
const plant = ns.addObject({ organizedBy: space.rootFolder.objects, browseName: 'Plant', nodeId: 's=Plant' });
ns.addVariable({
  componentOf: plant, browseName: 'Temperature', nodeId: 's=Temperature', dataType: 'Double', minimumSamplingInterval: 100,
  value: { get: () => new Variant({ dataType: DataType.Double, value: temperature }) },
});
ns.addVariable({
  componentOf: plant, browseName: 'Setpoint', nodeId: 's=Setpoint', dataType: 'Double', minimumSamplingInterval: 100,
  accessLevel: 'CurrentRead | CurrentWrite', userAccessLevel: 'CurrentRead | CurrentWrite',
  value: {
    get: () => new Variant({ dataType: DataType.Double, value: setpoint }),
    set: (v: Variant) => ((setpoint = Number(v.value)), StatusCodes.Good),
  },
});
ns.addVariable({
  componentOf: plant, browseName: 'Running', nodeId: 's=Running', dataType: 'Boolean', minimumSamplingInterval: 100,
  accessLevel: 'CurrentRead | CurrentWrite', userAccessLevel: 'CurrentRead | CurrentWrite',
  value: {
    get: () => new Variant({ dataType: DataType.Boolean, value: running }),
    set: (v: Variant) => ((running = v.value === true), StatusCodes.Good),
  },
});
setInterval(() => (temperature = Math.round((20 + 5 * Math.sin(Date.now() / 60_000)) * 100) / 100), 1_000);
await server.start();
console.log(`OPC UA server on opc.tcp://127.0.0.1:${port} (nodes ns=1;s=Temperature, ns=1;s=Setpoint, ns=1;s=Running); Ctrl-C stops it`);
process.once('SIGINT', () => void server.shutdown(0).then(() => process.exit(0)));
