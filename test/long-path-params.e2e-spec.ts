// Long path parameters: every operation with a path parameter answers an over-long id with the
// route's own answer — the error envelope, or SCIM's error body under /api/v1/scim — never Fastify's bare 414.
// The operations are enumerated from the OpenAPI document the app serves, so a new route is covered.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

interface Document {
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

let t: TestApp;
let operations: Array<{ method: string; path: string; operationId: string; documented: string[] }>;

beforeAll(async () => {
  t = await startTestApp();
  const response = await t.request({ method: 'GET', url: '/docs-json' });
  expect(response.statusCode).toBe(200);
  const document = response.json<Document>();
  operations = Object.entries(document.paths)
    .filter(([path]) => path.includes('{'))
    .flatMap(([path, item]) =>
      METHODS.filter((method) => item[method] !== undefined).map((method) => ({
        method,
        path,
        operationId: item[method]?.operationId ?? `${method} ${path}`,
        documented: Object.keys(item[method]?.responses ?? {}),
      })),
    );
});

afterAll(async () => t?.close());

/** A valid body where the route has one, so the answer is about the id, not the body. */
function bodyFor(method: string, path: string): string {
  const scimPath = path.toLowerCase();
  if (method === 'patch' && scimPath.startsWith('/api/v1/scim/'))
    return JSON.stringify({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', path: 'externalId', value: 'x' }],
    });
  if (method === 'put' && scimPath.startsWith('/api/v1/scim/users/'))
    return JSON.stringify({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'long.path@example.com',
    });
  if (method === 'put' && scimPath.startsWith('/api/v1/scim/groups/'))
    return JSON.stringify({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'Long path',
    });
  return '{}';
}

function url(path: string, id: string): string {
  return path.replace(/\{[^}]+\}/g, id);
}

describe('long path parameters', () => {
  it('the document lists the operations with a path parameter', () => {
    expect(operations.length).toBeGreaterThanOrEqual(17);
  });

  it.each([300, 5_000])(
    'a %i-character id gets the route’s own documented answer on every operation',
    async (length) => {
      const id = 'a'.repeat(length);
      const seen: string[] = [];
      for (const operation of operations) {
        const target = url(operation.path, id);
        const withBody = operation.method !== 'get' && operation.method !== 'delete';
        const response = await t.request({
          method: operation.method.toUpperCase(),
          url: target,
          headers: {
            authorization: `Bearer ${ADMIN_KEY}`,
            ...(withBody
              ? {
                  'content-type': target.startsWith('/api/v1/scim')
                    ? 'application/scim+json'
                    : 'application/json',
                }
              : {}),
          },
          ...(withBody ? { payload: bodyFor(operation.method, operation.path) } : {}),
        });
        const label = `${operation.method.toUpperCase()} ${operation.path}`;
        seen.push(`${label} → ${String(response.statusCode)} ${response.body.slice(0, 160)}`);
        expect([label, response.statusCode]).toEqual([label, expect.any(Number)]);
        expect([label, [400, 401, 404].includes(response.statusCode)]).toEqual([label, true]);
        // The status is one the document declares for the operation.
        expect([label, operation.documented]).toEqual([
          label,
          expect.arrayContaining([String(response.statusCode)]),
        ]);
        const body = response.json<Record<string, unknown>>();
        // The id is named, not echoed whole: no answer grows with it.
        expect([label, response.body.length < 1_000]).toEqual([label, true]);
        if (target.toLowerCase().startsWith('/api/v1/scim')) {
          expect([label, response.headers['content-type']]).toEqual([
            label,
            'application/scim+json; charset=utf-8',
          ]);
          expect([label, body]).toEqual([
            label,
            expect.objectContaining({ schemas: [SCIM_ERROR], status: String(response.statusCode) }),
          ]);
        } else {
          expect([label, response.headers['content-type']]).toEqual([
            label,
            expect.stringMatching(/^application\/json/),
          ]);
          expect([label, body]).toEqual([
            label,
            expect.objectContaining({
              Succeeded: false,
              Message: expect.any(String),
              Code: expect.any(String),
            }),
          ]);
        }
      }
      // Printed once so the OpenAPI document can say which status each operation gives.
      if (length === 300) process.stdout.write(`${seen.join('\n')}\n`);
    },
  );
});
