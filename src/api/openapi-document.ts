// Builds the OpenAPI 3.1 document from the route catalogue (openapi-routes.ts) and the JSON Schemas
// of schemas/ (openapi-schemas.ts). Built once at start-up; nothing here is kept by hand twice.
import { MAX_LATEST_LIMIT } from '../services/point-values.js';
import { MAX_PERIODS, PERIOD_TYPES } from '../values/read/periods.js';
import { ROLLUPS } from '../values/read/statistics.js';
import { SESSION_COOKIE } from '../http/auth.js';
import { CSRF_COOKIE } from '../http/csrf.js';
import { loadComponentSchemas, type ComponentSchemas, type JsonObject } from './openapi-schemas.js';
import { ref, ROUTES, type Access, type ParamName, type RouteDoc } from './openapi-routes.js';

const INSTANT = 'ISO 8601 with offset (2024-01-01T00:00:00.000Z, +02:00) or epoch milliseconds';

const PARAMETERS: Record<ParamName, JsonObject> = {
  xid: { name: 'xid', in: 'path', required: true, schema: { type: 'string' }, description: 'XID of the resource' },
  xids: { name: 'xids', in: 'path', required: true, schema: { type: 'string' }, description: 'Comma-separated XIDs of data points', example: 'DP_a,DP_b' },
  username: { name: 'username', in: 'path', required: true, schema: { type: 'string' } },
  eventId: { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 }, description: 'Event id' },
  rollupPath: { name: 'rollup', in: 'path', required: true, schema: { enum: [...ROLLUPS] } },
  jsonPath: { name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'Dot path into jsonData, e.g. layout.widgets.0.title', example: 'layout.title' },
  tagKey: { name: 'key', in: 'path', required: true, schema: { type: 'string' }, description: 'Tag key (name and device: the point\'s name and device name)', example: 'site' },
  token: { name: 'token', in: 'query', required: true, schema: { type: 'string' }, description: 'The JWT to verify' },
  jsonDataName: { name: 'name', in: 'query', schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'The item\'s name: required to create, else kept when left out' },
  jsonDataReadPermission: { name: 'readPermission', in: 'query', schema: { type: 'string' }, description: 'Roles, comma-separated or repeated; empty: superadmin only. Left out: kept (new items: user)', example: 'user' },
  jsonDataEditPermission: { name: 'editPermission', in: 'query', schema: { type: 'string' }, description: 'Roles, comma-separated or repeated; empty: superadmin only. Left out: kept (new items: empty)', example: 'operators' },
  swaggerFile: { name: 'file', in: 'path', required: true, schema: { type: 'string' }, example: 'swagger-ui-bundle.js' },
  rql: {
    name: 'rql',
    in: 'query',
    required: false,
    description:
      'The whole query string is one RQL expression, not a rql=... parameter: e.g. ?eq(active,true)&sort(-activeTimestamp)&limit(10,0). ' +
      'Values are percent-encoded; match() takes * and ? wildcards.',
    style: 'form',
    explode: true,
    allowReserved: true,
    schema: { type: 'object', additionalProperties: { type: 'string' } },
    'x-rql': true,
  },
  from: { name: 'from', in: 'query', schema: { type: 'string' }, description: `Start, inclusive: ${INSTANT}. Default: to − 24 h.`, example: '2024-01-01T00:00:00.000Z' },
  to: { name: 'to', in: 'query', schema: { type: 'string' }, description: `End, exclusive: ${INSTANT}. Default: now.`, example: '2024-01-02T00:00:00.000Z' },
  limit: { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 }, description: 'Most values (raw reads); limit(N) in RQL form also works' },
  latestLimit: { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_LATEST_LIMIT, default: 1 } },
  rollup: { name: 'rollup', in: 'query', schema: { enum: [...ROLLUPS] }, description: 'NONE (default): raw values; POINT_DEFAULT: the point\'s rollup' },
  timePeriodType: { name: 'timePeriodType', in: 'query', schema: { enum: [...PERIOD_TYPES] }, description: 'Without it the whole range is one period' },
  timePeriods: { name: 'timePeriods', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_PERIODS, default: 1 } },
  timezone: { name: 'timezone', in: 'query', schema: { type: 'string', default: 'UTC' }, description: 'IANA zone for period boundaries (DAYS and longer step by the calendar)', example: 'Europe/Berlin' },
  format: {
    name: 'format',
    in: 'query',
    schema: { enum: ['json', 'csv', 'arrow', 'parquet'] },
    description: 'The answer\'s form; overrides Accept (application/json, text/csv, application/vnd.apache.arrow.stream, application/vnd.apache.parquet). An Accept naming none of them is a 406.',
  },
  truncate: { name: 'truncate', in: 'query', schema: { type: 'boolean', default: false }, description: 'Move from down and to up to period boundaries first' },
  dateTimeFormat: {
    name: 'dateTimeFormat',
    in: 'query',
    schema: { type: 'string' },
    description: 'Timestamps (JSON and CSV) as text instead of epoch ms: ISO (ISO 8601 with milliseconds and the offset of timezone, Z for UTC) or a Java DateTimeFormatter pattern',
    example: 'ISO',
  },
  header: { name: 'header', in: 'query', schema: { type: 'string', enum: ['xid', 'name'], default: 'xid' }, description: 'CSV value column headers: the XID, or name (unit) of the point' },
  deleteFrom: { name: 'from', in: 'query', required: true, schema: { type: 'string' }, description: `Start, inclusive: ${INSTANT}` },
  deleteTo: { name: 'to', in: 'query', required: true, schema: { type: 'string' }, description: `End, exclusive: ${INSTANT}` },
  enabled: { name: 'enabled', in: 'query', schema: { type: 'boolean' }, description: 'true enables, false disables (or the body\'s enabled)' },
  copyXid: { name: 'copyXid', in: 'query', schema: { type: 'string' }, description: "The copy's XID (default: generated)" },
  copyName: { name: 'copyName', in: 'query', schema: { type: 'string' }, description: "The copy's name (default: the source's name and \" Copy\")" },
  copyDeviceName: { name: 'copyDeviceName', in: 'query', schema: { type: 'string' }, description: 'Device name of the copied points (default: each keeps its own)' },
  copyEnabled: { name: 'enabled', in: 'query', schema: { type: 'boolean', default: false }, description: 'Whether the copy runs' },
  nodeId: { name: 'nodeId', in: 'query', schema: { type: 'string', default: 'ns=0;i=85' }, description: 'OPC UA node id whose children to list (default: the Objects folder)', example: 'ns=2;s=Tag1' },
  copyPoints: { name: 'copyPoints', in: 'query', schema: { type: 'boolean', default: false }, description: "Copy the source's points too" },
  waitMs: { name: 'waitMs', in: 'query', schema: { type: 'integer', minimum: 100, maximum: 10000, default: 2000 }, description: 'How long to wait for I-Am answers (ms)' },
  restart: { name: 'restart', in: 'query', schema: { type: 'boolean', default: false }, description: 'With enabled=true: start the point again even when it runs. Empty means false.' },
  include: { name: 'include', in: 'query', schema: { type: 'string' }, description: 'Comma-separated kinds to export: dataSources, dataPoints, eventDetectors, eventHandlers, users, jsonStore. Default: all.', example: 'dataSources,dataPoints' },
};

const ERROR_RESPONSES: Record<number, [name: string, description: string]> = {
  400: ['BadRequest', 'Malformed JSON or a body that is not UTF-8, wrong Content-Type, bad query parameter or RQL, a path or query with malformed percent-encoding, U+0000 or an unpaired surrogate (4001, 4005, 4012, 4013)'],
  401: ['Unauthorized', 'No, invalid or expired credentials (4008-4011)'],
  403: ['Forbidden', 'Missing permission or invalid CSRF token (4004)'],
  404: ['NotFound', 'No such resource (serviceStatusCode -1)'],
  406: ['NotAcceptable', 'Accept names none of the forms the read answers (4005)'],
  409: ['Conflict', 'XID or username already in use (4003)'],
  413: ['PayloadTooLarge', 'Body over 1 MiB (bulk point values: 16 MiB) (4005)'],
  422: ['ValidationFailed', 'Valid JSON that fails validation; result.messages names each field (4002)'],
  429: ['TooManyRequests', 'Rate limit exceeded (4006 per IP, 4007 per user)'],
  500: ['InternalError', 'Unexpected error (5000)'],
  502: ['BadGateway', 'The device refused or did not answer the write (5000)'],
  503: ['ServiceUnavailable', 'The service is stopping'],
};

function errorResponses(): JsonObject {
  const out: JsonObject = {};
  for (const [status, [name, description]] of Object.entries(ERROR_RESPONSES)) {
    const response: JsonObject = { description, content: { 'application/json': { schema: ref(status === '422' ? 'validation-error' : 'error') } } };
    if (status === '429') response.headers = { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } };
    out[name] = response;
  }
  return out;
}

const SECURITY_SCHEMES: JsonObject = {
  session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'Session from POST /rest/latest/login' },
  xsrf: {
    type: 'apiKey',
    in: 'header',
    name: 'X-XSRF-TOKEN',
    description: `Double submit: equal to the ${CSRF_COOKIE} cookie. Needed on POST/PUT/PATCH/DELETE with a session, and on login.`,
  },
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Token from POST /rest/latest/auth-tokens/create' },
  basic: { type: 'http', scheme: 'basic', description: 'Only when BASIC_AUTH_ENABLED=true' },
};

function security(access: Access, method: string): JsonObject[] {
  const session: JsonObject = method === 'get' ? { session: [] } : { session: [], xsrf: [] };
  const callers = [session, { bearer: [] }, { basic: [] }];
  if (access === 'public') return method === 'get' ? [{}] : [{}, ...callers];
  if (access === 'login') return [{ xsrf: [] }];
  if (access === 'metrics') return [...callers, {}];
  return callers;
}

/** Errors every route of its kind can answer, plus the route's own. */
function errorStatuses(route: RouteDoc): number[] {
  const statuses = new Set(route.errors ?? []);
  statuses.add(400); // any path or query string may hold text the service refuses (http/url-text.ts)
  if (route.body) [413, 422].forEach((s) => statuses.add(s));
  if (route.access !== 'public') [401, 429].forEach((s) => statuses.add(s));
  if (route.access === 'user' && route.method !== 'get') statuses.add(403); // CSRF
  if (route.access === 'public') statuses.add(429); // anonymous requests are rate limited per IP
  statuses.add(500);
  return [...statuses].sort((a, b) => a - b);
}

function operation(route: RouteDoc, schemas: ComponentSchemas): JsonObject {
  const responses: JsonObject = {};
  for (const s of route.success) {
    const r: JsonObject = { description: s.description };
    if (s.content) r.content = Object.fromEntries(Object.entries(s.content).map(([type, schema]) => [type, { schema }]));
    if (s.headers) r.headers = Object.fromEntries(Object.entries(s.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]));
    responses[String(s.status)] = r;
  }
  for (const status of errorStatuses(route)) {
    const known = ERROR_RESPONSES[status];
    if (!known) throw new Error(`${route.method} ${route.path}: no shared response for ${status}`);
    responses[String(status)] = { $ref: `#/components/responses/${known[0]}` };
  }
  const op: JsonObject = {
    operationId: operationId(route),
    tags: [route.tag],
    summary: route.summary,
    security: security(route.access, route.method),
    responses,
  };
  if (route.description) op.description = route.description;
  if (route.params?.length) op.parameters = route.params.map((p) => ({ $ref: `#/components/parameters/${p}` }));
  if (route.body) {
    if (!schemas.schemas[route.body.schema]) throw new Error(`${route.method} ${route.path}: body schema ${route.body.schema} is not in schemas/`);
    op.requestBody = { required: route.body.required, content: { 'application/json': { schema: ref(route.body.schema) } } };
  }
  return op;
}

/** get /rest/latest/users/{username} → getUsersUsername: stable, unique, readable in client generators. */
function operationId(route: RouteDoc): string {
  const words = route.path
    .replace(/^\/rest\/latest/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '');
  const index = route.path.length > 1 && route.path.endsWith('/') ? 'Index' : ''; // /swagger-ui/ beside /swagger-ui
  return route.method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') + index;
}

export interface DocumentOptions {
  version: string;
  routes?: readonly RouteDoc[];
  schemas?: ComponentSchemas;
}

export function buildOpenApiDocument(options: DocumentOptions): JsonObject {
  const schemas = options.schemas ?? loadComponentSchemas();
  const paths: Record<string, JsonObject> = {};
  const seen = new Set<string>();
  for (const route of options.routes ?? ROUTES) {
    const op = operation(route, schemas);
    if (seen.has(op.operationId as string)) throw new Error(`duplicate operation ${route.method} ${route.path}`);
    seen.add(op.operationId as string);
    (paths[route.path] ??= {})[route.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Device-data service',
      version: options.version,
      description:
        'Data points, data sources, point values (history, rollups, set), events, users, JWTs and the JSON store. API paths are under /rest/latest; ' +
        'errors share one body (components/schemas/error). Timestamps in bodies are epoch milliseconds.',
    },
    servers: [{ url: '/' }],
    security: security('user', 'get'),
    paths,
    components: {
      schemas: schemas.schemas,
      parameters: PARAMETERS,
      responses: errorResponses(),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
