// The floor for live-value fan-out: a bare `ws` server in a process of its own, speaking just enough
// of the service's protocol for the websocket bench's clients (subscribe → REGISTERED, UPDATE messages
// of the same shape), fed by the same bulk POST body. No authentication, no store, no bus: parse the
// body, encode each value once, send it to each subscriber. `node --import tsx bench/lib/bare-ws.ts <port>`.
import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

const port = Number(process.argv[2]);
const subscribers = new Map<string, Set<WebSocket>>();

const server = createServer((req, res) => {
  if (req.method === 'GET') return void res.end('ok');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const values = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { xid: string; value: number; timestamp: number }[];
    for (const v of values) {
      const to = subscribers.get(v.xid);
      if (!to) continue;
      const value = JSON.stringify({ dataType: 'NUMERIC', value: v.value, timestamp: v.timestamp, annotation: null });
      const message = Buffer.from(`{"status":"OK","payload":{"xid":${JSON.stringify(v.xid)},"event":"UPDATE","value":${value},"enabled":true}}`);
      for (const ws of to) ws.send(message, { binary: false });
    }
    res.setHeader('content-type', 'application/json');
    res.end('[]');
  });
});

const wss = new WebSocketServer({ server, perMessageDeflate: false });
wss.on('connection', (ws) => {
  const mine = new Set<string>();
  ws.on('message', (data) => {
    const { xid } = JSON.parse(data.toString()) as { xid: string };
    mine.add(xid);
    let set = subscribers.get(xid);
    if (!set) subscribers.set(xid, (set = new Set()));
    set.add(ws);
    ws.send(`{"status":"OK","payload":{"xid":${JSON.stringify(xid)},"event":"REGISTERED","value":null,"enabled":true}}`);
  });
  ws.on('close', () => {
    for (const xid of mine) subscribers.get(xid)?.delete(ws);
  });
});
server.listen(port, '127.0.0.1');
