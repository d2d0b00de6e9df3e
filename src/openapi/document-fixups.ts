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
  markStrict(schemas, bodyDtoStrictness(app));
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
  return document;
}
