// /data-points: CRUD with RQL lists.
import Router from '@koa/router';
import type { AppState } from '../http/state.js';
import { dataPointView, type DataPointService } from '../services/data-points.js';
import type { PointReliability } from '../values/live/reliability.js';
import { addCrudRoutes } from './crud.js';

export function dataPointsRouter(dataPoints: DataPointService, reliability: Pick<PointReliability, 'get'>): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/data-points' });
  addCrudRoutes(router, '/data-points', dataPoints, (p) => dataPointView(p, reliability.get(p.id)));
  return router;
}
