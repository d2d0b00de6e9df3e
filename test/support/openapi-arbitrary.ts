// Schema-valid requests generated from the OpenAPI document: a fast-check arbitrary per operation
// that builds its path, query and JSON body from what the document states — types, formats (uuid, date-time, email),
// bounds, lengths, item counts, enums, patterns, required and optional properties — and nothing else. A request it
// makes that the service refuses with 400 is a rule the document does not state.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';

type Json = Record<string, unknown>;

export interface OpenApiDocument {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
}

export interface GeneratedRequest {
  method: string;
  url: string;
  payload?: string;
}

export interface GeneratorOptions {
  /**
   * `Schema.property` names whose values follow a grammar the document states only in words (a time zone name, an
   * RRULE, a duration): the generator sends the document's example there, or leaves the property out.
   * `parameter name` does the same for every query or path parameter of that name.
   */
  examplesOnly: ReadonlySet<string>;
  /**
   * Brings a generated request into line with the rules between values that JSON Schema cannot state (the
   * document says them in descriptions): gets the operation, its parameter values by name and its body, and may
   * change them in place.
   */
  adjust?: (operationId: string, parameters: Record<string, unknown>, body: unknown) => void;
}

// Checks the rules between properties a generated object must keep (the document's `if`/`then`, `not`,
// `maxContains`: OpenAPI 3.1 is JSON Schema 2020-12).
const ajv = new Ajv2020({ strict: false });
addFormats.default(ajv);

/** Keeps generated requests small: the bounds still apply, the generator only stays near their lower end. */
const MAX_GENERATED_ITEMS = 3;
const MAX_GENERATED_LENGTH = 24;
// Instants the service represents (years 1970–2100): a date-time is otherwise only its RFC 3339 form.
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(2100, 0, 1);

export class OpenApiArbitraries {
  constructor(
    private readonly document: OpenApiDocument,
    private readonly options: GeneratorOptions,
  ) {}

  /** Requests for `method path`, or undefined when its body is not JSON (e.g. text/calendar). */
  request(path: string, method: string): fc.Arbitrary<GeneratedRequest> | undefined {
    const operation = this.document.paths[path]?.[method];
    if (operation === undefined) throw new Error(`no operation ${method} ${path}`);
    const content = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
    if (content !== undefined && content['application/json'] === undefined) return undefined;
    const parameters = ((operation.parameters ?? []) as Json[]).filter(
      (p) => p.in === 'path' || p.in === 'query',
    );
    const values = fc.tuple(
      ...parameters.map((parameter) => {
        // A path segment is never empty (an empty one is another route).
        const schema =
          parameter.in === 'path' ? { minLength: 1, ...(parameter.schema as Json) } : parameter.schema;
        const example = parameter.example ?? (schema as Json).example;
        const value = this.options.examplesOnly.has(`parameter ${String(parameter.name)}`)
          ? fc.constant(example)
          : this.schema(schema as Json);
        return parameter.required === true ? value : fc.option(value, { nil: undefined });
      }),
    );
    const bodySchema = content?.['application/json']?.schema as Json | undefined;
    const body = bodySchema === undefined ? fc.constant(undefined) : this.schema(bodySchema);
    return fc.tuple(values, body).map(([parameterValues, json]) => {
      const byName = Object.fromEntries(
        parameters.map((p, index) => [String(p.name), parameterValues[index]]),
      );
      this.options.adjust?.(String(operation.operationId), byName, json);
      return {
        method: method.toUpperCase(),
        url: requestUrl(path, parameters, byName),
        ...(json === undefined ? {} : { payload: JSON.stringify(json) }),
      };
    });
  }

  private schema(schema: Json, owner?: string): fc.Arbitrary<unknown> {
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.split('/').pop() ?? '';
      return this.object(this.document.components.schemas[name] ?? {}, name);
    }
    const alternatives = (schema.oneOf ?? schema.anyOf) as Json[] | undefined;
    if (alternatives !== undefined) {
      // The keywords beside `anyOf` (a type, a length) hold in every alternative.
      const { oneOf: _oneOf, anyOf: _anyOf, ...shared } = schema;
      return fc.oneof(...alternatives.map((part) => this.schema({ ...shared, ...part }, owner)));
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length === 1)
      return this.schema(schema.allOf[0] as Json, owner);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const types = Array.isArray(schema.type)
      ? (schema.type as string[])
      : [schema.type as string | undefined];
    return fc.oneof(...types.map((type) => this.typed(type, schema, owner)));
  }

  private typed(type: string | undefined, schema: Json, owner?: string): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: bound(schema.minimum, -1e6), max: bound(schema.maximum, 1e6) });
      case 'number':
        return fc.double({ min: bound(schema.minimum, -1e6), max: bound(schema.maximum, 1e6), noNaN: true });
      case 'string':
        return stringArbitrary(schema);
      case 'array':
        return fc.array(this.schema((schema.items ?? {}) as Json, owner), {
          minLength: Number(schema.minItems ?? 0),
          maxLength: Math.max(
            Number(schema.minItems ?? 0),
            Math.min(Number(schema.maxItems ?? 9), MAX_GENERATED_ITEMS),
          ),
        });
      case 'object':
        return this.object(schema, owner ?? '');
      case undefined:
      default:
        // No type: any JSON value the document allows; a string is what every such property takes.
        return fc.string({ maxLength: MAX_GENERATED_LENGTH });
    }
  }

  private object(schema: Json, name: string): fc.Arbitrary<unknown> {
    if (schema.type !== undefined && schema.type !== 'object') return this.schema(schema, name);
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set((schema.required ?? []) as string[]);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [property, definition] of Object.entries(properties)) {
      if (definition.readOnly === true) continue;
      model[property] = this.options.examplesOnly.has(`${name}.${property}`)
        ? fc.constant(definition.example)
        : this.schema(definition, name);
    }
    const record = fc.record(model, {
      requiredKeys: Object.keys(model).filter((property) => required.has(property)),
    });
    // Rules between properties (`allOf` of `if`/`then`, `not`): values that break one are not generated.
    const between = ((schema.allOf ?? []) as Json[]).filter((part) => !('$ref' in part));
    if (between.length === 0) return record;
    const checks = between.map((part) => ajv.compile(part));
    return record.filter((value) => checks.every((check) => check(value)));
  }
}

function bound(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function stringArbitrary(schema: Json): fc.Arbitrary<string> {
  const minLength = Number(schema.minLength ?? 0);
  const maxLength = Number(schema.maxLength ?? Number.MAX_SAFE_INTEGER);
  const fits = (text: string) => text.length >= minLength && text.length <= maxLength;
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc
        .date({ min: new Date(EARLIEST), max: new Date(LATEST), noInvalidDate: true })
        .map((date) => date.toISOString());
    case 'date':
      return fc
        .date({ min: new Date(EARLIEST), max: new Date(LATEST), noInvalidDate: true })
        .map((date) => date.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress({ size: 'xsmall' }).filter(fits);
    case 'hostname':
      return fc.domain({ size: 'xsmall' }).filter((text) => fits(text) && matches(schema, text));
    case 'ipv4':
      return fc.ipV4().filter(fits);
    case 'ipv6':
      return fc.ipV6().filter(fits);
  }
  if (typeof schema.pattern === 'string')
    return fc.stringMatching(new RegExp(schema.pattern), { size: 'xsmall' }).filter(fits);
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(maxLength, MAX_GENERATED_LENGTH)) });
}

function matches(schema: Json, text: string): boolean {
  return typeof schema.pattern !== 'string' || new RegExp(schema.pattern).test(text);
}

function requestUrl(path: string, parameters: Json[], values: Record<string, unknown>): string {
  let url = path;
  const query = new URLSearchParams();
  parameters.forEach((parameter) => {
    const value = values[String(parameter.name)];
    if (value === undefined) return;
    const name = String(parameter.name);
    // Parameters are strings, numbers, booleans or lists of them (the document has no object parameters).
    const text = (item: unknown) => (typeof item === 'string' ? item : JSON.stringify(item));
    if (parameter.in === 'path') url = url.replace(`{${name}}`, encodeURIComponent(text(value)));
    else
      for (const item of Array.isArray(value) ? (value as unknown[]) : [value])
        query.append(name, text(item));
  });
  const search = query.toString();
  return search === '' ? url : `${url}?${search}`;
}
