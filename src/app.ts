// The Koa application: the whole middleware order on one screen.
import Router from '@koa/router';
import Koa from 'koa';
import serve from 'koa-static';
import { existsSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { authTokensRouter } from './api/auth-tokens.js';
import { dataPointTagsRouter } from './api/data-point-tags.js';
import { lineProtocolRouter } from './api/line-protocol.js';
import { dataPointsRouter } from './api/data-points.js';
import { dataSourcesRouter } from './api/data-sources.js';
import { eventDetectorsRouter } from './api/event-detectors.js';
import { eventHandlersRouter } from './api/event-handlers.js';
import { eventsRouter } from './api/events.js';
import { grafanaRouter } from './api/grafana.js';
import { jsonDataRouter } from './api/json-data.js';
import { jsonStoreRouter } from './api/json-store.js';
import { configurationRouter } from './api/configuration.js';
import { pointValuesRouter } from './api/point-values.js';
import { healthRouter } from './api/health.js';
import { loginRouter } from './api/login.js';
import { metricsRouter } from './api/metrics.js';
import { openApiRouter } from './api/openapi.js';
import { rqlRequests } from './api/openapi-routes.js';
import { swaggerUiRouter } from './api/swagger-ui.js';
import { usersRouter } from './api/users.js';
import { API_PREFIX, identify, requireAuthentication } from './http/auth.js';
import { apiAlias } from './http/api-alias.js';
import { jsonDepth } from './http/body.js';
import { clientAddress } from './http/client-address.js';
import { csrfMiddleware } from './http/csrf.js';
import { answerLateFailures, errorMiddleware } from './http/errors.js';
import { metricsFor } from './http/metrics.js';
import { rateLimit } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { noSniff, pageHeaders } from './http/security-headers.js';
import { urlText } from './http/url-text.js';
import type { AppState } from './http/state.js';
import { projectRoot } from './paths.js';
import type { Services } from './compose.js';

export function createApp(s: Services, log: Logger): Koa<AppState> {
  // Koa's proxy support stays off: clientAddress applies TRUST_PROXY (core/client-address.ts).
  const app = new Koa<AppState>({ proxy: false });
  // Errors are rendered and logged by errorMiddleware, and those after the chain (a broken body
  // stream) by the handler this installs in Koa's place.
  answerLateFailures(app, log);

  app.use(clientAddress(s.proxies)); // ctx.ip by TRUST_PROXY, for everything below
  app.use(requestLog(log)); // outside everything that answers, so it logs the status the client finally gets
  app.use(noSniff); // on every answer, errors included
  const metrics = metricsFor(s, log);
  app.use(metrics.middleware()); // outside errorMiddleware: counts the status the client gets
  app.use(errorMiddleware(log)); // every failure becomes the contract's error body
  app.use(apiAlias); // /rest/v3 is /rest/latest: everything below sees one prefix
  app.use(urlText(rqlRequests())); // 400 for a path or query that is not storable text, before any work
  app.use(jsonDepth(s.config.jsonMaxDepth)); // JSON_MAX_DEPTH, for every body reader below
  app.use(identify(s.auth, s.config.basicAuthEnabled, s.rateLimiter)); // session cookie | Bearer JWT | Basic
  app.use(rateLimit(s.rateLimiter)); // per user when authenticated, else per IP
  const metricsEndpoint = metricsRouter(metrics, s.config.metricsPublic);
  app.use(metricsEndpoint.routes()); // before requireAuthentication: METRICS_PUBLIC decides who may scrape
  app.use(metricsEndpoint.allowedMethods());
  app.use(requireAuthentication); // anonymous only on public paths
  app.use(csrfMiddleware); // double-submit check for session-authenticated writes

  const api = new Router<AppState>({ prefix: API_PREFIX });
  const { config } = s;
  const resources = [
    loginRouter({ auth: s.auth, sessions: s.sessions, users: s.users, validator: s.validator, session: config.session }),
    usersRouter(s.users),
    authTokensRouter({ auth: s.auth, rateLimiter: s.rateLimiter, tokens: s.tokens, users: s.users, validator: s.validator, jwt: config.jwt }),
    dataSourcesRouter(s.dataSources, s.configuration),
    dataPointsRouter(s.dataPoints, s.pointValues.reliability),
    dataPointTagsRouter(s.dataPointTags),
    lineProtocolRouter(s.lineProtocol),
    eventDetectorsRouter(s.eventDetectors),
    eventsRouter(s.events, s.validator),
    eventHandlersRouter(s.eventHandlers),
    pointValuesRouter(s.pointValues, s.retention, config.pointValueReads, s.validator),
    grafanaRouter(s.pointValues, s.dataPoints, s.dataPointTags, s.validator, config.pointValueReads),
    jsonStoreRouter(s.jsonStore),
    jsonDataRouter(s.jsonData),
    configurationRouter(s.configuration),
  ];
  for (const router of resources) {
    api.use(router.routes());
  }
  const root = healthRouter({ metadata: s.db, values: s.pointValues });
  for (const router of [root, api]) {
    app.use(router.routes());
    app.use(router.allowedMethods()); // 405 with Allow; errorMiddleware renders the body
  }
  for (const router of [openApiRouter(), swaggerUiRouter()]) {
    app.use(router.routes()); // public: openapi.json in isPublic, /swagger-ui/ outside /rest
    app.use(router.allowedMethods());
  }
  app.use(webConsole()); // last: the console's files at `/` never shadow /rest or /health
  return app;
}

/** The web console's build (scripts/build-web.mjs from web/). */
export const WEB_CONSOLE_DIR = join(projectRoot, 'dist', 'web');

// Only the console's own files: scripts and styles from 'self' (uPlot styles through the CSSOM,
// which style-src does not restrict), API calls and WebSockets to the same origin, never framed.
const CONSOLE_HEADERS: Record<string, string> = {
  ...pageHeaders("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'"),
  'Cache-Control': 'no-cache', // file names carry no hash: revalidate (Last-Modified) every time
};

const NOT_BUILT_PAGE =
  '<!doctype html><html lang="en"><meta charset="utf-8"><title>Console not built</title>' +
  '<h1>The web console is not built</h1><p>Run <code>npm run build:web</code> (or <code>npm start</code>, which builds it), then reload.</p>' +
  '<p>The REST API under <code>/rest/latest</code> works without it.</p></html>';

/** GET/HEAD of the console's static files outside /rest; `/` without a build answers 503 with a hint. */
export function webConsole(dir = WEB_CONSOLE_DIR): Koa.Middleware<AppState> {
  const files = serve(dir, {
    index: 'index.html',
    setHeaders: (res: ServerResponse) => {
      for (const [name, value] of Object.entries(CONSOLE_HEADERS)) res.setHeader(name, value);
    },
  });
  return async (ctx, next) => {
    const path = ctx.path.toLowerCase();
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || path === API_PREFIX || path.startsWith(API_PREFIX + '/')) return next();
    if ((path === '/' || path === '/index.html') && !existsSync(join(dir, 'index.html'))) {
      ctx.status = 503;
      ctx.set(CONSOLE_HEADERS);
      ctx.type = 'html';
      ctx.body = NOT_BUILT_PAGE;
      return;
    }
    await files(ctx, next);
  };
}
