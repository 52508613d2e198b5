// A real outage for tests: the service reaches a server through this relay, which the test cuts (every
// connection reset, new ones refused) and restores on the same port, or freezes (a server that is there
// but silent, as under SIGSTOP: connections stay open and new ones are accepted, but no byte moves) and
// thaws.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from './wait.js';

/** A TCP relay to a server (PostgreSQL, QuestDB) that can be cut and restored, or frozen and thawed. */
export class Relay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly upstreams = new Set<Socket>();
  /** Each connection's two directions, to stop and start moving bytes. */
  private readonly pipes = new Set<[Socket, Socket]>();
  private frozen = false;

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
        const pipe: [Socket, Socket] = [a, b];
        this.pipes.add(pipe);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          this.sockets.delete(a);
          this.pipes.delete(pipe);
          b.destroy();
        });
        // Frozen: accepted, but nothing is read from it until the thaw.
        if (this.frozen) a.pause();
        else a.pipe(b);
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

  /**
   * The server is frozen: open connections stay open but carry nothing either way (what is sent
   * waits in the sockets' buffers), and new connections are accepted but carry nothing either.
   */
  freeze(): void {
    this.frozen = true;
    for (const [a, b] of this.pipes) {
      a.unpipe(b);
      a.pause();
    }
  }

  /** The server answers again: everything that waited is carried on. */
  thaw(): void {
    this.frozen = false;
    for (const [a, b] of this.pipes) {
      a.pipe(b);
      a.resume();
    }
  }

  /** A relay opened to the server of `url` (a postgres:// URL), and that URL going through it. */
  static async forUrl(url: string, defaultPort: number): Promise<{ relay: Relay; url: string }> {
    const server = new URL(url);
    const relay = new Relay(await freePort(), { host: server.hostname, port: Number(server.port || defaultPort) });
    await relay.open();
    const through = new URL(url);
    through.host = `127.0.0.1:${relay.port}`;
    return { relay, url: through.toString() };
  }
}
