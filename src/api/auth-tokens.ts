// /auth-tokens: create, verify and revoke JWTs, rotate the signing key, publish the public key.
import Router from '@koa/router';
import { caller } from '../http/auth.js';
import { readJson } from '../http/body.js';
import { DomainError } from '../core/errors.js';
import type { AppState } from '../http/state.js';
import { parseInstant } from '../core/time.js';
import type { Config } from '../config.js';
import type { Validator } from '../core/validation.js';
import { assertSuperadmin } from '../services/permissions.js';
import type { AuthService } from '../services/auth.js';
import type { TokenService } from '../services/tokens.js';
import type { UserService } from '../services/users.js';
import type { RateLimiter } from '../core/rate-limits.js';

interface CreateTokenBody {
  expiry?: string | number;
  username?: string;
}

export interface AuthTokensDeps {
  auth: AuthService;
  /** For anonymous verify calls: their budget is peeked before a signature is checked. */
  rateLimiter: Pick<RateLimiter, 'assertAnonymousAllowed'>;
  tokens: TokenService;
  users: UserService;
  validator: Validator;
  jwt: Config['jwt'];
}

export function authTokensRouter(s: AuthTokensDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/auth-tokens' });
  const { defaultExpiryMinutes, maxExpiryDays } = s.jwt;

  router.post('/create', async (ctx) => {
    const auth = caller(ctx);
    if (auth.method === 'token') throw DomainError.accessDenied('Access denied: a token cannot create tokens');
    const body = s.validator.validate<CreateTokenBody>('auth-token-create', (await readJson(ctx, { optional: true })) ?? {});
    const now = Date.now();
    const expiry = body.expiry === undefined ? now + defaultExpiryMinutes * 60_000 : parseInstant(body.expiry);
    if (expiry === undefined) throw DomainError.invalid('expiry', 'must be an ISO 8601 date with offset or epoch milliseconds');
    if (expiry <= now) throw DomainError.invalid('expiry', 'must be in the future');
    if (expiry > now + maxExpiryDays * 86_400_000) throw DomainError.invalid('expiry', `must be at most ${maxExpiryDays} days from now`);

    let subject = auth.user;
    if (body.username !== undefined && body.username !== auth.user.username) {
      assertSuperadmin(auth.user);
      const other = await s.users.findByUsername(body.username);
      if (!other) throw DomainError.invalid('username', 'User not found');
      subject = other;
    }
    ctx.status = 201;
    ctx.body = { token: await s.tokens.create(subject.username, subject.id, subject.tokenVersion, expiry), expiry: Math.floor(expiry / 1000) * 1000 };
  });

  router.post('/revoke', async (ctx) => {
    await s.users.revokeTokens(caller(ctx).user);
    ctx.status = 204;
  });

  router.post('/revoke/:username', async (ctx) => {
    assertSuperadmin(caller(ctx).user);
    const user = await s.users.findByUsername(ctx.params.username!);
    if (!user) throw DomainError.notFound('User not found');
    await s.users.revokeTokens(user);
    ctx.status = 204;
  });

  router.post('/reset-keys', async (ctx) => {
    assertSuperadmin(caller(ctx).user);
    await s.tokens.resetKeys();
    ctx.status = 204;
  });

  // Mango's rule: anyone may call it (AnonymousAccess); whoever holds a token may use it anyway.
  router.get('/verify', async (ctx) => {
    const token = ctx.query.token;
    if (typeof token !== 'string' || token === '') throw DomainError.badRequest('Query parameter token is required (once)');
    const anonymous = ctx.state.auth === undefined;
    ctx.body = await s.auth.verifyToken(token, anonymous ? () => s.rateLimiter.assertAnonymousAllowed(ctx.ip) : undefined);
  });

  router.get('/public-key', (ctx) => {
    ctx.body = s.tokens.publicJwk();
  });

  return router;
}
