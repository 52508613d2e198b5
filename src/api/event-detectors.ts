// /event-detectors: CRUD with RQL lists.
import Router from '@koa/router';
import type { AppState } from '../http/state.js';
import { eventDetectorView } from '../services/event-detectors.js';
import type { Services } from '../services/index.js';
import { addCrudRoutes } from './crud.js';

export function eventDetectorsRouter(s: Services): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/event-detectors' });
  addCrudRoutes(router, '/event-detectors', s.eventDetectors, eventDetectorView);
  return router;
}
