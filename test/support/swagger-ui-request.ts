// Builds the request Swagger UI's "Try it out" pre-fills for an operation of an OpenAPI document: every parameter
// with an example (the parameter's, else its schema's) or a default, and the request body's example, else a sample
// built from the schema the way Swagger UI's sampleFromSchema does (examples first at every level, then defaults,
// the first enum value, the first oneOf/anyOf branch, readOnly properties left out, one item per array, a string
// per format). Used by test/openapi-examples.e2e-spec.ts.
type Json = Record<string, unknown>;

export interface PrefilledRequest {
  path: Record<string, string>;
  query: Record<string, string[]>;
  headers: Record<string, string>;
  body: { mediaType: string; value: unknown } | undefined;
}

const FORMAT_SAMPLES: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00.000Z',
  date: '2026-01-01',
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  email: 'user@example.com',
};

export class SwaggerUiSampler {
  constructor(private readonly document: Json) {}

  private resolve(schema: Json): Json {
    const ref = schema.$ref;
    if (typeof ref !== 'string') return schema;
    let node: unknown = this.document;
    for (const part of ref.replace(/^#\//, '').split('/')) node = (node as Json)[part];
    return this.resolve(node as Json);
  }

  sample(input: Json, depth = 0): unknown {
    const schema = this.resolve(input);
    if (schema.example !== undefined) return schema.example;
    if (schema.default !== undefined) return schema.default;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
    if (schema.const !== undefined) return schema.const;
    for (const key of ['oneOf', 'anyOf'] as const) {
      const branches = schema[key] as Json[] | undefined;
      const first = branches?.find((branch) => branch.type !== 'null');
      if (first !== undefined) return this.sample(first, depth);
    }
    if (Array.isArray(schema.allOf)) {
      const merged: Json = { ...schema, allOf: undefined };
      delete merged.allOf;
      for (const part of schema.allOf as Json[]) {
        const resolved = this.resolve(part);
        merged.properties = { ...(merged.properties as Json), ...(resolved.properties as Json) };
        if (merged.type === undefined) merged.type = resolved.type;
      }
      return this.sample(merged, depth);
    }
    const type = Array.isArray(schema.type)
      ? (schema.type as string[]).find((t) => t !== 'null')
      : (schema.type as string | undefined);
    if (type === 'object' || schema.properties !== undefined) {
      if (depth > 8) return {};
      const object: Json = {};
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
        if (this.resolve(property).readOnly === true || property.readOnly === true) continue;
        object[name] = this.sample(property, depth + 1);
      }
      return object;
    }
    if (type === 'array') return [this.sample((schema.items ?? {}) as Json, depth + 1)];
    if (type === 'integer' || type === 'number') return schema.minimum ?? 0;
    if (type === 'boolean') return true;
    if (type === 'string')
      return FORMAT_SAMPLES[String(schema.format)] ?? (schema.contentMediaType ? '' : 'string');
    return undefined;
  }

  /** The request "Try it out" pre-fills for an operation (parameters without a value are left empty). */
  prefilled(operation: Json): PrefilledRequest {
    const request: PrefilledRequest = { path: {}, query: {}, headers: {}, body: undefined };
    for (const raw of (operation.parameters ?? []) as Json[]) {
      const parameter = this.resolve(raw);
      const schema = (parameter.schema ?? {}) as Json;
      const value = parameter.example ?? schema.example ?? schema.default;
      if (value === undefined) continue;
      const name = String(parameter.name);
      const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
      if (parameter.in === 'path') request.path[name] = text(value);
      else if (parameter.in === 'query')
        request.query[name] = Array.isArray(value) ? value.map(text) : [text(value)];
      else if (parameter.in === 'header') request.headers[name] = text(value);
    }
    const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
    // Swagger UI selects the first media type the operation lists.
    const [mediaType] = Object.keys(content);
    if (mediaType !== undefined) {
      const media = content[mediaType];
      // Swagger UI shows the first of several named examples.
      const [named] = Object.values((media.examples ?? {}) as Record<string, Json>);
      const value = media.example ?? named?.value ?? this.sample((media.schema ?? {}) as Json);
      request.body = { mediaType, value };
    }
    return request;
  }
}
