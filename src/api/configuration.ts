// /configuration: export (GET, ?include=kinds) and import (POST) of the whole configuration, superadmin only.
import Router from '@koa/router';
import { DomainError } from '../core/errors.js';
import { caller } from '../http/auth.js';
import { MiB, readJson } from '../http/body.js';
import { sendChunks } from '../http/stream.js';
import type { AppContext, AppState } from '../http/state.js';
import { CONFIGURATION_KINDS, type ConfigurationKind, type ConfigurationService } from '../services/configuration.js';
import type { Actor } from '../services/users.js';

/** A configuration of many thousand items still fits; anything larger is refused before it is read. */
const IMPORT_LIMIT = 32 * MiB;

function actor(ctx: AppContext): Actor {
  const { user, sessionIdHash } = caller(ctx);
  return { id: user.id, username: user.username, permissions: user.permissions, sessionIdHash };
}

/** ?include=dataSources,dataPoints: the kinds to export (all when absent); 400 naming a wrong one. */
function includeOf(ctx: AppContext): ConfigurationKind[] | undefined {
  for (const key of Object.keys(ctx.query)) if (key !== 'include') throw DomainError.badRequest(`Invalid query parameter ${key}: unknown parameter (include)`);
  const raw = ctx.query.include;
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) throw DomainError.badRequest('Invalid query parameter include: give it once, comma-separated');
  const kinds = raw.split(',').map((k) => k.trim()).filter((k) => k !== '');
  const unknown = kinds.filter((k) => !(CONFIGURATION_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0 || kinds.length === 0) {
    throw DomainError.badRequest(`Invalid query parameter include: ${unknown.length > 0 ? `unknown ${unknown.join(', ')}` : 'empty'}; choose from ${CONFIGURATION_KINDS.join(', ')}`);
  }
  return kinds as ConfigurationKind[];
}

export function configurationRouter(configuration: ConfigurationService): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/configuration' });

  router.get('/export', async (ctx) => {
    // Streamed: the first chunk (after the first list read) is computed before the answer starts.
    await sendChunks(ctx, 'application/json', configuration.export(actor(ctx), includeOf(ctx)));
  });

  router.post('/import', async (ctx) => {
    // envelope 3 (document, kind, item): each item nests as deep as on its own route, checked per item.
    ctx.body = await configuration.import(actor(ctx), await readJson(ctx, { limit: IMPORT_LIMIT, envelope: 3 }));
  });

  return router;
}
