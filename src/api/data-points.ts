// /data-points: CRUD with RQL lists.
import Router from '@koa/router';
import type { AppState } from '../http/state.js';
import { dataPointView } from '../services/data-points.js';
import type { Services } from '../services/index.js';
import { addCrudRoutes } from './crud.js';

export function dataPointsRouter(s: Services): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/data-points' });
  addCrudRoutes(router, '/data-points', s.dataPoints, dataPointView);
  return router;
}
