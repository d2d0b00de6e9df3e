// SCIM users (operation 3) through the real app on SQLite or PostgreSQL: the sequences Entra ID and Okta
// run, RFC 7644 §3.5.2 PATCH cases over HTTP, filters and paging, atomicity, ETag/If-Match, uniqueness (also under
// concurrent creates), the SCIM error schema for every failure, and discovery.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { ScimUserEntity } from '../src/scim/entities/scim-user.entity.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';
import {
  CORE_USER,
  ENTERPRISE_USER,
  ERROR_SCHEMA,
  filterQuery,
  patchBody,
  SCIM,
  scimClient,
  type ScimClient,
} from './scim/scim-client.js';
import { scimUserBody } from './scim/scim-user.factory.js';

/** Operation 3's documented response fields, in the documented order. */
const DOCUMENTED_FIELDS = [
  'schemas',
  'id',
  'externalId',
  'applicationExternalId',
  'meta',
  'status',
  'userName',
  'name',
  'displayName',
  'preferredLanguage',
  'locale',
  'timezone',
  'active',
  'emails',
  'nfc',
  'roles',
];

const SCIM_JSON = /^application\/scim\+json/;
const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

/** The members of a created user the tests read; the rest is compared whole. */
interface CreatedUser {
  id: string;
  userName: string;
  displayName?: string;
  meta: { created: string; location: string; version: string };
  [member: string]: unknown;
}

function expectScimError(
  response: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  scimType?: string,
): void {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(SCIM_JSON);
  const body = response.json() as Record<string, unknown>;
  expect(body).toEqual({
    schemas: [ERROR_SCHEMA],
    status: String(status),
    ...(scimType !== undefined ? { scimType } : {}),
    detail: expect.any(String),
  });
}

describe('SCIM users', () => {
  let t: TestApp;
  let scim: ScimClient;

  beforeAll(async () => {
    t = await startTestApp();
    scim = scimClient(t);
  });
  afterAll(async () => t.close());

  async function createUser(overrides: Record<string, unknown> = {}): Promise<CreatedUser> {
    const response = await scim.post('/Users', scimUserBody(overrides));
    expect(response.statusCode).toBe(201);
    return response.json();
  }

  describe('authentication and the SCIM error schema', () => {
    it('answers a missing or unknown bearer token with 401 in the SCIM error schema', async () => {
      const missing = await t.request({ method: 'GET', url: `${SCIM}/Users` });
      expectScimError(missing, 401);
      expect(missing.headers['www-authenticate']).toBe('Bearer');
      expectScimError(await scimClient(t, 'not-a-key-0123456789').get('/Users'), 401);
      expectScimError(await scimClient(t, 'not-a-key-0123456789').get('/ServiceProviderConfig'), 401);
    });

    it('needs the users scope, and a users key is enough', async () => {
      const keys = t.app.get(ApiKeysService);
      const mailKey = (await keys.create('mail-only', ['mail'])).key;
      const usersKey = (await keys.create('scim', ['users'])).key;
      expectScimError(await scimClient(t, mailKey).get('/Users'), 403);
      const created = await scimClient(t, usersKey).post('/Users', scimUserBody());
      expect(created.statusCode).toBe(201);
    });

    it('answers an unknown SCIM route, malformed JSON, an empty body and a non-JSON body in the SCIM schema', async () => {
      expectScimError(await scim.get('/Nothing'), 404);
      expectScimError(await scim.post('/Users', '{"userName": '), 400, 'invalidSyntax');
      expectScimError(await scim.post('/Users', ''), 400, 'invalidSyntax');
      expectScimError(await scim.post('/Users', '[1, 2]'), 400, 'invalidSyntax');
      expectScimError(await scim.post('/Users', 'userName=x', { 'content-type': 'text/plain' }), 415);
    });

    it('sends application/scim+json on every answer and accepts application/json bodies', async () => {
      const response = await scim.post('/Users', JSON.stringify(scimUserBody()), {
        'content-type': 'application/json',
      });
      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toMatch(SCIM_JSON);
      const withCharset = await scim.post('/Users', JSON.stringify(scimUserBody()), {
        'content-type': 'application/scim+json; charset=utf-8',
      });
      expect(withCharset.statusCode).toBe(201);
      for (const path of [
        '/Users',
        `/Users/${String(response.json().id)}`,
        '/ServiceProviderConfig',
        '/Schemas',
      ]) {
        expect((await scim.get(path)).headers['content-type']).toMatch(SCIM_JSON);
      }
    });

    it('matches the SCIM routes in any letter case', async () => {
      const response = await t.request({
        method: 'GET',
        url: '/API/V1/SCIM/users?count=1',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
    });
  });

  describe('Entra ID sequence', () => {
    it('probes, creates, finds by userName in another case, patches, disables and deletes', async () => {
      // Entra's connection test: a filter for a user that cannot exist must be an empty list, not a 404.
      const probe = await scim.get(filterQuery(`userName eq "${randomUUID()}"`));
      expect(probe.statusCode).toBe(200);
      expect(probe.json()).toEqual({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
        totalResults: 0,
        startIndex: 1,
        itemsPerPage: 0,
        Resources: [],
      });

      const externalId = randomUUID();
      const create = await scim.post('/Users', {
        schemas: [CORE_USER, ENTERPRISE_USER],
        externalId,
        userName: 'Ryan.Leenay@Contoso.com',
        active: true,
        displayName: 'Ryan Leenay',
        emails: [{ primary: true, type: 'work', value: 'Ryan.Leenay@contoso.com' }],
        meta: { resourceType: 'User' },
        name: { formatted: 'Ryan Leenay', familyName: 'Leenay', givenName: 'Ryan' },
        roles: [],
        [ENTERPRISE_USER]: { department: 'Sales', employeeNumber: '4711' },
      });
      expect(create.statusCode).toBe(201);
      const user = create.json();
      expect(create.headers.location).toBe(user.meta.location);
      expect(user.meta.location).toBe(`http://localhost:80${SCIM}/Users/${user.id}`);
      expect(create.headers.etag).toBe(user.meta.version);
      expect(user.schemas).toEqual([CORE_USER, ENTERPRISE_USER]);
      expect(user[ENTERPRISE_USER]).toEqual({ department: 'Sales', employeeNumber: '4711' });
      expect(user.roles).toBeNull();

      // Entra sends the filter with + for spaces; others percent-encode.
      for (const url of [
        `/Users?filter=userName+eq+%22ryan.leenay%40contoso.COM%22`,
        `/Users?filter=userName%20eq%20%22RYAN.LEENAY@CONTOSO.COM%22`,
        filterQuery(`externalId eq "${externalId}"`),
        filterQuery('emails[type eq "work"].value eq "ryan.leenay@contoso.com"'),
      ]) {
        const found = await scim.get(url);
        expect(found.statusCode).toBe(200);
        expect(found.json()).toMatchObject({ totalResults: 1, Resources: [{ id: user.id }] });
      }

      const id = user.id;
      const replaced = await scim.patch(
        `/Users/${id}`,
        patchBody(
          { op: 'Replace', path: 'active', value: 'False' },
          { op: 'Add', path: 'emails[type eq "work"].value', value: 'ryan@contoso.com' },
          {
            op: 'Add',
            path: 'roles',
            value: [{ value: '{"id":"r-1","value":"Admin","displayName":"Administrator"}' }],
          },
          { op: 'Replace', path: `${ENTERPRISE_USER}:manager`, value: 'boss-1' },
        ),
      );
      expect(replaced.statusCode).toBe(200);
      expect(replaced.json()).toMatchObject({
        active: false,
        emails: [{ type: 'work', value: 'ryan@contoso.com', primary: true, display: null }],
        roles: [{ Id: 'Admin', DisplayName: 'Administrator', value: 'Admin', display: 'Administrator' }],
        [ENTERPRISE_USER]: { department: 'Sales', manager: { value: 'boss-1' } },
      });
      expect(replaced.headers.etag).toBe(replaced.json().meta.version);
      expect(replaced.headers.etag).not.toBe(user.meta.version);

      // Path-less replace with dotted keys.
      const dotted = await scim.patch(
        `/Users/${id}`,
        patchBody({
          op: 'replace',
          value: { 'name.givenName': 'Rian', 'name.familyName': 'Leenaye', displayName: 'Rian L' },
        }),
      );
      expect(dotted.statusCode).toBe(200);
      expect(dotted.json()).toMatchObject({
        name: { givenName: 'Rian', familyName: 'Leenaye', formatted: 'Ryan Leenay', middleName: null },
        displayName: 'Rian L',
      });

      // Disabled users stay visible, by id and in lists.
      expect((await scim.get(`/Users/${id}`)).json().active).toBe(false);
      expect((await scim.get(filterQuery('userName eq "ryan.leenay@contoso.com"'))).json().totalResults).toBe(
        1,
      );
      expect(
        (await scim.get(filterQuery('active eq false'))).json().Resources.map((u: { id: string }) => u.id),
      ).toContain(id);

      // Remove a role by value (Entra's form), then delete.
      const noRole = await scim.patch(
        `/Users/${id}`,
        patchBody({ op: 'Remove', path: 'roles', value: [{ value: 'Admin' }] }),
      );
      expect(noRole.json().roles).toBeNull();
      const deleted = await scim.delete(`/Users/${id}`);
      expect(deleted.statusCode).toBe(204);
      expect(deleted.body).toBe('');
      expectScimError(await scim.get(`/Users/${id}`), 404);
      expectScimError(
        await scim.patch(`/Users/${id}`, patchBody({ op: 'replace', path: 'active', value: true })),
        404,
      );
      expectScimError(await scim.put(`/Users/${id}`, scimUserBody()), 404);
      expectScimError(await scim.delete(`/Users/${id}`), 404);
      expect((await scim.get(filterQuery(`id eq "${id}"`))).json().totalResults).toBe(0);
      expect((await scim.get(filterQuery('userName eq "ryan.leenay@contoso.com"'))).json().totalResults).toBe(
        0,
      );
    });
  });

  describe('Okta sequence', () => {
    it('checks, creates with password and groups, reads, replaces with PUT, deactivates with a path-less PATCH', async () => {
      const userName = `isabell.provisioning.${randomUUID().slice(0, 8)}@okta.example`;
      const check = await scim.get(`${filterQuery(`userName eq "${userName}"`)}&startIndex=1&count=100`);
      expect(check.json()).toMatchObject({ totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });

      const create = await scim.post('/Users', {
        schemas: [CORE_USER],
        userName,
        name: { givenName: 'Isabell', familyName: 'Provisioning' },
        emails: [{ primary: true, value: userName, type: 'work' }],
        displayName: 'Isabell Provisioning',
        locale: 'en-US',
        externalId: '00u1dhhb1fkIGP7RL1d8',
        groups: [],
        password: '1mz050nq',
        active: true,
      });
      expect(create.statusCode).toBe(201);
      const user = create.json();
      expect(JSON.stringify(user)).not.toContain('1mz050nq');
      expect(user).not.toHaveProperty('password');
      expect(user).not.toHaveProperty('groups');
      const stored = await t.dataSource.getRepository(ScimUserEntity).findOneByOrFail({ id: user.id });
      expect(JSON.stringify(stored)).not.toContain('1mz050nq');

      const read = await scim.get(`/Users/${user.id}`);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual(user);
      expect(read.headers.etag).toBe(user.meta.version);

      // Okta's PUT echoes the whole object, read-only members included; they are ignored.
      const put = await scim.put(`/Users/${user.id}`, {
        ...user,
        id: randomUUID(),
        meta: { ...user.meta, created: '2001-01-01T00:00:00Z', version: 'W/"999"' },
        name: { givenName: 'Isabell', familyName: 'Provisioned' },
        locale: 'de-DE',
        password: 'changed',
        groups: [],
        roles: null,
      });
      expect(put.statusCode).toBe(200);
      const replaced = put.json();
      expect(replaced).toMatchObject({
        id: user.id,
        locale: 'de-DE',
        active: true,
        name: { givenName: 'Isabell', familyName: 'Provisioned', formatted: null },
        meta: { created: user.meta.created },
      });
      expect(replaced.meta.version).not.toBe(user.meta.version);
      expect(replaced.displayName).toBe('Isabell Provisioning');

      const deactivate = await scim.patch(
        `/Users/${user.id}`,
        patchBody({ op: 'replace', value: { active: false } }),
      );
      expect(deactivate.statusCode).toBe(200);
      expect(deactivate.json()).toMatchObject({ id: user.id, active: false, locale: 'de-DE' });

      // PUT replaces: what the body leaves out is cleared, except `active`, which is never flipped by omission.
      const partial = { ...replaced };
      delete partial.active;
      delete partial.displayName;
      const second = (await scim.put(`/Users/${user.id}`, partial)).json();
      expect(second).toMatchObject({ active: false, displayName: null, locale: 'de-DE' });
    });
  });

  describe('documented email fields', () => {
    it('answers every documented email field (nullable included) and takes the answer back in a PUT', async () => {
      const user = await createUser({});
      const got = await scim.get(`/Users/${user.id}`);
      const body = got.json();
      for (const email of body.emails)
        expect(Object.keys(email)).toEqual(['type', 'nullable', 'value', 'display', 'primary']);
      const put = await scim.put(`/Users/${user.id}`, body);
      expect(put.statusCode).toBe(200);
      expect(put.json().emails).toEqual(body.emails);
    });
  });

  describe('operation 3 (PATCH) as documented', () => {
    it('takes {Schemas, Operations:[{Path, Value}]} without op as replace and answers every documented field', async () => {
      const user = await createUser({ name: undefined, emails: undefined, externalId: undefined });
      const response = await scim.patch(`/Users/${user.id}`, {
        Schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          { Path: 'displayName', Value: 'Documented' },
          { Path: 'nfc', Value: '04A224D2C35E80' },
          { Path: 'roles', Value: '[{"Id":"admin","DisplayName":"Administrator"}]' },
          { Path: 'Active', Value: 'True' },
        ],
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body)).toEqual(DOCUMENTED_FIELDS);
      expect(body).toEqual({
        schemas: [CORE_USER],
        id: user.id,
        externalId: null,
        applicationExternalId: null,
        meta: {
          resourceType: 'User',
          created: user.meta.created,
          lastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          location: user.meta.location,
          version: 'W/"2"',
        },
        status: null,
        userName: user.userName,
        name: null,
        displayName: 'Documented',
        preferredLanguage: null,
        locale: null,
        timezone: null,
        active: true,
        emails: null,
        nfc: '04A224D2C35E80',
        roles: [{ Id: 'admin', DisplayName: 'Administrator', value: 'admin', display: 'Administrator' }],
      });
      expect(response.headers.etag).toBe('W/"2"');

      // The interface document's own spelling of the path, lower-case "users".
      const lowerCase = await t.request({
        method: 'PATCH',
        url: `/api/v1/scim/users/${user.id}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ Schemas: [], Operations: [{ Path: 'displayName', Value: 'Lower' }] }),
      });
      expect(lowerCase.statusCode).toBe(200);
      expect(lowerCase.json()).toMatchObject({ displayName: 'Lower', meta: { version: 'W/"3"' } });
    });
  });

  describe('RFC 7644 §3.5.2 over HTTP', () => {
    const cases: ReadonlyArray<{
      name: string;
      operations: Array<Record<string, unknown>>;
      expected: Record<string, unknown>;
    }> = [
      {
        name: 'add appends to a multi-valued attribute',
        operations: [{ op: 'add', path: 'emails', value: [{ value: 'home@example.org', type: 'home' }] }],
        expected: {
          emails: [
            expect.objectContaining({ type: 'work' }),
            { type: 'home', value: 'home@example.org', display: null, primary: false },
          ],
        },
      },
      {
        name: 'add through a filter that matches nothing creates the element',
        operations: [{ op: 'add', path: 'emails[type eq "home"].value', value: 'new@example.org' }],
        expected: {
          emails: [
            expect.objectContaining({ type: 'work' }),
            { type: 'home', value: 'new@example.org', display: null, primary: false },
          ],
        },
      },
      {
        name: 'Entra: replace emails[type eq "work"].value on a user whose e-mail has no type fills it',
        operations: [
          { op: 'replace', path: 'emails', value: [{ value: 'typeless@example.org', primary: true }] },
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'work@example.org' },
        ],
        expected: { emails: [{ type: 'work', value: 'work@example.org', display: null, primary: true }] },
      },
      {
        name: 'Entra: add emails[type eq "work"].value on a user whose e-mail has no type fills it too',
        operations: [
          { op: 'replace', path: 'emails', value: [{ value: 'typeless@example.org', primary: true }] },
          { op: 'Add', path: 'emails[type eq "work"].value', value: 'work@example.org' },
        ],
        expected: { emails: [{ type: 'work', value: 'work@example.org', display: null, primary: true }] },
      },
      {
        name: 'the enterprise manager takes $ref, ignores its readOnly displayName, and {"value": ""} removes it',
        operations: [
          {
            op: 'add',
            value: {
              [`${ENTERPRISE_USER}:manager`]: { value: 'boss', $ref: '../Users/boss', displayName: 'Boss' },
            },
          },
        ],
        expected: { [ENTERPRISE_USER]: { manager: { value: 'boss', $ref: '../Users/boss' } } },
      },
      {
        name: 'a manager replaced by {"value": ""} is removed',
        operations: [
          { op: 'add', path: `${ENTERPRISE_USER}:department`, value: 'Sales' },
          { op: 'add', path: `${ENTERPRISE_USER}:manager`, value: { value: 'boss' } },
          { op: 'replace', path: `${ENTERPRISE_USER}:manager`, value: { value: '' } },
        ],
        expected: { [ENTERPRISE_USER]: { department: 'Sales' } },
      },
      {
        name: 'Entra: replace of the manager with "" removes it',
        operations: [
          { op: 'add', path: `${ENTERPRISE_USER}:department`, value: 'Sales' },
          { op: 'add', path: `${ENTERPRISE_USER}:manager`, value: 'boss' },
          { op: 'Replace', path: `${ENTERPRISE_USER}:manager.value`, value: 'boss-2' },
          { op: 'Replace', path: `${ENTERPRISE_USER}:manager`, value: '' },
        ],
        expected: {
          [ENTERPRISE_USER]: expect.not.objectContaining({ manager: expect.anything() }),
        },
      },
      {
        name: 'remove with a value filter',
        operations: [{ op: 'remove', path: 'emails[type eq "work"]' }],
        expected: { emails: null },
      },
      {
        name: 'replace a sub-attribute',
        operations: [{ op: 'replace', path: 'name.familyName', value: 'Jensen' }],
        expected: { name: expect.objectContaining({ givenName: 'Test', familyName: 'Jensen' }) },
      },
      {
        name: 'add with a URN-qualified path',
        operations: [{ op: 'add', path: `${ENTERPRISE_USER}:department`, value: 'R&D' }],
        expected: { schemas: [CORE_USER, ENTERPRISE_USER], [ENTERPRISE_USER]: { department: 'R&D' } },
      },
      {
        name: 'path-less add with a URN key and attribute names in any case',
        operations: [{ op: 'add', value: { DISPLAYNAME: 'Babs', [`${CORE_USER}:title`]: 'Tour Guide' } }],
        expected: { displayName: 'Babs', title: 'Tour Guide' },
      },
      {
        name: 'replace through a value filter on roles',
        operations: [
          { op: 'add', path: 'roles', value: [{ value: 'admin' }, { value: 'reader' }] },
          { op: 'replace', path: 'roles[value eq "admin"].display', value: 'Administrator' },
        ],
        expected: {
          roles: [
            { Id: 'admin', DisplayName: 'Administrator', value: 'admin', display: 'Administrator' },
            { Id: 'reader', DisplayName: null, value: 'reader', display: null },
          ],
        },
      },
    ];
    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      const user = await createUser();
      const response = await scim.patch(`/Users/${user.id}`, patchBody(...c.operations));
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject(c.expected);
    });

    const failures: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      [
        'replace of whole elements through a filter that matches nothing',
        { op: 'replace', path: 'emails[type eq "home"]', value: { value: 'x@y' } },
        'noTarget',
      ],
      ['remove without a path', { op: 'remove' }, 'noTarget'],
      ['an unknown attribute', { op: 'replace', path: 'shoeSize', value: '42' }, 'invalidPath'],
      [
        'a bad filter in the path',
        { op: 'replace', path: 'emails[type eq].value', value: 'x' },
        'invalidFilter',
      ],
      ['changing id', { op: 'replace', path: 'id', value: randomUUID() }, 'mutability'],
      ['removing userName', { op: 'remove', path: 'userName' }, 'mutability'],
      [
        'adding to the readOnly groups (memberships change through /Groups)',
        { op: 'add', path: 'groups', value: [{ value: randomUUID() }] },
        'mutability',
      ],
      [
        "writing the manager's readOnly displayName",
        { op: 'replace', path: `${ENTERPRISE_USER}:manager.displayName`, value: 'Boss' },
        'mutability',
      ],
      ['a boolean that is not one', { op: 'replace', path: 'active', value: 'maybe' }, 'invalidValue'],
      ['an unknown op', { op: 'merge', path: 'active', value: true }, 'invalidSyntax'],
    ];
    it.each(failures)('rejects %s with its scimType', async (_name, operation, scimType) => {
      const user = await createUser();
      expectScimError(await scim.patch(`/Users/${user.id}`, patchBody(operation)), 400, scimType);
    });

    it('is atomic: one failing operation leaves the user unchanged, version included', async () => {
      const user = await createUser();
      const response = await scim.patch(
        `/Users/${user.id}`,
        patchBody(
          { op: 'replace', path: 'displayName', value: 'Changed' },
          { op: 'add', path: 'emails', value: [{ value: 'second@example.org', type: 'home' }] },
          { op: 'replace', path: 'emails[type eq "other"]', value: { value: 'nope' } },
        ),
      );
      expectScimError(response, 400, 'noTarget');
      expect(response.json().detail).toContain('Operations[2]');
      const after = await scim.get(`/Users/${user.id}`);
      expect(after.json()).toEqual(user);
      expect(after.headers.etag).toBe(user.meta.version);
    });

    it('rejects an invalid create or replace body with the field named', async () => {
      expectScimError(await scim.post('/Users', { name: { givenName: 'No userName' } }), 400, 'invalidValue');
      expectScimError(await scim.post('/Users', scimUserBody({ active: 'sometimes' })), 400, 'invalidValue');
      expectScimError(await scim.post('/Users', scimUserBody({ shoeSize: 42 })), 400, 'invalidValue');
      expectScimError(
        await scim.post('/Users', scimUserBody({ userName: 'x'.repeat(300) })),
        400,
        'invalidValue',
      );
      const user = await createUser();
      expectScimError(
        await scim.put(`/Users/${user.id}`, { displayName: 'no userName' }),
        400,
        'invalidValue',
      );
    });
  });

  describe('ETag and If-Match', () => {
    it('enforces If-Match on PATCH, PUT and DELETE, and answers If-None-Match with 304', async () => {
      const user = await createUser();
      const path = `/Users/${user.id}`;
      const first = await scim.patch(path, patchBody({ op: 'replace', path: 'title', value: 'One' }), {
        'if-match': user.meta.version,
      });
      expect(first.statusCode).toBe(200);
      const stale = { 'if-match': user.meta.version };
      expectScimError(
        await scim.patch(path, patchBody({ op: 'replace', path: 'title', value: 'Two' }), stale),
        412,
      );
      expectScimError(await scim.put(path, scimUserBody({ userName: user.userName }), stale), 412);
      expectScimError(await scim.delete(path, stale), 412);
      expect((await scim.get(path)).json().title).toBe('One');

      const any = await scim.patch(path, patchBody({ op: 'replace', path: 'title', value: 'Three' }), {
        'if-match': '*',
      });
      expect(any.statusCode).toBe(200);
      const current = any.json().meta.version as string;
      const notModified = await scim.get(path, { 'if-none-match': current });
      expect([notModified.statusCode, notModified.headers.etag, notModified.body]).toEqual([
        304,
        current,
        '',
      ]);
      expect((await scim.get(path, { 'if-none-match': user.meta.version })).statusCode).toBe(200);
      expect((await scim.delete(path, { 'if-match': `"x", ${current}` })).statusCode).toBe(204);
    });

    it('keeps the version when a PATCH changes nothing', async () => {
      const user = await createUser();
      const response = await scim.patch(
        `/Users/${user.id}`,
        patchBody({
          op: 'replace',
          value: { id: user.id, userName: user.userName, displayName: user.displayName },
        }),
      );
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(user);
    });

    it('loses no update when PATCHes without If-Match race on one user', async () => {
      const user = await createUser({ roles: [] });
      const roles = Array.from({ length: 8 }, (_, index) => `role-${String(index)}`);
      const responses = await Promise.all(
        roles.map((role) =>
          scim.patch(`/Users/${user.id}`, patchBody({ op: 'add', path: 'roles', value: [{ value: role }] })),
        ),
      );
      expect(responses.map((response) => response.statusCode)).toEqual(roles.map(() => 200));
      const after = (await scim.get(`/Users/${user.id}`)).json();
      expect(after.roles.map((role: { Id: string }) => role.Id).sort()).toEqual(roles);
      expect(after.meta.version).toBe(`W/"${String(1 + roles.length)}"`);
    });
  });

  describe('userName uniqueness', () => {
    it('is case-insensitive on create, PUT and PATCH', async () => {
      const first = await createUser({ userName: `Unique.${randomUUID()}@Example.com` });
      const clash = await scim.post('/Users', scimUserBody({ userName: first.userName.toUpperCase() }));
      expectScimError(clash, 409, 'uniqueness');
      const other = await createUser();
      expectScimError(
        await scim.patch(
          `/Users/${other.id}`,
          patchBody({ op: 'replace', path: 'userName', value: first.userName.toLowerCase() }),
        ),
        409,
        'uniqueness',
      );
      expectScimError(
        await scim.put(`/Users/${other.id}`, scimUserBody({ userName: first.userName })),
        409,
        'uniqueness',
      );
      // Changing only the letter case of one's own userName is not a clash.
      const recased = await scim.patch(
        `/Users/${first.id}`,
        patchBody({ op: 'replace', path: 'userName', value: first.userName.toLowerCase() }),
      );
      expect(recased.statusCode).toBe(200);
    });

    it('lets exactly one of several concurrent creates win', async () => {
      const base = `race.${randomUUID()}@example.com`;
      const variants = [base, base.toUpperCase(), `Race${base.slice(4)}`, base, base.toUpperCase(), base];
      const responses = await Promise.all(
        variants.map((userName) => scim.post('/Users', scimUserBody({ userName }))),
      );
      const statuses = responses.map((response) => response.statusCode).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
      for (const response of responses.filter((r) => r.statusCode === 409))
        expectScimError(response, 409, 'uniqueness');
      expect((await scim.get(filterQuery(`userName eq "${base}"`))).json().totalResults).toBe(1);
    });
  });

  describe('list, filters and paging', () => {
    const tag = randomUUID().slice(0, 8);
    const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    /** The five users in creation order. */
    let users: CreatedUser[];
    /** Their ids in list order: oldest first; users created in the same millisecond by id. */
    const listed = (some: CreatedUser[]) =>
      [...some]
        .sort((a, b) => byCodeUnits(a.meta.created, b.meta.created) || byCodeUnits(a.id, b.id))
        .map((user) => user.id);

    beforeAll(async () => {
      users = [];
      for (let index = 0; index < 5; index++) {
        users.push(
          await createUser({
            userName: `page.${tag}.${String(index)}@example.com`,
            title: index % 2 === 0 ? `Even ${tag}` : `Odd ${tag}`,
          }),
        );
      }
    });

    const pageFilter = () => filterQuery(`userName sw "page.${tag}."`);

    it('pages with startIndex and count (1-based, oldest first) and reports the total', async () => {
      const page = (await scim.get(`${pageFilter()}&startIndex=2&count=2`)).json();
      expect(page).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
      expect(page.Resources.map((user: { id: string }) => user.id)).toEqual(listed(users).slice(1, 3));
      const past = (await scim.get(`${pageFilter()}&startIndex=9&count=2`)).json();
      expect(past).toMatchObject({ totalResults: 5, startIndex: 9, itemsPerPage: 0, Resources: [] });
      // The total of a short last page comes from the page itself; of a full one or one past the end, from a count.
      for (const [startIndex, itemsPerPage] of [
        [5, 1],
        [4, 2],
        [6, 0],
        [1, 2],
      ] as const) {
        expect(
          (await scim.get(`${pageFilter()}&startIndex=${String(startIndex)}&count=2`)).json(),
        ).toMatchObject({
          totalResults: 5,
          itemsPerPage,
        });
      }
      expect((await scim.get(`${pageFilter()}&count=5`)).json()).toMatchObject({
        totalResults: 5,
        itemsPerPage: 5,
      });
      expect((await scim.get(`${pageFilter()}&count=6`)).json()).toMatchObject({
        totalResults: 5,
        itemsPerPage: 5,
      });
    });

    it('clamps startIndex below 1 and a negative count (RFC 7644 §3.4.2.4), and refuses non-integers', async () => {
      expect((await scim.get(`${pageFilter()}&startIndex=0&count=1`)).json()).toMatchObject({
        startIndex: 1,
        itemsPerPage: 1,
      });
      expect((await scim.get(`${pageFilter()}&count=-3`)).json()).toMatchObject({
        totalResults: 5,
        itemsPerPage: 0,
        Resources: [],
      });
      expect((await scim.get(`${pageFilter()}&count=0`)).json()).toMatchObject({
        totalResults: 5,
        itemsPerPage: 0,
      });
      for (const query of ['count=abc', 'count=1.5', 'startIndex=x', 'count=2&count=3']) {
        expectScimError(await scim.get(`${pageFilter()}&${query}`), 400, 'invalidValue');
      }
    });

    it('translates operators, logic and grouping, with + or %20 for spaces', async () => {
      const count = async (url: string) => (await scim.get(url)).json().totalResults as number;
      expect(await count(filterQuery(`title eq "even ${tag}" and userName sw "page.${tag}"`))).toBe(3);
      expect(await count(`/Users?filter=title+co+%22${tag}%22+and+not+(title+sw+%22Even%22)`)).toBe(2);
      expect(
        await count(
          `/Users?filter=(title%20ew%20%22${tag}%22)%20and%20(userName%20ew%20%22.4@example.com%22%20or%20userName%20ew%20%22.0@example.com%22)`,
        ),
      ).toBe(2);
      expect(
        await count(
          filterQuery(
            `title pr and userName gt "page.${tag}.2@example.com" and userName le "page.${tag}.4@example.com"`,
          ),
        ),
      ).toBe(2);
      expect(await count(filterQuery(`userName eq "nobody.${tag}@example.com"`))).toBe(0);
      // A + inside a string literal is a plus (sent as %2B), outside it a space.
      const plus = await createUser({ userName: `plus+${tag}@example.com` });
      const found = (await scim.get(`/Users?filter=userName+eq+%22PLUS%2B${tag}%40example.com%22`)).json();
      expect(found).toMatchObject({ totalResults: 1, Resources: [{ id: plus.id }] });
    });

    it('answers a bad filter with 400 invalidFilter', async () => {
      for (const filter of [
        'userName eq',
        'userName xx "a"',
        'shoeSize eq "42"',
        'active gt true',
        '(userName eq "a"',
      ]) {
        expectScimError(await scim.get(filterQuery(filter)), 400, 'invalidFilter');
      }
    });

    it('bounds filters and PATCH paths: absurd nesting is a 400, never a 500', async () => {
      const chain = (n: number) =>
        Array.from({ length: n }, (_, index) => `userName eq "u${String(index)}"`).join(' or ');
      const accepted = await scim.post('/Users/.search', { filter: chain(100) });
      expect(accepted.statusCode).toBe(200);
      expect(accepted.json().totalResults).toBe(0);
      // More than 100 comparisons: more than the service evaluates.
      expectScimError(await scim.post('/Users/.search', { filter: chain(101) }), 400, 'tooMany');
      expectScimError(await scim.post('/Users/.search', { filter: chain(1500) }), 400, 'invalidFilter');
      const parentheses = `${'('.repeat(4000)}userName eq "a"${')'.repeat(4000)}`;
      expectScimError(await scim.post('/Users/.search', { filter: parentheses }), 400, 'invalidFilter');
      const user = await createUser();
      const path = `emails[${'('.repeat(20000)}type eq "x"${')'.repeat(20000)}].value`;
      expectScimError(
        await scim.patch(`/Users/${user.id}`, patchBody({ op: 'add', path, value: 'a@b.c' })),
        400,
        'invalidSyntax',
      );
    });

    it('reads an absent primary as false, in list filters and PATCH filters', async () => {
      const email = `noprimary-${randomUUID()}@example.org`;
      const user = await createUser({ emails: [{ type: 'home', value: email }] });
      const found = await scim.get(filterQuery(`emails[value eq "${email}" and primary eq false]`));
      expect(found.json().Resources.map((u: { id: string }) => u.id)).toEqual([user.id]);
      const notTrue = await scim.get(filterQuery(`emails[value eq "${email}" and not (primary eq true)]`));
      expect(notTrue.json().totalResults).toBe(1);
      // The dotted form reads the absent primary as false too.
      const dotted = await scim.get(filterQuery(`emails.value eq "${email}" and emails.primary eq false`));
      expect(dotted.json().Resources.map((u: { id: string }) => u.id)).toEqual([user.id]);
      const dottedTrue = await scim.get(filterQuery(`emails.value eq "${email}" and emails.primary eq true`));
      expect(dottedTrue.json().totalResults).toBe(0);
      const patched = await scim.patch(
        `/Users/${user.id}`,
        patchBody({ op: 'replace', path: 'emails[primary eq false].display', value: 'Home' }),
      );
      expect(patched.statusCode).toBe(200);
      expect(patched.json().emails).toMatchObject([
        { type: 'home', value: email, display: 'Home', primary: false },
      ]);
    });

    it('searches with POST /Users/.search', async () => {
      const response = await scim.post('/Users/.search', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
        filter: `title sw "odd ${tag}"`,
        startIndex: 1,
        count: 10,
      });
      expect(response.statusCode).toBe(200);
      const [first, second] = listed([users[1], users[3]]);
      expect(response.json()).toMatchObject({ totalResults: 2, Resources: [{ id: first }, { id: second }] });
    });
  });

  describe('discovery', () => {
    it('answers a filter on a discovery endpoint with 403 (RFC 7644 §4), not an unfiltered list', async () => {
      for (const path of ['/ServiceProviderConfig', '/ResourceTypes', '/Schemas']) {
        expectScimError(await scim.get(`${path}?filter=${encodeURIComponent('id eq "User"')}`), 403);
      }
      expect((await scim.get('/Schemas?count=5')).statusCode).toBe(200);
    });

    it('serves ServiceProviderConfig, ResourceTypes and Schemas', async () => {
      const config = (await scim.get('/ServiceProviderConfig')).json();
      expect(config).toMatchObject({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
        patch: { supported: true },
        filter: { supported: true, maxResults: 1000 },
        etag: { supported: true },
        bulk: { supported: false },
        sort: { supported: true },
        meta: {
          resourceType: 'ServiceProviderConfig',
          location: `http://localhost:80${SCIM}/ServiceProviderConfig`,
        },
      });
      const types = (await scim.get('/ResourceTypes')).json();
      expect(types.Resources).toEqual([
        expect.objectContaining({
          id: 'User',
          endpoint: '/Users',
          schema: CORE_USER,
          schemaExtensions: [{ schema: ENTERPRISE_USER, required: false }],
        }),
        expect.objectContaining({
          id: 'Group',
          endpoint: '/Groups',
          schema: CORE_GROUP,
          schemaExtensions: [],
        }),
      ]);
      expect((await scim.get('/ResourceTypes/User')).json().name).toBe('User');
      const schemas = (await scim.get('/Schemas')).json();
      expect(schemas.Resources.map((schema: { id: string }) => schema.id)).toEqual([
        CORE_USER,
        ENTERPRISE_USER,
        CORE_GROUP,
      ]);
      const user = (await scim.get(`/Schemas/${CORE_USER}`)).json();
      expect(
        user.attributes.find((attribute: { name: string }) => attribute.name === 'userName'),
      ).toMatchObject({
        required: true,
        uniqueness: 'server',
        caseExact: false,
      });
      expectScimError(await scim.get('/Schemas/urn:nope'), 404);
      expect((await scim.get('/ResourceTypes/Group')).json().endpoint).toBe('/Groups');
      // roles: /Schemas declares exactly the members a returned role can have (RFC 7643's and the interface's),
      // whichever form the client sent; type and primary only when sent.
      const declared = user.attributes
        .find((attribute: { name: string }) => attribute.name === 'roles')
        .subAttributes.map((sub: { name: string }) => sub.name)
        .sort();
      const withRoles = await createUser({
        roles: [
          { value: 'a', display: 'A', type: 't', primary: true },
          { Id: 'b', DisplayName: 'B' },
        ],
      });
      const returned = (await scim.get(`/Users/${withRoles.id}`)).json().roles as Array<
        Record<string, unknown>
      >;
      expect(returned).toHaveLength(2);
      for (const role of returned) expect(declared).toEqual(expect.arrayContaining(Object.keys(role)));
      expect(Object.keys(returned[0] ?? {}).sort()).toEqual(declared);
      expect(returned[1]).toMatchObject({ Id: 'b', value: 'b', DisplayName: 'B', display: 'B' });
      // One writable name per role field: Id and DisplayName mirror value and display, readOnly.
      const mutabilities = Object.fromEntries(
        user.attributes
          .find((attribute: { name: string }) => attribute.name === 'roles')
          .subAttributes.map((sub: { name: string; mutability: string }) => [sub.name, sub.mutability]),
      );
      expect(mutabilities).toEqual({
        value: 'readWrite',
        display: 'readWrite',
        type: 'readWrite',
        primary: 'readWrite',
        Id: 'readOnly',
        DisplayName: 'readOnly',
      });
      // The enterprise manager as RFC 7643 §4.3 defines it: value, $ref, and a readOnly displayName.
      const enterprise = (await scim.get(`/Schemas/${ENTERPRISE_USER}`)).json();
      const manager = enterprise.attributes.find(
        (attribute: { name: string }) => attribute.name === 'manager',
      );
      expect(
        manager.subAttributes.map((sub: { name: string; mutability: string }) => [sub.name, sub.mutability]),
      ).toEqual([
        ['value', 'readWrite'],
        ['$ref', 'readWrite'],
        ['displayName', 'readOnly'],
      ]);
      const managed = await scim.post('/Users', {
        schemas: [CORE_USER, ENTERPRISE_USER],
        userName: `managed.${randomUUID()}@example.com`,
        [ENTERPRISE_USER]: { manager: { value: 'boss', $ref: '../Users/boss', displayName: 'Boss' } },
      });
      expect(managed.statusCode).toBe(201);
      expect(managed.json()[ENTERPRISE_USER]).toEqual({ manager: { value: 'boss', $ref: '../Users/boss' } });
      expectScimError(await scim.get('/ResourceTypes/Nothing'), 404);
    });

    it('a client filling every sub-attribute of roles /Schemas lists with distinct values succeeds', async () => {
      // A schema-driven client (as the peer SCIM suites are) writes every writable sub-attribute; one that ignores
      // mutability writes readOnly ones too. Either way value/display are taken and Id/DisplayName mirror them.
      const roles = (await scim.get(`/Schemas/${CORE_USER}`))
        .json()
        .attributes.find((attribute: { name: string }) => attribute.name === 'roles');
      const subs = roles.subAttributes as Array<{ name: string; type: string; mutability: string }>;
      const fill = (tag: string, all: boolean) =>
        Object.fromEntries(
          subs
            .filter((sub) => all || sub.mutability === 'readWrite')
            .map((sub) => [sub.name, sub.type === 'boolean' ? true : `${tag}-${sub.name}`]),
        );
      const expected = (tag: string) => ({
        value: `${tag}-value`,
        display: `${tag}-display`,
        Id: `${tag}-value`,
        DisplayName: `${tag}-display`,
        type: `${tag}-type`,
        primary: true,
      });
      for (const all of [false, true]) {
        const created = await scim.post('/Users', scimUserBody({ roles: [fill('post', all)] }));
        expect(created.statusCode).toBe(201);
        expect(created.json().roles).toEqual([expected('post')]);
        const id = created.json().id as string;
        const replaced = await scim.put(`/Users/${id}`, scimUserBody({ roles: [fill('put', all)] }));
        expect(replaced.statusCode).toBe(200);
        expect(replaced.json().roles).toEqual([expected('put')]);
        const patched = await scim.patch(
          `/Users/${id}`,
          patchBody({ op: 'replace', path: 'roles', value: [fill('patch', all)] }),
        );
        expect(patched.statusCode).toBe(200);
        expect(patched.json().roles).toEqual([expected('patch')]);
        expect((await scim.get(`/Users/${id}`)).json().roles).toEqual([expected('patch')]);
      }
    });

    it("accepts Entra's documented manager PATCH: a one-element list of {value}", async () => {
      const user = await createUser();
      const manager = await createUser();
      const patched = await scim.patch(
        `/Users/${user.id}`,
        patchBody({ op: 'Replace', path: `${ENTERPRISE_USER}:manager`, value: [{ value: manager.id }] }),
      );
      expect(patched.statusCode).toBe(200);
      expect(patched.json()[ENTERPRISE_USER]).toEqual({ manager: { value: manager.id } });
      const listed = await scim.get(filterQuery(`manager eq "${manager.id}"`));
      expect(listed.json().Resources.map((found: { id: string }) => found.id)).toEqual([user.id]);
      const cleared = await scim.patch(
        `/Users/${user.id}`,
        patchBody({ op: 'Replace', path: `${ENTERPRISE_USER}:manager`, value: [] }),
      );
      expect(cleared.statusCode).toBe(200);
      expect(cleared.json()[ENTERPRISE_USER]).toBeUndefined();
      expectScimError(
        await scim.patch(
          `/Users/${user.id}`,
          patchBody({
            op: 'Replace',
            path: `${ENTERPRISE_USER}:manager`,
            value: [{ value: 'a' }, { value: 'b' }],
          }),
        ),
        400,
        'invalidValue',
      );
    });

    it('finds a user by an upper-case id', async () => {
      const user = await createUser();
      expect((await scim.get(`/Users/${user.id.toUpperCase()}`)).json().id).toBe(user.id);
    });
  });
});

describe('SCIM errors that bypass the exception filter', () => {
  it('answers the rate limiter in the SCIM error schema', async () => {
    const t = await startTestApp({ env: { RATE_LIMIT: '2' } });
    try {
      const scim = scimClient(t);
      const statuses: number[] = [];
      let limited: Awaited<ReturnType<ScimClient['get']>> | undefined;
      for (let index = 0; index < 4; index++) {
        const response = await scim.get('/ServiceProviderConfig');
        statuses.push(response.statusCode);
        if (response.statusCode === 429) limited = response;
      }
      expect(statuses).toContain(429);
      expect(limited?.headers['retry-after']).toBeDefined();
      expectScimError(limited as NonNullable<typeof limited>, 429);
      // Other areas keep the platform envelope.
      expect((await t.post('/api/v1/migration/getMigrationRuns', {})).json()).toMatchObject({
        Code: 'TooManyRequests',
      });
    } finally {
      await t.close();
    }
  });
});
