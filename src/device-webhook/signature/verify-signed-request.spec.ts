import { describe, it, expect } from '@jest/globals';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { computeDigest } from './digest.js';
import { createKeyResolver } from './key-resolver.js';
import {
  CAVAGE_TEST_PUBLIC_KEY_PEM,
  FIXED_TEST_CERTIFICATE_PEM,
  FIXED_TEST_PRIVATE_KEY_PEM,
  TEST_PLATFORM_KEY_ID,
  TEST_SMARTTHINGS_KEY_ID,
  generateTestKeyPair,
  signRequest,
  type SignRequestInput,
} from './signature-test-kit.js';
import type { HeaderBag } from './signing-string.js';
import {
  verifySignedRequest,
  type SignatureFailureReason,
  type SignedRequest,
} from './verify-signed-request.js';

const keys = generateTestKeyPair();
const otherKeys = generateTestKeyPair();

const PATH = '/api/v1/webhook/homeprovider/acme';
const NOW = new Date('2026-11-22T10:00:00Z');
const BODY = Buffer.from(
  JSON.stringify({ lifecycle: 'EVENT', executionId: 'e-1', eventData: { events: [] } }),
);

const resolveKey = (keyId: string): Promise<KeyObject | undefined> =>
  Promise.resolve(keyId === TEST_SMARTTHINGS_KEY_ID ? keys.publicKey : undefined);

function signed(overrides: Partial<SignRequestInput> = {}): Record<string, string> {
  return signRequest({ privateKey: keys.privateKey, path: PATH, body: BODY, date: NOW, ...overrides })
    .headers;
}

function verify(headers: HeaderBag, overrides: Partial<SignedRequest> = {}) {
  return verifySignedRequest({
    method: 'POST',
    path: PATH,
    headers,
    rawBody: BODY,
    now: NOW,
    resolveKey,
    ...overrides,
  });
}

async function expectFailure(
  result: ReturnType<typeof verify>,
  reason: SignatureFailureReason,
): Promise<void> {
  const outcome = await result;
  expect(outcome).toMatchObject({ ok: false, reason });
}

describe('verifySignedRequest', () => {
  it('accepts a request signed the SmartThings way', async () => {
    await expect(verify(signed())).resolves.toEqual({
      ok: true,
      keyId: TEST_SMARTTHINGS_KEY_ID,
      signature: expect.any(Buffer),
    });
  });

  it('accepts a path with a query string, signed exactly as posted', async () => {
    const path = `${PATH}?trace=1&b=%20x&a=2`;
    await expect(verify(signed({ path }), { path })).resolves.toMatchObject({ ok: true });
  });

  it('rejects the same query in another order (the path is not normalised)', async () => {
    await expectFailure(
      verify(signed({ path: `${PATH}?a=1&b=2` }), { path: `${PATH}?b=2&a=1` }),
      'bad-signature',
    );
  });

  it('accepts a target with a query signed on its path alone, as SmartThings signs it (SDK #255/#259)', async () => {
    await expect(verify(signed({ path: PATH }), { path: `${PATH}?code=abc` })).resolves.toMatchObject({
      ok: true,
    });
    // Still the path: a signature for another path does not verify with or without the query.
    await expectFailure(
      verify(signed({ path: `${PATH}/other` }), { path: `${PATH}?code=abc` }),
      'bad-signature',
    );
  });

  it('accepts any header-name case and bag order', async () => {
    const { authorization, date, digest } = signed();
    const headers: HeaderBag = {
      DIGEST: digest,
      'content-type': 'application/json',
      Date: date,
      AUTHORIZATION: authorization,
    };
    await expect(verify(headers)).resolves.toMatchObject({ ok: true });
  });

  it('accepts the signed headers in another order and case in the signature', async () => {
    const headers = signed({
      signedHeaderNames: ['Date', 'DIGEST', '(request-target)', 'content-type'],
      extraHeaders: { 'Content-Type': 'application/json' },
    });
    await expect(verify(headers)).resolves.toMatchObject({ ok: true });
  });

  it('accepts the method in any case', async () => {
    await expect(verify(signed({ method: 'post' }), { method: 'POST' })).resolves.toMatchObject({ ok: true });
  });

  it('accepts a Digest header carrying SHA-512 and SHA-256', async () => {
    const digest = `SHA-512=${Buffer.alloc(64, 1).toString('base64')}, ${computeDigest(BODY)}`;
    await expect(verify(signed({ digest }))).resolves.toMatchObject({ ok: true });
  });

  it.each(['hs2019', 'RSA-SHA256'])('accepts algorithm %s', async (algorithm) => {
    await expect(verify(signed({ algorithm }))).resolves.toMatchObject({ ok: true });
  });

  it('accepts a signature without an algorithm parameter (derived from the RSA key)', async () => {
    const headers = signed();
    const authorization = headers.authorization.replace(/,algorithm="[^"]*"/, '');
    expect(authorization).not.toContain('algorithm');
    await expect(verify({ ...headers, authorization })).resolves.toMatchObject({ ok: true });
  });

  describe('Date skew', () => {
    it.each([300, -300, 0, 299])('accepts a Date %i s from now', async (offset) => {
      const date = new Date(NOW.getTime() + offset * 1000);
      await expect(verify(signed({ date }))).resolves.toMatchObject({ ok: true });
    });

    it.each([301, -301, 3600])('rejects a Date %i s from now', async (offset) => {
      const date = new Date(NOW.getTime() + offset * 1000);
      await expectFailure(verify(signed({ date })), 'date-skew');
    });

    it('honours maxSkewSeconds', async () => {
      const date = new Date(NOW.getTime() - 60_000);
      await expectFailure(verify(signed({ date }), { maxSkewSeconds: 59 }), 'date-skew');
      await expect(verify(signed({ date }), { maxSkewSeconds: 60 })).resolves.toMatchObject({ ok: true });
    });

    it('rejects a Date that is not a date', async () => {
      await expectFailure(verify({ ...signed(), date: 'yesterday' }), 'date-skew');
    });

    it('rejects a signature whose expires parameter has passed', async () => {
      const headers = signed();
      const expires = Math.floor(NOW.getTime() / 1000) - 1;
      await expectFailure(
        verify({ ...headers, authorization: `${headers.authorization},expires=${String(expires)}` }),
        'date-skew',
      );
    });
  });

  describe('failure reasons', () => {
    it('missing-signature: no Authorization header', async () => {
      const { date, digest } = signed();
      await expectFailure(verify({ date, digest }), 'missing-signature');
      await expectFailure(verify({ date, digest, authorization: '' }), 'missing-signature');
    });

    it('missing-signature: another scheme', async () => {
      await expectFailure(
        verify({ ...signed(), authorization: 'Bearer 0123456789abcdef' }),
        'missing-signature',
      );
    });

    it('malformed-signature: unparsable header', async () => {
      await expectFailure(
        verify({ ...signed(), authorization: 'Signature keyId="k",signature="@@"' }),
        'malformed-signature',
      );
      await expectFailure(
        verify({ ...signed(), authorization: 'Signature keyId="k"' }),
        'malformed-signature',
      );
    });

    it('malformed-signature: two Authorization headers', async () => {
      const headers = signed();
      const authorization = headers.authorization;
      await expectFailure(
        verify({ ...headers, authorization: [authorization, authorization] }),
        'malformed-signature',
      );
    });

    it.each(['hmac-sha256', 'rsa-sha1', 'rsa-sha512', 'ecdsa-sha256'])(
      'unsupported-algorithm: %s',
      async (algorithm) => {
        await expectFailure(verify(signed({ algorithm })), 'unsupported-algorithm');
      },
    );

    it('unsupported-algorithm: the key for the id is not RSA', async () => {
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
      await expectFailure(
        verify(signed(), { resolveKey: () => Promise.resolve(ec) }),
        'unsupported-algorithm',
      );
    });

    it.each([
      ['digest', ['(request-target)', 'date']],
      ['date', ['(request-target)', 'digest']],
      ['(request-target)', ['digest', 'date']],
      ['all three', ['host']],
    ])('missing-signed-header: %s not signed', async (_label, signedHeaderNames) => {
      const headers = signed({ signedHeaderNames, extraHeaders: { host: 'example.com' } });
      await expectFailure(verify(headers), 'missing-signed-header');
    });

    it('missing-signed-header: the default headers list "(created)" of a bare signature', async () => {
      const headers = signed();
      const authorization = headers.authorization.replace(/,headers="[^"]*"/, '');
      await expectFailure(verify({ ...headers, authorization }), 'missing-signed-header');
    });

    it('missing-signed-header: a signed header is absent from the request', async () => {
      const headers = signed({
        signedHeaderNames: ['(request-target)', 'digest', 'date', 'x-st-correlation'],
        extraHeaders: { 'x-st-correlation': 'c-1' },
      });
      const { 'x-st-correlation': _dropped, ...without } = headers;
      expect(_dropped).toBe('c-1');
      await expect(verify(headers)).resolves.toMatchObject({ ok: true });
      await expectFailure(verify(without), 'missing-signed-header');
    });

    it('digest-mismatch: the body was changed after signing', async () => {
      await expectFailure(
        verify(signed(), { rawBody: Buffer.from(`${BODY.toString()} `) }),
        'digest-mismatch',
      );
    });

    it('digest-mismatch: the Digest header has no SHA-256 entry', async () => {
      await expectFailure(
        verify(signed({ digest: `SHA-512=${Buffer.alloc(64).toString('base64')}` })),
        'digest-mismatch',
      );
    });

    it('unknown-key: the resolver knows no key for the id', async () => {
      const result = await verify(signed({ keyId: '/SmartThings/unknown' }));
      expect(result).toMatchObject({ ok: false, reason: 'unknown-key', keyId: '/SmartThings/unknown' });
    });

    it('unknown-key: the resolver fails', async () => {
      await expectFailure(
        verify(signed(), { resolveKey: () => Promise.reject(new Error('network down')) }),
        'unknown-key',
      );
    });

    it('bad-signature: signed with another key', async () => {
      await expectFailure(verify(signed({ privateKey: otherKeys.privateKey })), 'bad-signature');
    });

    it('bad-signature: posted to another path than the one signed', async () => {
      await expectFailure(verify(signed(), { path: `${PATH}x` }), 'bad-signature');
    });

    it('bad-signature: another method', async () => {
      await expectFailure(verify(signed(), { method: 'PUT' }), 'bad-signature');
    });

    it('bad-signature: the Date header was replaced by another in-window date', async () => {
      const headers = signed();
      await expectFailure(
        verify({ ...headers, date: new Date(NOW.getTime() + 1000).toUTCString() }),
        'bad-signature',
      );
    });

    it('bad-signature: body and Digest both replaced (the Digest is signed)', async () => {
      const other = Buffer.from('{"lifecycle":"UNINSTALL"}');
      await expectFailure(
        verify({ ...signed(), digest: computeDigest(other) }, { rawBody: other }),
        'bad-signature',
      );
    });

    it('bad-signature: one signature bit flipped', async () => {
      const headers = signed();
      const match = /signature="([^"]+)"/.exec(headers.authorization);
      const bytes = Buffer.from(match?.[1] ?? '', 'base64');
      bytes[10] ^= 0x01;
      const authorization = headers.authorization.replace(
        /signature="[^"]+"/,
        `signature="${bytes.toString('base64')}"`,
      );
      await expectFailure(verify({ ...headers, authorization }), 'bad-signature');
    });

    it('bad-signature: a signature of the wrong length', async () => {
      const headers = signed();
      const authorization = headers.authorization.replace(/signature="[^"]+"/, 'signature="AAAA"');
      await expectFailure(verify({ ...headers, authorization }), 'bad-signature');
    });
  });

  describe('fixed test vectors', () => {
    // Request in SmartThings' documented format; expected values computed independently with the openssl CLI:
    //   printf '%s' "$BODY" | openssl dgst -sha256 -binary | base64
    //   openssl dgst -sha256 -sign fixed.pem signing-string.txt | base64
    const body = Buffer.from(
      '{"lifecycle":"CONFIGURATION","executionId":"b328f242-c602-4204-8d73-33c48ae180af","locale":"en",' +
        '"version":"1.0.0","configurationData":{"installedAppId":"8a0dcdc9-1ab4-4c60-9de7-cb78f59a1121",' +
        '"phase":"INITIALIZE","pageId":"","previousPageId":"","config":{}},"settings":{}}',
    );
    const date = 'Sun, 22 Nov 2026 10:00:00 GMT';
    const digest = 'SHA-256=bVRaUDnrS3fKb5Z6L90TOXCRJe0I0wf9DY+kdiC3s+I=';
    const signature =
      'O7TtTZVHuUcC0qDhK5yKGt5HwWkHVOAFETIx699X9GapzKz6XAZG6fLlTo2U79QwZtu3AWgr2LKIhtt0TYsrOvH959hTvOGI48IJI0ueF/e/' +
      'WVvq/Qk/5pHjEIDchFmLzrranjNFSx0QNCbXIGjttFGn+WrDSmrPpmjbXTHCTjS1LCqS3aYonDhEEYHeLBDwwc+qbUOpW0n9MOd7KXCGUFZt' +
      'Ijkr0qt1kBYhqnr5lFhW/z/RB1oMhoPK1YtTloGzZymclEVPVRBlIW3z7SbbSKySAjjyomyqgIpDumC+wtbE7DNLohmlB3kExGBDrqrj75Gz' +
      'yBr668gtkRYnfdHH2w==';
    const authorization =
      `Signature keyId="${TEST_PLATFORM_KEY_ID}",signature="${signature}",` +
      'headers="(request-target) digest date",algorithm="rsa-sha256"';

    it('signRequest reproduces the openssl signature byte for byte', () => {
      const result = signRequest({
        privateKey: FIXED_TEST_PRIVATE_KEY_PEM,
        keyId: TEST_PLATFORM_KEY_ID,
        path: PATH,
        body,
        date: new Date(date),
      });
      expect(result.signingString).toBe(`(request-target): post ${PATH}\ndigest: ${digest}\ndate: ${date}`);
      expect(result.headers).toEqual({ authorization, date, digest });
    });

    it('verifies through a /pl/ key id mapped to the certificate', async () => {
      const resolver = createKeyResolver({
        certificatesByKeyId: { [TEST_PLATFORM_KEY_ID]: FIXED_TEST_CERTIFICATE_PEM },
      });
      const result = await verifySignedRequest({
        method: 'POST',
        path: PATH,
        headers: { authorization, date, digest, 'content-type': 'application/json' },
        rawBody: body,
        now: new Date('2026-11-22T10:04:00Z'),
        resolveKey: resolver,
      });
      expect(result).toEqual({ ok: true, keyId: TEST_PLATFORM_KEY_ID, signature: expect.any(Buffer) });
    });

    it('verifies draft-cavage-http-signatures-12 Appendix C.3 (all headers test)', async () => {
      const cavageKey = createPublicKey(CAVAGE_TEST_PUBLIC_KEY_PEM);
      const result = await verifySignedRequest({
        method: 'POST',
        path: '/foo?param=value&pet=dog',
        headers: {
          host: 'example.com',
          date: 'Sun, 05 Jan 2014 21:31:40 GMT',
          'content-type': 'application/json',
          digest: 'SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=',
          'content-length': '18',
          authorization:
            'Signature keyId="Test",algorithm="rsa-sha256",' +
            'headers="(request-target) host date content-type digest content-length",' +
            'signature="vSdrb+dS3EceC9bcwHSo4MlyKS59iFIrhgYkz8+oVLEEzmYZZvRs8rgOp+63LEM3v+MFHB32NfpB2bEKBIvB1q52LaEUHFv' +
            '120V01IL+TAD48XaERZFukWgHoBTLMhYS2Gb51gWxpeIq8knRmPnYePbF5MOkR0Zkly4zKH7s1dE="',
        },
        rawBody: Buffer.from('{"hello": "world"}'),
        now: new Date('2014-01-05T21:31:40Z'),
        resolveKey: (keyId) => Promise.resolve(keyId === 'Test' ? cavageKey : undefined),
      });
      expect(result).toEqual({ ok: true, keyId: 'Test', signature: expect.any(Buffer) });
    });

    it('rejects Appendix C.2 (basic test): valid RSA, but the Digest is not signed', async () => {
      const cavageKey = createPublicKey(CAVAGE_TEST_PUBLIC_KEY_PEM);
      const result = await verifySignedRequest({
        method: 'POST',
        path: '/foo?param=value&pet=dog',
        headers: {
          host: 'example.com',
          date: 'Sun, 05 Jan 2014 21:31:40 GMT',
          authorization:
            'Signature keyId="Test",algorithm="rsa-sha256",headers="(request-target) host date",' +
            'signature="qdx+H7PHHDZgy4y/Ahn9Tny9V3GP6YgBPyUXMmoxWtLbHpUnXS2mg2+SbrQDMCJypxBLSPQR2aAjn7ndmw2iicw3HMbe8Vf' +
            'EdKFYRqzic+efkb3nndiv/x1xSHDJWeSWkx3ButlYSuBskLu6kd9Fswtemr3lgdDEmn04swr2Os0="',
        },
        rawBody: Buffer.from('{"hello": "world"}'),
        now: new Date('2014-01-05T21:31:40Z'),
        resolveKey: () => Promise.resolve(cavageKey),
      });
      expect(result).toMatchObject({ ok: false, reason: 'missing-signed-header' });
    });
  });

  describe('properties', () => {
    const pathArb = fc
      .array(fc.stringMatching(/^[A-Za-z0-9._~%-]{1,12}$/), { minLength: 1, maxLength: 4 })
      .chain((segments) =>
        fc
          .option(fc.stringMatching(/^[A-Za-z0-9=&%_.-]{1,30}$/), { nil: undefined })
          .map((query) => `/${segments.join('/')}${query === undefined ? '' : `?${query}`}`),
      );

    it('accepts every request it signed, whatever body and path (property)', async () => {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), pathArb, async (bytes, path) => {
          const body = Buffer.from(bytes);
          const headers = signRequest({ privateKey: keys.privateKey, path, body, date: NOW }).headers;
          const result = await verifySignedRequest({
            method: 'POST',
            path,
            headers,
            rawBody: body,
            now: NOW,
            resolveKey,
          });
          expect(result).toEqual({ ok: true, keyId: TEST_SMARTTHINGS_KEY_ID, signature: expect.any(Buffer) });
        }),
        { numRuns: 40 },
      );
    });

    it('rejects any single-byte change of the body (property)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uint8Array({ minLength: 1, maxLength: 1024 }),
          fc.nat(),
          fc.integer({ min: 1, max: 255 }),
          async (bytes, position, flip) => {
            const body = Buffer.from(bytes);
            const headers = signRequest({ privateKey: keys.privateKey, path: PATH, body, date: NOW }).headers;
            const tampered = Buffer.from(body);
            const index = position % tampered.length;
            tampered[index] = (tampered[index] ?? 0) ^ flip;
            const result = await verifySignedRequest({
              method: 'POST',
              path: PATH,
              headers,
              rawBody: tampered,
              now: NOW,
              resolveKey,
            });
            expect(result).toMatchObject({ ok: false, reason: 'digest-mismatch' });
          },
        ),
        { numRuns: 40 },
      );
    });
  });
});
