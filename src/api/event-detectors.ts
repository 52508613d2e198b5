// /event-detectors: CRUD with RQL lists.
import Router from '@koa/router';
import type { AppState } from '../http/state.js';
import { eventDetectorView, type EventDetectorService } from '../services/event-detectors.js';
import { addCrudRoutes } from './crud.js';

export function eventDetectorsRouter(eventDetectors: EventDetectorService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/event-detectors' });
  addCrudRoutes(router, '/event-detectors', eventDetectors, eventDetectorView);
  return router;
}
