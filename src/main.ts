// Entry point: read the config, start the service, stop cleanly on SIGINT/SIGTERM.
import pino from 'pino';
import { ConfigError, loadConfig, type Config } from './config.js';
import { startService } from './service.js';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  throw err;
}

// Written asynchronously: a synchronous write per log line (one per request) held the event loop for a
// measurable share of every request. Lines written while one write is in flight go out together.
const logDestination = pino.destination({ dest: 1, sync: false });
const log = pino({ level: config.logLevel }, logDestination);

/** Exits once the log lines still buffered are written. */
function exit(code: number): never {
  try {
    logDestination.flushSync();
  } catch {
    // not open yet, or stdout gone: nothing more can be written anyway
  }
  process.exit(code);
}
const service = await startService(config, log).catch((err: unknown) => {
  // A server named by a setting that cannot be reached or refuses us is a configuration error too.
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  log.fatal({ err }, 'start-up failed');
  exit(1);
});
log.info({ url: service.url, metadata: service.services.db.engine }, 'listening');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => exit(1), 15_000);
    force.unref();
    service.stop().then(
      () => exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  });
}
