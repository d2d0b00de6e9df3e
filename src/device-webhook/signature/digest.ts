// The `Digest` request header of RFC 3230 §4.3.2 with the `SHA-256` algorithm of RFC 5843, as SmartThings
// sends it and draft-cavage-http-signatures-12 §2.1.6/Appendix C signs it.
import { createHash, timingSafeEqual } from 'node:crypto';

export function computeDigest(rawBody: Buffer): string {
  return `SHA-256=${createHash('sha256').update(rawBody).digest('base64')}`;
}

export type DigestCheck =
  { ok: true } | { ok: false; reason: 'no-sha-256' | 'malformed' | 'mismatch'; message: string };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Checks a `Digest` header value such as `SHA-256=…` or `SHA-512=…, SHA-256=…` against the raw body.
 * A SHA-256 entry is required; entries for other algorithms are ignored (not verified), and every SHA-256
 * entry present must match so an extra forged entry cannot ride along with a correct one.
 */
export function checkDigestHeader(digestHeader: string, rawBody: Buffer): DigestCheck {
  const expected = createHash('sha256').update(rawBody).digest();
  let sawSha256 = false;
  for (const element of digestHeader.split(',')) {
    const trimmed = element.trim();
    if (trimmed.length === 0) continue;
    const equals = trimmed.indexOf('=');
    if (equals <= 0)
      return { ok: false, reason: 'malformed', message: `digest entry "${trimmed}" has no value` };
    // RFC 3230 §4.1.1: digest-algorithm tokens are case-insensitive.
    const algorithm = trimmed.slice(0, equals).trim().toLowerCase();
    if (algorithm !== 'sha-256') continue;
    sawSha256 = true;
    const encoded = trimmed.slice(equals + 1).trim();
    if (!BASE64.test(encoded))
      return { ok: false, reason: 'malformed', message: 'SHA-256 digest is not base64' };
    const actual = Buffer.from(encoded, 'base64');
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
      return { ok: false, reason: 'mismatch', message: 'SHA-256 digest does not match the body' };
    }
  }
  if (!sawSha256) return { ok: false, reason: 'no-sha-256', message: 'Digest header has no SHA-256 entry' };
  return { ok: true };
}
