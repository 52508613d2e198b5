// POST /login and /logout: session authentication with the double-submit CSRF rule.
import Router from '@koa/router';
import type { Context } from 'koa';
import { SESSION_COOKIE } from '../http/auth.js';
import { readJson } from '../http/body.js';
import { assertCsrf, CSRF_COOKIE, newCsrfToken } from '../http/csrf.js';
import type { AppState } from '../http/state.js';
import { hashSessionId, type SessionService } from '../services/sessions.js';
import type { Config } from '../config.js';
import type { Validator } from '../core/validation.js';
import type { AuthService } from '../services/auth.js';
import { userView, type UserService } from '../services/users.js';

interface LoginBody {
  username: string;
  password: string;
  newPassword?: string;
}

export interface LoginDeps {
  auth: AuthService;
  sessions: SessionService;
  users: UserService;
  validator: Validator;
  session: Config['session'];
}

export function loginRouter(s: LoginDeps): Router<AppState> {
  const router = new Router<AppState>();
  const { cookieSecure, maxDays } = s.session;
  const cookieOptions = { path: '/', sameSite: 'lax' as const, secure: cookieSecure, overwrite: true };

  function setCookies(ctx: Context, session: string | null, csrf: string | null): void {
    // Behind a TLS-terminating proxy Koa cannot see https itself; COOKIE_SECURE vouches for it.
    if (cookieSecure) ctx.cookies.secure = true;
    const maxAge = session === null ? undefined : maxDays * 86_400_000;
    ctx.cookies.set(SESSION_COOKIE, session, { ...cookieOptions, httpOnly: true, maxAge });
    ctx.cookies.set(CSRF_COOKIE, csrf, { ...cookieOptions, httpOnly: false, maxAge });
  }

  router.post('/login', async (ctx) => {
    assertCsrf(ctx);
    const body = s.validator.validate<LoginBody>('login', await readJson(ctx));
    const user = await s.auth.checkPassword(ctx.ip, body.username, body.password, body.newPassword);
    // Rotate: a session id known before login (fixation) never becomes an authenticated one.
    const previous = ctx.cookies.get(SESSION_COOKIE);
    if (previous) await s.sessions.endByHash(hashSessionId(previous));
    const session = await s.sessions.create(user.id);
    await s.users.recordLogin(user);
    setCookies(ctx, session, newCsrfToken());
    ctx.body = userView((await s.users.findById(user.id)) ?? user);
  });

  router.post('/logout', async (ctx) => {
    const auth = ctx.state.auth;
    // The CSRF middleware has already checked a session-authenticated logout.
    if (auth?.sessionIdHash) await s.sessions.endByHash(auth.sessionIdHash);
    setCookies(ctx, null, null);
    ctx.status = 204;
  });

  return router;
}
