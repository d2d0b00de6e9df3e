import { describe, expect, it } from '@jest/globals';
import { parseAttributeNames, projectResource, type AttributeProjection } from './attribute-projection.js';
import { GROUP_RESOURCE_SCHEMA, USER_VIEW_SCHEMA } from './group-schema.js';
import { ENTERPRISE_USER_SCHEMA_ID } from './user-schema.js';

const user = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE_USER_SCHEMA_ID],
  id: 'u1',
  externalId: 'e1',
  meta: { resourceType: 'User', version: 'W/"1"' },
  userName: 'bjensen',
  name: { givenName: 'Barbara', familyName: 'Jensen' },
  emails: [{ type: 'work', value: 'b@example.com', primary: true }],
  roles: [{ Id: 'admin', DisplayName: 'Admin' }],
  groups: [{ value: 'g1', display: 'Sales', type: 'direct' }],
  [ENTERPRISE_USER_SCHEMA_ID]: { employeeNumber: '7', department: 'Tour' },
};

function project(attributes?: string, excluded?: string): Record<string, unknown> {
  const projection: AttributeProjection = {
    ...(attributes !== undefined
      ? { attributes: parseAttributeNames(attributes, USER_VIEW_SCHEMA, 'a') }
      : {}),
    ...(excluded !== undefined ? { excluded: parseAttributeNames(excluded, USER_VIEW_SCHEMA, 'e') } : {}),
  };
  return projectResource(user, USER_VIEW_SCHEMA, projection);
}

describe('attributes / excludedAttributes (RFC 7644 §3.4.2.5)', () => {
  it('returns the named attributes plus the always-returned ones (id, schemas), names in any case', () => {
    expect(project('USERNAME,name.givenName')).toEqual({
      schemas: user.schemas,
      id: 'u1',
      userName: 'bjensen',
      name: { givenName: 'Barbara' },
    });
  });

  it('takes sub-attributes of multi-valued attributes and URN-qualified names', () => {
    expect(project('emails.value,urn:ietf:params:scim:schemas:core:2.0:User:groups')).toEqual({
      schemas: user.schemas,
      id: 'u1',
      emails: [{ value: 'b@example.com' }],
      groups: user.groups,
    });
    expect(project(`${ENTERPRISE_USER_SCHEMA_ID}:department`)).toEqual({
      schemas: user.schemas,
      id: 'u1',
      [ENTERPRISE_USER_SCHEMA_ID]: { department: 'Tour' },
    });
    expect(project(ENTERPRISE_USER_SCHEMA_ID)[ENTERPRISE_USER_SCHEMA_ID]).toEqual(
      user[ENTERPRISE_USER_SCHEMA_ID],
    );
  });

  it('leaves out excluded attributes but never id or schemas', () => {
    const out = project('groups,emails.primary,id,schemas,meta');
    expect(out).toHaveProperty('groups');
    const excluded = project(undefined, 'groups,emails.primary,id,schemas,meta,' + ENTERPRISE_USER_SCHEMA_ID);
    expect(excluded).not.toHaveProperty('groups');
    expect(excluded).not.toHaveProperty('meta');
    expect(excluded).not.toHaveProperty(ENTERPRISE_USER_SCHEMA_ID);
    expect(excluded.emails).toEqual([{ type: 'work', value: 'b@example.com' }]);
    expect(excluded).toMatchObject({ id: 'u1', schemas: user.schemas });
  });

  it('treats the roles the interface document names Id/DisplayName as value/display', () => {
    expect(project('roles.value').roles).toEqual([{ Id: 'admin' }]);
  });

  it('refuses a name of another schema and malformed names', () => {
    expect(() => parseAttributeNames('urn:x:y:z', GROUP_RESOURCE_SCHEMA, 'attributes')).toThrow(
      'names no schema',
    );
    expect(() => parseAttributeNames('a.b.c', GROUP_RESOURCE_SCHEMA, 'attributes')).toThrow(
      'not an attribute',
    );
    expect(() =>
      parseAttributeNames(
        Array.from({ length: 201 }, () => 'x'),
        GROUP_RESOURCE_SCHEMA,
        'attributes',
      ),
    ).toThrow('at most 200');
  });
});
