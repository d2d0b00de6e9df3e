import { describe, expect, it } from '@jest/globals';
import { scimErrorBody, isScimPath, rewritePlatformError } from './scim-error.renderer.js';
import { parseListQuery } from './scim-http.js';
import { ScimError } from './scim.errors.js';
import { entityTags, matchesEntityTag } from './scim-etag.js';

function errorOf(run: () => unknown): ScimError {
  try {
    run();
  } catch (error) {
    if (error instanceof ScimError) return error;
    throw error;
  }
  throw new Error('expected a ScimError');
}

describe('parseListQuery (RFC 7644 §3.4.2.4)', () => {
  it.each([
    [{}, { startIndex: 1, count: 100 }],
    [
      { startIndex: '0', count: '-4' },
      { startIndex: 1, count: 0 },
    ],
    [
      { STARTINDEX: '3', Count: '5000' },
      { startIndex: 3, count: 1000 },
    ],
    [
      { startIndex: 2, count: 10, filter: 'userName eq "a"' },
      { startIndex: 2, count: 10, filter: 'userName eq "a"' },
    ],
    [{ startIndex: '99999999999999999999' }, { startIndex: 2_147_483_647, count: 100 }],
  ])('%j → %j', (query, expected) => {
    expect(parseListQuery(query)).toEqual(expected);
  });

  it.each([[{ count: 'ten' }], [{ startIndex: '1.5' }], [{ count: ['1', '2'] }], [{ count: 1, COUNT: 2 }]])(
    'refuses %j with invalidValue',
    (query) => {
      const error = errorOf(() => parseListQuery(query));
      expect([error.status, error.code]).toEqual([400, 'invalidValue']);
    },
  );

  it('refuses a filter that is not a string with invalidFilter', () => {
    expect(errorOf(() => parseListQuery({ filter: ['a', 'b'] })).code).toBe('invalidFilter');
  });
});

describe('entity tags (RFC 7644 §3.14: weak comparison)', () => {
  it('reads lists, weak prefixes and *', () => {
    expect(entityTags('W/"3", "4" ,*')).toEqual(['"3"', '"4"', '*']);
    expect(matchesEntityTag('W/"3"', 3)).toBe(true);
    expect(matchesEntityTag('"3"', 3)).toBe(true);
    expect(matchesEntityTag('W/"2", W/"3"', 3)).toBe(true);
    expect(matchesEntityTag('*', 9)).toBe(true);
    expect(matchesEntityTag('W/"30"', 3)).toBe(false);
    expect(matchesEntityTag('garbage', 3)).toBe(false);
  });
});

describe('SCIM error schema (RFC 7644 §3.12)', () => {
  it('keeps scimType values, maps the platform 400 to invalidSyntax and leaves other statuses without one', () => {
    expect(scimErrorBody(409, { Code: 'uniqueness', Message: 'taken' })).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '409',
      scimType: 'uniqueness',
      detail: 'taken',
    });
    expect(scimErrorBody(400, { Code: 'ValidationFailed', Message: 'bad JSON' }).scimType).toBe(
      'invalidSyntax',
    );
    expect(scimErrorBody(401, { Code: 'Unauthorized', Message: 'no key' })).not.toHaveProperty('scimType');
  });

  it('recognises SCIM paths in any case, and rewrites only platform envelopes there', () => {
    expect(isScimPath('/API/v1/Scim/Users?filter=x')).toBe(true);
    expect(isScimPath('/api/v1/scimother')).toBe(false);
    const envelope = JSON.stringify({ Succeeded: false, Message: 'slow down', Code: 'TooManyRequests' });
    expect(
      JSON.parse(rewritePlatformError('/api/v1/scim/Users', 429, 'application/json', envelope) ?? ''),
    ).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '429',
      detail: 'slow down',
    });
    expect(
      rewritePlatformError('/api/v1/migration/details', 429, 'application/json', envelope),
    ).toBeUndefined();
    expect(rewritePlatformError('/api/v1/scim/Users', 200, 'application/json', envelope)).toBeUndefined();
    expect(
      rewritePlatformError('/api/v1/scim/Users', 400, 'application/scim+json', '{"status":"400"}'),
    ).toBeUndefined();
  });
});
