import { describe, it, expect } from '@jest/globals';
import { buildSigningString, headerValues } from './signing-string.js';

// The request of draft-cavage-http-signatures-12 Appendix C.
const CAVAGE_HEADERS = {
  host: 'example.com',
  date: 'Sun, 05 Jan 2014 21:31:40 GMT',
  'content-type': 'application/json',
  digest: 'SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=',
  'content-length': '18',
};

function built(input: Parameters<typeof buildSigningString>[0]): string {
  const result = buildSigningString(input);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe('buildSigningString', () => {
  it('matches cavage-12 Appendix C.2 (basic test)', () => {
    expect(
      built({
        method: 'POST',
        path: '/foo?param=value&pet=dog',
        headers: CAVAGE_HEADERS,
        signedHeaderNames: ['(request-target)', 'host', 'date'],
      }),
    ).toBe(
      '(request-target): post /foo?param=value&pet=dog\nhost: example.com\ndate: Sun, 05 Jan 2014 21:31:40 GMT',
    );
  });

  it('matches cavage-12 Appendix C.3 (all headers test)', () => {
    expect(
      built({
        method: 'POST',
        path: '/foo?param=value&pet=dog',
        headers: CAVAGE_HEADERS,
        signedHeaderNames: ['(request-target)', 'host', 'date', 'content-type', 'digest', 'content-length'],
      }),
    ).toBe(
      [
        '(request-target): post /foo?param=value&pet=dog',
        'host: example.com',
        'date: Sun, 05 Jan 2014 21:31:40 GMT',
        'content-type: application/json',
        'digest: SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=',
        'content-length: 18',
      ].join('\n'),
    );
  });

  it('follows the signed order, not the order of the request headers', () => {
    expect(
      built({
        method: 'post',
        path: '/x',
        headers: CAVAGE_HEADERS,
        signedHeaderNames: ['date', '(request-target)', 'host'],
      }),
    ).toBe('date: Sun, 05 Jan 2014 21:31:40 GMT\n(request-target): post /x\nhost: example.com');
  });

  it('finds headers whatever their case and lower-cases the names it writes', () => {
    expect(
      built({
        method: 'Post',
        path: '/A/B?C=D',
        headers: { 'X-Custom': 'v', DATE: 'd' },
        signedHeaderNames: ['(Request-Target)', 'x-custom', 'Date'],
      }),
    ).toBe('(request-target): post /A/B?C=D\nx-custom: v\ndate: d');
  });

  it('keeps the path and query byte-for-byte (no decoding, no re-ordering)', () => {
    const path = '/api/v1/webhook/homeprovider/acme%2Fx?b=2&a=1&a=%20';
    expect(built({ method: 'POST', path, headers: {}, signedHeaderNames: ['(request-target)'] })).toBe(
      `(request-target): post ${path}`,
    );
  });

  it('joins repeated headers with ", " in message order and trims optional whitespace', () => {
    expect(
      built({
        method: 'GET',
        path: '/',
        headers: { 'cache-control': ['  max-age=60 ', 'must-revalidate'], 'x-empty': '' },
        signedHeaderNames: ['cache-control', 'x-empty'],
      }),
    ).toBe('cache-control: max-age=60, must-revalidate\nx-empty: ');
  });

  it('merges the same header given under two spellings', () => {
    expect(headerValues({ 'X-A': '1', 'x-a': ['2', '3'] }, 'x-a')).toEqual(['1', '2', '3']);
    expect(headerValues({ 'x-a': undefined }, 'x-a')).toBeUndefined();
  });

  it('writes (created) and (expires) from the signature parameters', () => {
    expect(
      built({
        method: 'POST',
        path: '/foo',
        headers: {},
        signedHeaderNames: ['(created)', '(expires)'],
        created: 1402170695,
        expires: 1402170699,
      }),
    ).toBe('(created): 1402170695\n(expires): 1402170699');
  });

  it('fails when a signed header is absent from the request', () => {
    const result = buildSigningString({
      method: 'POST',
      path: '/',
      headers: { date: 'd' },
      signedHeaderNames: ['date', 'digest'],
    });
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'missing-header',
        name: 'digest',
        message: 'signed header digest is not on the request',
      },
    });
  });

  it('fails when (created) is signed without a created parameter', () => {
    const result = buildSigningString({
      method: 'POST',
      path: '/',
      headers: {},
      signedHeaderNames: ['(created)'],
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('missing-parameter');
  });
});
