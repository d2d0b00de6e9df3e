// Schema-driven fuzzing: seeded requests built from the OpenAPI document at /docs-json, over every
// operation — bodies that follow the schema and then break it (wrong types, nulls, huge and unicode strings, NUL
// characters, extra and missing properties, arrays for objects, boundary numbers and dates), malformed JSON, wrong
// content types, and fuzzed path and query parameters. No answer may be a 5xx, and the service must still be alive
// at the end. A failure prints its reproducer (seed, index, method, URL, headers, body).
//   FUZZ_SEED=<n> FUZZ_REQUESTS=<n>: replay or lengthen a run (defaults: seed 20261125; 5,000 requests on SQLite,
//   1,500 on PostgreSQL, where CI runs the suite a second time).
// Nothing leaves loopback: SMTP hosts and ports are drawn from values that are refused or answered on this machine
// at once, never from names a resolver would be asked about.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const POSTGRES = (process.env.DATABASE_URL ?? '').startsWith('postgres');
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? (POSTGRES ? 1_500 : 5_000));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: Json[];
  format?: string;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  example?: Json;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  schema?: Schema;
}
interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  mediaType: string | undefined;
  body: Schema | undefined;
}
interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
}

/** mulberry32: a small seeded generator, so a run can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const EVIL: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0.000001,
  1e308,
  -1e308,
  2 ** 53 + 1,
  2 ** 31,
  '',
  ' ',
  'a'.repeat(100_000),
  'é'.repeat(5_000),
  '𝒜😀\u202e\u0301\ufeff',
  '\u0000',
  'x\u0000y',
  '\ud800',
  '2026-02-30T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:60Z',
  '+275760-09-13T00:00:00Z',
  '2026-01-01',
  'NaN',
  'Infinity',
  '-0',
  '1e308',
  '../../etc/passwd',
  "'; DROP TABLE schedules; --",
  '%00%2e%2e',
  'FREQ=SECONDLY;COUNT=999999999',
  'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30',
  [],
  [null],
  Array.from({ length: 2_000 }, (_, i) => i),
  {},
  { a: { b: { c: [{}] } } },
  { __proto__: { polluted: true } },
];
/** Values for fields that name a network destination: refused or answered at once on loopback. */
const HOSTS: Json[] = ['127.0.0.1', '::1', '0.0.0.0', '', 'bad host!', null, 42, 'a'.repeat(300), '[::1]'];
const PORTS: Json[] = [1, 0, -1, 65_536, 1.5, '25', null, 1e308];
/** A long poll's wait (replication): zero, or values it must refuse; a real wait would only make the run slow. */
const WAITS: Json[] = [0, -1, 1e308, 0.5, 'x', null, 2 ** 31];
/** Fields whose values are drawn from their own lists (the first entry is the valid one used unmutated). */
const OVERRIDES: Array<[RegExp, Json[]]> = [
  [/^host$/i, HOSTS],
  [/port$/i, PORTS],
  [/^waitseconds$/i, WAITS],
];
const overrideOf = (name: string): Json[] | undefined =>
  OVERRIDES.find(([pattern]) => pattern.test(name))?.[1];
const RAW_BODIES = [
  '{',
  '[]',
  'null',
  '"x"',
  '{"a":',
  '\u0000',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '['.repeat(10_000),
  '{"a":1,"a":2}',
  '\ufeff{}',
  '{"Start":"2026-01-01T00:00:00Z"}garbage',
];
const CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/jsonx',
];

/** Percent-encodes text; a lone surrogate (which encodeURIComponent refuses) goes as U+FFFD. */
const pct = (text: string): string => encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'));

class Fuzzer {
  constructor(
    private readonly rng: () => number,
    private readonly schemas: Record<string, Schema>,
  ) {}

  pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.rng() * values.length)];
  }

  chance(p: number): boolean {
    return this.rng() < p;
  }

  resolve(schema: Schema | undefined): Schema {
    let current = schema ?? {};
    for (let hops = 0; current.$ref !== undefined && hops < 10; hops++) {
      current = this.schemas[current.$ref.split('/').at(-1)!] ?? {};
    }
    if (current.allOf) return Object.assign({}, ...current.allOf.map((part) => this.resolve(part))) as Schema;
    const options = current.oneOf ?? current.anyOf;
    return options ? this.resolve(this.pick(options)) : current;
  }

  /** A value the schema admits, or close to it. */
  valid(schema: Schema | undefined, name = '', depth = 0): Json {
    const own = overrideOf(name);
    if (own) return own[0];
    const resolved = this.resolve(schema);
    if (resolved.example !== undefined && this.chance(0.5)) return structuredClone(resolved.example);
    if (resolved.enum) return this.pick(resolved.enum);
    const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type;
    if (type === 'object' || resolved.properties) {
      const value: Record<string, Json> = {};
      if (depth > 6) return value;
      for (const [key, property] of Object.entries(resolved.properties ?? {})) {
        if ((resolved.required ?? []).includes(key) || this.chance(0.6))
          value[key] = this.valid(property, key, depth + 1);
      }
      return value;
    }
    if (type === 'array') {
      return depth > 6
        ? []
        : Array.from({ length: Math.floor(this.rng() * 4) }, () =>
            this.valid(resolved.items, name, depth + 1),
          );
    }
    if (type === 'integer') return Math.floor(this.rng() * 100);
    if (type === 'number') return this.rng() * 100;
    if (type === 'boolean') return this.chance(0.5);
    if (resolved.format === 'uuid') return randomUUID();
    if (resolved.format === 'date-time')
      return new Date(Date.UTC(2026, 0, 1) + Math.floor(this.rng() * 1e10)).toISOString();
    return this.pick(['acme', 'x', 'Weekly', 'user@example.com', 'FREQ=WEEKLY;BYDAY=MO', 'Europe/Berlin']);
  }

  /** Breaks a valid value in 1–3 places: an evil value, a removed or added property, an array for an object. */
  mutate(value: Json): Json {
    let result = structuredClone(value);
    const times = 1 + Math.floor(this.rng() * 3);
    for (let i = 0; i < times; i++) result = this.mutateOnce(result, 0);
    return result;
  }

  private mutateOnce(value: Json, depth: number): Json {
    const descend = depth < 8 && this.chance(0.65);
    if (descend && Array.isArray(value) && value.length > 0) {
      const index = Math.floor(this.rng() * value.length);
      value[index] = this.mutateOnce(value[index], depth + 1);
      return value;
    }
    if (descend && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const keys = Object.keys(value);
      if (keys.length > 0) {
        const key = this.pick(keys);
        const own = overrideOf(key);
        if (own) value[key] = this.pick(own);
        else if (this.chance(0.15)) delete value[key];
        else value[key] = this.mutateOnce(value[key], depth + 1);
        return value;
      }
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && this.chance(0.3)) {
      value[this.pick(['Extra', 'unknownProperty', '__proto__', 'constructor', ''])] = this.pick(EVIL);
      return value;
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && this.chance(0.2))
      return [value];
    return structuredClone(this.pick(EVIL));
  }

  scalarText(): string {
    const value = this.pick(EVIL);
    return typeof value === 'string' ? value.slice(0, 2_000) : JSON.stringify(value).slice(0, 2_000);
  }

  request(operation: Operation): FuzzRequest {
    const headers: Record<string, string> = {};
    if (this.chance(0.93)) headers.authorization = `Bearer ${ADMIN_KEY}`;
    const path = operation.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
      if (this.chance(0.6)) return name === 'domain' ? 'acme' : randomUUID();
      return pct(this.scalarText().slice(0, 300)) || 'x';
    });
    const query = operation.parameters
      .filter((parameter) => parameter.in === 'query' && this.chance(0.7))
      .map((parameter) => {
        const valid = this.valid(parameter.schema, parameter.name);
        const text = this.chance(0.6)
          ? this.scalarText()
          : typeof valid === 'string'
            ? valid
            : JSON.stringify(valid);
        return `${pct(parameter.name)}=${pct(text)}`;
      });
    if (this.chance(0.05)) query.push(`${pct(this.scalarText().slice(0, 50))}=1`);
    const url = query.length > 0 ? `${path}?${query.join('&')}` : path;
    if (operation.mediaType === undefined)
      return { method: operation.method, url, headers, payload: undefined };
    const mode = this.rng();
    if (mode < 0.12) {
      headers['content-type'] = operation.mediaType;
      return { method: operation.method, url, headers, payload: this.pick(RAW_BODIES) };
    }
    headers['content-type'] = mode < 0.2 ? this.pick(CONTENT_TYPES) : operation.mediaType;
    const valid = this.valid(operation.body);
    const body = mode < 0.4 ? valid : this.mutate(valid);
    return { method: operation.method, url, headers, payload: JSON.stringify(body) };
  }
}

let t: TestApp;
let operations: Operation[];
let schemas: Record<string, Schema>;

beforeAll(async () => {
  // The rate limit and request time-out stay as deployed; only the database is the test's.
  t = await startTestApp({ env: { LOG_LEVEL: 'fatal' } });
  const document = (await t.request({ method: 'GET', url: '/docs-json' })).json<{
    paths: Record<
      string,
      Record<
        string,
        {
          operationId: string;
          parameters?: Parameter[];
          requestBody?: { content: Record<string, { schema: Schema }> };
        }
      >
    >;
    components: { schemas: Record<string, Schema> };
  }>();
  schemas = document.components.schemas;
  operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const content = operation.requestBody?.content;
      const mediaType = content ? Object.keys(content)[0] : undefined;
      return {
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        parameters: operation.parameters ?? [],
        mediaType,
        body: mediaType ? content![mediaType].schema : undefined,
      };
    }),
  );
}, 60_000);

afterAll(async () => {
  await t.close();
});

function reproducer(index: number, request: FuzzRequest, status: number, answer: string): string {
  const body = request.payload === undefined ? '' : request.payload.slice(0, 600);
  return [
    `FUZZ_SEED=${SEED} request #${index}: ${request.method} ${request.url.slice(0, 600)} → ${status}`,
    `  headers: ${JSON.stringify(request.headers)}`,
    `  body (${request.payload?.length ?? 0} chars): ${body}`,
    `  answer: ${answer.slice(0, 300)}`,
  ].join('\n');
}

describe(`schema-driven fuzzing (seed ${SEED}, ${REQUESTS} requests)`, () => {
  it('answers every request without a 5xx, over every operation, and stays alive', async () => {
    const fuzzer = new Fuzzer(random(SEED), schemas);
    const failures: string[] = [];
    const seen = new Set<string>();
    const statuses = new Map<number, number>();
    const perOperation = new Map<string, number>();
    let slowest = { took: 0, what: '' };
    for (let index = 0; index < REQUESTS; index++) {
      // Every operation in turn, so each gets its share whatever the seed.
      const operation = operations[index % operations.length];
      const request = fuzzer.request(operation);
      const began = performance.now();
      const response = await t.request({
        method: request.method,
        url: request.url,
        headers: request.headers,
        ...(request.payload === undefined ? {} : { payload: request.payload }),
      });
      seen.add(operation.operationId);
      const took = performance.now() - began;
      if (took > slowest.took)
        slowest = { took, what: reproducer(index, request, response.statusCode, response.body) };
      perOperation.set(operation.operationId, (perOperation.get(operation.operationId) ?? 0) + took);
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
      if (response.statusCode >= 500)
        failures.push(reproducer(index, request, response.statusCode, response.body));
    }
    const costly = [...perOperation].sort((a, b) => b[1] - a[1]).slice(0, 3);
    console.log(
      `fuzz: ${REQUESTS} requests; most time in ${costly.map(([id, ms]) => `${id} ${Math.round(ms)} ms`).join(', ')}; ` +
        `slowest ${Math.round(slowest.took)} ms:\n${slowest.what}`,
    );
    if (failures.length > 0)
      console.error(`${failures.length} fuzz failures:\n${failures.slice(0, 20).join('\n')}`);
    expect(failures).toEqual([]);
    expect(seen.size).toBe(operations.length);
    // Most requests must get past authentication into validation, or the run proves little.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(REQUESTS / 3);
    const live = await t.request({ method: 'GET', url: '/health/live' });
    expect(live.statusCode).toBe(200);
  }, 120_000);
});
