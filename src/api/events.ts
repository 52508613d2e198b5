// /events: RQL lists, one event, and acknowledging one or every match of an RQL query.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { DomainError } from '../core/errors.js';
import { refuseBody } from '../http/body.js';
import { sendList } from '../http/list.js';
import type { AppState } from '../http/state.js';
import { eventView, type EventService } from '../services/events.js';

/** An event id from the path: a positive integer, else no such event (404). */
function eventId(raw: string | undefined): number {
  const id = raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!(id > 0)) throw DomainError.notFound('Event not found');
  return id;
}

// A body is refused rather than ignored: {"ids": [7]} once acknowledged every readable event.
const ACKNOWLEDGE_SELECTS_BY_RQL =
  'POST /events/acknowledge selects events by its RQL query only, e.g. /events/acknowledge?in(id,7,8): send no request body';

export function eventsRouter(events: EventService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/events' });

  router.get('/', async (ctx) => {
    const { total, batches } = await events.list(caller(ctx).user, ctx.querystring);
    sendList(ctx, total, batches, eventView);
  });

  router.post('/acknowledge', async (ctx) => {
    await refuseBody(ctx, ACKNOWLEDGE_SELECTS_BY_RQL);
    ctx.body = { count: await events.acknowledgeMany(caller(ctx).user, ctx.querystring) };
  });

  router.put('/acknowledge/:id', async (ctx) => {
    ctx.body = eventView(await events.acknowledge(caller(ctx).user, eventId(ctx.params.id)));
  });

  router.get('/:id', async (ctx) => {
    ctx.body = eventView(await events.get(caller(ctx).user, eventId(ctx.params.id)));
  });

  return router;
}
