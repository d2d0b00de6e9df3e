// SCIM request caps: the worst requests a review sent (9,000 filter-path PATCH operations, 20,000 e-mails per
// user, a 240-term filter, NUL characters PostgreSQL cannot store) are now refused with a SCIM 400 before any
// expensive work (the review measured 3.5–15 s for them): each is refused and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from './support/test-app.js';
import { ERROR_SCHEMA, filterQuery, patchBody, scimClient, type ScimClient } from './scim/scim-client.js';
import { scimUserBody } from './scim/scim-user.factory.js';

describe('SCIM request caps refuse the worst requests with a SCIM 400', () => {
  let t: TestApp;
  let scim: ScimClient;
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp();
    scim = scimClient(t);
    const created = await scim.post('/Users', scimUserBody());
    expect(created.statusCode).toBe(201);
    userId = created.json<{ id: string }>().id;
  });
  afterAll(async () => t.close());

  async function sent(request: () => Promise<{ statusCode: number; json(): unknown }>) {
    const response = await request();
    return { response, body: response.json() as Record<string, unknown> };
  }

  function expectRefused(body: Record<string, unknown>, scimType: string): void {
    expect(body).toEqual({ schemas: [ERROR_SCHEMA], status: '400', scimType, detail: expect.any(String) });
  }

  it('refuses a PATCH with 9,000 filter-path operations at the 1,000-operation cap', async () => {
    const operations = Array.from({ length: 9000 }, (_, index) => ({
      op: 'replace',
      path: `emails[value eq "nobody${String(index)}@example.com"].display`,
      value: 'x',
    }));
    const { response, body } = await sent(() => scim.patch(`/Users/${userId}`, patchBody(...operations)));
    expect(response.statusCode).toBe(400);
    expectRefused(body, 'invalidValue');
    expect(body.detail).toContain('1000');
  });

  it('refuses 20,000 e-mails on create and in a PATCH, also as slices under the per-attribute cap', async () => {
    const emails = Array.from({ length: 20_000 }, (_, index) => ({ value: `m${String(index)}@example.com` }));
    const created = await sent(() => scim.post('/Users', scimUserBody({ emails })));
    expect(created.response.statusCode).toBe(400);
    expectRefused(created.body, 'invalidValue');
    const patched = await sent(() =>
      scim.patch(`/Users/${userId}`, patchBody({ op: 'add', path: 'emails', value: emails })),
    );
    expect(patched.response.statusCode).toBe(400);
    expectRefused(patched.body, 'invalidValue');
    // Many operations that each stay under the per-attribute cap cannot add up either.
    const slices = Array.from({ length: 30 }, (_, index) => ({
      op: 'add',
      path: 'emails',
      value: emails.slice(index * 100, index * 100 + 100),
    }));
    const sliced = await sent(() => scim.patch(`/Users/${userId}`, patchBody(...slices)));
    expect(sliced.response.statusCode).toBe(400);
    const user = await scim.get(`/Users/${userId}`);
    expect(user.json<{ emails: unknown[] }>().emails).toHaveLength(1);
  });

  it('refuses a 240-term filter with tooMany, on Users and Groups', async () => {
    const filter = Array.from({ length: 240 }, (_, index) => `emails.value co "x${String(index)}"`).join(
      ' or ',
    );
    const users = await sent(() => scim.get(filterQuery(filter)));
    expect(users.response.statusCode).toBe(400);
    expectRefused(users.body, 'tooMany');
    const groupFilter = Array.from({ length: 240 }, (_, index) => `displayName eq "g${String(index)}"`).join(
      ' or ',
    );
    const groups = await sent(() => scim.get(`/Groups?filter=${encodeURIComponent(groupFilter)}`));
    expect(groups.response.statusCode).toBe(400);
    expectRefused(groups.body, 'tooMany');
    // 100 terms are still served.
    const hundred = Array.from({ length: 100 }, (_, index) => `userName eq "u${String(index)}"`).join(' or ');
    expect((await scim.get(filterQuery(hundred))).statusCode).toBe(200);
  });

  it('refuses NUL characters with 400 naming the attribute, on both engines', async () => {
    const user = await sent(() => scim.post('/Users', scimUserBody({ displayName: 'a\u0000b' })));
    expect(user.response.statusCode).toBe(400);
    // Refused by the platform's one NUL check for every route (src/validation/nul-characters.ts), before SCIM's
    // own parsing: SCIM answers a platform 400 as invalidSyntax.
    expectRefused(user.body, 'invalidSyntax');
    expect(user.body.detail).toContain('displayName');
    const name = await scim.post('/Users', scimUserBody({ userName: 'nul\u0000@example.com' }));
    expect(name.statusCode).toBe(400);
    const patched = await scim.patch(
      `/Users/${userId}`,
      patchBody({ op: 'replace', path: 'title', value: '\u0000' }),
    );
    expect(patched.statusCode).toBe(400);
    const group = await scim.post('/Groups', { displayName: 'g\u0000' });
    expect(group.statusCode).toBe(400);
    expect(group.json<{ detail: string }>().detail).toContain('displayName');
    expect((await scim.get(filterQuery('userName eq "a\u0000"'))).statusCode).toBe(400);
    expect(
      (await scim.get(`/Groups?filter=${encodeURIComponent('displayName eq "a\u0000"')}`)).statusCode,
    ).toBe(400);
  });
});
