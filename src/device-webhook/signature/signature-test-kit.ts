// TEST-ONLY helpers: sign requests the way SmartThings does (draft-cavage-http-signatures-12 §2.3 + RFC 3230
// Digest) so unit and e2e specs can call the webhook. Nothing in the application may import this file.
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { computeDigest } from './digest.js';
import { buildSigningString } from './signing-string.js';

export const TEST_SMARTTHINGS_KEY_ID = '/SmartThings/3c:5e:1f:a0:77:42:9b:0d:c8:e2:16:5a:90:4f:bb:21';
export const TEST_PLATFORM_KEY_ID = '/pl/useast2/3c-5e-1f-a0-77-42-9b-0d-c8-e2-16-5a-90-4f-bb-21-aa-07-d3-e9';
export const SMARTTHINGS_SIGNED_HEADERS = ['(request-target)', 'digest', 'date'] as const;

export interface SignRequestInput {
  privateKey: KeyObject | string;
  path: string;
  body: Buffer | string;
  keyId?: string;
  method?: string;
  /** Default: now. Sent as an IMF-fixdate (`Sun, 22 Nov 2026 10:00:00 GMT`). */
  date?: Date;
  signedHeaderNames?: readonly string[];
  /** Default `rsa-sha256`; the value written into the header, the signature is always RSA-SHA256. */
  algorithm?: string;
  /** Replaces the computed `Digest` value, e.g. to send several algorithms. */
  digest?: string;
  /** Further headers to send and, when listed in signedHeaderNames, to sign. */
  extraHeaders?: Readonly<Record<string, string>>;
}

export interface SignedTestRequest {
  /** authorization, date, digest and the extra headers, ready for supertest `.set()` or `inject({headers})`. */
  headers: Record<string, string>;
  signingString: string;
}

export function signRequest(input: SignRequestInput): SignedTestRequest {
  const method = input.method ?? 'POST';
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const headers: Record<string, string> = {
    ...input.extraHeaders,
    date: (input.date ?? new Date()).toUTCString(),
    digest: input.digest ?? computeDigest(body),
  };
  const signedHeaderNames = input.signedHeaderNames ?? SMARTTHINGS_SIGNED_HEADERS;
  const built = buildSigningString({ method, path: input.path, headers, signedHeaderNames });
  if (!built.ok) throw new Error(`signRequest: ${built.error.message}`);
  const key = typeof input.privateKey === 'string' ? createPrivateKey(input.privateKey) : input.privateKey;
  const signature = sign('sha256', Buffer.from(built.value, 'latin1'), key).toString('base64');
  headers.authorization =
    `Signature keyId="${input.keyId ?? TEST_SMARTTHINGS_KEY_ID}",signature="${signature}",` +
    `headers="${signedHeaderNames.join(' ')}",algorithm="${input.algorithm ?? 'rsa-sha256'}"`;
  return { headers, signingString: built.value };
}

export interface TestKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicKeyPem: string;
}

/** A fresh RSA key pair (≈50–150 ms for 2048 bits: generate once per spec file). */
export function generateTestKeyPair(modulusLength = 2048): TestKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength });
  return {
    privateKey,
    publicKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * Fixed 2048-bit key generated for this project's test vectors only (openssl genpkey), and a self-signed
 * certificate for it valid until 2126; the expected signatures in the specs were computed with the openssl CLI.
 */
export const FIXED_TEST_PRIVATE_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQC5z74h/vCY386z
7WINrmLY8orn+4plGp/yvL30gd7itel3h6MtVFYHtud8j3ZxrFgF64hxZu9tnUEL
tulJEwwDZZpAQdryxf8LXzaaLFVkZE9aEtl5QL5WfYBH+UDpCZcA/PvPYaSVJIpX
3EIfaYKlCz71xt4TN2kIsHqCypPZuqJbHRJS5oH41KhiiHpQXOZp8/mRqIuhmPzk
hcvm45B95/iq+h8ea/3uc7kEY5a1NsiI5jpJD+aO5xDqqiYPcxv+xtJEYyNk4HP5
F0XZjze1CkLzSkTW4VFWOwILFxoumk1/TLzLcZB6/P18BQyy0FWgM4vAOKCo+OM8
+52QYZdTAgMBAAECgf87J2fgaskt4hJsNaaBtILDjnOqZuooRdGl9XCD5tSOWFt7
MjNAuxioXBJWFVYf2j4rpFBLyflvbCDJGfIq0WWBr1bsHgsWPvJzLFy1uGd3Dng0
tMuHTpVJ86pjP3bquaLZLbD81JkQ4hEo53YlifGNmYbxt937QCiwG37lJJjtN3DX
Btl6dbmKsagtqHtN2DRzskNPqg6sKAvfrcKyl24eGYmNGzf9ERB3hhKbupsrxIsZ
juWC928NkPSlF2YIVnlLE4fATlYh/2malEB5uXNARD1Bk5HF9kYaIsJHwPhbvT26
f9+RNMgIU4PKQ9QuaI8rd0mUQjsFIxqth833wzUCgYEA/7nx0hcNJ2azqqPjs6pn
KXCEaxwDW9U/kyv9mc6Lj/doyGvLvbLM9ig/iICIW2ikexpwg4WdtOGyXFOcZY29
R95uT9ZlnetRpP4S6oe9qggvDJnk9/w/p8UFdfh5/p3COzPlNuprrhzwWTj+Fus3
Kj+9Fnc966NqCKhNcMZPM5UCgYEAugKlKKjQ3Ovn072nahq6B233hQM5O04IoJhp
7vMdfYNDBV4kHASjk3KwI4kw8Doe+puv1fSQNMGfedEEMTJwtE28Ai+ut+y6pEG3
2lzjEBuvRGmuF+1hHyhEHmXQJjUYJtAlPWyNbWWQa1tG+qkDNh/9qPi8e5stFtfK
gAiu5UcCgYEA2gNsZe/BBxZHlfKi7UkZKfsC6U24j1H+ITofukCcOuByNGuyBseo
dTNa9sSde1B66Xhg87+18792j7+4VdvAwsSexvHBMCCuOjthZRDUYWEYu2V4DvK+
Ugll3m03lBpqvI5Bm8++fXGudmJgPKnLHfm4+q4t2/Y1L6xMWRi37QECgYANe0+Z
KNMqj/aXhDF0IUfGbhP4kgk94SQC78kNxpUmmbLr2qznUvbAIxndGX5wiuXf6BTQ
fw9Mo5P5ckrJfgxpJRExX19ceU31xcWbkAvtCPSlErvJhCz74yE8yshRXJvJhGCO
mSWO/kN/ZHg6hrFy5NKvwod2tgKIm09UBE0Y1QKBgQCBMmelQ63v4Vi5DwUNOdJL
CAdsru7k1YGxhCdKEaLVZJv70AlSdA7yHQi9bsKUJFu8asYRimkb7UIo/Vg6b9Ix
H6kWEUdST4Mk5+0eYeOp9iECYeqlwOE2LjD2O590BCfQodjw04Z0LkbcEMqb/Ewb
m+t+guclckajHMrb7bzMEQ==
-----END PRIVATE KEY-----
`;

export const FIXED_TEST_CERTIFICATE_PEM = `-----BEGIN CERTIFICATE-----
MIIDKjCCAhKgAwIBAgIBATANBgkqhkiG9w0BAQsFADAtMSswKQYDVQQDDCJwbGF0
Zm9ybS1hcGkgc2lnbmF0dXJlIHRlc3QgdmVjdG9yMCAXDTI2MTEyMjAyMjIzN1oY
DzIxMjYxMDI5MDIyMjM3WjAtMSswKQYDVQQDDCJwbGF0Zm9ybS1hcGkgc2lnbmF0
dXJlIHRlc3QgdmVjdG9yMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA
uc++If7wmN/Os+1iDa5i2PKK5/uKZRqf8ry99IHe4rXpd4ejLVRWB7bnfI92caxY
BeuIcWbvbZ1BC7bpSRMMA2WaQEHa8sX/C182mixVZGRPWhLZeUC+Vn2AR/lA6QmX
APz7z2GklSSKV9xCH2mCpQs+9cbeEzdpCLB6gsqT2bqiWx0SUuaB+NSoYoh6UFzm
afP5kaiLoZj85IXL5uOQfef4qvofHmv97nO5BGOWtTbIiOY6SQ/mjucQ6qomD3Mb
/sbSRGMjZOBz+RdF2Y83tQpC80pE1uFRVjsCCxcaLppNf0y8y3GQevz9fAUMstBV
oDOLwDigqPjjPPudkGGXUwIDAQABo1MwUTAdBgNVHQ4EFgQUh+SW2afIB8Uo10jO
QIkxl4NbLJcwHwYDVR0jBBgwFoAUh+SW2afIB8Uo10jOQIkxl4NbLJcwDwYDVR0T
AQH/BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEAXVRSpkM/U38U39bL5n7dhouR
4oNJMM7P3asEt1UXxy+xn096V2CTHY26kHxOtiyUjCvpc0XgTyJzOkDzLqG7Gxna
Iia7htOqfYrqC4OUQKH4mxeVHXqURIE9eRtj3MHkBha4xtFA1n+InOnvDkDuzIYi
dHXQAxfFgh62qW5mQvcnizp6heSmOhA0ELB4HNs5QXkyVLSJA+OQJch22OS2hvfc
o6dTREwr+yfNZMV1Vtxlq5a7OJ2Qz1mVjU+/VxviaFoL4h6/lkBK3Ygd52h8mFuP
X0ItiTQQKWxvIVW24ZjbYnRzgJLqf/vHYu4Wh1/JEqghSD6kwKX/bcsXWADJMQ==
-----END CERTIFICATE-----
`;

/** The public test key of draft-cavage-http-signatures-12 Appendix C.1 (1024-bit RSA). */
export const CAVAGE_TEST_PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDCFENGw33yGihy92pDjZQhl0C3
6rPJj+CvfSC8+q28hxA161QFNUd13wuCTUcq0Qd2qsBe/2hFyc2DCJJg0h1L78+6
Z4UMR7EOcpfdUE9Hf3m/hs+FUR45uBJeDK1HSFHD8bHKD6kv8FPGfJTotc+2xjJw
oYi+1hqp1fIekaxsyQIDAQAB
-----END PUBLIC KEY-----
`;
