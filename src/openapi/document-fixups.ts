// Completes the generated OpenAPI document with what the decorators cannot say:
// - `additionalProperties: false` on every request schema (at every depth) whose DTO rejects unknown properties,
//   read from the same compiled plan the validation pipe runs (webhook bodies allow unknown properties: not false);
// - an example of its own code on every error answer (the envelope's Code, or SCIM's status/scimType), a 400
//   naming the operation's own first field;
// - no 413/415 on GET operations (the limits and media types apply to request bodies).
import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { compileDtoCached } from '../validation/compile-dto.js';
import { routeDtos } from '../validation/precompile-route-dtos.js';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { pointToIdSources } from './id-sources.js';
import { addObjectRules } from './object-rules.js';
import { documentOccurrenceWindow } from './occurrence-window.js';
import { addValidatorRules, boundDocumentedOnlyBodies, boundParametersByHead } from './validator-rules.js';

type Json = Record<string, unknown>;

/** Class name → whether unknown properties are allowed, for every body DTO and every DTO nested in one. */
export function bodyDtoStrictness(app: INestApplication): Map<string, boolean> {
  const allow = new Map<string, boolean>();
  for (const { type, source } of routeDtos(app)) {
    if (source !== 'body') continue;
    const schema = compileDtoCached(type, { source }).jsonSchema;
    allow.set(type.name, schema.additionalProperties === true);
    const definitions = (schema.definitions ?? {}) as Record<string, Json>;
    for (const [name, def] of Object.entries(definitions)) {
      if (!allow.has(name)) allow.set(name, def.additionalProperties === true);
    }
  }
  return allow;
}

const PLATFORM_MESSAGES: Record<string, string> = {
  ValidationFailed: 'The request is invalid: Groups[2].ScheduleIds[0].',
  Unauthorized: 'Missing or unknown API key.',
  Forbidden: 'The API key lacks the scope this operation needs.',
  NotFound: 'The resource does not exist.',
  Conflict: 'The resource already exists.',
  PayloadTooLarge: 'The request body is larger than the limit.',
  UnsupportedMediaType: 'The request body must be application/json.',
  TooManyRequests: 'Too many requests; retry after the Retry-After seconds.',
  RequestHeaderFieldsTooLarge: 'The request line and headers are larger than 64 KiB.',
  InternalError: 'An unexpected error occurred (correlation id 9b2f6a52-3c55-4bd4-8f0c-0c8f0e2f4d1e).',
  DatabaseUnavailable:
    'The database is unavailable (unreachable, restarting or overloaded); nothing was stored. Retry after the time given in Retry-After.',
  StorageFull:
    "The database's storage is full; nothing was stored. Retry after the time given in Retry-After.",
};

const CODE_BY_STATUS: Record<string, string> = {
  '400': 'ValidationFailed',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'NotFound',
  '409': 'Conflict',
  '413': 'PayloadTooLarge',
  '415': 'UnsupportedMediaType',
  '429': 'TooManyRequests',
  '500': 'InternalError',
  '503': 'DatabaseUnavailable',
  '507': 'StorageFull',
};

const SCIM_TYPE: Record<string, string> = { '400': 'invalidValue', '409': 'uniqueness' };

/** A field this operation's 400 can name: the body's first property, else its first parameter. */
function fieldOf(operation: Json, schemas: Record<string, Json>): string | undefined {
  const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  for (const media of Object.values(body ?? {})) {
    const ref = (media.schema as Json | undefined)?.$ref;
    const schema = typeof ref === 'string' ? schemas[ref.split('/').at(-1) ?? ''] : undefined;
    const [first] = Object.keys(schema?.properties ?? {});
    if (first !== undefined) return first;
  }
  const [parameter] = (operation.parameters ?? []) as Json[];
  return typeof parameter?.name === 'string' ? parameter.name : undefined;
}

function validationExample(field: string | undefined): Json {
  // Operation 1's documented example names a nested field; others name their own first field.
  if (field === undefined) return { Message: 'The request is invalid.' };
  if (field === 'Groups') {
    return {
      Message: PLATFORM_MESSAGES.ValidationFailed,
      Errors: [{ Field: 'Groups[2].ScheduleIds[0]', Message: 'ScheduleIds[0] must be a UUID' }],
    };
  }
  return {
    Message: `The request is invalid: ${field}.`,
    Errors: [{ Field: field, Message: `${field} is not valid here (see the schema)` }],
  };
}

function errorExample(
  status: string,
  description: string,
  schemaRef: string,
  field: string | undefined,
): Json | undefined {
  if (schemaRef.endsWith('/ErrorEnvelopeDto')) {
    // The description starts with the code (e.g. "InstalledAppNotFound", "TooManyRequests (see Retry-After)").
    const named = /^([A-Z][A-Za-z]+)\b/.exec(description)?.[1];
    const code = named ?? CODE_BY_STATUS[status] ?? 'InternalError';
    const example: Json = {
      Succeeded: false,
      Message: PLATFORM_MESSAGES[code] ?? description,
      Code: code,
    };
    if (code === 'ValidationFailed') Object.assign(example, validationExample(field));
    if (status === '500') example.CorrelationId = '9b2f6a52-3c55-4bd4-8f0c-0c8f0e2f4d1e';
    return example;
  }
  if (schemaRef.endsWith('/ScimErrorDto')) {
    return {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status,
      ...(SCIM_TYPE[status] ? { scimType: SCIM_TYPE[status] } : {}),
      detail: description,
    };
  }
  return undefined;
}

/**
 * A `string | null` property is reflected as `type: object` (TypeScript emits Object for unions). The real type is
 * what the example says (a string example → string); with no usable example the type is left open (any JSON).
 */
function fixUnionTypes(schemas: Record<string, Json>): void {
  for (const schema of Object.values(schemas)) {
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    for (const property of Object.values(properties)) {
      const example = property.example;
      // `object[]` is reflected with string items; its example says what the items are.
      if (
        property.type === 'array' &&
        Array.isArray(example) &&
        example.length > 0 &&
        example.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item)) &&
        (property.items as Json | undefined)?.type === 'string'
      ) {
        property.items = { type: 'object' };
      }
      if (property.type !== 'object') continue;
      if (['properties', '$ref', 'allOf', 'additionalProperties', 'items'].some((k) => k in property))
        continue;
      const type =
        typeof example === 'string'
          ? 'string'
          : typeof example === 'boolean'
            ? 'boolean'
            : typeof example === 'number'
              ? Number.isInteger(example)
                ? 'integer'
                : 'number'
              : typeof example === 'object' && example !== null && !Array.isArray(example)
                ? 'object'
                : undefined;
      if (type === undefined) delete property.type;
      else property.type = type;
    }
  }
}

/**
 * openapi-typescript (default options) makes a property of a component schema that has a `default` required, so a
 * generated client could not leave out `Priority`, `Enabled`… In request schemas the default is said in the
 * description instead (the service applies it; answers always carry every field, so response schemas keep theirs).
 */
function describeRequestDefaults(schemas: Record<string, Json>, requestSchemas: Iterable<string>): void {
  for (const name of requestSchemas) {
    for (const property of Object.values((schemas[name]?.properties ?? {}) as Record<string, Json>)) {
      if (property.default === undefined) continue;
      const said = `Default: ${JSON.stringify(property.default)}.`;
      const description = typeof property.description === 'string' ? property.description : '';
      property.description = description.includes(said) ? description : `${description} ${said}`.trim();
      delete property.default;
    }
  }
}

function markStrict(schemas: Record<string, Json>, allow: Map<string, boolean>): void {
  for (const [name, allowed] of allow) {
    const schema = schemas[name];
    if (schema === undefined || schema.type !== 'object') continue;
    schema.additionalProperties = allowed;
  }
}

export function completeOpenApiDocument(document: OpenAPIObject, app: INestApplication): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  fixUnionTypes(schemas);
  const strictness = bodyDtoStrictness(app);
  markStrict(schemas, strictness);
  describeRequestDefaults(schemas, strictness.keys());
  addUndeclaredAnswers(document);
  for (const path of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(path as Record<string, Json>)) {
      if (typeof operation.responses !== 'object' || operation.responses === null) continue;
      // The decorators share response objects between operations: each operation gets its own copy to complete.
      const responses = structuredClone(operation.responses) as Record<string, Json>;
      operation.responses = responses;
      // Body limits and media types apply to request bodies, which a GET does not take (Fastify does not read
      // one); a DELETE may carry one, and is answered 413/415 like any other method then.
      if (method === 'get') {
        delete responses['413'];
        delete responses['415'];
      }
      const field = fieldOf(operation, schemas);
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        const content = (response.content ?? {}) as Record<string, Json>;
        for (const media of Object.values(content)) {
          const ref = ((media.schema ?? {}) as Json).$ref;
          if (typeof ref !== 'string' || media.example !== undefined) continue;
          const description = typeof response.description === 'string' ? response.description : '';
          const example = errorExample(status, description, ref, field);
          if (example !== undefined) media.example = example;
        }
      }
    }
  }
  completeContract(document);
  pointToIdSources(document);
  toOpenApi31(document);
  const unchecked = addValidatorRules(document, app);
  boundParametersByHead(document);
  boundDocumentedOnlyBodies(
    document,
    { validated: new Set(strictness.keys()), unchecked },
    app.get<symbol, AppConfig>(APP_CONFIG).bodyLimit,
  );
  addObjectRules(document);
  documentOccurrenceWindow(document);
  document.openapi = '3.1.0';
  return document;
}

// ---- OpenAPI 3.1 (docs/decisions.md "OpenAPI") ----

/** Keys whose values are data, not schemas: never rewritten. */
const DATA_KEYS = new Set(['example', 'examples', 'default', 'enum', 'const']);

/**
 * OpenAPI 3.1 has no `nullable`: `type: X, nullable: true` becomes `type: [X, 'null']` (with `null` in its enum),
 * and a nullable reference (`nullable` beside `allOf: [$ref]` or `$ref`) becomes `oneOf: [{$ref}, {type: 'null'}]`,
 * which every JSON Schema validator accepts `null` against. A schema without a type already admits null.
 */
export function toOpenApi31(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) toOpenApi31(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Json;
  for (const [key, value] of Object.entries(schema)) if (!DATA_KEYS.has(key)) toOpenApi31(value);
  if (schema.nullable !== true) return;
  delete schema.nullable;
  const allOf = schema.allOf as Json[] | undefined;
  // Nest writes `type: object` beside a nullable allOf: the reference says what the object is.
  if (typeof schema.$ref === 'string') {
    schema.oneOf = [{ $ref: schema.$ref }, { type: 'null' }];
    delete schema.$ref;
    delete schema.type;
  } else if (allOf !== undefined && allOf.length === 1) {
    schema.oneOf = [allOf[0], { type: 'null' }];
    delete schema.allOf;
    delete schema.type;
  } else if (typeof schema.type === 'string') {
    schema.type = [schema.type, 'null'];
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
  }
}

// ---- Headers, tags, servers, security ----

const HEADERS: Record<string, Json> = {
  XCorrelationId: {
    description:
      'The correlation id of this request (the one sent, else the body Context.CorrelationId, else a new one); ' +
      'logs and error bodies quote it.',
    required: true,
    schema: { type: 'string' },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  RetryAfterOptional: {
    description:
      'Seconds to wait before retrying (when the request with this Idempotency-Key is still in progress).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  Location: {
    description: 'The address of the created resource (equals meta.location).',
    required: true,
    schema: { type: 'string' },
  },
  ETag: {
    description:
      'The version of the resource (equals meta.version); send it back in If-Match / If-None-Match.',
    required: true,
    schema: { type: 'string' },
  },
  WWWAuthenticate: {
    description:
      'RFC 6750 §3: `Bearer` when no credential was sent; `Bearer error="invalid_token", error_description="…"` ' +
      'when the API key or access token was refused.',
    required: true,
    schema: { type: 'string', pattern: '^Bearer' },
  },
  WWWAuthenticateInsufficientScope: {
    description:
      'RFC 6750 §3.1, when the API key or access token lacks the scope the operation needs: ' +
      '`Bearer error="insufficient_scope", scope="<scope>"` (the scope as the credential carries it: behind ' +
      'OIDC_SCOPE_PREFIX for an access token). Absent when the 403 has another cause (a caller bound to other tenants).',
    schema: { type: 'string', pattern: '^Bearer' },
  },
  IdempotentReplayed: {
    description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const TAG_DESCRIPTIONS: Record<string, string> = {
  Occurrence: 'Whether schedules have occurrences in a time window (operation 1), and their occurrences.',
  Schedule:
    'Schedules with their items, recurrences and exceptions (operation 2); iCalendar import and export.',
  Scim: 'SCIM 2.0 users and groups (RFC 7643/7644; operation 3) and the SCIM discovery endpoints.',
  Mail: 'SMTP sending configurations (operation 4), their verification and test messages.',
  Replication: 'Replication diagnostics (operation 5), the agents that report to it, and its topology.',
  Webhook: 'The smart-home provider webhook (operation 6) and what it stored.',
  Migration: 'Migration runs (operations 7 and 8).',
};

const ref = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

function declareHeaders(method: string, path: string, operation: Json): void {
  const parameters = (operation.parameters ?? []) as Json[];
  const idempotent = parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
  const scimResource = /^\/api\/v1\/scim\/(Users|Groups)\/\{id\}$/.test(path);
  const responses = operation.responses as Record<string, Json>;
  for (const [status, response] of Object.entries(responses)) {
    const headers: Record<string, Json> = { 'X-Correlation-Id': ref('XCorrelationId') };
    if (['429', '503', '507'].includes(status)) headers['Retry-After'] = ref('RetryAfter');
    if (status === '401') headers['WWW-Authenticate'] = ref('WWWAuthenticate');
    if (status === '403') headers['WWW-Authenticate'] = ref('WWWAuthenticateInsufficientScope');
    if (idempotent && status === '409') headers['Retry-After'] = ref('RetryAfterOptional');
    if (idempotent && status.startsWith('2')) headers['Idempotent-Replayed'] = ref('IdempotentReplayed');
    if (idempotent && status === '201' && path.startsWith('/api/v1/scim/')) {
      headers.Location = ref('Location');
      headers.ETag = ref('ETag');
    }
    if (scimResource && method !== 'delete' && (status === '200' || status === '304'))
      headers.ETag = ref('ETag');
    response.headers = { ...((response.headers ?? {}) as Json), ...headers };
  }
}

/** Tags, servers, security schemes and descriptions Spectral's spectral:oas asks for, headers the service sends. */
export function completeContract(document: OpenAPIObject): void {
  const doc = document as unknown as Json;
  doc.servers = [
    { url: '/', description: 'This service: every path is relative to the address it is served at' },
  ];
  const components = (doc.components ?? {}) as Json;
  doc.components = components;
  components.headers = { ...((components.headers ?? {}) as Json), ...HEADERS };
  components.securitySchemes = {
    ...((components.securitySchemes ?? {}) as Json),
    httpSignature: {
      type: 'http',
      scheme: 'Signature',
      description:
        'The device webhook: `Authorization: Signature keyId=…,signature=…,headers=…` (draft-cavage-http-signatures-12) ' +
        'over the exact path and body, verified with SMARTTHINGS_PUBLIC_KEY; no API key. PING lifecycles are unsigned.',
    },
  };
  const tags = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, Json>)) {
      if (typeof operation.responses !== 'object' || operation.responses === null) continue;
      for (const tag of (operation.tags ?? []) as string[]) tags.add(tag);
      if (typeof operation.description !== 'string' && typeof operation.summary === 'string')
        operation.description = operation.summary;
      if (operation.operationId === 'Occurrence_HasOccurrencesGrouped')
        operation.security = [{ bearer: [] }, {}];
      if (operation.operationId === 'Webhook_HomeProvider') operation.security = [{ httpSignature: [] }, {}];
      declareHeaders(method, path, operation);
    }
  }
  doc.tags = [...tags].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
}

// ---- Answers the decorators do not declare ----

/** Properties whose value is any JSON value (a PatchOp's value): reflected as the example's type otherwise. */
const ANY_JSON_PROPERTIES: ReadonlyArray<[string, string]> = [
  ['ScimPatchOperationDto', 'Value'],
  ['ScimPatchOperationRfcDto', 'value'],
  ['ScimGroupPatchOperationDto', 'value'],
  ['ScimGroupPatchOperationInterfaceDto', 'Value'],
  // SmartThings sends a string for contact sensors, numbers or objects for other capabilities (kept as sent).
  ['DeviceEventDto', 'Value'],
];

const ANY_JSON: Json[] = [
  { type: 'string' },
  { type: 'number' },
  { type: 'boolean' },
  { type: 'object', additionalProperties: true },
  { type: 'array', items: {} },
  { type: 'null' },
];

/** The interface document writes operation 3 in lower case; the route answers both (paths match case-insensitively). */
export const INTERFACE_OPERATION_3 = '/api/v1/scim/users/{id}';

function errorResponse(path: string, description: string): Json {
  const scim = path.startsWith('/api/v1/scim/');
  return {
    description,
    content: {
      [scim ? 'application/scim+json' : 'application/json']: {
        schema: { $ref: `#/components/schemas/${scim ? 'ScimErrorDto' : 'ErrorEnvelopeDto'}` },
      },
    },
  };
}

/**
 * - 304 on the SCIM resource GETs, which take If-None-Match;
 * - operation 3 at the interface's own (lower-case) path, as a second operation of the same route.
 */
export function addUndeclaredAnswers(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  for (const [name, property] of ANY_JSON_PROPERTIES) {
    const properties = schemas[name]?.properties as Record<string, Json> | undefined;
    const current = properties?.[property];
    if (properties === undefined || current === undefined) continue;
    properties[property] = {
      description: current.description,
      example: current.example,
      anyOf: ANY_JSON,
    };
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, Json>)) {
      const responses = operation.responses as Record<string, Json> | undefined;
      if (responses === undefined) continue;
      // The webhook's reply bytes go as application/octet-stream when Accept does not admit JSON; its errors are
      // always the JSON envelope.
      for (const [status, response] of Object.entries(responses)) {
        const content = response.content as Record<string, Json> | undefined;
        if (content?.['application/octet-stream'] === undefined) continue;
        if (Number(status) >= 400) delete content['application/octet-stream'];
        else
          content['application/octet-stream'] = {
            schema: {
              type: 'string',
              contentMediaType: 'application/json',
              description: 'The same JSON bytes',
            },
          };
      }
      const parameters = (operation.parameters ?? []) as Json[];
      if (method === 'get' && parameters.some((p) => p.name === 'If-None-Match') && !responses['304'])
        responses['304'] = { description: 'Not Modified: If-None-Match names the current version' };
      // Node's parser answers a request head over 64 KiB before any route runs (src/http/router-errors.ts): the
      // envelope on every path, SCIM's too (the path is not known reliably then).
      if (responses['431'] === undefined)
        responses['431'] = errorResponse(
          '/',
          'RequestHeaderFieldsTooLarge: the request line and headers are over 64 KiB (answered before routing, ' +
            'in the envelope on every path)',
        );
      // RFC 7644 §3.4.3: `.search` takes POST only; another method on /Users/.search is 405, not a lookup of id.
      if (/^\/api\/v1\/scim\/(Users|Groups)\/\{id\}$/.test(path) && responses['405'] === undefined)
        responses['405'] = errorResponse(path, 'Method not allowed: `.search` is not an id (POST only)');
    }
  }
  const patch = (document.paths['/api/v1/scim/Users/{id}'] as Json | undefined)?.patch as Json | undefined;
  if (patch !== undefined && document.paths[INTERFACE_OPERATION_3] === undefined) {
    (document.paths as Record<string, Json>)[INTERFACE_OPERATION_3] = {
      patch: {
        ...structuredClone(patch),
        operationId: 'Scim_PatchUserInterfacePath',
        summary: `${(patch.summary as string | undefined) ?? 'Patch a user'} (the interface's path)`,
        description:
          `Operation 3 as the interface document writes it: the same route as PATCH /api/v1/scim/Users/{id} ` +
          `(paths match case-insensitively). ${(patch.description as string | undefined) ?? ''}`.trim(),
      },
    };
  }
}
