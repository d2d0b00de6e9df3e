import { describe, it, expect } from '@jest/globals';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { checkDigestHeader, computeDigest } from './digest.js';

const CAVAGE_BODY = Buffer.from('{"hello": "world"}');
const CAVAGE_DIGEST = 'SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=';
const sha512 = (body: Buffer): string => `SHA-512=${createHash('sha512').update(body).digest('base64')}`;

describe('computeDigest', () => {
  it('matches the Digest of cavage-12 Appendix C', () => {
    expect(computeDigest(CAVAGE_BODY)).toBe(CAVAGE_DIGEST);
  });

  it('hashes the empty body', () => {
    // RFC 6234 SHA-256("") = e3b0c442…b855
    expect(computeDigest(Buffer.alloc(0))).toBe(
      `SHA-256=${Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex').toString('base64')}`,
    );
  });
});

describe('checkDigestHeader', () => {
  it('accepts the matching SHA-256 digest', () => {
    expect(checkDigestHeader(CAVAGE_DIGEST, CAVAGE_BODY)).toEqual({ ok: true });
  });

  it('accepts the algorithm name in any case and surrounding whitespace', () => {
    expect(checkDigestHeader(`  sha-256 = ${CAVAGE_DIGEST.slice(8)}  `, CAVAGE_BODY)).toEqual({ ok: true });
  });

  it.each([
    ['SHA-512 first', `${sha512(CAVAGE_BODY)}, ${CAVAGE_DIGEST}`],
    ['SHA-256 first', `${CAVAGE_DIGEST},${sha512(CAVAGE_BODY)}`],
    ['an unknown algorithm next to it', `UNIXsum=30637, ${CAVAGE_DIGEST}`],
  ])('accepts two algorithms: %s', (_label, header) => {
    expect(checkDigestHeader(header, CAVAGE_BODY)).toEqual({ ok: true });
  });

  it('does not verify the other algorithms (only SHA-256 is required)', () => {
    expect(checkDigestHeader(`SHA-512=AAAA, ${CAVAGE_DIGEST}`, CAVAGE_BODY).ok).toBe(true);
  });

  it('rejects a header without SHA-256', () => {
    expect(checkDigestHeader(sha512(CAVAGE_BODY), CAVAGE_BODY)).toMatchObject({
      ok: false,
      reason: 'no-sha-256',
    });
    expect(checkDigestHeader('', CAVAGE_BODY)).toMatchObject({ ok: false, reason: 'no-sha-256' });
  });

  it('rejects a digest of another body', () => {
    expect(checkDigestHeader(CAVAGE_DIGEST, Buffer.from('{"hello": "world!"}'))).toMatchObject({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects a second, wrong SHA-256 entry next to a right one', () => {
    expect(
      checkDigestHeader(`${CAVAGE_DIGEST}, ${computeDigest(Buffer.from('other'))}`, CAVAGE_BODY),
    ).toMatchObject({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects a truncated digest (length checked before the constant-time compare)', () => {
    expect(checkDigestHeader(CAVAGE_DIGEST.slice(0, 20), CAVAGE_BODY)).toMatchObject({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects a hex digest (it decodes as base64, but to 48 bytes, not 32)', () => {
    const hex = `SHA-256=${createHash('sha256').update(CAVAGE_BODY).digest('hex')}`;
    expect(checkDigestHeader(hex, CAVAGE_BODY)).toMatchObject({ ok: false, reason: 'mismatch' });
  });

  it.each([
    ['no value', 'SHA-256'],
    ['non-base64', 'SHA-256=%%%%'],
    ['an empty value', 'SHA-256='],
  ])('rejects a malformed entry: %s', (_label, header) => {
    expect(checkDigestHeader(header, CAVAGE_BODY)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('accepts computeDigest of any body and rejects it for any other body (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.uint8Array({ maxLength: 2048 }), (a, b) => {
        const bodyA = Buffer.from(a);
        const bodyB = Buffer.from(b);
        expect(checkDigestHeader(computeDigest(bodyA), bodyA).ok).toBe(true);
        expect(checkDigestHeader(computeDigest(bodyA), bodyB).ok).toBe(bodyA.equals(bodyB));
      }),
      { numRuns: 200 },
    );
  });
});
