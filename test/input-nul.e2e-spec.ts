// Inputs PostgreSQL refuses: a U+0000 anywhere in a request (JSON body, query string, path) is a 400
// naming the field on every route and both engines — SCIM in its own error schema — and paged or numeric query
// parameters the service cannot honour are 400 naming them, never a 500.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const NUL = '\u0000';

describe('NUL characters and unhonourable query parameters are 400s naming them', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const get = (url: string) =>
    t.request({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const fields = (body: { Errors?: Array<{ Field: string }> }) =>
    (body.Errors ?? []).map((error) => error.Field);

  it.each([
    [
      '/api/v1/mail/ensureSmtpConfiguration',
      {
        Context: { Domain: `contoso${NUL}.example` },
        Host: 'smtp.example.com',
        Port: 25,
        SenderAddress: 'a@contoso.example',
      },
      ['Context.Domain'],
    ],
    [
      '/api/v1/mail/ensureSmtpConfiguration',
      { Context: { Domain: 'x' }, BCC: ['a@b.c', `d${NUL}@e.f`] },
      ['BCC[1]'],
    ],
    [
      '/api/v1/Schedule',
      { Name: `night${NUL}shift`, Pattern: 'FREQ=DAILY', Nested: { [`k${NUL}`]: 1 } },
      ['Name', 'Nested.k\\u0000'],
    ],
    ['/api/v1/Replication/Agent/heartbeat', { ServerId: `s${NUL}` }, ['ServerId']],
  ])('POST %s (case %#) answers 400 naming the field', async (url, body, expected) => {
    const response = await t.post(url, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ Succeeded: false, Code: 'ValidationFailed' });
    expect(fields(response.json())).toEqual(expected);
    expect(response.json().Errors[0].Message).toContain('NUL');
  });

  it('a query parameter or a path segment with a NUL is a 400 naming it', async () => {
    const query = await get('/api/v1/mail/smtpConfigurations?Domain=contoso%00.example');
    expect(query.statusCode).toBe(400);
    expect(fields(query.json())).toEqual(['Domain']);
    const path = await get('/api/v1/Schedule/abc%00def');
    expect(path.statusCode).toBe(400);
    expect(fields(path.json())).toEqual(['id']);
  });

  it('SCIM answers in its own error schema', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/api/v1/scim/Users',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/scim+json' },
      payload: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: `bjensen${NUL}@example.com`,
      }),
    });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toContain('application/scim+json');
    expect(response.json()).toMatchObject({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '400',
      detail: expect.stringContaining('userName'),
    });
    // A lone surrogate is refused the same way (PostgreSQL's jsonb refuses "\ud800"; found by the fuzzer).
    const surrogate = await t.request({
      method: 'POST',
      url: '/api/v1/scim/Users',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/scim+json' },
      payload: '{"userName":"bjensen@example.com","displayName":"Babs","emails":["\\ud800"]}',
    });
    expect(surrogate.statusCode).toBe(400);
    expect(surrogate.json()).toMatchObject({ status: '400', detail: expect.stringContaining('emails[0]') });
    const filter = await get(`/api/v1/scim/Users?filter=${encodeURIComponent(`userName eq "a${NUL}"`)}`);
    expect(filter.statusCode).toBe(400);
    expect(filter.json()).toMatchObject({ status: '400', detail: expect.stringContaining('filter') });
  });

  it('the webhook refuses it before anything else', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/api/v1/webhook/homeprovider/contoso.example',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ lifecycle: `PING${NUL}`, pingData: { challenge: 'x' } }),
    });
    expect(response.statusCode).toBe(400);
    expect(fields(response.json())).toEqual(['lifecycle']);
  });

  it('strings without NUL (other control characters, lone surrogates escaped in JSON) are not refused by it', async () => {
    const response = await t.post('/api/v1/mail/ensureSmtpConfiguration', {
      Context: { Domain: 'tab\there.example' },
    });
    expect(response.statusCode).toBe(400);
    expect(
      response
        .json()
        .Errors.map((error: { Message: string }) => error.Message)
        .join(' '),
    ).not.toContain('NUL');
  });

  it.each([
    ['PageIndex=1e308&PageSize=20', 'PageIndex'],
    ['PageIndex=1000001&PageSize=20', 'PageIndex'],
    ['PageIndex=1&PageSize=1e308', 'PageSize'],
    ['PageIndex=1&PageSize=501', 'PageSize'],
    ['PageIndex=-1', 'PageIndex'],
    ['PageIndex=1.5', 'PageIndex'],
    ['PageIndex=abc', 'PageIndex'],
    ['PageIndex=Infinity', 'PageIndex'],
    ['PageIndex=NaN', 'PageIndex'],
    ['PageSize=0x10', 'PageSize'],
  ])('GET /api/v1/Schedule?%s is a 400 naming %s', async (query, field) => {
    const response = await get(`/api/v1/Schedule?${query}`);
    expect(response.statusCode).toBe(400);
    expect(fields(response.json())).toContain(field);
  });

  it('honourable pages still answer', async () => {
    const response = await get('/api/v1/Schedule?PageIndex=1000000&PageSize=500');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ Succeeded: true, Result: [], PageIndex: 1000000 });
  });
});
