// SCIM bodies as RFC 7644 shapes them — `schemas` is an array in every body, the root
// `/.search` (§3.4.3), Entra's unqualified `manager`, and `roles` whose `Id`/`value` and `DisplayName`/`display`
// are what `/Schemas` says they are.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { CORE_USER, ERROR_SCHEMA, PATCH_OP, patchBody, scimClient, type ScimClient } from './scim-client.js';
import { scimUserBody } from './scim-user.factory.js';

const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const SEARCH_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

let t: TestApp;
let scim: ScimClient;
let userId: string;
let groupId: string;

beforeAll(async () => {
  t = await startTestApp();
  scim = scimClient(t);
  const user = await scim.post('/Users', scimUserBody());
  expect(user.statusCode).toBe(201);
  userId = user.json<{ id: string }>().id;
  const group = await scim.post('/Groups', { schemas: [CORE_GROUP], displayName: 'Contract group' });
  expect(group.statusCode).toBe(201);
  groupId = group.json<{ id: string }>().id;
});

afterAll(async () => t?.close());

describe('schemas must be an array in every body', () => {
  const notArrays: unknown[] = [{ '0': CORE_USER }, CORE_USER, 1, true, null, [1]];

  function bodies(
    schemas: unknown,
  ): Array<[string, 'POST' | 'PUT' | 'PATCH', string, Record<string, unknown>]> {
    return [
      ['create user', 'POST', '/Users', { ...scimUserBody(), schemas }],
      ['replace user', 'PUT', `/Users/${userId}`, { ...scimUserBody(), schemas }],
      [
        'patch user',
        'PATCH',
        `/Users/${userId}`,
        { ...patchBody({ op: 'replace', path: 'title', value: 'x' }), schemas },
      ],
      ['search users', 'POST', '/Users/.search', { schemas, count: 1 }],
      ['create group', 'POST', '/Groups', { schemas, displayName: `G ${String(Math.random())}` }],
      ['replace group', 'PUT', `/Groups/${groupId}`, { schemas, displayName: 'Contract group' }],
      [
        'patch group',
        'PATCH',
        `/Groups/${groupId}`,
        { ...patchBody({ op: 'replace', path: 'externalId', value: 'x' }), schemas },
      ],
      ['search groups', 'POST', '/Groups/.search', { schemas, count: 1 }],
      ['search root', 'POST', '/.search', { schemas, count: 1 }],
    ];
  }

  it.each(notArrays.map((value) => [JSON.stringify(value), value]))(
    'schemas %s is 400 invalidSyntax',
    async (_label, value) => {
      for (const [label, method, path, body] of bodies(value)) {
        // Also under another letter case of the member name (request members match case-insensitively).
        for (const sent of [body, renameSchemas(body)]) {
          const response = await scim.request(method, path, sent);
          expect([label, response.statusCode]).toEqual([label, 400]);
          expect([label, response.headers['content-type']]).toEqual([
            label,
            'application/scim+json; charset=utf-8',
          ]);
          expect([label, response.json()]).toEqual([
            label,
            {
              schemas: [ERROR_SCHEMA],
              status: '400',
              scimType: 'invalidSyntax',
              detail: expect.stringContaining('schemas'),
            },
          ]);
        }
      }
    },
  );

  it('an array of URNs (and, as before, no schemas at all) is accepted', async () => {
    const ok: Array<[string, 'POST' | 'PUT' | 'PATCH', string, Record<string, unknown>, number]> = [
      ['create user', 'POST', '/Users', scimUserBody(), 201],
      ['replace user', 'PUT', `/Users/${userId}`, { ...scimUserBody(), schemas: [CORE_USER] }, 200],
      [
        'patch user',
        'PATCH',
        `/Users/${userId}`,
        patchBody({ op: 'replace', path: 'title', value: 'x' }),
        200,
      ],
      ['search users', 'POST', '/Users/.search', { schemas: [SEARCH_REQUEST], count: 1 }, 200],
      ['search groups', 'POST', '/Groups/.search', { schemas: [SEARCH_REQUEST], count: 1 }, 200],
      ['search root', 'POST', '/.search', { schemas: [SEARCH_REQUEST], count: 1 }, 200],
      ['search users without schemas', 'POST', '/Users/.search', { count: 1 }, 200],
      [
        'patch group',
        'PATCH',
        `/Groups/${groupId}`,
        { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'externalId', value: 'y' }] },
        204,
      ],
    ];
    for (const [label, method, path, body, status] of ok) {
      const response = await scim.request(method, path, body);
      expect([label, response.statusCode]).toEqual([label, status]);
    }
  });
});

function renameSchemas(body: Record<string, unknown>): Record<string, unknown> {
  const { schemas, ...rest } = body;
  return { ...rest, Schemas: schemas };
}

describe('POST /.search at the SCIM root (RFC 7644 §3.4.3)', () => {
  const tag = `root${String(Date.now())}`;
  let users: string[];
  let groups: string[];

  beforeAll(async () => {
    users = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await scim.post('/Users', scimUserBody({ externalId: `${tag}-u${String(index)}` }));
      users.push(response.json<{ id: string }>().id);
    }
    groups = [];
    for (let index = 0; index < 2; index += 1) {
      const response = await scim.post('/Groups', {
        schemas: [CORE_GROUP],
        displayName: `${tag} group ${String(index)}`,
        externalId: `${tag}-g${String(index)}`,
        members: [{ value: users[0] }],
      });
      groups.push(response.json<{ id: string }>().id);
    }
  });

  const search = (body: Record<string, unknown>) =>
    scim.post('/.search', { schemas: [SEARCH_REQUEST], ...body });

  it('lists users, then groups, matching a filter both types define', async () => {
    const response = await search({ filter: `externalId sw "${tag}-"` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/scim+json; charset=utf-8');
    const list = response.json<{
      Resources: Array<{ id: string; schemas: string[]; meta: { resourceType: string } }>;
    }>();
    expect(list).toMatchObject({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 5,
      startIndex: 1,
      itemsPerPage: 5,
    });
    expect(list.Resources.map((resource) => resource.id)).toEqual([...users, ...groups]);
    expect(list.Resources.map((resource) => resource.meta.resourceType)).toEqual([
      'User',
      'User',
      'User',
      'Group',
      'Group',
    ]);
  });

  it('pages over the whole list (the page that spans both types too)', async () => {
    const all = [...users, ...groups];
    for (const [startIndex, count] of [
      [1, 2],
      [3, 2],
      [4, 1],
      [5, 10],
      [6, 10],
      [2, 0],
    ]) {
      const response = await search({ filter: `externalId sw "${tag}-"`, startIndex, count });
      expect(response.statusCode).toBe(200);
      const list = response.json<{
        totalResults: number;
        itemsPerPage: number;
        Resources: Array<{ id: string }>;
      }>();
      const expected = all.slice(startIndex - 1, startIndex - 1 + count);
      expect([startIndex, count, list.totalResults, list.Resources.map((resource) => resource.id)]).toEqual([
        startIndex,
        count,
        5,
        expected,
      ]);
      expect(list.itemsPerPage).toBe(expected.length);
    }
  });

  it('applies a filter to the types that define its attributes (userName: users only; members: groups only)', async () => {
    const byUserName = await search({
      filter: `externalId eq "${tag}-u1" or userName eq "nobody@example.com"`,
    });
    expect(byUserName.statusCode).toBe(200);
    expect(
      byUserName.json<{ Resources: Array<{ id: string }> }>().Resources.map((resource) => resource.id),
    ).toEqual([users[1]]);
    const byMember = await search({ filter: `members eq "${users[0]}"` });
    expect(byMember.statusCode).toBe(200);
    expect(
      byMember.json<{ Resources: Array<{ id: string }> }>().Resources.map((resource) => resource.id),
    ).toEqual(groups);
  });

  it('projects each type with the names it defines; names of neither type, a bad filter, sortBy are 400', async () => {
    const projected = await search({
      filter: `externalId sw "${tag}-"`,
      attributes: ['userName', 'displayName'],
    });
    expect(projected.statusCode).toBe(200);
    const resources = projected.json<{ Resources: Array<Record<string, unknown>> }>().Resources;
    expect(Object.keys(resources[0]).sort()).toEqual(['displayName', 'id', 'schemas', 'userName']);
    expect(Object.keys(resources[3]).sort()).toEqual(['displayName', 'id', 'schemas']);

    for (const [body, scimType] of [
      [{ attributes: ['urn:example:params:scim:schemas:Other:name'] }, 'invalidValue'],
      [{ filter: 'noSuchAttribute eq "x"' }, 'invalidFilter'],
      [{ filter: 'userName eq' }, 'invalidFilter'],
      [{ sortBy: 'id' }, 'invalidValue'],
      [{ count: 'many' }, 'invalidValue'],
    ] as const) {
      const response = await search(body);
      expect([body, response.statusCode, response.json()]).toEqual([
        body,
        400,
        { schemas: [ERROR_SCHEMA], status: '400', scimType, detail: expect.any(String) },
      ]);
    }
  });

  it('answers POST only (405 with Allow otherwise)', async () => {
    const response = await scim.get('/.search');
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
  });
});

describe('Entra ID’s unqualified manager', () => {
  const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

  async function newUser(): Promise<string> {
    const response = await scim.post('/Users', scimUserBody());
    expect(response.statusCode).toBe(201);
    return response.json<{ id: string }>().id;
  }

  it.each([
    ['a string', (id: string) => id],
    ['{value}', (id: string) => ({ value: id })],
  ])('PATCH Add path "manager" with %s sets the enterprise manager', async (_label, valueOf) => {
    const managerId = await newUser();
    const reportId = await newUser();
    const response = await scim.patch(`/Users/${reportId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'manager', value: valueOf(managerId) }],
    });
    expect(response.statusCode).toBe(200);
    const user = response.json<Record<string, unknown>>();
    expect(user.schemas).toEqual([CORE_USER, ENTERPRISE]);
    expect(user[ENTERPRISE]).toMatchObject({ manager: { value: managerId } });
    const read = await scim.get(`/Users/${reportId}`);
    expect(read.json<Record<string, unknown>>()[ENTERPRISE]).toMatchObject({ manager: { value: managerId } });

    // Replace and the sub-attribute unqualified too; "" removes it (as the qualified path does).
    const other = await newUser();
    const replaced = await scim.patch(
      `/Users/${reportId}`,
      patchBody({ op: 'Replace', path: 'manager.value', value: other }),
    );
    expect(replaced.json<Record<string, unknown>>()[ENTERPRISE]).toMatchObject({ manager: { value: other } });
    const removed = await scim.patch(
      `/Users/${reportId}`,
      patchBody({ op: 'Replace', path: 'manager', value: '' }),
    );
    expect(removed.statusCode).toBe(200);
    expect(removed.json<Record<string, unknown>>()[ENTERPRISE]).toBeUndefined();
  });

  it('filters by manager eq "<id>" (and manager.value) unqualified', async () => {
    const managerId = await newUser();
    const reports = [await newUser(), await newUser()];
    for (const id of reports) {
      const response = await scim.patch(
        `/Users/${id}`,
        patchBody({ op: 'Add', path: 'manager', value: managerId }),
      );
      expect(response.statusCode).toBe(200);
    }
    for (const filter of [
      `manager eq "${managerId}"`,
      `manager.value eq "${managerId}"`,
      `${ENTERPRISE}:manager eq "${managerId}"`,
    ]) {
      const list = await scim.get(`/Users?filter=${encodeURIComponent(filter)}`);
      expect([filter, list.statusCode]).toEqual([filter, 200]);
      expect([
        filter,
        list
          .json<{ Resources: Array<{ id: string }> }>()
          .Resources.map((user) => user.id)
          .sort(),
      ]).toEqual([filter, [...reports].sort()]);
    }
  });

  it('an unqualified name neither the core schema nor an extension defines is still invalidPath / invalidFilter', async () => {
    const id = await newUser();
    const patched = await scim.patch(
      `/Users/${id}`,
      patchBody({ op: 'Add', path: 'supervisor', value: 'x' }),
    );
    expect(patched.statusCode).toBe(400);
    expect(patched.json()).toMatchObject({ scimType: 'invalidPath' });
    const listed = await scim.get(`/Users?filter=${encodeURIComponent('supervisor eq "x"')}`);
    expect(listed.statusCode).toBe(400);
    expect(listed.json()).toMatchObject({ scimType: 'invalidFilter' });
  });
});

describe('roles: Id/value and DisplayName/display are one attribute each, as /Schemas says', () => {
  it('/Schemas describes Id and DisplayName as readOnly mirrors of value and display', async () => {
    const response = await scim.get(`/Schemas/${CORE_USER}`);
    expect(response.statusCode).toBe(200);
    const roles = response
      .json<{
        attributes: Array<{
          name: string;
          subAttributes?: Array<{ name: string; description: string; mutability: string }>;
        }>;
      }>()
      .attributes.find((attribute) => attribute.name === 'roles');
    const sub = (name: string) => roles?.subAttributes?.find((attribute) => attribute.name === name);
    expect(sub('Id')).toMatchObject({
      mutability: 'readOnly',
      description: expect.stringMatching(/Mirrors value.*value wins/s),
    });
    expect(sub('DisplayName')).toMatchObject({
      mutability: 'readOnly',
      description: expect.stringMatching(/Mirrors display.*display wins/s),
    });
  });

  it('a body giving both names the same value (an echoed GET) is accepted and read back', async () => {
    const role = {
      Id: 'admin',
      DisplayName: 'Administrator',
      value: 'admin',
      display: 'Administrator',
      type: 't',
    };
    const created = await scim.post('/Users', scimUserBody({ roles: [role] }));
    expect(created.statusCode).toBe(201);
    expect(created.json<{ roles: unknown[] }>().roles).toEqual(
      [{ ...role, primary: undefined }].map(({ primary: _p, ...rest }) => rest),
    );
  });

  it.each<[string, Record<string, string>, { value: string; display?: string }]>([
    ['Id and value', { Id: 'a', value: 'b' }, { value: 'b' }],
    ['DisplayName and display', { value: 'a', DisplayName: 'A', display: 'B' }, { value: 'a', display: 'B' }],
    ['value and Id (other order, other case)', { VALUE: 'b', id: 'a' }, { value: 'b' }],
  ])(
    '%s that differ: the RFC name wins on POST, PUT and PATCH, and both names answer its value',
    async (_label, role, rfc) => {
      const answered = {
        Id: rfc.value,
        value: rfc.value,
        DisplayName: rfc.display ?? null,
        display: rfc.display ?? null,
      };
      const created = await scim.post('/Users', scimUserBody({ roles: [role] }));
      expect(created.statusCode).toBe(201);
      expect(created.json<{ roles: unknown[] }>().roles).toEqual([answered]);
      const id = created.json<{ id: string }>().id;
      const requests = [
        () => scim.put(`/Users/${id}`, scimUserBody({ roles: [role] })),
        () => scim.patch(`/Users/${id}`, patchBody({ op: 'add', path: 'roles', value: [role] })),
        () => scim.patch(`/Users/${id}`, patchBody({ op: 'replace', value: { roles: [role] } })),
      ];
      for (const request of requests) {
        const response = await request();
        expect(response.statusCode).toBe(200);
        expect(response.json<{ roles: unknown[] }>().roles).toEqual([answered]);
      }
    },
  );
});
