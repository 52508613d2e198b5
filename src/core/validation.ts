// Request-body validation: every JSON Schema in schemas/ compiled once at start-up by ajv, and
// ajv's errors turned into the contract's validation messages.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { schemasDir } from '../paths.js';
import { DomainError, validationMessage, type ValidationMessage } from './errors.js';
import { rolesInput } from './mango-input.js';

// Zone names known valid: building an Intl.DateTimeFormat costs ~0.1-1 ms, and there are only a
// few hundred zones (invalid names are not remembered, so this cannot grow without bound).
const knownZones = new Set<string>();

/** An IANA zone name that this runtime knows (or empty, meaning "not set"). */
export function isTimeZone(name: string): boolean {
  if (name === '' || knownZones.has(name)) return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    knownZones.add(name);
    return true;
  } catch {
    return false;
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** "/pointLocator/offset" → "pointLocator.offset"; "/3/xid" → "[3].xid". */
export function propertyPath(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return propertyName(parts);
}

/** ["pointLocator", "offset"] → "pointLocator.offset"; ["3", "xid"] → "[3].xid": the contract's property names. */
export function propertyName(parts: readonly string[]): string {
  let path = '';
  for (const part of parts) {
    if (/^\d+$/.test(part)) path += `[${part}]`;
    else path += path === '' ? part : `.${part}`;
  }
  return path;
}

const typeNames: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

type SchemaNode = Record<string, unknown>;

function describe(err: ErrorObject): string {
  const parent = (err.parentSchema ?? {}) as SchemaNode;
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return 'is required';
    case 'type': {
      const types = String(p.type).split(',');
      return `must be ${types.map((t) => typeNames[t] ?? t).join(' or ')}`;
    }
    case 'minimum':
    case 'maximum':
      if (typeof parent.minimum === 'number' && typeof parent.maximum === 'number') {
        return `must be between ${parent.minimum} and ${parent.maximum}`;
      }
      return err.keyword === 'minimum' ? `must be at least ${String(p.limit)}` : `must be at most ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minItems':
      return `must have at least ${String(p.limit)} items`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'pattern':
      return typeof parent.patternDescription === 'string' ? parent.patternDescription : 'has an invalid format';
    case 'format':
      if (p.format === 'email') return 'must be a valid email address';
      if (p.format === 'timezone') return 'must be an IANA time zone such as Europe/Berlin';
      return `must be a valid ${String(p.format)}`;
    case 'additionalProperties':
      return 'is not allowed';
    case 'uniqueItems':
      return 'must not contain duplicates';
    default:
      return err.message ?? 'is invalid';
  }
}

function property(err: ErrorObject): string {
  const p = err.params as Record<string, unknown>;
  if (err.keyword === 'required') return propertyPath(err.instancePath, String(p.missingProperty));
  if (err.keyword === 'additionalProperties') return propertyPath(err.instancePath, String(p.additionalProperty));
  return propertyPath(err.instancePath);
}

export function toValidationMessages(errors: readonly ErrorObject[]): ValidationMessage[] {
  const seen = new Set<string>();
  const messages: ValidationMessage[] = [];
  for (const err of errors) {
    // Combinators (oneOf/anyOf/if) repeat what their branches already said.
    if (['oneOf', 'anyOf', 'if', 'not'].includes(err.keyword)) continue;
    const m = validationMessage(property(err), describe(err));
    const key = `${m.property}\u0000${m.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      messages.push(m);
    }
  }
  return messages;
}

/**
 * Where a body sits in a schema: the schema of an object's properties, with `$ref`s to other files
 * resolved. Used to read Mango clients' lenient forms before ajv judges the body.
 */
type SchemaLookup = (id: string) => SchemaNode | undefined;

function resolved(node: SchemaNode, lookup: SchemaLookup): SchemaNode {
  return typeof node.$ref === 'string' && !node.$ref.startsWith('#') ? (lookup(node.$ref) ?? node) : node;
}

/** Whether a schema node takes null: untyped (any JSON), or null among its types or enum. */
function takesNull(node: SchemaNode): boolean {
  if (Array.isArray(node.enum)) return node.enum.includes(null);
  if ('const' in node) return node.const === null;
  if (node.type === undefined) return node.$ref === undefined;
  return node.type === 'null' || (Array.isArray(node.type) && node.type.includes('null'));
}

/**
 * Mango clients' lenient input, read into the form the schema describes (API-DECISIONS "Mango
 * clients"): a permission (a `roles` field) also comes as a comma-separated string, "" or null; null
 * for an optional field that does not take null means the field is not given. Fields the schema does
 * not know are left alone (ajv ignores them). Follows nested objects' properties; changes the body in
 * place (a freshly parsed request body).
 */
function readLenient(node: SchemaNode, body: unknown, lookup: SchemaLookup, path: string[]): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const properties = node.properties as Record<string, SchemaNode> | undefined;
  if (!properties) return;
  const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
  const fields = body as Record<string, unknown>;
  for (const [name, raw] of Object.entries(properties)) {
    if (!Object.hasOwn(fields, name)) continue;
    const child = resolved(raw, lookup);
    if (raw.$ref === 'roles') fields[name] = rolesInput(fields[name], propertyName([...path, name]));
    else if (fields[name] === null && !required.has(name) && !takesNull(child)) delete fields[name];
    else readLenient(child, fields[name], lookup, [...path, name]);
  }
}

export class Validator {
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly sources = new Map<string, SchemaNode>();

  constructor(dir = schemasDir) {
    const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
    addFormats.default(ajv, ['date-time', 'uri']);
    ajv.addFormat('email', { type: 'string', validate: (s: string) => s === '' || EMAIL.test(s) });
    ajv.addFormat('timezone', { type: 'string', validate: isTimeZone });
    ajv.addKeyword({ keyword: 'patternDescription', schemaType: 'string' });
    // Names the object in the summary message ("Validation failed for DataSourceVO: ...").
    ajv.addKeyword({ keyword: 'objectType', schemaType: 'string' });
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    for (const file of files) {
      const schema = JSON.parse(readFileSync(join(dir, file), 'utf8')) as SchemaNode;
      this.sources.set(file.replace(/\.json$/, ''), schema);
      ajv.addSchema(schema);
    }
    for (const file of files) {
      const name = file.replace(/\.json$/, '');
      const fn = ajv.getSchema(name);
      if (!fn) throw new Error(`schema ${file} must have "$id": "${name}"`);
      this.compiled.set(name, fn);
    }
  }

  /**
   * Returns the body typed as T, or throws 422 with one message per failing field. `at` names
   * where the body sits in the request (e.g. "pointLocator"), prefixed to every property.
   */
  validate<T>(schema: string, body: unknown, at?: string): T {
    const fn = this.compiled.get(schema);
    if (!fn) throw new Error(`unknown schema ${schema}`);
    readLenient(this.sources.get(schema)!, body, (id) => this.sources.get(id), at === undefined ? [] : [at]);
    if (fn(body)) return body as T;
    const messages = toValidationMessages(fn.errors ?? []).map((m) =>
      at === undefined ? m : { ...m, property: m.property === '' ? at : m.property.startsWith('[') ? at + m.property : `${at}.${m.property}` },
    );
    const objectType = (fn.schema as { objectType?: unknown }).objectType;
    throw DomainError.validation(messages, typeof objectType === 'string' ? objectType : undefined);
  }
}
