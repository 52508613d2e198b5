// The composition root: builds the stores, services and runtime one running instance is made of
// (service.ts adds the app, server and WebSockets). Routers get only the services they use (app.ts).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { TrustedProxies } from './core/client-address.js';
import { RateLimiter } from './core/rate-limits.js';
import { Validator } from './core/validation.js';
import type { MetadataDb, Queryable } from './store/metadata/db.js';
import { DataPointsRepository } from './store/metadata/data-points.js';
import { DataPointTagsRepository } from './store/metadata/data-point-tags.js';
import { DataSourcesRepository } from './store/metadata/data-sources.js';
import { EventDetectorsRepository } from './store/metadata/event-detectors.js';
import { SessionsRepository } from './store/metadata/sessions.js';
import { SettingsRepository } from './store/metadata/settings.js';
import { UsersRepository } from './store/metadata/users.js';
import { openValueStore } from './store/values/open.js';
import { openCluster, type Cluster } from './store/cluster/index.js';
import { ClusterLink } from './services/cluster.js';
import { DataSourceRuntime } from './runtime/data-sources.js';
import { createModbusDriver } from './runtime/modbus.js';
import { createMqttDriver } from './runtime/mqtt.js';
import { browseNodes, opcuaDriverFactory } from './runtime/opcua.js';
import { createSparkplugDriver } from './runtime/sparkplug.js';
import { createBacnetDriver, discoverBacnet } from './runtime/bacnet.js';
import { createPassiveDriver } from './runtime/passive.js';
import { createVirtualDriver } from './runtime/virtual.js';
import { createMetaDriver } from './runtime/meta.js';
import { DetectorRuntime } from './runtime/detectors.js';
import { runDetectorsOnOneInstance } from './runtime/detector-leader.js';
import { registerChangeListeners } from './change-listeners.js';
import { deviceWriterAcross } from './runtime/device-writes.js';
import { EventsRepository } from './store/metadata/events.js';
import { EventCommentsRepository } from './store/metadata/event-comments.js';
import { DeliveriesRepository, DeliveryCounts, EventHandlersRepository, HandlerJobsRepository, HandlerJobsSql } from './store/metadata/event-handlers.js';
import { EventHandlerService } from './services/event-handlers.js';
import type { HandlerKind } from './services/handler-kinds.js';
import { WebhookKind } from './services/handler-webhook.js';
import { emailHandlerKind } from './services/handler-email.js';
import { setPointHandlerKind } from './services/handler-set-point.js';
import { DEFAULT_JOB_TIMINGS, HandlerJobWorker } from './runtime/handler-jobs.js';
import { LoginAddressesRepository } from './store/metadata/login-addresses.js';
import { JsonStoreRepository } from './store/metadata/json-store.js';
import { IntervalLoggingRepository } from './store/metadata/interval-logging.js';
import { AuthService } from './services/auth.js';
import { DataPointService } from './services/data-points.js';
import { LineProtocolService } from './services/line-protocol.js';
import { DataPointTagsService } from './services/data-point-tags.js';
import { DataSourceService } from './services/data-sources.js';
import { EventDetectorService } from './services/event-detectors.js';
import { EventService, eventView, type EventStores } from './services/events.js';
import { JsonStoreService } from './services/json-store.js';
import { JsonDataService } from './services/json-data.js';
import { LoginThrottle } from './services/login-throttle.js';
import { PointValueService } from './services/point-values.js';
import { RetentionService } from './services/retention.js';
import { ConfigurationService } from './services/configuration.js';
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
  /** Mango's /data-point-tags: tag keys and values over the readable points, one point's tags. */
  dataPointTags: DataPointTagsService;
  lineProtocol: LineProtocolService;
  eventDetectors: EventDetectorService;
  pointValues: PointValueService;
  /** Runs the enabled data sources; started by the service once everything else is up. */
  runtime: DataSourceRuntime;
  /** Events (alarms): raised by detectors and sources, listed and acknowledged through the API. */
  events: EventService;
  /** /event-handlers (superadmin) and their deliveries. */
  eventHandlers: EventHandlerService;
  /** Carries out the handlers' jobs (every instance; each job once in the cluster). */
  handlerJobs: HandlerJobWorker;
  /** Deliveries recorded here since start, by handler type and outcome (metrics). */
  deliveryCounts: DeliveryCounts;
  /** Export and import of the whole configuration (superadmin). */
  configuration: ConfigurationService;
  /** Purges history by the points' retention, daily and on request. */
  retention: RetentionService;
  /** JSON documents (dashboards, application state) with permissions. */
  jsonStore: JsonStoreService;
  /** Mango's /json-data over the same items: the document as the body, dot-path writes. */
  jsonData: JsonDataService;
  /** Evaluates the event detectors of live points on every live value. */
  detectors: DetectorRuntime;
  /** The channel to the other instances and the leases (alone on PGlite: nothing shared). */
  cluster: Cluster;
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
  // Instances on one PostgreSQL share the installation: they hear each other and share the leases.
  const cluster = await openCluster(config, installation, log);
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
  // OPC UA's application certificate and trusted servers (created on first use).
  const opcua = { pkiDir: join(config.dataDir, 'opcua-pki') };
  dataSources.setBrowser((settings, nodeId) => browseNodes(settings, nodeId, opcua));
  const dataPoints = new DataPointService(new DataPointsRepository(db), dataSources, validator);
  const eventDetectors = new EventDetectorService(new EventDetectorsRepository(db), dataPoints, validator);
  const writes = { values: 0 };
  // Instances sharing a QuestDB table write it in turns (each keeps the hourly tails it wrote).
  const writerLock = config.values.engine === 'questdb' ? cluster.writerLock(`questdb:${config.values.questdbTable}`) : undefined;
  const valueStore = await openValueStore(config, { log, onAppended: (n) => (writes.values += n) }, {
    installation,
    ...(writerLock ? { writerTurn: () => writerLock.acquire() } : {}),
  }).catch(async (err: unknown) => {
    // Refused (a QuestDB table of another installation) or unreachable: leave the installation now.
    await cluster.close();
    throw err;
  });
  // Alone (PGlite metadata: no other instance), only this instance changes points: none is refreshed.
  const pointValues = new PointValueService(valueStore, dataPoints, dataSources, { ...config.values, alone: !cluster.channel.shared });
  await pointValues.startLogging(new IntervalLoggingRepository(db), (err) => log.warn({ err }, 'interval logging failed'));
  // The first read of each point after a start then finds it cached; in the background, not awaited.
  void pointValues.warmPointCache().catch((err: unknown) => log.debug({ err }, 'warming the point cache stopped'));
  const deliveries = new DeliveriesRepository(db);
  const retention = new RetentionService({
    points: dataPoints,
    store: valueStore,
    pointValues,
    settings,
    defaultRetention: config.historyRetention,
    validator,
    log,
    deliveries: { store: deliveries, retention: config.eventHandlers.deliveryRetention },
  });
  retention.start();
  // Each event change inserts its handlers' jobs in its own statement (store/metadata/event-handlers.ts),
  // also inside the transaction of an acknowledgement with a comment.
  const deliveryCounts = new DeliveryCounts();
  const handlerJobsSql = new HandlerJobsSql(config.eventHandlers.maxPending, deliveryCounts);
  const eventStores = (q: Queryable): EventStores => ({ events: new EventsRepository(q, handlerJobsSql), comments: new EventCommentsRepository(q) });
  const events = new EventService(eventStores(db).events, dataPoints, dataSources, new EventCommentsRepository(db), (fn) => db.transaction((tx) => fn(eventStores(tx))));
  // The handler types this instance knows; a handlerType without one is a 422 at save.
  const handlerKinds: HandlerKind[] = [
    new WebhookKind({ allowedHosts: config.webhookAllowedHosts }),
    emailHandlerKind({ mail: config.mail, publicUrl: config.publicUrl, users, detectors: eventDetectors, points: dataPoints, values: pointValues, log }),
    // Sets as the handler's owner through the user's set path (the device writer is set on pointValues below).
    setPointHandlerKind({ users, values: pointValues }),
  ];
  const eventDetectorsRepo = new EventDetectorsRepository(db);
  const eventHandlers = new EventHandlerService(new EventHandlersRepository(db), deliveries, handlerKinds, validator, {
    detectorExists: async (xid) => (await eventDetectorsRepo.findOne('xid', xid)) !== undefined,
    sourceExists: async (xid) => (await dataSources.findByXid(xid)) !== undefined,
  });
  const handlerJobs = new HandlerJobWorker({
    instance: config.instanceName,
    jobs: new HandlerJobsRepository(db),
    handler: (id) => eventHandlers.definition(id),
    kind: (type) => eventHandlers.kind(type),
    async event(id) {
      const record = await events.findById(id);
      return record && { record, view: eventView(record) };
    },
    log,
    counts: deliveryCounts,
    options: { ...DEFAULT_JOB_TIMINGS, concurrency: config.eventHandlers.concurrency, pollMs: config.eventHandlers.pollMs, retryFirstMs: config.eventHandlers.retryFirstMs },
  });
  // An event changed here (its jobs are stored) or elsewhere (another instance stored them): claim now.
  events.subscribe((action) => action !== 'COMMENT_ADDED' && handlerJobs.nudge());
  handlerJobs.start();
  const jsonStore = new JsonStoreService(new JsonStoreRepository(db), validator, config.jsonMaxDepth);
  const { leases, channel } = cluster;
  const runtime = new DataSourceRuntime({
    instance: config.instanceName,
    leases: {
      shared: leases.shared,
      tryAcquire: (id) => leases.tryAcquire('source', id),
      async release(id) {
        await leases.release('source', id);
        // The others take it over now, not at their next sweep (a SIGTERM hands sources over).
        channel.tell('source-free', JSON.stringify({ id, from: config.instanceName }));
      },
      onLost: (listener) => leases.onLost(listener),
    },
    sources: dataSources,
    points: dataPoints,
    values: pointValues,
    reliability: pointValues.reliability,
    events,
    drivers: { VIRTUAL: createVirtualDriver, MODBUS_IP: createModbusDriver, MQTT_CLIENT: (ctx) => (ctx.source.settings.payloadFormat === 'SPARKPLUG_B' ? createSparkplugDriver(ctx) : createMqttDriver(ctx)), LINE_PROTOCOL: createPassiveDriver, BACNET_IP: createBacnetDriver,
      OPC_UA: opcuaDriverFactory(opcua),
      META: createMetaDriver({
        points: (xids) => dataPoints.findManyByXid(xids),
        bus: pointValues.bus,
        newest: async (p) => (await pointValues.latest(p, 1))[0],
        windowStatistic: (p, from, to, field) => pointValues.windowStatistic(p, from, to, field),
        onStored: (listener) => pointValues.onStored(listener),
      }),
    },
    log,
  });
  // A set value goes to the device through the instance that runs its source (device-writes.ts).
  pointValues.setDeviceWriter(deviceWriterAcross(cluster.channel, runtime, log));
  dataSources.setDiscoverer((ds, waitMs) => discoverBacnet(ds, waitMs));
  const detectors = new DetectorRuntime({ events, points: dataPoints, sources: dataSources, bus: pointValues.bus, log });
  const link = new ClusterLink(channel, {
    pointValues,
    users,
    sessions,
    tokens,
    events,
    pointChanged: (id, oldXid) => void detectors.pointChangedElsewhere(id, oldXid),
    pointsChanged: (ids) => void detectors.pointsChangedElsewhere(ids),
  }, log);
  const sourceChanged = (id: number) => channel.tell('source', String(id));
  const detectorChanged = (d: { id: number }) => channel.tell('detector', String(d.id));
  registerChangeListeners(
    { points: dataPoints, sources: dataSources, detectors: eventDetectors, events },
    {
      // Cached points must follow renames, permission changes and deletions (also of a whole source).
      caches: {
        points: { pointChanged: (p) => pointValues.forgetPoint(p) },
        sources: {
          sourceSaved: () => undefined,
          async sourceDeleted(ds) {
            for (const p of await dataPoints.forSource(ds.id)) pointValues.forgetPoint(p);
          },
        },
      },
      // Saving a source (or one of its points) restarts it; the API answers once it has (re)started.
      runtime: {
        points: {
          pointChanged: (p) => runtime.pointChanged(p),
          // An import: each source restarts once (a saved one has already).
          pointsChanged: (ps, savedSources) => runtime.pointsChanged(ps.filter((p) => !savedSources.has(p.dataSourceId))),
        },
        sources: { sourceSaved: (ds) => runtime.sourceSaved(ds), sourceDeleted: (ds) => runtime.sourceDeleted(ds) },
      },
      // Changes made here reach the other instances: their caches, their sources' runs, their detectors.
      cluster: {
        points: {
          pointChanged(p) {
            link.pointChanged(p);
            sourceChanged(p.dataSourceId);
          },
          pointsChanged(ps, savedSources) {
            link.pointsChanged(ps);
            for (const id of new Set(ps.map((p) => p.dataSourceId))) if (!savedSources.has(id)) sourceChanged(id);
          },
        },
        sources: {
          sourceSaved: (ds) => sourceChanged(ds.id),
          async sourceDeleted(ds) {
            for (const p of await dataPoints.forSource(ds.id)) link.pointChanged(p);
            sourceChanged(ds.id);
          },
        },
        detectors: {
          detectorCreated: detectorChanged,
          detectorUpdated: detectorChanged,
          detectorDeleted: detectorChanged,
          detectorsSaved(saved) {
            for (let i = 0; i < saved.length; i += DETECTORS_PART) channel.tell('detectors', JSON.stringify(saved.slice(i, i + DETECTORS_PART).map((d) => d.saved.id)));
          },
        },
      },
      detectors: detectors.changeListeners(),
    },
  );
  channel.subscribe('source', (body) => {
    const id = Number(body);
    events.forgetPermissions();
    void runtime.sourceChangedElsewhere(id);
    void detectors.sourceChangedElsewhere(id);
  });
  channel.subscribe('source-free', (body) => {
    const { id, from } = sourceFree(body);
    runtime.sourceReleasedElsewhere(id, from);
  });
  channel.subscribe('detector', (body) => void detectors.detectorChangedElsewhere(Number(body)));
  channel.subscribe('detectors', (body) => void detectors.detectorsChangedElsewhere(JSON.parse(body) as number[]));
  const leader = await runDetectorsOnOneInstance(
    detectors,
    {
      shared: leases.shared,
      tryAcquire: () => leases.tryAcquire('detectors', 0),
      release: () => leases.release('detectors', 0),
      onLost: (listener) => leases.onLost(listener),
    },
    log,
  );
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
    dataPointTags: new DataPointTagsService(new DataPointTagsRepository(db), dataPoints, validator),
    lineProtocol: new LineProtocolService(dataSources, dataPoints, pointValues),
    eventDetectors,
    pointValues,
    runtime,
    events,
    eventHandlers,
    handlerJobs,
    deliveryCounts,
    jsonStore,
    jsonData: new JsonDataService(jsonStore),
    configuration: new ConfigurationService({ db, validator, jsonMaxDepth: config.jsonMaxDepth, sources: dataSources, points: dataPoints, detectors: eventDetectors, eventHandlers, users, jsonStore }),
    retention,
    detectors,
    writes,
    cluster,
    async close() {
      await handlerJobs.stop();
      for (const kind of handlerKinds) await kind.close?.();
      await retention.stop();
      await leader.stop();
      await runtime.stop();
      link.close();
      await pointValues.close();
      await valueStore.close();
      await cluster.close();
    },
  };
}

/** Detector ids per `detectors` message (an import's), well under a NOTIFY payload. */
const DETECTORS_PART = 500;

/** A source-free message: the source's id and the instance that let it go (a bare id from older versions). */
function sourceFree(body: string): { id?: number; from?: string } {
  try {
    const m = JSON.parse(body) as unknown;
    if (typeof m === 'number') return { id: m };
    if (m && typeof m === 'object') {
      const { id, from } = m as Record<string, unknown>;
      return { ...(typeof id === 'number' ? { id } : {}), ...(typeof from === 'string' ? { from } : {}) };
    }
  } catch {
    // not ours to judge: the sweep runs anyway
  }
  return {};
}
