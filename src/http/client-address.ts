// Sets ctx.ip to the client's address by the TRUST_PROXY rule (core/client-address.ts), before any
// middleware that logs or limits by it. Koa's own proxy support stays off: it would take the leftmost
// X-Forwarded-For entry, which the client writes, and believe X-Forwarded-* from any peer.
import type { Context, Next } from 'koa';
import type { TrustedProxies } from '../core/client-address.js';

export function clientAddress(proxies: TrustedProxies) {
  return async function setClientAddress(ctx: Context, next: Next): Promise<void> {
    ctx.request.ip = proxies.clientAddress(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for'));
    await next();
  };
}
