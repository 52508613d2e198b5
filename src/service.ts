// One running instance: stores opened, services built, HTTP server listening; stop() undoes it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { attachWebSockets, DEFAULT_WEBSOCKET_OPTIONS, type WebSocketHub } from './api/websocket.js';
import { answerClientErrors } from './http/client-errors.js';
import { metricsFor } from './http/metrics.js';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { createServices, type Services } from './compose.js';
import { openMetadataDb } from './store/metadata/open.js';

export interface RunningService {
  server: Server;
  services: Services;
  /** The WebSocket endpoints (/rest/latest/websocket/...) on the same server. */
  websockets: WebSocketHub;
  port: number;
  url: string;
  stop(): Promise<void>;
}

const SESSION_PURGE_INTERVAL_MS = 15 * 60_000;

export async function startService(config: Config, baseLog: Logger = pino({ level: config.logLevel })): Promise<RunningService> {
  // Every line says which instance wrote it: behind a proxy the logs of several are read together.
  const log = baseLog.child({ instance: config.instanceName });
  const db = await openMetadataDb(config);
  let services: Services;
  try {
    services = await createServices(config, db, log);
    const admin = await services.users.ensureDefaultAdmin(config.adminPassword ?? 'admin');
    if (admin) {
      log.warn(
        config.adminPassword ? 'created user admin with ADMIN_PASSWORD' : 'created user admin with password "admin": change it now',
      );
    }
    const caseTwins = await services.users.assignUsernameKeys();
    if (caseTwins.length > 0) {
      log.warn({ usernames: caseTwins }, 'these users\' names differ from another user\'s only in case (made before usernames were unique ignoring case): they log in as before; rename them');
    }
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }

  const app = createApp(services, log);
  const server = createServer({ maxHeaderSize: config.http.maxHeaderBytes }, app.callback());
  answerClientErrors(server, config.http);
  // Node's 5 s default races clients that reuse a socket idle about that long (undici's idle timer has
  // 1 s resolution; proxies commonly keep 60 s): the request meets a closing socket. Idle sockets do not
  // count against headersTimeout.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 30_000;
  server.requestTimeout = 120_000;
  const websockets = attachWebSockets(server, services, log, { ...DEFAULT_WEBSOCKET_OPTIONS, maxJsonDepth: config.jsonMaxDepth });
  metricsFor(services, log).observeWebSockets(websockets);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  // Data sources start collecting once the API can be asked about them.
  await services.runtime.start();
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  log.info({ port, metadata: db.engine, values: config.values.engine }, 'instance started');

  const purge = setInterval(() => {
    services.sessions.purgeExpired().catch((err: unknown) => log.warn({ err }, 'session purge failed'));
    services.loginThrottle.purge().catch((err: unknown) => log.warn({ err }, 'known login address purge failed'));
  }, SESSION_PURGE_INTERVAL_MS);
  purge.unref();

  let stopping: Promise<void> | undefined;
  return {
    server,
    services,
    websockets,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    stop() {
      stopping ??= (async () => {
        clearInterval(purge);
        // Open sockets would keep server.close() waiting, and must not outlive the services.
        await websockets.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await services.close();
        await db.close();
      })();
      return stopping;
    },
  };
}
