// A real outage for tests: the service reaches a server through this relay, which the test cuts (every
// connection reset, new ones refused) and restores on the same port.
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A TCP relay to a server (PostgreSQL, QuestDB) that can be cut and restored on the same port. */
export class Relay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly upstreams = new Set<Socket>();

  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      this.upstreams.add(upstream);
      upstream.on('close', () => this.upstreams.delete(upstream));
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          this.sockets.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** The local ports of the relay's connections to PostgreSQL (pg_stat_activity.client_port). */
  upstreamPorts(): number[] {
    return [...this.upstreams].map((s) => s.localPort).filter((p): p is number => p !== undefined);
  }

  /** The server is gone: connections reset, new ones refused. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
