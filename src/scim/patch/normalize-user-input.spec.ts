import { describe, expect, it } from '@jest/globals';
import { CORE_USER_SCHEMA_ID, ENTERPRISE_USER_SCHEMA_ID } from '../schema/user-schema.js';
import { normalizeUserInput } from './normalize-user-input.js';
import { ScimPatchError } from './scim-patch.errors.js';

function rejection(body: unknown): ScimPatchError {
  try {
    normalizeUserInput(body);
  } catch (error) {
    if (error instanceof ScimPatchError) return error;
    throw error;
  }
  throw new Error('expected the body to be rejected');
}

describe('normalizeUserInput', () => {
  it('normalises an Entra create body', () => {
    const user = normalizeUserInput({
      schemas: [CORE_USER_SCHEMA_ID, ENTERPRISE_USER_SCHEMA_ID],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1',
      active: 'True',
      emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b@testuser.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
      [ENTERPRISE_USER_SCHEMA_ID]: { employeeNumber: '701984', manager: 'm-1' },
    });
    expect(user).toEqual({
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1',
      active: true,
      emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b@testuser.com' }],
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      [ENTERPRISE_USER_SCHEMA_ID]: { employeeNumber: '701984', manager: { value: 'm-1' } },
    });
  });

  it('drops what Okta sends but the service does not store (password, groups)', () => {
    const user = normalizeUserInput({
      schemas: [CORE_USER_SCHEMA_ID],
      userName: 'test.user@okta.local',
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: true,
    });
    expect(user).not.toHaveProperty('password');
    expect(user).not.toHaveProperty('groups');
    expect(user).toMatchObject({ userName: 'test.user@okta.local', locale: 'en-US', active: true });
  });

  it('matches names case-insensitively and writes canonical names', () => {
    expect(normalizeUserInput({ USERNAME: 'a', DisplayName: 'A', NAME: { GIVENNAME: 'x' } })).toEqual({
      userName: 'a',
      displayName: 'A',
      name: { givenName: 'x' },
    });
  });

  it('accepts roles in the documented Id/DisplayName form and in RFC form', () => {
    const user = normalizeUserInput({
      userName: 'a',
      Roles: [
        { Id: 'r1', DisplayName: 'Admin' },
        { value: 'r2', display: 'Reader' },
      ],
    });
    expect(user.roles).toEqual([
      { value: 'r1', display: 'Admin' },
      { value: 'r2', display: 'Reader' },
    ]);
  });

  it('takes value/display over Id/DisplayName given with other values, and the manager as a one-element list', () => {
    const user = normalizeUserInput({
      userName: 'a',
      roles: [{ Id: 'alias', DisplayName: 'Alias', value: 'r1', display: 'Admin' }],
      [ENTERPRISE_USER_SCHEMA_ID]: { manager: [{ value: 'm-1' }] },
    });
    expect(user.roles).toEqual([{ value: 'r1', display: 'Admin' }]);
    expect(user[ENTERPRISE_USER_SCHEMA_ID]).toEqual({ manager: { value: 'm-1' } });
  });

  it('ignores read-only input: id, meta, schemas', () => {
    const user = normalizeUserInput({
      id: 'client-chosen',
      meta: { version: 'x' },
      schemas: ['x'],
      userName: 'a',
    });
    expect(user).toEqual({ userName: 'a' });
  });

  it('refuses attributes of an unknown extension unless told to ignore them', () => {
    const body = {
      userName: 'a',
      'urn:ietf:params:scim:schemas:extension:custom:2.0:User': { worksiteId: '180' },
    };
    expect(normalizeUserInput(body, { unknownExtensions: 'ignore' })).toEqual({ userName: 'a' });
    expect(rejection(body).scimType).toBe('invalidValue');
  });

  it('drops null attributes', () => {
    expect(normalizeUserInput({ userName: 'a', title: null, emails: null })).toEqual({ userName: 'a' });
  });

  it.each([
    ['a body that is not an object', 'x', 'invalidSyntax'],
    ['missing userName', { displayName: 'x' }, 'invalidValue'],
    ['blank userName', { userName: '  ' }, 'invalidValue'],
    ['unknown attribute', { userName: 'a', shoeSize: 9 }, 'invalidValue'],
    ['wrong type', { userName: 'a', active: 'maybe' }, 'invalidValue'],
    [
      'two primary e-mails',
      {
        userName: 'a',
        emails: [
          { value: 'a@x', primary: true },
          { value: 'b@x', primary: true },
        ],
      },
      'invalidValue',
    ],
  ] as const)('rejects %s with %s', (_name, body, scimType) => {
    expect(rejection(body).scimType).toBe(scimType);
  });
});
