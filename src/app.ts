// The Koa application: the whole middleware order on one screen.
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import { authTokensRouter } from './api/auth-tokens.js';
import { dataPointsRouter } from './api/data-points.js';
import { dataSourcesRouter } from './api/data-sources.js';
import { eventDetectorsRouter } from './api/event-detectors.js';
import { eventsRouter } from './api/events.js';
import { pointValuesRouter } from './api/point-values.js';
import { healthRouter } from './api/health.js';
import { loginRouter } from './api/login.js';
import { usersRouter } from './api/users.js';
import { API_PREFIX, identify, requireAuthentication } from './http/auth.js';
import { csrfMiddleware } from './http/csrf.js';
import { errorMiddleware } from './http/errors.js';
import { requestLog } from './http/request-log.js';
import type { AppState } from './http/state.js';
import type { Services } from './services/index.js';

export function createApp(s: Services, log: Logger): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: s.config.trustProxy });
  app.silent = true; // errors are rendered and logged by errorMiddleware

  app.use(requestLog(log)); // outermost, so it logs the status the client finally gets
  app.use(errorMiddleware(log)); // every failure becomes the contract's error body
  app.use(identify(s.auth, s.config.basicAuthEnabled)); // session cookie | Bearer JWT | Basic
  app.use(s.rateLimiter.middleware()); // per user when authenticated, else per IP
  app.use(requireAuthentication); // anonymous only on public paths
  app.use(csrfMiddleware); // double-submit check for session-authenticated writes

  const api = new Router<AppState>({ prefix: API_PREFIX });
  const resources = [loginRouter(s), usersRouter(s), authTokensRouter(s), dataSourcesRouter(s), dataPointsRouter(s), eventDetectorsRouter(s), eventsRouter(s), pointValuesRouter(s)];
  for (const router of resources) {
    api.use(router.routes());
  }
  const root = healthRouter(s);
  for (const router of [root, api]) {
    app.use(router.routes());
    app.use(router.allowedMethods()); // 405 with Allow; errorMiddleware renders the body
  }
  return app;
}
