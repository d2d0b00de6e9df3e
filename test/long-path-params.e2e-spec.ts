// Every operation with a path parameter, found in the OpenAPI document (so a new route is covered), called with a
// 300- and a 5,000-character value: the answer is one the document lists for that operation, in the envelope (or
// SCIM's error on /scim routes), never Fastify's own 414 (its default maxParamLength is 100) nor a 500.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

interface Operation {
  method: string;
  path: string;
  responses: Record<string, unknown>;
}

describe('long path parameters', () => {
  let t: TestApp;
  let operations: Operation[];

  beforeAll(async () => {
    t = await startTestApp();
    const document = (await t.request({ method: 'GET', url: '/docs-json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>();
    operations = Object.entries(document.paths)
      .filter(([path]) => path.includes('{'))
      .flatMap(([path, methods]) =>
        Object.entries(methods)
          .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
          .map(([method, operation]) => ({ method, path, responses: operation.responses })),
      );
  });
  afterAll(() => t.close());

  it('finds the operations with a path parameter', () => {
    expect(operations.length).toBeGreaterThanOrEqual(17);
  });

  for (const length of [300, 5_000]) {
    it(`answers a ${length}-character parameter with a documented status and an error body`, async () => {
      const failures: string[] = [];
      for (const { method, path, responses } of operations) {
        const url = path.replaceAll(/\{[^}]+\}/g, 'a'.repeat(length));
        const response = await t.request({
          method: method.toUpperCase(),
          url,
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
          ...(['post', 'put', 'patch'].includes(method) ? { payload: '{}' } : {}),
        });
        const body = response.json<Record<string, unknown>>();
        const scim = path.includes('/scim/');
        const problem =
          response.statusCode === 414 || response.statusCode >= 500
            ? 'bare 414 or 5xx'
            : !(String(response.statusCode) in responses)
              ? 'status not documented'
              : scim
                ? !String(response.headers['content-type']).startsWith('application/scim+json') ||
                  !(body.schemas as string[] | undefined)?.includes(
                    'urn:ietf:params:scim:api:messages:2.0:Error',
                  )
                  ? 'not a SCIM error'
                  : undefined
                : body.Succeeded !== false || typeof body.Code !== 'string'
                  ? 'not the envelope'
                  : undefined;
        if (problem !== undefined)
          failures.push(
            `${method.toUpperCase()} ${path}: ${response.statusCode} ${problem} ${response.body.slice(0, 120)}`,
          );
      }
      expect(failures).toEqual([]);
    });
  }
});
