// A real HTTP receiver for webhook tests: records each request (headers and exact body bytes) and
// answers with the next status of a script (then the last one), or never answers when `hang`.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export class HttpReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Statuses to answer, in turn; the last one repeats. */
  statuses: number[] = [200];
  /** A status for a request path, before `statuses` (undefined: use them). */
  statusFor: (url: string) => number | undefined = () => undefined;
  /** Accept requests but never answer them. */
  hang = false;
  private readonly server: Server;
  private readonly hanging: ServerResponse[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        if (this.hang) {
          this.hanging.push(res);
          return;
        }
        const status = this.statusFor(req.url ?? '') ?? (this.statuses.length > 1 ? this.statuses.shift()! : this.statuses[0]!);
        res.statusCode = status;
        res.end(status < 300 ? 'ok' : 'not now');
      });
    });
  }

  /** Listens on 127.0.0.1 (`port` 0: any free one); returns the port. */
  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  async close(): Promise<void> {
    for (const res of this.hanging.splice(0)) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The JSON bodies received. */
  bodies<T = Record<string, unknown>>(): T[] {
    return this.requests.map((r) => JSON.parse(r.body.toString('utf8')) as T);
  }
}
