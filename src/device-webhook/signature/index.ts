// Public surface of the framework-free HTTP-signature verifier (draft-cavage-http-signatures-12 as used by
// SmartThings). The test kit is deliberately not re-exported.
export { computeDigest, checkDigestHeader, type DigestCheck } from './digest.js';
export {
  createKeyResolver,
  publicKeyFromPem,
  KeyConfigurationError,
  SMARTTHINGS_KEY_ID_PREFIX,
  PLATFORM_KEY_ID_PREFIX,
  type KeyFetch,
  type KeyFetchResponse,
  type KeyResolver,
  type KeyResolverOptions,
} from './key-resolver.js';
export {
  parseSignatureHeader,
  type ParsedSignature,
  type SignatureParseError,
  type SignatureParseErrorCode,
  type SignatureParseResult,
} from './signature-header.js';
export {
  buildSigningString,
  headerValues,
  type HeaderBag,
  type SigningStringInput,
} from './signing-string.js';
export {
  verifySignedRequest,
  REQUIRED_SIGNED_HEADERS,
  type KeyLookup,
  type SignatureFailureReason,
  type SignatureVerification,
  type SignedRequest,
} from './verify-signed-request.js';
