// The service's HTTP conventions, checked through the real app: routes, binding, envelope, statuses, correlation, logs,
// auth, limits, health, metrics and the OpenAPI document.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { BadProbeModule, ProbeModule } from './support/probe.module.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const GUID = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';

describe('platform conventions', () => {
  let t: TestApp;
  let schedulesKey: string;

  beforeAll(async () => {
    t = await startTestApp({
      extraModules: [ProbeModule],
      env: { BODY_LIMIT: '2kb', CORS_ORIGINS: 'https://ops.example' },
    });
    schedulesKey = (await t.app.get(ApiKeysService).create('schedules-only', ['schedules'])).key;
  });
  afterAll(async () => t.close());

  describe('routes and binding', () => {
    it('matches routes case-insensitively', async () => {
      const lower = await t.post('/api/v1/migration/getmigrationruns', {});
      const upper = await t.post('/API/V1/MIGRATION/GetMigrationRuns', {});
      expect(lower.statusCode).toBe(200);
      expect(upper.statusCode).toBe(200);
      expect(upper.json()).toMatchObject({ Succeeded: true, Code: null, Message: null });
    });

    it('binds request properties case-insensitively at every depth and answers in documented casing', async () => {
      const response = await t.post('/probe/echo', { groups: [{ KEY: 'a', scheduleids: [GUID] }], count: 3 });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ Groups: [{ Key: 'a', ScheduleIds: [GUID] }], Count: 3 });
    });

    it('rejects properties unknown after case-insensitive matching, naming them', async () => {
      const response = await t.post('/probe/echo', {
        Groups: [{ Key: 'a', ScheduleIds: [], Extra: 1 }],
        Count: 1,
        Other: 2,
      });
      expect(response.statusCode).toBe(400);
      const fields = (response.json().Errors as Array<{ Field: string }>).map((error) => error.Field);
      expect(fields).toEqual(expect.arrayContaining(['Groups[0].Extra', 'Other']));
    });
  });

  describe('outcome envelope', () => {
    it('names nested bad fields by path in a 400 ValidationFailed', async () => {
      const response = await t.post('/probe/echo', {
        Groups: [
          { Key: 'a', ScheduleIds: [GUID] },
          { Key: 'b', ScheduleIds: [] },
          { Key: '', ScheduleIds: ['nope'] },
        ],
        Count: 11,
      });
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body).toMatchObject({ Succeeded: false, Code: 'ValidationFailed' });
      const fields = (body.Errors as Array<{ Field: string; Message: string }>).map((error) => error.Field);
      expect(fields).toEqual(expect.arrayContaining(['Groups[2].ScheduleIds[0]', 'Groups[2].Key', 'Count']));
      expect(body.Message).toContain('Groups[2].ScheduleIds[0]');
    });

    it('answers malformed JSON with 400 ValidationFailed', async () => {
      const response = await t.post('/probe/echo', '{"Groups": [');
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ Succeeded: false, Code: 'ValidationFailed' });
    });

    it('answers a non-object body with 400 naming the body', async () => {
      const response = await t.post('/probe/echo', '[1,2]');
      expect(response.statusCode).toBe(400);
      expect(response.json().Code).toBe('ValidationFailed');
    });

    it('answers an unknown route with 404 in the envelope', async () => {
      const response = await t.request({ method: 'GET', url: '/api/v1/nothing-here' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ Succeeded: false, Code: 'NotFound' });
    });

    it('answers a wrong content type with 415', async () => {
      const response = await t.post('/probe/echo', 'Groups=1', { 'content-type': 'text/plain' });
      expect(response.statusCode).toBe(415);
      expect(response.json()).toMatchObject({ Succeeded: false, Code: 'UnsupportedMediaType' });
    });

    it('answers a body over BODY_LIMIT with 413', async () => {
      const response = await t.post('/probe/echo', {
        Groups: [{ Key: 'x'.repeat(4000), ScheduleIds: [] }],
        Count: 1,
      });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toMatchObject({ Succeeded: false, Code: 'PayloadTooLarge' });
    });

    it('answers an unexpected failure with 500, the correlation id and no stack or secret', async () => {
      const response = await t.request({
        method: 'GET',
        url: '/probe/fail',
        headers: { 'x-correlation-id': 'corr-500' },
      });
      expect(response.statusCode).toBe(500);
      const body = response.json();
      expect(body).toMatchObject({ Succeeded: false, Code: 'InternalError', CorrelationId: 'corr-500' });
      expect(response.body).not.toMatch(/hunter2|sekret|at .*\.ts|stack/i);
      const logged = t.logs.filter((line) => line.correlationId === 'corr-500');
      expect(logged.length).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(logged)).not.toContain('sekret-token');
    });
  });

  describe('correlation', () => {
    it('echoes X-Correlation-Id and puts it in every log line of the request', async () => {
      const response = await t.post(
        '/api/v1/migration/getMigrationRuns',
        {},
        { 'x-correlation-id': 'corr-abc-1' },
      );
      expect(response.headers['x-correlation-id']).toBe('corr-abc-1');
      expect(
        t.logs.some((line) => line.correlationId === 'corr-abc-1' && line.message === 'request completed'),
      ).toBe(true);
    });

    it('generates one when absent', async () => {
      const response = await t.post('/api/v1/migration/getMigrationRuns', {});
      expect(response.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('takes Context.CorrelationId from the body when no header is sent', async () => {
      const response = await t.post('/api/v1/migration/getMigrationRuns', {
        context: { correlationId: 'from-body-7' },
      });
      expect(response.headers['x-correlation-id']).toBe('from-body-7');
    });
  });

  describe('authentication', () => {
    it('answers a missing key with 401 in the envelope', async () => {
      const response = await t.request({
        method: 'POST',
        url: '/api/v1/migration/getMigrationRuns',
        payload: {},
      });
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
      expect(response.json()).toMatchObject({ Succeeded: false, Code: 'Unauthorized' });
    });

    it('answers an unknown key with 401 and never logs it', async () => {
      const response = await t.post(
        '/api/v1/migration/getMigrationRuns',
        {},
        { authorization: 'Bearer not-a-real-key-123' },
      );
      expect(response.statusCode).toBe(401);
      expect(JSON.stringify(t.logs)).not.toContain('not-a-real-key-123');
    });

    it('answers a key without the route scope with 403', async () => {
      const response = await t.post(
        '/api/v1/migration/getMigrationRuns',
        {},
        { authorization: `Bearer ${schedulesKey}` },
      );
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ Succeeded: false, Code: 'Forbidden' });
    });

    it('lets a scoped key call its own scope and an API_KEYS key call everything', async () => {
      const wrong = await t.request({
        method: 'GET',
        url: '/probe/mail-only',
        headers: { authorization: `Bearer ${schedulesKey}` },
      });
      const admin = await t.request({
        method: 'GET',
        url: '/probe/mail-only',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(wrong.statusCode).toBe(403);
      expect(admin.statusCode).toBe(200);
    });

    it('makes a route that declares no rule admin-only, and refuses a caller before reading its body', async () => {
      const body = { Groups: [{ Key: 'a', ScheduleIds: [GUID] }], Count: 2 };
      const anonymous = await t.request({
        method: 'POST',
        url: '/probe/undeclared',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      const scoped = await t.post('/probe/undeclared', body, { authorization: `Bearer ${schedulesKey}` });
      const admin = await t.post('/probe/undeclared', body, { authorization: `Bearer ${ADMIN_KEY}` });
      expect([anonymous.statusCode, scoped.statusCode, admin.statusCode]).toEqual([401, 403, 200]);
      expect(admin.json()).toEqual({ ok: true, count: 2 });
      // Authentication comes first: a malformed body from a caller without a key is a 401, not a 400.
      const malformed = await t.request({
        method: 'POST',
        url: '/probe/undeclared',
        headers: { 'content-type': 'application/json' },
        payload: '{"Groups": [',
      });
      expect(malformed.statusCode).toBe(401);
      expect(malformed.json()).toMatchObject({ Code: 'Unauthorized', CorrelationId: expect.any(String) });
      expect(malformed.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    });

    it('answers a CORS preflight without a key', async () => {
      const response = await t.request({
        method: 'OPTIONS',
        url: '/api/v1/migration/getMigrationRuns',
        headers: {
          origin: 'https://ops.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe('https://ops.example');
    });

    it('stops accepting a revoked key', async () => {
      const service = t.app.get(ApiKeysService);
      const { key, record } = await service.create('short-lived', ['migrations']);
      expect(
        (await t.post('/api/v1/migration/getMigrationRuns', {}, { authorization: `Bearer ${key}` }))
          .statusCode,
      ).toBe(200);
      await service.revoke(record.id);
      expect(
        (await t.post('/api/v1/migration/getMigrationRuns', {}, { authorization: `Bearer ${key}` }))
          .statusCode,
      ).toBe(401);
    });
  });

  describe('headers, health and metrics', () => {
    it('sends security headers and the configured CORS origin', async () => {
      const response = await t.request({
        method: 'GET',
        url: '/health/live',
        headers: { origin: 'https://ops.example' },
      });
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['strict-transport-security']).toBeDefined();
      expect(response.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['access-control-allow-origin']).toBe('https://ops.example');
    });

    it('sends the same headers on an unknown path, and a CSP that lets Swagger UI load its assets on /docs', async () => {
      const unknown = await t.request({ method: 'GET', url: '/no/such/path' });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(unknown.headers['x-correlation-id']).toBeDefined();
      const docs = await t.request({ method: 'GET', url: '/docs' });
      expect(docs.statusCode).toBe(200);
      expect(docs.headers['content-security-policy']).toContain("script-src 'self'");
      expect(docs.headers['x-content-type-options']).toBe('nosniff');
      expect(docs.headers['cache-control']).toBeUndefined();
    });

    it('reports liveness and readiness (database reachable) without a key', async () => {
      const live = await t.request({ method: 'GET', url: '/health/live' });
      const ready = await t.request({ method: 'GET', url: '/health/ready' });
      expect(live.statusCode).toBe(200);
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ Status: 'Ready' });
    });

    it('exposes Prometheus request counts and latencies to an admin key only', async () => {
      expect((await t.request({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
      const response = await t.request({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toContain('text/plain');
      expect(response.body).toMatch(
        /http_requests_total\{method="POST",route="\/api\/v1\/migration\/getMigrationRuns",status="200"\} \d+/,
      );
      expect(response.body).toContain('http_request_duration_seconds_bucket');
    });
  });

  describe('OpenAPI', () => {
    it('serves Swagger UI at /docs and the document at /docs-json with tags and operation names', async () => {
      const ui = await t.request({ method: 'GET', url: '/docs' });
      expect(ui.statusCode).toBe(200);
      expect(ui.body).toContain('swagger-ui');
      const document = (await t.request({ method: 'GET', url: '/docs-json' })).json();
      const runs = document.paths['/api/v1/migration/getMigrationRuns'].post;
      const details = document.paths['/api/v1/migration/details'].post;
      expect(runs.operationId).toBe('Migration_GetMigrationRuns');
      expect(details.operationId).toBe('Migration_Details');
      expect(runs.tags).toEqual(['Migration']);
      expect(runs.requestBody.content['application/json'].schema.$ref).toContain('GetMigrationRunsRequest');
      expect(runs.responses['200'].content['application/json'].schema.$ref).toContain(
        'MigrationRunsResponse',
      );
      expect(document.components.schemas.MigrationRunDto.properties.MigrationSource.example).toBeDefined();
      expect(document.components.securitySchemes.bearer).toBeDefined();
    });
  });
});

describe('request time-out', () => {
  it('answers a POST that runs past REQUEST_TIMEOUT_MS with 503 RequestTimeout, over real HTTP', async () => {
    const t = await startTestApp({ extraModules: [ProbeModule], env: { REQUEST_TIMEOUT_MS: '300' } });
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const address = t.app.getHttpServer().address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${address.port}/probe/slow`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ Succeeded: false, Code: 'RequestTimeout' });
    } finally {
      await t.close();
    }
  });
});

describe('slow clients', () => {
  it('closes the connection of a body still trickling in when its 503 time-out answers', async () => {
    const t = await startTestApp({ env: { REQUEST_TIMEOUT_MS: '400' } });
    const socket = new net.Socket();
    let trickle: NodeJS.Timeout | undefined;
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.app.getHttpServer().address() as { port: number };
      const received: Buffer[] = [];
      // The client never stops sending: the connection closes only because the service closes it.
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', resolve));
      socket.write(
        'POST /api/v1/migration/getMigrationRuns HTTP/1.1\r\nHost: x\r\n' +
          `Authorization: Bearer ${ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      );
      // One byte every 50 ms: the client never finishes, and never stops either.
      trickle = setInterval(() => !socket.destroyed && socket.write(' '), 50);
      await closed;
      expect(Buffer.concat(received).toString('latin1')).toMatch(/^HTTP\/1\.1 503 /);
      expect(Buffer.concat(received).toString('latin1')).toContain('"Code":"RequestTimeout"');
    } finally {
      clearInterval(trickle);
      socket.destroy();
      await t.close();
    }
  });
});

describe('DTO rules', () => {
  it('refuse to start when a route DTO uses a decorator the validator cannot check', async () => {
    await expect(startTestApp({ extraModules: [BadProbeModule] })).rejects.toThrow(
      /UncheckableBody\.Name.*ValidateIf/,
    );
  });
});

describe('rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT: '3' } });
  });
  afterAll(async () => t.close());

  it('answers 429 in the envelope with Retry-After once a key spends its budget', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await t.post('/api/v1/migration/getMigrationRuns', {})).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await t.post('/api/v1/migration/getMigrationRuns', {});
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.json()).toMatchObject({ Succeeded: false, Code: 'TooManyRequests' });
  });
});

// http/direct-routes.ts: routes Nest's pipeline would add nothing to are called straight from Fastify. The same
// requests must get the same answers with DIRECT_ROUTES on (the default) and off.
describe('direct routes', () => {
  let direct: TestApp;
  let viaNest: TestApp;
  beforeAll(async () => {
    [direct, viaNest] = await Promise.all([
      startTestApp({ extraModules: [ProbeModule] }),
      startTestApp({ extraModules: [ProbeModule], env: { DIRECT_ROUTES: 'false' } }),
    ]);
  });
  afterAll(async () => Promise.all([direct?.close(), viaNest?.close()]));

  const json = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
  const scim = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/scim+json' };
  const post = (url: string, payload: unknown, headers: Record<string, string> = json): InjectOptions => ({
    method: 'POST',
    url,
    headers,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  const requests: Array<{ name: string; options: InjectOptions }> = [
    {
      name: 'valid body',
      options: post('/probe/echo', { Groups: [{ Key: 'a', ScheduleIds: [GUID] }], Count: 2 }),
    },
    { name: 'invalid body', options: post('/probe/echo', '{"Groups":[{"Key":""}],"Count":0}') },
    { name: 'error thrown', options: { method: 'GET', url: '/probe/fail' } },
    { name: 'no key', options: post('/probe/undeclared', '{}', { 'content-type': 'application/json' }) },
    { name: 'plain value', options: post('/probe/shapes/plain?a=1&b=x', '{"n":1}') },
    { name: 'observable', options: post('/probe/shapes/observable?a=1', '[1]') },
    { name: 'promise', options: post('/probe/shapes/promise', '{}') },
    { name: 'rejected promise', options: post('/probe/shapes/rejected', '{}') },
    { name: 'thrown error', options: post('/probe/shapes/thrown', '{}') },
    { name: 'no value', options: post('/probe/shapes/empty', '{}') },
    { name: 'HEAD of a GET route', options: { method: 'HEAD', url: '/health/live' } },
    { name: 'empty route parameter', options: { method: 'GET', url: '/api/v1/scim/Users/', headers: scim } },
    { name: 'SCIM error', options: { method: 'GET', url: `/api/v1/scim/Users/${GUID}`, headers: scim } },
    {
      name: 'SCIM list',
      options: {
        method: 'GET',
        url: '/api/v1/scim/Users?filter=userName%20eq%20%22nobody%22',
        headers: scim,
      },
    },
    {
      name: 'operation with a documented Code',
      options: post('/api/v1/Occurrence/hasOccurrences/byGroup', {
        Groups: [{ Key: 'g', ScheduleIds: [GUID] }],
        Start: '2026-03-16T08:00:00Z',
        End: '2026-03-16T08:10:00Z',
      }),
    },
    {
      name: 'business outcome thrown by a service',
      options: post('/api/v1/mail/removeSmtpConfiguration', {
        Context: { Domain: 'none.example' },
        Host: 'smtp.none.example',
        Port: 587,
        Username: 'x',
      }),
    },
  ];

  /** What must not differ: status, body, and every header but the date and a generated correlation id. */
  function comparable(response: LightMyRequestResponse): unknown {
    const { date: _date, 'x-correlation-id': _id, ...headers } = response.headers;
    // Generated per app: the correlation id, and any ids and times an answer carries.
    const body = response.body
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
      .replaceAll(String(_id), '<correlation id>');
    return { status: response.statusCode, headers, body };
  }

  it.each(requests)('answers $name as Nest does', async ({ options }) => {
    const [fromDirect, fromNest] = await Promise.all([direct.request(options), viaNest.request(options)]);
    expect(comparable(fromDirect)).toEqual(comparable(fromNest));
  });

  it('keeps Nest pipeline for routes with their own interceptors or guards, and says so at start', async () => {
    const response = await direct.request({ method: 'GET', url: '/probe/intercepted' });
    expect(response.headers['x-probe-stamp']).toBe('nest');
    expect(response.json()).toEqual({ intercepted: true, value: { ok: true } });

    const started = direct.logs.find((line) => String(line.message).includes('routes are called directly'));
    expect(started).toBeDefined();
    expect(started?.direct).toBeGreaterThan(20);
    expect(started?.viaNest).toEqual(
      expect.arrayContaining(['GET /probe/intercepted', 'POST /api/v1/webhook/homeprovider/:domain']),
    );
    expect(started?.viaNest).not.toContain('POST /probe/shapes/:kind');
    expect(viaNest.logs.some((line) => String(line.message).includes('routes are called directly'))).toBe(
      false,
    );
  });
});
