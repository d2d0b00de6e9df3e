// SCIM Groups through the real app on SQLite or PostgreSQL: the group sequences of Microsoft Entra ID's
// provisioning documentation and Okta's SCIM 2.0 Group Push guide, request bodies as those clients send them,
// membership filters, attributes/excludedAttributes, paging and sorting, the Users' groups attribute, deletes
// that take memberships along, and a property test that membership stays consistent under random operations.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { startTestApp, type TestApp } from './support/test-app.js';
import { ERROR_SCHEMA, PATCH_OP, SCIM, scimClient, type ScimClient } from './scim/scim-client.js';
import { scimUserBody } from './scim/scim-user.factory.js';

const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

interface Member {
  value: string;
  $ref: string;
  display: string | null;
  type: string;
}

interface Group {
  id: string;
  displayName: string;
  externalId?: string;
  members?: Member[];
  meta: { version: string; location: string; resourceType: string };
}

function expectScimError(
  response: { statusCode: number; json(): unknown },
  status: number,
  scimType?: string,
): Record<string, unknown> {
  expect(response.statusCode).toBe(status);
  const body = response.json() as Record<string, unknown>;
  expect(body).toEqual({
    schemas: [ERROR_SCHEMA],
    status: String(status),
    ...(scimType !== undefined ? { scimType } : {}),
    detail: expect.any(String),
  });
  return body;
}

describe('SCIM groups', () => {
  let t: TestApp;
  let scim: ScimClient;

  beforeAll(async () => {
    t = await startTestApp();
    scim = scimClient(t);
  });
  afterAll(async () => t.close());

  async function createUser(
    overrides: Record<string, unknown> = {},
  ): Promise<{ id: string; userName: string }> {
    const response = await scim.post('/Users', scimUserBody(overrides));
    expect(response.statusCode).toBe(201);
    return response.json();
  }

  async function createGroup(body: Record<string, unknown>): Promise<Group> {
    const response = await scim.post('/Groups', { schemas: [CORE_GROUP], ...body });
    expect(response.statusCode).toBe(201);
    return response.json();
  }

  async function getGroup(id: string, query = ''): Promise<Group> {
    const response = await scim.get(`/Groups/${id}${query}`);
    expect(response.statusCode).toBe(200);
    return response.json();
  }

  async function memberIds(id: string): Promise<string[]> {
    return ((await getGroup(id)).members ?? []).map((member) => member.value).sort();
  }

  async function listGroups(
    filter: string,
    extra = '',
  ): Promise<{ totalResults: number; Resources: Group[] }> {
    const response = await scim.get(`/Groups?filter=${encodeURIComponent(filter)}${extra}`);
    expect(response.statusCode).toBe(200);
    return response.json();
  }

  it('replays the Entra ID group sequence (create, get, find by displayName, patch, membership check, delete)', async () => {
    const user = await createUser();
    // POST /Groups as Entra sends it (Microsoft's ADSCIM schema URN and meta included).
    const created = await scim.post('/Groups', {
      schemas: [CORE_GROUP, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'],
      externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
      displayName: 'displayName-entra',
      meta: { resourceType: 'Group' },
    });
    expect(created.statusCode).toBe(201);
    const group = created.json<Group>();
    expect(created.headers.location).toBe(group.meta.location);
    expect(created.headers.etag).toBe('W/"1"');
    expect(group).toMatchObject({
      schemas: [CORE_GROUP],
      externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
      displayName: 'displayName-entra',
      members: [],
      meta: {
        resourceType: 'Group',
        version: 'W/"1"',
        location: `http://localhost:80${SCIM}/Groups/${group.id}`,
      },
    });

    // GET /Groups/{id}?excludedAttributes=members
    const fetched = await getGroup(group.id, '?excludedAttributes=members');
    expect(fetched).not.toHaveProperty('members');
    expect(fetched.displayName).toBe('displayName-entra');

    // GET /Groups?excludedAttributes=members&filter=displayName eq "displayName-entra" (case-insensitively)
    const found = await listGroups('displayName eq "DISPLAYNAME-entra"', '&excludedAttributes=members');
    expect(found.totalResults).toBe(1);
    expect(found.Resources[0].id).toBe(group.id);
    expect(found.Resources[0]).not.toHaveProperty('members');

    // Update Group [Non-member attributes]
    const renamed = await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'displayName', value: '1879db59updatedDisplayName' }],
    });
    expect(renamed.statusCode).toBe(204);
    expect(renamed.headers.etag).toBe('W/"2"');

    // Update Group [Add Members]
    const added = await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: user.id }] }],
    });
    expect(added.statusCode).toBe(204);
    const withMember = await getGroup(group.id);
    expect(withMember.displayName).toBe('1879db59updatedDisplayName');
    expect(withMember.meta.version).toBe('W/"3"');
    expect(withMember.members).toEqual([
      {
        value: user.id,
        $ref: `http://localhost:80${SCIM}/Users/${user.id}`,
        display: expect.any(String),
        type: 'User',
      },
    ]);

    // The membership check Entra runs: id eq … and members eq "<userId>"
    const check = `id eq "${group.id}" and members eq "${user.id}"`;
    expect((await listGroups(check, '&excludedAttributes=members')).totalResults).toBe(1);
    expect((await listGroups(`members.value eq "${user.id}"`)).Resources.map((g) => g.id)).toContain(
      group.id,
    );
    expect((await listGroups(`members[value eq "${user.id}"]`)).Resources.map((g) => g.id)).toContain(
      group.id,
    );

    // Update Group [Remove Members]
    const removed = await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: user.id }] }],
    });
    expect(removed.statusCode).toBe(204);
    expect(await memberIds(group.id)).toEqual([]);
    expect((await listGroups(check)).totalResults).toBe(0);

    expect((await scim.delete(`/Groups/${group.id}`)).statusCode).toBe(204);
    expectScimError(await scim.get(`/Groups/${group.id}`), 404);
    expectScimError(await scim.delete(`/Groups/${group.id}`), 404);
  });

  it("replays Okta's Group Push (create with members [], rename by path-less replace, add, remove by filter, PUT)", async () => {
    const first = await createUser();
    const second = await createUser();
    // Okta checks first whether the group exists.
    expect((await listGroups('displayName eq "Test SCIMv2 okta"')).totalResults).toBe(0);
    const group = await createGroup({ displayName: 'Test SCIMv2 okta', members: [] });
    expect(group.members).toEqual([]);

    const rename = await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { id: group.id, displayName: 'Test SCIMv2 okta renamed' } }],
    });
    expect(rename.statusCode).toBe(204);

    const add = await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [
        {
          op: 'add',
          path: 'members',
          value: [
            { value: first.id, display: first.userName },
            { value: second.id, display: second.userName },
          ],
        },
      ],
    });
    expect(add.statusCode).toBe(204);
    expect(await memberIds(group.id)).toEqual([first.id, second.id].sort());

    const remove = await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: `members[value eq "${first.id}"]` }],
    });
    expect(remove.statusCode).toBe(204);
    expect(await memberIds(group.id)).toEqual([second.id]);

    // Okta's other remove shape: path members with a value list.
    await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: 'members', value: [{ value: second.id }] }],
    });
    expect(await memberIds(group.id)).toEqual([]);

    // PUT replaces the members as a whole.
    const put = await scim.put(`/Groups/${group.id}`, {
      schemas: [CORE_GROUP],
      id: group.id,
      displayName: 'Test SCIMv2 okta put',
      members: [{ value: first.id, display: first.userName }],
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ displayName: 'Test SCIMv2 okta put', members: [{ value: first.id }] });
    expect((await getGroup(group.id)).displayName).toBe('Test SCIMv2 okta put');
    expect((await getGroup(group.id)).meta.version).toBe(put.headers.etag);
  });

  it('ignores duplicate adds and does not bump the version for a change that is none', async () => {
    const user = await createUser();
    const group = await createGroup({ displayName: `dupes-${user.id}`, members: [{ value: user.id }] });
    const again = await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: [{ value: user.id }, { value: user.id }] }],
    });
    expect(again.statusCode).toBe(204);
    expect(again.headers.etag).toBe('W/"1"');
    expect(await memberIds(group.id)).toEqual([user.id]);
  });

  it('keeps displayName unique in any letter case (Entra matches groups by it): 409 uniqueness', async () => {
    const name = `Unique ${String(Date.now())}`;
    const first = await createGroup({ displayName: name });
    expectScimError(
      await scim.post('/Groups', { schemas: [CORE_GROUP], displayName: name.toUpperCase() }),
      409,
      'uniqueness',
    );
    // Re-sending a group's own name (Okta re-PUTs it on every membership change) or changing its case is no conflict.
    const put = await scim.put(`/Groups/${first.id}`, {
      schemas: [CORE_GROUP],
      displayName: name,
      members: [],
    });
    expect(put.statusCode).toBe(200);
    const recased = await scim.patch(`/Groups/${first.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'displayName', value: name.toLowerCase() }],
    });
    expect(recased.statusCode).toBe(204);
    const second = await createGroup({ displayName: `${name} (2)` });
    expectScimError(
      await scim.patch(`/Groups/${second.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: 'displayName', value: name }],
      }),
      409,
      'uniqueness',
    );
    expectScimError(
      await scim.put(`/Groups/${second.id}`, { schemas: [CORE_GROUP], displayName: name.toUpperCase() }),
      409,
      'uniqueness',
    );
    expect((await getGroup(second.id)).displayName).toBe(`${name} (2)`);
    expect((await listGroups(`displayName eq "${name}"`)).totalResults).toBe(1);
  });

  it('refuses unknown member ids with 400 invalidValue naming them, and writes nothing', async () => {
    const user = await createUser();
    const missing = '00000000-0000-4000-8000-000000000001';
    const body = expectScimError(
      await scim.post('/Groups', {
        displayName: 'ghosts',
        members: [{ value: user.id }, { value: missing }],
      }),
      400,
      'invalidValue',
    );
    expect(body.detail).toContain(missing);
    expect((await listGroups('displayName eq "ghosts"')).totalResults).toBe(0);
    const group = await createGroup({ displayName: `ghost-target-${user.id}` });
    const patched = await scim.patch(`/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: [{ value: user.id }, { value: 'not-a-uuid' }] }],
    });
    expect(expectScimError(patched, 400, 'invalidValue').detail).toContain('not-a-uuid');
    expect(await memberIds(group.id)).toEqual([]);
  });

  it('answers bad bodies, paths and filters with the SCIM error schema', async () => {
    expectScimError(await scim.post('/Groups', { members: [] }), 400, 'invalidValue');
    expectScimError(await scim.post('/Groups', { displayName: 'x', owner: 'y' }), 400, 'invalidValue');
    expectScimError(await scim.post('/Groups', '[1]'), 400, 'invalidSyntax');
    const group = await createGroup({ displayName: 'errors' });
    const patch = (operations: unknown[]) =>
      scim.patch(`/Groups/${group.id}`, { schemas: [PATCH_OP], Operations: operations });
    expectScimError(await patch([{ op: 'remove', path: 'displayName' }]), 400, 'mutability');
    expectScimError(await patch([{ op: 'add', path: 'owners', value: [] }]), 400, 'invalidPath');
    expectScimError(await patch([{ op: 'move', path: 'members' }]), 400, 'invalidSyntax');
    expectScimError(await patch([{ op: 'remove', path: 'members[display eq "x"]' }]), 400, 'invalidFilter');
    expectScimError(
      await scim.get(`/Groups?filter=${encodeURIComponent('owner eq "x"')}`),
      400,
      'invalidFilter',
    );
    expectScimError(await scim.get('/Groups?filter=displayName%20eq'), 400, 'invalidFilter');
    expectScimError(await scim.get('/Groups?sortBy=members'), 400, 'invalidValue');
    expectScimError(
      await scim.get(`/Groups/${group.id}?attributes=a&excludedAttributes=b`),
      400,
      'invalidValue',
    );
    expectScimError(await scim.get('/Groups/00000000-0000-4000-8000-000000000009'), 404);
  });

  it('lists with paging, sorting and attributes', async () => {
    const tag = `page-${String(Date.now())}`;
    const names = ['b', 'C', 'a', 'd'].map((letter) => `${tag}-${letter}`);
    for (const name of names) await createGroup({ displayName: name, externalId: `ext-${name}` });
    const filter = `displayName sw "${tag}"`;
    const ascending = await listGroups(filter, '&sortBy=displayName&attributes=displayName');
    expect(ascending.Resources.map((g) => g.displayName)).toEqual(
      [...names].sort((x, y) => x.toLowerCase().localeCompare(y.toLowerCase())),
    );
    expect(Object.keys(ascending.Resources[0]).sort()).toEqual(['displayName', 'id', 'schemas']);
    const page = await listGroups(filter, '&sortBy=displayName&sortOrder=descending&startIndex=2&count=2');
    expect(page).toMatchObject({ totalResults: 4, startIndex: 2, itemsPerPage: 2 });
    expect(page.Resources.map((g) => g.displayName)).toEqual([`${tag}-C`, `${tag}-b`]);
    const search = await scim.post('/Groups/.search', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
      filter: `externalId eq "ext-${tag}-a"`,
      excludedAttributes: ['members', 'meta'],
    });
    expect(search.statusCode).toBe(200);
    expect(search.json().Resources).toEqual([
      { schemas: [CORE_GROUP], id: expect.any(String), externalId: `ext-${tag}-a`, displayName: `${tag}-a` },
    ]);
  });

  it("fills the users' read-only groups attribute, and deleting a user or group removes its memberships", async () => {
    const user = await createUser();
    const other = await createUser();
    const group = await createGroup({
      displayName: `members-of-${user.id}`,
      members: [{ value: user.id }, { value: other.id }],
    });
    const read = (await scim.get(`/Users/${user.id}`)).json();
    expect(read.groups).toEqual([
      {
        value: group.id,
        $ref: `http://localhost:80${SCIM}/Groups/${group.id}`,
        display: group.displayName,
        type: 'direct',
      },
    ]);
    // groups is read-only: a PUT with groups is accepted and changes nothing about memberships.
    const put = await scim.put(
      `/Users/${user.id}`,
      scimUserBody({ userName: user.userName, displayName: read.displayName, groups: [] }),
    );
    expect(put.statusCode).toBe(200);
    expect(put.json().groups).toHaveLength(1);
    expect((await scim.get(`/Users/${user.id}?excludedAttributes=groups`)).json()).not.toHaveProperty(
      'groups',
    );

    expect((await scim.delete(`/Users/${user.id}`)).statusCode).toBe(204);
    const after = await getGroup(group.id);
    expect(after.members?.map((member) => member.value)).toEqual([other.id]);
    expect(after.meta.version).toBe('W/"2"');

    expect((await scim.delete(`/Groups/${group.id}`)).statusCode).toBe(204);
    expect((await scim.get(`/Users/${other.id}`)).json()).not.toHaveProperty('groups');
    const rows: unknown[] = await t.dataSource.query(
      'SELECT user_id FROM scim_group_members WHERE group_id = $1'.replace('$1', `'${group.id}'`),
    );
    expect(rows).toEqual([]);
  });

  it('answers a wrong method on a SCIM path with 405 and Allow, in the SCIM error schema', async () => {
    const group = await createGroup({ displayName: 'methods' });
    const wrong = await scim.request('POST', `/Groups/${group.id}`, {});
    expectScimError(wrong, 405);
    expect(wrong.headers.allow).toBe('GET, PUT, PATCH, DELETE');
    expectScimError(await scim.request('DELETE', '/Users'), 405);
    expectScimError(await scim.request('PUT', '/ServiceProviderConfig', {}), 405);
    const search = await scim.request('GET', '/Groups/.search');
    expectScimError(search, 405);
    expect(search.headers.allow).toBe('POST');
    expectScimError(await scim.request('DELETE', '/Users/.search?x=1'), 405);
    expectScimError(await scim.get('/Nothing'), 404);
  });

  it('accepts GET and DELETE without a body that declare application/scim+json, and names it in parse errors', async () => {
    const user = await createUser();
    const headers = { 'content-type': 'application/scim+json' };
    expect((await scim.get(`/Users/${user.id}`, headers)).statusCode).toBe(200);
    expect((await scim.delete(`/Users/${user.id}`, headers)).statusCode).toBe(204);
    const broken = expectScimError(await scim.post('/Groups', '{"displayName": '), 400, 'invalidSyntax');
    expect(broken.detail).not.toContain('application/json');
    const empty = expectScimError(await scim.post('/Groups', ''), 400, 'invalidSyntax');
    expect(empty.detail).not.toMatch(/application\/json/);
  });

  it('refuses an over-large PATCH at the operation cap, before any operation is applied', async () => {
    const group = await createGroup({ displayName: 'caps' });
    const operations = Array.from({ length: 1001 }, () => ({ op: 'add', path: 'externalId', value: 'x' }));
    const refused = expectScimError(
      await scim.patch(`/Groups/${group.id}`, { schemas: [PATCH_OP], Operations: operations }),
      400,
      'invalidValue',
    );
    // Refused at the operation cap, before any operation is applied.
    expect(refused.detail).toContain('1000');
    expect(
      (await scim.get(`/Groups/${group.id}`)).json<{ externalId?: string }>().externalId,
    ).toBeUndefined();
  });

  it('queues concurrent writes to one group: 40 member adds at once all succeed, each bumping the version once', async () => {
    const group = await createGroup({ displayName: 'crowded' });
    const users = await Promise.all(Array.from({ length: 40 }, () => createUser()));
    const answers = await Promise.all(
      users.map((user) =>
        scim.patch(`/Groups/${group.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'Add', path: 'members', value: [{ value: user.id }] }],
        }),
      ),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(users.map(() => 204));
    expect(await memberIds(group.id)).toEqual(users.map((user) => user.id).sort());
    expect((await getGroup(group.id)).meta.version).toBe('W/"41"');
  });

  it('answers a member add racing the deletion of its user with 204 or 400 naming it, never 500 or a dangling member', async () => {
    const group = await createGroup({ displayName: 'racing' });
    const users = await Promise.all(Array.from({ length: 30 }, () => createUser()));
    const answers = await Promise.all(
      users.flatMap((user) => [
        scim.patch(`/Groups/${group.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'add', path: 'members', value: [{ value: user.id }] }],
        }),
        scim.delete(`/Users/${user.id}`),
      ]),
    );
    for (const [index, answer] of answers.entries()) {
      if (index % 2 === 1) {
        expect(answer.statusCode).toBe(204);
        continue;
      }
      if (answer.statusCode !== 204) {
        const body = expectScimError(answer, 400, 'invalidValue');
        expect(body.detail).toContain(users[index / 2].id);
      }
    }
    expect(await memberIds(group.id)).toEqual([]);
    const dangling: unknown[] = await t.dataSource.query(
      'SELECT m.user_id FROM scim_group_members m LEFT JOIN scim_users u ON u.id = m.user_id WHERE u.id IS NULL',
    );
    expect(dangling).toEqual([]);
  });

  it("moves a user's ETag when its groups change: added, group renamed, removed, group deleted (RFC 7644 §3.14)", async () => {
    const user = await createUser();
    const etag = async (): Promise<string> => {
      const read = await scim.get(`/Users/${user.id}`);
      expect(read.statusCode).toBe(200);
      expect(read.headers.etag).toBe(read.json().meta.version);
      return String(read.headers.etag);
    };
    const stale = async (before: string): Promise<string> => {
      const conditional = await scim.get(`/Users/${user.id}`, { 'if-none-match': before });
      expect(conditional.statusCode).toBe(200);
      const now = await etag();
      expect(now).not.toBe(before);
      return now;
    };
    let seen = await etag();
    const group = await createGroup({ displayName: 'etag-source', members: [{ value: user.id }] });
    seen = await stale(seen);
    expect(
      (
        await scim.patch(`/Groups/${group.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'replace', path: 'displayName', value: 'etag-renamed' }],
        })
      ).statusCode,
    ).toBe(204);
    seen = await stale(seen);
    expect((await scim.get(`/Users/${user.id}`)).json().groups[0].display).toBe('etag-renamed');
    expect(
      (
        await scim.patch(`/Groups/${group.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'remove', path: `members[value eq "${user.id}"]` }],
        })
      ).statusCode,
    ).toBe(204);
    seen = await stale(seen);
    expect(
      (
        await scim.put(`/Groups/${group.id}`, {
          schemas: [CORE_GROUP],
          displayName: 'etag-renamed',
          members: [{ value: user.id }],
        })
      ).statusCode,
    ).toBe(200);
    seen = await stale(seen);
    expect((await scim.delete(`/Groups/${group.id}`)).statusCode).toBe(204);
    seen = await stale(seen);
    // A conditional GET with the current ETag is still 304.
    expect((await scim.get(`/Users/${user.id}`, { 'if-none-match': seen })).statusCode).toBe(304);
  });

  it("moves a group's ETag when a member's display changes (its displayName, or its userName without one)", async () => {
    const named = await createUser({ displayName: 'Display Before' });
    const bare = await createUser({ displayName: undefined });
    const group = await createGroup({
      displayName: 'display-etag',
      members: [{ value: named.id }, { value: bare.id }],
    });
    const read = async () => {
      const response = await scim.get(`/Groups/${group.id}`);
      expect(response.statusCode).toBe(200);
      const body = response.json<Group>();
      expect(response.headers.etag).toBe(body.meta.version);
      const display = Object.fromEntries(
        (body.members ?? []).map((member) => [member.value, member.display]),
      );
      return { etag: body.meta.version, display };
    };
    const patchUser = async (id: string, path: string, value: unknown) =>
      expect(
        (
          await scim.patch(`/Users/${id}`, {
            schemas: [PATCH_OP],
            Operations: [{ op: 'replace', path, value }],
          })
        ).statusCode,
      ).toBe(200);

    const first = await read();
    expect(first.display).toEqual({ [named.id]: 'Display Before', [bare.id]: bare.userName });
    await patchUser(named.id, 'title', 'Engineer'); // not part of the group: same ETag
    expect((await scim.get(`/Groups/${group.id}`, { 'if-none-match': first.etag })).statusCode).toBe(304);

    await patchUser(named.id, 'displayName', 'Display After');
    const second = await read();
    expect(second.display[named.id]).toBe('Display After');
    expect(second.etag).not.toBe(first.etag);
    expect((await scim.get(`/Groups/${group.id}`, { 'if-none-match': first.etag })).statusCode).toBe(200);

    await patchUser(bare.id, 'userName', `renamed.${bare.userName}`);
    const third = await read();
    expect(third.display[bare.id]).toBe(`renamed.${bare.userName}`);
    expect(third.etag).not.toBe(second.etag);
    await patchUser(named.id, 'userName', `renamed.${named.userName}`); // listed by displayName: no change
    expect((await read()).etag).toBe(third.etag);
  });

  it('takes renames of a member racing writes to its groups without deadlock or error', async () => {
    const user = await createUser();
    const groups = await Promise.all(
      [0, 1, 2].map((index) =>
        createGroup({ displayName: `rename-race-${String(index)}`, members: [{ value: user.id }] }),
      ),
    );
    const statuses = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        index % 2 === 0
          ? scim.patch(`/Users/${user.id}`, {
              schemas: [PATCH_OP],
              Operations: [{ op: 'replace', path: 'displayName', value: `Race ${String(index)}` }],
            })
          : scim.patch(`/Groups/${groups[index % 3].id}`, {
              schemas: [PATCH_OP],
              Operations: [
                index % 4 === 1
                  ? { op: 'remove', path: `members[value eq "${user.id}"]` }
                  : { op: 'add', path: 'members', value: [{ value: user.id }] },
              ],
            }),
      ),
    ).then((responses) => responses.map((response) => response.statusCode));
    // Group writes queue on the group's row: all succeed. Twelve renames of one user, whose version every
    // membership change also moves, may run out of optimistic attempts: 409 (concurrentModification), never a
    // deadlock's 500.
    const renames = statuses.filter((_, index) => index % 2 === 0);
    const groupWrites = statuses.filter((_, index) => index % 2 === 1);
    expect(groupWrites.filter((status) => status !== 204)).toEqual([]);
    expect(renames.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    expect(renames).toContain(200);
    const display = (await scim.get(`/Users/${user.id}`)).json<{ displayName: string }>().displayName;
    for (const group of groups) {
      for (const member of (await getGroup(group.id)).members ?? []) expect(member.display).toBe(display);
    }
  });

  it('applies a members[…] filter to one member at a time (not, and), and sw/ew count characters', async () => {
    const [a, b] = [await createUser(), await createUser()];
    const both = await createGroup({
      displayName: 'bracket-both',
      members: [{ value: a.id }, { value: b.id }],
    });
    const onlyA = await createGroup({ displayName: 'bracket-only-a', members: [{ value: a.id }] });
    const none = await createGroup({ displayName: 'bracket-none' });
    const ids = async (filter: string) =>
      (await listGroups(filter, '&count=1000')).Resources.map((group) => group.id)
        .filter((id) => [both.id, onlyA.id, none.id].includes(id))
        .sort();
    expect(await ids(`members[not (value eq "${a.id}")]`)).toEqual([both.id]);
    expect(await ids(`members[value eq "${a.id}" and value eq "${b.id}"]`)).toEqual([]);
    expect(await ids(`members[value eq "${a.id}" or value eq "${b.id}"]`)).toEqual(
      [both.id, onlyA.id].sort(),
    );
    expect(await ids(`members[value ne "${a.id}"]`)).toEqual([both.id]);
    expect(await ids(`members[value pr]`)).toEqual([both.id, onlyA.id].sort());
    expect(await ids(`not (members[value eq "${b.id}"])`)).toEqual([onlyA.id, none.id].sort());

    const emoji = await createGroup({ displayName: '😀 bracket team' });
    for (const filter of [
      'displayName sw "😀"',
      'displayName sw "😀 b"',
      'displayName ew "team"',
      'displayName ew ""', // every string ends (and starts) with ""
      'displayName sw ""',
    ]) {
      const found = (await listGroups(filter, '&count=1000')).Resources.map((group) => group.id);
      expect({ filter, found: found.includes(emoji.id) }).toEqual({ filter, found: true });
    }
    const suffix = await createGroup({ displayName: 'bracket suffix 😀' });
    expect((await listGroups('displayName ew "x 😀"')).Resources.map((group) => group.id)).toEqual([
      suffix.id,
    ]);
  });

  it('sorts resources without a value last ascending and first descending (RFC 7644 §3.4.2.3)', async () => {
    const tag = `nulls-${String(Date.now())}`;
    const withId = await createGroup({ displayName: `${tag}-a`, externalId: `${tag}-x` });
    const without = await createGroup({ displayName: `${tag}-b` });
    const filter = `displayName sw "${tag}"`;
    const order = async (extra: string) =>
      (await listGroups(filter, `&sortBy=externalId${extra}`)).Resources.map((group) => group.id);
    expect(await order('')).toEqual([withId.id, without.id]);
    expect(await order('&sortOrder=descending')).toEqual([without.id, withId.id]);

    const userWith = await createUser({ externalId: `${tag}-u` });
    const userWithout = await createUser({ externalId: undefined });
    const users = async (extra: string) => {
      const filterUsers = `id eq "${userWith.id}" or id eq "${userWithout.id}"`;
      const response = await scim.get(
        `/Users?filter=${encodeURIComponent(filterUsers)}&sortBy=externalId${extra}`,
      );
      return response.json<{ Resources: Array<{ id: string }> }>().Resources.map((user) => user.id);
    };
    expect(await users('')).toEqual([userWith.id, userWithout.id]);
    expect(await users('&sortOrder=descending')).toEqual([userWithout.id, userWith.id]);
  });

  it('keeps membership consistent under random add/remove/replace/delete sequences', async () => {
    const users = await Promise.all(Array.from({ length: 5 }, () => createUser()));
    const ids = users.map((user) => user.id);
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), members: fc.subarray(ids, { minLength: 1 }) }),
      fc.record({ kind: fc.constant('remove' as const), members: fc.subarray(ids, { minLength: 1 }) }),
      fc.record({
        kind: fc.constant('removeFilter' as const),
        members: fc.subarray(ids, { minLength: 1, maxLength: 1 }),
      }),
      fc.record({ kind: fc.constant('replace' as const), members: fc.subarray(ids) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(operation, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
        async (requests) => {
          const group = await createGroup({ displayName: `prop-${String(Math.random())}` });
          const expected = new Set<string>();
          let version = 1;
          for (const ops of requests) {
            const before = [...expected].sort().join();
            const Operations = ops.map((op) => {
              switch (op.kind) {
                case 'add':
                  for (const id of op.members) expected.add(id);
                  return { op: 'add', path: 'members', value: op.members.map((value) => ({ value })) };
                case 'remove':
                  for (const id of op.members) expected.delete(id);
                  return { op: 'remove', path: 'members', value: op.members.map((value) => ({ value })) };
                case 'removeFilter':
                  expected.delete(op.members[0]);
                  return { op: 'remove', path: `members[value eq "${op.members[0]}"]` };
                case 'replace':
                  expected.clear();
                  for (const id of op.members) expected.add(id);
                  return { op: 'replace', path: 'members', value: op.members.map((value) => ({ value })) };
              }
            });
            const response = await scim.patch(`/Groups/${group.id}`, { schemas: [PATCH_OP], Operations });
            expect(response.statusCode).toBe(204);
            if ([...expected].sort().join() !== before) version += 1;
            expect(response.headers.etag).toBe(`W/"${String(version)}"`);
            expect(await memberIds(group.id)).toEqual([...expected].sort());
            for (const id of ids) {
              const listed = await listGroups(`id eq "${group.id}" and members eq "${id}"`);
              expect(listed.totalResults).toBe(expected.has(id) ? 1 : 0);
            }
          }
          expect((await scim.delete(`/Groups/${group.id}`)).statusCode).toBe(204);
          for (const id of ids) {
            expect((await listGroups(`members eq "${id}"`)).Resources.map((g) => g.id)).not.toContain(
              group.id,
            );
          }
        },
      ),
      { numRuns: 12, seed: 15 },
    );
  }, 60_000);
});
