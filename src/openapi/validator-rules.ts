// Writes the rules the compiled class-validator plan enforces into the OpenAPI document, so the
// document cannot drift from the validators: each request DTO is compiled exactly as the validation pipe compiles it
// (compileDtoCached), and every keyword of its JSON Schema rendering that a client can check — format, bounds,
// lengths, item counts, enums, patterns — is copied onto the document's property (body DTOs and the DTOs nested in
// them, by class name) or query parameter (query DTOs, by operationId). The plan's any-version GUID pattern is
// written as `format: uuid` with its fixed length, validator.js's ISO 8601 pattern as `format: date-time`.
import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { MAX_REQUEST_HEAD_BYTES } from '../http/configure-http.js';
import { compileDtoCached } from '../validation/compile-dto.js';
import { GUID_PATTERN } from '../validation/constraint-checks.js';
import { routeDtos } from '../validation/precompile-route-dtos.js';

type Json = Record<string, unknown>;

/** @nestjs/swagger's metadata key of @ApiOperation (its constants are not an exported subpath). */
const API_OPERATION = 'swagger/apiOperation';

/** JSON Schema keywords that state a rule a client can check before sending. */
const RULE_KEYWORDS = [
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'enum',
  'pattern',
] as const;

const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems']);
const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems']);

/** Adds one keyword; a bound met twice (IsNotEmpty's minLength 1 and a MinLength(3)) keeps the stricter. */
function addRule(rules: Json, key: string, value: unknown): void {
  const held = rules[key];
  if (!(key in rules)) rules[key] = value;
  else if (LOWER_BOUNDS.has(key) && typeof value === 'number' && typeof held === 'number')
    rules[key] = Math.max(held, value);
  else if (UPPER_BOUNDS.has(key) && typeof value === 'number' && typeof held === 'number')
    rules[key] = Math.min(held, value);
}

/**
 * The keywords of a compiled field schema, with `anyOf: [null, s]` (optional) and `allOf` parts flattened; an
 * `anyOf` of real alternatives (a host name or an IP address) is kept as one.
 */
function ruleKeywords(schema: Json): Json {
  const rules: Json = {};
  const visit = (node: Json): void => {
    for (const key of RULE_KEYWORDS) if (key in node) addRule(rules, key, node[key]);
    for (const part of (node.allOf ?? []) as Json[]) visit(part);
    const alternatives = ((node.anyOf ?? []) as Json[]).filter(
      (part) => !(part.type === 'null' && Object.keys(part).length === 1),
    );
    if (alternatives.length === 1) visit(alternatives[0]);
    else if (alternatives.length > 1 && rules.anyOf === undefined)
      rules.anyOf = alternatives.map(ruleKeywords);
    // An `each` rule on a value that may be an array or a scalar (class-validator applies it to both).
    const then = (node.then as Json | undefined)?.items as Json | undefined;
    if (then !== undefined && rules.items === undefined) rules.items = ruleKeywords(then);
    if (typeof node.items === 'object' && node.items !== null && !('$ref' in (node.items as Json)))
      rules.items = ruleKeywords(node.items as Json);
  };
  visit(schema);
  return toOpenApiFormats(rules);
}

/** The plan's patterns as the named formats a generated client and a validator know. */
function toOpenApiFormats(rules: Json): Json {
  if (rules.pattern === GUID_PATTERN) {
    delete rules.pattern;
    Object.assign(rules, { format: 'uuid', minLength: 36, maxLength: 36 });
  } else if (typeof rules.pattern === 'string' && rules.pattern.startsWith('^([\\+-]?\\d{4}(?!\\d{2}\\b))')) {
    // validator.js's ISO 8601 pattern (constraint-checks.ts): documented as a date-time, what every client sends.
    delete rules.pattern;
    rules.format = 'date-time';
  }
  if (rules.items !== undefined && Object.keys(rules.items as Json).length === 0) delete rules.items;
  return rules;
}

/** Copies `rules` onto a document schema (a property, or a parameter's schema), into the array's items too. */
function applyRules(target: Json, rules: Json): void {
  // A nullable property is `type: [X, 'null']` (OpenAPI 3.1): its enum must admit null as well.
  const nullable = Array.isArray(target.type) && (target.type as unknown[]).includes('null');
  const branch = (Array.isArray(target.oneOf) ? (target.oneOf as Json[]) : []).find((b) => b.type !== 'null');
  const host = branch !== undefined && !('$ref' in branch) ? branch : target;
  for (const [key, value] of Object.entries(rules)) {
    if (key === 'items') {
      if (typeof host.items === 'object' && host.items !== null && !('$ref' in (host.items as Json)))
        applyRules(host.items as Json, value as Json);
      continue;
    }
    if (key === 'enum' && nullable && Array.isArray(value) && !value.includes(null)) {
      host.enum = [...(value as unknown[]), null];
      continue;
    }
    if (key === 'format' && host.type !== undefined && !typeIncludes(host.type, 'string')) continue;
    host[key] = value;
  }
}

function typeIncludes(type: unknown, name: string): boolean {
  return Array.isArray(type) ? type.includes(name) : type === name;
}

/** What the document takes from one compiled class: rules per property, and rules between its properties. */
interface ClassRules {
  readonly properties: Map<string, Json>;
  /** Properties the compiled plan takes without any rule (`@Allow()`: any JSON value). */
  readonly unchecked: string[];
  /** Custom constraints' objectJsonSchema (e.g. `if AuthRequired then Username`), the object's `allOf`. */
  readonly between: Json[];
}

/** Class name → its rules, for a compiled DTO and every DTO nested in it. */
function rulesByClass(schema: Json, className: string, into: Map<string, ClassRules>): void {
  const put = (name: string, object: Json): void => {
    if (into.has(name)) return;
    const properties = new Map<string, Json>();
    const unchecked: string[] = [];
    for (const [property, field] of Object.entries((object.properties ?? {}) as Record<string, Json>)) {
      const rules = ruleKeywords(field);
      if (Object.keys(rules).length > 0) properties.set(property, rules);
      if (Object.keys(field).length === 0) unchecked.push(property);
    }
    into.set(name, { properties, unchecked, between: (object.allOf ?? []) as Json[] });
  };
  put(className, schema);
  for (const [name, definition] of Object.entries((schema.definitions ?? {}) as Record<string, Json>))
    put(name, definition);
}

function operationsById(document: OpenAPIObject): Map<string, Json> {
  const byId = new Map<string, Json>();
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item as Record<string, Json>))
      if (typeof operation.operationId === 'string') byId.set(operation.operationId, operation);
  return byId;
}

/** A property of a component schema: [schema name, property name]. */
export type PropertyRef = readonly [string, string];

/** Returns the body properties the validators take without a rule (bounded later by the body limit). */
export function addValidatorRules(document: OpenAPIObject, app: INestApplication): PropertyRef[] {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  const bodies = new Map<string, ClassRules>();
  const operations = operationsById(document);
  for (const { type, source, handler } of routeDtos(app)) {
    const compiled = compileDtoCached(type, { source }).jsonSchema;
    if (source === 'body') {
      rulesByClass(compiled, type.name, bodies);
      continue;
    }
    const operationId = (Reflect.getMetadata(API_OPERATION, handler) as { operationId?: string } | undefined)
      ?.operationId;
    const operation = operationId === undefined ? undefined : operations.get(operationId);
    const rules = new Map<string, ClassRules>();
    rulesByClass(compiled, type.name, rules);
    for (const parameter of (operation?.parameters ?? []) as Json[]) {
      const found = rules.get(type.name)?.properties.get(String(parameter.name));
      if (parameter.in === 'query' && found !== undefined) applyRules(parameter.schema as Json, found);
    }
  }
  const unchecked: PropertyRef[] = [];
  for (const [className, { properties, between, unchecked: open }] of bodies) {
    const schema = schemas[className];
    const target = schema?.properties as Record<string, Json> | undefined;
    if (target === undefined) continue;
    unchecked.push(...open.map((property): PropertyRef => [className, property]));
    for (const [property, rules] of properties)
      if (target[property] !== undefined) applyRules(target[property], rules);
    if (between.length > 0) schema.allOf = [...((schema.allOf ?? []) as Json[]), ...between];
  }
  return unchecked;
}

/**
 * A path, query or header parameter no DTO bounds (a route id, a SCIM query option, If-Match) is still bounded by the request head,
 * which the server refuses beyond MAX_REQUEST_HEAD_BYTES: the document says so instead of leaving it unbounded.
 */
export function boundParametersByHead(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item as Record<string, Json>))
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        if (parameter.in === 'cookie') continue;
        const schema = (parameter.schema ?? {}) as Json;
        const strings = typeIncludes(schema.type, 'array') ? ((schema.items ?? {}) as Json) : schema;
        if (
          typeIncludes(strings.type, 'string') &&
          strings.maxLength === undefined &&
          strings.enum === undefined
        )
          strings.maxLength = MAX_REQUEST_HEAD_BYTES;
      }
}

/** Component schemas a request can carry: reachable through $ref from a request body. */
function requestBodySchemas(document: OpenAPIObject): Set<string> {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  const names = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object')
      for (const [key, value] of Object.entries(node)) {
        if (key !== '$ref' || typeof value !== 'string') walk(value);
        else {
          const name = value.split('/').pop() ?? '';
          if (names.has(name)) continue;
          names.add(name);
          walk(schemas[name]);
        }
      }
  };
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item as Record<string, Json>)) walk(operation.requestBody);
  return names;
}

/** Every string and array in `schema` (not through $ref) that states no bound gets `limit`. */
function boundBy(schema: Json, limit: number): void {
  if (typeIncludes(schema.type, 'string') && schema.maxLength === undefined && schema.enum === undefined)
    schema.maxLength = limit;
  // An array item takes at least two octets of the body ("0,").
  if (typeIncludes(schema.type, 'array') && schema.maxItems === undefined)
    schema.maxItems = Math.floor(limit / 2);
  for (const key of ['items', 'not'] as const)
    if (typeof schema[key] === 'object' && schema[key] !== null) boundBy(schema[key] as Json, limit);
  for (const key of ['properties'] as const)
    for (const property of Object.values((schema[key] ?? {}) as Record<string, Json>))
      boundBy(property, limit);
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const)
    for (const part of (schema[key] ?? []) as Json[]) boundBy(part, limit);
}

/**
 * Request schemas that only document (no compiled DTO validates them: the SCIM bodies the SCIM engine reads, the
 * webhook's `initialize`/`Sections` the service does not read), and properties a validated DTO takes as any JSON
 * (`@Allow()`: a device event's Value), are bounded by the body limit the server enforces on every request: a string
 * cannot be longer, an array cannot hold more items (docs/security.md "Bounded work").
 */
export function boundDocumentedOnlyBodies(
  document: OpenAPIObject,
  { validated, unchecked }: { validated: Set<string>; unchecked: readonly PropertyRef[] },
  bodyLimit: number,
): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  const requestSchemas = requestBodySchemas(document);
  for (const name of requestSchemas)
    if (!validated.has(name) && schemas[name] !== undefined) boundBy(schemas[name], bodyLimit);
  for (const [name, property] of unchecked) {
    const schema = (schemas[name]?.properties as Record<string, Json> | undefined)?.[property];
    if (requestSchemas.has(name) && schema !== undefined) boundBy(schema, bodyLimit);
  }
}
