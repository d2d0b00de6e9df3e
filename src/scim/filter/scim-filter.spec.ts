import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { findAttribute } from '../schema/schema-lookup.js';
import { USER_SCHEMA } from '../schema/user-schema.js';
import { ScimFilterError } from './scim-filter.errors.js';
import { matchesFilter } from './scim-filter-evaluator.js';
import { parseFilter, parsePatchPath } from './scim-filter-parser.js';
import { printFilter } from './scim-filter-printer.js';
import { resolveFilter } from './scim-filter-resolver.js';
import { elementScope } from './scim-filter-scope.js';
import type {
  ScimAttributePath,
  ScimCompareOperator,
  ScimFilter,
  ScimFilterValue,
} from './scim-filter.types.js';

const CORE = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

function path(text: string): ScimAttributePath {
  const colon = text.lastIndexOf(':');
  const schema = colon >= 0 ? text.slice(0, colon) : undefined;
  const parts = text.slice(colon + 1).split('.');
  const attribute = parts[0] ?? '';
  const subAttribute = parts.at(1);
  return {
    ...(schema !== undefined ? { schema } : {}),
    attribute,
    ...(subAttribute !== undefined ? { subAttribute } : {}),
  };
}
const cmp = (p: string, operator: ScimCompareOperator, value: ScimFilterValue): ScimFilter => ({
  kind: 'compare',
  path: path(p),
  operator,
  value,
});
const pr = (p: string): ScimFilter => ({ kind: 'present', path: path(p) });
const and = (left: ScimFilter, right: ScimFilter): ScimFilter => ({ kind: 'and', left, right });
const or = (left: ScimFilter, right: ScimFilter): ScimFilter => ({ kind: 'or', left, right });
const not = (filter: ScimFilter): ScimFilter => ({ kind: 'not', filter });
const vp = (p: string, filter: ScimFilter): ScimFilter => ({ kind: 'valuePath', path: path(p), filter });

function parseError(text: string, parse: (text: string) => unknown = parseFilter): ScimFilterError {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof ScimFilterError) return error;
    throw error;
  }
  throw new Error(`expected "${text}" to be rejected`);
}

describe('parseFilter — RFC 7644 §3.4.2.2 examples', () => {
  const cases: ReadonlyArray<readonly [string, ScimFilter]> = [
    ['userName eq "bjensen"', cmp('userName', 'eq', 'bjensen')],
    ['name.familyName co "O\'Malley"', cmp('name.familyName', 'co', "O'Malley")],
    ['userName sw "J"', cmp('userName', 'sw', 'J')],
    [`${CORE}:userName sw "J"`, cmp(`${CORE}:userName`, 'sw', 'J')],
    ['title pr', pr('title')],
    ['meta.lastModified gt "2011-05-13T04:42:34Z"', cmp('meta.lastModified', 'gt', '2011-05-13T04:42:34Z')],
    ['meta.lastModified ge "2011-05-13T04:42:34Z"', cmp('meta.lastModified', 'ge', '2011-05-13T04:42:34Z')],
    ['meta.lastModified lt "2011-05-13T04:42:34Z"', cmp('meta.lastModified', 'lt', '2011-05-13T04:42:34Z')],
    ['meta.lastModified le "2011-05-13T04:42:34Z"', cmp('meta.lastModified', 'le', '2011-05-13T04:42:34Z')],
    ['title pr and userType eq "Employee"', and(pr('title'), cmp('userType', 'eq', 'Employee'))],
    ['title pr or userType eq "Intern"', or(pr('title'), cmp('userType', 'eq', 'Intern'))],
    [`schemas eq "${ENTERPRISE}"`, cmp('schemas', 'eq', ENTERPRISE)],
    [
      'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
      and(
        cmp('userType', 'eq', 'Employee'),
        or(cmp('emails', 'co', 'example.com'), cmp('emails.value', 'co', 'example.org')),
      ),
    ],
    [
      'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
      and(
        cmp('userType', 'ne', 'Employee'),
        not(or(cmp('emails', 'co', 'example.com'), cmp('emails.value', 'co', 'example.org'))),
      ),
    ],
    [
      'userType eq "Employee" and (emails.type eq "work")',
      and(cmp('userType', 'eq', 'Employee'), cmp('emails.type', 'eq', 'work')),
    ],
    [
      'userType eq "Employee" and emails[type eq "work" and value co "@example.com"]',
      and(
        cmp('userType', 'eq', 'Employee'),
        vp('emails', and(cmp('type', 'eq', 'work'), cmp('value', 'co', '@example.com'))),
      ),
    ],
    [
      'emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]',
      or(
        vp('emails', and(cmp('type', 'eq', 'work'), cmp('value', 'co', '@example.com'))),
        vp('ims', and(cmp('type', 'eq', 'xmpp'), cmp('value', 'co', '@foo.com'))),
      ),
    ],
  ];
  it.each(cases)('%s', (text, expected) => {
    expect(parseFilter(text)).toEqual(expected);
  });
});

describe('parseFilter — precedence, grouping, quirks and literals', () => {
  const cases: ReadonlyArray<readonly [string, string, ScimFilter]> = [
    ['and binds tighter than or (or first)', 'a pr or b pr and c pr', or(pr('a'), and(pr('b'), pr('c')))],
    ['and binds tighter than or (and first)', 'a pr and b pr or c pr', or(and(pr('a'), pr('b')), pr('c'))],
    ['and is left-associative', 'a pr and b pr and c pr', and(and(pr('a'), pr('b')), pr('c'))],
    ['or is left-associative', 'a pr or b pr or c pr', or(or(pr('a'), pr('b')), pr('c'))],
    ['grouping overrides precedence', 'a pr and (b pr or c pr)', and(pr('a'), or(pr('b'), pr('c')))],
    ['redundant parentheses leave no node', '((a pr))', pr('a')],
    ['not without a space', 'not(a pr)', not(pr('a'))],
    ['not inside and', 'a pr and not (b pr) and c pr', and(and(pr('a'), not(pr('b'))), pr('c'))],
    [
      'operators and keywords are case-insensitive',
      'userName EQ "x" AND title PR OR NOT (active Eq TRUE)',
      or(and(cmp('userName', 'eq', 'x'), pr('title')), not(cmp('active', 'eq', true))),
    ],
    [
      'Entra value-path with sub-attribute',
      'emails[type eq "work"].value eq "a@b.c"',
      vp('emails', and(cmp('type', 'eq', 'work'), cmp('value', 'eq', 'a@b.c'))),
    ],
    [
      'Entra form with pr',
      'emails[type eq "work"].value pr',
      vp('emails', and(cmp('type', 'eq', 'work'), pr('value'))),
    ],
    [
      'enterprise URN attribute',
      `${ENTERPRISE}:employeeNumber eq "701984"`,
      cmp(`${ENTERPRISE}:employeeNumber`, 'eq', '701984'),
    ],
    [
      'URN attribute with sub-attribute',
      `${ENTERPRISE}:manager.value eq "m1"`,
      cmp(`${ENTERPRISE}:manager.value`, 'eq', 'm1'),
    ],
    [
      '+ as space outside strings, literal inside',
      'userName+eq+"a+b"+and+title+pr',
      and(cmp('userName', 'eq', 'a+b'), pr('title')),
    ],
    ['tabs and repeated spaces', 'userName \t eq   "x"', cmp('userName', 'eq', 'x')],
    ['space before a value filter', 'emails [type eq "work"]', vp('emails', cmp('type', 'eq', 'work'))],
    ['integer', 'x eq 10', cmp('x', 'eq', 10)],
    ['negative decimal with exponent', 'x lt -1.5e3', cmp('x', 'lt', -1500)],
    ['zero', 'x ge 0', cmp('x', 'ge', 0)],
    [
      'true / false / null, any case',
      'a eq true or b eq False or c eq NULL',
      or(or(cmp('a', 'eq', true), cmp('b', 'eq', false)), cmp('c', 'eq', null)),
    ],
    ['JSON string escapes', String.raw`x eq "q\"b\\s\/\u00e9\n\t"`, cmp('x', 'eq', 'q"b\\s/é\n\t')],
    [
      'single-quoted strings',
      `emails[type eq 'work'].value eq 'a"b'`,
      vp('emails', and(cmp('type', 'eq', 'work'), cmp('value', 'eq', 'a"b'))),
    ],
    ['attribute names that spell keywords', 'and eq "x" or not pr', or(cmp('and', 'eq', 'x'), pr('not'))],
    ['$ref and dashes in names', 'manager.$ref pr and x-y_z pr', and(pr('manager.$ref'), pr('x-y_z'))],
  ];
  it.each(cases)('%s', (_name, text, expected) => {
    expect(parseFilter(text)).toEqual(expected);
  });
});

describe('parseFilter — errors point at the position', () => {
  const cases: ReadonlyArray<readonly [string, number, string]> = [
    ['', 0, 'empty'],
    ['   ', 3, 'empty'],
    ['userName', 8, 'Expected an operator'],
    ['userName xx "a"', 9, 'Expected an operator'],
    ['userName eq', 11, 'Expected a value'],
    ['userName eq bjensen', 12, 'Expected a value'],
    ['userName eq "abc', 12, 'Unterminated'],
    [String.raw`userName eq "a\q"`, 12, 'Invalid string literal'],
    ['userName eq 01', 12, 'Malformed number'],
    ['userName eq "a" and', 19, 'Expected an attribute name'],
    ['userName eq "a" xor title pr', 16, 'Unexpected'],
    ['(userName pr', 12, 'Expected ")"'],
    ['userName pr)', 11, 'Unexpected'],
    ['emails[type eq "work"', 21, 'Expected "]"'],
    ['emails[]', 7, 'empty'],
    ['emails[type[value pr]]', 11, 'nested'],
    ['name.givenName[value pr]', 14, 'top-level attribute'],
    ['name.givenName.x pr', 0, 'more than one'],
    ['1abc pr', 0, 'Expected an attribute name'],
    ['foo:bar eq 1', 0, 'not a schema URN'],
    ['emails[type eq "work"].1 eq "x"', 23, 'sub-attribute name'],
    ['not (a pr', 9, 'Expected ")"'],
  ];
  it.each(cases)('%j fails at %d', (text, position, message) => {
    const error = parseError(text);
    expect(error.position).toBe(position);
    expect(error.message).toContain(message);
    expect(error.message).toContain(`at position ${String(position)}`);
    expect(error.scimType).toBe('invalidFilter');
  });
});

describe('parsePatchPath — RFC 7644 §3.5.2 PATH', () => {
  it.each([
    ['members', { path: path('members') }],
    ['name.familyName', { path: path('name.familyName') }],
    [`${ENTERPRISE}:manager`, { path: path(`${ENTERPRISE}:manager`) }],
    ['addresses[type eq "work"]', { path: path('addresses'), valueFilter: cmp('type', 'eq', 'work') }],
    [
      'members[value eq "2819c223-7f76-453a-919d-413861904646"].displayName',
      {
        path: path('members'),
        valueFilter: cmp('value', 'eq', '2819c223-7f76-453a-919d-413861904646'),
        subAttribute: 'displayName',
      },
    ],
    [
      'emails[type eq "work" and value ew "example.com"]',
      {
        path: path('emails'),
        valueFilter: and(cmp('type', 'eq', 'work'), cmp('value', 'ew', 'example.com')),
      },
    ],
  ])('%s', (text, expected) => {
    expect(parsePatchPath(text)).toEqual(expected);
  });

  it.each([
    ['', 0, 'invalidPath'],
    ['name.', 5, 'invalidPath'],
    ['emails eq "x"', 7, 'invalidPath'],
    ['emails[type eq]', 14, 'invalidFilter'],
    ['emails[type eq "work"] x', 23, 'invalidPath'],
  ] as const)('rejects %j at %d with %s', (text, position, scimType) => {
    const error = parseError(text, parsePatchPath);
    expect(error.position).toBe(position);
    expect(error.scimType).toBe(scimType);
  });
});

// ---- round trip -------------------------------------------------------------------------------------------

const KEYWORDS = [
  'and',
  'or',
  'not',
  'pr',
  'eq',
  'ne',
  'co',
  'sw',
  'ew',
  'gt',
  'ge',
  'lt',
  'le',
  'true',
  'false',
  'null',
];
const nameArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,7}$/),
  fc.constantFrom(...KEYWORDS, 'userName', 'emails', '$ref'),
);
const schemaArb = fc.constantFrom(CORE, ENTERPRISE, 'urn:example:params:x-1.2:Thing');
const valueArb: fc.Arbitrary<ScimFilterValue> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const operatorArb = fc.constantFrom<ScimCompareOperator>(
  'eq',
  'ne',
  'co',
  'sw',
  'ew',
  'gt',
  'ge',
  'lt',
  'le',
);

function pathArb(relative: boolean): fc.Arbitrary<ScimAttributePath> {
  if (relative) return nameArb.map((attribute) => ({ attribute }));
  return fc
    .record({
      schema: fc.option(schemaArb, { nil: undefined }),
      attribute: nameArb,
      subAttribute: fc.option(nameArb, { nil: undefined }),
    })
    .map(({ schema, attribute, subAttribute }) => ({
      ...(schema !== undefined ? { schema } : {}),
      attribute,
      ...(subAttribute !== undefined ? { subAttribute } : {}),
    }));
}

function filterArb(relative: boolean): fc.Arbitrary<ScimFilter> {
  return fc.letrec<{ filter: ScimFilter }>((tie) => {
    const leaves: fc.Arbitrary<ScimFilter>[] = [
      fc.record({
        kind: fc.constant('compare' as const),
        path: pathArb(relative),
        operator: operatorArb,
        value: valueArb,
      }),
      fc.record({ kind: fc.constant('present' as const), path: pathArb(relative) }),
    ];
    if (!relative) {
      leaves.push(
        fc.record({
          kind: fc.constant('valuePath' as const),
          path: fc.record({ attribute: nameArb }),
          filter: filterArb(true),
        }),
      );
    }
    return {
      filter: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        ...leaves,
        fc.record({
          kind: fc.constantFrom('and' as const, 'or' as const),
          left: tie('filter'),
          right: tie('filter'),
        }),
        fc.record({ kind: fc.constant('not' as const), filter: tie('filter') }),
      ),
    };
  }).filter;
}

/** Writes a filter the way a sloppy client might: random keyword case, extra blanks or `+`, extra parentheses. */
function noisyPrint(filter: ScimFilter, noise: () => number): string {
  const blank = (): string => [' ', '  ', '+', ' \t', ' + '][noise() % 5] ?? ' ';
  const word = (text: string): string => (noise() % 2 === 0 ? text.toUpperCase() : text);
  const value = (v: ScimFilterValue): string =>
    typeof v === 'boolean' || v === null
      ? word(String(v))
      : printFilter({ kind: 'compare', path: { attribute: 'x' }, operator: 'eq', value: v }).slice(5);
  const pathText = (p: ScimAttributePath): string => printFilter({ kind: 'present', path: p }).slice(0, -3);
  const inner = (f: ScimFilter, parens: boolean): string => {
    const text = noisyPrint(f, noise);
    return parens || noise() % 4 === 0 ? `(${blank()}${text}${blank()})` : text;
  };
  switch (filter.kind) {
    case 'compare':
      return `${pathText(filter.path)}${blank()}${word(filter.operator)}${blank()}${value(filter.value)}`;
    case 'present':
      return `${pathText(filter.path)}${blank()}${word('pr')}`;
    case 'and':
      return `${inner(filter.left, filter.left.kind === 'or')}${blank()}${word('and')}${blank()}${inner(filter.right, filter.right.kind !== 'not' && filter.right.kind !== 'compare' && filter.right.kind !== 'present' && filter.right.kind !== 'valuePath')}`;
    case 'or':
      return `${inner(filter.left, false)}${blank()}${word('or')}${blank()}${inner(filter.right, filter.right.kind === 'or')}`;
    case 'not':
      return `${word('not')}${noise() % 2 === 0 ? '' : blank()}(${noisyPrint(filter.filter, noise)})`;
    case 'valuePath':
      return `${pathText(filter.path)}[${noisyPrint(filter.filter, noise)}]`;
  }
}

describe('printFilter round trip (fast-check)', () => {
  it('parseFilter(printFilter(ast)) rebuilds the AST', () => {
    fc.assert(
      fc.property(filterArb(false), (ast) => {
        expect(parseFilter(printFilter(ast))).toEqual(ast);
      }),
      { numRuns: 400 },
    );
  });

  it('printFilter(parseFilter(s)) is canonical and stable for noisy spellings', () => {
    fc.assert(
      fc.property(filterArb(false), fc.infiniteStream(fc.nat()), (ast, stream) => {
        const noise = (): number => {
          const next = stream.next();
          return next.done === true ? 0 : next.value;
        };
        const canonical = printFilter(ast);
        const printed = printFilter(parseFilter(noisyPrint(ast, noise)));
        expect(printed).toBe(canonical);
        expect(printFilter(parseFilter(printed))).toBe(printed);
      }),
      { numRuns: 300 },
    );
  });

  it('prints the canonical form of a hand-written filter', () => {
    expect(printFilter(parseFilter('A pr AND (b PR OR c eq "x")+or+NOT(d.e ge -0)'))).toBe(
      'A pr and (b pr or c eq "x") or not (d.e ge -0)',
    );
    expect(printFilter(parseFilter('emails[type eq "work"].value eq "a@b.c"'))).toBe(
      'emails[type eq "work" and value eq "a@b.c"]',
    );
  });
});

// ---- resolver ---------------------------------------------------------------------------------------------

describe('resolveFilter', () => {
  it.each([
    ['USERNAME eq "x"', 'userName eq "x"'],
    [`${CORE.toUpperCase()}:username eq "x"`, 'userName eq "x"'],
    [`${ENTERPRISE.toLowerCase()}:EMPLOYEENUMBER eq "7"`, `${ENTERPRISE}:employeeNumber eq "7"`],
    [`${ENTERPRISE}:manager eq "m"`, `${ENTERPRISE}:manager.value eq "m"`],
    ['emails co "example.com"', 'emails.value co "example.com"'],
    ['EMAILS[TYPE eq "work"].VALUE eq "a"', 'emails[type eq "work" and value eq "a"]'],
    ['active eq "True"', 'active eq true'],
    ['meta.lastModified gt "2011-05-13T04:42:34Z"', 'meta.lastModified gt "2011-05-13T04:42:34Z"'],
    ['roles[id eq "r1"]', 'roles[value eq "r1"]'],
    ['title eq null', 'title eq null'],
  ])('%s → %s', (text, canonical) => {
    expect(printFilter(resolveFilter(parseFilter(text)))).toBe(canonical);
  });

  it.each([
    ['nope eq "x"', 'Unknown attribute "nope"'],
    ['name.nope eq "x"', 'Unknown sub-attribute'],
    ['urn:example:x:y eq "x"', 'Unknown schema'],
    ['active gt true', 'not supported for boolean'],
    ['active co "t"', 'not supported for boolean'],
    ['active eq "maybe"', 'is a boolean'],
    ['userName eq 5', 'is a string'],
    ['userName gt null', 'with null'],
    ['name eq "x"', 'is complex'],
    ['meta.created gt "yesterday"', 'dateTime'],
    ['userName[value eq "x"]', 'needs a complex attribute'],
    ['emails[nope eq "x"]', 'Unknown sub-attribute "emails.nope"'],
    [`emails[${CORE}:type eq "x"]`, 'only sub-attribute names'],
  ])('rejects %s', (text, message) => {
    const error = parseError(text, (t) => resolveFilter(parseFilter(t)));
    expect(error.scimType).toBe('invalidFilter');
    expect(error.message).toContain(message);
  });
});

// ---- evaluator --------------------------------------------------------------------------------------------

describe('matchesFilter', () => {
  const user = {
    id: 'abc-123',
    externalId: 'Ext-1',
    userName: 'BJensen@Example.com',
    name: { givenName: 'Barbara', familyName: "O'Malley" },
    title: '',
    active: true,
    emails: [
      { value: 'bjensen@example.com', type: 'work', primary: true },
      { value: 'babs@jensen.org', type: 'home' },
    ],
    meta: { lastModified: '2011-05-13T04:42:34Z' },
    [ENTERPRISE]: { employeeNumber: '701984', manager: { value: 'm-1' } },
  };

  it.each([
    ['userName eq "bjensen@example.com"', true],
    ['userName eq "someone@example.com"', false],
    ['username EQ "BJENSEN@EXAMPLE.COM"', true],
    ['id eq "ABC-123"', false],
    ['id eq "abc-123"', true],
    ['externalId eq "ext-1"', false],
    ['name.familyName co "mall"', true],
    ['name.givenName sw "bar"', true],
    ['name.givenName ew "RA"', true],
    ['name.givenName ew "x"', false],
    ['emails.type eq "home"', true],
    ['emails co "jensen.org"', true],
    ['emails[type eq "work" and value co "@example.com"]', true],
    ['emails[type eq "home" and primary eq true]', false],
    ['emails[type eq "work"].value eq "BJENSEN@example.com"', true],
    ['emails[type eq "home"].value eq "bjensen@example.com"', false],
    ['title pr', false],
    ['nickName pr', false],
    ['name pr', true],
    ['name.middleName pr', false],
    ['nickName ne "x"', true],
    ['nickName eq null', true],
    ['userName ne null', true],
    ['active eq true', true],
    ['active eq "TRUE"', true],
    ['active ne true', false],
    ['meta.lastModified gt "2011-05-13T00:00:00Z"', true],
    ['meta.lastModified lt "2011-05-13T04:42:34+01:00"', false],
    ['meta.lastModified ge "2011-05-13T06:42:34+02:00"', true],
    ['name.givenName gt "alice"', true],
    ['name.givenName le "ALICE"', false],
    [`${ENTERPRISE}:employeeNumber eq "701984"`, true],
    [`${ENTERPRISE}:manager.value eq "M-1"`, true],
    ['not (emails.type eq "other")', true],
    ['userName eq "nobody" or (active eq true and not (title pr))', true],
    ['unknownAttr eq "x"', false],
    ['unknownAttr ne "x"', true],
  ])('%s → %s', (text, expected) => {
    expect(matchesFilter(parseFilter(text), user)).toBe(expected);
  });

  it('evaluates relative paths against one element of a multi-valued attribute', () => {
    const emails = findAttribute(USER_SCHEMA.attributes, 'emails');
    if (emails === undefined) throw new Error('emails missing from the schema');
    const work = { value: 'A@B.C', type: 'WORK' };
    expect(
      matchesFilter(parseFilter('type eq "work" and value eq "a@b.c"'), work, elementScope(emails)),
    ).toBe(true);
    expect(matchesFilter(parseFilter('primary eq true'), work, elementScope(emails))).toBe(false);
    expect(matchesFilter(parseFilter('primary pr'), { ...work, primary: false }, elementScope(emails))).toBe(
      true,
    );
  });

  it('reads an absent primary as false in the dotted form as in the bracket form (RFC 7643 §2.4)', () => {
    const only = (emails: unknown[]) => ({ userName: 'u', emails });
    const cases: Array<[string, unknown[], boolean]> = [
      ['emails.primary eq false', [{ value: 'a', primary: true }, { value: 'b' }], true],
      ['emails[primary eq false]', [{ value: 'a', primary: true }, { value: 'b' }], true],
      ['emails.primary eq false', [{ value: 'a', primary: true }], false],
      ['emails.primary eq true', [{ value: 'b' }], false],
      ['emails.primary ne true', [{ value: 'b' }], true],
      ['emails.primary ne false', [{ value: 'b' }], false],
      // No element, no value: only ne matches, as for any other missing value.
      ['emails.primary eq false', [], false],
      ['emails.primary ne false', [], true],
      ['emails.primary eq null', [{ value: 'b' }], true],
    ];
    for (const [text, emails, expected] of cases) {
      expect({ text, emails, matches: matchesFilter(parseFilter(text), only(emails)) }).toEqual({
        text,
        emails,
        matches: expected,
      });
    }
  });

  it('compares numbers numerically and never matches across types', () => {
    const resource = { count: 10, label: '10' };
    expect(matchesFilter(parseFilter('count gt 9'), resource)).toBe(true);
    expect(matchesFilter(parseFilter('count lt 9.5'), resource)).toBe(false);
    expect(matchesFilter(parseFilter('count eq "10"'), resource)).toBe(false);
    expect(matchesFilter(parseFilter('label eq 10'), resource)).toBe(false);
  });
});
