// Line-protocol ingest for InfluxDB clients and Telegraf: POST /write (1.x: ?db=<source xid>) and
// POST /api/v2/write (2.x: ?bucket=<source xid>, org ignored), with ?precision. The body is read as
// bytes (16 MiB as sent; gzip allowed, 64 MiB once inflated) and handed to services/line-protocol.ts;
// 204 once the values are durable and readable. Error bodies carry InfluxDB's fields beside ours
// (http/errors.ts). 1.x's `u`/`p` query credentials are refused: a password in a URL ends up in logs.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import Router from '@koa/router';
import getRawBody from 'raw-body';
import { caller } from '../http/auth.js';
import { MiB } from '../http/body.js';
import { DomainError } from '../core/errors.js';
import { isPrecision, PRECISIONS, type Precision } from '../core/line-protocol.js';
import type { AppContext, AppState } from '../http/state.js';
import type { LineProtocolService } from '../services/line-protocol.js';
import { singleQuery } from './query-params.js';

export const LINE_PROTOCOL_LIMIT = 16 * MiB;
export const LINE_PROTOCOL_INFLATED_LIMIT = 64 * MiB;

const inflate = promisify(gunzip);

async function readBody(ctx: AppContext): Promise<Buffer> {
  const declared = Number(ctx.get('content-length'));
  let bytes: Buffer;
  try {
    bytes = await getRawBody(ctx.req, { limit: LINE_PROTOCOL_LIMIT, length: Number.isFinite(declared) && ctx.get('content-length') !== '' ? declared : undefined });
  } catch (err) {
    if ((err as { type?: unknown }).type === 'entity.too.large') throw DomainError.tooLarge(`Request body too large (the limit is ${LINE_PROTOCOL_LIMIT / MiB} MiB as sent)`);
    throw DomainError.badRequest('Could not read the request body');
  }
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return bytes;
  if (encoding !== 'gzip') throw new DomainError('bad-request', `Unsupported Content-Encoding ${encoding}: gzip or none`);
  try {
    return await inflate(bytes, { maxOutputLength: LINE_PROTOCOL_INFLATED_LIMIT });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw DomainError.tooLarge(`Request body too large (the limit is ${LINE_PROTOCOL_INFLATED_LIMIT / MiB} MiB once inflated)`);
    throw DomainError.badRequest('The body is not valid gzip');
  }
}

function precisionOf(ctx: AppContext): Precision {
  const text = singleQuery(ctx, 'precision');
  if (text === undefined || text === '') return 'ns';
  if (!isPrecision(text)) throw DomainError.badRequest(`Invalid query parameter precision: must be one of ${PRECISIONS.join(', ')}`);
  return text;
}

function target(ctx: AppContext, name: 'db' | 'bucket'): string {
  if (ctx.query.u !== undefined || ctx.query.p !== undefined) {
    throw DomainError.badRequest('Credentials in the query (u, p) are not accepted: send Authorization: Token <jwt>, Bearer <jwt> or Basic');
  }
  const xid = singleQuery(ctx, name);
  if (xid === undefined || xid === '') throw DomainError.badRequest(`Invalid query parameter ${name}: required, the XID of a LINE_PROTOCOL data source`);
  return xid;
}

export function lineProtocolRouter(lines: LineProtocolService): Router<AppState> {
  const router = new Router<AppState>();
  const write = async (ctx: AppContext, name: 'db' | 'bucket') => {
    const user = caller(ctx).user;
    const xid = target(ctx, name);
    const precision = precisionOf(ctx);
    await lines.write(user, xid, await readBody(ctx), precision);
    ctx.status = 204;
  };
  router.post('/write', (ctx) => write(ctx, 'db'));
  router.post('/api/v2/write', (ctx) => write(ctx, 'bucket'));
  return router;
}
