// `sortBy` on Users (RFC 7644 §3.4.2.3) through the real app on SQLite or PostgreSQL, against an oracle written
// from the RFC: any attribute the user stores, singular or a sub-attribute, or multi-valued by its primary value
// (else its first); strings case-insensitively unless caseExact, in code-point order; no value sorts last ascending
// and first descending; ties by id in the same direction (the service's documented tie-break).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, isPostgresRun } from '../support/test-database.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { CORE_USER, ENTERPRISE_USER, scimClient, type ScimClient } from './scim-client.js';

type Stored = Record<string, unknown>;

const TAG = `sort${String(Date.now())}`;
/** Bodies chosen for the edge cases: letter case, missing values, primary not first, no primary, ties. */
const BODIES: Stored[] = [
  {
    displayName: 'bravo',
    name: { familyName: 'Zed' },
    title: 'b',
    emails: [{ value: 'm@x.org', primary: true }],
  },
  {
    displayName: 'Alpha',
    name: { familyName: 'able' },
    emails: [{ value: 'z@x.org' }, { value: 'a@x.org', primary: true }],
  },
  { displayName: 'alpha', title: 'B', emails: [{ value: 'q@x.org' }, { value: 'b@x.org' }] },
  { name: { familyName: 'Mid', givenName: 'x' }, title: 'a' },
  { displayName: 'Écru', name: { familyName: 'Zed' }, emails: [{ type: 'home', value: 'C@x.org' }] },
  { displayName: 'charlie', [ENTERPRISE_USER]: { department: 'Ops', manager: { value: 'm2' } } },
  { displayName: 'Delta', [ENTERPRISE_USER]: { department: 'dev', manager: { value: 'm1' } }, emails: [] },
  { displayName: 'delta', [ENTERPRISE_USER]: { employeeNumber: '7' } },
];

describe('sortBy on Users', () => {
  let t: TestApp;
  let scim: ScimClient;
  const users: Array<{ id: string; stored: Stored }> = [];

  beforeAll(async () => {
    t = await startTestApp();
    scim = scimClient(t);
    for (const [index, body] of BODIES.entries()) {
      const schemas = ENTERPRISE_USER in body ? [CORE_USER, ENTERPRISE_USER] : [CORE_USER];
      const response = await scim.post('/Users', {
        schemas,
        userName: `${TAG}.${String(index)}`,
        ...body,
      });
      expect(response.statusCode).toBe(201);
      users.push({ id: response.json<{ id: string }>().id, stored: body });
    }
  });
  afterAll(async () => t.close());

  const primaryOrFirst = (list: unknown): Stored | undefined => {
    if (!Array.isArray(list) || list.length === 0) return undefined;
    const elements = list as Stored[];
    return elements.find((element) => element.primary === true) ?? elements[0];
  };
  const fold = (value: unknown, lowered: boolean): string | undefined =>
    typeof value === 'string' ? (lowered ? value.toLowerCase() : value) : undefined;

  const oracles: Array<[string, (stored: Stored) => string | undefined]> = [
    ['displayName', (u) => fold(u.displayName, true)],
    ['name.familyName', (u) => fold((u.name as Stored | undefined)?.familyName, true)],
    ['title', (u) => fold(u.title, true)],
    ['emails', (u) => fold(primaryOrFirst(u.emails)?.value, true)],
    ['emails.value', (u) => fold(primaryOrFirst(u.emails)?.value, true)],
    ['emails.type', (u) => fold(primaryOrFirst(u.emails)?.type, true)],
    [
      `${ENTERPRISE_USER}:department`,
      (u) => fold((u[ENTERPRISE_USER] as Stored | undefined)?.department, true),
    ],
    [
      `${ENTERPRISE_USER}:manager.value`,
      // manager.value is caseExact in RFC 7643 §4.3.
      (u) => fold(((u[ENTERPRISE_USER] as Stored | undefined)?.manager as Stored | undefined)?.value, false),
    ],
  ];

  it.each(oracles)('sortBy=%s lists in the RFC order, both directions', async (sortBy, keyOf) => {
    for (const descending of [false, true]) {
      const expected = [...users]
        .sort((a, b) => {
          const [x, y] = [keyOf(a.stored), keyOf(b.stored)];
          if (x === undefined || y === undefined) {
            if (x === y) return descending ? (a.id < b.id ? 1 : -1) : a.id < b.id ? -1 : 1;
            // Missing: last ascending, first descending.
            return (x === undefined ? 1 : -1) * (descending ? -1 : 1);
          }
          if (x !== y) return (x < y ? -1 : 1) * (descending ? -1 : 1);
          return (a.id < b.id ? -1 : 1) * (descending ? -1 : 1);
        })
        .map((user) => user.id);
      const filter = encodeURIComponent(`userName sw "${TAG}."`);
      const response = await scim.get(
        `/Users?filter=${filter}&sortBy=${encodeURIComponent(sortBy)}${descending ? '&sortOrder=descending' : ''}`,
      );
      expect(response.statusCode).toBe(200);
      const listed = response.json<{ Resources: Array<{ id: string }> }>().Resources.map((user) => user.id);
      expect({ sortBy, descending, listed }).toEqual({ sortBy, descending, listed: expected });
    }
  });

  it.each(['groups', 'meta.version', 'name', 'emails[type eq "work"]', 'nosuch', 'schemas'])(
    'refuses sortBy=%s with 400 invalidValue',
    async (sortBy) => {
      const response = await scim.get(`/Users?sortBy=${encodeURIComponent(sortBy)}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ scimType: 'invalidValue' });
    },
  );
});

// PostgreSQL sorts a column by its collation, which defaults to the database's: on an `en_US`/ICU database,
// `_z` came first and `B` between `a` and `b`. The sort columns are "C" (migration 1763780001000), so the order
// is code-point order there too, as on SQLite and as caseExact externalId needs.
describe('sortBy on a PostgreSQL database whose collation is not code-point order (ICU en-US)', () => {
  const run = isPostgresRun() ? it : it.skip;
  run('sorts userName, externalId and group displayName / externalId in code-point order', async () => {
    const database = await createTestDatabase({ icuLocale: 'en-US' });
    const t = await startTestApp({ database });
    try {
      const [collation] = await t.dataSource.query<Array<{ provider: string }>>(
        'SELECT datlocprovider AS provider FROM pg_database WHERE datname = current_database()',
      );
      expect(collation?.provider).toBe('i');
      const scim = scimClient(t);
      const names = ['B', 'a', 'C', 'b', '_z', 'a-c', 'a c', 'ab', 'a_b'];
      for (const [index, name] of names.entries()) {
        expect(
          (
            await scim.post('/Users', {
              schemas: [CORE_USER],
              userName: `${name}.${String(index)}@x`,
              externalId: name,
            })
          ).statusCode,
        ).toBe(201);
        expect(
          (
            await scim.post('/Groups', {
              schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
              displayName: `${name} ${String(index)}`,
              externalId: name,
            })
          ).statusCode,
        ).toBe(201);
      }
      const codePoint = (values: string[]) => [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const listed = async (path: string, key: (resource: Record<string, string>) => string) =>
        ((await scim.get(path)).json<{ Resources: Array<Record<string, string>> }>().Resources ?? []).map(
          key,
        );
      expect(await listed('/Users?sortBy=externalId&count=100', (user) => user.externalId)).toEqual(
        codePoint(names),
      );
      // userName is caseExact false: sorted by its lower-case form, in code-point order.
      const userNames = names.map((name, index) => `${name}.${String(index)}@x`);
      expect(
        (await listed('/Users?sortBy=userName&count=100', (user) => user.userName)).map((name) =>
          name.toLowerCase(),
        ),
      ).toEqual(codePoint(userNames.map((name) => name.toLowerCase())));
      expect(await listed('/Groups?sortBy=externalId&count=100', (group) => group.externalId)).toEqual(
        codePoint(names),
      );
      expect(
        await listed('/Groups?sortBy=displayName&count=100', (group) => group.displayName.toLowerCase()),
      ).toEqual(codePoint(names.map((name, index) => `${name} ${String(index)}`.toLowerCase())));
    } finally {
      await t.close();
      // Passed in, so not dropped by close().
      await database.drop();
    }
  });
});
