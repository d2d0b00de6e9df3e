// Verifies a SmartThings webhook call signed with draft-cavage-http-signatures-12 (§3.1.2 verification,
// §2.3 signing string, algorithm rsa-sha256 / hs2019) plus its RFC 3230 `Digest` of the raw body.
import { verify as verifySignature, type KeyObject } from 'node:crypto';
import { checkDigestHeader } from './digest.js';
import { parseSignatureHeader } from './signature-header.js';
import { buildSigningString, headerValues, type HeaderBag } from './signing-string.js';

export type SignatureFailureReason =
  | 'missing-signature'
  | 'malformed-signature'
  | 'unsupported-algorithm'
  | 'missing-signed-header'
  | 'digest-mismatch'
  | 'date-skew'
  | 'unknown-key'
  | 'bad-signature';

export type SignatureVerification =
  /** `signature`: the verified signature bytes (what the replay check remembers). */
  | { ok: true; keyId: string; signature: Buffer }
  /** `detail` is for logs only: it can echo attacker-controlled values and must not go into a response. */
  | { ok: false; reason: SignatureFailureReason; detail: string; keyId?: string };

export type KeyLookup = (keyId: string) => Promise<KeyObject | undefined>;

export interface SignedRequest {
  method: string;
  /** Path and query exactly as received on the request line (e.g. Fastify's `request.url`). */
  path: string;
  headers: HeaderBag;
  rawBody: Buffer;
  now?: Date;
  maxSkewSeconds?: number;
  resolveKey: KeyLookup;
}

/** SmartThings always signs these three; a signature over less would let a replay swap body, path or time. */
export const REQUIRED_SIGNED_HEADERS = ['(request-target)', 'digest', 'date'] as const;

// hs2019 is accepted as RSA-SHA256 because some senders label PKCS#1 v1.5 signatures that way, and an absent
// algorithm means "derive it from the key" (cavage-12 §2.1.3); only RSA keys are ever accepted, so neither can
// be used to switch the verifier to a weaker or symmetric algorithm.
const ACCEPTED_ALGORITHMS = new Set(['rsa-sha256', 'hs2019']);

function failure(reason: SignatureFailureReason, detail: string, keyId?: string): SignatureVerification {
  return keyId === undefined ? { ok: false, reason, detail } : { ok: false, reason, detail, keyId };
}

export async function verifySignedRequest(request: SignedRequest): Promise<SignatureVerification> {
  const { method, path, headers, rawBody, resolveKey } = request;
  const nowMs = (request.now ?? new Date()).getTime();
  const maxSkewSeconds = request.maxSkewSeconds ?? 300;

  const authorization = headerValues(headers, 'authorization');
  if (authorization === undefined || authorization.length === 0 || authorization.join('').length === 0) {
    return failure('missing-signature', 'no Authorization header');
  }
  if (authorization.length > 1) return failure('malformed-signature', 'more than one Authorization header');
  const parsed = parseSignatureHeader(authorization[0] ?? '');
  if (!parsed.ok) {
    return parsed.error.code === 'not-signature-scheme'
      ? failure('missing-signature', parsed.error.message)
      : failure('malformed-signature', parsed.error.message);
  }
  const signature = parsed.value;
  const keyId = signature.keyId;

  if (signature.algorithm !== undefined && !ACCEPTED_ALGORITHMS.has(signature.algorithm)) {
    return failure('unsupported-algorithm', `algorithm ${signature.algorithm} is not accepted`, keyId);
  }
  for (const required of REQUIRED_SIGNED_HEADERS) {
    if (!signature.headers.includes(required)) {
      return failure('missing-signed-header', `${required} is not covered by the signature`, keyId);
    }
  }

  const signingString = buildSigningString({
    method,
    path,
    headers,
    signedHeaderNames: signature.headers,
    created: signature.created,
    expires: signature.expires,
  });
  if (!signingString.ok) return failure('missing-signed-header', signingString.error.message, keyId);

  // Cheap checks before the key lookup so junk requests never cost a key fetch.
  const dateValue = (headerValues(headers, 'date') ?? []).join(', ');
  const dateMs = Date.parse(dateValue);
  if (Number.isNaN(dateMs)) return failure('date-skew', 'Date header is not an HTTP date', keyId);
  const skewMs = Math.abs(nowMs - dateMs);
  if (skewMs > maxSkewSeconds * 1000) {
    return failure('date-skew', `Date is ${String(Math.round(skewMs / 1000))} s away from now`, keyId);
  }
  if (signature.expires !== undefined && signature.expires * 1000 < nowMs) {
    return failure('date-skew', 'signature expires parameter is in the past', keyId);
  }

  const digest = checkDigestHeader((headerValues(headers, 'digest') ?? []).join(', '), rawBody);
  if (!digest.ok) return failure('digest-mismatch', digest.message, keyId);

  let key: KeyObject | undefined;
  try {
    key = await resolveKey(keyId);
  } catch (error) {
    return failure(
      'unknown-key',
      `key lookup failed: ${error instanceof Error ? error.message : String(error)}`,
      keyId,
    );
  }
  if (key === undefined) return failure('unknown-key', 'no key for this keyId', keyId);
  if (key.type === 'secret' || key.asymmetricKeyType !== 'rsa') {
    return failure('unsupported-algorithm', `key for ${keyId} is not an RSA key`, keyId);
  }

  const verifies = (value: string): boolean => {
    try {
      // Node decodes header bytes and the request line as latin1, so latin1 gives back the bytes that were signed.
      return verifySignature('sha256', Buffer.from(value, 'latin1'), key, signature.signature);
    } catch {
      return false;
    }
  };
  let valid = verifies(signingString.value);
  // SmartThings signs a target URL's path without its query (SmartThings' own SDK, smartapp-sdk-nodejs, strips
  // the query before verifying), so a target registered with one (`?code=…`) is checked on its path too. The
  // webhook reads nothing from the query, so leaving it unsigned changes nothing it acts on.
  const query = path.indexOf('?');
  if (!valid && query >= 0) {
    const withoutQuery = buildSigningString({
      method,
      path: path.slice(0, query),
      headers,
      signedHeaderNames: signature.headers,
      created: signature.created,
      expires: signature.expires,
    });
    valid = withoutQuery.ok && verifies(withoutQuery.value);
  }
  return valid
    ? { ok: true, keyId, signature: signature.signature }
    : failure('bad-signature', 'the RSA-SHA256 verification failed', keyId);
}
