// The few API calls the benchmarks need to set themselves up: log in, create a JWT.
import { randomBytes } from 'node:crypto';

export const ADMIN = { username: 'admin', password: 'admin' };

export interface LoggedIn {
  /** Cookie header value carrying DDS_SESSION and XSRF-TOKEN. */
  cookie: string;
  /** The XSRF-TOKEN the login set, for X-XSRF-TOKEN on later writes. */
  xsrf: string;
}

function cookiesFrom(res: Response): Map<string, string> {
  const jar = new Map<string, string>();
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const eq = pair!.indexOf('=');
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return jar;
}

/** Headers for POST /login with a client-generated double-submit CSRF token. */
export function loginHeaders(xsrf = randomBytes(24).toString('hex')): Record<string, string> {
  return { 'content-type': 'application/json', cookie: `XSRF-TOKEN=${xsrf}`, 'x-xsrf-token': xsrf };
}

export async function login(baseUrl: string, user = ADMIN): Promise<LoggedIn> {
  const res = await fetch(`${baseUrl}/rest/latest/login`, { method: 'POST', headers: loginHeaders(), body: JSON.stringify(user) });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
  const jar = cookiesFrom(res);
  const session = jar.get('DDS_SESSION');
  const xsrf = jar.get('XSRF-TOKEN');
  if (!session || !xsrf) throw new Error('login set no DDS_SESSION / XSRF-TOKEN cookie');
  return { cookie: `DDS_SESSION=${session}; XSRF-TOKEN=${xsrf}`, xsrf };
}

export async function createToken(baseUrl: string, session: LoggedIn, expiryMs = 3_600_000): Promise<string> {
  const res = await fetch(`${baseUrl}/rest/latest/auth-tokens/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: session.cookie, 'x-xsrf-token': session.xsrf },
    body: JSON.stringify({ expiry: Date.now() + expiryMs }),
  });
  if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}
