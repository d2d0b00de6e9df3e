// The filter → SQL translation against its oracle: for random filters over a fixed set of users, the users the
// database returns through GET /Users?filter=… are exactly those the in-memory evaluator (the reference
// semantics of RFC 7644 §3.4.2.2 in src/scim/filter) accepts. Runs on SQLite and on PostgreSQL.
// Strings include non-ASCII letters in both cases: SQLite's LOWER() folds ASCII only, so case-insensitive
// comparisons with such a value go through scim_lower (JavaScript's toLowerCase) there.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ScimUserEntity } from '../../src/scim/entities/scim-user.entity.js';
import { matchesFilter } from '../../src/scim/filter/scim-filter-evaluator.js';
import { parseFilter } from '../../src/scim/filter/scim-filter-parser.js';
import { printFilter } from '../../src/scim/filter/scim-filter-printer.js';
import { resolveFilter } from '../../src/scim/filter/scim-filter-resolver.js';
import type {
  ScimAttributePath,
  ScimCompareOperator,
  ScimFilter,
  ScimFilterValue,
} from '../../src/scim/filter/scim-filter.types.js';
import type { ScimUser } from '../../src/scim/schema/user-schema.js';
import { toCanonicalUser, toStoredParts } from '../../src/scim/scim-user.representation.js';
import { ScimUsersRepository } from '../../src/scim/scim-users.repository.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ENTERPRISE_USER, filterQuery, scimClient } from './scim-client.js';
import { systemSource } from '../../src/audit/audit-source.js';

const BASE = 'http://localhost:80/api/v1/scim';
const TEXTS = [
  'alice',
  'Alice Smith',
  'ALICE',
  'bob',
  'b',
  'Smith',
  'smith',
  '',
  '50%',
  'a_b',
  'x\\y',
  'x*y?',
  'q[1]',
  'Über',
  'über',
  'ÜBER Ärger',
  'élan',
  'ÉLAN',
  '\u212Aelvin', // the Kelvin sign, whose lower case is an ASCII k
  'kelvin',
];
const DATES = [
  '2026-01-01T00:00:00.000Z',
  '2026-01-01T00:00:00Z',
  '2026-01-01T01:00:00+01:00',
  '2026-03-15T12:30:00.500Z',
  '2027-06-01T00:00:00Z',
  '2025-12-31T23:59:59.999Z',
];
const CREATED = [
  '2025-12-31T23:59:59.999Z',
  '2026-01-01T00:00:00.000Z',
  '2026-03-15T12:30:00.500Z',
  '2026-09-09T09:09:09.009Z',
];

// ---- the users ---------------------------------------------------------------------------------------------------

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

/** A small deterministic PRNG (mulberry32), so the population is the same on every run and both databases. */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function maybe<T>(random: () => number, value: () => T): T | undefined {
  return random() < 0.6 ? value() : undefined;
}

function makeUser(random: () => number, index: number): ScimUser {
  const user: Record<string, unknown> = {
    userName: `${pick(random, ['alice', 'Alice', 'BOB', 'carol%', 'd_e', 'x*y'])}.${String(index)}@Example.com`,
  };
  const set = (key: string, value: unknown) => {
    if (value !== undefined) user[key] = value;
  };
  set(
    'externalId',
    maybe(random, () => pick(random, ['ext-1', 'EXT-1', 'ext', 'e*x?t', 'q[1]'])),
  );
  set(
    'displayName',
    maybe(random, () => pick(random, TEXTS)),
  );
  set(
    'title',
    maybe(random, () => pick(random, TEXTS)),
  );
  set(
    'nfc',
    maybe(random, () => pick(random, ['AbC', 'abc', 'A', 'x*y?'])),
  );
  set(
    'active',
    maybe(random, () => random() < 0.5),
  );
  set(
    'name',
    maybe(random, () => {
      const name: Record<string, string> = {};
      if (random() < 0.7) name['givenName'] = pick(random, TEXTS);
      if (random() < 0.5) name['familyName'] = pick(random, TEXTS);
      return name;
    }),
  );
  set(
    'emails',
    maybe(random, () =>
      Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
        // Some elements lack value, type or primary: the e-mail table must read them as the evaluator does.
        const email: Record<string, unknown> = {};
        if (random() < 0.9) email['value'] = pick(random, TEXTS);
        if (random() < 0.7) email['type'] = pick(random, ['work', 'home', 'Work']);
        if (random() < 0.4) email['primary'] = random() < 0.5;
        return email;
      }),
    ),
  );
  set(
    'roles',
    maybe(random, () => [
      { value: pick(random, ['admin', 'Admin', 'reader']), display: pick(random, TEXTS) },
    ]),
  );
  set(
    ENTERPRISE_USER,
    maybe(random, () => {
      const enterprise: Record<string, unknown> = {};
      if (random() < 0.7) enterprise['department'] = pick(random, TEXTS);
      if (random() < 0.5) enterprise['manager'] = { value: pick(random, ['m1', 'M1', 'm2']) };
      return enterprise;
    }),
  );
  return user as unknown as ScimUser;
}

// ---- the filters -------------------------------------------------------------------------------------------------

function path(text: string): ScimAttributePath {
  const colon = text.lastIndexOf(':');
  const [attribute = '', subAttribute] = text.slice(colon + 1).split('.');
  return {
    ...(colon >= 0 ? { schema: text.slice(0, colon) } : {}),
    attribute,
    ...(subAttribute !== undefined ? { subAttribute } : {}),
  };
}

const STRING_OPS: readonly ScimCompareOperator[] = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'];
const ORDER_OPS: readonly ScimCompareOperator[] = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];

type Kind = 'string' | 'boolean' | 'date';
const ATTRIBUTES: ReadonlyArray<readonly [string, Kind]> = [
  ['userName', 'string'],
  ['externalId', 'string'],
  ['displayName', 'string'],
  ['title', 'string'],
  ['nfc', 'string'],
  ['active', 'boolean'],
  ['name.givenName', 'string'],
  ['name.familyName', 'string'],
  ['emails', 'string'],
  ['emails.value', 'string'],
  ['emails.type', 'string'],
  ['emails.primary', 'boolean'],
  ['roles.value', 'string'],
  ['roles.display', 'string'],
  [`${ENTERPRISE_USER}:department`, 'string'],
  [`${ENTERPRISE_USER}:manager`, 'string'],
  [`${ENTERPRISE_USER}:manager.value`, 'string'],
  ['meta.created', 'date'],
  ['meta.lastModified', 'date'],
  ['meta.resourceType', 'string'],
];
const PRESENT = [
  'title',
  'name',
  'emails',
  'emails.type',
  'roles',
  'active',
  'externalId',
  `${ENTERPRISE_USER}:manager`,
  'meta',
  'id',
];

const userNameLiterals = [
  'alice',
  'ALICE.1@example.COM',
  'bob',
  '.1',
  '@example.com',
  'carol%',
  'd_e',
  'x*y',
  'c',
];

function literalArb(name: string, kind: Kind): fc.Arbitrary<ScimFilterValue> {
  switch (kind) {
    case 'boolean':
      return fc.oneof(fc.boolean(), fc.constant(null));
    case 'date':
      return fc.oneof(fc.constantFrom(...DATES, ...CREATED), fc.constant(null));
    case 'string':
      return fc.oneof(
        {
          weight: 5,
          arbitrary: fc.constantFrom(
            ...(name === 'userName' ? userNameLiterals : TEXTS),
            'ext-1',
            'm1',
            'Work',
            'admin',
            'User',
            'se',
          ),
        },
        { weight: 1, arbitrary: fc.constant(null) },
      );
  }
}

function compareArb(name: string, kind: Kind, relative = false): fc.Arbitrary<ScimFilter> {
  const operators = kind === 'string' ? STRING_OPS : kind === 'date' ? ORDER_OPS : (['eq', 'ne'] as const);
  return fc
    .tuple(fc.constantFrom(...operators), literalArb(name, kind))
    .filter(([operator, value]) => value !== null || operator === 'eq' || operator === 'ne')
    .map(([operator, value]): ScimFilter => ({
      kind: 'compare',
      path: relative ? { attribute: name } : path(name),
      operator,
      value,
    }));
}

const EMAIL_SUBS: ReadonlyArray<readonly [string, Kind]> = [
  ['value', 'string'],
  ['type', 'string'],
  ['primary', 'boolean'],
];

function elementFilterArb(depth: number): fc.Arbitrary<ScimFilter> {
  const leaf = fc.oneof(
    ...EMAIL_SUBS.map(([name, kind]) => compareArb(name, kind, true)),
    fc.constantFrom(
      ...EMAIL_SUBS.map(([name]): ScimFilter => ({ kind: 'present', path: { attribute: name } })),
    ),
  );
  if (depth <= 0) return leaf;
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    {
      weight: 1,
      arbitrary: fc
        .tuple(elementFilterArb(depth - 1), elementFilterArb(depth - 1))
        .map(([left, right]): ScimFilter => ({ kind: 'and', left, right })),
    },
    {
      weight: 1,
      arbitrary: elementFilterArb(depth - 1).map((filter): ScimFilter => ({ kind: 'not', filter })),
    },
  );
}

function filterArb(depth: number): fc.Arbitrary<ScimFilter> {
  const leaf = fc.oneof(
    { weight: 6, arbitrary: fc.oneof(...ATTRIBUTES.map(([name, kind]) => compareArb(name, kind))) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        ...PRESENT.map((name): ScimFilter => ({ kind: 'present', path: path(name) })),
      ),
    },
    {
      weight: 2,
      arbitrary: elementFilterArb(1).map((filter): ScimFilter => ({
        kind: 'valuePath',
        path: { attribute: 'emails' },
        filter,
      })),
    },
    {
      weight: 1,
      arbitrary: compareArb('givenName', 'string', true).map((filter): ScimFilter => ({
        kind: 'valuePath',
        path: { attribute: 'name' },
        filter,
      })),
    },
  );
  if (depth <= 0) return leaf;
  const inner = filterArb(depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    {
      weight: 1,
      arbitrary: fc.tuple(inner, inner).map(([left, right]): ScimFilter => ({ kind: 'and', left, right })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(inner, inner).map(([left, right]): ScimFilter => ({ kind: 'or', left, right })),
    },
    { weight: 1, arbitrary: inner.map((filter): ScimFilter => ({ kind: 'not', filter })) },
  );
}

// ---- the property ------------------------------------------------------------------------------------------------

describe('filter → SQL agrees with the in-memory evaluator', () => {
  let t: TestApp;
  let canonical: Array<{ id: string; user: Record<string, unknown> }>;

  beforeAll(async () => {
    t = await startTestApp();
    const random = prng(7644);
    // Written as the service writes them (the user and its scim_user_emails rows in one transaction).
    const repository = t.app.get(ScimUsersRepository);
    canonical = [];
    for (let index = 0; index < 60; index++) {
      const user = makeUser(random, index);
      const parts = toStoredParts(user);
      const created = new Date(CREATED[index % CREATED.length]);
      const entity = Object.assign(new ScimUserEntity(), {
        id: randomUUID(),
        ...parts,
        userNameLower: parts.userName.toLowerCase(),
        version: 1,
        createdAt: created,
        lastModified: new Date(created.getTime() + index * 1000),
      });
      await repository.insert(entity, {
        by: systemSource('test'),
        action: 'scim.user.create',
        resourceType: 'ScimUser',
        resourceId: entity.id,
      });
      canonical.push({
        id: entity.id,
        user: toCanonicalUser(entity, BASE) as unknown as Record<string, unknown>,
      });
    }
  });
  afterAll(async () => t.close());

  async function idsFor(text: string): Promise<string[]> {
    const response = await scimClient(t).get(filterQuery(text, '&count=1000'));
    if (response.statusCode !== 200)
      throw new Error(`${text}: ${String(response.statusCode)} ${response.body}`);
    const body = response.json();
    expect(body.totalResults).toBe(body.Resources.length);
    // A full page of one: the total then comes from the COUNT query, whose SQL differs from the page's.
    const counted = (await scimClient(t).get(filterQuery(text, '&count=1'))).json<{ totalResults: number }>();
    expect({ text, total: counted.totalResults }).toEqual({ text, total: body.totalResults });
    return (body.Resources as Array<{ id: string }>).map((user) => user.id).sort();
  }

  function expectedFor(filter: ScimFilter): string[] {
    return canonical
      .filter((entry) => matchesFilter(filter, entry.user))
      .map((entry) => entry.id)
      .sort();
  }

  it('for random filters (and, or, not, value paths, every operator, null, pr)', async () => {
    await fc.assert(
      fc.asyncProperty(filterArb(2), async (filter) => {
        const text = printFilter(filter);
        const resolved = resolveFilter(parseFilter(text));
        expect({ text, ids: await idsFor(text) }).toEqual({ text, ids: expectedFor(resolved) });
      }),
      { numRuns: 250 },
    );
  });

  it('answers the e-mail filters Entra and Okta send as the evaluator does (the e-mail table)', async () => {
    const filters = [
      'emails[type eq "work"].value eq "alice"',
      'emails[type eq "WORK"].value eq "ALICE"',
      'emails[type eq "work" and value eq "Smith"]',
      'emails.value eq "alice smith"',
      'emails eq "Bob"',
      'emails co "LIC"',
      'emails sw "a"',
      'emails ew "th"',
      'emails.value co "%"',
      'emails.value co "_"',
      'emails.value gt "b"',
      'emails.value eq null',
      'emails.value ne "alice"',
      'emails.type eq null',
      'emails.type ne "work"',
      'emails[type pr]',
      'emails[not (type pr)]',
      'emails[primary eq false]',
      'emails[primary eq true]',
      'emails.primary eq false',
      'emails.primary eq true',
      'emails.primary ne true',
      'emails.primary ne false',
      'emails.primary eq null',
      'emails.primary pr',
      'not (emails.primary eq false)',
      'emails[type eq "work" and primary eq false].value co "a"',
    ];
    for (const text of filters) {
      const expected = expectedFor(resolveFilter(parseFilter(text)));
      expect({ text, ids: await idsFor(text) }).toEqual({ text, ids: expected });
    }
    // The population covers what the e-mail table must get right.
    const emails = canonical.flatMap(
      (entry) => (entry.user['emails'] as Array<Record<string, unknown>>) ?? [],
    );
    expect(emails.some((email) => email['type'] === undefined)).toBe(true);
    expect(emails.some((email) => email['primary'] === undefined)).toBe(true);
    expect(emails.some((email) => email['value'] === undefined)).toBe(true);
    expect(expectedFor(resolveFilter(parseFilter('emails.primary eq false'))).length).toBeGreaterThan(
      expectedFor(resolveFilter(parseFilter('emails.primary eq false and emails[primary pr]'))).length,
    );
  });

  it('keeps the e-mail table in step with creates, replaces, patches and deletes', async () => {
    const client = scimClient(t);
    const created = await client.post('/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: `mailer.${randomUUID()}@example.com`,
      emails: [{ value: 'First.Mailer@Example.com', type: 'work' }],
    });
    expect(created.statusCode).toBe(201);
    const { id, userName } = created.json<{ id: string; userName: string }>();
    const found = async (filter: string): Promise<boolean> => (await idsFor(filter)).includes(id);
    expect(await found('emails[type eq "work"].value eq "first.mailer@example.com"')).toBe(true);
    expect(await found('emails.primary eq false')).toBe(true);

    const patched = await client.patch(`/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        { op: 'replace', path: 'emails[type eq "work"].value', value: 'Second.Mailer@Example.com' },
      ],
    });
    expect(patched.statusCode).toBe(200);
    expect(await found('emails[type eq "work"].value eq "first.mailer@example.com"')).toBe(false);
    expect(await found('emails[type eq "work"].value eq "second.mailer@example.com"')).toBe(true);

    const replaced = await client.put(`/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName,
      emails: [{ value: 'third.mailer@example.com', type: 'home', primary: true }],
    });
    expect(replaced.statusCode).toBe(200);
    expect(await found('emails.value eq "second.mailer@example.com"')).toBe(false);
    expect(await found('emails[type eq "home"].value eq "third.mailer@example.com"')).toBe(true);
    expect(await found('emails.primary eq false')).toBe(false);

    // The table holds JavaScript's lower-casing, so non-ASCII letters match in any case on SQLite too (whose
    // LOWER() folds ASCII only).
    const accented = await client.patch(`/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        { op: 'add', path: 'emails', value: [{ value: 'Über.Ärger@Example.com', type: 'other' }] },
      ],
    });
    expect(accented.statusCode).toBe(200);
    expect(await found('emails.value eq "über.ärger@example.com"')).toBe(true);
    expect(await found('emails[type eq "OTHER"].value eq "ÜBER.ÄRGER@EXAMPLE.COM"')).toBe(true);
    expect(await found('emails co "ÄRGER@"')).toBe(true);

    expect((await client.delete(`/Users/${id}`)).statusCode).toBe(204);
    const left = await t.dataSource.query(
      `SELECT COUNT(*) AS n FROM scim_user_emails WHERE user_id = ${t.dataSource.options.type === 'postgres' ? '$1' : '?'}`,
      [id],
    );
    expect(Number((left as Array<{ n: number | string }>)[0]?.n)).toBe(0);
  });

  it('finds users by id, and no user for an id that is not a UUID', async () => {
    const { id } = canonical[3] as { id: string };
    expect(await idsFor(`id eq "${id}"`)).toEqual([id]);
    expect(await idsFor(`id eq "${id.toUpperCase()}"`)).toEqual([]);
    expect(await idsFor('id eq "not-a-uuid"')).toEqual([]);
    expect((await idsFor('id co "-"')).length).toBe(canonical.length);
  });

  it('refuses the attributes it computes per request', async () => {
    for (const text of ['meta.location eq "x"', 'meta.version eq "W/\\"1\\""']) {
      const response = await scimClient(t).get(filterQuery(text));
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ status: '400', scimType: 'invalidFilter' });
    }
  });
});
