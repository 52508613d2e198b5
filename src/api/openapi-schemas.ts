// The JSON Schemas of schemas/ (request bodies, compiled by ajv in core/validation.ts) and
// schemas/responses/ (documentation of what the service answers) as OpenAPI components: one
// source for validation and documentation. Each schema's $id becomes its component name.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemasDir } from '../paths.js';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export const RESPONSES_SUBDIR = 'responses';
const COMPONENT_PREFIX = '#/components/schemas/';

/** Keywords only our ajv knows; OpenAPI tools would reject them, so they become extensions. */
const AJV_KEYWORDS: Record<string, string> = { objectType: 'x-objectType', patternDescription: 'x-patternDescription' };
/** Keywords whose value maps names to subschemas (the names are data, never keywords). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is data, copied as it is. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required']);

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** "roles" → "#/components/schemas/roles"; "roles#/items" → "#/components/schemas/roles/items". */
export function componentRef(ref: string): string {
  if (ref.startsWith('#')) throw new Error(`local $ref ${ref} is not supported in schemas/ (use the $id of another file)`);
  const hash = ref.indexOf('#');
  const id = hash < 0 ? ref : ref.slice(0, hash);
  const pointer = hash < 0 ? '' : ref.slice(hash + 1);
  return COMPONENT_PREFIX + id + pointer;
}

function rewrite(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(rewrite);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id' || key === '$schema') continue;
    if (key === '$ref' && typeof value === 'string') out.$ref = componentRef(value);
    else if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, rewrite(sub)]));
    else out[AJV_KEYWORDS[key] ?? key] = rewrite(value);
  }
  return out;
}

export interface ComponentSchemas {
  /** Component name ($id) → OpenAPI-ready schema. */
  schemas: Record<string, JsonObject>;
  /** The $ids of the request-body schemas the validator compiles (top level of schemas/). */
  requestBodies: Set<string>;
}

function readDir(dir: string): JsonObject[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const schema = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Json;
      if (!isObject(schema) || schema.$id !== f.replace(/\.json$/, '')) throw new Error(`${join(dir, f)} must have "$id": "${f.replace(/\.json$/, '')}"`);
      return schema;
    });
}

/** Loads and rewrites every schema; refuses a $ref to a schema that does not exist. */
export function loadComponentSchemas(dir = schemasDir): ComponentSchemas {
  const requests = readDir(dir);
  const responses = readDir(join(dir, RESPONSES_SUBDIR));
  const schemas: Record<string, JsonObject> = {};
  for (const schema of [...requests, ...responses]) {
    const id = schema.$id as string;
    if (schemas[id]) throw new Error(`schema $id ${id} is used twice`);
    schemas[id] = rewrite(schema) as JsonObject;
  }
  const missing = [...JSON.stringify(schemas).matchAll(/"\$ref":"#\/components\/schemas\/([^"/]+)/g)].map((m) => m[1]!).filter((id) => !schemas[id]);
  if (missing.length > 0) throw new Error(`$ref to unknown schema(s): ${[...new Set(missing)].join(', ')}`);
  return { schemas, requestBodies: new Set(requests.map((s) => s.$id as string)) };
}
