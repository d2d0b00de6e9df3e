// OAuth 2.0 access tokens (JWT) from the organisation's OpenID provider, beside API keys.
// Verification is stateless (a signature by a key the issuer publishes, iss, aud, exp, nbf), so every instance of a
// fleet decides alike; only the issuer's public keys are cached (issuer-keys.ts). Only asymmetric algorithms are
// accepted, listed before any key is looked up: `none` and HS* (an HMAC "keyed" with the public key, the classic
// algorithm confusion) are refused by jose before they reach a key.
import { Inject, Injectable } from '@nestjs/common';
import { errors, jwtVerify, type JWTPayload } from 'jose';
import type { Logger } from 'pino';
import { APP_CONFIG, looksLikeJwt, type AppConfig, type OidcConfig } from '../config/config.js';
import { ROOT_LOGGER } from '../core/tokens.js';
import type { Principal } from './principal.js';
import { IssuerKeys } from './issuer-keys.js';
import { identityOfClaims, scopesOfClaims, tenantsOfClaims, tokenKeyId } from './token-claims.js';

export const TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** A set of keys is refetched after this long even when every kid is known, so withdrawn keys stop working. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;

/** A token was refused: why, in words safe to show the caller (RFC 6750 §3 error_description). */
export interface RefusedToken {
  refused: string;
}

export type TokenVerdict = { principal: Principal } | RefusedToken;

@Injectable()
export class AccessTokensService {
  private readonly oidc: OidcConfig | undefined;
  private readonly keys: IssuerKeys | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig, @Inject(ROOT_LOGGER) logger: Logger) {
    this.oidc = config.oidc;
    if (this.oidc === undefined) return;
    const log = logger.child({ component: 'access-tokens', issuer: this.oidc.issuer });
    this.keys = new IssuerKeys({
      issuer: this.oidc.issuer,
      discoveryUrl: this.oidc.discoveryUrl,
      minRefreshMs: this.oidc.jwksMinRefreshSeconds * 1000,
      maxAgeMs: JWKS_MAX_AGE_MS,
      timeoutMs: FETCH_TIMEOUT_MS,
      onFailure: (reason) =>
        log.warn({ reason }, "Cannot fetch the token issuer's signing keys; cached keys stay in use"),
    });
  }

  /** Whether this bearer is to be verified as an access token (OIDC configured, JWT-shaped, not a `pk_` key). */
  handles(bearer: string): boolean {
    return this.keys !== undefined && !bearer.startsWith('pk_') && looksLikeJwt(bearer);
  }

  /** Throws IssuerUnavailableError when the key the token needs cannot be fetched (503, not the caller's fault). */
  async verify(token: string): Promise<TokenVerdict> {
    const oidc = this.oidc;
    const keys = this.keys;
    if (oidc === undefined || keys === undefined) return { refused: 'Access tokens are not accepted here.' };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys.getKey, {
        algorithms: TOKEN_ALGORITHMS,
        issuer: oidc.issuer,
        audience: [...oidc.audiences],
        clockTolerance: oidc.clockToleranceSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError) return { refused: describe(error) };
      throw error;
    }
    const identity = identityOfClaims(payload);
    if (identity === undefined)
      return { refused: 'The token names no subject (sub) or client (client_id, azp).' };
    const domains = tenantsOfClaims(payload, oidc.tenantClaim);
    return {
      principal: {
        keyId: tokenKeyId(identity),
        name: identity.azp ?? identity.clientId ?? identity.subject ?? '',
        scopes: scopesOfClaims(payload, oidc.scopePrefix),
        kind: 'token',
        token: identity,
        ...(domains === undefined ? {} : { domains }),
      },
    };
  }
}

/** What went wrong, without echoing anything the token says. */
function describe(error: InstanceType<typeof errors.JOSEError>): string {
  if (error instanceof errors.JWTExpired) return 'The token has expired.';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'The token is not valid yet (nbf).';
    return `The token's "${error.claim}" claim is not accepted here.`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return `The token's signing algorithm is not accepted (only ${TOKEN_ALGORITHMS.join(', ')}).`;
  if (error instanceof errors.JWKSNoMatchingKey)
    return 'The token is signed with a key its issuer does not publish.';
  if (error instanceof errors.JWKSMultipleMatchingKeys) return 'The token names no key (kid) among several.';
  if (error instanceof errors.JWSSignatureVerificationFailed) return "The token's signature is not valid.";
  return 'The token is not a valid signed JWT.';
}
