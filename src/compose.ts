// The composition root: builds the stores, services and runtime one running instance is made of
// (service.ts adds the app, server and WebSockets). Routers get only the services they use (app.ts).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { TrustedProxies } from './core/client-address.js';
import { RateLimiter } from './core/rate-limits.js';
import { Validator } from './core/validation.js';
import type { MetadataDb } from './store/metadata/db.js';
import { DataPointsRepository } from './store/metadata/data-points.js';
import { DataSourcesRepository } from './store/metadata/data-sources.js';
import { EventDetectorsRepository } from './store/metadata/event-detectors.js';
import { SessionsRepository } from './store/metadata/sessions.js';
import { SettingsRepository } from './store/metadata/settings.js';
import { UsersRepository } from './store/metadata/users.js';
import { openValueStore } from './store/values/open.js';
import { DataSourceRuntime } from './runtime/data-sources.js';
import { createModbusDriver } from './runtime/modbus.js';
import { createMqttDriver } from './runtime/mqtt.js';
import { createVirtualDriver } from './runtime/virtual.js';
import { DetectorRuntime } from './runtime/detectors.js';
import { EventsRepository } from './store/metadata/events.js';
import { LoginAddressesRepository } from './store/metadata/login-addresses.js';
import { JsonStoreRepository } from './store/metadata/json-store.js';
import { AuthService } from './services/auth.js';
import { DataPointService } from './services/data-points.js';
import { DataSourceService } from './services/data-sources.js';
import { EventDetectorService } from './services/event-detectors.js';
import { EventService } from './services/events.js';
import { JsonStoreService } from './services/json-store.js';
import { LoginThrottle } from './services/login-throttle.js';
import { PointValueService } from './services/point-values.js';
import { SessionService } from './services/sessions.js';
import { TokenService } from './services/tokens.js';
import { UserService } from './services/users.js';

export interface Services {
  config: Config;
  db: MetadataDb;
  validator: Validator;
  /** TRUST_PROXY: who the client is behind reverse proxies (HTTP and WebSocket alike). */
  proxies: TrustedProxies;
  rateLimiter: RateLimiter;
  /** Failed-login limits and the addresses each user logged in from lately. */
  loginThrottle: LoginThrottle;
  users: UserService;
  sessions: SessionService;
  tokens: TokenService;
  auth: AuthService;
  dataSources: DataSourceService;
  dataPoints: DataPointService;
  eventDetectors: EventDetectorService;
  pointValues: PointValueService;
  /** Runs the enabled data sources; started by the service once everything else is up. */
  runtime: DataSourceRuntime;
  /** Events (alarms): raised by detectors and sources, listed and acknowledged through the API. */
  events: EventService;
  /** JSON documents (dashboards, application state) with permissions. */
  jsonStore: JsonStoreService;
  /** Evaluates the event detectors of live points on every live value. */
  detectors: DetectorRuntime;
  /** Values written durably to the value store since start (the store's append hook counts them). */
  writes: { readonly values: number };
  /** Drains the write buffer and closes the stores. */
  close(): Promise<void>;
}

export async function createServices(config: Config, db: MetadataDb, log: Logger): Promise<Services> {
  const validator = new Validator();
  const proxies = new TrustedProxies(config.trustProxy);
  const rateLimiter = new RateLimiter(config.rateLimit);
  const loginThrottle = new LoginThrottle(rateLimiter, new LoginAddressesRepository(db), config.loginKnownAddressDays);
  const users = new UserService(new UsersRepository(db), validator);
  const sessions = new SessionService(new SessionsRepository(db), config.session);
  const settings = new SettingsRepository(db);
  // Who this installation is: a shared value store (QuestDB) records it as the owner of its table.
  const installation = await settings.putIfAbsent('installation.id', randomUUID());
  const tokens = new TokenService(settings);
  await tokens.init();
  const auth = new AuthService(config, users, sessions, tokens, loginThrottle);
  // A new password or new permissions end the user's other sessions and revoke its tokens.
  users.onCredentialsChanged({
    async credentialsChanged(user, keepSessionIdHash) {
      await sessions.endForUser(user.id, keepSessionIdHash);
      await users.revokeTokens(user);
    },
  });
  const dataSources = new DataSourceService(new DataSourcesRepository(db), validator);
  const dataPoints = new DataPointService(new DataPointsRepository(db), dataSources, validator);
  const eventDetectors = new EventDetectorService(new EventDetectorsRepository(db), dataPoints, validator);
  const writes = { values: 0 };
  const valueStore = await openValueStore(config, { log, onAppended: (n) => (writes.values += n) }, installation);
  const pointValues = new PointValueService(valueStore, dataPoints, dataSources, config.values);
  // Cached points must follow renames, permission changes and deletions (also of a whole source).
  dataPoints.onChange({ pointChanged: (p) => pointValues.forgetPoint(p) });
  dataSources.onChange({
    sourceSaved: () => undefined,
    async sourceDeleted(ds) {
      for (const p of await dataPoints.forSource(ds.id)) pointValues.forgetPoint(p);
    },
  });
  const events = new EventService(new EventsRepository(db), dataPoints, dataSources);
  const jsonStore = new JsonStoreService(new JsonStoreRepository(db), validator);
  const runtime = new DataSourceRuntime({
    sources: dataSources,
    points: dataPoints,
    values: pointValues,
    events,
    drivers: { VIRTUAL: createVirtualDriver, MODBUS_IP: createModbusDriver, MQTT_CLIENT: createMqttDriver },
    log,
  });
  // Saving a source (or one of its points) restarts it; the API answers once it has (re)started.
  dataSources.onChange({ sourceSaved: (ds) => runtime.sourceSaved(ds), sourceDeleted: (ds) => runtime.sourceDeleted(ds) });
  dataPoints.onChange({ pointChanged: (p) => runtime.pointChanged(p) });
  pointValues.setDeviceWriter((point, value) => runtime.write(point, value));
  const detectors = new DetectorRuntime({ events, detectors: eventDetectors, points: dataPoints, sources: dataSources, bus: pointValues.bus, log });
  await detectors.start();
  return {
    config,
    db,
    validator,
    proxies,
    rateLimiter,
    loginThrottle,
    users,
    sessions,
    tokens,
    auth,
    dataSources,
    dataPoints,
    eventDetectors,
    pointValues,
    runtime,
    events,
    jsonStore,
    detectors,
    writes,
    async close() {
      await detectors.stop();
      await runtime.stop();
      await pointValues.close();
      await valueStore.close();
    },
  };
}
