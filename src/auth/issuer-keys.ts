// The OpenID provider's signing keys: found through discovery (OpenID Connect Discovery 1.0 §4:
// `jwks_uri` of `<issuer>/.well-known/openid-configuration`), fetched and cached; jose picks the key for a token
// (kid, kty, alg, use). jose's createRemoteJWKSet refetches a stale set before answering and forgets nothing, but
// throws while the provider is down; this cache keeps the last good set working through an outage instead:
// - a token whose `kid` is unknown refetches the set, at most once per `minRefreshMs` (after a success or a
//   failure alike), so made-up kids cannot make the service hammer the provider; requests arriving meanwhile
//   share the one fetch;
// - a set older than `maxAgeMs` is refetched in the background (keys the provider withdrew stop working), while
//   requests go on with the cached one;
// - while the provider cannot be reached, cached keys keep working and a key not among them is IssuerUnavailable
//   (503 + Retry-After: the token may well be good), never an unhandled error.
// The provider's URLs are the operator's configuration, not a caller's destination: no egress policy here.
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

export class IssuerUnavailableError extends Error {
  constructor(cause: string) {
    super(`The token issuer's signing keys cannot be fetched: ${cause}`);
    this.name = 'IssuerUnavailableError';
  }
}

export interface IssuerKeysOptions {
  issuer: string;
  discoveryUrl: string;
  minRefreshMs: number;
  maxAgeMs: number;
  timeoutMs: number;
  /** Told once per failed fetch (the log), with the reason. */
  onFailure: (reason: string) => void;
}

/** `fetchedAt`: monotonic (performance.now()), so a wall-clock step neither stops nor forces refreshes. */
type KeySet = { select: JWTVerifyGetKey; fetchedAt: number };

export class IssuerKeys {
  private keys: KeySet | undefined;
  private jwksUri: URL | undefined;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private lastFailure: string | undefined;
  private pending: Promise<void> | undefined;

  constructor(private readonly options: IssuerKeysOptions) {}

  /** jose's key lookup for jwtVerify. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    if (this.keys === undefined) await this.refresh();
    const keys = this.keys;
    if (keys === undefined) throw new IssuerUnavailableError(this.lastFailure ?? 'not fetched yet');
    if (performance.now() - keys.fetchedAt > this.options.maxAgeMs) void this.refresh();
    try {
      return await keys.select(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // Rotation: the provider may have published a key since the set was fetched.
      const refreshed = (await this.refresh()) ? this.keys : undefined;
      if (refreshed !== undefined) return refreshed.select(header, token);
      if (this.lastFailure !== undefined) throw new IssuerUnavailableError(this.lastFailure);
      throw error;
    }
  };

  /** Fetches the set unless one was attempted less than minRefreshMs ago; true when a fetch just succeeded. */
  private async refresh(): Promise<boolean> {
    if (this.pending === undefined) {
      if (performance.now() - this.attemptedAt < this.options.minRefreshMs) return false;
      this.attemptedAt = performance.now();
      this.pending = this.fetchKeys().finally(() => (this.pending = undefined));
    }
    await this.pending;
    return this.lastFailure === undefined;
  }

  private async fetchKeys(): Promise<void> {
    try {
      this.jwksUri ??= await this.discover();
      const jwks = (await this.fetchJson(this.jwksUri)) as JSONWebKeySet;
      // createLocalJWKSet validates the set's shape; a bad one leaves the previous set in use.
      this.keys = { select: createLocalJWKSet(jwks), fetchedAt: performance.now() };
      this.lastFailure = undefined;
    } catch (error) {
      this.lastFailure = error instanceof Error ? error.message : String(error);
      this.options.onFailure(this.lastFailure);
    }
  }

  private async discover(): Promise<URL> {
    const metadata = (await this.fetchJson(new URL(this.options.discoveryUrl))) as Record<string, unknown>;
    // Discovery §4.3: the document must name the issuer it was fetched for, or its keys are not that issuer's.
    if (metadata.issuer !== this.options.issuer)
      throw new Error(`the discovery document names issuer "${String(metadata.issuer)}"`);
    if (typeof metadata.jwks_uri !== 'string') throw new Error('the discovery document has no jwks_uri');
    return new URL(metadata.jwks_uri);
  }

  private async fetchJson(url: URL): Promise<unknown> {
    const response = await fetch(url, {
      headers: { accept: 'application/json, application/jwk-set+json' },
      redirect: 'error',
      signal: AbortSignal.timeout(this.options.timeoutMs),
    }).catch((error: unknown) => {
      throw new Error(`${url.href}: ${(error as Error).message}`);
    });
    if (response.status !== 200) throw new Error(`${url.href} answered ${response.status}`);
    return response.json().catch(() => {
      throw new Error(`${url.href} did not answer JSON`);
    });
  }
}
