// The route catalogue of the OpenAPI document: every endpoint the service serves, with its
// parameters, body schema ($id of a file in schemas/) and responses. test/openapi.test.ts checks
// it against the routes the Koa routers register, so a new route without an entry fails a test.
import { API_PREFIX } from '../http/auth.js';
import type { JsonObject } from './openapi-schemas.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call: `public` (anyone), `user` (any authenticated caller; unsafe methods with a session
 * also need the CSRF header), `login` (anonymous, CSRF double submit), `metrics` (superadmin, or
 * anyone with METRICS_PUBLIC=true).
 */
export type Access = 'public' | 'user' | 'login' | 'metrics';

/** Names of the shared parameters (components.parameters, built in openapi-document.ts). */
export type ParamName =
  | 'xid'
  | 'xids'
  | 'username'
  | 'eventId'
  | 'rollupPath'
  | 'swaggerFile'
  | 'jsonPath'
  | 'tagKey'
  | 'token'
  | 'jsonDataName'
  | 'jsonDataReadPermission'
  | 'jsonDataEditPermission'
  | 'rql'
  | 'from'
  | 'to'
  | 'limit'
  | 'latestLimit'
  | 'rollup'
  | 'timePeriodType'
  | 'timePeriods'
  | 'timezone'
  | 'truncate'
  | 'dateTimeFormat'
  | 'header'
  | 'format'
  | 'deleteFrom'
  | 'deleteTo'
  | 'include'
  | 'enabled'
  | 'restart'
  | 'copyXid'
  | 'copyName'
  | 'copyDeviceName'
  | 'copyEnabled'
  | 'copyPoints'
  | 'nodeId'
  | 'waitMs';

/** Media type → schema of a response body. */
export type Content = Record<string, JsonObject>;

export interface SuccessDoc {
  status: number;
  description: string;
  content?: Content;
  /** Response headers: name → description. */
  headers?: Record<string, string>;
}

export interface RouteDoc {
  method: HttpMethod;
  /** Path from the server root, OpenAPI style: /rest/latest/users/{username}. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  params?: ParamName[];
  /** Request body: the $id of a schema in schemas/ (or schemas/responses/ for bodies checked in code). */
  body?: { schema: string; required: boolean; description?: string };
  success: SuccessDoc[];
  /** Error statuses beyond those every route of its kind has (see openapi-document.ts). */
  errors?: number[];
}

export const API = API_PREFIX;

export const ref = (id: string): JsonObject => ({ $ref: `#/components/schemas/${id}` });
const arrayOf = (id: string): JsonObject => ({ type: 'array', items: ref(id) });
const listOf = (id: string): JsonObject => ({
  type: 'object',
  required: ['items', 'total'],
  properties: { items: arrayOf(id), total: { type: 'integer', minimum: 0, description: 'All matches, ignoring limit()' } },
});
const json = (schema: JsonObject): Content => ({ 'application/json': schema });
const DISCOVERED_DEVICES: JsonObject = {
  type: 'object',
  properties: {
    devices: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          deviceInstance: { type: 'integer' },
          address: { type: 'string', description: 'host or host:port, for the source\'s address' },
          vendorId: { type: 'integer' },
          name: { type: ['string', 'null'] },
          objects: {
            type: 'array',
            items: { type: 'object', properties: { objectType: { type: 'string' }, objectInstance: { type: 'integer' }, name: { type: ['string', 'null'] } } },
          },
        },
      },
    },
  },
};
const STRINGS: JsonObject = { type: 'array', items: { type: 'string' } };

/** Mango's /json-data writes: the item's fields in the query. */
const JSON_DATA_FIELDS: ParamName[] = ['jsonDataName', 'jsonDataReadPermission', 'jsonDataEditPermission'];
const JSON_DATA_NOTE =
  'The body is the document itself (any JSON, kept exactly). The query gives the item\'s name and permissions; left out, they are kept. ' +
  'Same items, permissions and limits as /json-store: the item at most 1 MiB (413), JSON_MAX_DEPTH levels (422). A write that meets another one on the same item is made again on the new document (409 after 10 tries).';
const JSON_DATA_MERGE_NOTE =
  'Into an object the body (an object) sets each of its members; onto an array the body is appended; into anything else a 400. The item and the path must exist; needs edit permission.';

const CSV: JsonObject = { type: 'string', description: 'timestamp,value[,annotation] rows (ALL: one column per statistic), streamed' };
/** The several-points CSV form: one table. */
const MANY_CSV_NOTE =
  'With Accept: text/csv, one table: a timestamp column, then one column per point named by its XID (ALL: <xid>.<statistic> columns), one row per distinct timestamp (per period for a rollup), empty cells where a point has no value.';

/** Arrow and Parquet answers of the value reads (api/point-value-columns.ts). */
const TABLE_NOTE =
  'Columns: xid (several points: dictionary-encoded, first), timestamp (ms, UTC), value (float64, bool, int32 or utf8 by data type; ALL: one column per statistic, count int32), annotation (raw values). Streamed in record batches (Parquet: row groups).';
const TABLES: Content = {
  'application/vnd.apache.arrow.stream': { type: 'string', contentEncoding: 'binary', description: `Arrow IPC stream. ${TABLE_NOTE}` },
  'application/vnd.apache.parquet': { type: 'string', contentEncoding: 'binary', description: `Parquet file. ${TABLE_NOTE}` },
};

/** Value reads answer JSON or, with Accept: text/csv, CSV, or Arrow and Parquet (Accept or ?format=). */
const jsonOrCsv = (schema: JsonObject): Content => ({ 'application/json': schema, 'text/csv': CSV, ...TABLES });
const valuesOrRollups: JsonObject = { type: 'array', items: { anyOf: [ref('point-value'), ref('rollup-value')] } };

const ok = (description: string, content?: Content): SuccessDoc => ({ status: 200, description, content });
const created = (what: string, id: string): SuccessDoc => ({
  status: 201,
  description: `${what} created`,
  content: json(ref(id)),
  headers: { Location: `URL of the new ${what.toLowerCase()}` },
});
const noContent = (description: string): SuccessDoc => ({ status: 204, description });

const RQL_NOTE =
  'The query string is an RQL expression (eq, ne, gt, lt, ge, le, match, in, or, sort, limit; terms joined with &). ' +
  'No limit() means the first 1000 items; limit() above 100000 is a 400.';

const PATCH_NOTE =
  'Mango\'s partial update: the fields given replace the stored ones, the rest are kept; the result is checked exactly as a PUT of the whole resource (same validation, same permissions). ' +
  'Shallow, as Mango: a nested object given (pointLocator, loggingProperties, tags, purgePeriod) replaces the stored one whole.';

/** List, read, create, update and delete of an XID-named resource (api/crud.ts); `patch`: PATCH too. */
function crud(tag: string, base: string, noun: string, body: string, view: string, rqlProperties: string, patch = false): RouteDoc[] {
  const path = `${API}/${base}`;
  const patchDoc: RouteDoc = { method: 'patch', path: `${path}/{xid}`, tag, summary: `Update some fields of a ${noun}`, description: PATCH_NOTE, access: 'user', params: ['xid'], body: { schema: 'patch', required: true }, success: [ok(`The stored ${noun}`, json(ref(view)))], errors: [403, 404, 409] };
  return [
    { method: 'get', path, tag, summary: `List ${noun}s`, description: `${RQL_NOTE} Properties: ${rqlProperties}.`, access: 'user', params: ['rql'], success: [ok(`The ${noun}s the caller may read`, json(listOf(view)))], errors: [400] },
    { method: 'get', path: `${path}/{xid}`, tag, summary: `Get a ${noun}`, access: 'user', params: ['xid'], success: [ok(`The ${noun}`, json(ref(view)))], errors: [403, 404] },
    { method: 'post', path, tag, summary: `Create a ${noun}`, description: 'A missing xid is generated. An existing xid is a 409.', access: 'user', body: { schema: body, required: true }, success: [created(noun[0]!.toUpperCase() + noun.slice(1), view)], errors: [403, 404, 409] },
    { method: 'put', path: `${path}/{xid}`, tag, summary: `Replace a ${noun}`, description: 'PUT takes the whole resource; a write-only field left out keeps its value.', access: 'user', params: ['xid'], body: { schema: body, required: true }, success: [ok(`The stored ${noun}`, json(ref(view)))], errors: [403, 404, 409] },
    ...(patch ? [patchDoc] : []),
    { method: 'delete', path: `${path}/{xid}`, tag, summary: `Delete a ${noun}`, access: 'user', params: ['xid'], success: [ok(`The deleted ${noun}`, json(ref(view)))], errors: [403, 404] },
  ];
}

const READ_PARAMS: ParamName[] = ['from', 'to', 'limit', 'rollup', 'timePeriodType', 'timePeriods', 'timezone', 'truncate', 'dateTimeFormat', 'header', 'format'];
const READ_NOTE =
  'from inclusive, to exclusive; to defaults to now, from to 24 h before to. With rollup (other than NONE), one value per period of ' +
  'timePeriods × timePeriodType (the whole range without timePeriodType). Non-numeric points allow only NONE, FIRST, LAST, START, COUNT, ALL. ' +
  'A request may ask for at most ROLLUP_MAX_PERIODS periods (default 200,000) over all its points together; more is a 400 naming ' +
  'timePeriodType and timePeriods, before any point is read. Accept: text/csv answers CSV (text cells that start like a formula get a leading \').';

const MANGO_NOTE =
  'Mango 4/5\'s query by POST (node-mango-client\'s pointValues.latest and forTimePeriod), answered in Mango\'s shapes: each value carries the body\'s fields ' +
  '(default TIMESTAMP, VALUE; members without a value left out), timestamps as epoch ms or by dateTimeFormat (a Java DateTimeFormatter pattern: ' +
  'y u M L d D E Q q a H k h K m s S A X x Z O VV z and quoted text; or ISO) in timezone (default UTC). Fields this service cannot give: none refused, ' +
  'CACHED is false on time-period reads and left out on latest ones, RENDERED is the value as text with the point\'s unit (no text renderers here). ' +
  'simplifyTolerance, simplifyTarget and useCache are accepted and ignored; before is refused (422). Unknown body fields are ignored; a known field ' +
  'with a bad value, more XIDs than POINT_VALUES_MAX_XIDS, more rollup periods × points than ROLLUP_MAX_PERIODS (a limit counts), or a rollup a ' +
  'point\'s type cannot have is a 422 naming the field, before any value is read. An unknown or unreadable XID fails the whole request (404/403). ' +
  'Streamed; Accept: text/csv answers a table.';
const MANGO_TIME_NOTE =
  'from inclusive, to exclusive (ISO 8601 with offset or epoch ms; to defaults to now, from to 24 h before to); limit caps each point\'s values (or periods) and a single array\'s rows. ' +
  'Raw values take bookend (the value in force at from unless one is there, and at to, marked bookend: true where virtual). A rollup (the path\'s, else the body\'s, case ignored) ' +
  'gives one value per period of timePeriod {periods, type} (the whole range without it), truncate as the GET forms.';
const MANGO_SINGLE_NOTE =
  'A single array: the points\' sorted streams merged by timestamp, one row per distinct timestamp (a period start for rollups) with each point that has a value then under its XID; ' +
  'rollups stamp FIRST and LAST with their value\'s time, as Mango does. CSV: timestamp, then <xid> and <xid>.<field> columns (ALL: <xid>.<statistic>), empty where a point has no value.';
const MANGO_MULTIPLE_CSV = 'CSV: timestamp, value (ALL: a column per statistic) and the other fields, each point\'s rows in turn (the XID field says whose).';

/** Mango's POST point-value queries (api/point-values-mango.ts). */
function mangoQueries(): RouteDoc[] {
  const body = { schema: 'point-values-query', required: true };
  const arrays: Content = { 'application/json': { type: 'object', additionalProperties: arrayOf('mango-point-value') }, 'text/csv': CSV, ...TABLES };
  const rows: Content = { 'application/json': arrayOf('mango-point-value-row'), 'text/csv': CSV, ...TABLES };
  const base = { tag: 'Point values', access: 'user' as const, body, params: ['format'] as ParamName[], errors: [400, 403, 404, 406] };
  const timePeriod = (single: boolean, rollup: boolean): RouteDoc => ({
    ...base,
    method: 'post',
    path: `${API}/point-values/${single ? 'single-array' : 'multiple-arrays'}/time-period${rollup ? '/{rollup}' : ''}`,
    summary: `Values${rollup ? ' rolled up' : ' or rollups'} of several points in a time period, ${single ? 'as one array of rows' : 'XID → array'} (Mango)`,
    description: `${MANGO_NOTE} ${MANGO_TIME_NOTE} ${single ? MANGO_SINGLE_NOTE : MANGO_MULTIPLE_CSV}${rollup ? ' Rollups Mango has and this service does not (ACCUMULATOR, FFT, *_IN_PERIOD) are a 400.' : ''}`,
    params: rollup ? ['rollupPath', 'format'] : ['format'],
    success: [ok(single ? 'Rows, oldest first' : 'XID → values, oldest first', single ? rows : arrays)],
  });
  return [
    { ...base, method: 'post', path: `${API}/point-values/multiple-arrays/latest`, summary: 'Latest values of several points, XID → array newest first (Mango)', description: `${MANGO_NOTE} limit: values per point, 1 to 10,000 (default 1). ${MANGO_MULTIPLE_CSV}`, success: [ok('XID → values, newest first', arrays)] },
    { ...base, method: 'post', path: `${API}/point-values/single-array/latest`, summary: 'Latest values of several points as one array of rows, newest first (Mango)', description: `${MANGO_NOTE} limit: rows, 1 to 10,000 (default 1); limit × points at most ROLLUP_MAX_PERIODS (the values are held at once). ${MANGO_SINGLE_NOTE}`, success: [ok('Rows, newest first', rows)] },
    timePeriod(false, false),
    timePeriod(false, true),
    timePeriod(true, false),
    timePeriod(true, true),
  ];
}

const GRAFANA_NOTE =
  'Grafana\'s JSON datasource contract (plugin simpod-json-datasource; its openapi.yaml), with Basic or Bearer authentication (no CSRF header: those are not session requests). ' +
  'Unknown body fields are ignored.';
const GRAFANA_QUERY_NOTE =
  'Each target names a point by XID (Grafana\'s regex form of a multi-value variable, (a|b), names several), answered as one time series {target, datapoints: [[value, ms], ...]} per point, ' +
  'named "<device> - <name>"; an ALPHANUMERIC point\'s FIRST, LAST or START values are text, answered as a table {type: "table", columns, rows: [[ms, text], ...]}. ' +
  'A target\'s payload may name rollup (any but NONE and ALL; default: the point\'s own unless NONE, else AVERAGE for NUMERIC and LAST for other types) and timePeriod ("15 MINUTES"; ' +
  'default: the shortest of 1 s, 10 s, 1 min, 5 min, 15 min, 1 h, 6 h, 1 day, 1 week giving at most maxDataPoints periods, default 1,000). Periods start on the step\'s boundaries in timezone ' +
  '(an IANA zone; browser, utc or none: UTC), the first one at or before range.from; periods without a value are left out; BINARY values are 1 and 0. ' +
  'filters (ad hoc: =, !=, =~, !~ anchored, <, >) on point tags, name and device included, leave out the points that do not match. An unknown or unreadable point fails the query (404/403); ' +
  'more than POINT_VALUES_MAX_XIDS points or ROLLUP_MAX_PERIODS periods over all targets is a 422.';
const GRAFANA_SERIES: JsonObject = {
  type: 'array',
  items: {
    anyOf: [
      { type: 'object', required: ['target', 'datapoints'], properties: { target: { type: 'string' }, refId: { type: 'string' }, datapoints: { type: 'array', items: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'integer' }], minItems: 2, maxItems: 2 } } } },
      { type: 'object', required: ['type', 'columns', 'rows'], properties: { type: { const: 'table' }, refId: { type: 'string' }, columns: { type: 'array', items: { type: 'object', properties: { text: { type: 'string' }, type: { type: 'string' } } } }, rows: { type: 'array', items: { type: 'array' } } } },
    ],
  },
};
const LABELLED: JsonObject = { type: 'array', items: { type: 'object', required: ['value'], properties: { label: { type: 'string' }, value: { type: 'string' } } } };

/** Grafana's JSON datasource (api/grafana.ts). */
function grafanaRoutes(): RouteDoc[] {
  const base = { tag: 'Grafana', access: 'user' as const };
  const path = `${API}/grafana`;
  return [
    { ...base, method: 'get', path, summary: 'Connection test (Grafana\'s Save & test)', description: `${GRAFANA_NOTE} 200 once the credentials are good.`, success: [ok('The caller', json({ type: 'object', properties: { status: { const: 'OK' }, username: { type: 'string' } } }))] },
    {
      ...base,
      method: 'post',
      path: `${path}/metrics`,
      summary: 'The points the caller may read, as metrics',
      description: `${GRAFANA_NOTE} value is the XID, label "<device> - <name>"; at most 10,000 points, by device name, name and XID (the contract has no paging; a target may name any readable XID). Each offers the payloads rollup (a select, options from /metric-payload-options) and timePeriod.`,
      body: { schema: 'grafana-metrics', required: false },
      success: [ok('Metrics', json({ type: 'array', items: { type: 'object', required: ['value', 'payloads'], properties: { label: { type: 'string' }, value: { type: 'string' }, payloads: { type: 'array', items: { type: 'object' } } } } }))],
    },
    { ...base, method: 'post', path: `${path}/metric-payload-options`, summary: 'Options of a metric\'s payload: the rollups its point allows, or the periods', description: GRAFANA_NOTE, body: { schema: 'grafana-metric-payload-options', required: true }, success: [ok('Options', json(LABELLED))], errors: [403, 404] },
    { ...base, method: 'post', path: `${path}/query`, summary: 'Rolled-up time series of points', description: `${GRAFANA_NOTE} ${GRAFANA_QUERY_NOTE}`, body: { schema: 'grafana-query', required: true }, success: [ok('A series per point, in target order', json(GRAFANA_SERIES))], errors: [403, 404] },
    {
      ...base,
      method: 'post',
      path: `${path}/variable`,
      summary: 'Points for a query variable',
      description: `${GRAFANA_NOTE} payload.target is an RQL query over data points as /data-points takes it (empty: the first 1000 readable points); each point as __text "<device> - <name>" and __value its XID (also text and value).`,
      body: { schema: 'grafana-variable', required: true },
      success: [ok('Variable values', json({ type: 'array', items: { type: 'object', required: ['__text', '__value'], properties: { __text: { type: 'string' }, __value: { type: 'string' }, text: { type: 'string' }, value: { type: 'string' } } } }))],
    },
    { ...base, method: 'post', path: `${path}/tag-keys`, summary: 'Tag keys of the readable points, for ad hoc filters', description: `${GRAFANA_NOTE} name and device included, code-point order, at most 100,000.`, body: { schema: 'grafana-tag-keys', required: false }, success: [ok('Keys', json({ type: 'array', items: { type: 'object', properties: { type: { const: 'string' }, text: { type: 'string' } } } }))] },
    { ...base, method: 'post', path: `${path}/tag-values`, summary: 'Values of a tag over the readable points, for ad hoc filters', description: `${GRAFANA_NOTE} Code-point order, at most 100,000.`, body: { schema: 'grafana-tag-values', required: true }, success: [ok('Values', json({ type: 'array', items: { type: 'object', properties: { text: { type: 'string' } } } }))] },
  ];
}

const WEBSOCKET_NOTE =
  'A WebSocket upgrade (GET with Upgrade: websocket), authenticated at the handshake by the session cookie or an Authorization header; ' +
  'refused with the error body (401 without valid credentials, 403 for a session cookie from a foreign Origin, 429, 503 while stopping). ' +
  'The server pings every 10 s. Close codes: 4101 session ended, 4102 user changed or disabled, 4103 tokens revoked, 4104 token expired, ' +
  '1013 slow consumer, 1008 too many unhandled client messages, 1001 service stopping.';

const switching = (description: string, messages: Record<string, string>): SuccessDoc => ({
  status: 101,
  description: `${description} Messages: ${Object.entries(messages)
    .map(([direction, id]) => `${direction}: #/components/schemas/${id}`)
    .join('; ')}.`,
});

const LINE_PROTOCOL_NOTE =
  'The body is InfluxDB line protocol (text/plain), up to 16 MiB as sent; Content-Encoding: gzip is taken, up to 64 MiB inflated (413 beyond). ' +
  'precision: ns (default), us, ms, s; InfluxDB 1.x\'s n, u, m, h too; digits below a millisecond are dropped. A line without a timestamp takes the server\'s time. ' +
  'Each field value goes to every point of the LINE_PROTOCOL source whose locator measurement, field and tags match the line. All or nothing: a malformed line is a 400 naming it, ' +
  'a series no point matches a 422 unless the source has createPoints (then its point is made: needs edit permission on the source), a value of the wrong type a 422 naming the line; ' +
  'writing needs read and set permission on every point (403). A disabled source refuses writes (422). Authorization: Token <jwt>, Bearer <jwt> or Basic (BASIC_AUTH_ENABLED); the u and p query parameters are refused. ' +
  'Answered 204 once durable and readable. Error bodies add InfluxDB\'s code, error and (for a line) line to the usual fields.';

function lineProtocolWrites(): RouteDoc[] {
  const write = (path: string, target: string, summary: string): RouteDoc => ({
    method: 'post',
    path,
    tag: 'Point values',
    summary,
    description: `${target} names the data source (its XID). ${LINE_PROTOCOL_NOTE}`,
    access: 'user',
    success: [noContent('Values written, durable and readable')],
    errors: [400, 403, 404, 413, 422],
  });
  return [
    write(`${API}/write`, 'Query db', 'Line-protocol ingest (InfluxDB 1.x /write)'),
    write(`${API}/api/v2/write`, 'Query bucket (org is ignored)', 'Line-protocol ingest (InfluxDB 2.x /api/v2/write)'),
  ];
}

export const ROUTES: readonly RouteDoc[] = [
  // Service
  { method: 'get', path: '/health/live', tag: 'Service', summary: 'Liveness: the process answers, no store is asked', access: 'public', success: [ok('The process answers', json({ type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }))] },
  { method: 'get', path: '/health', tag: 'Service', summary: 'Readiness: a round trip to each store, made at most once a second (other calls get the last answer)', access: 'public', success: [ok('Both stores answer', json(ref('health'))), { status: 503, description: 'A store does not answer (status "degraded")', content: json(ref('health')) }] },
  {
    method: 'get',
    path: '/metrics',
    tag: 'Service',
    summary: 'Prometheus metrics',
    description: 'Text exposition format: process metrics, HTTP requests by method, route and status with latencies, point values written, write-buffer fill, data sources by state, active events, WebSocket connections. Superadmin only, or anyone when METRICS_PUBLIC=true.',
    access: 'metrics',
    success: [ok('Metrics', { 'text/plain': { type: 'string' } })],
    errors: [403],
  },
  { method: 'get', path: `${API}/openapi.json`, tag: 'Service', summary: 'This OpenAPI document', access: 'public', success: [ok('OpenAPI 3.1 document', json({ type: 'object' }))] },
  { method: 'get', path: '/swagger-ui', tag: 'Service', summary: 'Redirects to /swagger-ui/', access: 'public', success: [{ status: 301, description: 'Moved to /swagger-ui/', headers: { Location: '/swagger-ui/' } }] },
  { method: 'get', path: '/swagger-ui/', tag: 'Service', summary: 'Swagger UI for this document', access: 'public', success: [ok('The Swagger UI page', { 'text/html': { type: 'string' } })] },
  { method: 'get', path: '/swagger-ui/{file}', tag: 'Service', summary: 'Swagger UI assets', access: 'public', params: ['swaggerFile'], success: [ok('The asset (JavaScript, CSS or image)', { 'application/javascript': { type: 'string' }, 'text/css': { type: 'string' }, 'image/png': { type: 'string', contentEncoding: 'binary' } }), { status: 304, description: 'Not modified (If-None-Match)' }], errors: [404] },

  // Authentication
  {
    method: 'post',
    path: `${API}/login`,
    tag: 'Authentication',
    summary: 'Log in (session)',
    description: 'Needs the XSRF-TOKEN cookie equal to the X-XSRF-TOKEN header (the client may generate the first token). Sets the DDS_SESSION cookie (HttpOnly) and a new XSRF-TOKEN cookie. An expired password (PASSWORD_MAX_AGE_DAYS) answers 401/4010 until the body carries newPassword.',
    access: 'login',
    body: { schema: 'login', required: true },
    success: [{ status: 200, description: 'Logged in: the user', content: json(ref('user-view')), headers: { 'Set-Cookie': 'DDS_SESSION=...; HttpOnly; SameSite=Lax; Path=/ and XSRF-TOKEN=...; SameSite=Lax; Path=/' } }],
    errors: [401, 403],
  },
  { method: 'post', path: `${API}/logout`, tag: 'Authentication', summary: 'Log out', description: 'Deletes the session and clears the cookies. With a session cookie the CSRF header is needed.', access: 'public', success: [noContent('Logged out')], errors: [403] },
  {
    method: 'post',
    path: `${API}/auth-tokens/create`,
    tag: 'Authentication',
    summary: 'Create a JWT',
    description: 'Only a caller authenticated by password (session or Basic) may create tokens; a token cannot (403). A token for another user needs superadmin. Default expiry 5 minutes, at most JWT_MAX_EXPIRY_DAYS.',
    access: 'user',
    body: { schema: 'auth-token-create', required: false },
    success: [{ status: 201, description: 'The token', content: json(ref('auth-token')) }],
    errors: [403],
  },
  { method: 'post', path: `${API}/auth-tokens/revoke`, tag: 'Authentication', summary: "Revoke the caller's tokens", access: 'user', success: [noContent('Every token of the caller is invalid')] },
  { method: 'post', path: `${API}/auth-tokens/revoke/{username}`, tag: 'Authentication', summary: "Revoke a user's tokens (superadmin)", access: 'user', params: ['username'], success: [noContent("Every token of the user is invalid")], errors: [403, 404] },
  { method: 'post', path: `${API}/auth-tokens/reset-keys`, tag: 'Authentication', summary: 'New signing key (superadmin)', description: 'Every token becomes invalid.', access: 'user', success: [noContent('Keys reset')], errors: [403] },
  {
    method: 'get',
    path: `${API}/auth-tokens/verify`,
    tag: 'Authentication',
    summary: 'Verify a token and show its header and claims',
    description:
      'Anyone may call it, as in Mango (a holder of a token can use it anyway); anonymous callers are rate limited per IP, and a signature is checked only within their budget. ' +
      'The same checks as Bearer authentication: signature, expiry, revocation (the user\'s tokens revoked, keys reset, the user deleted or replaced) and a disabled user; any failure is a 400 saying which.',
    access: 'public',
    params: ['token'],
    success: [ok("The token's header and claims", json(ref('auth-token-verified')))],
    errors: [400],
  },
  { method: 'get', path: `${API}/auth-tokens/public-key`, tag: 'Authentication', summary: 'The public key that verifies tokens', access: 'public', success: [ok('Public JWK', json(ref('public-jwk')))] },

  // Users
  { method: 'get', path: `${API}/users`, tag: 'Users', summary: 'List users', description: `${RQL_NOTE} Properties: id, username, email, name, disabled. Non-admins see only themselves.`, access: 'user', params: ['rql'], success: [ok('Users', json(listOf('user-view')))], errors: [400] },
  { method: 'get', path: `${API}/users/current`, tag: 'Users', summary: 'The caller', access: 'user', success: [ok('The authenticated user', json(ref('user-view')))] },
  { method: 'get', path: `${API}/users/{username}`, tag: 'Users', summary: 'Get a user', access: 'user', params: ['username'], success: [ok('The user', json(ref('user-view')))], errors: [403, 404] },
  { method: 'post', path: `${API}/users`, tag: 'Users', summary: 'Create a user (superadmin)', access: 'user', body: { schema: 'user', required: true }, success: [created('User', 'user-view')], errors: [403, 409] },
  {
    method: 'put',
    path: `${API}/users/{username}`,
    tag: 'Users',
    summary: 'Replace a user',
    description:
      'Superadmin; or the user itself for email, name, locale, timezone and password (a password change needs currentPassword, else 400/4012; touching its own permissions or disabled is 403). A permission or password change ends the user\'s other sessions and revokes its tokens. ' +
      'A password left out, blank ("" or null, as Mango\'s clients send back) or equal to the stored one (its plaintext or its hash) is no change: sessions and tokens stay valid.',
    access: 'user',
    params: ['username'],
    body: { schema: 'user', required: true },
    success: [ok('The stored user', json(ref('user-view')))],
    errors: [400, 403, 404, 409],
  },
  {
    method: 'patch',
    path: `${API}/users/{username}`,
    tag: 'Users',
    summary: 'Update some fields of a user',
    description: `${PATCH_NOTE} The rules of PUT apply to the result: the same self-service limits, and a password given follows the password rules (a change of one's own needs currentPassword).`,
    access: 'user',
    params: ['username'],
    body: { schema: 'patch', required: true },
    success: [ok('The stored user', json(ref('user-view')))],
    errors: [400, 403, 404, 409],
  },
  { method: 'delete', path: `${API}/users/{username}`, tag: 'Users', summary: 'Delete a user (superadmin, not self)', access: 'user', params: ['username'], success: [ok('The deleted user', json(ref('user-view')))], errors: [403, 404] },

  // Data sources
  { method: 'get', path: `${API}/data-sources/by-xid/{xid}`, tag: 'Data sources', summary: 'Get a data source by XID', access: 'user', params: ['xid'], success: [ok('The data source', json(ref('data-source-view')))], errors: [403, 404] },
  {
    method: 'put',
    path: `${API}/data-sources/copy/{xid}`,
    tag: 'Data sources',
    summary: 'Copy a data source, and its points when asked (Mango)',
    description:
      'node-mango-client\'s DataSource.copy. Superadmin. The copy has the source\'s settings (its secrets too), a new XID (copyXid, or generated: 409 when in use) and name (copyName, or "<name> Copy"); ' +
      'with copyPoints=true each point is copied with a new XID (and copyDeviceName when given). Written in one transaction, as an import; the copy starts once, after it. Empty or "null" parameters are not given.',
    access: 'user',
    params: ['xid', 'copyXid', 'copyName', 'copyDeviceName', 'copyEnabled', 'copyPoints'],
    success: [{ ...ok('The copy', json(ref('data-source-view'))), headers: { Location: 'The copy' } }],
    errors: [403, 404, 409, 422],
  },
  {
    method: 'get',
    path: `${API}/data-sources/{xid}/discover`,
    tag: 'Data sources',
    summary: 'Discover BACnet devices and their objects (BACNET_IP)',
    description:
      "Edit permission. A Who-Is goes to the source's broadcastAddress (and its address when set) from its localPort; each device that answers within waitMs is listed with its objects of the supported types " +
      '(analog, binary and multi-state inputs, outputs and values) and their names, ready for point locators. 400 for another source type or a bad waitMs; 503 when the local port cannot be bound.',
    access: 'user',
    params: ['xid', 'waitMs'],
    success: [ok('The devices found', json(DISCOVERED_DEVICES))],
    errors: [400, 403, 404, 503],
  },
  { method: 'put', path: `${API}/data-sources/enable-disable/{xid}`, tag: 'Data sources', summary: 'Enable or disable a data source', access: 'user', params: ['xid'], body: { schema: 'enable-disable', required: true }, success: [ok('The data source', json(ref('data-source-view')))], errors: [403, 404] },
  {
    method: 'get',
    path: `${API}/data-sources/{xid}/browse`,
    tag: 'Data sources',
    summary: "Browse an OPC_UA source's server: a node's children",
    description:
      "The node's children by hierarchical references (nodeId, browseName, nodeClass, and a Variable's dataType), through a session of its own with the source's settings (the source need not be enabled). " +
      'Read permission on the source. 400 for a node id that is not one or a source of another type, 404 for a node the server does not have, 502 when the server cannot be reached or refuses the session.',
    access: 'user',
    params: ['xid', 'nodeId'],
    success: [
      ok('The children', json({ type: 'array', items: { type: 'object', required: ['nodeId', 'browseName', 'nodeClass', 'dataType'], properties: { nodeId: { type: 'string' }, browseName: { type: 'string' }, nodeClass: { type: 'string' }, dataType: { type: ['string', 'null'] } } } })),
    ],
    errors: [400, 403, 404, 502],
  },
  ...crud('Data sources', 'data-sources', 'data source', 'data-source', 'data-source-view', 'id, xid, name, enabled, modelType, state, runningOn', true),
  {
    method: 'put',
    path: `${API}/data-points/enable-disable/{xid}`,
    tag: 'Data points',
    summary: 'Enable, disable or restart a data point',
    description:
      'Mango\'s form: the query parameters enabled and restart, or the body {"enabled", "restart"} (both: they must agree). Needs edit permission on the point (or its source). ' +
      'restart with enabled true starts the point again even when it runs. The point\'s source, detectors and the other instances follow at once.',
    access: 'user',
    params: ['xid', 'enabled', 'restart'],
    body: { schema: 'data-point-enable-disable', required: false },
    success: [ok('The data point', json(ref('data-point-view')))],
    errors: [403, 404],
  },
  ...crud('Data points', 'data-points', 'data point', 'data-point', 'data-point-view', 'id, xid, name, enabled, deviceName, dataSourceXid, dataType, settable, unit, tags.<key>', true),

  // Data point tags (Mango's /data-point-tags)
  { method: 'get', path: `${API}/data-point-tags/keys`, tag: 'Data point tags', summary: 'Tag keys of the points the caller may read', description: 'Code-point order, at most 100,000. Includes Mango\'s implicit keys: name (every point) and device (points with a device name).', access: 'user', success: [ok('Tag keys', json(STRINGS))] },
  {
    method: 'get',
    path: `${API}/data-point-tags/values/{key}`,
    tag: 'Data point tags',
    summary: 'Distinct values of a tag key',
    description:
      'Over the points the caller may read that the RQL query selects. The query\'s properties are tag keys (e.g. `?site=Plant%201`, `match(region,N*)`); name and device are the point\'s name and device name. ' +
      'Code-point order; sort() is not used; limit(n[,offset]) windows the values, without it at most 100,000.',
    access: 'user',
    params: ['tagKey', 'rql'],
    success: [ok('Values', json(STRINGS))],
    errors: [400],
  },
  { method: 'get', path: `${API}/data-point-tags/point/{xid}`, tag: 'Data point tags', summary: "A point's tags", description: 'Without the implicit name and device.', access: 'user', params: ['xid'], success: [ok('Tags', json(ref('data-point-tags')))], errors: [403, 404] },
  {
    method: 'post',
    path: `${API}/data-point-tags/point/{xid}`,
    tag: 'Data point tags',
    summary: "Replace a point's tags",
    description: 'As Mango (node-mango-client setTags). Needs edit permission on the point (or its source); saved as a point save. The keys name and device are ignored.',
    access: 'user',
    params: ['xid'],
    body: { schema: 'data-point-tags', required: true },
    success: [ok('The tags now', json(ref('data-point-tags')))],
    errors: [403, 404],
  },
  {
    method: 'put',
    path: `${API}/data-point-tags/point/{xid}`,
    tag: 'Data point tags',
    summary: "Merge into a point's tags",
    description: 'As Mango (node-mango-client addTags): each key set to its value, removed when null, other tags kept. Needs edit permission on the point (or its source); saved as a point save. The result is held to the tag limits (at most 100 tags).',
    access: 'user',
    params: ['xid'],
    body: { schema: 'data-point-tags-merge', required: true },
    success: [ok('The tags now', json(ref('data-point-tags')))],
    errors: [403, 404, 409],
  },
  ...crud('Event detectors', 'event-detectors', 'event detector', 'event-detector', 'event-detector-view', 'id, xid, name, dataPointXid, detectorType, alarmLevel'),
  ...crud('Event handlers', 'event-handlers', 'event handler', 'event-handler', 'event-handler-view', 'id, xid, name, disabled, handlerType. Superadmin only (403 otherwise)'),
  {
    method: 'get',
    path: `${API}/event-handlers/{xid}/deliveries`,
    tag: 'Event handlers',
    summary: "A handler's deliveries",
    description: `Every attempt of the handler (superadmin). ${RQL_NOTE} Properties: id, eventId, action, attempt, timestamp, outcome, status, error.`,
    access: 'user',
    params: ['xid', 'rql'],
    success: [ok('Attempts', json(listOf('event-handler-delivery')))],
    errors: [400, 403, 404],
  },

  // Events
  { method: 'get', path: `${API}/events`, tag: 'Events', summary: 'List events', description: `${RQL_NOTE} Properties: id, active, acknowledged, alarmLevel (ordered), activeTimestamp, rtnTimestamp, eventType, dataPointXid, dataSourceXid.`, access: 'user', params: ['rql'], success: [ok('Events of points and sources the caller may read', json(listOf('event')))], errors: [400] },
  { method: 'post', path: `${API}/events/acknowledge`, tag: 'Events', summary: 'Acknowledge every event an RQL query matches', description: `${RQL_NOTE} The selection is the query alone (e.g. \`?in(id,7,8)\`): a request body is a 400 (none, an empty one, \`null\` or \`{}\` are accepted).`, access: 'user', params: ['rql'], success: [ok('How many were acknowledged', json(ref('events-acknowledged')))], errors: [400] },
  {
    method: 'put',
    path: `${API}/events/acknowledge/{id}`,
    tag: 'Events',
    summary: 'Acknowledge an event, optionally with a comment',
    description:
      'Acknowledging again keeps the first acknowledgement. An optional body {"comment"} is stored as a comment by the acknowledging user in the same transaction (also when the event was acknowledged before: then the push is COMMENT_ADDED). No body, null or {}: no comment.',
    access: 'user',
    params: ['eventId'],
    body: { schema: 'event-acknowledge', required: false },
    success: [ok('The event, its comments included', json(ref('event')))],
    errors: [403, 404],
  },
  {
    method: 'post',
    path: `${API}/events/{id}/comments`,
    tag: 'Events',
    summary: 'Comment on an event',
    description: 'Whoever may read the event may comment on it. The text: 1 to 1,024 characters, not blank, kept as sent. The events WebSocket pushes COMMENT_ADDED.',
    access: 'user',
    params: ['eventId'],
    body: { schema: 'event-comment', required: true },
    success: [{ status: 201, description: 'The event with its comments, oldest first (the new one last)', content: json(ref('event')) }],
    errors: [403, 404],
  },
  { method: 'get', path: `${API}/events/{id}`, tag: 'Events', summary: 'Get an event', access: 'user', params: ['eventId'], success: [ok('The event', json(ref('event')))], errors: [403, 404] },

  // Point values
  { method: 'get', path: `${API}/point-values/latest/{xid}`, tag: 'Point values', summary: 'Latest values, newest first', description: 'The first (current) value says in JSON whether the point is unreliable now (unreliable, unreliableSince, unreliableReason).', access: 'user', params: ['xid', 'latestLimit', 'timezone', 'dateTimeFormat', 'header', 'format'], success: [ok('Values', jsonOrCsv(arrayOf('point-value')))], errors: [400, 403, 404, 406] },
  { method: 'get', path: `${API}/point-values/single/{xid}`, tag: 'Point values', summary: 'Values or rollups of one point', description: READ_NOTE, access: 'user', params: ['xid', ...READ_PARAMS], success: [ok('Values oldest first, or one rolled-up value per period', jsonOrCsv(valuesOrRollups))], errors: [400, 403, 404, 406] },
  { method: 'get', path: `${API}/point-values/time-period/{xid}`, tag: 'Point values', summary: 'Values or rollups of one point (Mango alias of single)', description: READ_NOTE, access: 'user', params: ['xid', ...READ_PARAMS], success: [ok('Values or rollups', jsonOrCsv(valuesOrRollups))], errors: [400, 403, 404, 406] },
  { method: 'get', path: `${API}/point-values/time-period/{xid}/{rollup}`, tag: 'Point values', summary: 'Rollups of one point, rollup in the path', description: READ_NOTE, access: 'user', params: ['xid', 'rollupPath', ...READ_PARAMS.filter((p) => p !== 'rollup')], success: [ok('Rollups', jsonOrCsv(valuesOrRollups))], errors: [400, 403, 404, 406] },
  {
    method: 'get',
    path: `${API}/point-values/multiple-arrays/time-period/{xids}`,
    tag: 'Point values',
    summary: 'Values or rollups of several points',
    description: `${READ_NOTE} ${MANY_CSV_NOTE} At most POINT_VALUES_MAX_XIDS XIDs (default 100; repeats count once), else 400 naming xids. An unknown or unreadable XID fails the whole request.`,
    access: 'user',
    params: ['xids', ...READ_PARAMS],
    success: [ok('XID → values (JSON), or one table (CSV, Arrow, Parquet)', { 'application/json': { type: 'object', additionalProperties: valuesOrRollups }, 'text/csv': CSV, ...TABLES })],
    errors: [400, 403, 404, 406],
  },
  {
    method: 'get',
    path: `${API}/point-values/multiple-arrays/time-period/{xids}/{rollup}`,
    tag: 'Point values',
    summary: 'Rollups of several points, rollup in the path',
    description: `${READ_NOTE} ${MANY_CSV_NOTE} At most POINT_VALUES_MAX_XIDS XIDs (default 100; repeats count once), else 400 naming xids.`,
    access: 'user',
    params: ['xids', 'rollupPath', ...READ_PARAMS.filter((p) => p !== 'rollup')],
    success: [ok('XID → rollups (JSON), or one table (CSV, Arrow, Parquet)', { 'application/json': { type: 'object', additionalProperties: valuesOrRollups }, 'text/csv': CSV, ...TABLES })],
    errors: [400, 403, 404, 406],
  },
  { method: 'get', path: `${API}/point-values/{xid}/latest`, tag: 'Point values', summary: 'Latest values, newest first (Mango\'s older form of /latest/{xid})', description: 'The same answer as GET /point-values/latest/{xid}; node-mango-client\'s DataPoint.getValue and getValues call this form. A point whose XID is single, time-period or latest is read through /latest/{xid}.', access: 'user', params: ['xid', 'latestLimit', 'timezone', 'dateTimeFormat', 'header', 'format'], success: [ok('Values', jsonOrCsv(arrayOf('point-value')))], errors: [400, 403, 404, 406] },
  ...mangoQueries(),
  ...grafanaRoutes(),
  {
    method: 'put',
    path: `${API}/point-values/{xid}`,
    tag: 'Point values',
    summary: 'Set a value',
    description: 'The point must be enabled (with its source) and settable; the caller needs read and set permission (403 before any device write). A Modbus point writes the device first and stores the value only if that succeeded (502 otherwise).',
    access: 'user',
    params: ['xid'],
    body: { schema: 'point-value-set', required: true },
    success: [ok('The value set', json(ref('point-value-set-result')))],
    errors: [403, 404, 502],
  },
  {
    method: 'post',
    path: `${API}/point-values`,
    tag: 'Point values',
    summary: 'Bulk ingest',
    description: 'Up to 16 MiB. Needs read and set permission on every point. Validated as a whole; answered once durable and readable. A value newer than its point\'s latest acts as a live value; older ones only enter history.',
    access: 'user',
    body: { schema: 'point-values-bulk', required: true },
    success: [ok('Values written', json(ref('point-values-written')))],
    errors: [403],
  },
  ...lineProtocolWrites(),
  {
    method: 'get',
    path: `${API}/configuration/export`,
    tag: 'Configuration',
    summary: 'Export the configuration (superadmin)',
    description: 'Sources, points, detectors, users and JSON store items as one document, ordered by XID (users by username), without ids, runtime state, passwords or other secrets.',
    access: 'user',
    params: ['include'],
    success: [ok('The configuration', json(ref('configuration')))],
    errors: [400, 403],
  },
  {
    method: 'post',
    path: `${API}/configuration/import`,
    tag: 'Configuration',
    summary: 'Import a configuration (superadmin)',
    description:
      'Validated as a whole (422 naming e.g. dataPoints[3].pointLocator.offset; nothing written), then applied in one transaction, creating or replacing by XID (users by username; a new user needs password). Sources and points start or stop as their enabled says. Items equal to what is stored are left alone, so importing a document twice changes nothing.',
    access: 'user',
    body: { schema: 'configuration', required: true },
    success: [ok('Counts', json(ref('configuration-imported')))],
    errors: [403],
  },
  {
    method: 'post',
    path: `${API}/point-values/purge`,
    tag: 'Point values',
    summary: 'Purge old values (superadmin)',
    description:
      'With `before`, deletes the listed points\' values (every point\'s when `xids` is absent) older than it; without it, applies the listed points\' (every point\'s) retention settings now: purgePeriod when purgeOverride, else HISTORY_RETENTION; a point with neither keeps every value and is counted in keptForever. Caches and rollups agree with the remaining history afterwards. The purge also runs in the background at least daily.',
    access: 'user',
    body: { schema: 'point-values-purge', required: false },
    success: [ok('Values deleted, and the points the purge applied to', json(ref('point-values-purged')))],
    errors: [403],
  },
  { method: 'delete', path: `${API}/point-values/{xid}`, tag: 'Point values', summary: 'Delete values in a range', description: 'Needs edit permission on the point.', access: 'user', params: ['xid', 'deleteFrom', 'deleteTo'], success: [ok('Values deleted', json(ref('point-values-deleted')))], errors: [400, 403, 404] },

  // JSON store
  { method: 'get', path: `${API}/json-store`, tag: 'JSON store', summary: 'List JSON store items (without jsonData)', description: `${RQL_NOTE} Properties: xid, name.`, access: 'user', params: ['rql'], success: [ok('Items the caller may read', json(listOf('json-store-summary')))], errors: [400] },
  { method: 'get', path: `${API}/json-store/{xid}`, tag: 'JSON store', summary: 'Get a JSON store item', access: 'user', params: ['xid'], success: [ok('The item; jsonData exactly as stored', json(ref('json-store-item-view')))], errors: [403, 404] },
  { method: 'get', path: `${API}/json-store/{xid}/{path}`, tag: 'JSON store', summary: 'The value at a dot path inside jsonData', access: 'user', params: ['xid', 'jsonPath'], success: [ok('The bare JSON value there', json({ description: 'Any JSON value' }))], errors: [400, 403, 404] },
  {
    method: 'post',
    path: `${API}/json-store`,
    tag: 'JSON store',
    summary: 'Create or replace a JSON store item',
    description: 'Creates the item (201), or replaces the one with the same xid (200, needs edit permission). Items up to 1 MiB (413).',
    access: 'user',
    body: { schema: 'json-store', required: true },
    success: [created('Item', 'json-store-item-view'), ok('Replaced: the stored item', json(ref('json-store-item-view')))],
    errors: [403],
  },
  { method: 'put', path: `${API}/json-store/{xid}`, tag: 'JSON store', summary: 'Replace a JSON store item', access: 'user', params: ['xid'], body: { schema: 'json-store', required: true }, success: [ok('The stored item', json(ref('json-store-item-view')))], errors: [403, 404] },
  { method: 'delete', path: `${API}/json-store/{xid}`, tag: 'JSON store', summary: 'Delete a JSON store item', access: 'user', params: ['xid'], success: [ok('The deleted item', json(ref('json-store-item-view')))], errors: [403, 404] },

  // JSON data (Mango's /json-data over the same items)
  { method: 'get', path: `${API}/json-data`, tag: 'JSON store', summary: 'XIDs of the JSON store items the caller may read (Mango)', description: 'Code-point order, at most 100,000.', access: 'user', success: [ok('XIDs', json(STRINGS))] },
  { method: 'get', path: `${API}/json-data/{xid}`, tag: 'JSON store', summary: 'Get a JSON store item (Mango)', access: 'user', params: ['xid'], success: [ok('The item; jsonData exactly as stored', json(ref('json-store-item-view')))], errors: [403, 404] },
  { method: 'get', path: `${API}/json-data/{xid}/{path}`, tag: 'JSON store', summary: 'The item with the value at a dot path as jsonData (Mango)', access: 'user', params: ['xid', 'jsonPath'], success: [ok('The item, jsonData being the value at the path', json(ref('json-store-item-view')))], errors: [403, 404] },
  {
    method: 'post',
    path: `${API}/json-data/{xid}`,
    tag: 'JSON store',
    summary: 'Create an item, or replace its document (Mango)',
    description: `${JSON_DATA_NOTE} Creating needs name; replacing needs edit permission. Answers 201 either way, as Mango.`,
    access: 'user',
    params: ['xid', ...JSON_DATA_FIELDS],
    body: { schema: 'json-data-document', required: true },
    success: [{ ...created('Item', 'json-store-item-view'), description: 'Item created or replaced: jsonData is the document' }],
    errors: [403, 409],
  },
  {
    method: 'post',
    path: `${API}/json-data/{xid}/{path}`,
    tag: 'JSON store',
    summary: 'Replace the value at a dot path (Mango)',
    description: `${JSON_DATA_NOTE} The item and the path's parent must exist: an object gets the member set (added at its end when new), an array the element at an existing index replaced. Needs edit permission.`,
    access: 'user',
    params: ['xid', 'jsonPath', ...JSON_DATA_FIELDS],
    body: { schema: 'json-data-document', required: true },
    success: [{ ...created('Item', 'json-store-item-view'), description: 'Value replaced: jsonData is the value written' }],
    errors: [403, 404, 409],
  },
  {
    method: 'put',
    path: `${API}/json-data/{xid}`,
    tag: 'JSON store',
    summary: 'Merge into the document (Mango)',
    description: `${JSON_DATA_NOTE} ${JSON_DATA_MERGE_NOTE}`,
    access: 'user',
    params: ['xid', ...JSON_DATA_FIELDS],
    body: { schema: 'json-data-document', required: true },
    success: [ok('The item, jsonData being the merged value', json(ref('json-store-item-view')))],
    errors: [403, 404, 409],
  },
  {
    method: 'put',
    path: `${API}/json-data/{xid}/{path}`,
    tag: 'JSON store',
    summary: 'Merge into the value at a dot path (Mango)',
    description: `${JSON_DATA_NOTE} ${JSON_DATA_MERGE_NOTE}`,
    access: 'user',
    params: ['xid', 'jsonPath', ...JSON_DATA_FIELDS],
    body: { schema: 'json-data-document', required: true },
    success: [ok('The item, jsonData being the merged value', json(ref('json-store-item-view')))],
    errors: [403, 404, 409],
  },
  { method: 'delete', path: `${API}/json-data/{xid}`, tag: 'JSON store', summary: 'Delete a JSON store item (Mango)', access: 'user', params: ['xid'], success: [ok('The deleted item', json(ref('json-store-item-view')))], errors: [403, 404] },
  { method: 'delete', path: `${API}/json-data/{xid}/{path}`, tag: 'JSON store', summary: 'Delete the value at a dot path (Mango)', description: 'Every member of that key, or the array element. Needs edit permission.', access: 'user', params: ['xid', 'jsonPath'], success: [ok('The item as it is now', json(ref('json-store-item-view')))], errors: [403, 404, 409] },

  // WebSocket
  {
    method: 'get',
    path: `${API}/websocket/point-value`,
    tag: 'WebSocket',
    summary: 'Live point values (WebSocket)',
    description: `${WEBSOCKET_NOTE} The client sends {"xid", "eventTypes": [...]} per point (an empty list unsubscribes); the server answers REGISTERED with the current value, then the requested events (ATTRIBUTE_CHANGE: the point became unreliable or reliable without a value); every payload carries unreliable; errors {"status":"ERROR","payload":{"type":"NOT_FOUND|PERMISSION_DENIED|SERVER_ERROR","message"}}.`,
    access: 'user',
    success: [switching('Switching to the WebSocket protocol.', { client: 'websocket-point-value-subscribe', server: 'websocket-point-value-message', errors: 'websocket-error-message' })],
    errors: [403, 503],
  },
  {
    method: 'get',
    path: `${API}/websocket/events`,
    tag: 'WebSocket',
    summary: 'Live events (WebSocket)',
    description: `${WEBSOCKET_NOTE} The server pushes every raise, acknowledgement, return to normal and comment (COMMENT_ADDED, with the comment in payload.comment) of the events the user may read; client messages are ignored.`,
    access: 'user',
    success: [switching('Switching to the WebSocket protocol.', { server: 'websocket-event-message' })],
    errors: [403, 503],
  },
];

/**
 * Whether a request's query string is RQL: the routes that take the `rql` parameter. Their query is
 * read by the RQL parser, not as name=value pairs.
 */
export function rqlRequests(): (method: string, path: string) => boolean {
  const keys = new Set<string>();
  // Routes with path parameters (/data-point-tags/values/{key}): a parameter is one segment.
  const patterns: RegExp[] = [];
  for (const route of ROUTES) {
    if (!route.params?.includes('rql')) continue;
    const key = `${route.method.toUpperCase()} ${route.path.toLowerCase()}`;
    if (!route.path.includes('{')) keys.add(key);
    else patterns.push(new RegExp(`^${key.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+')}$`));
  }
  // The router matches case-insensitively and ignores a trailing slash; HEAD runs the GET route.
  return (method, path) => {
    const key = `${method === 'HEAD' ? 'GET' : method} ${path.toLowerCase().replace(/(.)\/$/, '$1')}`;
    return keys.has(key) || patterns.some((p) => p.test(key));
  };
}
