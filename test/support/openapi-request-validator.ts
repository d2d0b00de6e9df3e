// The other direction of openapi-response-validator.ts: whether a REQUEST is one the OpenAPI document accepts, as a
// gateway that validates requests (Prism, Kong, Azure APIM) or a client generated from the document would judge it —
// its path parameters, its query parameters (OpenAPI's default serialisation: `form`, exploded, so an array is the
// parameter repeated; numbers and booleans read from their text) and its JSON body, each against the document's
// schema with the same ajv (JSON Schema 2020-12, which OpenAPI 3.1 is; the document declares 3.1, so `null` is in
// the type arrays and no `nullable` needs converting).
import type { InjectOptions } from 'fastify';
import { OpenApiResponseValidator } from './openapi-response-validator.js';

type Json = Record<string, unknown>;

export class OpenApiRequestValidator extends OpenApiResponseValidator {
  /** What the document refuses in the request (empty when it accepts it). */
  requestViolations(request: InjectOptions): string[] {
    const method = (request.method ?? 'GET').toUpperCase();
    const url = typeof request.url === 'string' ? request.url : '';
    const [rawPath = '', rawQuery = ''] = url.split('?');
    const path = decodeURI(rawPath);
    // The path as written first (operation 3 has its own entry at the interface's lower-case path), else any case.
    const found =
      this.operations.find((op) => op.method === method && new RegExp(op.pattern.source).test(path)) ??
      this.operations.find((op) => op.method === method && op.pattern.test(path));
    if (found === undefined) return [`${method} ${path}: no documented operation`];
    const where = `${method} ${found.path}`;
    const violations: string[] = [];
    const parameters = (found.operation.parameters ?? []) as Json[];

    // Path parameters, in the order the path template names them.
    const names = [...found.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
    const capture = new RegExp(
      `^${found.path
        .split(/(\{[^}]+\})/)
        .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
        .join('')}/?$`,
      'i',
    );
    const values = capture.exec(path)?.slice(1) ?? [];
    names.forEach((name, index) => {
      const parameter = parameters.find((p) => p.in === 'path' && p.name === name);
      if (parameter === undefined) violations.push(`${where}: path parameter ${name} not documented`);
      else this.checkValue(violations, `${where} path ${name}`, parameter, [values[index] ?? '']);
    });

    const query = new URLSearchParams(rawQuery);
    for (const parameter of parameters.filter((p) => p.in === 'query')) {
      const sent = query.getAll(String(parameter.name));
      if (sent.length === 0) {
        if (parameter.required === true) violations.push(`${where}: query ${String(parameter.name)} missing`);
        continue;
      }
      this.checkValue(violations, `${where} query ${String(parameter.name)}`, parameter, sent);
    }
    for (const name of new Set(query.keys()))
      if (!parameters.some((p) => p.in === 'query' && p.name === name))
        violations.push(`${where}: query ${name} not documented`);

    const body = found.operation.requestBody as Json | undefined;
    const payload = request.payload;
    if (payload === undefined) {
      if (body?.required === true) violations.push(`${where}: the body is required`);
      return violations;
    }
    const contentType = String(
      (request.headers as Record<string, string> | undefined)?.['content-type'] ?? '',
    )
      .split(';')[0]
      ?.trim()
      .toLowerCase();
    const media = ((body?.content ?? {}) as Record<string, Json>)[contentType ?? ''];
    if (media === undefined) {
      violations.push(`${where}: media type ${contentType ?? '(none)'} not documented for the body`);
      return violations;
    }
    const parsed: unknown = JSON.parse(typeof payload === 'string' ? payload : JSON.stringify(payload));
    this.checkSchema(violations, `${where} body`, media.schema as Json, parsed);
    return violations;
  }

  private checkValue(violations: string[], where: string, parameter: Json, sent: string[]): void {
    const schema = (parameter.schema ?? {}) as Json;
    const value = isType(schema, 'array')
      ? sent.map((text) => fromText((schema.items ?? {}) as Json, text))
      : fromText(schema, sent.at(-1) ?? '');
    this.checkSchema(violations, where, schema, value);
  }

  private checkSchema(violations: string[], where: string, schema: Json, value: unknown): void {
    const validate = this.validator(schema);
    if (validate(value)) return;
    const errors = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
      .join('; ');
    violations.push(`${where} does not match the document: ${errors}`);
  }
}

function isType(schema: Json, name: string): boolean {
  return Array.isArray(schema.type) ? schema.type.includes(name) : schema.type === name;
}

/** A parameter's text as the value its schema types it (a gateway coerces query text the same way). */
function fromText(schema: Json, text: string): unknown {
  if ((isType(schema, 'integer') || isType(schema, 'number')) && /^-?\d+(\.\d+)?$/.test(text))
    return Number(text);
  if (isType(schema, 'boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}
