import fc from 'fast-check';
import { describe, expect, it } from '@jest/globals';
import { canonicalJson, fingerprintOf, parseIdempotencyKey } from './idempotency.js';

describe('parseIdempotencyKey', () => {
  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['"with space and \\"quotes\\" and \\\\"', 'with space and "quotes" and \\'],
    ['  "padded"  ', 'padded'],
    ['order:42/retry', 'order:42/retry'],
    [`"${'k'.repeat(255)}"`, 'k'.repeat(255)],
  ])('takes %s', (header, key) => {
    expect(parseIdempotencyKey(header)).toBe(key);
  });

  it.each([
    '""',
    '',
    '"open',
    '"a", "b"',
    'two words',
    '"bad \\n escape"',
    '"clé"',
    `"${'k'.repeat(256)}"`,
    'k'.repeat(256),
  ])('refuses %j as a 400 naming the header', (header) => {
    expect(() => parseIdempotencyKey(header)).toThrow(
      expect.objectContaining({
        code: 'ValidationFailed',
        fieldErrors: [expect.objectContaining({ Field: 'Idempotency-Key' })],
      }),
    );
  });

  it('refuses the header sent twice', () => {
    expect(() => parseIdempotencyKey(['"a"', '"b"'])).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('fingerprintOf', () => {
  it('ignores the order of object keys, at every depth', () => {
    fc.assert(
      fc.property(fc.object(), (value) => {
        const reversed = JSON.parse(JSON.stringify(value), (_key, item: unknown) =>
          item !== null && typeof item === 'object' && !Array.isArray(item)
            ? Object.fromEntries(Object.entries(item).reverse())
            : item,
        ) as unknown;
        expect(fingerprintOf('POST', '/r', {}, reversed)).toBe(
          fingerprintOf('POST', '/r', {}, JSON.parse(JSON.stringify(value))),
        );
      }),
    );
  });

  it('tells apart bodies, array orders, routes, methods and queries', () => {
    const base = fingerprintOf('POST', '/r', {}, { a: [1, 2] });
    expect(
      new Set([
        base,
        fingerprintOf('POST', '/r', {}, { a: [2, 1] }),
        fingerprintOf('POST', '/r', {}, { a: [1, 2], b: null }),
        fingerprintOf('POST', '/s', {}, { a: [1, 2] }),
        fingerprintOf('PUT', '/r', {}, { a: [1, 2] }),
        fingerprintOf('POST', '/r', { attributes: 'id' }, { a: [1, 2] }),
      ]).size,
    ).toBe(6);
  });

  it('hashes a text body by its octets', () => {
    const calendar = Buffer.from('BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n');
    expect(fingerprintOf('POST', '/r', {}, calendar)).toBe(
      fingerprintOf('POST', '/r', {}, Buffer.from(calendar)),
    );
    expect(fingerprintOf('POST', '/r', {}, calendar)).not.toBe(
      fingerprintOf('POST', '/r', {}, Buffer.from('BEGIN:VCALENDAR\nEND:VCALENDAR\n')),
    );
  });

  it('writes canonical JSON', () => {
    expect(canonicalJson({ b: 1, a: { d: [true, null], c: 'x' }, u: undefined })).toBe(
      '{"a":{"c":"x","d":[true,null]},"b":1}',
    );
  });
});
