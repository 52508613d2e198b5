// The API's path prefixes: `/rest/latest`, and `/rest/v3`, the version segment of Mango 4/5 and of
// node-mango-client, which answers exactly as `/rest/latest` (API-DECISIONS "Mango clients").
// One function maps a request path to the canonical prefix, so routers, the public-path check and
// the WebSocket endpoints know one prefix only; answers that name a path use the prefix the client used.

export const API_PREFIX = '/rest/latest';

/** Prefixes served as aliases of API_PREFIX. `/rest/v1` and `/rest/v2` are not. */
export const API_ALIASES: readonly string[] = ['/rest/v3'];

export interface ApiPath {
  /** The path under API_PREFIX. */
  path: string;
  /** The prefix the client used (API_PREFIX or an alias), as written in the API (lower case). */
  prefix: string;
}

/**
 * The canonical path of an aliased API path (case-insensitive, as the routers match), or undefined
 * when the path is under no alias. Only the prefix changes; the rest is kept as given.
 */
export function canonicalApiPath(path: string): ApiPath | undefined {
  const lower = path.toLowerCase();
  for (const alias of API_ALIASES) {
    if (lower === alias || lower.startsWith(alias + '/')) return { path: API_PREFIX + path.slice(alias.length), prefix: alias };
  }
  return undefined;
}
