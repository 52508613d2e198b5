// /events: RQL lists, one event, acknowledging one (optionally with a comment) or every match of an
// RQL query, and comments on an event.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { DomainError } from '../core/errors.js';
import type { Validator } from '../core/validation.js';
import { readJson, refuseBody } from '../http/body.js';
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

export function eventsRouter(events: EventService, validator: Validator): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/events' });

  router.get('/', async (ctx) => {
    const { total, batches } = await events.list(caller(ctx).user, ctx.querystring);
    await sendList(ctx, total, batches, eventView);
  });

  router.post('/acknowledge', async (ctx) => {
    await refuseBody(ctx, ACKNOWLEDGE_SELECTS_BY_RQL);
    ctx.body = { count: await events.acknowledgeMany(caller(ctx).user, ctx.querystring) };
  });

  router.put('/acknowledge/:id', async (ctx) => {
    const id = eventId(ctx.params.id);
    // No body, JSON null or {}: no comment (clients that always send a body send one of these).
    const body = validator.validate<{ comment?: string }>('event-acknowledge', (await readJson(ctx, { optional: true })) ?? {});
    ctx.body = eventView(await events.acknowledge(caller(ctx).user, id, body.comment));
  });

  router.post('/:id/comments', async (ctx) => {
    const id = eventId(ctx.params.id);
    const body = validator.validate<{ text: string }>('event-comment', await readJson(ctx));
    ctx.status = 201;
    ctx.body = eventView(await events.addComment(caller(ctx).user, id, body.text));
  });

  router.get('/:id', async (ctx) => {
    ctx.body = eventView(await events.get(caller(ctx).user, eventId(ctx.params.id)));
  });

  return router;
}
