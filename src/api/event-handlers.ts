// /event-handlers: CRUD with RQL lists (superadmin), and each handler's deliveries.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { sendList } from '../http/list.js';
import type { AppState } from '../http/state.js';
import { deliveryView, type EventHandlerService } from '../services/event-handlers.js';
import { addCrudRoutes } from './crud.js';

export function eventHandlersRouter(eventHandlers: EventHandlerService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/event-handlers' });
  router.get('/:xid/deliveries', async (ctx) => {
    const { total, batches } = await eventHandlers.deliveries(caller(ctx).user, ctx.params.xid!, ctx.querystring);
    await sendList(ctx, total, batches, deliveryView);
  });
  addCrudRoutes(router, '/event-handlers', eventHandlers, (h) => eventHandlers.view(h));
  return router;
}
