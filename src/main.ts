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

const log = pino({ level: config.logLevel });
const service = await startService(config, log).catch((err: unknown) => {
  // A server named by a setting that cannot be reached or refuses us is a configuration error too.
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  log.fatal({ err }, 'start-up failed');
  process.exit(1);
});
log.info({ url: service.url, metadata: service.services.db.engine }, 'listening');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
