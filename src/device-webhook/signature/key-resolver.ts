// Resolves the public key behind a draft-cavage-http-signatures-12 `keyId` (§2.1.1) the way SmartThings
// assigns them: `/SmartThings/<fingerprint>` → the app's configured public key; `/pl/<region>/<id>` → an
// X.509 certificate published at `https://key.smartthings.com` + keyId (as the official Node SDK fetches it).
import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';

export interface KeyFetchResponse {
  ok: boolean;
  status: number;
  text(): Promise<string>;
}

/** The subset of the global `fetch` the resolver uses; inject a fake in tests. */
export type KeyFetch = (url: string, init: { signal: AbortSignal }) => Promise<KeyFetchResponse>;

/** `source`: who sent the request (its address), for the per-source fetch budget. */
export type KeyResolver = (keyId: string, source?: string) => Promise<KeyObject | undefined>;

export interface KeyResolverOptions {
  /** PEM public key (SPKI or PKCS#1) or certificate for `/SmartThings/…` key ids. */
  publicKeyPem?: string;
  /** Certificate (or public key) PEMs for `/pl/…` key ids; consulted before any fetch. */
  certificatesByKeyId?: Readonly<Record<string, string>>;
  /** E.g. `https://key.smartthings.com`; without it `/pl/…` ids only resolve through the map. */
  keyUrlBase?: string;
  fetch?: KeyFetch;
  /** How long a fetched key is trusted; default 24 h (the official SDK's figure). */
  ttlMs?: number;
  /** How long a failed fetch is remembered before the next attempt; default 30 s. */
  failureTtlMs?: number;
  /** Default 5 s: SmartThings gives the whole lifecycle call 10 s. */
  fetchTimeoutMs?: number;
  /** Bound on cached verified keys. Default 256. Failures are kept apart, so they never push a good key out. */
  maxCachedKeys?: number;
  /** Bound on remembered failed key ids (they come from unauthenticated requests). Default 1,024. */
  maxCachedFailures?: number;
  /** Fetches of not-yet-known key ids allowed per minute in all; past it an unknown id resolves to nothing. Default 60. */
  maxFetchesPerMinute?: number;
  /**
   * Of those, per request source (address) per minute. Default 5. Any sender can make up key ids (the keyId is
   * not signed), and each unknown one costs a fetch: one sender must not spend the budget SmartThings' own
   * requests need when it rotates its key.
   */
  maxFetchesPerSourcePerMinute?: number;
  now?: () => number;
  /** Called with every failed fetch, so the caller can log it; the lookup itself just answers undefined. */
  onFetchError?: (keyId: string, error: unknown) => void;
}

export class KeyConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyConfigurationError';
  }
}

export const SMARTTHINGS_KEY_ID_PREFIX = '/SmartThings/';
export const PLATFORM_KEY_ID_PREFIX = '/pl/';

// Key ids are attacker-supplied and get appended to a URL: only SmartThings' shape `/pl/<region>/<id>` (one region
// segment, one id segment, the characters SmartThings uses, no dot segments), so a key id can neither leave the
// configured key host's path nor add a query.
const FETCHABLE_KEY_ID = /^\/pl\/[A-Za-z0-9_-]{1,32}\/[A-Za-z0-9_-][A-Za-z0-9._:~-]{0,199}$/;

/** Accepts a certificate, SPKI or PKCS#1 public key PEM. */
export function publicKeyFromPem(pem: string): KeyObject {
  if (pem.includes('-----BEGIN CERTIFICATE-----')) return new X509Certificate(pem).publicKey;
  return createPublicKey(pem);
}

interface CacheEntry {
  key: KeyObject | undefined;
  expiresAt: number;
}

export function createKeyResolver(options: KeyResolverOptions = {}): KeyResolver {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
  const failureTtlMs = options.failureTtlMs ?? 30_000;
  const fetchTimeoutMs = options.fetchTimeoutMs ?? 5_000;
  const maxCachedKeys = options.maxCachedKeys ?? 256;
  const maxCachedFailures = options.maxCachedFailures ?? 1_024;
  const maxFetchesPerMinute = options.maxFetchesPerMinute ?? 60;
  const maxFetchesPerSource = options.maxFetchesPerSourcePerMinute ?? 5;
  const fetchKey: KeyFetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  const keyUrlBase = options.keyUrlBase?.replace(/\/+$/, '');

  // Parse configured keys once so a bad PEM stops the start instead of failing every request.
  let smartThingsKey: KeyObject | undefined;
  if (options.publicKeyPem !== undefined) {
    try {
      smartThingsKey = publicKeyFromPem(options.publicKeyPem);
    } catch (error) {
      throw new KeyConfigurationError(`SmartThings public key is not a valid PEM key: ${describe(error)}`);
    }
  }
  const configured = new Map<string, KeyObject>();
  for (const [keyId, pem] of Object.entries(options.certificatesByKeyId ?? {})) {
    try {
      configured.set(keyId, publicKeyFromPem(pem));
    } catch (error) {
      throw new KeyConfigurationError(
        `certificate for key id ${keyId} is not a valid PEM: ${describe(error)}`,
      );
    }
  }

  // Verified keys and failures live apart: a flood of made-up key ids only ever evicts other failures.
  const verified = new Map<string, CacheEntry>();
  const failures = new Map<string, CacheEntry>();
  const inFlight = new Map<string, Promise<KeyObject | undefined>>();
  let fetchWindowStart = 0;
  let fetchesInWindow = 0;
  const fetchesBySource = new Map<string, { windowStart: number; count: number }>();

  const store = (cache: Map<string, CacheEntry>, limit: number, keyId: string, entry: CacheEntry): void => {
    const at = now();
    cache.delete(keyId);
    if (cache.size >= limit) {
      for (const [id, old] of cache) if (old.expiresAt <= at) cache.delete(id);
    }
    // Still full: drop the oldest insertions (Map iterates in insertion order).
    for (const id of cache.keys()) {
      if (cache.size < limit) break;
      cache.delete(id);
    }
    cache.set(keyId, entry);
  };
  const remember = (keyId: string, key: KeyObject | undefined): void => {
    if (key === undefined) {
      store(failures, maxCachedFailures, keyId, { key, expiresAt: now() + failureTtlMs });
    } else {
      failures.delete(keyId);
      store(verified, maxCachedKeys, keyId, { key, expiresAt: now() + ttlMs });
    }
  };
  /** Unknown key ids cost an outbound fetch each: at most maxFetchesPerMinute of them, fewer per source. */
  const mayFetch = (source: string | undefined): boolean => {
    const at = now();
    if (at - fetchWindowStart >= 60_000) {
      fetchWindowStart = at;
      fetchesInWindow = 0;
    }
    if (fetchesInWindow >= maxFetchesPerMinute) return false;
    if (source !== undefined) {
      let spent = fetchesBySource.get(source);
      if (spent === undefined || at - spent.windowStart >= 60_000) {
        spent = { windowStart: at, count: 0 };
        fetchesBySource.delete(source);
        // Bounded like the failures (sources come from unauthenticated requests): the oldest go first.
        for (const old of fetchesBySource.keys()) {
          if (fetchesBySource.size < maxCachedFailures) break;
          fetchesBySource.delete(old);
        }
        fetchesBySource.set(source, spent);
      }
      if (spent.count >= maxFetchesPerSource) return false;
      spent.count += 1;
    }
    fetchesInWindow += 1;
    return true;
  };

  const load = async (keyId: string, url: string): Promise<KeyObject | undefined> => {
    try {
      const response = await fetchKey(url, { signal: AbortSignal.timeout(fetchTimeoutMs) });
      if (!response.ok) throw new Error(`GET ${url} answered ${String(response.status)}`);
      const key = publicKeyFromPem(await response.text());
      remember(keyId, key);
      return key;
    } catch (error) {
      remember(keyId, undefined);
      options.onFetchError?.(keyId, error);
      return undefined;
    }
  };

  return (keyId: string, source?: string): Promise<KeyObject | undefined> => {
    if (keyId.startsWith(SMARTTHINGS_KEY_ID_PREFIX)) return Promise.resolve(smartThingsKey);
    if (!keyId.startsWith(PLATFORM_KEY_ID_PREFIX)) return Promise.resolve(undefined);
    const known = configured.get(keyId);
    if (known !== undefined) return Promise.resolve(known);
    if (keyUrlBase === undefined || !FETCHABLE_KEY_ID.test(keyId)) return Promise.resolve(undefined);

    const cached = verified.get(keyId) ?? failures.get(keyId);
    if (cached !== undefined && cached.expiresAt > now()) return Promise.resolve(cached.key);

    const pending = inFlight.get(keyId);
    if (pending !== undefined) return pending;
    if (!mayFetch(source)) {
      options.onFetchError?.(keyId, new Error('too many key fetches this minute; not fetched'));
      return Promise.resolve(cached?.key);
    }
    const lookup = load(keyId, keyUrlBase + keyId).finally(() => inFlight.delete(keyId));
    inFlight.set(keyId, lookup);
    return lookup;
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
