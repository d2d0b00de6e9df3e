import { describe, it, expect } from '@jest/globals';
import { X509Certificate, type KeyObject } from 'node:crypto';
import {
  createKeyResolver,
  KeyConfigurationError,
  type KeyFetch,
  type KeyFetchResponse,
} from './key-resolver.js';
import {
  FIXED_TEST_CERTIFICATE_PEM,
  TEST_PLATFORM_KEY_ID,
  generateTestKeyPair,
} from './signature-test-kit.js';

const keys = generateTestKeyPair();
const certificateKey = new X509Certificate(FIXED_TEST_CERTIFICATE_PEM).publicKey;
const KEY_URL = 'https://key.example.test';

function spki(key: KeyObject | undefined): string | undefined {
  return key?.export({ type: 'spki', format: 'der' }).toString('base64');
}

function response(body: string, status = 200): KeyFetchResponse {
  return { ok: status >= 200 && status < 300, status, text: () => Promise.resolve(body) };
}

interface FakeFetch {
  fetch: KeyFetch;
  urls: string[];
  signals: AbortSignal[];
}

/** Counts calls; each call answers with the next scripted outcome (the last one repeats). */
function fakeFetch(...outcomes: Array<() => Promise<KeyFetchResponse>>): FakeFetch {
  const urls: string[] = [];
  const signals: AbortSignal[] = [];
  const fetch: KeyFetch = (url, init) => {
    urls.push(url);
    signals.push(init.signal);
    const next = outcomes.at(Math.min(urls.length, outcomes.length) - 1);
    return next === undefined ? Promise.reject(new Error('no scripted outcome')) : next();
  };
  return { fetch, urls, signals };
}

const serveCertificate = (): Promise<KeyFetchResponse> =>
  Promise.resolve(response(FIXED_TEST_CERTIFICATE_PEM));

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return { now: () => time, advance: (ms) => (time += ms) };
}

describe('createKeyResolver', () => {
  describe('/SmartThings/ key ids', () => {
    it('answer the configured public key, whatever the fingerprint', async () => {
      const resolve = createKeyResolver({ publicKeyPem: keys.publicKeyPem });
      expect(spki(await resolve('/SmartThings/aa:bb'))).toBe(spki(keys.publicKey));
      expect(spki(await resolve('/SmartThings/cc:dd'))).toBe(spki(keys.publicKey));
    });

    it('accept a PKCS#1 public key or a certificate as the configured key', async () => {
      const pkcs1 = keys.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();
      expect(pkcs1).toContain('BEGIN RSA PUBLIC KEY');
      expect(spki(await createKeyResolver({ publicKeyPem: pkcs1 })('/SmartThings/x'))).toBe(
        spki(keys.publicKey),
      );
      const fromCert = await createKeyResolver({ publicKeyPem: FIXED_TEST_CERTIFICATE_PEM })(
        '/SmartThings/x',
      );
      expect(spki(fromCert)).toBe(spki(certificateKey));
    });

    it('answer undefined when no public key is configured, without fetching', async () => {
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({ keyUrlBase: KEY_URL, fetch: fake.fetch });
      await expect(resolve('/SmartThings/aa:bb')).resolves.toBeUndefined();
      expect(fake.urls).toEqual([]);
    });

    it('refuse a configured key that is not a PEM key at creation', () => {
      expect(() => createKeyResolver({ publicKeyPem: 'not a key' })).toThrow(KeyConfigurationError);
    });
  });

  describe('/pl/ key ids', () => {
    it('use the configured certificate map before any fetch', async () => {
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({
        certificatesByKeyId: { [TEST_PLATFORM_KEY_ID]: FIXED_TEST_CERTIFICATE_PEM },
        keyUrlBase: KEY_URL,
        fetch: fake.fetch,
      });
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID))).toBe(spki(certificateKey));
      expect(fake.urls).toEqual([]);
    });

    it('refuse a map entry that is not a PEM at creation, naming the key id', () => {
      expect(() =>
        createKeyResolver({ certificatesByKeyId: { '/pl/x/1': '-----BEGIN CERTIFICATE-----\nAA==' } }),
      ).toThrow(/\/pl\/x\/1/);
    });

    it('fetch keyUrlBase + keyId and read the certificate in the response', async () => {
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({ keyUrlBase: `${KEY_URL}/`, fetch: fake.fetch });
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID))).toBe(spki(certificateKey));
      expect(fake.urls).toEqual([`${KEY_URL}${TEST_PLATFORM_KEY_ID}`]);
    });

    it('answer undefined without fetching when no key URL is configured', async () => {
      const resolve = createKeyResolver({ publicKeyPem: keys.publicKeyPem });
      await expect(resolve(TEST_PLATFORM_KEY_ID)).resolves.toBeUndefined();
    });

    it.each([
      '/pl/../admin',
      '/pl/useast2/../../secrets',
      '/pl//evil.example/x',
      '/pl/x?redirect=1',
      '/pl/x#frag',
      '/pl/x y',
      '/pl/',
      '/pl/@evil.example',
    ])('never fetch a suspicious key id: %s', async (keyId) => {
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({ keyUrlBase: KEY_URL, fetch: fake.fetch });
      await expect(resolve(keyId)).resolves.toBeUndefined();
      expect(fake.urls).toEqual([]);
    });

    it.each(['/other/x', 'Test', '', '/smartthings/lowercase'])(
      'answer undefined for other key ids: "%s"',
      async (keyId) => {
        const fake = fakeFetch(serveCertificate);
        const resolve = createKeyResolver({
          publicKeyPem: keys.publicKeyPem,
          keyUrlBase: KEY_URL,
          fetch: fake.fetch,
        });
        await expect(resolve(keyId)).resolves.toBeUndefined();
        expect(fake.urls).toEqual([]);
      },
    );
  });

  describe('cache', () => {
    it('serves a fetched key from the cache until the TTL ends, then fetches again', async () => {
      const time = clock();
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({
        keyUrlBase: KEY_URL,
        fetch: fake.fetch,
        ttlMs: 60_000,
        now: time.now,
      });
      await resolve(TEST_PLATFORM_KEY_ID);
      time.advance(59_999);
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID))).toBe(spki(certificateKey));
      expect(fake.urls).toHaveLength(1);
      time.advance(1);
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID))).toBe(spki(certificateKey));
      expect(fake.urls).toHaveLength(2);
    });

    it('caches per key id', async () => {
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({ keyUrlBase: KEY_URL, fetch: fake.fetch });
      await resolve('/pl/useast2/a');
      await resolve('/pl/useast2/b');
      await resolve('/pl/useast2/a');
      expect(fake.urls).toEqual([`${KEY_URL}/pl/useast2/a`, `${KEY_URL}/pl/useast2/b`]);
    });

    it('defaults to a 24 h TTL', async () => {
      const time = clock();
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({ keyUrlBase: KEY_URL, fetch: fake.fetch, now: time.now });
      await resolve(TEST_PLATFORM_KEY_ID);
      time.advance(24 * 3600_000 - 1);
      await resolve(TEST_PLATFORM_KEY_ID);
      expect(fake.urls).toHaveLength(1);
      time.advance(1);
      await resolve(TEST_PLATFORM_KEY_ID);
      expect(fake.urls).toHaveLength(2);
    });

    it('shares one fetch between concurrent lookups of one id', async () => {
      let release: (value: KeyFetchResponse) => void = () => undefined;
      const gate = new Promise<KeyFetchResponse>((resolve) => (release = resolve));
      const fake = fakeFetch(() => gate);
      const resolve = createKeyResolver({ keyUrlBase: KEY_URL, fetch: fake.fetch });
      const lookups = Array.from({ length: 5 }, () => resolve(TEST_PLATFORM_KEY_ID));
      const other = resolve('/pl/useast2/other');
      expect(fake.urls).toEqual([`${KEY_URL}${TEST_PLATFORM_KEY_ID}`, `${KEY_URL}/pl/useast2/other`]);
      release(response(FIXED_TEST_CERTIFICATE_PEM));
      const results = await Promise.all(lookups);
      await other;
      expect(results.map(spki)).toEqual(Array(5).fill(spki(certificateKey)));
      expect(fake.urls).toHaveLength(2);
    });

    it('shares one failed fetch too, and reports it once', async () => {
      let fail: (error: Error) => void = () => undefined;
      const gate = new Promise<KeyFetchResponse>((_resolve, reject) => (fail = reject));
      const fake = fakeFetch(() => gate);
      const errors: string[] = [];
      const resolve = createKeyResolver({
        keyUrlBase: KEY_URL,
        fetch: fake.fetch,
        onFetchError: (keyId) => errors.push(keyId),
      });
      const lookups = Array.from({ length: 3 }, () => resolve(TEST_PLATFORM_KEY_ID));
      fail(new Error('ECONNRESET'));
      await expect(Promise.all(lookups)).resolves.toEqual([undefined, undefined, undefined]);
      expect(fake.urls).toHaveLength(1);
      expect(errors).toEqual([TEST_PLATFORM_KEY_ID]);
    });

    it('remembers a failed fetch only for failureTtlMs, then retries', async () => {
      const time = clock();
      const fake = fakeFetch(() => Promise.reject(new Error('ENOTFOUND')), serveCertificate);
      const errors: unknown[] = [];
      const resolve = createKeyResolver({
        keyUrlBase: KEY_URL,
        fetch: fake.fetch,
        failureTtlMs: 10_000,
        now: time.now,
        onFetchError: (_keyId, error) => errors.push(error),
      });
      await expect(resolve(TEST_PLATFORM_KEY_ID)).resolves.toBeUndefined();
      time.advance(9_999);
      await expect(resolve(TEST_PLATFORM_KEY_ID)).resolves.toBeUndefined();
      expect(fake.urls).toHaveLength(1);
      time.advance(1);
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID))).toBe(spki(certificateKey));
      expect(fake.urls).toHaveLength(2);
      expect(errors).toHaveLength(1);
      expect(String(errors[0])).toContain('ENOTFOUND');
    });

    it.each([
      ['a 404', () => Promise.resolve(response('not found', 404))],
      ['a body that is not a PEM', () => Promise.resolve(response('<html>maintenance</html>'))],
    ])('treats %s as a failed fetch', async (_label, outcome) => {
      const time = clock();
      const fake = fakeFetch(outcome, serveCertificate);
      const errors: unknown[] = [];
      const resolve = createKeyResolver({
        keyUrlBase: KEY_URL,
        fetch: fake.fetch,
        now: time.now,
        onFetchError: (_keyId, error) => errors.push(error),
      });
      await expect(resolve(TEST_PLATFORM_KEY_ID)).resolves.toBeUndefined();
      expect(errors).toHaveLength(1);
      time.advance(30_000); // the default failureTtlMs
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID))).toBe(spki(certificateKey));
    });

    it('gives up on a fetch that outlasts fetchTimeoutMs', async () => {
      const fake = fakeFetch(() => new Promise<KeyFetchResponse>(() => undefined));
      const hanging: KeyFetch = (url, init) =>
        Promise.race([
          fake.fetch(url, init),
          new Promise<KeyFetchResponse>((_resolve, reject) => {
            init.signal.addEventListener('abort', () => {
              reject(new Error('aborted', { cause: init.signal.reason }));
            });
          }),
        ]);
      const errors: unknown[] = [];
      const resolve = createKeyResolver({
        keyUrlBase: KEY_URL,
        fetch: hanging,
        fetchTimeoutMs: 20,
        onFetchError: (_keyId, error) => errors.push(error),
      });
      await expect(resolve(TEST_PLATFORM_KEY_ID)).resolves.toBeUndefined();
      expect(fake.signals[0]?.aborted).toBe(true);
      expect(errors).toHaveLength(1);
    });

    it('keeps at most maxCachedKeys ids, evicting the oldest', async () => {
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({ keyUrlBase: KEY_URL, fetch: fake.fetch, maxCachedKeys: 2 });
      await resolve('/pl/r/a');
      await resolve('/pl/r/b');
      await resolve('/pl/r/c');
      expect(fake.urls).toHaveLength(3);
      await resolve('/pl/r/c');
      await resolve('/pl/r/b');
      expect(fake.urls).toHaveLength(3);
      await resolve('/pl/r/a');
      expect(fake.urls).toHaveLength(4);
    });

    it('fetches only ids of the shape /pl/<region>/<id>', async () => {
      const fake = fakeFetch(serveCertificate);
      const resolve = createKeyResolver({ keyUrlBase: KEY_URL, fetch: fake.fetch });
      for (const keyId of ['/pl/onlyone', '/pl/r/a/b', `/pl/${'r'.repeat(33)}/a`, '/pl/r/.hidden']) {
        expect(await resolve(keyId)).toBeUndefined();
      }
      expect(fake.urls).toEqual([]);
      expect(spki(await resolve('/pl/useast1/1d-2f'))).toBe(spki(certificateKey));
    });

    it('fetches at most maxFetchesPerMinute unknown ids, and answers cached ones meanwhile', async () => {
      const time = clock();
      const fake = fakeFetch(() => Promise.resolve(response('not found', 404)));
      const errors: string[] = [];
      const resolve = createKeyResolver({
        keyUrlBase: KEY_URL,
        fetch: fake.fetch,
        now: time.now,
        maxFetchesPerMinute: 3,
        onFetchError: (keyId) => errors.push(keyId),
      });
      for (let i = 0; i < 10; i++) await resolve(`/pl/r/made-up-${i}`);
      expect(fake.urls).toHaveLength(3);
      expect(errors).toHaveLength(10);
      time.advance(60_000);
      await resolve('/pl/r/made-up-9');
      expect(fake.urls).toHaveLength(4);
    });

    it('gives each source its own share of the fetches, so made-up ids from one cannot starve a real key', async () => {
      const time = clock();
      const fake = fakeFetch(() => Promise.resolve(response('not found', 404)));
      const resolve = createKeyResolver({
        keyUrlBase: KEY_URL,
        fetch: (url, init) =>
          url.endsWith(TEST_PLATFORM_KEY_ID) ? serveCertificate() : fake.fetch(url, init),
        now: time.now,
        maxFetchesPerMinute: 20,
        maxFetchesPerSourcePerMinute: 5,
      });
      for (let i = 0; i < 30; i++) await resolve(`/pl/r/junk-${i}`, '203.0.113.9');
      expect(fake.urls).toHaveLength(5);
      // SmartThings (another address) rotated its key: the new one is fetched and verified.
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID, '198.51.100.7'))).toBe(spki(certificateKey));
      // Many senders together are still held to the total.
      for (let i = 0; i < 40; i++) await resolve(`/pl/r/spread-${i}`, `192.0.2.${i}`);
      expect(fake.urls.length).toBeLessThanOrEqual(19);
    });

    it('keeps verified keys apart from failures, so made-up ids cannot push a good key out', async () => {
      const fake = fakeFetch(serveCertificate, () => Promise.resolve(response('nope', 404)));
      const resolve = createKeyResolver({
        keyUrlBase: KEY_URL,
        fetch: fake.fetch,
        maxCachedKeys: 1,
        maxCachedFailures: 2,
        maxFetchesPerMinute: 100,
      });
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID))).toBe(spki(certificateKey));
      for (let i = 0; i < 20; i++) await resolve(`/pl/r/bogus-${i}`);
      const fetches = fake.urls.length;
      expect(spki(await resolve(TEST_PLATFORM_KEY_ID))).toBe(spki(certificateKey));
      expect(fake.urls).toHaveLength(fetches);
    });
  });
});
