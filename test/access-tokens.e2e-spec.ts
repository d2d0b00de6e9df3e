// Access tokens from an OpenID provider beside API keys, against a real provider on loopback
// (test/support/oidc-issuer.ts): client-credentials tokens accepted with their scopes, every kind of bad token refused
// with 401 + `WWW-Authenticate: Bearer error="invalid_token"`, keys rotated without a restart, and the issuer down.
// The scope matrix (scope-matrix.e2e-spec.ts) runs tokens of every scope over every operation.
import { createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKeyPair, SignJWT } from 'jose';
import { TestIssuer, TEST_AUDIENCE } from './support/oidc-issuer.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const MIN_REFRESH_SECONDS = 1;
const SCHEDULES = '/api/v1/Schedule';
const SCIM_USERS = '/api/v1/scim/Users';

let issuer: TestIssuer;
let t: TestApp;

beforeAll(async () => {
  issuer = await new TestIssuer().start();
  t = await startTestApp({
    env: {
      OIDC_ISSUER: issuer.url,
      OIDC_AUDIENCE: `other-audience,${TEST_AUDIENCE}`,
      OIDC_JWKS_MIN_REFRESH_SECONDS: String(MIN_REFRESH_SECONDS),
    },
  });
});

afterAll(async () => {
  await t?.close();
  await issuer?.close();
});

const get = (url: string, token?: string) =>
  t.request({ method: 'GET', url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

const now = () => Math.floor(Date.now() / 1000);
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const waitPastMinRefresh = () =>
  new Promise((resolve) => setTimeout(resolve, MIN_REFRESH_SECONDS * 1000 + 150));

/** A token the issuer never signed: a key pair of its own (made once), named by a kid the issuer does not publish. */
let stranger: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'] | undefined;
async function signedByStranger(kid: string): Promise<string> {
  stranger ??= (await generateKeyPair('ES256')).privateKey;
  return new SignJWT({ scope: 'admin', sub: 'intruder' })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(issuer.url)
    .setAudience(TEST_AUDIENCE)
    .setExpirationTime('5m')
    .sign(stranger);
}

function expectRefused(response: Awaited<ReturnType<typeof get>>, reason: RegExp): void {
  expect(response.statusCode).toBe(401);
  expect(response.headers['www-authenticate']).toMatch(
    /^Bearer error="invalid_token", error_description="[^"]*"$/,
  );
  expect(response.json<{ Code: string; Message: string }>()).toMatchObject({ Code: 'Unauthorized' });
  expect(response.json<{ Message: string }>().Message).toMatch(reason);
}

describe('access tokens from the OpenID provider', () => {
  it('accepts a client-credentials token with the scopes it grants and nothing more', async () => {
    const token = await issuer.clientCredentials('billing-sync', 'openid schedules');
    expect((await get(SCHEDULES, token)).statusCode).toBe(200);
    const forbidden = await get('/api/v1/mail/smtpConfigurations', token);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json<{ Message: string }>().Message).toBe('This access token lacks the "mail" scope.');
    expect(forbidden.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="mail"');
    // API keys keep working beside tokens.
    expect((await get(SCHEDULES, 'test-admin-key-0123456789abcdef')).statusCode).toBe(200);
  });

  it('reads scopes from scp (string or array) and roles as well as scope', async () => {
    const entraRoles = await issuer.sign({ roles: ['Users', 'Unrelated.Role'] });
    const oktaScp = await issuer.sign({ scp: ['users'] });
    const keycloakScp = await issuer.sign({ scp: 'profile users' });
    for (const token of [entraRoles, oktaScp, keycloakScp]) {
      expect((await get(SCIM_USERS, token)).statusCode).toBe(200);
      expect((await get(SCHEDULES, token)).statusCode).toBe(403);
    }
  });

  it('answers a missing credential with WWW-Authenticate: Bearer', async () => {
    const response = await get(SCHEDULES);
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
  });

  it('refuses expired, not yet valid, foreign, unsigned, confused, tampered and garbage tokens', async () => {
    const good = await issuer.sign({ scope: 'admin' });
    const [header, , signature] = good.split('.');
    const claims = { iss: issuer.url, aud: TEST_AUDIENCE, sub: 'x', scope: 'admin', exp: now() + 300 };
    const publicPem = createPublicKey({ key: issuer.publicJwks()[0], format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const hs256WithPublicKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: issuer.kid })
      .sign(Buffer.from(publicPem));
    const cases: Array<[string, string, RegExp]> = [
      ['expired', await issuer.sign({ scope: 'admin' }, { expiresIn: -120 }), /expired/],
      [
        'not yet valid',
        await issuer.sign({ scope: 'admin', nbf: now() + 600, exp: now() + 900 }),
        /not valid yet/,
      ],
      ['for another audience', await issuer.sign({ scope: 'admin', aud: 'api://someone-else' }), /aud/],
      ['from another issuer', await issuer.sign({ scope: 'admin', iss: 'https://evil.example' }), /iss/],
      ['alg none', `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`, /algorithm/],
      ['HS256 keyed with the public key', hs256WithPublicKey, /algorithm/],
      ['tampered (admin added)', `${header}.${base64url({ ...claims, sub: 'y' })}.${signature}`, /signature/],
      ['without subject or client', await issuer.sign({ scope: 'admin', sub: undefined }), /no subject/],
      ['garbage', 'abc.def.ghi', /not a valid/],
      ['not a JWT (nor a key)', 'not-a-token-0123456789', /API key is not valid/],
    ];
    for (const [name, token, reason] of cases) {
      const response = await get(SCHEDULES, token);
      try {
        expectRefused(response, reason);
      } catch (error) {
        throw new Error(`${name}: ${(error as Error).message}`);
      }
    }
    // Tokens are credentials: never logged, refused or not.
    const logged = JSON.stringify(t.logs);
    for (const [, token] of cases) expect(logged).not.toContain(token);
  });

  it('keeps the SCIM error schema for a refused token on SCIM routes', async () => {
    const response = await get(SCIM_USERS, await issuer.sign({ scope: 'users' }, { expiresIn: -120 }));
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    expect(response.json<{ schemas: string[]; status: string }>()).toMatchObject({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '401',
    });
  });

  it('refuses an unknown key, refetching the key set at most once per OIDC_JWKS_MIN_REFRESH_SECONDS', async () => {
    await waitPastMinRefresh();
    const strangers: string[] = [];
    for (let i = 0; i < 5; i++) strangers.push(await signedByStranger(`made-up-${i}`));
    const before = issuer.hits.get('/jwks') ?? 0;
    for (const token of strangers) expectRefused(await get(SCHEDULES, token), /does not publish/);
    expect((issuer.hits.get('/jwks') ?? 0) - before).toBe(1);
  });

  it('follows a key rotation without a restart: the new key works, the withdrawn one stops', async () => {
    const old = await issuer.sign({ scope: 'schedules' });
    expect((await get(SCHEDULES, old)).statusCode).toBe(200);
    await issuer.rotate();
    const rotated = await issuer.sign({ scope: 'schedules' });
    await waitPastMinRefresh();
    expect((await get(SCHEDULES, rotated)).statusCode).toBe(200);
    expectRefused(await get(SCHEDULES, old), /does not publish/);
  });

  it('keeps cached keys working while the issuer is down; an uncached key is 503 + Retry-After, not 500', async () => {
    const cached = await issuer.sign({ scope: 'schedules' });
    expect((await get(SCHEDULES, cached)).statusCode).toBe(200);
    await issuer.down();
    await issuer.rotate();
    const uncached = await issuer.sign({ scope: 'schedules' });
    try {
      await waitPastMinRefresh();
      expect((await get(SCHEDULES, cached)).statusCode).toBe(200);
      const unavailable = await get(SCHEDULES, uncached);
      expect(unavailable.statusCode).toBe(503);
      expect(unavailable.headers['retry-after']).toMatch(/^\d+$/);
      expect(unavailable.json<{ Code: string }>().Code).toBe('ServiceUnavailable');
      // Within the refresh interval nothing is fetched again: still 503, and quickly.
      expect((await get(SCHEDULES, uncached)).statusCode).toBe(503);
      expect(
        t.logs.some(
          (line) => line.message === "Cannot fetch the token issuer's signing keys; cached keys stay in use",
        ),
      ).toBe(true);
    } finally {
      await issuer.up();
    }
    await waitPastMinRefresh();
    expect((await get(SCHEDULES, uncached)).statusCode).toBe(200);
  });

  it('declares the token scheme beside the API key scheme in the OpenAPI document', async () => {
    const document = (await t.request({ method: 'GET', url: '/docs-json' })).json<{
      components: { securitySchemes: Record<string, Record<string, unknown>> };
      paths: Record<
        string,
        Record<
          string,
          { operationId: string; security?: unknown[]; responses: Record<string, { headers?: object }> }
        >
      >;
    }>();
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes.bearer.bearerFormat).toBeUndefined();
    expect(document.components.securitySchemes.oidc).toMatchObject({
      type: 'openIdConnect',
      openIdConnectUrl: `${issuer.url}/.well-known/openid-configuration`,
    });
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
    const byId = (id: string) => operations.find((operation) => operation.operationId === id);
    expect(byId('Schedule_Create')?.security).toEqual([{ bearer: [] }, { oidc: ['schedules'] }]);
    expect(byId('Scim_PatchUser')?.security).toEqual([{ bearer: [] }, { oidc: ['users'] }]);
    expect(byId('Webhook_ListInstalledApps')?.security).toEqual([{ bearer: [] }, { oidc: ['admin'] }]);
    expect(byId('Occurrence_HasOccurrencesGrouped')?.security).toEqual([
      { bearer: [] },
      { oidc: ['schedules'] },
      {},
    ]);
    expect(byId('Schedule_Create')?.responses['401']?.headers).toHaveProperty('WWW-Authenticate');
  });
});
