import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  CORE_USER_SCHEMA_ID,
  ENTERPRISE_USER_SCHEMA_ID,
  PATCH_OP_MESSAGE_ID,
} from '../schema/user-schema.js';
import { ScimPatchError, type ScimPatchErrorType } from './scim-patch.errors.js';
import { applyScimPatch, applyUserPatch } from './scim-patch.js';
import { parsePatchRequest } from './scim-patch-request.js';

type Resource = Record<string, unknown>;

const ENTERPRISE = ENTERPRISE_USER_SCHEMA_ID;

/** A user in the shape the service stores, with overrides per test. */
function userFixture(overrides: Resource = {}): Resource {
  return {
    schemas: [CORE_USER_SCHEMA_ID],
    id: '2819c223-7f76-453a-919d-413861904646',
    externalId: 'bjensen',
    meta: {
      resourceType: 'User',
      created: '2011-08-01T18:29:49.793Z',
      lastModified: '2011-08-01T18:29:49.793Z',
      location: 'https://example.com/v2/Users/2819c223-7f76-453a-919d-413861904646',
      version: 'W/"f250dd84f0671c3"',
    },
    userName: 'bjensen@example.com',
    name: { givenName: 'Barbara', familyName: 'Jensen' },
    displayName: 'Babs Jensen',
    active: true,
    emails: [{ value: 'bjensen@example.com', type: 'work', primary: true }],
    ...overrides,
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

function body(...operations: Resource[]): Resource {
  return { schemas: [PATCH_OP_MESSAGE_ID], Operations: operations };
}

function patch(resource: Resource, ...operations: Resource[]): Resource {
  return applyScimPatch(deepFreeze(resource), body(...operations));
}

function patchError(resource: Resource, requestBody: unknown): ScimPatchError {
  try {
    applyScimPatch(deepFreeze(resource), requestBody);
  } catch (error) {
    if (error instanceof ScimPatchError) return error;
    throw error;
  }
  throw new Error('expected the patch to be rejected');
}

interface PatchCase {
  readonly name: string;
  readonly before?: Resource;
  readonly operations: Resource[];
  /** Members expected in the result (others must be as in `before`). */
  readonly expected: Resource;
  /** Members expected to be gone from the result. */
  readonly removed?: readonly string[];
}

function runCases(cases: readonly PatchCase[]): void {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const before = c.before ?? userFixture();
    const after = patch(before, ...c.operations);
    const untouched = Object.fromEntries(
      Object.entries(before).filter(([key]) => !(key in c.expected) && !(c.removed ?? []).includes(key)),
    );
    expect(after).toEqual({ ...untouched, ...c.expected });
    for (const key of c.removed ?? []) expect(after).not.toHaveProperty([key]);
  });
}

const rolesUser = (): Resource =>
  userFixture({
    roles: [
      { value: 'r1', display: 'Admin' },
      { value: 'r2', display: 'Reader' },
    ],
  });
const addressesUser = (): Resource =>
  userFixture({
    addresses: [
      {
        type: 'work',
        streetAddress: '100 Universal City Plaza',
        locality: 'Hollywood',
        region: 'CA',
        primary: true,
      },
      { type: 'home', streetAddress: '456 Hollywood Blvd', locality: 'Hollywood', region: 'CA' },
    ],
  });

describe('RFC 7644 §3.5.2.1 add', () => {
  runCases([
    {
      // The RFC adds Group members; a User's multi-valued equivalent is emails/roles.
      name: 'adds values to a multi-valued attribute',
      operations: [{ op: 'add', path: 'emails', value: [{ value: 'babs@jensen.org', type: 'home' }] }],
      expected: {
        emails: [
          { value: 'bjensen@example.com', type: 'work', primary: true },
          { value: 'babs@jensen.org', type: 'home' },
        ],
      },
    },
    {
      name: 'path-less add of several attributes (RFC example with emails and nickName)',
      operations: [
        { op: 'add', value: { emails: [{ value: 'babs@jensen.org', type: 'home' }], nickName: 'Babs' } },
      ],
      expected: {
        emails: [
          { value: 'bjensen@example.com', type: 'work', primary: true },
          { value: 'babs@jensen.org', type: 'home' },
        ],
        nickName: 'Babs',
      },
    },
    {
      name: 'add on a set single-valued attribute replaces it',
      operations: [{ op: 'add', path: 'displayName', value: 'Barbara J.' }],
      expected: { displayName: 'Barbara J.' },
    },
    {
      name: 'add on a complex attribute merges the given sub-attributes',
      operations: [{ op: 'add', path: 'name', value: { middleName: 'Jane' } }],
      expected: { name: { givenName: 'Barbara', familyName: 'Jensen', middleName: 'Jane' } },
    },
    {
      name: 'adding a value that is already there changes nothing',
      operations: [{ op: 'add', path: 'emails', value: [{ value: 'BJENSEN@example.com', type: 'work' }] }],
      expected: { emails: [{ value: 'bjensen@example.com', type: 'work', primary: true }] },
    },
    {
      name: 'add on an absent attribute creates it',
      operations: [{ op: 'add', path: 'title', value: 'Tour Guide' }],
      expected: { title: 'Tour Guide' },
    },
    {
      name: 'add to a filtered sub-attribute updates the matching element',
      operations: [{ op: 'add', path: 'emails[type eq "work"].display', value: 'Work mail' }],
      expected: {
        emails: [{ value: 'bjensen@example.com', type: 'work', primary: true, display: 'Work mail' }],
      },
    },
  ]);
});

describe('RFC 7644 §3.5.2.2 remove', () => {
  runCases([
    {
      name: 'removes one value selected by a filter (RFC: members[value eq "…"])',
      before: rolesUser(),
      operations: [{ op: 'remove', path: 'roles[value eq "r1"]' }],
      expected: { roles: [{ value: 'r2', display: 'Reader' }] },
    },
    {
      name: 'removes all values of a multi-valued attribute',
      before: rolesUser(),
      operations: [{ op: 'remove', path: 'roles' }],
      expected: {},
      removed: ['roles'],
    },
    {
      name: 'removes elements matching a complex filter',
      before: userFixture({
        emails: [
          { value: 'bjensen@example.com', type: 'work' },
          { value: 'babs@jensen.org', type: 'work' },
          { value: 'home@example.com', type: 'home' },
        ],
      }),
      operations: [{ op: 'remove', path: 'emails[type eq "work" and value ew "example.com"]' }],
      expected: {
        emails: [
          { value: 'babs@jensen.org', type: 'work' },
          { value: 'home@example.com', type: 'home' },
        ],
      },
    },
    {
      name: 'remove all then add replaces the values (RFC example)',
      before: rolesUser(),
      operations: [
        { op: 'remove', path: 'roles' },
        { op: 'add', path: 'roles', value: [{ value: 'r9', display: 'Owner' }] },
      ],
      expected: { roles: [{ value: 'r9', display: 'Owner' }] },
    },
    {
      name: 'removes a single-valued attribute',
      operations: [{ op: 'remove', path: 'displayName' }],
      expected: {},
      removed: ['displayName'],
    },
    {
      name: 'removing the last element leaves the attribute unassigned',
      operations: [{ op: 'remove', path: 'emails[type eq "work"]' }],
      expected: {},
      removed: ['emails'],
    },
    {
      name: 'removes a sub-attribute of the matching elements only',
      before: userFixture({
        emails: [
          { value: 'a@example.com', type: 'work', display: 'A' },
          { value: 'b@example.com', type: 'home', display: 'B' },
        ],
      }),
      operations: [{ op: 'remove', path: 'emails[type eq "work"].display' }],
      expected: {
        emails: [
          { value: 'a@example.com', type: 'work' },
          { value: 'b@example.com', type: 'home', display: 'B' },
        ],
      },
    },
    {
      name: 'removes a sub-attribute of a complex attribute',
      operations: [{ op: 'remove', path: 'name.givenName' }],
      expected: { name: { familyName: 'Jensen' } },
    },
    {
      name: 'removing an absent attribute is a no-op',
      operations: [{ op: 'remove', path: 'nickName' }],
      expected: {},
    },
  ]);
});

describe('RFC 7644 §3.5.2.3 replace', () => {
  runCases([
    {
      name: 'replaces all values of a multi-valued attribute',
      before: rolesUser(),
      operations: [{ op: 'replace', path: 'roles', value: [{ value: 'r3', display: 'Writer' }] }],
      expected: { roles: [{ value: 'r3', display: 'Writer' }] },
    },
    {
      name: 'replaces the element a filter selects (RFC: addresses[type eq "work"])',
      before: addressesUser(),
      operations: [
        {
          op: 'replace',
          path: 'addresses[type eq "work"]',
          value: {
            type: 'work',
            streetAddress: '911 Universal City Plaza',
            locality: 'Hollywood',
            region: 'CA',
            postalCode: '91608',
            country: 'US',
            formatted: '911 Universal City Plaza\nHollywood, CA 91608 US',
            primary: true,
          },
        },
      ],
      expected: {
        addresses: [
          {
            type: 'work',
            streetAddress: '911 Universal City Plaza',
            locality: 'Hollywood',
            region: 'CA',
            postalCode: '91608',
            country: 'US',
            formatted: '911 Universal City Plaza\nHollywood, CA 91608 US',
            primary: true,
          },
          { type: 'home', streetAddress: '456 Hollywood Blvd', locality: 'Hollywood', region: 'CA' },
        ],
      },
    },
    {
      name: 'replaces a sub-attribute of the filtered element (RFC: addresses[type eq "work"].streetAddress)',
      before: addressesUser(),
      operations: [
        { op: 'replace', path: 'addresses[type eq "work"].streetAddress', value: '1010 Broadway Ave' },
      ],
      expected: {
        addresses: [
          {
            type: 'work',
            streetAddress: '1010 Broadway Ave',
            locality: 'Hollywood',
            region: 'CA',
            primary: true,
          },
          { type: 'home', streetAddress: '456 Hollywood Blvd', locality: 'Hollywood', region: 'CA' },
        ],
      },
    },
    {
      name: 'path-less replace (RFC example with emails and nickName) replaces whole arrays',
      before: userFixture({ emails: [{ value: 'old@example.com', type: 'other' }] }),
      operations: [
        {
          op: 'replace',
          value: {
            emails: [
              { value: 'bjensen@example.com', type: 'work', primary: true },
              { value: 'babs@jensen.org', type: 'home' },
            ],
            nickName: 'Babs',
          },
        },
      ],
      expected: {
        emails: [
          { value: 'bjensen@example.com', type: 'work', primary: true },
          { value: 'babs@jensen.org', type: 'home' },
        ],
        nickName: 'Babs',
      },
    },
    {
      name: 'replaces a sub-attribute of a complex attribute',
      operations: [{ op: 'replace', path: 'name.familyName', value: 'Doe' }],
      expected: { name: { givenName: 'Barbara', familyName: 'Doe' } },
    },
    {
      name: 'replace on a complex attribute leaves unnamed sub-attributes unchanged',
      operations: [{ op: 'replace', path: 'name', value: { familyName: 'Doe', middleName: null } }],
      expected: { name: { givenName: 'Barbara', familyName: 'Doe' } },
    },
    {
      name: 'replace on an absent attribute adds it',
      operations: [{ op: 'replace', path: 'locale', value: 'en-US' }],
      expected: { locale: 'en-US' },
    },
    {
      name: 'replace with null unassigns',
      operations: [{ op: 'replace', path: 'displayName', value: null }],
      expected: {},
      removed: ['displayName'],
    },
  ]);
});

describe('Microsoft Entra ID and Okta requests', () => {
  runCases([
    {
      name: 'Entra: capitalised op and "False" string boolean',
      operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      expected: { active: false },
    },
    {
      name: 'Entra: path-less replace with dotted, URN-qualified and cased keys',
      operations: [
        {
          op: 'Replace',
          value: {
            'name.givenName': 'Barb',
            'NAME.familyName': 'J',
            [`${ENTERPRISE}:employeeNumber`]: '701984',
            [`${CORE_USER_SCHEMA_ID}:displayName`]: 'BJ',
            Active: 'True',
          },
        },
      ],
      expected: {
        name: { givenName: 'Barb', familyName: 'J' },
        [ENTERPRISE]: { employeeNumber: '701984' },
        displayName: 'BJ',
        active: true,
        schemas: [CORE_USER_SCHEMA_ID, ENTERPRISE],
      },
    },
    {
      name: 'Entra: role value given as a JSON object inside a string',
      operations: [{ op: 'Add', path: 'roles', value: [{ value: '{"id":"r1","displayName":"Admin"}' }] }],
      expected: { roles: [{ value: 'r1', display: 'Admin' }] },
    },
    {
      name: 'Entra: add to emails[type eq "work"].value updates the existing work e-mail',
      operations: [{ op: 'Add', path: 'emails[type eq "work"].value', value: 'barbara@example.com' }],
      expected: { emails: [{ value: 'barbara@example.com', type: 'work', primary: true }] },
    },
    {
      name: 'Entra: add to emails[type eq "home"].value creates the home e-mail',
      operations: [{ op: 'Add', path: 'emails[type eq "home"].value', value: 'babs@jensen.org' }],
      expected: {
        emails: [
          { value: 'bjensen@example.com', type: 'work', primary: true },
          { type: 'home', value: 'babs@jensen.org' },
        ],
      },
    },
    {
      name: 'Entra: manager sent as a bare id',
      operations: [
        { op: 'Add', path: `${ENTERPRISE}:manager`, value: '26118915-6090-4610-87a4-49d0b5ecf3ea' },
      ],
      expected: {
        [ENTERPRISE]: { manager: { value: '26118915-6090-4610-87a4-49d0b5ecf3ea' } },
        schemas: [CORE_USER_SCHEMA_ID, ENTERPRISE],
      },
    },
    {
      name: 'Entra: remove with a value list removes only the listed roles',
      before: rolesUser(),
      operations: [{ op: 'Remove', path: 'roles', value: [{ value: 'r2' }] }],
      expected: { roles: [{ value: 'r1', display: 'Admin' }] },
    },
    {
      name: 'remove with a value list matches on the sub-attributes given (value only, whatever the type)',
      before: userFixture({
        emails: [
          { value: 'w@example.com', type: 'work', primary: true },
          { value: 'h@example.com', type: 'home' },
          { value: 'h2@example.com', type: 'home' },
        ],
      }),
      operations: [{ op: 'remove', path: 'emails', value: [{ value: 'W@example.com' }] }],
      expected: {
        emails: [
          { value: 'h@example.com', type: 'home' },
          { value: 'h2@example.com', type: 'home' },
        ],
      },
    },
    {
      name: 'remove with a value list of {type:"home"} removes every home value',
      before: userFixture({
        emails: [
          { value: 'w@example.com', type: 'work', primary: true },
          { value: 'h@example.com', type: 'home' },
          { value: 'h2@example.com', type: 'home' },
        ],
      }),
      operations: [{ op: 'remove', path: 'emails', value: { type: 'home' } }],
      expected: { emails: [{ value: 'w@example.com', type: 'work', primary: true }] },
    },
    {
      name: 'Okta: path-less replace {active:false}',
      operations: [{ op: 'replace', value: { active: false } }],
      expected: { active: false },
    },
    {
      name: 'names in paths and value keys are case-insensitive; output uses canonical casing',
      operations: [{ op: 'ADD', path: 'EMAILS', value: [{ VALUE: 'x@example.com', Type: 'other' }] }],
      expected: {
        emails: [
          { value: 'bjensen@example.com', type: 'work', primary: true },
          { value: 'x@example.com', type: 'other' },
        ],
      },
    },
    {
      name: 'roles accepted in the documented Id/DisplayName form',
      operations: [{ op: 'add', path: 'roles', value: [{ Id: 'r7', DisplayName: 'Auditor' }] }],
      expected: { roles: [{ value: 'r7', display: 'Auditor' }] },
    },
    {
      // /Schemas advertises value/display as the writable names; Id/DisplayName mirror them.
      name: 'a role giving value and Id (display and DisplayName) apart: the RFC names win, the aliases are ignored',
      operations: [
        {
          op: 'add',
          path: 'roles',
          value: [
            { Id: 'alias-id', value: 'r8', DisplayName: 'Alias', display: 'Auditor', type: 't' },
            { VALUE: 'r9', id: 'alias-2' },
          ],
        },
      ],
      expected: { roles: [{ value: 'r8', display: 'Auditor', type: 't' }, { value: 'r9' }] },
    },
    {
      name: "Entra's documented manager PATCH: a one-element list of {value}",
      operations: [{ op: 'Replace', path: `${ENTERPRISE}:manager`, value: [{ value: 'boss-7' }] }],
      expected: {
        [ENTERPRISE]: { manager: { value: 'boss-7' } },
        schemas: [CORE_USER_SCHEMA_ID, ENTERPRISE],
      },
    },
    {
      name: 'a one-element list of a bare id for the manager, and of an object for name',
      operations: [
        { op: 'add', path: `${ENTERPRISE}:manager`, value: ['boss-8'] },
        { op: 'replace', path: 'name', value: [{ givenName: 'Babs' }] },
      ],
      expected: {
        [ENTERPRISE]: { manager: { value: 'boss-8' } },
        name: { givenName: 'Babs', familyName: 'Jensen' },
        schemas: [CORE_USER_SCHEMA_ID, ENTERPRISE],
      },
    },
    {
      name: 'a JSON-encoded complex value (the documented Value is a string)',
      operations: [{ op: 'replace', path: 'name', value: '{"givenName":"Babs"}' }],
      expected: { name: { givenName: 'Babs', familyName: 'Jensen' } },
    },
    {
      name: 'echoing id unchanged in a path-less value is not a change',
      operations: [{ op: 'replace', value: { id: '2819c223-7f76-453a-919d-413861904646', title: 'Dr' } }],
      expected: { title: 'Dr' },
    },
    {
      name: 'replace of the enterprise extension object merges its attributes',
      before: userFixture({
        schemas: [CORE_USER_SCHEMA_ID, ENTERPRISE],
        [ENTERPRISE]: { department: 'Sales', costCenter: '4130' },
      }),
      operations: [{ op: 'replace', path: ENTERPRISE, value: { Department: 'Marketing', division: 'West' } }],
      expected: { [ENTERPRISE]: { department: 'Marketing', costCenter: '4130', division: 'West' } },
    },
    {
      name: 'removing the last extension attribute drops the extension and its schema URN',
      before: userFixture({
        schemas: [CORE_USER_SCHEMA_ID, ENTERPRISE],
        [ENTERPRISE]: { department: 'Sales' },
      }),
      operations: [{ op: 'remove', path: `${ENTERPRISE}:department` }],
      expected: { schemas: [CORE_USER_SCHEMA_ID] },
      removed: [ENTERPRISE],
    },
    {
      name: 'RFC 7643 attributes the service does not store (Okta password) are dropped',
      operations: [{ op: 'replace', value: { password: 't1meMa$heen', groups: [], nickName: 'B' } }],
      expected: { nickName: 'B' },
    },
  ]);

  it('accepts the documented body {Schemas, Operations:[{Path, Value}]} where a missing op means replace', () => {
    const after = applyScimPatch(userFixture(), {
      Schemas: [PATCH_OP_MESSAGE_ID],
      Operations: [
        { Path: 'displayName', Value: 'Barbara' },
        { Path: 'active', Value: 'false' },
      ],
    });
    expect(after).toMatchObject({ displayName: 'Barbara', active: false });
  });

  it('parses JSON-encoded values in the documented string-typed Value', () => {
    const after = applyScimPatch(userFixture(), {
      Schemas: [PATCH_OP_MESSAGE_ID],
      Operations: [
        { Path: 'roles', Value: '[{"Id":"r1","DisplayName":"Admin"}]' },
        { Value: '{"nickName":"Babs","active":"false"}' },
      ],
    });
    expect(after).toMatchObject({
      roles: [{ value: 'r1', display: 'Admin' }],
      nickName: 'Babs',
      active: false,
    });
  });

  it('rewrites a differently-cased stored key under its canonical name', () => {
    const after = patch(
      { userName: 'a', DisplayName: 'Old' },
      { op: 'replace', path: 'displayname', value: 'New' },
    );
    expect(after).toEqual({ userName: 'a', displayName: 'New' });
  });

  it('reads body and operation member names in any case', () => {
    expect(
      parsePatchRequest({ SCHEMAS: [], operations: [{ OP: 'Remove', PATH: 'title', VALUE: null }] }),
    ).toEqual([{ op: 'remove', path: 'title', value: null }]);
  });

  it('ignores attributes of unknown extensions only when asked to', () => {
    const request = body({
      op: 'replace',
      value: { 'urn:ietf:params:scim:schemas:extension:custom:2.0:User:worksiteId': '180', title: 'x' },
    });
    expect(applyScimPatch(userFixture(), request, { unknownExtensions: 'ignore' })).toMatchObject({
      title: 'x',
    });
    expect(() => applyScimPatch(userFixture(), request)).toThrow(/Unknown schema/);
  });

  it('applyUserPatch returns a typed User', () => {
    const user = applyUserPatch({ userName: 'a' }, body({ op: 'replace', path: 'active', value: 'TRUE' }));
    expect(user.active).toBe(true);
    expect(user.userName).toBe('a');
  });
});

describe('primary (RFC 7643 §2.4)', () => {
  const twoEmails = (): Resource =>
    userFixture({
      emails: [
        { value: 'w@example.com', type: 'work', primary: true },
        { value: 'h@example.com', type: 'home' },
      ],
    });

  it('adding a primary value clears primary on the others', () => {
    const after = patch(twoEmails(), {
      op: 'add',
      path: 'emails',
      value: [{ value: 'n@example.com', type: 'other', primary: 'True' }],
    });
    expect(after['emails']).toEqual([
      { value: 'w@example.com', type: 'work', primary: false },
      { value: 'h@example.com', type: 'home' },
      { value: 'n@example.com', type: 'other', primary: true },
    ]);
  });

  it('setting primary through a filtered path clears it on the others', () => {
    const after = patch(twoEmails(), { op: 'replace', path: 'emails[type eq "home"].primary', value: true });
    expect(after['emails']).toEqual([
      { value: 'w@example.com', type: 'work', primary: false },
      { value: 'h@example.com', type: 'home', primary: true },
    ]);
  });

  it('re-adding an existing value with primary:true updates it instead of duplicating it', () => {
    const after = patch(twoEmails(), {
      op: 'add',
      path: 'emails',
      value: [{ value: 'H@example.com', type: 'home', primary: true }],
    });
    expect(after['emails']).toEqual([
      { value: 'w@example.com', type: 'work', primary: false },
      { value: 'h@example.com', type: 'home', primary: true },
    ]);
  });

  it('an element created from a primary eq true filter becomes the only primary', () => {
    const after = patch(twoEmails(), {
      op: 'add',
      path: 'emails[type eq "other" and primary eq true].value',
      value: 'o@example.com',
    });
    expect(after['emails']).toEqual([
      { value: 'w@example.com', type: 'work', primary: false },
      { value: 'h@example.com', type: 'home' },
      { type: 'other', primary: true, value: 'o@example.com' },
    ]);
  });

  it('two new primary values are invalid', () => {
    const error = patchError(
      twoEmails(),
      body({
        op: 'replace',
        path: 'emails',
        value: [
          { value: 'a@x', primary: true },
          { value: 'b@x', primary: 'true' },
        ],
      }),
    );
    expect(error.scimType).toBe('invalidValue');
  });
});

describe('errors carry a scimType', () => {
  const cases: ReadonlyArray<readonly [string, unknown, ScimPatchErrorType, string]> = [
    ['body is not an object', [], 'invalidSyntax', 'JSON object'],
    ['Operations missing', { schemas: [PATCH_OP_MESSAGE_ID] }, 'invalidSyntax', 'Operations'],
    ['Operations empty', body(), 'invalidSyntax', 'non-empty'],
    ['unknown op', body({ op: 'move', path: 'title' }), 'invalidSyntax', '"move"'],
    ['operation not an object', body('replace' as unknown as Resource), 'invalidSyntax', 'object'],
    [
      'a list of two managers',
      body({
        op: 'replace',
        path: `${ENTERPRISE_USER_SCHEMA_ID}:manager`,
        value: [{ value: 'a' }, { value: 'b' }],
      }),
      'invalidValue',
      'single-valued',
    ],
    [
      'a role giving Id twice in different case',
      body({ op: 'add', path: 'roles', value: [{ Id: 'a', id: 'b' }] }),
      'invalidValue',
      'more than once',
    ],
    [
      'same member twice in different case',
      body({ op: 'add', OP: 'remove', path: 'title' }),
      'invalidSyntax',
      'more than once',
    ],
    [
      'schemas not strings',
      { schemas: 'x', Operations: [{ op: 'remove', path: 'title' }] },
      'invalidSyntax',
      'schemas',
    ],
    [
      'unknown attribute',
      body({ op: 'replace', path: 'favouriteColour', value: 'red' }),
      'invalidPath',
      'favouriteColour',
    ],
    [
      'unknown sub-attribute',
      body({ op: 'replace', path: 'name.nickname', value: 'x' }),
      'invalidPath',
      'name.nickname',
    ],
    [
      'unknown enterprise attribute',
      body({ op: 'replace', path: `${ENTERPRISE}:shoeSize`, value: '9' }),
      'invalidPath',
      'shoeSize',
    ],
    [
      'unknown key in a path-less value',
      body({ op: 'replace', value: { nickname2: 'x' } }),
      'invalidPath',
      'nickname2',
    ],
    ['malformed path', body({ op: 'replace', path: 'name.', value: 'x' }), 'invalidPath', 'name.'],
    [
      'filter on a single-valued attribute',
      body({ op: 'replace', path: 'name[givenName eq "x"]', value: {} }),
      'invalidPath',
      'multi-valued',
    ],
    [
      'unknown schema',
      body({ op: 'replace', path: 'urn:example:x:2.0:Thing:a', value: 'x' }),
      'invalidPath',
      'Unknown schema',
    ],
    ['path that is not a string', body({ op: 'replace', path: 5, value: 'x' }), 'invalidPath', 'string'],
    [
      'malformed value filter',
      body({ op: 'replace', path: 'emails[type eq]', value: 'x' }),
      'invalidFilter',
      'Expected a value',
    ],
    [
      'value filter on an unknown sub-attribute',
      body({ op: 'remove', path: 'emails[kind eq "x"]' }),
      'invalidFilter',
      'emails.kind',
    ],
    ['remove without path', body({ op: 'remove' }), 'noTarget', 'needs a path'],
    [
      'remove with a value list that names no element',
      body({ op: 'remove', path: 'emails', value: [{ value: 'nobody@example.com' }] }),
      'noTarget',
      'values listed for removal',
    ],
    [
      'replace of whole elements where the filter matches nothing',
      body({ op: 'replace', path: 'emails[type eq "home"]', value: { value: 'h@x' } }),
      'noTarget',
      'type eq "home"',
    ],
    [
      'remove where the filter matches nothing',
      body({ op: 'remove', path: 'emails[type eq "home"]' }),
      'noTarget',
      'type eq "home"',
    ],
    [
      'add whose filter cannot describe a new element',
      body({ op: 'add', path: 'emails[value ew "@x.org"].type', value: 'home' }),
      'noTarget',
      'cannot be built',
    ],
    ['not a boolean', body({ op: 'replace', path: 'active', value: 'maybe' }), 'invalidValue', 'boolean'],
    ['not a string', body({ op: 'replace', path: 'userName', value: 42 }), 'invalidValue', 'string'],
    [
      'complex value that is not an object',
      body({ op: 'replace', path: 'name', value: 'Babs' }),
      'invalidValue',
      'object',
    ],
    ['add without value', body({ op: 'add', path: 'title' }), 'invalidValue', 'needs a value'],
    [
      'unknown sub-attribute inside a value',
      body({ op: 'add', path: 'emails', value: [{ valu: 'x' }] }),
      'invalidValue',
      'emails.valu',
    ],
    [
      'null for a filtered element',
      body({ op: 'replace', path: 'emails[type eq "work"]', value: null }),
      'invalidValue',
      'remove',
    ],
    ['path-less value that is not an object', body({ op: 'replace', value: 'x' }), 'invalidValue', 'object'],
    ['changing id', body({ op: 'replace', path: 'id', value: 'other' }), 'mutability', 'readOnly'],
    ['removing id', body({ op: 'remove', path: 'id' }), 'mutability', 'readOnly'],
    [
      'changing meta.version',
      body({ op: 'replace', path: 'meta.version', value: 'W/"1"' }),
      'mutability',
      'readOnly',
    ],
    [
      'changing meta in a path-less value',
      body({ op: 'replace', value: { meta: { resourceType: 'Group' } } }),
      'mutability',
      'meta',
    ],
    ['removing the required userName', body({ op: 'remove', path: 'userName' }), 'mutability', 'required'],
    [
      'clearing the required userName',
      body({ op: 'replace', path: 'userName', value: null }),
      'mutability',
      'required',
    ],
  ];
  it.each(cases)('%s → %s', (_name, requestBody, scimType, message) => {
    const error = patchError(userFixture(), requestBody);
    expect(error.scimType).toBe(scimType);
    expect(error.message).toContain(message);
  });

  it('names the failing operation', () => {
    const error = patchError(
      userFixture(),
      body({ op: 'replace', path: 'title', value: 'x' }, { op: 'replace', path: 'active', value: 'maybe' }),
    );
    expect(error.operationIndex).toBe(1);
    expect(error.message).toMatch(/^Operations\[1\]: /);
  });
});

// ---- atomicity (fast-check) -------------------------------------------------------------------------------

const word = fc.stringMatching(/^[a-z]{1,8}$/);
const email = fc.tuple(word, word).map(([local, domain]) => `${local}@${domain}.example`);
const stringBoolean = fc.oneof(fc.boolean(), fc.constantFrom('True', 'false', 'FALSE', 'true'));
const emailType = fc.constantFrom('work', 'home', 'other');

/** Operations valid on any user this generator can produce. */
const validOperation: fc.Arbitrary<Resource> = fc.oneof(
  fc.record({
    op: fc.constantFrom('replace', 'Replace', 'add'),
    path: fc.constantFrom('displayName', 'title', 'nickName', 'name.givenName'),
    value: word,
  }),
  fc.record({ op: fc.constantFrom('replace', 'Replace'), path: fc.constant('active'), value: stringBoolean }),
  fc.record({
    op: fc.constantFrom('remove', 'Remove'),
    path: fc.constantFrom('displayName', 'title', 'emails', 'roles', 'name', `${ENTERPRISE}:department`),
  }),
  fc.record({
    op: fc.constantFrom('add', 'Add'),
    path: fc.constant('emails'),
    value: fc.array(fc.record({ value: email, type: emailType }), { maxLength: 3 }),
  }),
  fc.record({
    op: fc.constant('add'),
    path: emailType.map((type) => `emails[type eq "${type}"].value`),
    value: email,
  }),
  fc.record({
    op: fc.constant('add'),
    path: fc.constant('emails'),
    value: fc.record({ value: email, type: emailType, primary: fc.constant(true) }),
  }),
  fc.record({
    op: fc.constant('Add'),
    path: fc.constant('roles'),
    value: word.map((id) => [{ value: JSON.stringify({ id, displayName: id.toUpperCase() }) }]),
  }),
  fc.record({
    op: fc.constant('Replace'),
    value: fc.record({ 'name.familyName': word, [`${ENTERPRISE}:department`]: word, active: stringBoolean }),
  }),
);

const invalidOperation: fc.Arbitrary<Resource> = fc.constantFrom<Resource>(
  { op: 'replace', path: 'id', value: 'someone-else' },
  { op: 'remove' },
  { op: 'replace', path: 'active', value: 'maybe' },
  { op: 'replace', path: 'shoeSize', value: '9' },
  { op: 'replace', path: 'emails[type eq "pager"]', value: { value: 'x@y' } },
  { op: 'add', path: 'title' },
  { op: 'remove', path: 'userName' },
  { op: 'jump', path: 'title' },
);

function primaryCount(value: unknown): number {
  return Array.isArray(value)
    ? value.filter((item: { primary?: unknown }) => item.primary === true).length
    : 0;
}

describe('atomicity (fast-check)', () => {
  it('a valid list followed by one invalid operation throws and leaves the input unchanged', () => {
    fc.assert(
      fc.property(fc.array(validOperation, { maxLength: 8 }), invalidOperation, (valid, invalid) => {
        const input = deepFreeze(userFixture());
        const snapshot = structuredClone(input);
        let caught: unknown;
        try {
          applyScimPatch(input, body(...valid, invalid));
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(ScimPatchError);
        expect((caught as ScimPatchError).operationIndex).toBe(valid.length);
        expect(input).toEqual(snapshot);
      }),
      { numRuns: 300 },
    );
  });

  it('valid lists succeed on a copy, keep the input and leave at most one primary per attribute', () => {
    fc.assert(
      fc.property(fc.array(validOperation, { minLength: 1, maxLength: 8 }), (valid) => {
        const input = deepFreeze(userFixture());
        const snapshot = structuredClone(input);
        const after = applyScimPatch(input, body(...valid));
        expect(input).toEqual(snapshot);
        expect(after['id']).toBe(input['id']);
        expect(after['userName']).toBe(input['userName']);
        expect(primaryCount(after['emails'])).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });
});

describe('Entra interop: replace emails[type eq "work"].value', () => {
  const replaceWork = body({ op: 'Replace', path: 'emails[type eq "work"].value', value: 'new@x.com' });

  it('fills the one e-mail that has no type', () => {
    const user = { userName: 'a', emails: [{ value: 'old@x.com', primary: true }] };
    expect(applyUserPatch(user, replaceWork).emails).toEqual([
      { value: 'new@x.com', type: 'work', primary: true },
    ]);
  });

  it('fills it for Add too, and Add through another filter keeps the elements that lack its attribute', () => {
    const addWork = body({ op: 'Add', path: 'emails[type eq "work"].value', value: 'new@x.com' });
    const user = {
      userName: 'a',
      emails: [{ value: 'old@x.com', primary: true }],
      phoneNumbers: [{ value: '111' }],
      roles: [{ value: 'a', display: 'A' }],
    };
    expect(applyUserPatch(user, addWork).emails).toEqual([
      { value: 'new@x.com', type: 'work', primary: true },
    ]);
    const addMobile = body({ op: 'add', path: 'phoneNumbers[type eq "mobile"].value', value: '222' });
    expect(applyUserPatch(user, addMobile).phoneNumbers).toEqual([
      { value: '111' },
      { type: 'mobile', value: '222' },
    ]);
    const addPrimaryRole = body({ op: 'add', path: 'roles[primary eq "True"].value', value: 'b' });
    expect(applyUserPatch(user, addPrimaryRole).roles).toEqual([
      { value: 'a', display: 'A' },
      { primary: true, value: 'b' },
    ]);
    const addPrimaryEmail = body({ op: 'add', path: 'emails[primary eq true].value', value: 'p@x.com' });
    expect(
      applyUserPatch({ userName: 'a', emails: [{ value: 'old@x.com' }] }, addPrimaryEmail).emails,
    ).toEqual([{ value: 'old@x.com' }, { primary: true, value: 'p@x.com' }]);
  });

  it('creates the work e-mail when none matches and none is blank', () => {
    const user = { userName: 'a', emails: [{ type: 'home', value: 'h@x.com' }] };
    expect(applyUserPatch(user, replaceWork).emails).toEqual([
      { type: 'home', value: 'h@x.com' },
      { type: 'work', value: 'new@x.com' },
    ]);
  });
});

describe('manager "" (Entra clears the manager so)', () => {
  it('removes the manager instead of storing {"value": ""}', () => {
    const user = { userName: 'a', [ENTERPRISE_USER_SCHEMA_ID]: { department: 'd', manager: { value: 'm' } } };
    for (const operation of [
      { op: 'replace', path: `${ENTERPRISE_USER_SCHEMA_ID}:manager`, value: '' },
      { op: 'replace', path: `${ENTERPRISE_USER_SCHEMA_ID}:manager.value`, value: '' },
      // Entra's list form: an empty list, or a list of one empty value, is no manager either.
      { op: 'replace', path: `${ENTERPRISE_USER_SCHEMA_ID}:manager`, value: [] },
      { op: 'replace', path: `${ENTERPRISE_USER_SCHEMA_ID}:manager`, value: [{ value: '' }] },
    ]) {
      expect(applyUserPatch(user, body(operation))[ENTERPRISE_USER_SCHEMA_ID]).toEqual({ department: 'd' });
    }
  });
});
