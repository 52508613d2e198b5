// A small HTTP client for tests: a cookie jar, the double-submit CSRF header, and JSON by default.
import { randomBytes } from 'node:crypto';

export interface Response<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Send X-XSRF-TOKEN on unsafe methods (default true). */
  csrf?: boolean;
}

export class ApiClient {
  readonly cookies = new Map<string, string>();
  authorization?: string;

  constructor(readonly baseUrl: string) {}

  /** A client-generated CSRF token, as the contract allows before the first request. */
  seedCsrf(): string {
    const token = randomBytes(24).toString('base64url');
    this.cookies.set('XSRF-TOKEN', token);
    return token;
  }

  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined || options.rawBody !== undefined) headers['content-type'] ??= 'application/json';
    const csrf = this.cookies.get('XSRF-TOKEN');
    if (csrf && options.csrf !== false && !['GET', 'HEAD', 'OPTIONS'].includes(method)) headers['x-xsrf-token'] ??= csrf;
    if (this.cookies.size > 0) headers.cookie ??= [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (this.authorization) headers.authorization ??= this.authorization;
    const res = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let body: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') body = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: body as T, text };
  }

  get<T = unknown>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = unknown>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, { ...options, body });
  }
  put<T = unknown>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, { ...options, body });
  }
  patch<T = unknown>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, { ...options, body });
  }
  delete<T = unknown>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  /** Logs in with a fresh client-generated CSRF token; throws unless the login succeeds. */
  async login(username: string, password: string): Promise<Response> {
    this.seedCsrf();
    const res = await this.post('/rest/latest/login', { username, password });
    if (res.status !== 200) throw new Error(`login as ${username} failed: ${res.status} ${res.text}`);
    return res;
  }

  useBearer(token: string): this {
    this.authorization = `Bearer ${token}`;
    return this;
  }

  useBasic(username: string, password: string): this {
    this.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    return this;
  }
}

/** Creates a user through the API as the given admin client; returns its username. */
export async function createUser(
  admin: ApiClient,
  username: string,
  password: string,
  extra: Record<string, unknown> = {},
): Promise<Response> {
  const res = await admin.post('/rest/latest/users', { username, password, email: `${username}@example.com`, permissions: ['user'], ...extra });
  if (res.status !== 201) throw new Error(`create user ${username} failed: ${res.status} ${res.text}`);
  return res;
}

/** A new client logged in as the given user. */
export async function loggedIn(baseUrl: string, username: string, password: string): Promise<ApiClient> {
  const client = new ApiClient(baseUrl);
  await client.login(username, password);
  return client;
}

export interface List<T> {
  items: T[];
  total: number;
}

/** GETs a list endpoint and checks the envelope: 200 and exactly {items, total}. */
export async function getList<T>(client: ApiClient, path: string): Promise<List<T>> {
  const res = await client.get<List<T>>(path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
  const keys = Object.keys(res.body as object).sort().join(',');
  if (keys !== 'items,total') throw new Error(`GET ${path}: envelope has keys ${keys}`);
  return res.body;
}

/** The two role users the resource suites share: viewer (role user) and operator (user, operators). */
export async function createRoleUsers(admin: ApiClient, password: string): Promise<{ viewer: ApiClient; operator: ApiClient }> {
  await createUser(admin, 'viewer', password, { permissions: ['user'] });
  await createUser(admin, 'operator', password, { permissions: ['user', 'operators'] });
  return { viewer: await loggedIn(admin.baseUrl, 'viewer', password), operator: await loggedIn(admin.baseUrl, 'operator', password) };
}
