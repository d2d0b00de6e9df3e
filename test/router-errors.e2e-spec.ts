// Answers the router and Node's HTTP parser make before any route runs: in the envelope (SCIM's
// error on SCIM paths) with X-Correlation-Id, as documented; and operation 1, public by default, refuses a key that
// is sent but unknown (no key stays allowed).
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.getHttpServer().address() as { port: number }).port;
});

afterAll(async () => {
  await t?.close();
});

/** A GET over real HTTP (the request head never reaches inject's router-free path). */
function get(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

describe('router-made answers', () => {
  it('a path that is not valid percent-encoding: 400 envelope naming the path, with X-Correlation-Id', async () => {
    const response = await t.request({
      method: 'GET',
      url: '/api/v1/Schedule/%E0%A4%A',
      headers: { 'x-correlation-id': 'bad-url-1' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.headers['x-correlation-id']).toBe('bad-url-1');
    expect(response.json()).toEqual({
      Succeeded: false,
      Message: expect.stringContaining('percent-encoding'),
      Code: 'ValidationFailed',
      Errors: [{ Field: 'path', Message: expect.any(String) }],
      CorrelationId: 'bad-url-1',
    });
  });

  it("on a SCIM path it is SCIM's error, as application/scim+json", async () => {
    const response = await t.request({ method: 'GET', url: '/api/v1/scim/Users/%E0%A4%A' });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(typeof response.headers['x-correlation-id']).toBe('string');
    expect(response.json()).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '400',
      scimType: 'invalidSyntax',
      detail: expect.stringContaining('percent-encoding'),
    });
  });

  it('a request head over 64 KiB: 431 envelope with X-Correlation-Id (on SCIM paths too)', async () => {
    const big = { 'x-padding': 'a'.repeat(70 * 1024) };
    const platform = await get('/api/v1/Schedule', big);
    expect(platform.status).toBe(431);
    expect(typeof platform.headers['x-correlation-id']).toBe('string');
    expect(JSON.parse(platform.body)).toMatchObject({
      Succeeded: false,
      Code: 'RequestHeaderFieldsTooLarge',
      CorrelationId: platform.headers['x-correlation-id'],
    });
    const scim = await get('/api/v1/scim/Users', big);
    expect(scim.status).toBe(431);
    expect(JSON.parse(scim.body)).toMatchObject({ Code: 'RequestHeaderFieldsTooLarge' });
    // Documented on every operation.
    const document = (await t.request({ method: 'GET', url: '/docs-json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>();
    const without = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.responses['431'] === undefined)
        .map(([method]) => `${method} ${path}`),
    );
    expect(without).toEqual([]);
  });
});

describe('operation 1 with a key', () => {
  const body = {
    Groups: [{ Key: 'a', ScheduleIds: [] }],
    Start: '2026-03-16T08:00:00Z',
    End: '2026-03-16T09:00:00Z',
  };
  const send = (headers: Record<string, string>) =>
    t.request({
      method: 'POST',
      url: '/api/v1/Occurrence/hasOccurrences/byGroup',
      headers: { 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });

  it('without a key is answered (public by default)', async () => {
    expect((await send({})).statusCode).toBe(200);
  });

  it('with an unknown key is 401, as documented', async () => {
    const response = await send({ authorization: 'Bearer not-a-key-of-this-service' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ Succeeded: false, Code: 'Unauthorized' });
  });
});
