import { describe, expect, it } from '@jest/globals';
import { identityOfClaims, scopesOfClaims, tenantsOfClaims, tokenKeyId } from './token-claims.js';

describe('scopesOfClaims: what each provider sends', () => {
  it.each([
    [
      'Entra ID delegated: scp, a space-separated string',
      { scp: 'Schedules mail User.Read' },
      ['schedules', 'mail'],
    ],
    [
      'Entra ID app roles (client credentials): roles',
      { roles: ['Users', 'Replication', 'Task.Write'] },
      ['users', 'replication'],
    ],
    ['Okta: scp, an array', { scp: ['schedules', 'openid', 'migrations'] }, ['schedules', 'migrations']],
    ['Keycloak / Auth0: scope, a string', { scope: 'openid profile admin' }, ['admin']],
    [
      'several claims together, no duplicates',
      { scope: 'mail', scp: ['mail'], roles: ['users'] },
      ['users', 'mail'],
    ],
    ['nothing of ours', { scope: 'openid email', roles: 'not-a-list-of-ours' }, []],
    ['claims of the wrong type', { scp: 42, scope: { admin: true }, roles: [1, null, 'users'] }, ['users']],
  ])('%s', (_name, claims, scopes) => {
    expect(scopesOfClaims(claims, '')).toEqual(scopes);
  });

  it('takes only values behind the configured prefix (Entra app-id URI, a dotted namespace)', () => {
    const claims = { scp: 'platform.schedules admin', roles: ['Platform.Users'] };
    expect(scopesOfClaims(claims, 'platform.')).toEqual(['schedules', 'users']);
    expect(scopesOfClaims({ scp: ['api://platform/mail', 'mail'] }, 'api://platform/')).toEqual(['mail']);
  });
});

describe('tenantsOfClaims', () => {
  it('binds no tenant without a configured claim', () => {
    expect(tenantsOfClaims({ tenants: ['acme'] }, undefined)).toBeUndefined();
  });

  it('reads an array or a space/comma-separated string, lower-cased; "*" is every tenant', () => {
    expect(tenantsOfClaims({ tenants: ['Acme', 'globex', 'acme'] }, 'tenants')).toEqual(['acme', 'globex']);
    expect(tenantsOfClaims({ tenants: 'acme, globex initech' }, 'tenants')).toEqual([
      'acme',
      'globex',
      'initech',
    ]);
    expect(tenantsOfClaims({ tenants: ['*'] }, 'tenants')).toBeUndefined();
  });

  it('fails closed: a token without the claim acts for no tenant', () => {
    expect(tenantsOfClaims({}, 'tenants')).toEqual([]);
    expect(tenantsOfClaims({ tenants: 7 }, 'tenants')).toEqual([]);
  });
});

describe('identityOfClaims', () => {
  const iss = 'https://login.microsoftonline.com/t/v2.0';

  it('names subject, client and authorised party as each provider sends them', () => {
    expect(identityOfClaims({ iss, sub: 'sp-object-id', azp: 'client-guid' })).toEqual({
      issuer: iss,
      subject: 'sp-object-id',
      azp: 'client-guid',
    });
    expect(identityOfClaims({ iss, sub: 'okta-client', client_id: 'okta-client' })).toMatchObject({
      clientId: 'okta-client',
    });
    expect(identityOfClaims({ iss, appid: 'entra-v1-app' })).toEqual({
      issuer: iss,
      clientId: 'entra-v1-app',
    });
  });

  it('is undefined without an issuer or anyone to name', () => {
    expect(identityOfClaims({ iss })).toBeUndefined();
    expect(identityOfClaims({ sub: 'x' })).toBeUndefined();
    expect(identityOfClaims({ iss, sub: 42 })).toBeUndefined();
  });

  it('gives the caller id token:<issuer>#<sub or client id>', () => {
    expect(tokenKeyId({ issuer: iss, subject: 's', clientId: 'c' })).toBe(`token:${iss}#s`);
    expect(tokenKeyId({ issuer: iss, clientId: 'c', azp: 'a' })).toBe(`token:${iss}#c`);
  });
});
