import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import { parseSignatureHeader, type SignatureParseErrorCode } from './signature-header.js';

const SIG_B64 = Buffer.from('not a real signature but fine for parsing').toString('base64');

function parsed(header: string) {
  const result = parseSignatureHeader(header);
  if (!result.ok) throw new Error(`expected a parse, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

describe('parseSignatureHeader', () => {
  it('parses the SmartThings format', () => {
    const value = parsed(
      `Signature keyId="/pl/useast2/1a-2b",signature="${SIG_B64}",headers="(request-target) digest date",algorithm="rsa-sha256"`,
    );
    expect(value.keyId).toBe('/pl/useast2/1a-2b');
    expect(value.algorithm).toBe('rsa-sha256');
    expect(value.headers).toEqual(['(request-target)', 'digest', 'date']);
    expect(value.signature.equals(Buffer.from('not a real signature but fine for parsing'))).toBe(true);
    expect(value.created).toBeUndefined();
  });

  it.each([
    [
      'any parameter order',
      `Signature algorithm="rsa-sha256",headers="date",signature="${SIG_B64}",keyId="k"`,
    ],
    ['lower-case scheme', `signature keyId="k",signature="${SIG_B64}",headers="date",algorithm="rsa-sha256"`],
    ['upper-case scheme', `SIGNATURE keyId="k",signature="${SIG_B64}",headers="date",algorithm="rsa-sha256"`],
    [
      'spaces and folded lines between parameters',
      `  Signature   keyId = "k" ,\n\t signature="${SIG_B64}" ,headers="date"  , algorithm="rsa-sha256"  `,
    ],
    [
      'empty list elements',
      `Signature ,keyId="k",,signature="${SIG_B64}",headers="date",algorithm="rsa-sha256",`,
    ],
    [
      'parameter names in another case',
      `Signature KEYID="k",Signature="${SIG_B64}",Headers="date",ALGORITHM="RSA-SHA256"`,
    ],
    [
      'unknown parameters',
      `Signature keyId="k",signature="${SIG_B64}",headers="date",algorithm="rsa-sha256",nonce="x,y"`,
    ],
  ])('tolerates %s', (_label, header) => {
    const value = parsed(header);
    expect(value.keyId).toBe('k');
    expect(value.algorithm).toBe('rsa-sha256');
    expect(value.headers).toEqual(['date']);
    expect(value.signature.toString()).toBe('not a real signature but fine for parsing');
  });

  it('lower-cases header names and collapses repeated whitespace', () => {
    expect(
      parsed(`Signature keyId="k",signature="${SIG_B64}",headers="  (Request-Target)   Digest\tDATE "`)
        .headers,
    ).toEqual(['(request-target)', 'digest', 'date']);
  });

  it('keeps commas and escaped quotes inside quoted values', () => {
    expect(parsed(`Signature keyId="a,b\\"c",signature="${SIG_B64}"`).keyId).toBe('a,b"c');
  });

  it('applies the cavage-12 defaults: headers "(created)", no algorithm', () => {
    const value = parsed(`Signature keyId="k",signature="${SIG_B64}"`);
    expect(value.headers).toEqual(['(created)']);
    expect(value.algorithm).toBeUndefined();
  });

  it('reads unquoted created/expires (cavage-12 §2.1.4, §2.1.5)', () => {
    const value = parsed(`Signature keyId="k",created=1402170695, expires=1402170699,signature="${SIG_B64}"`);
    expect(value.created).toBe(1402170695);
    expect(value.expires).toBe(1402170699);
  });

  it.each<[string, string, SignatureParseErrorCode]>([
    ['another scheme', 'Bearer abc', 'not-signature-scheme'],
    [
      'a scheme that only starts with Signature',
      `Signatures keyId="k",signature="${SIG_B64}"`,
      'not-signature-scheme',
    ],
    ['no keyId', `Signature signature="${SIG_B64}",headers="date"`, 'missing-key-id'],
    ['an empty keyId', `Signature keyId="",signature="${SIG_B64}"`, 'missing-key-id'],
    ['no signature', 'Signature keyId="k",headers="date"', 'missing-signature'],
    ['the bare scheme', 'Signature', 'missing-key-id'],
    ['a non-base64 signature', 'Signature keyId="k",signature="abc$def"', 'invalid-signature-encoding'],
    ['a truncated base64 signature', 'Signature keyId="k",signature="abcde"', 'invalid-signature-encoding'],
    ['a url-safe base64 signature', 'Signature keyId="k",signature="ab-_"', 'invalid-signature-encoding'],
    ['an unterminated quote', `Signature keyId="k,signature="${SIG_B64}`, 'syntax'],
    ['a missing comma', `Signature keyId="k" signature="${SIG_B64}"`, 'syntax'],
    ['a parameter without value', `Signature keyId,signature="${SIG_B64}"`, 'syntax'],
    ['garbage', 'Signature ===', 'syntax'],
    ['a repeated parameter', `Signature keyId="a",keyId="b",signature="${SIG_B64}"`, 'duplicate-parameter'],
    [
      'a repeated parameter in another case',
      `Signature keyId="a",KEYID="b",signature="${SIG_B64}"`,
      'duplicate-parameter',
    ],
    ['an empty headers list', `Signature keyId="k",signature="${SIG_B64}",headers="  "`, 'invalid-headers'],
    [
      'a non-numeric created',
      `Signature keyId="k",signature="${SIG_B64}",created="yesterday"`,
      'invalid-timestamp',
    ],
  ])('rejects %s', (_label, header, code) => {
    const result = parseSignatureHeader(header);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe(code);
  });

  it('round-trips any parameter order and spacing (property)', () => {
    const token = fc.stringMatching(/^[A-Za-z0-9/:._-]{1,40}$/);
    fc.assert(
      fc.property(
        token,
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.array(fc.constantFrom('(request-target)', 'digest', 'date', 'host', 'content-type'), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.constantFrom('rsa-sha256', 'hs2019'),
        fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
        fc.constantFrom('', ' ', '  ', '\t'),
        (keyId, sigBytes, headers, algorithm, orderKeys, pad) => {
          const signature = Buffer.from(sigBytes).toString('base64');
          const params = [
            `keyId="${keyId}"`,
            `signature="${signature}"`,
            `headers="${headers.join(' ')}"`,
            `algorithm="${algorithm}"`,
          ]
            .map((param, index) => ({ param, order: orderKeys[index] ?? 0 }))
            .sort((a, b) => a.order - b.order)
            .map(({ param }) => param);
          const result = parseSignatureHeader(`Signature ${params.join(`${pad},${pad}`)}`);
          expect(result.ok).toBe(true);
          if (!result.ok) return;
          expect(result.value.keyId).toBe(keyId);
          expect(result.value.algorithm).toBe(algorithm);
          expect(result.value.headers).toEqual(headers);
          expect(result.value.signature.equals(Buffer.from(sigBytes))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('never throws on arbitrary input (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (tail) => {
        const result = parseSignatureHeader(`Signature ${tail}`);
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });
});
