// Test mode only: every answer an e2e spec receives through startTestApp's request()/post() is checked against the
// OpenAPI document the app serves: the status is documented for the operation, the media type is
// documented for that status, the body is valid against the documented schema (ajv, JSON Schema 2020-12 as
// OpenAPI 3.1 uses), and every header the document declares required is present. Violations are collected and
// make the spec fail when its app is closed (test-app.ts), so a new route or answer cannot drift from the document.
// Paths outside /api (health, metrics, /docs, test probes) are not operations of the document and are skipped; a
// request under /api that matches no documented operation is a violation unless it was answered 404 or 405 (a
// route that does not exist).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';

type Json = Record<string, unknown>;
export interface Operation {
  method: string;
  path: string;
  pattern: RegExp;
  params: number;
  responses: Record<string, Json>;
  /** The operation object itself (parameters, requestBody): openapi-request-validator.ts reads it. */
  operation: Json;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export class OpenApiResponseValidator {
  readonly violations: string[] = [];
  protected readonly operations: Operation[] = [];
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<object, ValidateFunction>();

  constructor(document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, logger: false, validateFormats: true });
    addFormats(this.ajv);
    // References of the document (#/components/schemas/X) are resolved against the document itself.
    const components = JSON.parse(
      JSON.stringify(document.components ?? {}).replaceAll('"#/components/', '"openapi#/components/'),
    ) as Json;
    this.ajv.addSchema({ $id: 'openapi', components }, 'openapi');
    for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
      const source = path
        .split(/(\{[^}]+\})/)
        .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
        .join('');
      for (const [method, operation] of Object.entries(item)) {
        const responses = (operation as Json).responses as Record<string, Json> | undefined;
        if (responses === undefined) continue;
        this.operations.push({
          method: method.toUpperCase(),
          path,
          pattern: new RegExp(`^${source}/?$`, 'i'),
          params: (path.match(/\{/g) ?? []).length,
          responses,
          operation: operation as Json,
        });
      }
    }
    // A literal segment wins over a parameter (/Users/.search before /Users/{id}).
    this.operations.sort((a, b) => a.params - b.params);
  }

  check(request: InjectOptions, response: LightMyRequestResponse): void {
    const method = (request.method ?? 'GET').toUpperCase();
    const rawUrl = typeof request.url === 'string' ? request.url : (request.path as string | undefined);
    if (rawUrl === undefined || method === 'OPTIONS') return;
    const path = safeDecodeUri(rawUrl.split('?')[0] ?? '');
    if (!/^\/api\//i.test(path)) return;
    const where = `${method} ${rawUrl.length > 120 ? `${rawUrl.slice(0, 120)}…` : rawUrl} → ${response.statusCode}`;
    const operation = this.operations.find((op) => op.method === method && op.pattern.test(path));
    if (operation === undefined) {
      if (response.statusCode !== 404 && response.statusCode !== 405)
        this.violations.push(`${where}: no documented operation`);
      return;
    }
    const status = String(response.statusCode);
    const documented =
      operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default;
    if (documented === undefined) {
      this.violations.push(`${where}: status not documented for ${operation.method} ${operation.path}`);
      return;
    }
    for (const [name, header] of Object.entries((documented.headers ?? {}) as Record<string, Json>)) {
      if (header.required === true && response.headers[name.toLowerCase()] === undefined)
        this.violations.push(`${where}: declared header ${name} missing`);
    }
    if (method === 'HEAD' || response.statusCode === 204 || response.statusCode === 304) return;
    const content = documented.content as Record<string, Json> | undefined;
    const body = response.rawPayload;
    if (content === undefined || Object.keys(content).length === 0) {
      if (body.length > 0) this.violations.push(`${where}: a body, but no content is documented`);
      return;
    }
    const contentType = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim()
      .toLowerCase();
    const media = contentType === undefined ? undefined : content[contentType];
    if (media === undefined) {
      this.violations.push(
        `${where}: media type ${contentType || '(none)'} not documented (${Object.keys(content).join(', ')})`,
      );
      return;
    }
    if (!/[/+]json$/.test(contentType ?? '') || media.schema === undefined) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      this.violations.push(`${where}: the body is not JSON`);
      return;
    }
    const validate = this.validator(media.schema as Json);
    if (!validate(parsed)) {
      const errors = (validate.errors ?? [])
        .slice(0, 5)
        .map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
        .join('; ');
      this.violations.push(`${where}: body does not match the schema: ${errors}`);
    }
  }

  /** Whether a value is valid against a schema of the document (its references resolved). */
  accepts(schema: Json, value: unknown): boolean {
    return this.validator(schema)(value);
  }

  protected validator(schema: Json): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      const rewritten = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'),
      ) as Json;
      validate = this.ajv.compile(rewritten);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

/** A path that is not valid percent-encoding (answered 400 by the router) is matched as sent. */
function safeDecodeUri(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}
